#include "iceberg/catalog.h"

#include "iceberg/catalog_pg.h"
#include "iceberg/file_io.h"
#include "base/random.h"
#include "base/uuid.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <set>

namespace floe::iceberg {

// The JDBC catalog's DDL (V1 schema, with iceberg_type) and PyIceberg's: same names, types
// compatible with both.
constexpr const char* ddl_statements[] = {
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    " catalog_name VARCHAR(255) NOT NULL,"
    " table_namespace VARCHAR(255) NOT NULL,"
    " table_name VARCHAR(255) NOT NULL,"
    " metadata_location VARCHAR(1000),"
    " previous_metadata_location VARCHAR(1000),"
    " iceberg_type VARCHAR(5),"
    " PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    " catalog_name VARCHAR(255) NOT NULL,"
    " namespace VARCHAR(255) NOT NULL,"
    " property_key VARCHAR(255),"
    " property_value VARCHAR(1000),"
    " PRIMARY KEY (catalog_name, namespace, property_key))",
};

std::span<const char* const> sql_catalog_ddl() { return ddl_statements; }

namespace {

std::unexpected<error> db_error(sqlite3* db, const char* what) {
    int rc = sqlite3_errcode(db);
    errc code = (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) ? errc::unavailable : errc::io_error;
    return fail(code, "sqlite catalog: {}: {}", what, sqlite3_errmsg(db));
}

/// One use of a cached prepared statement: binds text parameters, and resets the statement
/// (keeping it prepared) on scope exit.
class stmt {
public:
    stmt(sqlite3_stmt* s, std::initializer_list<std::string_view> params) : _s(s) {
        _ok = s != nullptr;
        int i = 1;
        for (auto p : params)
            if (_ok) _ok = sqlite3_bind_text(_s, i++, p.data(), static_cast<int>(p.size()), SQLITE_TRANSIENT) == SQLITE_OK;
    }
    ~stmt() {
        if (_s) {
            sqlite3_reset(_s);
            sqlite3_clear_bindings(_s);
        }
    }
    stmt(const stmt&) = delete;
    stmt& operator=(const stmt&) = delete;
    bool ok() const { return _ok; }
    /// SQLITE_ROW, SQLITE_DONE or an error code.
    int step() { return sqlite3_step(_s); }
    std::string text(int col) {
        auto* p = sqlite3_column_text(_s, col);
        return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
    }
    bool is_null(int col) { return sqlite3_column_type(_s, col) == SQLITE_NULL; }

private:
    sqlite3_stmt* _s = nullptr;
    bool _ok = false;
};

} // namespace

result<std::unique_ptr<sqlite_catalog>> sqlite_catalog::open(const std::string& db_path,
                                                             std::string catalog_name) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(db_path.c_str(), &db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return fail(errc::io_error, "open sqlite catalog {}: {}", db_path, msg);
    }
    std::unique_ptr<sqlite_catalog> c(new sqlite_catalog(db, std::move(catalog_name)));
    sqlite3_busy_timeout(db, 30000);
    // WAL lets readers run beside the one writer; FULL sync makes a committed swap durable
    // across power loss (the catalog row is the commit point).
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"}) {
        // journal_mode may be refused while another connection holds the db; not fatal.
        sqlite3_exec(db, pragma, nullptr, nullptr, nullptr);
    }
    for (auto* sql : sql_catalog_ddl()) {
        char* err = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
            std::string msg = err ? err : "?";
            sqlite3_free(err);
            return fail(errc::io_error, "sqlite catalog {}: create tables: {}", db_path, msg);
        }
    }
    return c;
}

sqlite_catalog::~sqlite_catalog() {
    for (auto& [sql, s] : _statements) sqlite3_finalize(s);
    sqlite3_close(_db);
}

sqlite3_stmt* sqlite_catalog::prepared(const char* sql) {
    // Every commit runs the same few statements: parse each once per connection.
    if (auto it = _statements.find(sql); it != _statements.end()) return it->second;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
        sqlite3_finalize(s);
        return nullptr;
    }
    _statements.emplace(sql, s);
    return s;
}

