#pragma once

#include "iceberg/schema.h"

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

struct snapshot {
    int64_t snapshot_id = 0;
    std::optional<int64_t> parent_snapshot_id;
    int64_t sequence_number = 0;
    int64_t timestamp_ms = 0;
    std::string manifest_list;
    /// "operation" plus the spec's counters ("added-data-files", "total-records", ...) and
    /// Floe's own entries (committed positions per stream).
    std::map<std::string, std::string> summary;
    std::optional<int32_t> schema_id;

    std::string operation() const {
        auto it = summary.find("operation");
        return it == summary.end() ? std::string() : it->second;
    }
};

struct snapshot_log_entry {
    int64_t timestamp_ms = 0;
    int64_t snapshot_id = 0;
};

struct metadata_log_entry {
    int64_t timestamp_ms = 0;
    std::string metadata_file;
};

struct snapshot_ref {
    int64_t snapshot_id = 0;
    std::string type = "branch";  ///< "branch" or "tag"
    std::optional<int32_t> min_snapshots_to_keep;
    std::optional<int64_t> max_snapshot_age_ms;
    std::optional<int64_t> max_ref_age_ms;
};

/// Table metadata, format v2 (every field the spec requires, plus the optional ones Floe
/// keeps current: properties, snapshots, snapshot-log, metadata-log, refs). Values, no I/O.
struct table_metadata {
    int format_version = 2;
    std::string table_uuid;
    std::string location;
    int64_t last_sequence_number = 0;
    int64_t last_updated_ms = 0;
    int32_t last_column_id = 0;
    std::vector<iceberg::schema> schemas;
    int32_t current_schema_id = 0;
    std::vector<partition_spec> partition_specs;
    int32_t default_spec_id = 0;
    int32_t last_partition_id = 0;
    std::vector<iceberg::sort_order> sort_orders;
    int32_t default_sort_order_id = 0;
    std::map<std::string, std::string> properties;
    std::optional<int64_t> current_snapshot_id;
    std::vector<iceberg::snapshot> snapshots;
    std::vector<snapshot_log_entry> snapshot_log;
    std::vector<metadata_log_entry> metadata_log;
    std::map<std::string, snapshot_ref> refs;
    std::string statistics_json = "[]";  ///< kept verbatim (Floe writes none)

    const iceberg::schema* current_schema() const noexcept;
    const partition_spec* default_spec() const noexcept;
    const iceberg::snapshot* current_snapshot() const noexcept;
    const iceberg::snapshot* find_snapshot(int64_t id) const noexcept;
};

/// A new table's first metadata: Floe's schema, identity(stream_key), sort by message_ts.
table_metadata new_floe_table(std::string location, std::string table_uuid, int64_t now_ms,
                              std::map<std::string, std::string> properties = {},
                              const iceberg::schema& schema = floe_table_schema());

/// The serialised JSON of each snapshot of one table, by position in table_metadata::snapshots
/// (and checked by snapshot id). Snapshots never change once committed, so a writer that keeps
/// this beside its metadata builds the next metadata file mostly by concatenation instead of
/// re-encoding the whole history. Plain data, owned by one table's cache entry.
struct snapshot_json_cache {
    std::vector<std::pair<int64_t, std::string>> texts;
};

/// Serialises as the spec's JSON (compact, as Java writes it; stable member order).
std::string to_json_text(const table_metadata& m);
/// The same text, reusing (and filling in) the serialised snapshots of `cache`.
std::string to_json_text(const table_metadata& m, snapshot_json_cache& cache);
/// The same text into `out` (cleared first; its capacity is reused, so a writer that keeps one
/// buffer does not touch fresh memory for every metadata file).
void to_json_text(const table_metadata& m, snapshot_json_cache& cache, std::string& out);

/// Parses and validates: every required v2 field present with the right type, ids consistent
/// (current schema, default spec and sort order exist; the current snapshot and refs point at
/// known snapshots). Errors are errc::corrupt naming the field; callers add the file name.
/// v1 files are accepted (their v1-only fields mapped) so older tables can be read.
result<table_metadata> parse_metadata(std::string_view json_text);
/// The same from a parsed JSON value (a REST catalog's answer holds the metadata as a member).
result<table_metadata> parse_metadata_object(const nlohmann::json& j);

/// One snapshot as the metadata's "snapshots" holds it (the text to_json_text writes).
std::string to_json_text(const snapshot& s);

/// One snapshot object as the metadata's "snapshots" holds it (and a REST add-snapshot update
/// sends it); v2 requires sequence-number, manifest-list and a summary with "operation".
result<snapshot> parse_snapshot(const nlohmann::json& j, bool v2 = true);

} // namespace floe::iceberg
