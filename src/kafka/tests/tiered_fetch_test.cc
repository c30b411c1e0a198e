// Fetch of a tiered topic while the storage worker trims the local log (issue 27, the chaos
// run's first finding): the real Fetch handler over the real embedded log, the real storage
// worker offloading into a real Iceberg table (SQLite catalog, file:// warehouse) and the real
// remote reader serving it. The only test device is `trim_on_read_tier`, a forwarding local
// tier whose partition runs the storage worker's tick (offload and local retention, as the
// worker thread would) right before the Fetch's local read of that partition: the moment the
// chaos run hit by chance, after the handler has decided from the local start which tier to
// read. A client must then get the records from the remote tier, never OFFSET_OUT_OF_RANGE
// (kafkajs resets to offset 0 on it and reads the whole partition again).
#include "kafka/handlers.h"
#include "kafka/messages.h"
#include "kafka/protocol.h"
#include "lake/iceberg_lake.h"
#include "log/log_manager.h"
#include "log/testing/batch_builder.h"
#include "log/testing/forwarding_tier.h"
#include "log/txn_state.h"
#include "tiering/batch_records.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

namespace floe::kafka {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A partition of the embedded log whose next read() first runs `before_read` (once).
class trim_on_read_partition final : public log::testing::forwarding_partition {
public:
    trim_on_read_partition(std::shared_ptr<log::local_partition> inner,
                           std::function<void()>& before_read)
        : forwarding_partition(std::move(inner)), _before_read(before_read) {}

    result<log::read_result> read(kafka_offset offset,
                                  const log::read_options& opts) const override {
        if (_before_read) std::exchange(_before_read, {})();
        return _in->read(offset, opts);
    }

private:
    std::function<void()>& _before_read; ///< the tier's hook, shared by its partitions
};

/// The embedded log as the Fetch handler sees it, with a hook run before the next partition
/// read. Everything else is forwarded.
class trim_on_read_tier final : public log::testing::forwarding_tier {
public:
    using forwarding_tier::forwarding_tier;
    mutable std::function<void()>
        before_read; ///< run (and cleared) by the next read() of any partition

protected:
    std::shared_ptr<log::local_partition>
    wrap(std::shared_ptr<log::local_partition> p) const override {
        return std::make_shared<trim_on_read_partition>(std::move(p), before_read);
    }
};

/// One partition of a decoded Fetch v11 answer, with the records it carries.
struct fetched {
    int16_t error = -1;
    int64_t high_watermark = -1, log_start = -1;
    std::vector<std::pair<int64_t, std::string>>
        records; ///< (offset, value), control batches skipped
};

/// A tiered topic "t" of one partition on the embedded log, its storage worker and remote
/// reader on one lake, and a request handler reading through trim_on_read_tier. Time is a
/// manual clock shared by the log and the worker: local retention (60 s) falls due when the
/// test moves it.
class TieredFetchTest : public ::testing::Test {
protected:
    static constexpr int64_t t0 = 1'700'000'000'000;

