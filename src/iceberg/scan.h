#pragma once

#include "iceberg/file_io.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"

#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

/// Which rows a reader wants; every bound is inclusive and optional.
struct scan_filter {
    std::optional<std::string> stream_key;
    std::optional<int64_t> min_offset, max_offset;
    std::optional<int64_t> min_message_ts, max_message_ts;
};

struct scan_stats {
    size_t manifests = 0, manifests_skipped = 0;
    size_t files = 0, files_skipped = 0;
};

/// The live data files of the current snapshot that may hold rows matching `f`, without
/// reading any data file: manifests are skipped by their partition summary (stream_key bounds),
/// files by their partition value and their offset / message_ts lower and upper bounds. A file
/// without bounds for a column is kept (it cannot be ruled out). Files come in manifest order.
result<std::vector<manifest_entry>> plan_files(file_io& io, const table_metadata& m,
                                               const scan_filter& f, scan_stats* stats = nullptr);

} // namespace floe::iceberg
