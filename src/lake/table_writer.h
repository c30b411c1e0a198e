#pragma once

#include "base/result.h"
#include "format/parquet/writer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace floe::lake {

/// Committed positions: per stream key, the next position not yet in the table (for Kafka
/// partitions, one past the last committed offset). Every snapshot's summary carries the full
/// map, carried forward by every commit; it is the truth recovery starts from.
using position_map = std::map<std::string, int64_t>;

/// Snapshot summary key holding the position map as a JSON object.
inline constexpr const char* positions_summary_key = "floe.committed-positions";

struct commit_result {
    int64_t snapshot_id = 0;
    int64_t sequence_number = 0;
    int64_t added_rows = 0;
    int64_t skipped_rows = 0; ///< rows at or below a committed position, dropped before writing
    std::vector<std::string> data_files;
    uint64_t added_bytes = 0;
    int attempts = 1; ///< commit attempts (conflicts retried)
    int64_t dead_letter_rows = 0; ///< a typed append's rows sent to the dead-letter table
};

/// One append in progress: rows go into Parquet files (rolled at the target file size) under
/// data/stream_key=<key>/segment-<segment id>-<uuid>.parquet; commit() writes the manifest,
/// manifest list and metadata and swaps them in with one catalog compare-and-swap.
/// Rows whose (stream_key, offset) is below the table's committed position for that stream are
/// dropped (a retried offload adds nothing twice). Rows must come in offset order per stream.
/// One thread drives an append. Dropping it without commit() leaves orphan files (reported).
class append {
public:
    virtual ~append() = default;
    virtual result<void> add(const parquet::message_row& row) = 0;
    /// Commits with `advance`: positions to move forward (merged into the carried-forward map;
    /// a position never moves backwards). With no rows added, commits only if a position moves.
    virtual result<commit_result> commit(const position_map& advance) = 0;
    /// Paths of files written by this attempt (for orphan reporting when it fails).
    virtual std::vector<std::string> written_files() const = 0;
};

struct planned_file; // table_reader.h

/// A rewrite that copies whole data files into new ones (compaction, re-encryption): every
/// column the table's current schema has, Floe's byte for byte and the rest (a typed table's
/// `data`, a dead-letter table's error columns) read by field id, with nulls where a field did
/// not exist when the file was written and Iceberg's promotions applied (lake/column_copy.h).
/// Files go out in the current schema's layout, encrypted as the table's properties say now.
/// One thread drives it; dropping it without commit() leaves orphan files (reported).
class file_rewrite {
public:
    virtual ~file_rewrite() = default;
    /// Every row of `f` (a live data file of the table), in file order. Files of one stream
    /// must come in offset order (the writer refuses a row below the last one).
    virtual result<void> add_file(const planned_file& f) = 0;
    /// Replaces the files given to begin_file_rewrite by the new ones, in one "replace"
    /// snapshot carrying the positions forward (errc::not_found: one is no longer live).
    virtual result<commit_result> commit() = 0;
    virtual std::vector<std::string> written_files() const = 0;
};

/// How an append turns values into typed columns: the topic's floe.iceberg.* configs.
struct value_decoding {
    enum class mode : uint8_t { raw, schema_id, latest_schema };
    mode how = mode::raw;
    std::string subject;          ///< latest-schema: whose latest version decodes the values
    std::string protobuf_message; ///< latest-schema, Protobuf: the message the values hold
    /// floe.iceberg.key-mode: keys decoded the same way into the column `key_data`.
    mode key_how = mode::raw;
    std::string key_subject;          ///< latest-schema: whose latest version decodes the keys
    std::string key_protobuf_message; ///< latest-schema, Protobuf: the message the keys hold
    /// Values or keys (or both) become typed columns.
    bool typed() const noexcept { return how != mode::raw || key_how != mode::raw; }
};

/// How a table's data files are encrypted (Parquet Modular Encryption): the topic's
/// floe.iceberg.encryption* configs. Kept as table properties (`floe.encryption*`), so every
/// writer of the table (offload, compaction, dead-letter replay, re-encryption) writes files
/// the same way without knowing the topic's configs.
struct table_encryption {
    enum class mode : uint8_t { none, uniform, columns };
    mode how = mode::none;
    /// columns mode: column names (dotted Iceberg/Parquet paths: "key", "value", "headers",
    /// "data.ssn"); a name encrypts every leaf at or below it. An entry "name:key-id" gives the
    /// column its own key (a keyring id, or a KMS key): people without that key cannot read the
    /// column, whatever other keys they hold. Without one a column takes the file's key.
    std::vector<std::string> columns;
    bool encrypted_footer = true; ///< false: plaintext footer signed with the file's key
    bool ctr = false;             ///< AES_GCM_CTR_V1 (CTR pages) instead of AES_GCM_V1
    /// The AAD prefix binds each file to its table: the table's identifier (namespace.table),
    /// stored in the file or left for readers to supply. Floe's readers supply every table's
    /// identifier, so a file copied into another table does not decrypt there.
    enum class aad : uint8_t { none, stored, supplied };
    aad aad_prefix = aad::none;
    bool enabled() const noexcept { return how != mode::none; }
    /// The profile DuckDB 1.5 decrypts: uniform, AES_GCM_V1, encrypted footer. Files of such a
    /// table have one data page per column chunk and no bloom filter (see DESIGN.md).
    bool duckdb_profile() const noexcept {
        return how == mode::uniform && !ctr && encrypted_footer && aad_prefix == aad::none;
    }
    bool operator==(const table_encryption&) const = default;
};