    void SetUp() override {
        _dir = fs::temp_directory_path()
               / fmt::format("floe-tiered-fetch-{}-{}", ::getpid(),
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(_dir);
        fs::create_directories(_dir);
        log::log_manager_options lo;
        lo.data_dir = _dir;
        lo.background_threads = false;
        lo.clock = &_clock;
        auto logs = log::log_manager::open(lo);
        ASSERT_TRUE(logs) << logs.error();
        _logs = std::move(*logs);
        ASSERT_TRUE(_logs->create_topic(
            "t", 1, {{"remote.storage.enable", "true"}, {"local.retention.ms", "60000"}}));
        _p = _logs->partition("t", 0);
        ASSERT_TRUE(_p);

        auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
        ASSERT_TRUE(cat) << cat.error();
        lake::lake_options o;
        o.warehouse = "file://" + (_dir / "warehouse").string();
        _lake =
            std::make_unique<lake::iceberg_lake>(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                                                 std::make_shared<iceberg::local_file_io>(), o);
        tiering::worker_options wo;
        wo.clock = &_clock;
        wo.max_backoff = 1ms;
        _worker = std::make_unique<tiering::storage_worker>(
            *_logs, *_lake,
            std::make_unique<tiering::file_lease>(_dir / "lease", "test", std::chrono::minutes(1),
                                                  system_clock_source::instance()),
            wo);
        _remote = std::make_unique<tiering::remote_reader>(*_lake);

        auto offsets = offset_store::open(_dir / "kafka");
        ASSERT_TRUE(offsets) << offsets.error();
        _offsets = std::move(*offsets);
        _groups = std::make_unique<group_coordinator>(*_offsets, group_coordinator::options{});
        auto pids = producer_id_allocator::open(_dir / "kafka");
        ASSERT_TRUE(pids) << pids.error();
        _pids = std::move(*pids);
        _opts.data_dir = _dir;
        _opts.remote = _remote.get();
        _tier = std::make_unique<trim_on_read_tier>(*_logs);
        _handler =
            std::make_unique<request_handler>(_opts, "127.0.0.1", 9092, *_tier, *_groups, *_pids);
    }
    void TearDown() override {
        _handler.reset();
        _worker.reset();
        if (_logs) (void)_logs->close();
        fs::remove_all(_dir);
    }

    /// Appends `n` plain records from the log end, value "v<offset>", timestamp now.
    void put(int n) {
        auto base = _p->log_end_offset()();
        std::vector<log::testing::test_record> rs(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            rs[size_t(i)].key = "k";
            rs[size_t(i)].value = fmt::format("v{}", base + i);
            rs[size_t(i)].timestamp_ms = _clock.now_ms();
        }
        byte_buffer b;
        log::testing::append_batch(b, rs);
        auto r = _p->append(b);
        ASSERT_TRUE(r) << r.error();
        ASSERT_EQ(r->status, log::append_status::ok) << r->message;
        ASSERT_EQ(r->base_offset(), base);
    }
    /// Appends `n` records of one transaction of producer 7 and its ABORT marker.
    void put_aborted(int n) {
        std::vector<log::testing::test_record> rs(static_cast<size_t>(n));
        for (auto& r : rs) {
            r.value = "aborted";
            r.timestamp_ms = _clock.now_ms();
        }
        byte_buffer b;
        log::testing::append_batch(b, rs,
                                   {.producer_id = 7, .producer_epoch = 0, .base_sequence = 0});
        b[log::batch_layout::attributes + 1] |= uint8_t(log::batch_attr::transactional);
        uint32_t crc = log::compute_batch_crc(b);
        for (int i = 0; i < 4; ++i)
            b[log::batch_layout::crc + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
        auto r = _p->append(b);
        ASSERT_TRUE(r) << r.error();
        ASSERT_EQ(r->status, log::append_status::ok) << r->message;
        auto m = _p->append_txn_marker(7, 0, log::txn_marker::abort, 0);
        ASSERT_TRUE(m) << m.error();
        ASSERT_EQ(m->status, log::append_status::ok) << m->message;
    }
    /// Ticks the storage worker until everything sealed is offloaded (bounded).
    void offload_sealed() {
        auto sealed = _p->sealed_segments();
        ASSERT_FALSE(sealed.empty());
        int64_t want = sealed.back().next_offset();
        for (int i = 0; i < 50 && _p->offloaded_up_to()() < want; ++i)
            (void)_worker->tick();
        ASSERT_EQ(_p->offloaded_up_to()(), want);
    }
    /// The trim as the storage worker does it: local retention falls due (the clock moves past
    /// local.retention.ms) and a worker tick deletes the offloaded segments.
    void trim_now() {
        _clock.advance(10min);
        int64_t before = _p->offsets().log_start();
        auto rep = _worker->tick();
        _trimmed_to = _p->offsets().log_start();
        EXPECT_GT(rep.local_segments_deleted, 0u);
        EXPECT_GT(_trimmed_to, before);
    }

    /// One Fetch v11 of partition t-0 at `offset`, decoded.
    fetched fetch(int64_t offset, int8_t isolation = 0) {
        byte_buffer body;
        kwriter w(body, false);
        w.i32(-1);      // replica id
        w.i32(0);       // max wait: answer at once
        w.i32(0);       // min bytes
        w.i32(1 << 20); // max bytes
        w.i8(isolation);
        w.i32(0);  // session id
        w.i32(-1); // session epoch: no session
        w.array_len(1);
        w.str("t");
        w.array_len(1);
        w.i32(0);      // partition
        w.i32(-1);     // current leader epoch
        w.i64(offset); // fetch offset
        w.i64(-1);     // log start offset
        w.i32(1 << 20);
        w.array_len(0); // forgotten topics
        w.str("");      // rack id
        request_header h;
        h.api_key = int16_t(api_key::fetch);
        h.api_version = 11;
        h.correlation_id = 1;
        h.supported = true;
        byte_buffer out;
        asio::io_context io;
        bool ok = false;
        asio::co_spawn(io,
                       _handler->handle(connection_info{}, h,
                                        std::span<uint8_t>(body.data(), body.size()), out),
                       [&](std::exception_ptr e, bool r) {
                           EXPECT_FALSE(e);
                           ok = r;
                       });
        io.run();
        EXPECT_TRUE(ok);

        fetched f;
        kreader r(bytes_view(out.data(), out.size()), false);
        auto must = [](auto v) {
            EXPECT_TRUE(v);
            return v ? *v : std::remove_cvref_t<decltype(*v)>{};
        };
        must(r.i32()); // size
        EXPECT_EQ(must(r.i32()), 1);
        must(r.i32()); // throttle
        EXPECT_EQ(must(r.i16()), 0);
        must(r.i32()); // session id
        EXPECT_EQ(must(r.array_len(4)), 1);
        EXPECT_EQ(must(r.str()), "t");
        EXPECT_EQ(must(r.array_len(4)), 1);
        EXPECT_EQ(must(r.i32()), 0);
        f.error = must(r.i16());
        f.high_watermark = must(r.i64());
        must(r.i64()); // last stable offset
        f.log_start = must(r.i64());
        int32_t aborted = must(r.array_len(16));
        for (int32_t i = 0; i < aborted; ++i) {
            must(r.i64());
            must(r.i64());
        }
        must(r.i32()); // preferred read replica
        int32_t n = must(r.i32());
        EXPECT_GE(n, 0);
        EXPECT_LE(size_t(std::max(n, 0)), r.remaining());
        bytes_view recs(out.data() + (out.size() - r.remaining()), size_t(std::max(n, 0)));
        byte_buffer scratch;
        auto walked = tiering::for_each_record_in(
            recs, true, scratch, 64 << 20, [&](const log::record_view& v) -> result<bool> {
                f.records.emplace_back(v.offset, v.value ? std::string(*v.value) : std::string());
                return true;
            });
        EXPECT_TRUE(walked) << walked.error();
        return f;
    }

    manual_clock _clock{t0};
    fs::path _dir;
    std::unique_ptr<log::log_manager> _logs;
    std::shared_ptr<log::local_partition> _p;
    std::unique_ptr<lake::iceberg_lake> _lake;
    std::unique_ptr<tiering::storage_worker> _worker;
    std::unique_ptr<tiering::remote_reader> _remote;
    std::unique_ptr<offset_store> _offsets;
    std::unique_ptr<group_coordinator> _groups;
    std::unique_ptr<producer_id_allocator> _pids;
    broker_options _opts;
    std::unique_ptr<trim_on_read_tier> _tier;
    std::unique_ptr<request_handler> _handler;
    int64_t _trimmed_to = -1;
};

/// The records of `f` from `from` on must be `from`, `from + 1`, ... with their values.
void expect_records_from(const fetched& f, int64_t from, size_t at_least) {
    std::vector<std::pair<int64_t, std::string>> got;
    for (auto& r : f.records)
        if (r.first >= from) got.push_back(r);
    ASSERT_GE(got.size(), at_least);
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].first, from + int64_t(i));
        EXPECT_EQ(got[i].second, fmt::format("v{}", from + int64_t(i)));
    }
}

