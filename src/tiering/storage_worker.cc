#include "tiering/storage_worker.h"

#include "base/metrics.h"
#include "tiering/batch_records.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <set>

namespace floe::tiering {
namespace {

struct worker_metrics {
    metrics::family<metrics::counter>& segments;
    metrics::family<metrics::counter>& records;
    metrics::family<metrics::counter>& files;
    metrics::family<metrics::counter>& bytes;
    metrics::family<metrics::counter>& failures;
    metrics::family<metrics::counter>& commits;
    metrics::family<metrics::counter>& conflicts;
    metrics::family<metrics::histogram>& commit_seconds;
    metrics::family<metrics::gauge>& leases_held;
    metrics::family<metrics::counter>& leases_taken;
    metrics::family<metrics::counter>& leases_lost;

    static worker_metrics& get() {
        auto& r = metrics::registry::instance();
        static worker_metrics m{
            r.counter_family("floe_offload_segments_total", "Segments offloaded to Iceberg.", {"topic"}),
            r.counter_family("floe_offload_records_total", "Records committed to Iceberg by offload.", {"topic"}),
            r.counter_family("floe_offload_files_total", "Parquet data files committed by offload.", {"topic"}),
            r.counter_family("floe_offload_bytes_total", "Bytes of Parquet data files committed by offload.", {"topic"}),
            r.counter_family("floe_storage_worker_failures_total", "Offload attempts that failed (retried with backoff).", {"topic"}),
            r.counter_family("floe_iceberg_commits_total", "Iceberg commits by the storage worker.", {"operation"}),
            r.counter_family("floe_iceberg_commit_conflicts_total", "Iceberg commit attempts that lost a compare-and-swap and were retried."),
            r.histogram_family("floe_iceberg_commit_duration_seconds", "Time to write and commit one offload to Iceberg."),
            r.gauge_family("floe_storage_worker_partition_leases", "Partition leases this broker's storage worker holds."),
            r.counter_family("floe_storage_worker_lease_acquisitions_total", "Partition leases taken with a new fencing epoch (first take, or a takeover).", {"topic"}),
            r.counter_family("floe_storage_worker_leases_lost_total", "Partition work stopped because its lease could not be renewed.", {"topic"}),
        };
        return m;
    }
};

} // namespace

/// One partition's lease while its work runs (one offload thread): renews it every third of
/// the lease duration and says when it is lost; without partition leases it is a no-op.
class storage_worker::lease_keeper {
public:
    lease_keeper(partition_leases* leases, std::optional<partition_lease> held)
        : _leases(leases), _held(std::move(held)), _renewed(std::chrono::steady_clock::now()) {}

    /// OK while the lease is (still) held; errc::conflict once it is lost (then always).
    result<void> keep() {
        if (!_held) return {};
        if (_lost) return fail(errc::conflict, "{}", *_lost);
        auto now = std::chrono::steady_clock::now();
        if (now - _renewed < _leases->duration() / 3 && now < _held->valid_until) return {};
        auto r = _leases->renew(*_held);
        if (!r) {
            auto key = stream_key_for(_held->topic, _held->partition);
            // A renewal that could not reach the lease store is not a loss yet, but the lease
            // cannot be shown to be ours: go on only until it may have expired.
            if (r.error().code() != errc::conflict && std::chrono::steady_clock::now() < _held->valid_until) {
                spdlog::warn("storage worker: cannot renew the lease of {} (epoch {}), going on until it would "
                             "expire: {}", key, _held->epoch, r.error().message());
                return {};
            }
            return lose(r.error());
        }
        _held = std::move(*r);
        _renewed = now;
        return {};
    }
    /// Renews now, whatever the time since the last renewal: OK only when the lease store
    /// confirms this holder and epoch, so nothing another holder did can have happened since
    /// the lease was last kept. errc::conflict (lost) or the store's error (unreachable).
    result<void> confirm() {
        if (!_held) return {};
        if (_lost) return fail(errc::conflict, "{}", *_lost);
        auto r = _leases->renew(*_held);
        if (!r) {
            if (r.error().code() == errc::conflict) return lose(r.error());
            return fail(r.error().code(), "confirming the lease of {}: {}",
                        stream_key_for(_held->topic, _held->partition), r.error().message());
        }
        _held = std::move(*r);
        _renewed = std::chrono::steady_clock::now();
        return {};
    }
    /// Passes `r` through; a fenced write refused for a stale epoch (errc::conflict) means the
    /// lease is lost.
    result<void> fenced(result<void> r) {
        if (!r && _held && r.error().code() == errc::conflict && !_lost) _lost = r.error().message();
        return r;
    }
    bool lost() const noexcept { return _lost.has_value(); }
    log::offload_fence fence() const noexcept {
        return _held ? log::offload_fence(_held->epoch) : std::nullopt;
    }
    const std::optional<partition_lease>& held() const noexcept { return _held; }

private:
    /// The lease is lost for good (`why`: the renewal's refusal).
    std::unexpected<floe::error> lose(const floe::error& why) {
        _lost = fmt::format("lease of {} lost (epoch {}): {}", stream_key_for(_held->topic, _held->partition),
                            _held->epoch, why.message());
        return fail(errc::conflict, "{}", *_lost);
    }

