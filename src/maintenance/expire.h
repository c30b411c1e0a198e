#pragma once

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/metadata.h"
#include "iceberg/table.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace floe::maintenance {

/// Iceberg's expiry properties, with their defaults.
inline constexpr const char* max_snapshot_age_property = "history.expire.max-snapshot-age-ms";
inline constexpr const char* min_snapshots_property = "history.expire.min-snapshots-to-keep";
inline constexpr const char* max_ref_age_property = "history.expire.max-ref-age-ms";
inline constexpr int64_t default_max_snapshot_age_ms = 5LL * 24 * 3600 * 1000;
inline constexpr int64_t default_min_snapshots = 1;

/// Used where a table sets no expiry property (floe.maintenance.* settings).
struct expiry_defaults {
    int64_t max_snapshot_age_ms = default_max_snapshot_age_ms;
    int64_t min_snapshots = default_min_snapshots;
};

/// What expiry keeps and drops of one version of the metadata.
struct expiry_plan {
    std::set<int64_t> retained;          ///< snapshot ids kept
    std::vector<int64_t> expired;        ///< snapshot ids removed
    std::vector<std::string> expired_refs;  ///< refs past their max-ref-age (never "main")
};

/// Chooses the snapshots to keep, as Iceberg's ExpireSnapshots does: every ref is kept unless it
/// is older than its max-ref-age ("main" always); along each branch, ancestors of its head are
/// kept while fewer than min-snapshots-to-keep are kept or they are younger than the max
/// snapshot age (`max_age_override_ms` replaces the property and the refs' own); a tag keeps its
/// snapshot; a snapshot no ref reaches is kept while younger than the max age. Floe adds one
/// rule: the newest snapshot that carries floe.committed-positions is always kept.
expiry_plan plan_expiry(const iceberg::table_metadata& m, int64_t now_ms,
                        std::optional<int64_t> max_age_override_ms = std::nullopt, const expiry_defaults& d = {});

struct expire_options {
    int64_t now_ms = 0;
    std::optional<int64_t> max_age_override_ms;  ///< `floe maintain --older-than`
    expiry_defaults defaults;
    bool dry_run = false;
    iceberg::commit_options commit;
};

struct expire_report {
    size_t snapshots_before = 0;
    size_t snapshots_expired = 0;
    size_t data_files_deleted = 0;
    size_t manifests_deleted = 0;
    size_t manifest_lists_deleted = 0;
    size_t metadata_files_deleted = 0;
    int64_t bytes_deleted = 0;  ///< data files and manifests (sizes from the metadata)
    std::vector<std::string> deleted;  ///< every file removed (or, dry run, that would be)
    size_t leftovers_finished = 0;     ///< interrupted earlier runs whose deletions this one finished
    std::string metadata_location;     ///< the version committed (empty: none)
};

/// Expires snapshots of one table: a metadata-only commit without them (their snapshot-log
/// entries and expired refs), then deletion of the data files, manifests and manifest lists
/// only they reached, and of metadata files older than the oldest one the metadata-log keeps
/// (write.metadata.previous-versions-max). A file any retained snapshot reaches is never
/// deleted. Deletion failures are reported (files left for the next run), not fatal.
/// Before its commit, a run writes an intent record (metadata/floe-<ms>-<random>.expiry-intent:
/// the manifest lists of the snapshots it expires) and removes it once their files are deleted;
/// each run first finishes the deletions of the records runs killed part-way left behind.
result<expire_report> expire_snapshots(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t,
                                       const expire_options& opts);

} // namespace floe::maintenance
