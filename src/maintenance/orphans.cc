#include "maintenance/orphans.h"

#include "iceberg/table.h"
#include "maintenance/table_files.h"

#include <spdlog/spdlog.h>

namespace floe::maintenance {

result<orphan_report> remove_orphans(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t,
                                     const orphan_options& opts) {
    orphan_report report;
    auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
    auto refs = FLOE_TRY_CTX(referenced_by(io, loaded.metadata, loaded.metadata_location),
                             "orphan cleanup of {}.{}", t.ns, t.name);
    auto listed = FLOE_TRY_CTX(io.list_info(location_prefix(loaded.metadata.location)), "orphan cleanup of {}.{}",
                               t.ns, t.name);
    const int64_t cutoff = opts.now_ms - opts.older_than_ms;
    for (auto& f : listed) {
        ++report.files_listed;
        report.bytes_listed += std::max<int64_t>(0, f.size);
        if (refs.contains(f.uri)) {
            ++report.referenced;
            continue;
        }
        if (f.modified_ms < 0 || f.modified_ms > cutoff) {
            ++report.too_young;
            continue;
        }
        if (!opts.dry_run) {
            if (auto r = io.remove(f.uri); !r) {
                spdlog::warn("table {}.{}: could not delete orphan {}: {}", t.ns, t.name, f.uri, r.error().message());
                continue;
            }
        }
        ++report.orphans;
        report.orphan_bytes += std::max<int64_t>(0, f.size);
        report.deleted.push_back(f.uri);
    }
    // Uploads a killed writer left open: invisible to the listing above, billed until aborted.
    auto uploads = FLOE_TRY_CTX(io.list_pending_uploads(location_prefix(loaded.metadata.location)),
                                "orphan cleanup of {}.{}", t.ns, t.name);
    for (auto& u : uploads) {
        if (u.initiated_ms < 0 || u.initiated_ms > cutoff) continue;
        if (!opts.dry_run) {
            if (auto r = io.abort_pending_upload(u); !r) {
                spdlog::warn("table {}.{}: could not abort the multipart upload of {}: {}", t.ns, t.name, u.uri,
                             r.error().message());
                continue;
            }
        }
        ++report.uploads_aborted;
    }
    return report;
}

} // namespace floe::maintenance
