#include "maintenance/expire.h"

#include "lake/table_writer.h"
#include "maintenance/table_files.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <mutex>
#include <random>
#include <set>

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
    std::vector<std::string> intents; ///< intent records of interrupted runs finished by these
    int64_t bytes = 0;
};

// The files `expired` reached that `kept` does not.
// With `partly_deleted`, files of `expired` already gone are skipped (a run killed part-way
// through deleting them).
result<deletions> unreached(iceberg::file_io& io, const std::vector<iceberg::snapshot>& expired,
                            const std::vector<iceberg::snapshot>& kept, bool partly_deleted = false) {
    deletions out;
    auto keep = FLOE_TRY(reach(io, kept));
    auto gone = FLOE_TRY(reach(io, expired, partly_deleted));
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

// The intent record of an expiry: written before its commit, removed once the files only the
// expired snapshots reached are deleted. A run killed in between leaves it; the next run
// finishes the deletions from it (see finish_interrupted).
//   floe expiry intent v1
//   written-ms <ms>
//   <manifest list of an expired snapshot>   (one a line)
constexpr std::string_view intent_header = "floe expiry intent v1";
constexpr std::string_view intent_suffix = ".expiry-intent";
// An intent whose snapshots are all still in the table may be a run that has not committed yet:
// it is left alone this long.
constexpr int64_t pending_intent_ms = 3600 * 1000;

std::string new_intent_uri(const std::string& location, int64_t now_ms) {
    static std::mt19937_64 rng{std::random_device{}()};
    static std::mutex mu;
    std::lock_guard g(mu);
    return fmt::format("{}floe-{}-{:016x}{}", metadata_dir(location), now_ms, rng(), intent_suffix);
}

std::string intent_text(int64_t now_ms, const std::vector<iceberg::snapshot>& expired) {
    std::string out = fmt::format("{}\nwritten-ms {}\n", intent_header, now_ms);
    for (auto& s : expired)
        if (!s.manifest_list.empty()) out += s.manifest_list + "\n";
    return out;
}

struct intent {
    int64_t written_ms = 0;
    std::vector<std::string> manifest_lists;
};

result<intent> parse_intent(bytes_view data, const std::string& uri) {
    std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        auto nl = text.find('\n');
        if (nl == std::string_view::npos) return fail(errc::corrupt, "expiry intent {}: no final newline", uri);
        lines.push_back(text.substr(0, nl));
        text.remove_prefix(nl + 1);
    }
    constexpr std::string_view written = "written-ms ";
    if (lines.size() < 2 || lines[0] != intent_header || !lines[1].starts_with(written))
        return fail(errc::corrupt, "expiry intent {}: not a '{}' record", uri, intent_header);
    intent out;
    auto ms = lines[1].substr(written.size());
    if (std::from_chars(ms.data(), ms.data() + ms.size(), out.written_ms).ec != std::errc())
        return fail(errc::corrupt, "expiry intent {}: bad time '{}'", uri, ms);
    for (size_t i = 2; i < lines.size(); ++i) out.manifest_lists.emplace_back(lines[i]);
    return out;
}

// Finishes what expiry runs killed after writing their intent left: the files the intent's
// snapshots reached that no snapshot of `m` reaches (skipping those already deleted), then the
// intent. If the kill came before the commit, the snapshots are still in `m`, so they reach
// nothing deletable; such an intent is kept while it may belong to a run still going.
result<void> finish_interrupted(iceberg::file_io& io, const iceberg::table_ident& t, const iceberg::table_metadata& m,
                                const expire_options& opts, deletions& out) {
    std::set<std::string> current_lists;
    for (auto& s : m.snapshots) current_lists.insert(s.manifest_list);
    for (auto& uri : FLOE_TRY(io.list(metadata_dir(m.location)))) {
        if (!uri.ends_with(intent_suffix)) continue;
        auto bytes = io.read(uri);
        if (!bytes) {
            if (bytes.error().code() == errc::not_found) continue; // finished by another run
            return std::unexpected(std::move(bytes).error());
        }
        auto in = parse_intent(*bytes, uri);
        if (!in) {
            spdlog::warn("table {}.{}: {} (left for orphan cleanup)", t.ns, t.name, in.error().message());
            continue;
        }
        std::vector<iceberg::snapshot> expired;
        bool pending = false;
        for (auto& l : in->manifest_lists) {
            if (current_lists.count(l)) {
                pending = true;
                continue;
            }
            iceberg::snapshot s;
            s.manifest_list = l;
            expired.push_back(std::move(s));
        }
        if (pending && expired.empty() && opts.now_ms - in->written_ms < pending_intent_ms) continue;
        auto del = FLOE_TRY_CTX(unreached(io, expired, m.snapshots, true), "finishing the expiry recorded in {}", uri);
        spdlog::info("table {}.{}: finishing an interrupted expiry ({}): {} data files, {} manifests, {} manifest lists",
                     t.ns, t.name, uri, del.data.size(), del.manifests.size(), del.lists.size());
        out.data.insert(out.data.end(), del.data.begin(), del.data.end());
        out.manifests.insert(out.manifests.end(), del.manifests.begin(), del.manifests.end());
        out.lists.insert(out.lists.end(), del.lists.begin(), del.lists.end());
        out.bytes += del.bytes;
        out.intents.push_back(uri);
    }
    return {};
}

} // namespace

