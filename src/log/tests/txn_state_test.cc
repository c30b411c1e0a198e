// Transactions in the local log (KIP-98): markers, the last stable offset, the aborted
// transaction index, and their recovery after a clean close and after a crash (replay).
#include "log/partition_log.h"
#include "log/testing/batch_builder.h"
#include "log/tests/test_util.h"
#include "log/txn_state.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;

namespace {

/// A client's transactional batch: make_batch with the transactional attribute (and its CRC).
byte_buffer txn_batch(size_t n, int64_t pid, int16_t epoch, int32_t seq) {
    auto b = make_batch(n, 20, 1000, {.producer_id = pid, .producer_epoch = epoch, .base_sequence = seq});
    b[batch_layout::attributes + 1] |= uint8_t(batch_attr::transactional);
    uint32_t crc = compute_batch_crc(b);
    for (int i = 0; i < 4; ++i) b[batch_layout::crc + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
    return b;
}

struct txn_log_test : ::testing::Test {
    temp_dir tmp;
    manual_clock clock{1'700'000'000'000};

    std::shared_ptr<partition_log> open_log() {
        partition_log_options o;
        o.dir = tmp.path / "p0";
        o.tp = {"t", 0};
        o.topic_id = uuid();
        o.clock = &clock;
        auto r = partition_log::open(o);
        EXPECT_TRUE(r) << r.error();
        return r ? *r : nullptr;
    }
    static int64_t put(partition_log& l, byte_buffer b) {
        auto r = l.append(b);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, append_status::ok) << r->message;
        return r->base_offset();
    }
    static int64_t mark(partition_log& l, int64_t pid, int16_t epoch, txn_marker m) {
        auto r = l.append_txn_marker(pid, epoch, m, 0);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, append_status::ok) << r->message;
        return r->base_offset();
    }
};

TEST(txn_marker, builds_a_control_batch_that_parses_back) {
    for (auto m : {txn_marker::commit, txn_marker::abort}) {
        auto b = build_txn_marker_batch(42, 3, m, 7, 1234);
        auto h = parse_batch_header(b);
        ASSERT_TRUE(h) << h.error();
        EXPECT_TRUE(h->is_control());
        EXPECT_TRUE(h->is_transactional());
        EXPECT_EQ(h->producer_id, 42);
        EXPECT_EQ(h->producer_epoch, 3);
        EXPECT_EQ(h->crc, compute_batch_crc(b));
        auto parsed = parse_txn_marker(*h, b);
        ASSERT_TRUE(parsed) << parsed.error();
        EXPECT_EQ(*parsed, m);
    }
}

TEST_F(txn_log_test, last_stable_offset_and_aborted_index) {
    auto l = open_log();
    EXPECT_EQ(put(*l, txn_batch(3, 7, 0, 0)), 0);         // txn of 7: 0..2
    EXPECT_EQ(put(*l, make_batch(2, 20, 1000)), 3);        // plain: 3..4
    EXPECT_EQ(put(*l, txn_batch(2, 8, 0, 0)), 5);          // txn of 8: 5..6
    EXPECT_EQ(l->last_stable_offset()(), 0);
    EXPECT_EQ(l->offsets().last_stable(), 0);
    EXPECT_EQ(l->offsets().high_watermark(), 7);
    EXPECT_EQ(mark(*l, 7, 0, txn_marker::abort), 7);       // 7 aborted: [0, 7]
    EXPECT_EQ(l->last_stable_offset()(), 5);               // 8 still open
    EXPECT_EQ(put(*l, txn_batch(1, 7, 0, 3)), 8);          // 7's next transaction: 8
    EXPECT_EQ(mark(*l, 8, 0, txn_marker::commit), 9);
    EXPECT_EQ(l->last_stable_offset()(), 8);
    EXPECT_EQ(mark(*l, 7, 0, txn_marker::commit), 10);
    EXPECT_EQ(l->last_stable_offset()(), 11);
    auto ab = l->aborted_transactions(kafka_offset(0), kafka_offset(11));
    ASSERT_EQ(ab.size(), 1u);
    EXPECT_EQ(ab[0], (aborted_txn{7, 0, 7}));
    EXPECT_TRUE(l->aborted_transactions(kafka_offset(8), kafka_offset(11)).empty());
    // Client batches may not be control batches; a marker with a stale epoch is refused.
    auto ctl = build_txn_marker_batch(9, 0, txn_marker::commit, 0, 0);
    auto r = l->append(ctl);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::invalid_record);
    EXPECT_EQ(put(*l, txn_batch(1, 9, 2, 0)), 11);
    auto stale = l->append_txn_marker(9, 1, txn_marker::abort, 0);
    ASSERT_TRUE(stale);
    EXPECT_EQ(stale->status, append_status::invalid_producer_epoch);
    EXPECT_EQ(l->last_stable_offset()(), 11);
}

TEST_F(txn_log_test, state_survives_clean_close_and_crash_replay) {
    {
        auto l = open_log();
        put(*l, txn_batch(3, 7, 0, 0));      // 0..2
        mark(*l, 7, 0, txn_marker::abort);   // 3
        put(*l, txn_batch(2, 8, 0, 0));      // 4..5, left open
        ASSERT_TRUE(l->close());
    }
    for (int round = 0; round < 2; ++round) {
        if (round == 1) { // a crash: no snapshots, the log is replayed
            std::filesystem::remove(tmp.path / "p0" / "transactions.snapshot");
            std::filesystem::remove(tmp.path / "p0" / "producers.snapshot");
        }
        auto l = open_log();
        EXPECT_EQ(l->last_stable_offset()(), 4) << "round " << round;
        auto ab = l->aborted_transactions(kafka_offset(0), kafka_offset(6));
        ASSERT_EQ(ab.size(), 1u);
        EXPECT_EQ(ab[0], (aborted_txn{7, 0, 3}));
        EXPECT_EQ(l->open_transactions(), (std::map<int64_t, int64_t>{{8, 4}}));
        ASSERT_TRUE(l->close());
    }
}

} // namespace
