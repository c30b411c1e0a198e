#include "maintenance/expire.h"

#include "lake/table_writer.h"
#include "maintenance/table_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <limits>

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

} // namespace

expiry_plan plan_expiry(const iceberg::table_metadata& m, int64_t now_ms, std::optional<int64_t> max_age_override_ms,
                        const expiry_defaults& d) {
    expiry_plan plan;
    const int64_t table_max_age = property_long(m, max_snapshot_age_property, d.max_snapshot_age_ms);
    const int64_t table_min_keep = std::max<int64_t>(1, property_long(m, min_snapshots_property, d.min_snapshots));
    const int64_t table_max_ref_age =
        property_long(m, max_ref_age_property, std::numeric_limits<int64_t>::max());
    auto older_than = [&](int64_t age) { return age >= now_ms ? std::numeric_limits<int64_t>::min() : now_ms - age; };

    std::map<std::string, iceberg::snapshot_ref> refs = m.refs;
    // A table without refs (older writers) still has its current snapshot as "main".
    if (m.current_snapshot_id && !refs.count("main"))
        refs["main"] = iceberg::snapshot_ref{*m.current_snapshot_id, "branch", {}, {}, {}};
    std::set<int64_t> reached_by_refs;
    for (auto& [name, ref] : refs) {
        auto* head = m.find_snapshot(ref.snapshot_id);
        if (!head) continue;
        const int64_t max_ref_age = ref.max_ref_age_ms.value_or(table_max_ref_age);
        if (name != "main" && max_ref_age < now_ms && head->timestamp_ms < now_ms - max_ref_age) {
            plan.expired_refs.push_back(name);
            continue;
        }
        if (ref.type == "tag") {
            plan.retained.insert(head->snapshot_id);
            reached_by_refs.insert(head->snapshot_id);
            continue;
        }
        const int64_t cutoff =
            older_than(max_age_override_ms ? *max_age_override_ms : ref.max_snapshot_age_ms.value_or(table_max_age));
        const int64_t min_keep = std::max<int64_t>(1, ref.min_snapshots_to_keep.value_or(table_min_keep));
        int64_t kept = 0;
        bool keeping = true;
        for (auto* s = head; s; s = s->parent_snapshot_id ? m.find_snapshot(*s->parent_snapshot_id) : nullptr) {
            reached_by_refs.insert(s->snapshot_id);
            if (keeping && (kept < min_keep || s->timestamp_ms >= cutoff)) {
                plan.retained.insert(s->snapshot_id);
                ++kept;
            } else {
                keeping = false;
            }
        }
    }
    const int64_t cutoff = older_than(max_age_override_ms.value_or(table_max_age));
    const iceberg::snapshot* newest_with_positions = nullptr;
    for (auto& s : m.snapshots) {
        if (!reached_by_refs.count(s.snapshot_id) && s.timestamp_ms >= cutoff) plan.retained.insert(s.snapshot_id);
        if (s.summary.count(lake::positions_summary_key)
            && (!newest_with_positions || s.sequence_number > newest_with_positions->sequence_number))
            newest_with_positions = &s;
    }
    // Recovery starts from the committed positions: the snapshot that carries the newest map stays.
    if (newest_with_positions) plan.retained.insert(newest_with_positions->snapshot_id);
    for (auto& s : m.snapshots)
        if (!plan.retained.count(s.snapshot_id)) plan.expired.push_back(s.snapshot_id);
    return plan;
}

