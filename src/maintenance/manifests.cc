#include "maintenance/manifests.h"

#include "iceberg/manifest.h"
#include "lake/table_writer.h"

#include <charconv>

namespace floe::maintenance {

namespace {

int64_t property_long(const iceberg::table_metadata& m, const char* key, int64_t fallback) {
    auto it = m.properties.find(key);
    if (it == m.properties.end()) return fallback;
    int64_t v = 0;
    auto* end = it->second.data() + it->second.size();
    auto r = std::from_chars(it->second.data(), end, v);
    return r.ec == std::errc() && r.ptr == end ? v : fallback;
}

result<std::vector<iceberg::manifest_file>> current_manifests(iceberg::file_io& io, const iceberg::table_metadata& m) {
    auto* s = m.current_snapshot();
    if (!s) return std::vector<iceberg::manifest_file>{};
    auto bytes = FLOE_TRY(io.read(s->manifest_list));
    return iceberg::read_manifest_list(bytes, s->manifest_list);
}

} // namespace

result<manifest_rewrite_report> rewrite_manifests(iceberg::catalog& cat, iceberg::file_io& io,
                                                  const iceberg::table_ident& t,
                                                  const manifest_rewrite_options& opts) {
    manifest_rewrite_report report;
    auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
    const int64_t target = property_long(loaded.metadata, manifest_target_size_property, default_manifest_target_size);
    const int64_t min_count =
        opts.min_count > 0 ? opts.min_count
                           : property_long(loaded.metadata, manifest_min_merge_property, default_manifest_min_merge);
    auto manifests = FLOE_TRY(current_manifests(io, loaded.metadata));
    report.manifests_before = report.manifests_after = manifests.size();
    for (auto& mf : manifests)
        if (mf.content == 0 && mf.partition_spec_id == loaded.metadata.default_spec_id && mf.manifest_length < target)
            ++report.small_manifests;
    if (static_cast<int64_t>(report.small_manifests) < std::max<int64_t>(2, min_count)) return report;
    if (opts.dry_run) {
        report.manifests_after = manifests.size() - report.small_manifests + 1;
        return report;
    }
    // A change that adds and removes nothing: the commit's own merge step (all small manifests
    // into one, entries "existing" with their ids and sequence numbers) is the rewrite.
    auto copts = opts.commit;
    copts.merge_min_count = static_cast<size_t>(std::max<int64_t>(2, min_count));
    copts.merge_small_bytes = target;
    iceberg::change_request req;
    req.operation = "replace";
    req.prepare = [](const iceberg::table_metadata& base, std::map<std::string, std::string>& summary) -> result<void> {
        if (auto* s = base.current_snapshot())
            if (auto it = s->summary.find(lake::positions_summary_key); it != s->summary.end())
                summary[lake::positions_summary_key] = it->second;
        return {};
    };
    FLOE_TRY_CTX(iceberg::commit_changes(cat, io, t, std::move(req), copts), "rewriting the manifests of {}.{}", t.ns,
                 t.name);
    report.committed = true;
    auto after = FLOE_TRY(iceberg::load_table(cat, io, t));
    report.manifests_after = FLOE_TRY(current_manifests(io, after.metadata)).size();
    return report;
}

} // namespace floe::maintenance
