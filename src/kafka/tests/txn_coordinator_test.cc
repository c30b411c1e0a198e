// The transaction coordinator against a real log and offset store: markers in every partition
// of a transaction, staged TxnOffsetCommit offsets applied on commit only, fencing by epoch,
// and the state durable across a reopen (an open transaction aborted by tick after its timeout).
// EndTxn is answered once the prepare state is durable, before the markers are (they ride the
// partitions' group commit); a restart appends again the markers a crash lost, and only those.
#include "kafka/handlers.h"
#include "kafka/txn_coordinator.h"
#include "log/log_manager.h"
#include "log/record_batch_header.h"
#include "log/testing/batch_builder.h"
#include "log/testing/forwarding_tier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>

using namespace floe;
using namespace floe::kafka;

namespace {

namespace fs = std::filesystem;

/// What the test does to the partitions of `durability_tier`.
struct durability_hooks {
    bool hold_durable = false; ///< when_durable callbacks are kept in `held`, not forwarded
    bool lose_markers = false; ///< append_txn_marker answers an offset but appends nothing
    std::vector<std::function<void(result<void>)>> held;
    int flushes = 0;
    int durable_asks = 0;
};

/// A partition of the embedded log whose fsync reports and marker appends the test controls.
class durability_partition final : public log::testing::forwarding_partition {
public:
    durability_partition(std::shared_ptr<log::local_partition> inner, durability_hooks& d)
        : forwarding_partition(std::move(inner)), _d(d) {}
    result<void> flush() override {
        ++_d.flushes;
        return _in->flush();
    }
    void when_durable(kafka_offset last_offset, std::function<void(result<void>)> done) override {
        ++_d.durable_asks;
        if (_d.hold_durable)
            _d.held.push_back(std::move(done));
        else
            _in->when_durable(last_offset, std::move(done));
    }
    result<log::append_result> append_txn_marker(int64_t producer_id, int16_t producer_epoch,
                                                 log::txn_marker m,
                                                 int32_t coordinator_epoch) override {
        if (_d.lose_markers) { // appended, then lost by a crash before its fsync
            log::append_result r;
            r.base_offset = r.last_offset = _in->log_end_offset();
            return r;
        }
        return _in->append_txn_marker(producer_id, producer_epoch, m, coordinator_epoch);
    }

private:
    durability_hooks& _d;
};

/// The embedded log, each partition wrapped in durability_partition.
class durability_tier final : public log::testing::forwarding_tier {
public:
    using forwarding_tier::forwarding_tier;
    mutable durability_hooks hooks;

protected:
    std::shared_ptr<log::local_partition>
    wrap(std::shared_ptr<log::local_partition> p) const override {
        return std::make_shared<durability_partition>(std::move(p), hooks);
    }
};

/// A client's transactional batch of `n` records (make_batch with the transactional attribute).
byte_buffer txn_batch(size_t n, int64_t pid, int16_t epoch, int32_t seq) {
    auto b = log::testing::make_batch(
        n, 20, 1000, {.producer_id = pid, .producer_epoch = epoch, .base_sequence = seq});
    b[log::batch_layout::attributes + 1] |= uint8_t(log::batch_attr::transactional);
    uint32_t crc = log::compute_batch_crc(b);
    for (int i = 0; i < 4; ++i)
        b[log::batch_layout::crc + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
    return b;
}

struct txn_coordinator_test : ::testing::Test {
    std::filesystem::path dir;
    std::unique_ptr<log::log_manager> logs;
    std::unique_ptr<offset_store> offsets;
    std::unique_ptr<producer_id_allocator> pids;
    std::unique_ptr<txn_coordinator> txns;

    void SetUp() override {
        dir = std::filesystem::temp_directory_path()
              / fmt::format("floe-txn-coord-{}-{}", ::getpid(),
                            ::testing::UnitTest::GetInstance()->random_seed());
        std::filesystem::remove_all(dir);
        log::log_manager_options lo;
        lo.data_dir = dir;
        logs = std::move(*log::log_manager::open(lo));
        ASSERT_TRUE(logs->create_topic("t", 2));
        offsets = std::move(*offset_store::open(dir / "kafka"));
        pids = std::move(*producer_id_allocator::open(dir / "kafka"));
        reopen();
    }
    void TearDown() override {
        txns.reset();
        (void)logs->close();
        std::filesystem::remove_all(dir);
    }
    /// A new coordinator over `over` (the log itself unless given), reading the state file back
    /// as a restarted broker does.
    void reopen(log::local_tier* over = nullptr) {
        txns.reset();
        auto t =
            txn_coordinator::open({.dir = dir / "kafka"}, over ? *over : *logs, *offsets, *pids);
        ASSERT_TRUE(t) << t.error();
        txns = std::move(*t);
    }
    int64_t end(int32_t p) { return logs->partition("t", p)->log_end_offset()(); }
    int64_t lso(int32_t p) { return logs->partition("t", p)->last_stable_offset()(); }
    /// A transactional Produce's batch of `n` records, appended as the Produce handler does.
    int64_t produce(int32_t p, size_t n, int64_t pid, int16_t epoch, int32_t seq) {
        auto b = txn_batch(n, pid, epoch, seq);
        auto r = logs->partition("t", p)->append(b);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, log::append_status::ok) << r->message;
        return r->base_offset();
    }
    static int64_t now_ms() {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
};

const std::vector<log::topic_partition> both = {{"t", 0}, {"t", 1}};

TEST_F(txn_coordinator_test, commit_writes_markers_and_applies_staged_offsets) {
    auto a = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(a.error, 0);
    EXPECT_EQ(a.producer_epoch, 0);
    EXPECT_EQ(txns->add_partitions("tx", a.producer_id, 0, both), (std::vector<int16_t>{0, 0}));
    EXPECT_EQ(txns->check_produce("tx", a.producer_id, 0, {"t", 1}), 0);
    EXPECT_EQ(txns->check_produce("tx", a.producer_id, 0, {"t", 5}),
              int16_t(kerr::invalid_txn_state));
    EXPECT_EQ(
        txns->txn_offset_commit("tx", "g", a.producer_id, 0, {{{"t", 0}, {17, -1, std::nullopt}}}),
        int16_t(kerr::invalid_txn_state)); // AddOffsetsToTxn first
    EXPECT_EQ(txns->add_offsets("tx", a.producer_id, 0, "g"), 0);
    EXPECT_EQ(
        txns->txn_offset_commit("tx", "g", a.producer_id, 0, {{{"t", 0}, {17, -1, std::nullopt}}}),
        0);
    EXPECT_FALSE(offsets->get("g", {"t", 0})) << "staged offsets are invisible before the commit";
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0);
    EXPECT_EQ(end(0), 1); // one COMMIT marker each
    EXPECT_EQ(end(1), 1);
    ASSERT_TRUE(offsets->get("g", {"t", 0}));
    EXPECT_EQ(offsets->get("g", {"t", 0})->offset, 17);
    EXPECT_EQ(txns->describe("tx")->status, txn_status::complete_commit);
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0) << "a retried commit";
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, false), int16_t(kerr::invalid_txn_state));
    EXPECT_EQ(txns->init_producer("tx", 0, -1, -1).error,
              int16_t(kerr::invalid_transaction_timeout));
    EXPECT_EQ(txns->init_producer("tx", 900001, -1, -1).error,
              int16_t(kerr::invalid_transaction_timeout));
}