result<expire_report> expire_snapshots(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t,
                                       const expire_options& opts) {
    expire_report report;
    // First what runs killed after their commit left undeleted (their intent records).
    deletions leftovers;
    {
        auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
        FLOE_TRY(finish_interrupted(io, t, loaded.metadata, opts, leftovers));
    }
    std::vector<iceberg::snapshot> expired, kept;
    iceberg::table_metadata committed;
    std::string intent_uri;
    auto choose = [&](iceberg::table_metadata& m) -> result<bool> {
        report.snapshots_before = m.snapshots.size();
        auto plan = plan_expiry(m, opts.now_ms, opts.max_age_override_ms, opts.defaults);
        expired.clear();
        kept.clear();
        for (auto& s : m.snapshots) (plan.retained.count(s.snapshot_id) ? kept : expired).push_back(s);
        if (!apply(m, plan)) return false;
        if (!opts.dry_run && !expired.empty()) {
            // Before the commit: what it will make deletable, so a kill after it loses nothing
            // (each attempt writes its own set over the last one's).
            if (intent_uri.empty()) intent_uri = new_intent_uri(m.location, opts.now_ms);
            auto text = intent_text(opts.now_ms, expired);
            FLOE_TRY_CTX(io.write(intent_uri, bytes_view(reinterpret_cast<const uint8_t*>(text.data()), text.size())),
                         "writing the expiry intent {}", intent_uri);
        }
        return true;
    };
    if (opts.dry_run) {
        auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
        FLOE_TRY(choose(loaded.metadata));
        committed = loaded.metadata;
        report.metadata_location = loaded.metadata_location;
    } else {
        auto done = iceberg::commit_metadata(cat, io, t, choose, opts.commit);
        if (!done || !*done) {
            // No commit: the snapshots the intent names are all still there.
            if (!intent_uri.empty()) (void)io.remove(intent_uri);
            intent_uri.clear();
            expired.clear();
        }
        if (!done)
            return std::unexpected(std::move(done).error().with_context("expiring snapshots of {}.{}", t.ns, t.name));
        // The metadata-log as committed (or as a later commit left it): what it no longer
        // names may go.
        auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
        committed = std::move(loaded.metadata);
        report.metadata_location = loaded.metadata_location;
    }
    report.snapshots_expired = expired.size();
    deletions del;
    if (!expired.empty()) del = FLOE_TRY_CTX(unreached(io, expired, kept), "expiring snapshots of {}.{}", t.ns, t.name);
    auto append = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
        std::set<std::string> have(to.begin(), to.end());
        for (auto& f : from)
            if (have.insert(f).second) to.push_back(f);
    };
    append(del.data, leftovers.data);
    append(del.manifests, leftovers.manifests);
    append(del.lists, leftovers.lists);
    del.bytes += leftovers.bytes;
    report.leftovers_finished = leftovers.intents.size();
    del.metadata = FLOE_TRY(stale_metadata_files(io, committed, report.metadata_location));
    auto remove = [&](const std::vector<std::string>& files, size_t& count) {
        for (auto& f : files) {
            if (!opts.dry_run) {
                if (auto r = io.remove(f); !r) {
                    spdlog::warn("table {}.{}: could not delete expired file {}: {} (the next expiry tries again)", t.ns,
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
    // Last: the intent records, once what they name is deleted (kept when a deletion failed, so
    // the next run tries again).
    if (!opts.dry_run && report.deleted.size() == del.data.size() + del.manifests.size() + del.lists.size()
                                                      + del.metadata.size()) {
        if (!intent_uri.empty()) leftovers.intents.push_back(intent_uri);
        for (auto& f : leftovers.intents) (void)io.remove(f);
    }
    return report;
}

} // namespace floe::maintenance
