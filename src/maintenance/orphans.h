#pragma once

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"

#include <cstdint>
#include <string>
#include <vector>

namespace floe::maintenance {

/// Iceberg's own DeleteOrphanFiles default: a file younger than this may be one a writer is
/// still working on (written, not yet committed), so it is never taken for an orphan.
inline constexpr int64_t default_orphan_margin_ms = 3LL * 24 * 3600 * 1000;

struct orphan_options {
    int64_t now_ms = 0;
    int64_t older_than_ms = default_orphan_margin_ms;  ///< safety margin
    bool dry_run = false;
};

struct orphan_report {
    size_t files_listed = 0;
    int64_t bytes_listed = 0;
    size_t referenced = 0;
    size_t too_young = 0;  ///< unreferenced but inside the margin (or of unknown age): kept
    size_t orphans = 0;
    int64_t orphan_bytes = 0;
    std::vector<std::string> deleted;  ///< removed (or, dry run, that would be)
    size_t uploads_aborted = 0;        ///< multipart uploads older than the margin (or, dry run, ...)
};

/// Deletes the files under the table's location that its current metadata does not reference
/// (referenced_by: every snapshot's manifest list, manifests and live data files, the current
/// metadata file and the metadata-log's, their v<N> copies, version-hint.text) and that were
/// last modified more than `older_than_ms` ago. The metadata is loaded before the listing, so a
/// file committed meanwhile is newer than the margin and kept. Multipart uploads left open under
/// the location (a writer killed mid-upload) and initiated before the margin are aborted too.
result<orphan_report> remove_orphans(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t,
                                     const orphan_options& opts);

} // namespace floe::maintenance