TEST_F(txn_coordinator_test, new_producer_fences_the_old_one_and_aborts_its_transaction) {
    auto a = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, {{"t", 0}}), (std::vector<int16_t>{0}));
    auto b = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(b.error, 0);
    EXPECT_EQ(b.producer_id, a.producer_id);
    EXPECT_GT(b.producer_epoch, 0);
    EXPECT_EQ(end(0), 1) << "the old transaction got its ABORT marker";
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), int16_t(kerr::producer_fenced));
    EXPECT_EQ(txns->add_partitions("tx", a.producer_id, 0, {{"t", 1}}),
              (std::vector<int16_t>{int16_t(kerr::producer_fenced)}));
    EXPECT_EQ(txns->check_produce("tx", a.producer_id, 0, {"t", 0}),
              int16_t(kerr::invalid_producer_epoch));
    EXPECT_EQ(txns->init_producer("tx", 60000, a.producer_id, 0).error,
              int16_t(kerr::producer_fenced))
        << "a fenced instance cannot re-initialise with its old epoch";
    EXPECT_EQ(txns->add_partitions("tx", a.producer_id + 1, b.producer_epoch, {{"t", 1}}),
              (std::vector<int16_t>{int16_t(kerr::invalid_producer_id_mapping)}));
    EXPECT_EQ(txns->add_partitions("tx", b.producer_id, b.producer_epoch, {{"t", 1}, {"nope", 0}}),
              (std::vector<int16_t>{int16_t(kerr::operation_not_attempted),
                                    int16_t(kerr::unknown_topic_or_partition)}));
}