/// Table properties holding a table_encryption (absent: none).
inline constexpr const char* encryption_property = "floe.encryption";
inline constexpr const char* encryption_columns_property = "floe.encryption.columns";
inline constexpr const char* encryption_footer_property = "floe.encryption.footer";
inline constexpr const char* encryption_algorithm_property = "floe.encryption.algorithm";
inline constexpr const char* encryption_aad_prefix_property = "floe.encryption.aad-prefix"; ///< stored, supplied
/// One entry of table_encryption::columns: "value" or "value:pii-key", split at the first ':'
/// (column names have none; key ids may: a KMS key ARN `arn:aws:kms:<region>:<account>:key/<id>`).
struct encrypted_column {
    std::string_view name;
    std::string_view key_id; ///< empty: the file's key
};
encrypted_column split_encrypted_column(std::string_view entry);
/// The AAD prefix of a table's files (table_encryption::aad): its identifier, "namespace.table".
std::string aad_prefix_of(std::string_view ns, std::string_view table);
/// Reads the properties (unknown values: errc::corrupt naming the property).
result<table_encryption> encryption_from_properties(const std::map<std::string, std::string>& props);
/// Sets (or, for none, removes) the properties; true when they changed.
bool encryption_to_properties(const table_encryption& e, std::map<std::string, std::string>& props);
/// "uniform (AES_GCM_V1, encrypted footer)": for logs and errors.
std::string describe(const table_encryption& e);

/// The Iceberg table of one topic. Thread-safe; appends to one table are serialised by the
/// catalog's compare-and-swap (concurrent writers retry on conflict and never lose commits).
class table_writer {
public:
    virtual ~table_writer() = default;
    /// Positions in the table's current snapshot (empty for a new table).
    virtual result<position_map> committed_positions() = 0;
    /// Starts an append against the current snapshot's positions. A typed append (`d` not
    /// raw) also decodes each value into the table's typed columns, evolving its schema as the
    /// registry's versions require; a value it cannot decode goes to the dead-letter table
    /// `<table>_dlq` instead, so every record lands in exactly one of the two (see DESIGN.md).
    virtual result<std::unique_ptr<append>> begin_append(const value_decoding& d) = 0;
    result<std::unique_ptr<append>> begin_append() { return begin_append(value_decoding{}); }
    /// Starts a rewrite of live data files (compaction): rows added go into new files written
    /// as an append writes them (same Parquet layout), one per stream (the caller sizes the
    /// input: compaction bin-packs files by their size on storage up to the target),
    /// none is skipped for being below a committed position, and commit({}) replaces `replaced`
    /// by the new files in one "replace" snapshot that carries the positions forward unchanged.
    /// The commit fails with errc::not_found when a file of `replaced` is no longer live (a
    /// concurrent retention or rewrite took it): the only change it conflicts with.
    virtual result<std::unique_ptr<append>> begin_rewrite(std::vector<std::string> replaced) = 0;
    /// Starts a rewrite of live data files that copies them whole, typed columns included
    /// (file_rewrite); what compaction and re-encryption use. The default refuses (a writer
    /// that cannot read its own files back).
    virtual result<std::unique_ptr<file_rewrite>> begin_file_rewrite(std::vector<std::string> replaced) {
        (void)replaced;
        return fail(errc::unsupported, "table {}: this writer cannot copy data files", table_name());
    }
    /// Deletes whole data files whose newest message_ts is older than `cutoff_ms` (remote
    /// retention), in one delete commit that carries the positions forward. Returns files removed.
    virtual result<size_t> expire_before(int64_t cutoff_ms) = 0;
    /// Makes the table's encryption `e` (its properties; one metadata commit when they
    /// change): files written from then on (appends, rewrites) are encrypted so; files already
    /// there keep their keys and stay readable (`floe maintain --reencrypt` rewrites them).
    /// The default refuses any encryption (a writer that cannot encrypt never writes plaintext
    /// for a table that asks for it).
    virtual result<void> set_encryption(const table_encryption& e) {
        if (e.enabled())
            return fail(errc::invalid_argument, "table {}: this writer does not encrypt data files", table_name());
        return {};
    }
    /// Makes the table's default partition spec the one `text` describes (the topic's
    /// floe.iceberg.partition-spec, e.g. "day(message_ts)"): one metadata commit when it
    /// changes. A spec the table had before becomes the default again under its id; a new one
    /// gets the next spec id, field ids after the highest (a field the table had keeps its id).
    /// Files written from then on use it; files already there keep theirs (partition evolution).
    /// The default refuses anything but identity(stream_key).
    virtual result<void> set_partition_spec(std::string_view text) {
        if (text != "identity(stream_key)")
            return fail(errc::invalid_argument, "table {}: this writer has no partition specs", table_name());
        return {};
    }
    virtual const std::string& table_name() const = 0;
    virtual std::string location() const = 0;
};

/// Opens (creating on first use) the tables of the warehouse.
class lake {
public:
    virtual ~lake() = default;
    /// The table for a Kafka topic: name = topic with '.', '-', ':' as '_', in floe.namespace.
    virtual result<std::shared_ptr<table_writer>> table_for_topic(const std::string& topic) = 0;
};

/// "orders.created-v1" -> "orders_created_v1".
std::string table_name_for_topic(std::string_view topic);
/// Table property a typed table gets (before its first dead letter is committed) naming its
/// dead-letter table: readers of the topic's records read both.
inline constexpr const char* dead_letter_table_property = "floe.dead-letter-table";
/// The dead-letter table of a typed table: "<table>_dlq", in the same namespace.
inline std::string dlq_table_name(std::string_view table) { return std::string(table) + "_dlq"; }

/// True when `stream_key` is `<topic>-<partition>`: what every read and every removal of a
/// table's rows checks, so a table that holds two topics (data dirs from before collisions were
/// refused) never answers or deletes for the wrong one.
bool is_stream_key_of(std::string_view topic, std::string_view stream_key);

} // namespace floe::lake
