#include "app/maintain.h"
#include "app/encryption.h"
#include "app/storage.h"

#include "base/clock.h"
#include "base/file_lock.h"
#include "config/units.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/table.h"
#include "lake/iceberg_lake.h"
#include "format/parquet/compression.h"
#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/manifests.h"
#include "maintenance/orphans.h"
#include "maintenance/reencrypt.h"
#include "maintenance/runner.h"
#include "tiering/lease.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

namespace floe::app {

namespace {

/// Files and bytes under a table's location (what `floe maintain` shows before and after).
struct footprint {
    size_t files = 0;
    int64_t bytes = 0;
};

footprint measure(iceberg::file_io& io, const std::string& location) {
    footprint f;
    auto listed = io.list_info(location.ends_with("/") ? location : location + "/");
    if (!listed) return f;
    for (auto& o : *listed) {
        ++f.files;
        f.bytes += std::max<int64_t>(0, o.size);
    }
    return f;
}

std::string human_bytes(int64_t b) {
    if (b < 10 * 1024) return fmt::format("{} B", b);
    if (b < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", double(b) / 1024);
    if (b < 10LL * 1024 * 1024 * 1024) return fmt::format("{:.1f} MiB", double(b) / (1024 * 1024));
    return fmt::format("{:.1f} GiB", double(b) / (1024.0 * 1024 * 1024));
}

struct step_row {
    std::string table, action, detail;
    footprint before, after;
    double seconds = 0;
    int64_t rows = 0;
    bool ok = true;
};

/// floe.maintenance.* applied to every tiered topic's table by the storage worker. Keeps what
/// the last pass over each table measured and how each step ended, for /v1/topics.
class scheduled_maintainer final : public tiering::table_maintainer {
public:
    scheduled_maintainer(lake::iceberg_lake& lake, maintenance::run_options o) : _lake(lake), _opts(std::move(o)) {}
    result<void> maintain(const std::string& topic) override {
        std::vector<maintenance::step_outcome> steps;
        auto r = maintenance::run_table(_lake, topic, _opts, &steps);
        {
            std::lock_guard g(_mu);
            auto& st = _states[topic];
            if (r) st.health = r->health;
            if (r) st.measured_at_ms = system_clock_source::instance().now_ms();
            for (auto& s : steps) st.last_runs[s.kind] = std::move(s);
        }
        if (!r) return std::unexpected(std::move(r).error());
        if (r->compaction.files_rewritten || r->expiry.snapshots_expired || r->orphans.orphans)
            spdlog::info("maintenance of {}: {} small files compacted into {}, {} snapshots expired, {} files deleted "
                         "by expiry, {} orphans deleted; {} data files, {} snapshots now",
                         topic, r->compaction.files_rewritten, r->compaction.files_written,
                         r->expiry.snapshots_expired, r->expiry.deleted.size(), r->orphans.orphans,
                         r->health.data_files, r->health.snapshots);
        return {};
    }

    result<std::optional<tiering::table_state>> state(const std::string& topic) override {
        iceberg::table_ident t{_lake.options().ns, lake::table_name_for_topic(topic)};
        bool measured = false;
        {
            std::lock_guard g(_mu);
            auto it = _states.find(topic);
            measured = it != _states.end() && it->second.measured_at_ms > 0;
        }
        if (!measured) {
            // No pass yet (the first comes one interval after start): measure now, so the
            // gauges and this answer agree from the start.
            auto loc = FLOE_TRY(_lake.catalog().metadata_location(t));
            if (!loc) return std::optional<tiering::table_state>();
            auto h = FLOE_TRY(maintenance::measure(_lake, t, maintenance::small_file_size(_opts.compaction)));
            std::lock_guard g(_mu);
            auto& st = _states[topic];
            if (st.measured_at_ms == 0) { // a pass may have measured meanwhile
                st.health = h;
                st.measured_at_ms = system_clock_source::instance().now_ms();
                maintenance::publish_health(t, h);
            }
        }
        std::lock_guard g(_mu);
        auto& st = _states[topic];
        tiering::table_state out;
        out.data_files = st.health.data_files;
        out.small_data_files = st.health.small_files;
        out.avg_data_file_bytes = maintenance::average_file_bytes(st.health);
        out.snapshots = st.health.snapshots;
        out.metadata_bytes = st.health.metadata_bytes;
        out.measured_at_ms = st.measured_at_ms;
        for (auto* kind : {"compact", "manifests", "expire", "orphans", "dlq-compact", "dlq-manifests", "dlq-expire",
                           "dlq-orphans"})
            if (auto it = st.last_runs.find(kind); it != st.last_runs.end()) {
                auto& s = it->second;
                out.last_runs.push_back({s.kind, s.at_ms, s.seconds, s.ok, s.detail});
            }
        return std::optional<tiering::table_state>(std::move(out));
    }

private:
    struct kept {
        maintenance::table_health health;
        int64_t measured_at_ms = 0;
        std::map<std::string, maintenance::step_outcome> last_runs;
    };
    lake::iceberg_lake& _lake;
    maintenance::run_options _opts;
    std::mutex _mu;
    std::map<std::string, kept> _states;
};

} // namespace

std::unique_ptr<tiering::table_maintainer> make_scheduled_maintainer(const config::settings& s,
                                                                     lake::iceberg_lake& lake) {
    if (!s.get_bool("floe.maintenance.enabled")) return nullptr;
    maintenance::run_options o;
    o.compaction.target_file_size = static_cast<int64_t>(lake.options().parquet.target_file_size);
    o.expiry.max_snapshot_age_ms = s.get_duration("floe.maintenance.snapshot-max-age").count();
    o.expiry.min_snapshots = s.get_int("floe.maintenance.min-snapshots-to-keep");
    o.orphan_older_than_ms = s.get_duration("floe.maintenance.orphan-older-than").count();
    return std::make_unique<scheduled_maintainer>(lake, std::move(o));
}

int maintain(const config::settings& s, const maintain_request& req) {
    std::optional<int64_t> older_than_ms;
    if (req.older_than) {
        auto d = config::parse_duration(*req.older_than);
        if (!d) {
            std::fprintf(stderr, "floe maintain: --older-than %s: %s\n", req.older_than->c_str(),
                         d.error().message().c_str());
            return 2;
        }
        older_than_ms = d->count();
    }
    auto type = s.get_string("floe.storage.remote.catalog.type");
    auto warehouse = s.get_string("floe.storage.remote.path");
    auto ns = s.get_string("floe.namespace");
    while (warehouse.ends_with("/")) warehouse.pop_back();

    // A live `floe serve` on this data directory renews the storage worker's lease every tick;
    // maintenance runs only while it can hold that lease itself, so the two never race.
    const std::filesystem::path data_dir = s.get_string("floe.data-dir");
    // One owner name per data directory, as floe serve's: a run killed with the lease held does
    // not lock the next run out for a lease duration.
    tiering::file_lease lease(data_dir / "tiering" / "lease", fmt::format("maintain@{}", data_dir.string()),
                              s.get_duration("floe.storage.worker.lease-duration"), system_clock_source::instance());
    auto renew = [&]() -> bool {
        if (req.dry_run) return true;  // a plan changes nothing
        auto got = lease.acquire();
        if (!got) {
            std::fprintf(stderr, "floe maintain: cannot take the maintenance lease %s: %s\n",
                         (data_dir / "tiering" / "lease").c_str(), got.error().message().c_str());
            return false;
        }
        if (!*got) {
            // Name the holder as a second floe serve would: the data directory's lock line.
            auto holder = file_lock::read_holder(data_dir / "floe.lock");
            std::fprintf(stderr,
                         "floe maintain: the storage worker of a live `floe serve` on %s (%s) holds the maintenance "
                         "lease (%s); stop it, or run with floe.storage.worker.enabled=false there\n",
                         data_dir.c_str(), holder && !holder->empty() ? holder->c_str() : "holder unknown",
                         (data_dir / "tiering" / "lease").c_str());
            return false;
        }
        return true;
    };
    if (!renew()) return 1;
    struct release_on_exit {
        tiering::file_lease& l;
        bool active;
        ~release_on_exit() {
            if (active) l.release();
        }
    } releaser{lease, !req.dry_run};

    auto storage = make_file_io(s);
    if (!storage) {
        std::fprintf(stderr, "floe maintain: %s\n", storage.error().message().c_str());
        return 2;
    }
    auto io = storage->io;
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        std::fprintf(stderr, "floe maintain: cannot open the %s catalog: %s\n", type.c_str(),
                     cat.error().message().c_str());
        return 1;
    }
    std::shared_ptr<iceberg::catalog> catalog(std::move(*cat));
    lake::lake_options lo;
    lo.warehouse = warehouse;
    lo.ns = ns;
    lo.parquet.row_group_size = static_cast<uint64_t>(s.get_size("floe.storage.remote.iceberg.row-group-size"));
    lo.parquet.target_file_size = static_cast<uint64_t>(s.get_size("floe.storage.remote.iceberg.target-file-size"));
    lo.parquet.row_group_rows = static_cast<uint64_t>(s.get_int("floe.storage.remote.iceberg.row-group-rows"));
    auto codec = parquet::parse_codec(s.get_string("floe.storage.remote.iceberg.compression"));
    FLOE_ASSERT(codec.has_value(), "a validated compression setting names a known codec");
    lo.parquet.codec = *codec;
    lake::iceberg_lake lake(catalog, io, lo);
    // Encrypted tables: compaction reads their files and writes new ones with these keys.
    auto keys = open_key_provider(s);
    if (!keys) {
        std::fprintf(stderr, "floe maintain: %s\n", keys.error().message().c_str());
        return 2;
    }
    lake.set_key_provider(*keys);
    std::vector<iceberg::table_ident> tables;
    if (req.table) {
        auto& name = *req.table;
        // "<namespace>.<table>" names the table; anything else is a topic.
        tables.push_back(
            {ns, name.starts_with(ns + ".") ? name.substr(ns.size() + 1) : lake::table_name_for_topic(name)});
        // A typed topic's dead letters are maintained with it.
        iceberg::table_ident dlq{ns, lake::dlq_table_name(tables.back().name)};
        if (auto loc = catalog->metadata_location(dlq); loc && *loc) tables.push_back(dlq);
    } else {
        auto names = catalog->list_tables(ns);
        if (!names) {
            std::fprintf(stderr, "floe maintain: cannot list the tables of namespace %s: %s\n", ns.c_str(),
                         names.error().message().c_str());
            return 1;
        }
        for (auto& n : *names) tables.push_back({ns, n});
    }
    std::vector<std::string> actions = req.actions;
    if (actions.empty()) actions = {"compact", "manifests", "expire", "orphans"};