TEST_F(txn_coordinator_test, open_transaction_survives_reopen_and_times_out) {
    auto a = txns->init_producer("tx", 1000, -1, -1);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, both), (std::vector<int16_t>{0, 0}));
    reopen(); // as after kill -9: the log file is all there is
    auto d = txns->describe("tx");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->status, txn_status::ongoing);
    EXPECT_EQ(d->partitions.size(), 2u);
    txns->tick(now_ms()); // not yet timed out
    EXPECT_EQ(txns->describe("tx")->status, txn_status::ongoing);
    txns->tick(now_ms() + 1500);
    d = txns->describe("tx");
    EXPECT_EQ(d->status, txn_status::complete_abort);
    EXPECT_EQ(d->producer_epoch, 1) << "the timeout abort bumps the epoch";
    EXPECT_EQ(end(0), 1);
    EXPECT_EQ(end(1), 1);
    reopen();
    EXPECT_EQ(txns->describe("tx")->status, txn_status::complete_abort);
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), int16_t(kerr::producer_fenced));
    // KIP-360: the timed-out producer re-initialises naming its old epoch and carries on.
    auto again = txns->init_producer("tx", 1000, a.producer_id, 0);
    EXPECT_EQ(again.error, 0);
    EXPECT_EQ(again.producer_epoch, 2);
    EXPECT_EQ(txns->init_producer("tx", 1000, a.producer_id, 0).error,
              int16_t(kerr::producer_fenced));
}

} // namespace

TEST_F(txn_coordinator_test, end_txn_is_answered_before_the_markers_are_durable) {
    durability_tier tier(*logs);
    tier.hooks.hold_durable = true;
    reopen(&tier);
    auto a = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, both), (std::vector<int16_t>{0, 0}));
    EXPECT_EQ(produce(0, 3, a.producer_id, 0, 0), 0);
    EXPECT_EQ(produce(1, 2, a.producer_id, 0, 0), 0);
    EXPECT_EQ(lso(0), 0);
    ASSERT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0);
    // Answered with the markers appended (read_committed readers see the records) but nothing
    // asked of the partitions' fsync: their group commit makes the markers durable later.
    EXPECT_EQ(end(0), 4);
    EXPECT_EQ(end(1), 3);
    EXPECT_EQ(lso(0), 4);
    EXPECT_EQ(tier.hooks.flushes, 0);
    EXPECT_EQ(tier.hooks.durable_asks, 0);
    auto d = txns->describe("tx");
    EXPECT_EQ(d->status, txn_status::complete_commit);
    ASSERT_EQ(d->markers.size(), 1u);
    EXPECT_EQ(d->markers[0].offsets,
              (std::map<log::topic_partition, int64_t>{{{"t", 0}, 3}, {{"t", 1}, 2}}));
    // The next transaction starts at once (no CONCURRENT_TRANSACTIONS while markers settle).
    EXPECT_EQ(txns->add_partitions("tx", a.producer_id, 0, {{"t", 0}}), (std::vector<int16_t>{0}));
    EXPECT_EQ(produce(0, 1, a.producer_id, 0, 3), 4);
    // tick watches the markers; the entry stays until both partitions report them durable.
    txns->tick(now_ms());
    EXPECT_EQ(tier.hooks.durable_asks, 2);
    ASSERT_EQ(tier.hooks.held.size(), 2u);
    tier.hooks.held[0](result<void>{});
    txns->tick(now_ms());
    EXPECT_EQ(txns->describe("tx")->markers.size(), 1u) << "one marker is not durable yet";
    tier.hooks.held[1](result<void>{});
    txns->tick(now_ms());
    EXPECT_TRUE(txns->describe("tx")->markers.empty());
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, false), 0);
    EXPECT_EQ(end(0), 6);
    EXPECT_EQ(lso(0), 6);
    txns.reset(); // before the tier it reads through
}

