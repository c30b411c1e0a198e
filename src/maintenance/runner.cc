#include "maintenance/runner.h"

#include "base/clock.h"
#include "base/metrics.h"
#include "iceberg/table.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>

namespace floe::maintenance {

namespace {

struct maintenance_metrics {
    metrics::family<metrics::gauge>& data_files;
    metrics::family<metrics::gauge>& small_files;
    metrics::family<metrics::gauge>& avg_file_size;
    metrics::family<metrics::gauge>& snapshots;
    metrics::family<metrics::gauge>& metadata_bytes;
    metrics::family<metrics::counter>& runs;
    metrics::family<metrics::counter>& failures;
    metrics::family<metrics::counter>& files_compacted;
    metrics::family<metrics::counter>& files_written;
    metrics::family<metrics::counter>& rows_rewritten;
    metrics::family<metrics::counter>& manifest_rewrites;
    metrics::family<metrics::counter>& snapshots_expired;
    metrics::family<metrics::counter>& files_deleted;
    metrics::family<metrics::counter>& bytes_deleted;

    static maintenance_metrics& get() {
        auto& r = metrics::registry::instance();
        static maintenance_metrics m{
            r.gauge_family("floe_table_data_files", "Live data files of the table.", {"table"}),
            r.gauge_family("floe_table_small_data_files", "Live data files under the compaction threshold.", {"table"}),
            r.gauge_family("floe_table_avg_data_file_bytes", "Average size of the table's live data files.", {"table"}),
            r.gauge_family("floe_table_snapshots", "Snapshots in the table's current metadata.", {"table"}),
            r.gauge_family("floe_table_metadata_bytes", "Size of the table's current metadata file.", {"table"}),
            r.counter_family("floe_maintenance_runs_total", "Scheduled maintenance passes over a table.", {"table"}),
            r.counter_family("floe_maintenance_failures_total", "Maintenance passes that failed.", {"table"}),
            r.counter_family("floe_maintenance_files_compacted_total", "Small data files replaced by compaction.",
                             {"table"}),
            r.counter_family("floe_maintenance_files_written_total", "Data files written by compaction.", {"table"}),
            r.counter_family("floe_maintenance_rows_rewritten_total", "Rows rewritten by compaction.", {"table"}),
            r.counter_family("floe_maintenance_manifest_rewrites_total", "Manifest rewrites committed.", {"table"}),
            r.counter_family("floe_maintenance_snapshots_expired_total", "Snapshots removed by expiry.", {"table"}),
            r.counter_family("floe_maintenance_files_deleted_total",
                             "Files deleted by expiry and orphan cleanup.", {"table", "kind"}),
            r.counter_family("floe_maintenance_bytes_deleted_total",
                             "Bytes of data files and manifests deleted by expiry and orphan cleanup.", {"table"}),
        };
        return m;
    }
};

} // namespace

result<table_health> measure(lake::iceberg_lake& lake, const iceberg::table_ident& t, int64_t small_file_size) {
    table_health h;
    auto loaded = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), t));
    h.snapshots = loaded.metadata.snapshots.size();
    for (auto& e : FLOE_TRY(iceberg::live_files(lake.io(), loaded.metadata))) {
        ++h.data_files;
        h.data_bytes += e.file.file_size_in_bytes;
        if (e.file.file_size_in_bytes < small_file_size) ++h.small_files;
    }
    if (auto bytes = lake.io().read(loaded.metadata_location)) h.metadata_bytes = static_cast<int64_t>(bytes->size());
    return h;
}

void publish_health(const iceberg::table_ident& t, const table_health& h) {
    auto& m = maintenance_metrics::get();
    const std::vector<std::string> label{t.name};
    m.data_files.with(label).set(double(h.data_files));
    m.small_files.with(label).set(double(h.small_files));
    m.avg_file_size.with(label).set(average_file_bytes(h));
    m.snapshots.with(label).set(double(h.snapshots));
    m.metadata_bytes.with(label).set(double(h.metadata_bytes));
}

