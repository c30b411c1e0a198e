#include "maintenance/runner.h"

#include "base/clock.h"
#include "base/metrics.h"
#include "iceberg/table.h"

#include <spdlog/spdlog.h>

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

result<run_report> run_table(lake::iceberg_lake& lake, const std::string& topic, const run_options& o) {
    auto& m = maintenance_metrics::get();
    iceberg::table_ident t{lake.options().ns, lake::table_name_for_topic(topic)};
    const std::vector<std::string> label{t.name};
    m.runs.with(label).inc();
    auto body = [&]() -> result<run_report> {
        run_report r;
        if (o.compact) {
            r.compaction = FLOE_TRY(compact(lake, topic, o.compaction));
            m.files_compacted.with(label).inc(r.compaction.files_rewritten);
            m.files_written.with(label).inc(r.compaction.files_written);
            m.rows_rewritten.with(label).inc(static_cast<uint64_t>(r.compaction.rows));
        }
        if (o.manifests) {
            manifest_rewrite_options mo;
            mo.commit = lake.options().commit;
            r.manifests = FLOE_TRY(rewrite_manifests(lake.catalog(), lake.io(), t, mo));
            if (r.manifests.committed) m.manifest_rewrites.with(label).inc();
        }
        if (o.expire) {
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
        }
        if (o.orphans) {
            orphan_options oo;
            oo.now_ms = system_clock_source::instance().now_ms();
            oo.older_than_ms = o.orphan_older_than_ms;
            r.orphans = FLOE_TRY(remove_orphans(lake.catalog(), lake.io(), t, oo));
            m.files_deleted.with({t.name, "orphan"}).inc(r.orphans.orphans);
            m.bytes_deleted.with(label).inc(static_cast<uint64_t>(r.orphans.orphan_bytes));
        }
        const int64_t small =
            o.compaction.small_file_size > 0 ? o.compaction.small_file_size : o.compaction.target_file_size * 3 / 4;
        r.health = FLOE_TRY(measure(lake, t, small));
        m.data_files.with(label).set(double(r.health.data_files));
        m.small_files.with(label).set(double(r.health.small_files));
        m.avg_file_size.with(label).set(r.health.data_files ? double(r.health.data_bytes) / double(r.health.data_files)
                                                            : 0.0);
        m.snapshots.with(label).set(double(r.health.snapshots));
        m.metadata_bytes.with(label).set(double(r.health.metadata_bytes));
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