TEST_F(txn_coordinator_test, a_restart_appends_again_the_markers_a_crash_lost) {
    durability_tier tier(*logs);
    tier.hooks.lose_markers = true; // the crash takes the markers (appended, never fsynced)
    reopen(&tier);
    auto a = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, both), (std::vector<int16_t>{0, 0}));
    EXPECT_EQ(produce(0, 3, a.producer_id, 0, 0), 0);
    EXPECT_EQ(produce(1, 2, a.producer_id, 0, 0), 0);
    ASSERT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0);
    EXPECT_EQ(end(0), 3) << "the marker is lost";
    EXPECT_EQ(lso(0), 0) << "the last stable offset stays before the unfinished transaction";
    EXPECT_EQ(lso(1), 0);
    reopen(); // as after kill -9: the state file and the partitions are all there is
    EXPECT_EQ(end(0), 4) << "the commit marker is appended again at open";
    EXPECT_EQ(end(1), 3);
    EXPECT_EQ(lso(0), 4);
    EXPECT_EQ(lso(1), 3);
    EXPECT_EQ(txns->describe("tx")->status, txn_status::complete_commit);
    EXPECT_TRUE(
        logs->partition("t", 0)->aborted_transactions(kafka_offset{0}, kafka_offset{4}).empty())
        << "committed, not aborted";
    reopen(); // nothing left to append
    EXPECT_EQ(end(0), 4);
    EXPECT_EQ(end(1), 3);
}

TEST_F(txn_coordinator_test, a_restart_leaves_the_next_transaction_open) {
    auto a = txns->init_producer("tx", 60000, -1, -1);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, {{"t", 0}}), (std::vector<int16_t>{0}));
    EXPECT_EQ(produce(0, 3, a.producer_id, 0, 0), 0);
    ASSERT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0); // marker at 3, still in the state
    ASSERT_EQ(txns->describe("tx")->markers.size(), 1u);
    ASSERT_EQ(txns->add_partitions("tx", a.producer_id, 0, {{"t", 0}}), (std::vector<int16_t>{0}));
    EXPECT_EQ(produce(0, 2, a.producer_id, 0, 3), 4); // the next transaction: 4..5, open
    EXPECT_EQ(lso(0), 4);
    reopen();
    // The producer's open transaction began after the recorded marker: it is the next one, and a
    // marker appended now would end it. Nothing is appended.
    EXPECT_EQ(end(0), 6);
    EXPECT_EQ(lso(0), 4);
    EXPECT_EQ(txns->describe("tx")->status, txn_status::ongoing);
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, false), 0);
    EXPECT_EQ(end(0), 7);
    EXPECT_EQ(lso(0), 7);
    ASSERT_EQ(
        logs->partition("t", 0)->aborted_transactions(kafka_offset{0}, kafka_offset{7}).size(), 1u);
    EXPECT_EQ(logs->partition("t", 0)
                  ->aborted_transactions(kafka_offset{0}, kafka_offset{7})[0]
                  .first_offset,
              4);
}