namespace {

/// compact, manifests, expire, orphans over table `t` (kinds prefixed by `prefix`), then its gauges.
result<void> run_steps(lake::iceberg_lake& lake, const iceberg::table_ident& t, const run_options& o,
                       const std::string& prefix, const std::function<result<compact_report>()>& compact_fn,
                       table_pass& r, std::vector<step_outcome>* steps) {
    auto& m = maintenance_metrics::get();
    const std::vector<std::string> label{t.name};
    // Runs one step, noting how it ended: fn() -> result<std::string> (what it did).
    auto step = [&](const char* kind, auto fn) -> result<void> {
        step_outcome s{prefix + kind, system_clock_source::instance().now_ms(), 0, true, {}};
        auto start = std::chrono::steady_clock::now();
        auto done = fn();
        s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        s.ok = done.has_value();
        s.detail = done ? *done : done.error().message();
        if (steps) steps->push_back(std::move(s));
        if (!done) return std::unexpected(std::move(done).error());
        return {};
    };
    if (o.compact) FLOE_TRY(step("compact", [&]() -> result<std::string> {
        r.compaction = FLOE_TRY(compact_fn());
        m.files_compacted.with(label).inc(r.compaction.files_rewritten);
        m.files_written.with(label).inc(r.compaction.files_written);
        m.rows_rewritten.with(label).inc(static_cast<uint64_t>(r.compaction.rows));
        auto& c = r.compaction;
        return fmt::format("{} of {} data files small; {} rewritten into {} ({} rows){}", c.small_files,
                           c.data_files_before, c.files_rewritten, c.files_written, c.rows,
                           c.conflicts ? fmt::format(", {} groups skipped (concurrent change)", c.conflicts) : "");
    }));
    if (o.manifests) FLOE_TRY(step("manifests", [&]() -> result<std::string> {
        manifest_rewrite_options mo;
        mo.commit = lake.options().commit;
        r.manifests = FLOE_TRY(rewrite_manifests(lake.catalog(), lake.io(), t, mo));
        if (r.manifests.committed) m.manifest_rewrites.with(label).inc();
        return fmt::format("{} manifests ({} small) -> {}{}", r.manifests.manifests_before,
                           r.manifests.small_manifests, r.manifests.manifests_after,
                           r.manifests.committed ? "" : " (nothing merged)");
    }));
    if (o.expire) FLOE_TRY(step("expire", [&]() -> result<std::string> {
        expire_options eo;
        eo.now_ms = system_clock_source::instance().now_ms();
        eo.defaults = o.expiry;
        eo.commit = lake.options().commit;
        r.expiry = FLOE_TRY(expire_snapshots(lake.catalog(), lake.io(), t, eo));
        m.snapshots_expired.with(label).inc(r.expiry.snapshots_expired);
        m.files_deleted.with({t.name, "data"}).inc(r.expiry.data_files_deleted);
        m.files_deleted.with({t.name, "manifest"}).inc(r.expiry.manifests_deleted);
        m.files_deleted.with({t.name, "manifest-list"}).inc(r.expiry.manifest_lists_deleted);
        m.files_deleted.with({t.name, "metadata"}).inc(r.expiry.metadata_files_deleted);
        m.bytes_deleted.with(label).inc(static_cast<uint64_t>(r.expiry.bytes_deleted));
        auto& e = r.expiry;
        return fmt::format("{} of {} snapshots expired; deleted {} data files, {} manifests, {} manifest lists, "
                           "{} metadata files{}",
                           e.snapshots_expired, e.snapshots_before, e.data_files_deleted, e.manifests_deleted,
                           e.manifest_lists_deleted, e.metadata_files_deleted,
                           e.leftovers_finished
                               ? fmt::format(" (with those {} interrupted run(s) left)", e.leftovers_finished)
                               : "");
    }));
    if (o.orphans) FLOE_TRY(step("orphans", [&]() -> result<std::string> {
        orphan_options oo;
        oo.now_ms = system_clock_source::instance().now_ms();
        oo.older_than_ms = o.orphan_older_than_ms;
        r.orphans = FLOE_TRY(remove_orphans(lake.catalog(), lake.io(), t, oo));
        m.files_deleted.with({t.name, "orphan"}).inc(r.orphans.orphans);
        m.bytes_deleted.with(label).inc(static_cast<uint64_t>(r.orphans.orphan_bytes));
        return fmt::format("{} orphans deleted ({} bytes), {} unreferenced files younger than the margin kept{}",
                           r.orphans.orphans, r.orphans.orphan_bytes, r.orphans.too_young,
                           r.orphans.uploads_aborted
                               ? fmt::format(", {} abandoned uploads aborted", r.orphans.uploads_aborted)
                               : "");
    }));
    r.health = FLOE_TRY(measure(lake, t, small_file_size(o.compaction)));
    publish_health(t, r.health);
    return {};
}

} // namespace

result<run_report> run_table(lake::iceberg_lake& lake, const std::string& topic, const run_options& o,
                             std::vector<step_outcome>* steps) {
    auto& m = maintenance_metrics::get();
    iceberg::table_ident t{lake.options().ns, lake::table_name_for_topic(topic)};
    const std::vector<std::string> label{t.name};
    m.runs.with(label).inc();
    auto body = [&]() -> result<run_report> {
        run_report r;
        FLOE_TRY(run_steps(lake, t, o, "", [&] { return compact(lake, topic, o.compaction); }, r, steps));
        // The dead letters: the same steps, so a typed topic's second table never rots.
        iceberg::table_ident dlq{t.ns, lake::dlq_table_name(t.name)};
        if (!FLOE_TRY(lake.catalog().metadata_location(dlq))) return r;
        r.dead_letters.emplace();
        auto done = run_steps(lake, dlq, o, "dlq-", [&] { return compact_dead_letters(lake, topic, o.compaction); },
                              *r.dead_letters, steps);
        if (!done)
            return std::unexpected(std::move(done).error().with_context("dead-letter table {}.{}", dlq.ns, dlq.name));
        return r;
    };
    auto r = body();
    if (!r) {
        m.failures.with(label).inc();
        return std::unexpected(std::move(r).error().with_context("maintenance of table {}.{}", t.ns, t.name));
    }
    return r;
}

} // namespace floe::maintenance
