// The storage worker against a real local log and a real Iceberg table whose FileIO and
// catalog fail a share of calls: offload still completes, every record lands exactly once,
// and the local marker never runs ahead of the table.
#include "crypto/keyring.h"
#include "lake/iceberg_lake.h"
#include "lake/table_reader.h"
#include "log/batch_builder.h"
#include "log/log_manager.h"
#include "tiering/storage_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <random>
#include <thread>

namespace floe::tiering {
namespace {

namespace fs = std::filesystem;

/// Fails every call with probability `p` (deterministic seed).
class flaky {
public:
    explicit flaky(double p, uint64_t seed) : _p(p), _rng(seed) {}
    bool trip() {
        std::lock_guard g(_mu);
        bool t = std::uniform_real_distribution<double>(0, 1)(_rng) < _p;
        _trips += t;
        return t;
    }
    size_t trips() const { return _trips; }

private:
    double _p;
    std::mutex _mu;
    std::mt19937_64 _rng;
    size_t _trips = 0;
};

class flaky_io final : public iceberg::file_io {
public:
    flaky_io(std::shared_ptr<iceberg::file_io> inner, flaky& f) : _in(std::move(inner)), _f(f) {}
    result<byte_buffer> read(std::string_view u) override {
        if (_f.trip()) return fail(errc::io_error, "injected read failure of {}", u);
        return _in->read(u);
    }
    result<void> write(std::string_view u, bytes_view d) override {
        if (_f.trip()) return fail(errc::io_error, "injected write failure of {}", u);
        return _in->write(u, d);
    }
    result<void> create_new(std::string_view u, bytes_view d) override {
        if (_f.trip()) return fail(errc::io_error, "injected create failure of {}", u);
        return _in->create_new(u, d);
    }
    result<bool> exists(std::string_view u) override { return _in->exists(u); }
    result<void> remove(std::string_view u) override { return _in->remove(u); }
    result<std::vector<std::string>> list(std::string_view p) override { return _in->list(p); }

private:
    std::shared_ptr<iceberg::file_io> _in;
    flaky& _f;
};

class flaky_catalog final : public iceberg::catalog {
public:
    flaky_catalog(std::unique_ptr<iceberg::catalog> inner, flaky& f)
        : _in(std::move(inner)), _f(f) {}
    result<void> create_namespace_if_missing(const std::string& ns) override {
        return _in->create_namespace_if_missing(ns);
    }
    result<bool> namespace_exists(const std::string& ns) override {
        return _in->namespace_exists(ns);
    }
    result<std::optional<std::string>> metadata_location(const iceberg::table_ident& t) override {
        if (_f.trip()) return fail(errc::unavailable, "injected catalog outage");
        return _in->metadata_location(t);
    }
    result<void> create_table(const iceberg::table_ident& t, const std::string& l) override {
        return _in->create_table(t, l);
    }
    result<void> swap(const iceberg::table_ident& t, const std::string& e,
                      const std::string& n) override {
        if (_f.trip()) return fail(errc::unavailable, "injected catalog outage during swap");
        return _in->swap(t, e, n);
    }
    result<std::vector<std::string>> list_tables(const std::string& ns) override {
        return _in->list_tables(ns);
    }

private:
    std::unique_ptr<iceberg::catalog> _in;
    flaky& _f;
};

/// Appends `segments` sealed segments of `batches` batches of 100 records each to `p`: key "k",
/// value "value-<offset>", timestamp ts(offset); `next` ends at the log end.
template<class Partition>
void fill_sealed(Partition& p, int segments, int batches, const std::function<int64_t(int64_t)>& ts,
                 int64_t& next) {
    log::batch_builder b;
    for (int seg = 0; seg < segments; ++seg) {
        for (int batch = 0; batch < batches; ++batch) {
            byte_buffer buf;
            b.begin(0);
            for (int i = 0; i < 100; ++i, ++next) {
                auto v = fmt::format("value-{}", next);
                b.add(i, ts(next), std::string_view("k"), std::string_view(v));
            }
            ASSERT_TRUE(b.finish(buf));
            auto r = p.append(buf);
            ASSERT_TRUE(r && r->status == log::append_status::ok);
        }
        ASSERT_TRUE(p.roll());
    }
}

/// A local log in `dir` with no background threads: the test drives every step.
auto open_test_log(const fs::path& dir) {
    log::log_manager_options lo;
    lo.data_dir = dir;
    lo.background_threads = false;
    return log::log_manager::open(lo);
}

/// The table holds offsets 0..next-1 of `stream_key` exactly once, each with value
/// "value-<offset>".
void expect_each_offset_once(lake::table_reader& tr, const std::string& stream_key, int64_t next) {
    auto files = tr.files_for_offsets(stream_key, 0, INT64_MAX);
    ASSERT_TRUE(files) << files.error();
    std::vector<int64_t> offsets;
    for (auto& f : *files) {
        auto rows = tr.read_file(f);
        ASSERT_TRUE(rows) << rows.error();
        for (auto& r : *rows) {
            EXPECT_EQ(*r.value, fmt::format("value-{}", r.offset));
            offsets.push_back(r.offset);
        }
    }
    std::sort(offsets.begin(), offsets.end());
    ASSERT_EQ(offsets.size(), size_t(next));
    for (int64_t i = 0; i < next; ++i)
        ASSERT_EQ(offsets[size_t(i)], i);
}

TEST(WorkerFaults, OffloadCompletesExactlyOnceDespiteFailures) {
    auto dir = fs::temp_directory_path() / fmt::format("floe-worker-faults-{}", ::getpid());
    fs::remove_all(dir);
    auto logs = open_test_log(dir);
    ASSERT_TRUE(logs) << logs.error();
    ASSERT_TRUE((*logs)->create_topic("f", 1, {{"remote.storage.enable", "true"}}));
    auto p = (*logs)->partition("f", 0);
    // 20 segments of 500 records.
    int64_t next = 0;
    ASSERT_NO_FATAL_FAILURE(fill_sealed(
        *p, 20, 5, [](int64_t offset) { return 1000 + offset; }, next));

    flaky faults(0.15, 7);
    auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    ASSERT_TRUE(cat);
    auto io = std::make_shared<flaky_io>(std::make_shared<iceberg::local_file_io>(), faults);
    lake::lake_options opts;
    opts.warehouse = "file://" + (dir / "warehouse").string();
    lake::iceberg_lake lake(std::make_shared<flaky_catalog>(std::move(*cat), faults), io, opts);
    worker_options wo;
    wo.max_backoff = std::chrono::milliseconds(1);
    auto lease = std::make_unique<file_lease>(dir / "lease", "test", std::chrono::minutes(1),
                                              system_clock_source::instance());
    storage_worker w(**logs, lake, std::move(lease), wo);

    size_t failures = 0;
    for (int tick = 0; tick < 2000 && p->offloaded_up_to()() < next; ++tick) {
        auto rep = w.tick();
        failures += rep.failures;
        // The marker never runs ahead of what the table holds.
        auto t = lake.table_for_topic("f");
        if (t) {
            auto pos = (*t)->committed_positions();
            if (pos) {
                EXPECT_LE(p->offloaded_up_to()(), (*pos)["f-0"]);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(p->offloaded_up_to()(), next);
    EXPECT_GT(faults.trips(), 0u);
    EXPECT_GT(failures, 0u);

    // Read the table without fault injection: every offset exactly once.
    lake::lake_options clean = opts;
    auto cat2 = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    lake::iceberg_lake reader_lake(std::shared_ptr<iceberg::catalog>(std::move(*cat2)),
                                   std::make_shared<iceberg::local_file_io>(), clean);
    lake::table_reader tr(reader_lake, "f");
    expect_each_offset_once(tr, "f-0", next);
    (void)(*logs)->close();
    fs::remove_all(dir);
}

/// A real keyring whose new-file keys can be cut off, as a KMS outage would
/// (errc::unavailable): reads of existing files keep working.
class outage_provider final : public crypto::key_provider {
public:
    explicit outage_provider(std::shared_ptr<crypto::key_provider> in) : _in(std::move(in)) {}
    result<crypto::data_key> data_key_for_new_file(std::string_view table) override {
        if (down)
            return fail(errc::unavailable, "KMS GenerateDataKey for {}: injected outage", table);
        return _in->data_key_for_new_file(table);
    }
    result<crypto::data_key> data_key_under(std::string_view table, std::string_view id) override {
        if (down)
            return fail(errc::unavailable, "KMS GenerateDataKey of {} for {}: injected outage", id, table);
        return _in->data_key_under(table, id);
    }
    result<crypto::secret_key> key_for(bytes_view m) override { return _in->key_for(m); }
    std::string_view kind() const noexcept override { return _in->kind(); }
    std::string describe() const override { return _in->describe(); }
    result<void> check() override {
        if (down) return fail(errc::unavailable, "injected outage");
        return {};
    }
    result<void> check_key(std::string_view id) override { return _in->check_key(id); }
    std::atomic<bool> down{false};

private:
    std::shared_ptr<crypto::key_provider> _in;
};

// An encrypted topic while its key provider is down: the offload fails before writing any
// file, retries, shows it in health(); once keys come back every record lands, encrypted,
// exactly once.
TEST(WorkerFaults, EncryptedOffloadWaitsOutAKeyProviderOutage) {
    auto dir = fs::temp_directory_path() / fmt::format("floe-worker-keys-{}", ::getpid());
    fs::remove_all(dir);
    log::log_manager_options lo;
    lo.data_dir = dir;
    lo.background_threads = false;
    lo.capabilities.key_provider = true;
    lo.capabilities.lake_encrypts = true;
    auto logs = log::log_manager::open(lo);
    ASSERT_TRUE(logs) << logs.error();
    ASSERT_TRUE((*logs)->create_topic(
        "e", 1, {{"remote.storage.enable", "true"}, {"floe.iceberg.encryption", "uniform"}}));
    auto p = (*logs)->partition("e", 0);
    int64_t next = 0;
    ASSERT_NO_FATAL_FAILURE(fill_sealed(
        *p, 3, 2, [](int64_t offset) { return 1000 + offset; }, next));

    crypto::keyring ring;
    ring.current = "k1";
    ring.keys.emplace("k1", crypto::secret_key(std::vector<uint8_t>(32, 5)));
    auto keys = std::make_shared<outage_provider>(
        std::make_shared<crypto::keyring_provider>(std::move(ring)));
    keys->down = true;
    auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    ASSERT_TRUE(cat);
    lake::lake_options opts;
    opts.warehouse = "file://" + (dir / "warehouse").string();
    lake::iceberg_lake lake(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                            std::make_shared<iceberg::local_file_io>(), opts);
    lake.set_key_provider(keys);
    worker_options wo;
    wo.max_backoff = std::chrono::milliseconds(1);
    storage_worker w(**logs, lake,
                     std::make_unique<file_lease>(dir / "lease", "test", std::chrono::minutes(1),
                                                  system_clock_source::instance()),
                     wo);
    size_t failures = 0;
    for (int tick = 0; tick < 5; ++tick) {
        failures += w.tick().failures;
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    EXPECT_GT(failures, 0u);
    EXPECT_EQ(p->offloaded_up_to()(), 0);
    auto h = w.health();
    EXPECT_FALSE(h.ok);
    EXPECT_NE(h.message.find("injected outage"), std::string::npos) << h.message;
    // Nothing written while down: no data file, not even an empty one.
    size_t parquet_files = 0;
    if (fs::exists(dir / "warehouse"))
        for (auto& e : fs::recursive_directory_iterator(dir / "warehouse"))
            parquet_files += e.path().extension() == ".parquet";
    EXPECT_EQ(parquet_files, 0u);

    keys->down = false;
    for (int tick = 0; tick < 200 && p->offloaded_up_to()() < next; ++tick) {
        w.tick();
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    ASSERT_EQ(p->offloaded_up_to()(), next);
    EXPECT_TRUE(w.health().ok) << w.health().message;
    auto files = lake::current_data_files(lake.catalog(), lake.io(), {"floe", "e"});
    ASSERT_TRUE(files) << files.error();
    ASSERT_FALSE(files->files.empty());
    for (auto& f : files->files)
        EXPECT_TRUE(f.key_metadata.has_value()) << f.file_path;
    lake::table_reader tr(lake, "e");
    expect_each_offset_once(tr, "e-0", next);
    (void)(*logs)->close();
    fs::remove_all(dir);
}

// Lease split brain: two workers (two lakes on one catalog, as two brokers would have) both
// believe they may offload the same partition and run at the same time. The table's committed
// positions, re-checked against the catalog's current snapshot on every compare-and-swap
// attempt, refuse the loser's overlapping rows; its next attempt re-reads the positions and
// starts above them. Every offset lands exactly once.
TEST(WorkerFaults, TwoWorkersOnOnePartitionNeverAddARowTwice) {
    auto dir = fs::temp_directory_path() / fmt::format("floe-worker-split-{}", ::getpid());
    fs::remove_all(dir);
    auto logs = open_test_log(dir);
    ASSERT_TRUE(logs) << logs.error();
    ASSERT_TRUE((*logs)->create_topic("s", 1, {{"remote.storage.enable", "true"}}));
    auto p = (*logs)->partition("s", 0);
    // Current timestamps: remote retention (retention.ms, 7 days) must not take rows.
    int64_t next = 0;
    ASSERT_NO_FATAL_FAILURE(fill_sealed(
        *p, 12, 3, [](int64_t) { return system_clock_source::instance().now_ms(); }, next));
    lake::lake_options opts;
    opts.warehouse = "file://" + (dir / "warehouse").string();
    auto open_lake = [&] {
        auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
        EXPECT_TRUE(cat);
        return std::make_unique<lake::iceberg_lake>(
            std::shared_ptr<iceberg::catalog>(std::move(*cat)),
            std::make_shared<iceberg::local_file_io>(), opts);
    };
    auto lake1 = open_lake(), lake2 = open_lake();
    worker_options wo;
    wo.max_backoff = std::chrono::milliseconds(1);
    wo.parallelism = 1;
    // Two lease files: each worker holds "its" lease, as after a split brain.
    storage_worker w1(**logs, *lake1,
                      std::make_unique<file_lease>(dir / "lease1", "one", std::chrono::minutes(1),
                                                   system_clock_source::instance()),
                      wo);
    storage_worker w2(**logs, *lake2,
                      std::make_unique<file_lease>(dir / "lease2", "two", std::chrono::minutes(1),
                                                   system_clock_source::instance()),
                      wo);
    std::atomic<int64_t> segs1{0}, segs2{0};
    auto drive = [&](storage_worker& w, std::atomic<int64_t>& segs) {
        for (int tick = 0; tick < 400 && p->offloaded_up_to()() < next; ++tick) {
            segs += int64_t(w.tick().segments_offloaded);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    };
    std::thread t1([&] { drive(w1, segs1); });
    std::thread t2([&] { drive(w2, segs2); });
    t1.join();
    t2.join();
    EXPECT_EQ(p->offloaded_up_to()(), next);
    EXPECT_GT(segs1 + segs2, 0);
    auto fresh = open_lake(); // a reader that cached nothing
    lake::table_reader tr(*fresh, "s");
    auto files = tr.files_for_offsets("s-0", 0, INT64_MAX);
    ASSERT_TRUE(files) << files.error();
    std::vector<int64_t> offsets;
    for (auto& f : *files) {
        auto rows = tr.read_file(f);
        ASSERT_TRUE(rows) << rows.error();
        for (auto& r : *rows)
            offsets.push_back(r.offset);
    }
    std::sort(offsets.begin(), offsets.end());
    ASSERT_EQ(offsets.size(), size_t(next)) << "segments committed: " << segs1 << " + " << segs2;
    for (int64_t i = 0; i < next; ++i)
        ASSERT_EQ(offsets[size_t(i)], i);
    (void)(*logs)->close();
    fs::remove_all(dir);
}

/// Partition leases held in memory, always granted, whose renewal can be made to fail as when
/// another broker took the lease over (errc::conflict).
class switchable_leases final : public partition_leases {
public:
    bool owns(std::string_view, int32_t) override { return true; }
    result<bool> is_free(std::string_view, int32_t) override { return true; }
    /// Granted even when taken over: the takeover happens between the grant and the next renewal.
    result<std::optional<partition_lease>> acquire(std::string_view topic, int32_t partition) override {
        return std::optional<partition_lease>(partition_lease{std::string(topic), partition, 1, valid()});
    }
    result<partition_lease> renew(const partition_lease& l) override {
        ++renewals;
        if (taken_over) return fail(errc::conflict, "the lease of {}-{} is held by another broker", l.topic, l.partition);
        auto n = l;
        n.valid_until = valid();
        return n;
    }
    void release(const partition_lease&) override {}
    std::chrono::milliseconds duration() const override { return std::chrono::minutes(1); }
    std::atomic<bool> taken_over{false};
    std::atomic<int> renewals{0};

private:
    static std::chrono::steady_clock::time_point valid() { return std::chrono::steady_clock::now() + std::chrono::minutes(1); }
};

TEST(WorkerFaults, AMarkerAheadOfTheTableIsActedOnOnlyUnderAConfirmedLease) {
    // The shared marker ahead of the table this worker reads: after a takeover, the new holder
    // moved it while this worker was reading an older table. A worker whose lease is gone must
    // neither rewind the marker nor report offsets "in neither tier"; one that still holds its
    // lease finds a real mismatch and offloads the missing offsets again.
    auto dir = fs::temp_directory_path() / fmt::format("floe-worker-confirm-{}", ::getpid());
    fs::remove_all(dir);
    auto logs = open_test_log(dir);
    ASSERT_TRUE(logs) << logs.error();
    ASSERT_TRUE((*logs)->create_topic("m", 1, {{"remote.storage.enable", "true"}}));
    auto p = (*logs)->partition("m", 0);
    const int64_t now = system_clock_source::instance().now_ms(); // within retention.ms
    int64_t next = 0;
    ASSERT_NO_FATAL_FAILURE(fill_sealed(*p, 2, 2, [now](int64_t offset) { return now + offset; }, next));
    auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    ASSERT_TRUE(cat);
    lake::lake_options opts;
    opts.warehouse = "file://" + (dir / "warehouse").string();
    lake::iceberg_lake lake(std::shared_ptr<iceberg::catalog>(std::move(*cat)), std::make_shared<iceberg::local_file_io>(), opts);
    worker_options wo;
    wo.max_backoff = std::chrono::milliseconds(1);
    auto leases_owned = std::make_unique<switchable_leases>();
    auto* leases = leases_owned.get();
    storage_worker w(**logs, lake, std::move(leases_owned), wo);
    for (int tick = 0; tick < 50 && p->offloaded_up_to()() < next; ++tick) w.tick();
    ASSERT_EQ(p->offloaded_up_to()(), next);
    const int64_t in_table = next;

    // More segments; the marker says they are offloaded, the table (as this worker reads it)
    // does not hold them.
    ASSERT_NO_FATAL_FAILURE(fill_sealed(*p, 2, 2, [now](int64_t offset) { return now + offset; }, next));
    ASSERT_TRUE(p->set_offloaded_up_to(kafka_offset(next)));

    // The lease was taken over: the worker's pass stops, the marker stays where the new holder
    // put it.
    leases->taken_over = true;
    const int renewals_before = leases->renewals;
    w.tick();
    EXPECT_EQ(p->offloaded_up_to()(), next) << "a worker without its lease rewound the shared marker";
    EXPECT_GT(leases->renewals, renewals_before) << "the lease was not confirmed before acting on the mismatch";

    // Still the holder: the mismatch is real; the marker goes back to the table's position and
    // the missing offsets are offloaded again, each once.
    leases->taken_over = false;
    for (int tick = 0; tick < 50; ++tick) {
        w.tick();
        auto t = lake.table_for_topic("m");
        auto pos = t ? (*t)->committed_positions() : result<std::map<std::string, int64_t>>(std::map<std::string, int64_t>{});
        if (pos && (*pos)["m-0"] == next) break;
    }
    lake::table_reader tr(lake, "m");
    expect_each_offset_once(tr, "m-0", next);
    EXPECT_GT(next, in_table);
    EXPECT_EQ(p->offloaded_up_to()(), next);
    (void)(*logs)->close();
    fs::remove_all(dir);
}

} // namespace
} // namespace floe::tiering