result<void> sqlite_catalog::create_namespace_if_missing(const std::string& ns) {
    std::lock_guard g(_mu);
    // Namespaces exist as a property row "exists" = "true", as the JDBC catalog and PyIceberg
    // record them.
    stmt s(prepared(
           "INSERT OR IGNORE INTO iceberg_namespace_properties "
           "(catalog_name, namespace, property_key, property_value) VALUES (?1, ?2, 'exists', 'true')"),
           {_name, ns});
    if (!s.ok() || s.step() != SQLITE_DONE) return db_error(_db, "create namespace");
    return {};
}

result<bool> sqlite_catalog::namespace_exists(const std::string& ns) {
    std::lock_guard g(_mu);
    stmt s(prepared(
           "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND namespace = ?2 "
           "UNION SELECT 1 FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 LIMIT 1"),
           {_name, ns});
    if (!s.ok()) return db_error(_db, "namespace exists");
    int rc = s.step();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return db_error(_db, "namespace exists");
}

result<std::optional<std::string>> sqlite_catalog::metadata_location(const table_ident& t) {
    std::lock_guard g(_mu);
    stmt s(prepared(
           "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ?1 AND "
           "table_namespace = ?2 AND table_name = ?3"),
           {_name, t.ns, t.name});
    if (!s.ok()) return db_error(_db, "load table");
    int rc = s.step();
    if (rc == SQLITE_ROW) {
        if (s.is_null(0)) return fail(errc::corrupt, "table {}.{} has no metadata location", t.ns, t.name);
        return std::optional<std::string>(s.text(0));
    }
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    return db_error(_db, "load table");
}

result<void> sqlite_catalog::create_table(const table_ident& t, const std::string& location) {
    std::lock_guard g(_mu);
    stmt s(prepared(
           "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
           "previous_metadata_location, iceberg_type) VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')"),
           {_name, t.ns, t.name, location});
    if (!s.ok()) return db_error(_db, "create table");
    int rc = s.step();
    if (rc == SQLITE_CONSTRAINT) return fail(errc::already_exists, "table {}.{} already exists", t.ns, t.name);
    if (rc != SQLITE_DONE) return db_error(_db, "create table");
    return {};
}

result<void> sqlite_catalog::swap(const table_ident& t, const std::string& expected,
                                  const std::string& new_location) {
    std::lock_guard g(_mu);
    stmt s(prepared(
           "UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = ?2 "
           "WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 "
           "AND metadata_location = ?2"),
           {new_location, expected, _name, t.ns, t.name});
    if (!s.ok() || s.step() != SQLITE_DONE) return db_error(_db, "commit");
    if (sqlite3_changes(_db) != 1)
        return fail(errc::conflict, "table {}.{} moved on from {} (concurrent commit)", t.ns, t.name, expected);
    return {};
}

result<std::vector<std::string>> sqlite_catalog::list_tables(const std::string& ns) {
    std::lock_guard g(_mu);
    stmt s(prepared(
           "SELECT table_name FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 "
           "ORDER BY table_name"),
           {_name, ns});
    if (!s.ok()) return db_error(_db, "list tables");
    std::vector<std::string> out;
    for (;;) {
        int rc = s.step();
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) return db_error(_db, "list tables");
        out.push_back(s.text(0));
    }
    return out;
}

result<std::unique_ptr<catalog>> open_sql_catalog(const std::string& uri, const std::string& catalog_name) {
    if (uri.starts_with("postgresql://") || uri.starts_with("postgres://")) {
        auto c = FLOE_TRY(postgres_catalog::open(uri, catalog_name));
        return std::unique_ptr<catalog>(std::move(c));
    }
    auto path = sqlite_catalog_path(uri);
    if (!path)
        // Only the scheme: the rest may hold a password.
        return fail(errc::unsupported, "catalog uri scheme '{}://' (sqlite:// or postgresql://)",
                    uri.substr(0, uri.find("://")));
    auto c = FLOE_TRY(sqlite_catalog::open(*path, catalog_name));
    return std::unique_ptr<catalog>(std::move(c));
}

std::optional<std::string> sqlite_catalog_path(const std::string& uri) {
    if (uri.starts_with("sqlite://")) return uri.substr(9);
    if (uri.starts_with("jdbc:sqlite:")) return uri.substr(12);
    if (uri.find("://") == std::string::npos) return uri;
    return std::nullopt;
}

