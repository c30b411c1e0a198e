#pragma once

#include "lake/iceberg_lake.h"
#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/manifests.h"
#include "maintenance/orphans.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace floe::maintenance {

/// The health of one table, as /metrics shows it.
struct table_health {
    size_t data_files = 0;
    size_t small_files = 0;  ///< under compact_options' small-file size
    int64_t data_bytes = 0;
    size_t snapshots = 0;
    int64_t metadata_bytes = 0;  ///< the current metadata file
};

/// Reads the current metadata and its live files.
result<table_health> measure(lake::iceberg_lake& lake, const iceberg::table_ident& t, int64_t small_file_size);
/// Files under this size count as small: compact_options' own, else 3/4 of the target.
inline int64_t small_file_size(const compact_options& o) {
    return o.small_file_size > 0 ? o.small_file_size : o.target_file_size * 3 / 4;
}
/// Sets the table's floe_table_* gauges to `h` (what run_table does after a pass).
void publish_health(const iceberg::table_ident& t, const table_health& h);
/// The floe_table_avg_data_file_bytes gauge's value.
inline double average_file_bytes(const table_health& h) {
    return h.data_files ? double(h.data_bytes) / double(h.data_files) : 0.0;
}

struct run_options {
    bool compact = true, manifests = true, expire = true, orphans = true;
    compact_options compaction;
    expiry_defaults expiry;
    int64_t orphan_older_than_ms = default_orphan_margin_ms;
};

/// What one pass did to one table.
struct table_pass {
    compact_report compaction;
    manifest_rewrite_report manifests;
    expire_report expiry;
    orphan_report orphans;
    table_health health;
};

struct run_report : table_pass {
    /// The same steps over the topic's dead-letter table `<table>_dlq`, when it has one.
    std::optional<table_pass> dead_letters;
};

/// How one step of a pass ended (kind: compact, manifests, expire, orphans; over the
/// dead-letter table: dlq-compact, dlq-manifests, dlq-expire, dlq-orphans).
struct step_outcome {
    std::string kind;
    int64_t at_ms = 0;  ///< when it started (system clock)
    double seconds = 0;
    bool ok = true;
    std::string detail;  ///< what it did, or the error
};

/// One scheduled pass over the table of `topic`: compaction, manifest rewrite (when the table
/// has commit.manifest.min-count-to-merge small manifests), then snapshot expiry (so the files
/// both replaced can go), then orphan cleanup; then the table's gauges are refreshed.
/// A typed topic's dead-letter table `<table>_dlq` gets the same steps after the main table's
/// (its steps' kinds start with "dlq-"), so its snapshots expire and its orphans go too.
/// Updates the metrics floe_maintenance_* (gauges per table, counters of work done). The
/// caller holds the storage worker's lease.
/// Each step that ran (also a failed one, which ends the pass) is added to `steps` when given.
result<run_report> run_table(lake::iceberg_lake& lake, const std::string& topic, const run_options& o,
                             std::vector<step_outcome>* steps = nullptr);

} // namespace floe::maintenance
