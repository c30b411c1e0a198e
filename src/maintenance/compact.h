#pragma once

#include "lake/iceberg_lake.h"

#include <cstdint>
#include <functional>
#include <string>

namespace floe::maintenance {

struct compact_options {
    int64_t target_file_size = 128 << 20;  ///< floe.storage.remote.iceberg.target-file-size
    /// Files under this size are "small" and candidates (0: 3/4 of the target, as Iceberg's
    /// min-file-size-bytes default).
    int64_t small_file_size = 0;
    size_t min_input_files = 2;  ///< a group of fewer small files is left alone
    bool dry_run = false;
    /// Called after each group with (groups done, groups planned).
    std::function<void(size_t, size_t)> progress;
};

struct compact_report {
    size_t data_files_before = 0;
    size_t small_files = 0;
    size_t groups = 0;            ///< rewrites planned (dry run) or committed
    size_t files_rewritten = 0;   ///< input files replaced
    size_t files_written = 0;
    int64_t rows = 0;
    int64_t bytes_read = 0, bytes_written = 0;
    size_t conflicts = 0;         ///< groups skipped because a concurrent change took one of their files
};

/// Compacts the table of `topic`: per stream_key partition, its small data files (ordered by
/// offset) are bin-packed into groups of about the target size; each group is read and its
/// rows written again in offset order through the lake's own writer
/// (table_writer::begin_file_rewrite: the Parquet layout offload writes for the table's current
/// schema; a typed table's files of earlier schema versions are read by field id, with nulls
/// where a field did not exist yet, so typed files stay typed) and committed as one "replace" snapshot that carries the
/// committed positions forward. Offload appends may commit meanwhile (the commit retries over
/// them); a group whose files a concurrent commit removed is skipped and counted in
/// `conflicts`, its written files deleted.
result<compact_report> compact(lake::iceberg_lake& lake, const std::string& topic, const compact_options& opts);
/// The same for the topic's dead-letter table `<table>_dlq` (an empty report when it has none).
result<compact_report> compact_dead_letters(lake::iceberg_lake& lake, const std::string& topic,
                                            const compact_options& opts);

} // namespace floe::maintenance