// The chaos run's finding: the Fetch read the local start (0), decided the offset (150) was
// local, and the trim moved the start to 300 before the local read. The records 150..299 are in
// the table: the same Fetch serves them from there.
TEST_F(TieredFetchTest, KafkaTrimBetweenTierDecisionAndLocalReadServesTheRemoteTier) {
    for (int seg = 0; seg < 3; ++seg) {
        ASSERT_NO_FATAL_FAILURE(put(100));
        ASSERT_TRUE(_p->roll());
    }
    ASSERT_NO_FATAL_FAILURE(put(50)); // the active segment: 300..349
    ASSERT_NO_FATAL_FAILURE(offload_sealed());
    ASSERT_EQ(_p->offsets().log_start(), 0); // 0..299 are in both tiers

    _tier->before_read = [this] { trim_now(); };
    auto f = fetch(150);
    EXPECT_FALSE(_tier->before_read) << "the Fetch never read the local log";
    EXPECT_EQ(_trimmed_to, 300);
    EXPECT_EQ(f.error, 0) << "a trimmed offset the table holds was answered with error " << f.error;
    EXPECT_EQ(f.high_watermark, 350);
    EXPECT_EQ(f.log_start, 0);
    ASSERT_NO_FATAL_FAILURE(expect_records_from(f, 150, 1));
    EXPECT_LT(f.records.back().first, 300) << "one Fetch serves one tier";

    // And a consumer carries on from there through both tiers: every offset once, in order.
    std::vector<int64_t> seen;
    for (int64_t at = 150, i = 0; at < 350 && i < 100; ++i) {
        auto g = fetch(at);
        ASSERT_EQ(g.error, 0);
        ASSERT_FALSE(g.records.empty()) << at;
        for (auto& [o, v] : g.records)
            if (o >= at) {
                EXPECT_EQ(o, at);
                EXPECT_EQ(v, fmt::format("v{}", o));
                seen.push_back(o);
                at = o + 1;
            }
    }
    EXPECT_EQ(seen.size(), 200u);
}