    std::vector<step_row> rows;
    int rc = 0;
    size_t done = 0;
    for (auto& t : tables) {
        auto loaded = iceberg::load_table(*catalog, *io, t);
        if (!loaded) {
            std::fprintf(stderr, "floe maintain: %s.%s: %s\n", t.ns.c_str(), t.name.c_str(),
                         loaded.error().message().c_str());
            rc = 1;
            continue;
        }
        const std::string location = loaded->metadata.location;
        for (auto& action : actions) {
            if (!renew()) return 1;
            ++done;
            std::fprintf(stderr, "[%zu/%zu] %s.%s: %s%s...\n", done, tables.size() * actions.size(), t.ns.c_str(),
                         t.name.c_str(), action.c_str(), req.dry_run ? " (dry run)" : "");
            step_row row{t.ns + "." + t.name, action, {}, measure(*io, location), {}, 0, 0, true};
            auto start = std::chrono::steady_clock::now();
            const int64_t now_ms = system_clock_source::instance().now_ms();
            if (action == "compact") {
                // A dead-letter table is compacted as its topic's (it has floe.dead-letter-of).
                auto topic = loaded->metadata.properties.find("floe.topic");
                const bool dead_letters = topic == loaded->metadata.properties.end()
                                          && loaded->metadata.properties.contains("floe.dead-letter-of");
                if (dead_letters) topic = loaded->metadata.properties.find("floe.dead-letter-of");
                maintenance::compact_options o;
                o.target_file_size = static_cast<int64_t>(lo.parquet.target_file_size);
                o.dry_run = req.dry_run;
                o.progress = [&](size_t n, size_t total) {
                    if (n == total || n % 10 == 0)
                        std::fprintf(stderr, "  %s.%s: %zu/%zu groups compacted\n", t.ns.c_str(), t.name.c_str(), n,
                                     total);
                    if (n % 10 == 0) (void)renew();
                };
                if (topic == loaded->metadata.properties.end()) {
                    row.ok = false;
                    row.detail = "the table has no floe.topic property (not written by floe)";
                } else if (auto r = dead_letters ? maintenance::compact_dead_letters(lake, topic->second, o)
                                                 : maintenance::compact(lake, topic->second, o);
                           !r) {
                    row.ok = false;
                    row.detail = r.error().message();
                } else {
                    row.rows = r->rows;
                    auto written = req.dry_run ? std::string("?") : std::to_string(r->files_written);
                    auto skipped =
                        r->conflicts ? fmt::format(", {} groups skipped (concurrent change)", r->conflicts) : "";
                    row.detail = fmt::format("{} of {} data files small; {} groups: {} files ({}) -> {} files ({}), {} "
                                             "rows{}",
                                             r->small_files, r->data_files_before, r->groups, r->files_rewritten,
                                             human_bytes(r->bytes_read), written, human_bytes(r->bytes_written),
                                             r->rows, skipped);
                }
            } else if (action == "reencrypt") {
                auto topic = loaded->metadata.properties.find("floe.topic");
                const bool dead_letters = topic == loaded->metadata.properties.end()
                                          && loaded->metadata.properties.contains("floe.dead-letter-of");
                if (dead_letters) topic = loaded->metadata.properties.find("floe.dead-letter-of");
                if (topic == loaded->metadata.properties.end()) {
                    row.ok = false;
                    row.detail = "the table has no floe.topic property (not written by floe)";
                } else if (auto r = maintenance::reencrypt(lake, topic->second,
                                                                  {.dry_run = req.dry_run, .dead_letters = dead_letters}); !r) {
                    row.ok = false;
                    row.detail = r.error().message();
                } else {
                    row.rows = r->rows;
                    row.detail = fmt::format("{}{}: {} of {} data files {}{}", r->encryption,
                                             r->current_key.empty() ? "" : fmt::format(", current key '{}'", r->current_key),
                                             req.dry_run ? r->to_rewrite : r->rewritten, r->data_files,
                                             req.dry_run ? "to rewrite" : "rewritten",
                                             r->conflicts ? fmt::format(", {} skipped (concurrent change)", r->conflicts) : "");
                }
            } else if (action == "manifests") {
                maintenance::manifest_rewrite_options o;
                o.min_count = 2;  // on demand: merge whenever there is something to merge
                o.dry_run = req.dry_run;
                auto r = maintenance::rewrite_manifests(*catalog, *io, t, o);
                if (!r) {
                    row.ok = false;
                    row.detail = r.error().message();
                } else {
                    row.detail = fmt::format("{} manifests ({} small) -> {}{}", r->manifests_before,
                                             r->small_manifests, r->manifests_after,
                                             r->committed || req.dry_run ? "" : " (nothing to merge)");
                }
            } else if (action == "expire") {
                maintenance::expire_options o;
                o.now_ms = now_ms;
                o.max_age_override_ms = older_than_ms;
                o.dry_run = req.dry_run;
                auto r = maintenance::expire_snapshots(*catalog, *io, t, o);
                if (!r) {
                    row.ok = false;
                    row.detail = r.error().message();
                } else {
                    row.detail = fmt::format("{} of {} snapshots expired; deleted {} data files, {} manifests, "
                                             "{} manifest lists, {} metadata files",
                                             r->snapshots_expired, r->snapshots_before, r->data_files_deleted,
                                             r->manifests_deleted, r->manifest_lists_deleted,
                                             r->metadata_files_deleted);
                    if (r->leftovers_finished)
                        row.detail += fmt::format(" (with those {} interrupted run(s) left)", r->leftovers_finished);
                    if (req.dry_run)
                        for (auto& f : r->deleted) std::printf("  would delete %s\n", f.c_str());
                }
            } else if (action == "orphans") {
                maintenance::orphan_options o;
                o.now_ms = now_ms;
                if (older_than_ms) o.older_than_ms = *older_than_ms;
                o.dry_run = req.dry_run;
                auto r = maintenance::remove_orphans(*catalog, *io, t, o);
                if (!r) {
                    row.ok = false;
                    row.detail = r.error().message();
                } else {
                    row.detail = fmt::format("{} orphans ({}) older than {}; {} unreferenced files younger, {} "
                                             "referenced",
                                             r->orphans, human_bytes(r->orphan_bytes),
                                             config::format_duration(std::chrono::milliseconds(o.older_than_ms)),
                                             r->too_young, r->referenced);
                    if (r->uploads_aborted)
                        row.detail += fmt::format("; {} abandoned multipart upload(s) {}", r->uploads_aborted,
                                                  req.dry_run ? "to abort" : "aborted");
                    if (req.dry_run)
                        for (auto& f : r->deleted) std::printf("  would delete %s\n", f.c_str());
                }
            } else {
                row.ok = false;
                row.detail = "unknown action";
            }
            row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            row.after = measure(*io, location);
            if (!row.ok) rc = 1;
            rows.push_back(std::move(row));
        }
    }

    if (rows.empty()) return rc; // nothing ran (the errors are printed above): no empty table
    std::printf("%s\n", req.dry_run ? "plan (dry run: nothing changed)" : "result");
    std::printf("%-28s %-8s %12s %12s %12s %12s %8s  %s\n", "table", "action", "files before", "files after",
                "bytes before", "bytes after", "seconds", "detail");
    for (auto& r : rows) {
        if (r.rows && r.seconds > 0 && !req.dry_run)
            r.detail += fmt::format(" ({:.0f} rows/s)", double(r.rows) / r.seconds);
        std::printf("%-28s %-8s %12zu %12zu %12s %12s %8.2f  %s%s\n", r.table.c_str(), r.action.c_str(), r.before.files,
                    r.after.files, human_bytes(r.before.bytes).c_str(), human_bytes(r.after.bytes).c_str(), r.seconds,
                    r.ok ? "" : "FAILED: ", r.detail.c_str());
    }
    return rc;
}

} // namespace floe::app
