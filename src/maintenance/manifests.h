#pragma once

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/table.h"

#include <cstdint>

namespace floe::maintenance {

/// Iceberg's manifest-merge properties and defaults.
inline constexpr const char* manifest_min_merge_property = "commit.manifest.min-count-to-merge";
inline constexpr const char* manifest_target_size_property = "commit.manifest.target-size-bytes";
inline constexpr int64_t default_manifest_min_merge = 100;
inline constexpr int64_t default_manifest_target_size = 8 << 20;

struct manifest_rewrite_options {
    bool dry_run = false;
    /// Merge when at least this many small manifests are there (0: the table's
    /// commit.manifest.min-count-to-merge; `floe maintain manifests` passes 2).
    int64_t min_count = 0;
    iceberg::commit_options commit;
};

struct manifest_rewrite_report {
    size_t manifests_before = 0;
    size_t small_manifests = 0;  ///< data manifests under commit.manifest.target-size-bytes
    size_t manifests_after = 0;
    bool committed = false;
};

/// Merges the current snapshot's small data manifests (under commit.manifest.target-size-bytes)
/// into one, in a "replace" snapshot that changes no data file (entries keep their snapshot ids
/// and sequence numbers, status "existing") and carries floe.committed-positions forward.
/// Nothing is committed when fewer than the minimum count are small.
result<manifest_rewrite_report> rewrite_manifests(iceberg::catalog& cat, iceberg::file_io& io,
                                                  const iceberg::table_ident& t,
                                                  const manifest_rewrite_options& opts);

} // namespace floe::maintenance
