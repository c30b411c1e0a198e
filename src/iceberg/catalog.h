#pragma once

#include "base/result.h"
#include "iceberg/metadata.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace floe::iceberg {

struct table_ident {
    std::string ns;    ///< namespace, e.g. "floe"
    std::string name;  ///< table name, e.g. "orders_created_v1"
};

/// The base version of a server-side commit, as far as the request compares it with the next
/// version: a commit builds the next version in place over the base, so this much is kept
/// first (everything but the history, and the ids of the snapshots). Plain data.
struct commit_base {
    table_metadata shape;               ///< the base without snapshots, snapshot-log and metadata-log
    std::vector<int64_t> snapshot_ids;  ///< the base's snapshots, sorted
    /// `m` without its history: the long vectors are moved out while the rest is copied, then
    /// moved back (`m` is unchanged afterwards).
    static commit_base of(table_metadata& m);
};

/// What a server-side commit made.
struct server_commit {
    std::string metadata_location;  ///< the file the server wrote
    /// True when `next` (commit_change's argument) now holds exactly the version the server
    /// committed at metadata_location, so it may be cached under that location.
    bool next_is_committed = false;
};

/// Where a table's current metadata file is, and the compare-and-swap that moves it: the one
/// atomic step of every Iceberg commit. Implementations are thread-safe.
class catalog {
public:
    virtual ~catalog() = default;
    virtual result<void> create_namespace_if_missing(const std::string& ns) = 0;
    virtual result<bool> namespace_exists(const std::string& ns) = 0;
    /// The current metadata location, or nullopt if the table does not exist.
    virtual result<std::optional<std::string>> metadata_location(const table_ident& t) = 0;
    /// Registers a new table; errc::already_exists if it is there.
    virtual result<void> create_table(const table_ident& t, const std::string& metadata_location) = 0;
    /// Points the table at `new_location` if it still points at `expected`; errc::conflict if a
    /// concurrent writer moved it first.
    virtual result<void> swap(const table_ident& t, const std::string& expected,
                              const std::string& new_location) = 0;
    virtual result<std::vector<std::string>> list_tables(const std::string& ns) = 0;
    /// Every namespace that has a table or was created (sorted).
    virtual result<std::vector<std::string>> list_namespaces();

    /// True for catalogs whose server writes the metadata files (REST): a commit sends the
    /// next metadata to `commit_next` instead of writing a file and swapping a pointer, and the
    /// location's files are the server's business (no v<N> copies, no owner check here).
    virtual bool server_side_commit() const { return false; }
    /// For server_side_commit catalogs: makes `next_json` (the next version, built from the one
    /// at `expected`) current, or registers it as a new table when `expected` is empty.
    /// Returns the metadata location the server wrote. errc::conflict when the server refused
    /// it (another writer moved the table first): nothing of it landed. errc::unavailable when
    /// the outcome is unknown (no answer, a 5xx, and the change not in the table when looked
    /// at): the caller keeps its files and, after a reload, first looks for its snapshot.
    /// errc::already_exists when creating a table that exists.
    virtual result<std::string> commit_next(const table_ident& t, const std::string& expected,
                                            const std::string& next_json);
    /// For server_side_commit catalogs: makes the change from `base` (the version at
    /// `expected`, non-empty) to `next` current, sending only what changed where the catalog can.
    /// Same errors as commit_next. On success `next` may have been replaced by the version the
    /// server answered with (then next_is_committed; `texts`, the serialised snapshots of `next`,
    /// are cleared when they no longer line up). The default serialises `next` whole and
    /// calls commit_next.
    virtual result<server_commit> commit_change(const table_ident& t, const std::string& expected,
                                                const commit_base& base, table_metadata& next,
                                                snapshot_json_cache& texts);