result<std::optional<std::string>> catalog::namespace_property_set_once(const std::string&, const std::string&,
                                                                        const std::string&) {
    return std::nullopt;
}

std::string catalog::metadata_file_name(int64_t version) const {
    return fmt::format("{:05}-{}.metadata.json", version, uuid::random().to_string());
}

filesystem_catalog::filesystem_catalog(std::shared_ptr<file_io> io, std::string warehouse_uri)
    : _io(std::move(io)), _warehouse(std::move(warehouse_uri)) {
    while (_warehouse.ends_with("/")) _warehouse.pop_back();
}

std::string filesystem_catalog::table_location(const table_ident& t) const {
    return fmt::format("{}/{}/{}", _warehouse, t.ns, t.name);
}

std::string filesystem_catalog::metadata_file_name(int64_t version) const {
    return fmt::format("v{}.metadata.json", version);
}

result<void> filesystem_catalog::create_namespace_if_missing(const std::string&) {
    return {};  // a namespace is a directory, made by the first file written under it
}

result<bool> filesystem_catalog::namespace_exists(const std::string& ns) {
    return !FLOE_TRY(_io->list(fmt::format("{}/{}/", _warehouse, ns))).empty();
}

result<std::optional<std::string>> filesystem_catalog::metadata_location(const table_ident& t) {
    auto dir = table_location(t) + "/metadata/";
    int64_t n = 0;
    if (auto hint = _io->read(dir + "version-hint.text")) {
        for (char c : as_chars(*hint)) {
            if (c < '0' || c > '9') break;
            n = n * 10 + (c - '0');
        }
    } else if (hint.error().code() != errc::not_found) {
        return std::unexpected(hint.error());
    }
    // The hint may lag (it is written after the commit): the highest existing version wins.
    // Without a usable hint the directory is listed: old versions may have been deleted
    // (write.metadata.delete-after-commit.enabled), so probing from v1 would find nothing.
    if (n == 0 || !FLOE_TRY(_io->exists(fmt::format("{}v{}.metadata.json", dir, n)))) {
        n = 0;
        for (auto& uri : FLOE_TRY(_io->list(dir))) {
            std::string_view name(uri);
            name.remove_prefix(name.rfind('/') + 1);
            if (!name.starts_with("v") || !name.ends_with(".metadata.json")) continue;
            auto digits = name.substr(1, name.size() - 1 - std::string_view(".metadata.json").size());
            int64_t v = 0;
            auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
            if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) n = std::max(n, v);
        }
    }
    while (FLOE_TRY(_io->exists(fmt::format("{}v{}.metadata.json", dir, n + 1)))) ++n;
    if (n == 0) return std::optional<std::string>();
    return std::optional<std::string>(fmt::format("{}v{}.metadata.json", dir, n));
}

result<void> filesystem_catalog::create_table(const table_ident& t, const std::string& location) {
    // The create_new of v1.metadata.json already registered the table.
    if (!FLOE_TRY(_io->exists(location)))
        return fail(errc::not_found, "table {}.{}: {} was not written", t.ns, t.name, location);
    return {};
}

result<void> filesystem_catalog::swap(const table_ident& t, const std::string&, const std::string&) {
    return fail(errc::unsupported, "filesystem catalog commits by creating the next version of {}.{}",
                t.ns, t.name);
}

result<std::vector<std::string>> sqlite_catalog::list_namespaces() {
    std::lock_guard g(_mu);
    stmt s(prepared("SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1 "
                    "UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1 ORDER BY 1"),
           {_name});
    if (!s.ok()) return db_error(_db, "list namespaces");
    std::vector<std::string> out;
    for (;;) {
        int rc = s.step();
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) return db_error(_db, "list namespaces");
        out.push_back(s.text(0));
    }
    return out;
}