// The gap path: 100..150 (an aborted transaction and its marker) never became rows, so a
// Fetch at 100 finds nothing in the table below the local start (151) and reads the local log
// from its start; the trim moves the start to 251 before that read. Records 151..250 are in the
// table: the same Fetch serves them from there.
TEST_F(TieredFetchTest, KafkaTrimBeforeTheLocalReadOfAGapServesTheRemoteTier) {
    ASSERT_NO_FATAL_FAILURE(put(100)); // 0..99
    ASSERT_TRUE(_p->roll());
    ASSERT_NO_FATAL_FAILURE(put_aborted(50)); // 100..149, ABORT marker at 150
    ASSERT_TRUE(_p->roll());
    _clock.advance(2min);              // 0..150 are past local retention, what follows is not
    ASSERT_NO_FATAL_FAILURE(put(100)); // 151..250
    ASSERT_TRUE(_p->roll());
    ASSERT_NO_FATAL_FAILURE(put(10)); // the active segment: 251..260
    ASSERT_NO_FATAL_FAILURE(offload_sealed());
    ASSERT_EQ(_p->offsets().log_start(), 151); // 0..150 trimmed by the offloading ticks

    _tier->before_read = [this] { trim_now(); };
    auto f = fetch(100);
    EXPECT_FALSE(_tier->before_read) << "the Fetch never read the local log";
    EXPECT_EQ(_trimmed_to, 251);
    EXPECT_EQ(f.error, 0) << "offsets the table holds were answered with error " << f.error;
    EXPECT_EQ(f.high_watermark, 261);
    EXPECT_EQ(f.log_start, 0);
    ASSERT_NO_FATAL_FAILURE(expect_records_from(f, 151, 1));
    EXPECT_GE(f.records.front().first, 151) << "aborted records are never served from the table";
}

// Without a trim the same reads are plain (the hook is what makes the two tests above differ):
// the local log serves an offset at or above its start, the table one below it.
TEST_F(TieredFetchTest, KafkaWithoutATrimEachTierServesItsOwnOffsets) {
    for (int seg = 0; seg < 2; ++seg) {
        ASSERT_NO_FATAL_FAILURE(put(100));
        ASSERT_TRUE(_p->roll());
    }
    ASSERT_NO_FATAL_FAILURE(put(50));
    ASSERT_NO_FATAL_FAILURE(offload_sealed());
    ASSERT_NO_FATAL_FAILURE(expect_records_from(fetch(120), 120, 1));
    ASSERT_NO_FATAL_FAILURE(trim_now());
    EXPECT_EQ(_trimmed_to, 200);
    auto f = fetch(120);
    EXPECT_EQ(f.error, 0);
    ASSERT_NO_FATAL_FAILURE(expect_records_from(f, 120, 80));
    EXPECT_EQ(fetch(400).error, int16_t(kerr::offset_out_of_range)); // past the log end
}

} // namespace
} // namespace floe::kafka
