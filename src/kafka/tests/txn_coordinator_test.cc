// The transaction coordinator against a real log and offset store: markers in every partition
// of a transaction, staged TxnOffsetCommit offsets applied on commit only, fencing by epoch,
// and the state durable across a reopen (an open transaction aborted by tick after its timeout).
#include "kafka/handlers.h"
#include "kafka/txn_coordinator.h"
#include "log/log_manager.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

using namespace floe;
using namespace floe::kafka;

namespace {

struct txn_coordinator_test : ::testing::Test {
    std::filesystem::path dir;
    std::unique_ptr<log::log_manager> logs;
    std::unique_ptr<offset_store> offsets;
    std::unique_ptr<producer_id_allocator> pids;
    std::unique_ptr<txn_coordinator> txns;

    void SetUp() override {
        dir = std::filesystem::temp_directory_path()
              / fmt::format("floe-txn-coord-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->random_seed());
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
    void reopen() {
        txns.reset();
        auto t = txn_coordinator::open({.dir = dir / "kafka"}, *logs, *offsets, *pids);
        ASSERT_TRUE(t) << t.error();
        txns = std::move(*t);
    }
    int64_t end(int32_t p) { return logs->partition("t", p)->log_end_offset()(); }
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
    EXPECT_EQ(txns->check_produce("tx", a.producer_id, 0, {"t", 5}), int16_t(kerr::invalid_txn_state));
    EXPECT_EQ(txns->txn_offset_commit("tx", "g", a.producer_id, 0, {{{"t", 0}, {17, -1, std::nullopt}}}),
              int16_t(kerr::invalid_txn_state)); // AddOffsetsToTxn first
    EXPECT_EQ(txns->add_offsets("tx", a.producer_id, 0, "g"), 0);
    EXPECT_EQ(txns->txn_offset_commit("tx", "g", a.producer_id, 0, {{{"t", 0}, {17, -1, std::nullopt}}}), 0);
    EXPECT_FALSE(offsets->get("g", {"t", 0})) << "staged offsets are invisible before the commit";
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0);
    EXPECT_EQ(end(0), 1); // one COMMIT marker each
    EXPECT_EQ(end(1), 1);
    ASSERT_TRUE(offsets->get("g", {"t", 0}));
    EXPECT_EQ(offsets->get("g", {"t", 0})->offset, 17);
    EXPECT_EQ(txns->describe("tx")->status, txn_status::complete_commit);
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, true), 0) << "a retried commit";
    EXPECT_EQ(txns->end_txn("tx", a.producer_id, 0, false), int16_t(kerr::invalid_txn_state));
    EXPECT_EQ(txns->init_producer("tx", 0, -1, -1).error, int16_t(kerr::invalid_transaction_timeout));
    EXPECT_EQ(txns->init_producer("tx", 900001, -1, -1).error, int16_t(kerr::invalid_transaction_timeout));
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
    EXPECT_EQ(txns->check_produce("tx", a.producer_id, 0, {"t", 0}), int16_t(kerr::invalid_producer_epoch));
    EXPECT_EQ(txns->init_producer("tx", 60000, a.producer_id, 0).error, int16_t(kerr::producer_fenced))
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
    EXPECT_EQ(txns->init_producer("tx", 1000, a.producer_id, 0).error, int16_t(kerr::producer_fenced));
}

} // namespace