result<std::optional<std::string>> sqlite_catalog::namespace_property_set_once(const std::string& ns,
                                                                               const std::string& key,
                                                                               const std::string& value) {
    std::lock_guard g(_mu);
    // The primary key (catalog_name, namespace, property_key) makes the first insert win.
    {
        stmt ins(prepared("INSERT OR IGNORE INTO iceberg_namespace_properties "
                          "(catalog_name, namespace, property_key, property_value) VALUES (?1, ?2, ?3, ?4)"),
                 {_name, ns, key, value});
        if (!ins.ok() || ins.step() != SQLITE_DONE) return db_error(_db, "set namespace property");
    }
    stmt sel(prepared("SELECT property_value FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND "
                      "namespace = ?2 AND property_key = ?3"),
             {_name, ns, key});
    if (!sel.ok()) return db_error(_db, "read namespace property");
    int rc = sel.step();
    if (rc == SQLITE_ROW) return std::optional<std::string>(sel.text(0));
    if (rc == SQLITE_DONE) return fail(errc::internal, "namespace property {} of {} vanished after its insert", key, ns);
    return db_error(_db, "read namespace property");
}

result<std::vector<std::string>> filesystem_catalog::list_namespaces() {
    // A namespace is a directory holding at least one table (<ns>/<name>/metadata/v<N>...).
    auto prefix = _warehouse + "/";
    std::set<std::string> found;
    for (auto& uri : FLOE_TRY(_io->list(prefix))) {
        auto rest = std::string_view(uri).substr(prefix.size());
        auto slash = rest.find('/');
        if (slash == std::string_view::npos) continue;
        auto after = rest.substr(slash);
        auto meta = after.find("/metadata/v");
        if (meta == std::string_view::npos || !after.ends_with(".metadata.json")) continue;
        found.emplace(rest.substr(0, slash));
    }
    return std::vector<std::string>(found.begin(), found.end());
}

result<std::vector<std::string>> filesystem_catalog::list_tables(const std::string& ns) {
    auto prefix = fmt::format("{}/{}/", _warehouse, ns);
    std::vector<std::string> out;
    for (auto& uri : FLOE_TRY(_io->list(prefix))) {
        auto rest = std::string_view(uri).substr(prefix.size());
        auto slash = rest.find('/');
        if (slash == std::string_view::npos) continue;
        auto after = rest.substr(slash);
        if (!after.starts_with("/metadata/v") || !after.ends_with(".metadata.json")) continue;
        std::string name(rest.substr(0, slash));
        if (out.empty() || out.back() != name) out.push_back(std::move(name));
    }
    return out;
}

result<std::vector<std::string>> catalog::list_namespaces() {
    return fail(errc::unsupported, "this catalog cannot list namespaces");
}

result<std::string> catalog::commit_next(const table_ident& t, const std::string&, const std::string&) {
    return fail(errc::unsupported, "table {}.{}: this catalog commits by swapping its pointer", t.ns, t.name);
}

result<server_commit> catalog::commit_change(const table_ident& t, const std::string& expected,
                                             const commit_base&, table_metadata& next, snapshot_json_cache& texts) {
    auto loc = FLOE_TRY(commit_next(t, expected, to_json_text(next, texts)));
    return server_commit{std::move(loc), false};
}

commit_base commit_base::of(table_metadata& m) {
    auto snapshots = std::move(m.snapshots);
    auto snapshot_log = std::move(m.snapshot_log);
    auto metadata_log = std::move(m.metadata_log);
    m.snapshots.clear();
    m.snapshot_log.clear();
    m.metadata_log.clear();
    commit_base b{m, {}};
    m.snapshots = std::move(snapshots);
    m.snapshot_log = std::move(snapshot_log);
    m.metadata_log = std::move(metadata_log);
    b.snapshot_ids.reserve(m.snapshots.size());
    for (auto& s : m.snapshots) b.snapshot_ids.push_back(s.snapshot_id);
    std::sort(b.snapshot_ids.begin(), b.snapshot_ids.end());
    return b;
}

result<std::unique_ptr<catalog>> open_catalog(const std::string& type, const std::string& uri,
                                              const std::string& catalog_name,
                                              std::shared_ptr<file_io> io, const std::string& warehouse) {
    if (type == "sql") return open_sql_catalog(uri, catalog_name);
    if (type == "filesystem" || type == "hadoop")
        return std::unique_ptr<catalog>(std::make_unique<filesystem_catalog>(std::move(io), warehouse));
    return fail(errc::unsupported, "catalog type {} (sql or filesystem)", type);
}

} // namespace floe::iceberg
