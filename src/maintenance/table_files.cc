#include "maintenance/table_files.h"

#include "iceberg/manifest.h"
#include "iceberg/table.h"

#include <fmt/format.h>

namespace floe::maintenance {

std::string location_prefix(const std::string& location) {
    return location.ends_with("/") ? location : location + "/";
}

std::string metadata_dir(const std::string& location) { return location_prefix(location) + "metadata/"; }

result<reached_files> reach(iceberg::file_io& io, const std::vector<iceberg::snapshot>& snapshots, bool skip_missing) {
    reached_files out;
    auto gone = [&](const result<byte_buffer>& r) { return skip_missing && !r && r.error().code() == errc::not_found; };
    for (auto& s : snapshots) {
        if (s.manifest_list.empty() || !out.manifest_lists.insert(s.manifest_list).second) continue;
        auto bytes = io.read(s.manifest_list);
        if (gone(bytes)) continue;
        if (!bytes) return std::unexpected(std::move(bytes).error().with_context("snapshot {}", s.snapshot_id));
        auto list = FLOE_TRY(iceberg::read_manifest_list(*bytes, s.manifest_list));
        for (auto& mf : list) {
            if (!out.manifests.emplace(mf.manifest_path, mf.manifest_length).second) continue;
            auto mbytes = io.read(mf.manifest_path);
            if (gone(mbytes)) continue;
            if (!mbytes) return std::unexpected(std::move(mbytes).error().with_context("snapshot {}", s.snapshot_id));
            for (auto& e : FLOE_TRY(iceberg::read_manifest(*mbytes, mf.manifest_path, &mf)))
                if (e.status != iceberg::entry_status::deleted)
                    out.data_files.emplace(e.file.file_path, e.file.file_size_in_bytes);
        }
    }
    return out;
}

result<referenced_files> referenced_by(iceberg::file_io& io, const iceberg::table_metadata& m,
                                       const std::string& metadata_location) {
    referenced_files out;
    out.reached = FLOE_TRY(reach(io, m.snapshots));
    auto dir = metadata_dir(m.location);
    auto add_version = [&](const std::string& uri) {
        out.metadata_files.insert(uri);
        if (auto v = iceberg::metadata_version(uri))
            out.metadata_files.insert(fmt::format("{}v{}.metadata.json", dir, v));
    };
    add_version(metadata_location);
    for (auto& e : m.metadata_log) add_version(e.metadata_file);
    out.metadata_files.insert(dir + "version-hint.text");
    return out;
}

} // namespace floe::maintenance