    /// The file name for metadata version `version`. Catalogs that swap a pointer use a unique
    /// name (two writers may prepare the same version at once); the filesystem catalog uses
    /// v<N>.metadata.json, whose no-replace creation is its commit.
    virtual std::string metadata_file_name(int64_t version) const;
    /// True when creating the metadata file (file_io::create_new) is the commit itself; then
    /// create_table and swap are not needed (and errc::already_exists means a lost race).
    virtual bool commit_by_create() const { return false; }
    /// Namespace property `key` of `ns`: set to `value` when the namespace has no such property
    /// (atomically: of several callers at once, the first wins), then the value the catalog
    /// holds is returned. nullopt when this catalog keeps no namespace properties that Floe can
    /// set this way (filesystem, REST, Glue, Hive, Nessie): callers then go without. Used for
    /// the id that proves two brokers write to the same catalog (app/cluster_lake.h).
    virtual result<std::optional<std::string>> namespace_property_set_once(const std::string& ns,
                                                                           const std::string& key,
                                                                           const std::string& value);
};

class file_io;

/// Hadoop-layout catalog: a table is <warehouse>/<namespace>/<name>; its current metadata is
/// the highest metadata/v<N>.metadata.json (version-hint.text is a starting hint, probed
/// forward). Commit = no-replace create of the next version. Thread-safe.
class filesystem_catalog final : public catalog {
public:
    filesystem_catalog(std::shared_ptr<file_io> io, std::string warehouse_uri);

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    result<void> swap(const table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;
    std::string metadata_file_name(int64_t version) const override;
    bool commit_by_create() const override { return true; }

    /// <warehouse>/<ns>/<name>: where this catalog expects a table to live.
    std::string table_location(const table_ident& t) const;

private:
    std::shared_ptr<file_io> _io;
    std::string _warehouse;
};

/// Iceberg's SQL catalog on SQLite: the same tables and columns as Iceberg's JDBC catalog and
/// PyIceberg's SqlCatalog (`iceberg_tables`, `iceberg_namespace_properties`), so those can open
/// the same database file. The swap is a conditional UPDATE on the previous metadata location.
/// One connection per object, guarded by a mutex; several objects or processes may share a
/// database file (WAL mode, busy timeout).
class sqlite_catalog final : public catalog {
public:
    static result<std::unique_ptr<sqlite_catalog>> open(const std::string& db_path,
                                                        std::string catalog_name = "floe");
    ~sqlite_catalog() override;

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    result<void> swap(const table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;
    result<std::optional<std::string>> namespace_property_set_once(const std::string& ns, const std::string& key,
                                                                   const std::string& value) override;

private:
    sqlite_catalog(sqlite3* db, std::string name) : _db(db), _name(std::move(name)) {}
    /// The statement for `sql` (a string literal), prepared on first use; nullptr if it cannot
    /// be prepared (the error is on the connection). Call with `_mu` held.
    sqlite3_stmt* prepared(const char* sql);
    std::mutex _mu;
    sqlite3* _db;
    std::string _name;
    std::map<const char*, sqlite3_stmt*> _statements;  ///< by the literal's address
};

/// The CREATE TABLE statements of the SQL catalog (Iceberg JDBC catalog and PyIceberg
/// SqlCatalog tables), shared by the SQLite and PostgreSQL implementations.
std::span<const char* const> sql_catalog_ddl();

/// Parses a catalog URI (`sqlite://<path>`, a bare path, or `postgresql://...`) and opens the SQL
/// catalog on SQLite or PostgreSQL.
result<std::unique_ptr<catalog>> open_sql_catalog(const std::string& uri, const std::string& catalog_name);
/// The database file of a SQLite catalog URI (`sqlite://<path>`, `jdbc:sqlite:<path>`, or a bare
/// path); nullopt for any other scheme (postgresql://, ...).
std::optional<std::string> sqlite_catalog_path(const std::string& uri);

/// Opens the catalog named by the settings floe.storage.remote.catalog.type ("sql" or
/// "filesystem") and .uri (the SQL database; unused for filesystem, which lives in `warehouse`).
result<std::unique_ptr<catalog>> open_catalog(const std::string& type, const std::string& uri,
                                              const std::string& catalog_name,
                                              std::shared_ptr<file_io> io, const std::string& warehouse);

} // namespace floe::iceberg