namespace {

// Removes the plan's snapshots, their snapshot-log entries and the expired refs. False when
// there is nothing to remove.
bool apply(iceberg::table_metadata& m, const expiry_plan& plan) {
    if (plan.expired.empty() && plan.expired_refs.empty()) return false;
    std::set<int64_t> gone(plan.expired.begin(), plan.expired.end());
    std::erase_if(m.snapshots, [&](const iceberg::snapshot& s) { return gone.count(s.snapshot_id) > 0; });
    std::erase_if(m.snapshot_log, [&](const iceberg::snapshot_log_entry& e) { return gone.count(e.snapshot_id) > 0; });
    for (auto& r : plan.expired_refs) m.refs.erase(r);
    // Parents that are gone stay named: the spec allows a parent id that is no longer there.
    return true;
}

struct deletions {
    std::vector<std::string> data, manifests, lists, metadata;
    int64_t bytes = 0;
};

// The files `expired` reached that `kept` does not.
result<deletions> unreached(iceberg::file_io& io, const std::vector<iceberg::snapshot>& expired,
                            const std::vector<iceberg::snapshot>& kept) {
    deletions out;
    auto keep = FLOE_TRY(reach(io, kept));
    auto gone = FLOE_TRY(reach(io, expired));
    for (auto& l : gone.manifest_lists)
        if (!keep.manifest_lists.count(l)) out.lists.push_back(l);
    for (auto& [p, len] : gone.manifests)
        if (!keep.manifests.count(p)) {
            out.manifests.push_back(p);
            out.bytes += len;
        }
    // Files that only expired snapshots had live: `gone` has the live entries of manifests the
    // expired snapshots reach; a file removed by a kept snapshot appears there as "deleted" only,
    // so it is found through the expired parent that still had it.
    for (auto& [p, size] : gone.data_files)
        if (!keep.data_files.count(p)) {
            out.data.push_back(p);
            out.bytes += size;
        }
    return out;
}

// Metadata files older than the oldest version the metadata-log keeps (both name forms).
result<std::vector<std::string>> stale_metadata_files(iceberg::file_io& io, const iceberg::table_metadata& m,
                                                       const std::string& current) {
    int64_t oldest = iceberg::metadata_version(current);
    for (auto& e : m.metadata_log)
        if (auto v = iceberg::metadata_version(e.metadata_file); v > 0) oldest = std::min(oldest, v);
    std::vector<std::string> out;
    if (oldest <= 1) return out;
    auto dir = metadata_dir(m.location);
    for (auto& uri : FLOE_TRY(io.list(dir))) {
        std::string_view name(uri);
        name.remove_prefix(name.rfind('/') + 1);
        if (uri.size() != dir.size() + name.size() || !name.ends_with(".metadata.json")) continue;
        auto v = iceberg::metadata_version(name);
        if (v > 0 && v < oldest) out.push_back(uri);
    }
    return out;
}

} // namespace

result<expire_report> expire_snapshots(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t,
                                       const expire_options& opts) {
    expire_report report;
    std::vector<iceberg::snapshot> expired, kept;
    iceberg::table_metadata committed;
    auto choose = [&](iceberg::table_metadata& m) -> result<bool> {
        report.snapshots_before = m.snapshots.size();
        auto plan = plan_expiry(m, opts.now_ms, opts.max_age_override_ms, opts.defaults);
        expired.clear();
        kept.clear();
        for (auto& s : m.snapshots) (plan.retained.count(s.snapshot_id) ? kept : expired).push_back(s);
        if (!apply(m, plan)) return false;
        return true;
    };
    if (opts.dry_run) {
        auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
        FLOE_TRY(choose(loaded.metadata));
        committed = loaded.metadata;
        report.metadata_location = loaded.metadata_location;
    } else {
        FLOE_TRY_CTX(iceberg::commit_metadata(cat, io, t, choose, opts.commit), "expiring snapshots of {}.{}", t.ns,
                     t.name);
        // The metadata-log as committed (or as a later commit left it): what it no longer
        // names may go.
        auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
        committed = std::move(loaded.metadata);
        report.metadata_location = loaded.metadata_location;
    }
    report.snapshots_expired = expired.size();
    deletions del;
    if (!expired.empty()) del = FLOE_TRY_CTX(unreached(io, expired, kept), "expiring snapshots of {}.{}", t.ns, t.name);
    del.metadata = FLOE_TRY(stale_metadata_files(io, committed, report.metadata_location));
    auto remove = [&](const std::vector<std::string>& files, size_t& count) {
        for (auto& f : files) {
            if (!opts.dry_run) {
                if (auto r = io.remove(f); !r) {
                    spdlog::warn("table {}.{}: could not delete expired file {}: {} (left for orphan cleanup)", t.ns,
                                 t.name, f, r.error().message());
                    continue;
                }
            }
            ++count;
            report.deleted.push_back(f);
        }
    };
    // Data first, then what points at it: an interrupted run leaves no manifest naming a
    // deleted file that is still reachable (none is: these snapshots are gone already).
    remove(del.data, report.data_files_deleted);
    remove(del.manifests, report.manifests_deleted);
    remove(del.lists, report.manifest_lists_deleted);
    remove(del.metadata, report.metadata_files_deleted);
    report.bytes_deleted = del.bytes;
    return report;
}

} // namespace floe::maintenance