    partition_leases* _leases;
    std::optional<partition_lease> _held;
    std::chrono::steady_clock::time_point _renewed;
    std::optional<std::string> _lost;
};

std::string stream_key_for(std::string_view topic, int32_t partition) {
    return fmt::format("{}-{}", topic, partition);
}

storage_worker::storage_worker(log::local_tier& logs, lake::lake& lake, std::unique_ptr<lease> l,
                               worker_options opts)
    : _logs(logs), _lake(lake), _lease(std::move(l)), _opts(opts),
      _clock(opts.clock ? *opts.clock : system_clock_source::instance()) {}

storage_worker::storage_worker(log::local_tier& logs, lake::lake& lake, std::unique_ptr<partition_leases> leases,
                               worker_options opts)
    : _logs(logs), _lake(lake), _leases(std::move(leases)), _opts(opts),
      _clock(opts.clock ? *opts.clock : system_clock_source::instance()) {}

storage_worker::~storage_worker() { stop(); }

void storage_worker::start() {
    std::lock_guard g(_run_mu);
    if (_thread.joinable()) return;
    _stopping = false;
    _thread = std::thread([this] { run(); });
}

void storage_worker::stop() {
    {
        std::lock_guard g(_run_mu);
        _stopping = true;
    }
    _cv.notify_all();
    if (_thread.joinable()) _thread.join();
    if (_lease) _lease->release();
    if (_leases) {
        // A clean stop hands the partitions over at once instead of after the lease duration.
        std::map<std::string, partition_lease> held;
        {
            std::lock_guard g(_mu);
            held.swap(_held);
        }
        for (auto& [k, l] : held) _leases->release(l);
        worker_metrics::get().leases_held.with({}).set(0);
    }
}

void storage_worker::run() {
    std::unique_lock lk(_run_mu);
    while (!_stopping) {
        lk.unlock();
        auto report = tick();
        if (report.segments_offloaded > 0 || report.failures > 0)
            spdlog::debug("storage worker tick: {} segments, {} rows, {} failures",
                          report.segments_offloaded, report.rows_committed, report.failures);
        lk.lock();
        _cv.wait_for(lk, _opts.tick_interval, [this] { return _stopping || _woken; });
        _woken = false;
    }
}

void storage_worker::wake() {
    {
        std::lock_guard g(_run_mu);
        _woken = true;
    }
    _cv.notify_all();
}

worker_health storage_worker::health() const {
    std::lock_guard g(_mu);
    size_t failing = 0;
    std::vector<std::string> holes;
    for (auto& [k, s] : _state) {
        failing += s.failures > 0;
        if (!s.hole.empty()) holes.push_back(s.hole);
    }
    if (!holes.empty())
        return {false, fmt::format("history missing from the lake: {} (the local marker says it was offloaded); those "
                                   "offsets answer a retriable error until the table holds them",
                                   fmt::join(holes, "; "))};
    if (failing == 0) {
        if (_leases) return {true, fmt::format("offloading {} partition(s) under lease", _held.size())};
        return {true, _leader ? "offloading" : "standby (another broker holds the lease)"};
    }
    return {false, fmt::format("{} partition(s) failing to offload; last error: {}", failing, _last_error)};
}

tick_report storage_worker::tick() {
    tick_report rep;
    if (_lease) {
        auto leader = _lease->acquire();
        if (!leader) {
            std::lock_guard g(_mu);
            _last_error = leader.error().message();
            spdlog::warn("storage worker: cannot take the lease: {}", leader.error().message());
            ++rep.failures;
            return rep;
        }
        {
            std::lock_guard g(_mu);
            _leader = *leader;
        }
        rep.leader = *leader;
        if (!*leader) return rep;
    }

    // Every partition of every tiered topic.
    std::vector<std::pair<log::topic_info, std::shared_ptr<log::local_partition>>> work;
    for (auto& t : _logs.topics()) {
        if (!t.config.remote_storage_enable) continue;
        for (int32_t p = 0; p < t.partitions; ++p) {
            auto pl = _logs.partition(t.name, p);
            if (!pl) continue;
            work.emplace_back(t, std::move(pl));
        }
    }
    rep.partitions = work.size();

    // Up to `parallelism` partitions at once: each one's roll, offload and local retention.
    size_t next = 0;
    std::mutex next_mu; // guards next, rep and led while the runners work
    std::set<std::string> led; // topics whose partition 0 this worker holds (table-wide work)
    auto runner = [&] {
        for (;;) {
            size_t i;
            {
                std::lock_guard g(next_mu);
                if (next >= work.size()) break;
                i = next++;
            }
            auto r = work_partition(work[i].first, work[i].second);
            std::lock_guard g(next_mu);
            rep.segments_offloaded += r.segments;
            rep.rows_committed += r.rows;
            rep.failures += r.failed;
            rep.leased += r.leased;
            rep.leases_lost += r.lease_lost;
            rep.local_segments_deleted += r.local_deleted;
            if (r.leased && !r.lease_lost && work[i].second->tp().partition == 0) led.insert(work[i].first.name);
        }
    };
    size_t threads = std::min(std::max<size_t>(1, _opts.parallelism), std::max<size_t>(1, work.size()));
    std::vector<std::future<void>> futs;
    for (size_t i = 1; i < threads; ++i) futs.push_back(std::async(std::launch::async, runner));
    runner();
    for (auto& f : futs) f.get();
    if (_leases) {
        rep.leader = rep.leased > 0;
        std::lock_guard g(_mu);
        _leader = rep.leader;
    }

    // Table-wide work: with partition leases, only by the holder of the topic's partition 0.
    auto leads = [&](const std::string& topic) { return !_leases || led.contains(topic); };
    auto now = std::chrono::steady_clock::now();
    for (auto& t : _logs.topics()) {
        if (!t.config.remote_storage_enable || t.config.retention_ms < 0 || !leads(t.name)) continue;
        {
            std::lock_guard g(_mu);
            auto& last = _last_remote_retention[t.name];
            if (last != std::chrono::steady_clock::time_point{} && now - last < _opts.remote_retention_interval) continue;
            last = now;
        }
        auto table = _lake.table_for_topic(t.name);
        if (!table) continue;
        auto expired = (*table)->expire_before(_clock.now_ms() - t.config.retention_ms);
        if (expired) {
            rep.remote_files_expired += *expired;
            if (*expired) spdlog::info("remote retention: {} data file(s) of {} older than retention.ms={} removed", *expired, t.name, t.config.retention_ms);
        } else {
            spdlog::warn("remote retention of {} failed: {}", t.name, expired.error().message());
        }
    }
    if (_opts.maintainer) {
        for (auto& t : _logs.topics()) {
            if (!t.config.remote_storage_enable || !leads(t.name)) continue;
            {
                std::lock_guard g(_mu);
                auto& last = _last_maintenance[t.name];
                if (last == std::chrono::steady_clock::time_point{}) last = _started;
                if (now - last < _opts.maintenance_interval) continue;
                last = now;
            }
            // Still the lease holder: a long offload may have outlived it.
            if (_lease) {
                if (auto still = _lease->acquire(); !still || !*still) break;
            } else {
                std::optional<partition_lease> l;
                {
                    std::lock_guard g(_mu);
                    if (auto it = _held.find(stream_key_for(t.name, 0)); it != _held.end()) l = it->second;
                }
                if (!l || !_leases->renew(*l)) continue;
            }
            if (auto r = _opts.maintainer->maintain(t.name); !r)
                spdlog::warn("storage worker: maintenance of {} failed: {}", t.name, r.error().message());
            else ++rep.tables_maintained;
        }
    }
    if (_leases) {
        // The leases of partition 0 kept only for the table-wide work of topics not owned here.
        std::vector<partition_lease> give_back;
        {
            std::lock_guard g(_mu);
            for (auto it = _held.begin(); it != _held.end();) {
                if (it->second.partition == 0 && !_leases->owns(it->second.topic, 0)) {
                    give_back.push_back(it->second);
                    it = _held.erase(it);
                } else {
                    ++it;
                }
            }
            worker_metrics::get().leases_held.with({}).set(double(_held.size()));
        }
        for (auto& l : give_back) _leases->release(l);
    }
    return rep;
}

storage_worker::partition_result storage_worker::work_partition(const log::topic_info& topic,
                                                                std::shared_ptr<log::local_partition> p) {
    const int32_t pn = p->tp().partition;
    const auto key = stream_key_for(topic.name, pn);
    std::optional<partition_lease> held;
    auto& m = worker_metrics::get();
    if (_leases) {
        bool held_before;
        {
            std::lock_guard g(_mu);
            held_before = _held.contains(key);
        }
        if (!held_before && !_leases->owns(topic.name, pn)) {
            // Not ours: leave a free lease to its live owner for a grace period first.
            auto free = _leases->is_free(topic.name, pn);
            auto now = std::chrono::steady_clock::now();
            std::lock_guard g(_mu);
            if (!free || !*free) {
                _free_since.erase(key);
                return {};
            }
            auto grace = std::max<std::chrono::milliseconds>(2 * _opts.tick_interval, _leases->duration() / 2);
            auto [it, fresh] = _free_since.try_emplace(key, now);
            if (fresh || now - it->second < grace) return {};
            _free_since.erase(it);
        }
        auto l = _leases->acquire(topic.name, pn);
        if (!l) {
            spdlog::warn("storage worker: cannot take the lease of {}: {}", key, l.error().message());
            std::lock_guard g(_mu);
            _last_error = fmt::format("{}: {}", key, l.error().message());
            partition_result r;
            r.failed = true;
            return r;
        }
        if (!*l) {
            // Another broker holds it: whatever this worker held is gone.
            std::lock_guard g(_mu);
            _held.erase(key);
            return {};
        }
        held = **l;
        std::optional<int64_t> before;
        {
            std::lock_guard g(_mu);
            if (auto it = _held.find(key); it != _held.end()) before = it->second.epoch;
            _held[key] = *held;
        }
        if (before != held->epoch) {
            m.leases_taken.with({topic.name}).inc();
            spdlog::info("storage worker: took the lease of {} (epoch {}{})", key, held->epoch,
                         _leases->owns(topic.name, pn) ? "" : ", free while its owner did not take it");
        }
    }
    lease_keeper keeper(_leases.get(), held);
    if (auto r = p->maybe_roll_by_time(); !r)
        spdlog::warn("storage worker: cannot roll {}: {}", key, r.error().message());
    auto out = offload_partition(topic, *p, keeper);
    out.leased = held.has_value();
    // Local retention: only offloaded segments may go (and only while the lease is ours).
    if (!keeper.lost() && keeper.keep()) {
        std::optional<kafka_offset> covers;
        {
            std::lock_guard g(_mu);
            if (auto it = _state.find(key); it != _state.end() && it->second.lake_covers)
                covers = kafka_offset(*it->second.lake_covers);
        }
        auto deleted = p->apply_retention(covers, keeper.fence());
        if (deleted) {
            out.local_deleted = deleted->size();
        } else {
            (void)keeper.fenced(fail(deleted.error())); // a stale epoch: the lease is lost
            spdlog::warn("storage worker: local retention of {} failed: {}", key, deleted.error().message());
        }
    }
    out.lease_lost = keeper.lost();
    if (held) {
        bool keep = false;
        if (!out.lease_lost) {
            // Kept while this broker owns the partition; partition 0 also until the table-wide
            // work of this tick is done (tick() gives it back then).
            keep = pn == 0 || _leases->owns(topic.name, pn);
            if (keep) {
                std::lock_guard g(_mu);
                if (auto it = _held.find(key); it != _held.end() && keeper.held()) it->second = *keeper.held();
            }
        } else {
            m.leases_lost.with({topic.name}).inc();
        }
        if (!keep) {
            {
                std::lock_guard g(_mu);
                _held.erase(key);
            }
            if (!out.lease_lost) _leases->release(*keeper.held());
        }
    }
    return out;
}

storage_worker::partition_result storage_worker::offload_partition(const log::topic_info& topic,
                                                                   log::local_partition& p, lease_keeper& keeper) {
    auto key = stream_key_for(topic.name, p.tp().partition);
    {
        std::lock_guard g(_mu);
        auto& st = _state[key];
        if (st.failures > 0 && std::chrono::steady_clock::now() < st.next_attempt) return {};
    }
    const auto marker_before = p.offloaded_up_to();
    auto r = offload_partition_once(topic, p, keeper);
    if (!r && keeper.lost()) {
        // Not a failure of the partition: another broker has it now (or will once it expires).
        spdlog::warn("storage worker: stopped the offload of {}: {}", key, r.error().message());
        return {};
    }
    std::lock_guard g(_mu);
    auto& st = _state[key];
    if (r) {
        if (st.failures > 0) spdlog::info("storage worker: {} offloads again after {} failure(s)", key, st.failures);
        st.failures = 0;
        return *r;
    }
    // An attempt that moved the marker before it failed made progress: the backoff starts over
    // (consecutive failures of a partition that keeps committing segments must not push its
    // retries out to max_backoff, as S3 faults under load did).
    st.failures = p.offloaded_up_to()() > marker_before() ? 1 : st.failures + 1;
    auto backoff = std::min<std::chrono::milliseconds>(
        _opts.max_backoff, std::chrono::milliseconds(500) * (1 << std::min(st.failures, 10)));
    st.next_attempt = std::chrono::steady_clock::now() + backoff;
    st.last_error = r.error().message();
    _last_error = fmt::format("{}: {}", key, st.last_error);
    worker_metrics::get().failures.with({topic.name}).inc();
    spdlog::warn("storage worker: offload of {} failed (attempt {}, retry in {} ms): {}", key, st.failures,
                 backoff.count(), r.error().message());
    partition_result failed;
    failed.failed = true;
    return failed;
}

lake::value_decoding value_decoding_of(const log::topic_info& topic) {
    lake::value_decoding d;
    const auto& c = topic.config;
    if (c.iceberg_mode == "schema-id") d.how = lake::value_decoding::mode::schema_id;
    else if (c.iceberg_mode == "latest-schema") d.how = lake::value_decoding::mode::latest_schema;
    d.subject = c.value_subject(topic.name);
    d.protobuf_message = c.iceberg_protobuf_message;
    if (c.iceberg_key_mode == "schema-id") d.key_how = lake::value_decoding::mode::schema_id;
    else if (c.iceberg_key_mode == "latest-schema") d.key_how = lake::value_decoding::mode::latest_schema;
    d.key_subject = c.key_subject(topic.name);
    return d;
}

lake::table_encryption table_encryption_of(const log::topic_info& topic) {
    lake::table_encryption e;
    const auto& c = topic.config;
    if (c.iceberg_encryption == "uniform") e.how = lake::table_encryption::mode::uniform;
    else if (c.iceberg_encryption == "columns") e.how = lake::table_encryption::mode::columns;
    else return e;
    if (e.how == lake::table_encryption::mode::columns) e.columns = c.encrypted_columns();
    e.encrypted_footer = c.iceberg_encryption_footer != "plaintext";
    e.ctr = c.iceberg_encryption_algorithm == "AES_GCM_CTR_V1";
    e.aad_prefix = c.iceberg_encryption_aad_prefix == "stored"     ? lake::table_encryption::aad::stored
                   : c.iceberg_encryption_aad_prefix == "supplied" ? lake::table_encryption::aad::supplied
                                                                     : lake::table_encryption::aad::none;
    return e;
}

result<storage_worker::partition_result> storage_worker::offload_partition_once(const log::topic_info& topic,
                                                                                log::local_partition& p,
                                                                                lease_keeper& keeper) {
    partition_result out;
    auto key = stream_key_for(topic.name, p.tp().partition);
    FLOE_TRY(keeper.keep());
    auto table = FLOE_TRY_CTX(_lake.table_for_topic(topic.name), "opening the table of {}", topic.name);
    auto positions = FLOE_TRY_CTX(table->committed_positions(), "reading committed positions of {}", key);
    int64_t committed = positions.contains(key) ? positions[key] : 0;
    const int64_t marker = p.offloaded_up_to()();
    // A commit that landed before a crash, not yet marked locally: mark it now.
    if (committed > marker) {
        spdlog::info("storage worker: {} already committed up to offset {} (marker was {}); marking", key,
                     committed, marker);
        FLOE_TRY(keeper.fenced(p.set_offloaded_up_to(kafka_offset(committed), keeper.fence())));
    } else if (committed < marker) {
        // The table does not hold what the marker says was offloaded: another writer, a restored
        // catalog or a forked table (or another lake: a broker with other catalog settings).
        // Or this worker lost its lease while it read the table (a slow object store) and the
        // new holder offloaded and moved the shared marker meanwhile: this worker's view of the
        // table is older than the marker. Only a holder that still has its lease, confirmed now,
        // knows the two were read with nobody else writing (found by the chaos harness: a
        // zombie's false "in neither tier" error, its rewind refused by the fence).
        FLOE_TRY(keeper.confirm());
        const int64_t local_start = p.offsets().log_start();
        // Offsets in neither tier: below the local start, at or above the table's position, and
        // not hidden by DeleteRecords (a floor past them is how an operator accepts the loss).
        const int64_t hole_from = std::max(committed, p.records_start()());
        const int64_t hole_to = std::min(marker, local_start);
        const auto& table_name = table->table_name();
        bool report;
        {
            std::lock_guard g(_mu);
            auto& st = _state[key];
            report = !st.marker_ahead_reported;
            st.marker_ahead_reported = true;
            st.hole = hole_from < hole_to ? fmt::format("table {} misses offsets {}..{} of {}", table_name, hole_from,
                                                        hole_to - 1, key)
                                          : std::string();
        }
        if (hole_from < hole_to) {
            // Offloading on above the hole would move the table's position past history it does
            // not hold, and readers could no longer tell: nothing is offloaded (and nothing is
            // deleted locally) until the table holds it, or DeleteRecords gives it up.
            if (report)
                spdlog::error("storage worker: table {} holds {} only below offset {} but the local marker says {} was "
                              "offloaded (another writer, another lake, a restored catalog or a forked table): offsets "
                              "{}..{} are in neither tier; nothing of {} is offloaded or deleted locally until the "
                              "table holds them (point this broker at the catalog that has them), or DeleteRecords "
                              "gives them up",
                              table_name, key, committed, marker, hole_from, hole_to - 1, key);
            FLOE_TRY(keeper.fenced(p.rewind_offloaded_up_to(kafka_offset(committed), keeper.fence())));
            return fail(errc::unavailable, "table {} misses offsets {}..{} of {} (the local marker says {} was offloaded)",
                        table_name, hole_from, hole_to - 1, key, marker);
        }
        if (report)
            spdlog::error("storage worker: table {} holds {} only below offset {} but the local marker says {} was "
                          "offloaded (another writer, a restored catalog or a forked table): local deletion stops "
                          "there and offsets {}..{} are offloaded again",
                          table_name, key, committed, marker, committed, marker - 1);
        FLOE_TRY(keeper.fenced(p.rewind_offloaded_up_to(kafka_offset(committed), keeper.fence())));
    } else {
        std::lock_guard g(_mu);
        _state[key].marker_ahead_reported = false;
        _state[key].hole.clear();
    }
    auto covered = [&](int64_t pos) {
        std::lock_guard g(_mu);
        _state[key].lake_covers = pos;
    };
    covered(committed);
    auto& m = worker_metrics::get();
    bool log_append_time = topic.config.message_timestamp_type == log::timestamp_type::log_append_time;
    for (auto& seg : p.sealed_segments()) {
        if (seg.empty() || seg.next_offset() <= p.offloaded_up_to()()) continue;
        // Never past the last stable offset: an open transaction's records may still be
        // aborted, and only committed data becomes rows (segments go in order, so stop here).
        if (seg.next_offset() > p.last_stable_offset()()) break;
        FLOE_TRY(keeper.keep());
        auto t0 = std::chrono::steady_clock::now();
        // The table's encryption follows the topic's configs (a table property, so compaction
        // and every other writer of the table encrypts the same way).
        FLOE_TRY(table->set_encryption(table_encryption_of(topic)));
        // The table's partition spec follows floe.iceberg.partition-spec (a change adds a spec:
        // partition evolution; files already there keep theirs).
        FLOE_TRY(table->set_partition_spec(topic.config.iceberg_partition_spec));
        auto app = FLOE_TRY_CTX(table->begin_append(value_decoding_of(topic)), "starting an append for segment {} of {}",
                                seg.id(), key);
        std::vector<parquet::message_header_view> headers;
        std::string message_id;
        uint32_t since_keep = 0;
        auto rows = for_each_local_record(
            p, std::max(seg.base_offset(), committed), seg.next_offset(), _opts.read_chunk_bytes,
            _opts.max_decompressed_batch, [&](const record_view& rec) -> result<bool> {
                headers.clear();
                for (auto& hv : *rec.headers) headers.push_back({hv.key, hv.value});
                message_id = std::to_string(rec.offset);
                parquet::message_row row;
                row.stream_key = key;
                row.segment_id = seg.id();
                row.message_id = message_id;
                row.message_ts = rec.timestamp;
                row.kafka_timestamp = log_append_time ? -1 : rec.timestamp;
                row.key = rec.key;
                row.value = rec.value;
                row.headers = std::span<const parquet::message_header_view>(headers);
                row.partition = p.tp().partition;
                row.offset = rec.offset;
                FLOE_TRY(app->add(row));
                // Renew as the segment goes; stop at once when the lease is lost.
                if (++since_keep == 4096) {
                    since_keep = 0;
                    FLOE_TRY(keeper.keep());
                }
                return true;
            }, /*committed_only=*/true);
        FLOE_TRY_CTX(std::move(rows), "offloading segment {} of {}", seg.id(), key);
        const auto rows_done = std::chrono::steady_clock::now();
        // A commit by a former holder cannot add a row twice (the table's committed positions
        // and the catalog's compare-and-swap refuse overlapping rows), but only the holder commits.
        FLOE_TRY(keeper.keep());
        auto res = FLOE_TRY_CTX(app->commit({{key, seg.next_offset()}}), "committing segment {} of {}", seg.id(), key);
        FLOE_TRY_CTX(keeper.fenced(p.set_offloaded_up_to(seg.next_offset, keeper.fence())),
                     "marking segment {} of {} offloaded", seg.id(), key);
        committed = seg.next_offset();
        covered(committed);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m.segments.with({topic.name}).inc();
        m.records.with({topic.name}).inc(static_cast<uint64_t>(res.added_rows));
        m.files.with({topic.name}).inc(res.data_files.size());
        m.bytes.with({topic.name}).inc(res.added_bytes);
        m.commits.with({"append"}).inc();
        if (res.attempts > 1) m.conflicts.with({}).inc(static_cast<uint64_t>(res.attempts - 1));
        m.commit_seconds.with({}).observe(secs);
        const double rows_secs = std::chrono::duration<double>(rows_done - t0).count();
        spdlog::info("offloaded segment {} of {}: offsets {}..{}, {} rows in {} file(s), snapshot {} ({:.0f} ms: "
                     "{:.0f} ms reading and adding the rows, {:.0f} ms finishing the file(s) and committing)",
                     seg.id(), key, seg.base_offset(), seg.next_offset() - 1, res.added_rows, res.data_files.size(),
                     res.snapshot_id, secs * 1000, rows_secs * 1000, (secs - rows_secs) * 1000);
        ++out.segments;
        out.rows += res.added_rows;
    }
    return out;
}

} // namespace floe::tiering
