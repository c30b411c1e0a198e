#pragma once

#include "crypto/key_provider.h"
#include "format/parquet/reader.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/table.h"
#include "lake/table_writer.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <string>

namespace floe::schema {
class registry_client;
}

namespace floe::lake {

struct lake_options {
    std::string warehouse;          ///< floe.storage.remote.path, e.g. file:///data/warehouse
    std::string ns = "floe";        ///< floe.namespace
    parquet::writer_options parquet; ///< codec, row-group size, target file size
    iceberg::commit_options commit;
};

/// The warehouse as Iceberg tables in a catalog: one table per topic at
/// <warehouse>/<namespace>/<table>, created on first use. Thread-safe; table writers are cached
/// and shared.
class iceberg_lake final : public lake {
public:
    iceberg_lake(std::shared_ptr<iceberg::catalog> cat, std::shared_ptr<iceberg::file_io> io,
                 lake_options opts);
    result<std::shared_ptr<table_writer>> table_for_topic(const std::string& topic) override;
    /// The dead-letter table `<table>_dlq` of a typed topic, as a table_writer (maintenance
    /// compacts, and re-encrypts, it as it does the main table); nullptr when the topic has
    /// none. errc::already_exists when a table of that name is not the topic's dead letters.
    result<std::shared_ptr<table_writer>> dead_letter_table(const std::string& topic);

    /// The schema registry typed tables decode with (nullptr: none; typed appends fail).
    void set_registry(std::shared_ptr<schema::registry_client> r);
    std::shared_ptr<schema::registry_client> registry() const;

    /// Where the keys of encrypted tables come from (nullptr: none; an encrypted table's
    /// appends then fail, and its files cannot be read). Set before the lake is used.
    void set_key_provider(std::shared_ptr<crypto::key_provider> p);
    std::shared_ptr<crypto::key_provider> key_provider() const;
    /// Reader options for the data file `uri`: decrypting with the key provider's keys (a key
    /// the provider cannot give fails naming the file and the key id), none without provider.
    /// `aad_prefix`: the AAD prefix the file's table uses for files that use one (aad_prefix_of).
    parquet::reader_options reader_options_for(const std::string& uri, const std::string& aad_prefix = {}) const;

    iceberg::catalog& catalog() noexcept { return *_cat; }
    iceberg::file_io& io() noexcept { return *_io; }
    const lake_options& options() const noexcept { return _opts; }

private:
    std::shared_ptr<iceberg::catalog> _cat;
    std::shared_ptr<iceberg::file_io> _io;
    lake_options _opts;
    mutable std::mutex _mu;
    std::map<std::string, std::shared_ptr<table_writer>> _tables;
    std::shared_ptr<schema::registry_client> _registry; // guarded by _mu
    std::shared_ptr<crypto::key_provider> _keys;          // guarded by _mu
};

/// "key 'k1' of the keyring" / "KMS key 'arn:...'" for a file's key_metadata (what error
/// messages name); "an unreadable key_metadata" when it is not Floe's.
std::string key_label(std::string_view key_metadata);

/// Reads the committed positions from a snapshot summary (empty when absent).
result<position_map> positions_from_summary(const std::map<std::string, std::string>& summary);
std::string positions_to_json(const position_map& p);

/// The data files of a table's current snapshot: what a query must read for the table as it is
/// now (never a file that compaction replaced, an expired snapshot's, or an orphan).
struct current_files {
    std::string metadata_location;
    std::optional<int64_t> snapshot_id; ///< nullopt: no snapshot yet (no files)
    std::vector<iceberg::data_file> files;
    std::vector<iceberg::partition_spec> specs; ///< the table's (iceberg::file_stream_key)
};
/// errc::not_found when the catalog has no such table.
result<current_files> current_data_files(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t);
struct replay_report {
    size_t files = 0;          ///< dead-letter files read and rewritten
    size_t files_waiting = 0;  ///< files left for later: rows of an offload not committed yet
    int64_t replayed = 0;      ///< rows that decode now, moved to the main table
    int64_t still_dead = 0;    ///< rows that stay, with the reason found now
    int64_t already_in_main = 0; ///< rows a crashed replay had moved (dropped from the dead letters)
    std::map<std::string, int64_t> reasons; ///< of the rows that stay
};

/// `floe dlq replay`: decodes the rows of `topic`'s dead-letter table again (after a new schema
/// version, a registered id, a fixed topic config) and moves those that decode now into the
/// typed table, removing them from the dead-letter table; every record stays in exactly one
/// of the two, through crashes (a rerun finishes a replay cut between its two commits). Rows at
/// or above the main table's committed position wait (their offload is not committed yet).
/// Two replays at once: the second to commit fails and can be run again.
result<replay_report> replay_dead_letters(iceberg_lake& lake, const std::string& topic, const value_decoding& d);

/// Rows in the dead-letter table of `topic`'s table (its current snapshot's total-records); 0
/// when the topic has none.
result<int64_t> dead_letter_records(iceberg_lake& lake, const std::string& topic);

/// A path read_parquet (DuckDB, pyarrow) opens: the local path of a file:// URI, else the URI.
std::string readable_path(std::string_view uri);

/// Escapes a partition value for a path segment as Hive/Iceberg do ("a/b" -> "a%2Fb").
std::string escape_partition_value(std::string_view v);
/// The directory of a stream's data files under data/: "stream_key=<escaped value>", or, when
/// that passes 255 bytes (NAME_MAX; a 249-character topic's stream key does),
/// "stream_key~<the escaped value's first characters>~<CRC-32C of the value, hex>": no '=', so
/// path-based Hive partition discovery never reads a shortened value as the stream key.
/// Readers take the stream key from the manifests (and the Parquet column), never from paths.
std::string data_dir_name(std::string_view stream_key);
/// The same for any partition field: "<field>=<escaped value>" (values as Spark writes them:
/// message_ts_day=2026-12-03, message_ts_hour=2026-12-03-14), shortened the same way.
std::string partition_dir_name(std::string_view field, std::string_view value);

} // namespace floe::lake
