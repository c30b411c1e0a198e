#include "log/partition_log.h"
#include "log/testing/batch_builder.h"
#include "log/tests/test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;

namespace {

struct partition_log_test : ::testing::Test {
    temp_dir tmp;
    manual_clock clock{1'700'000'000'000};
    topic_config cfg;

    std::shared_ptr<partition_log> open_log() {
        partition_log_options o;
        o.dir = tmp.path / "p0";
        o.tp = {"t", 0};
        o.topic_id = uuid::random();
        o.config = cfg;
        o.clock = &clock;
        auto r = partition_log::open(o);
        EXPECT_TRUE(r) << r.error();
        return r ? *r : nullptr;
    }

    // Appends a batch of n records; returns its assigned base offset.
    int64_t put(partition_log& l, size_t n, int64_t ts, size_t vsize = 100,
                batch_options bo = {}) {
        auto b = make_batch(n, vsize, ts, bo);
        auto r = l.append(b);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, append_status::ok) << r->message;
        return r->base_offset();
    }

    // All batches readable from `from` to the end, decoded.
    std::vector<record_batch_header> read_all(const partition_log& l, int64_t from) {
        std::vector<record_batch_header> out;
        int64_t at = from;
        while (at < l.log_end_offset()()) {
            auto r = l.read(kafka_offset(at), {.max_bytes = 3000});
            EXPECT_TRUE(r) << r.error();
            if (!r || r->slices.empty()) break;
            byte_buffer bytes;
            EXPECT_TRUE(r->copy_to(bytes));
            auto n = for_each_batch(bytes, true, [&](const record_batch_header& h, bytes_view) {
                out.push_back(h);
                return true;
            });
            EXPECT_TRUE(n) << n.error();
            EXPECT_EQ(*n, bytes.size());
            at = out.back().last_offset() + 1;
        }
        return out;
    }
};

} // namespace

TEST_F(partition_log_test, append_assigns_offsets_and_reads_back_exact_bytes) {
    auto l = open_log();
    std::vector<byte_buffer> sent;
    int64_t expect = 0;
    for (int i = 0; i < 50; ++i) {
        auto b = make_batch(size_t(1 + i % 7), 50, 1000 + i);
        auto r = l->append(b); // patched in place: b now holds what the log stored
        ASSERT_TRUE(r);
        ASSERT_EQ(r->status, append_status::ok);
        EXPECT_EQ(r->base_offset(), expect);
        EXPECT_EQ(r->last_offset(), expect + i % 7);
        expect += 1 + i % 7;
        sent.push_back(b);
    }
    EXPECT_EQ(l->log_end_offset()(), expect);
    auto r = l->read(kafka_offset(0), {.max_bytes = 100 << 20});
    ASSERT_TRUE(r);
    byte_buffer got;
    ASSERT_TRUE(r->copy_to(got));
    byte_buffer want;
    for (auto& b : sent) want.insert(want.end(), b.begin(), b.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(r->offsets.high_watermark(), expect);
    EXPECT_EQ(r->offsets.last_stable(), expect);
}

TEST_F(partition_log_test, read_at_every_offset_starts_with_the_batch_holding_it) {
    cfg.index_interval_bytes = 300;
    auto l = open_log();
    for (int i = 0; i < 40; ++i) put(*l, size_t(1 + i % 5), 1000 + i, 60);
    int64_t end = l->log_end_offset()();
    for (int64_t o = 0; o < end; ++o) {
        auto r = l->read(kafka_offset(o), {.max_bytes = 1});
        ASSERT_TRUE(r) << r.error();
        ASSERT_EQ(r->slices.size(), 1u);
        byte_buffer b;
        ASSERT_TRUE(r->copy_to(b));
        auto h = validate_batch(b); // min_one_batch: exactly one whole batch
        ASSERT_TRUE(h) << "offset " << o << ": " << h.error();
        EXPECT_LE(h->base_offset, o);
        EXPECT_GE(h->last_offset(), o);
    }
    auto at_end = l->read(kafka_offset(end));
    ASSERT_TRUE(at_end);
    EXPECT_TRUE(at_end->slices.empty());
    EXPECT_EQ(l->read(kafka_offset(end + 1)).error().code(), errc::out_of_range);
}

TEST_F(partition_log_test, batch_header_at_every_offset_is_the_batch_holding_it) {
    cfg.index_interval_bytes = 300;
    auto l = open_log();
    for (int i = 0; i < 20; ++i) put(*l, size_t(1 + i % 4), 5000 + i, 60);
    int64_t end = l->log_end_offset()();
    for (int64_t o = 0; o < end; ++o) {
        auto r = l->read(kafka_offset(o), {.max_bytes = 1});
        ASSERT_TRUE(r) << r.error();
        byte_buffer b;
        ASSERT_TRUE(r->copy_to(b));
        auto want = validate_batch(b);
        ASSERT_TRUE(want) << want.error();
        auto got = l->batch_header_at(kafka_offset(o));
        ASSERT_TRUE(got) << got.error();
        ASSERT_TRUE(got->has_value()) << o;
        EXPECT_EQ((*got)->base_offset, want->base_offset);
        EXPECT_EQ((*got)->base_timestamp, want->base_timestamp);
        EXPECT_EQ((*got)->max_timestamp, want->max_timestamp);
    }
    auto at_end = l->batch_header_at(kafka_offset(end));
    ASSERT_TRUE(at_end);
    EXPECT_FALSE(at_end->has_value());
}

TEST_F(partition_log_test, read_respects_byte_budget_and_max_offset) {
    cfg.index_interval_bytes = 500;
    auto l = open_log();
    for (int i = 0; i < 30; ++i) put(*l, 2, 1000 + i, 100);
    size_t batch = make_batch(2, 100, 0).size();
    auto r = l->read(kafka_offset(0), {.max_bytes = batch * 5 + 10});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->total_bytes, batch * 5);
    EXPECT_EQ(r->slices[0].last_offset(), 9);
    auto none = l->read(kafka_offset(0), {.max_bytes = 10, .min_one_batch = false});
    ASSERT_TRUE(none);
    EXPECT_EQ(none->total_bytes, 0u);
    auto capped = l->read(kafka_offset(4), {.max_bytes = 1 << 20, .max_offset = kafka_offset(10)});
    ASSERT_TRUE(capped);
    EXPECT_EQ(capped->slices[0].first_offset(), 4);
    EXPECT_EQ(capped->slices[0].last_offset(), 9);
    EXPECT_EQ(capped->total_bytes, batch * 3);
}

TEST_F(partition_log_test, rolls_by_segment_bytes_and_reads_across_segments) {
    cfg.segment_bytes = 4000;
    cfg.index_interval_bytes = 700;
    auto l = open_log();
    for (int i = 0; i < 100; ++i) put(*l, 3, 1000 + i * 3, 80);
    auto segs = l->segments();
    ASSERT_GT(segs.size(), 5u);
    for (size_t i = 0; i + 1 < segs.size(); ++i) {
        EXPECT_TRUE(segs[i].sealed);
        EXPECT_LE(segs[i].size_bytes, 4000u);
        EXPECT_EQ(segs[i].next_offset, segs[i + 1].base_offset);
    }
    EXPECT_FALSE(segs.back().sealed);
    EXPECT_EQ(l->sealed_segments().size(), segs.size() - 1);
    auto all = read_all(*l, 0);
    ASSERT_EQ(all.size(), 100u);
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].base_offset, int64_t(i * 3));
    // Reopen: sealed segments come back from their index files, not a scan.
    l->close();
    l.reset();
    l = open_log();
    EXPECT_EQ(l->last_recovery().indexes_rebuilt, 0u);
    EXPECT_EQ(l->log_end_offset()(), 300);
    EXPECT_EQ(read_all(*l, 0).size(), 100u);
    EXPECT_EQ(read_all(*l, 151).front().base_offset, 150);
}

TEST_F(partition_log_test, rolls_by_segment_ms) {
    cfg.segment_ms = 1000;
    auto l = open_log();
    put(*l, 1, clock.now_ms());
    clock.advance(std::chrono::milliseconds(500));
    put(*l, 1, clock.now_ms());
    EXPECT_EQ(l->segments().size(), 1u);
    clock.advance(std::chrono::milliseconds(600));
    auto rolled = l->maybe_roll_by_time();
    ASSERT_TRUE(rolled);
    EXPECT_TRUE(*rolled);
    EXPECT_EQ(l->segments().size(), 2u);
    EXPECT_EQ(l->segments()[1].base_offset(), 2);
    // An empty active segment does not age.
    clock.advance(std::chrono::milliseconds(5000));
    EXPECT_FALSE(*l->maybe_roll_by_time());
    put(*l, 1, clock.now_ms());
    clock.advance(std::chrono::milliseconds(1500));
    put(*l, 1, clock.now_ms()); // append itself rolls the now-old segment
    EXPECT_EQ(l->segments().size(), 3u);
}

TEST_F(partition_log_test, offset_for_timestamp_matches_brute_force) {
    cfg.segment_bytes = 3000;
    cfg.index_interval_bytes = 400;
    auto l = open_log();
    // Timestamps mostly rising with some going back, records 10 ms apart inside a batch.
    std::vector<std::pair<int64_t, int64_t>> rec_ts; // offset, ts
    int64_t ts = 10'000;
    for (int i = 0; i < 120; ++i) {
        ts += (i % 9 == 4) ? -25 : 17;
        std::vector<test_record> rs(3);
        for (int k = 0; k < 3; ++k) {
            rs[size_t(k)].value = std::string(40, 'x');
            rs[size_t(k)].timestamp_ms = ts + k * 10;
        }
        byte_buffer b;
        append_batch(b, rs);
        auto r = l->append(b);
        ASSERT_TRUE(r);
        for (int k = 0; k < 3; ++k) rec_ts.push_back({r->base_offset() + k, ts + k * 10});
    }
    for (int64_t target = 9'000; target <= ts + 40; target += 7) {
        std::optional<std::pair<int64_t, int64_t>> want;
        for (auto& [o, t] : rec_ts)
            if (t >= target) {
                want = {o, t};
                break;
            }
        auto got = l->offset_for_timestamp(target);
        ASSERT_TRUE(got) << got.error();
        ASSERT_EQ(got->has_value(), want.has_value()) << "target " << target;
        if (want) {
            EXPECT_EQ((*got)->offset(), want->first) << "target " << target;
            EXPECT_EQ((*got)->timestamp_ms, want->second) << "target " << target;
        }
    }
    auto mx = l->max_timestamp();
    ASSERT_TRUE(mx);
    int64_t best = 0;
    for (auto& [o, t] : rec_ts) best = std::max(best, t);
    EXPECT_EQ(mx->timestamp_ms, best);
}

TEST_F(partition_log_test, log_append_time_patches_timestamp_and_crc) {
    cfg.message_timestamp_type = timestamp_type::log_append_time;
    auto l = open_log();
    auto b = make_batch(3, 10, 5);
    auto r = l->append(b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->log_append_time_ms, clock.now_ms());
    auto rd = l->read(kafka_offset(0));
    byte_buffer got;
    ASSERT_TRUE(rd->copy_to(got));
    auto h = validate_batch(got);
    ASSERT_TRUE(h) << h.error();
    EXPECT_TRUE(h->is_log_append_time());
    EXPECT_EQ(h->max_timestamp, clock.now_ms());
}

TEST_F(partition_log_test, rejects_bad_batches_without_writing) {
    cfg.max_message_bytes = 500;
    auto l = open_log();
    auto big = make_batch(10, 100, 0);
    EXPECT_EQ(l->append(big)->status, append_status::message_too_large);
    auto bad = make_batch(1, 10, 0);
    bad.back() ^= 0x40;
    EXPECT_EQ(l->append(bad)->status, append_status::corrupt);
    auto torn = make_batch(1, 10, 0);
    torn.pop_back();
    EXPECT_EQ(l->append(torn)->status, append_status::corrupt);
    byte_buffer two = make_batch(1, 10, 0);
    auto ok = make_batch(1, 10, 0);
    ok[16] = 1; // magic 1 in the second batch: the whole append is refused
    two.insert(two.end(), ok.begin(), ok.end());
    EXPECT_EQ(l->append(two)->status, append_status::corrupt);
    EXPECT_EQ(l->log_end_offset()(), 0);
    EXPECT_EQ(l->segments()[0].size_bytes, 0u);
}

TEST_F(partition_log_test, idempotent_producer_dedup_order_and_fencing) {
    auto l = open_log();
    auto send = [&](int64_t pid, int16_t epoch, int32_t seq, size_t n) {
        auto b = make_batch(n, 10, 0, {.producer_id = pid, .producer_epoch = epoch,
                                       .base_sequence = seq});
        auto r = l->append(b);
        EXPECT_TRUE(r);
        return *r;
    };
    EXPECT_EQ(send(1, 0, 0, 3).status, append_status::ok);     // offsets 0-2, seq 0-2
    EXPECT_EQ(send(1, 0, 3, 2).status, append_status::ok);     // offsets 3-4, seq 3-4
    auto dup = send(1, 0, 0, 3);                               // retry of the first batch
    EXPECT_EQ(dup.status, append_status::duplicate);
    EXPECT_EQ(dup.base_offset(), 0);
    EXPECT_EQ(dup.last_offset(), 2);
    EXPECT_EQ(l->log_end_offset()(), 5);
    EXPECT_EQ(send(1, 0, 7, 1).status, append_status::out_of_order_sequence); // gap
    EXPECT_EQ(send(1, 0, 4, 1).status, append_status::out_of_order_sequence); // overlap
    EXPECT_EQ(send(2, 0, 9, 1).status, append_status::ok); // unknown producer: any start
    EXPECT_EQ(send(1, 1, 5, 1).status, append_status::out_of_order_sequence); // new epoch not 0
    EXPECT_EQ(send(1, 1, 0, 1).status, append_status::ok);                    // bump epoch
    EXPECT_EQ(send(1, 0, 5, 1).status, append_status::invalid_producer_epoch); // fenced
    auto st = l->producer(1);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->epoch, 1);
    EXPECT_EQ(st->last_seq(), 0);

    // Survives a clean close (snapshot) ...
    l->close();
    l.reset();
    l = open_log();
    EXPECT_EQ(send(1, 1, 0, 1).status, append_status::duplicate);
    EXPECT_EQ(send(2, 0, 10, 1).status, append_status::ok);
    // ... and a crash (no snapshot: rebuilt from the log).
    l->close();
    l.reset();
    std::filesystem::remove(tmp.path / "p0" / "producers.snapshot");
    l = open_log();
    EXPECT_EQ(send(2, 0, 10, 1).status, append_status::duplicate);
    EXPECT_EQ(send(2, 0, 11, 1).status, append_status::ok);
    EXPECT_EQ(send(1, 1, 1, 1).status, append_status::ok);
}

TEST_F(partition_log_test, retention_by_time_and_size_keeps_active_segment) {
    cfg.segment_bytes = 2000;
    cfg.retention_ms = 60'000;
    auto l = open_log();
    for (int i = 0; i < 40; ++i) put(*l, 2, clock.now_ms(), 100);
    auto before = l->segments();
    ASSERT_GT(before.size(), 4u);
    EXPECT_TRUE(l->apply_retention(std::nullopt)->empty()); // all young
    clock.advance(std::chrono::milliseconds(120'000));
    put(*l, 2, clock.now_ms(), 100);
    auto gone = l->apply_retention(std::nullopt);
    ASSERT_TRUE(gone);
    auto after = l->segments();
    EXPECT_FALSE(gone->empty());
    EXPECT_EQ(l->log_start_offset(), after.front().base_offset);
    for (auto& s : *gone) EXPECT_FALSE(std::filesystem::exists(s.path));
    EXPECT_EQ(l->read(kafka_offset(0)).error().code(), errc::out_of_range);
    // Size: keep at most ~2 segments' worth.
    for (int i = 0; i < 40; ++i) put(*l, 2, clock.now_ms(), 100);
    auto c2 = cfg;
    c2.retention_ms = -1;
    c2.retention_bytes = 4500;
    l->update_config(c2);
    ASSERT_TRUE(l->apply_retention(std::nullopt));
    uint64_t total = 0;
    for (auto& s : l->segments()) total += s.size_bytes;
    EXPECT_LE(total, 4500u + 2000u);
    EXPECT_GE(total, 2500u);
}

TEST_F(partition_log_test, tiered_retention_waits_for_offload_marker) {
    cfg.segment_bytes = 2000;
    cfg.remote_storage_enable = true;
    cfg.local_retention_ms = 1000;
    cfg.retention_ms = -1;
    auto l = open_log();
    for (int i = 0; i < 40; ++i) put(*l, 2, clock.now_ms(), 100);
    clock.advance(std::chrono::milliseconds(5000));
    EXPECT_TRUE(l->apply_retention(kafka_offset(1000))->empty()); // nothing offloaded yet
    auto sealed = l->sealed_segments();
    ASSERT_GE(sealed.size(), 4u);
    ASSERT_TRUE(l->set_offloaded_up_to(sealed[1].next_offset));
    // The marker alone is not enough: the remote tier must confirm it holds the segments.
    EXPECT_TRUE(l->apply_retention(std::nullopt)->empty());
    EXPECT_TRUE(l->apply_retention(sealed[0].base_offset)->empty());
    auto one = l->apply_retention(sealed[0].next_offset);
    ASSERT_TRUE(one);
    ASSERT_EQ(one->size(), 1u);
    auto gone = l->apply_retention(sealed[2].next_offset);
    ASSERT_TRUE(gone);
    ASSERT_EQ(gone->size(), 1u);
    EXPECT_EQ(l->log_start_offset(), sealed[2].base_offset);
    // The marker is persisted and never moves back.
    ASSERT_TRUE(l->set_offloaded_up_to(kafka_offset(1)));
    l->close();
    l.reset();
    l = open_log();
    EXPECT_EQ(l->offloaded_up_to(), sealed[1].next_offset);
    EXPECT_EQ(l->log_start_offset(), sealed[2].base_offset);
    // A rewind (the lake does not hold what the marker says) moves it back, but never below
    // the local start, and persists.
    ASSERT_TRUE(l->set_offloaded_up_to(sealed[3].next_offset));
    ASSERT_TRUE(l->rewind_offloaded_up_to(kafka_offset(0)));
    EXPECT_EQ(l->offloaded_up_to(), sealed[2].base_offset);
    l->close();
    l.reset();
    l = open_log();
    EXPECT_EQ(l->offloaded_up_to(), sealed[2].base_offset);
}

TEST_F(partition_log_test, when_durable_calls_back_after_fsync) {
    auto l = open_log();
    auto r = l->append(*std::make_unique<byte_buffer>(make_batch(2, 10, 0)));
    ASSERT_TRUE(r);
    EXPECT_LT(l->offsets().durable_end(), 2);
    int called = 0;
    l->when_durable(r->last_offset, [&](result<void> ok) {
        EXPECT_TRUE(ok);
        ++called;
    });
    EXPECT_EQ(called, 1); // no flusher: fsynced inline
    EXPECT_EQ(l->offsets().durable_end(), 2);
    l->when_durable(kafka_offset(1), [&](result<void>) { ++called; });
    EXPECT_EQ(called, 2);
}

TEST_F(partition_log_test, concurrent_appends_and_reads_stay_consistent) {
    cfg.segment_bytes = 64 * 1024;
    auto l = open_log();
    constexpr int writers = 4, per_writer = 300;
    std::atomic<bool> done{false};
    std::atomic<int> read_errors{0};
    std::thread reader([&] {
        while (!done) {
            auto end = l->log_end_offset()();
            if (end == 0) continue;
            auto r = l->read(kafka_offset(end / 2), {.max_bytes = 8192});
            if (!r) {
                ++read_errors;
                continue;
            }
            byte_buffer b;
            if (!r->copy_to(b) || !for_each_batch(b, true, [](auto&, auto) { return true; }))
                ++read_errors;
        }
    });
    std::vector<std::thread> ws;
    for (int w = 0; w < writers; ++w)
        ws.emplace_back([&, w] {
            for (int i = 0; i < per_writer; ++i) {
                auto b = make_batch(4, 30, w * 100000 + i);
                auto r = l->append(b);
                if (!r || r->status != append_status::ok) ++read_errors;
            }
        });
    for (auto& t : ws) t.join();
    done = true;
    reader.join();
    EXPECT_EQ(read_errors.load(), 0);
    EXPECT_EQ(l->log_end_offset()(), writers * per_writer * 4);
    auto all = read_all(*l, 0);
    ASSERT_EQ(all.size(), size_t(writers * per_writer));
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].base_offset, int64_t(i) * 4);
}

TEST_F(partition_log_test, flush_messages_setting_fsyncs_without_being_asked) {
    cfg.flush_messages = 10;
    auto l = open_log();
    put(*l, 4, 0);
    put(*l, 4, 0);
    EXPECT_EQ(l->offsets().durable_end(), 0); // 8 unflushed, below the setting
    put(*l, 4, 0);
    EXPECT_EQ(l->offsets().durable_end(), 12);
}

TEST_F(partition_log_test, fetch_walks_segment_by_segment) {
    cfg.segment_bytes = 1000;
    auto l = open_log();
    for (int i = 0; i < 20; ++i) put(*l, 1, i, 200);
    auto segs = l->segments();
    ASSERT_GT(segs.size(), 3u);
    // A big budget from inside segment 1 stops at that segment's end: the next fetch goes on.
    auto from = segs[1].base_offset();
    auto r = l->read(kafka_offset(from), {.max_bytes = 1 << 20});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->slices.size(), 1u);
    EXPECT_EQ(r->slices[0].first_offset(), from);
    EXPECT_EQ(r->slices[0].last_offset(), segs[1].last_offset()());
    EXPECT_EQ(r->slices[0].position, 0u);
    EXPECT_EQ(r->total_bytes, segs[1].size_bytes);
    // The slice is usable after the segment is deleted by retention (held file handle).
    auto c = cfg;
    c.retention_bytes = 0;
    l->update_config(c);
    ASSERT_TRUE(l->apply_retention(std::nullopt));
    EXPECT_GT(l->log_start_offset()(), from);
    byte_buffer b;
    ASSERT_TRUE(r->copy_to(b));
    EXPECT_TRUE(for_each_batch(b, true, [](auto&, auto) { return true; }));
}

TEST_F(partition_log_test, read_slices_describe_exactly_the_batches_they_hold) {
    cfg.index_interval_bytes = 250;
    auto l = open_log();
    for (int i = 0; i < 60; ++i) put(*l, size_t(1 + i % 3), i, size_t(30 + (i * 37) % 400));
    int64_t end = l->log_end_offset()();
    for (int64_t o = 0; o < end; o += 2) {
        for (size_t budget : {1, 300, 700, 1500, 4000, 100000}) {
            for (int64_t cap : {end, o + 3}) {
                auto r = l->read(kafka_offset(o), {.max_bytes = budget, .max_offset = kafka_offset(cap)});
                ASSERT_TRUE(r);
                ASSERT_EQ(r->slices.size(), 1u);
                auto& s = r->slices[0];
                byte_buffer b;
                ASSERT_TRUE(r->copy_to(b));
                std::vector<record_batch_header> hs;
                auto n = for_each_batch(b, true, [&](const record_batch_header& h, bytes_view) {
                    hs.push_back(h);
                    return true;
                });
                ASSERT_TRUE(n);
                ASSERT_EQ(*n, b.size());
                ASSERT_FALSE(hs.empty());
                SCOPED_TRACE(fmt::format("offset {} budget {} cap {}", o, budget, cap));
                EXPECT_EQ(s.first_offset(), hs.front().base_offset);
                EXPECT_EQ(s.last_offset(), hs.back().last_offset());
                EXPECT_LE(hs.front().base_offset, o);
                EXPECT_GE(hs.front().last_offset(), o);
                if (hs.size() > 1) {
                    EXPECT_LE(b.size(), budget);
                }
                EXPECT_LT(hs.back().base_offset, cap);
                // Greedy: the next batch would not have fit the budget or the cap.
                if (hs.back().last_offset() + 1 < end && b.size() < budget) {
                    auto next = l->read(kafka_offset(hs.back().last_offset() + 1), {.max_bytes = 1});
                    ASSERT_TRUE(next);
                    bool over_cap = next->slices[0].first_offset() >= cap;
                    bool over_budget = b.size() + next->total_bytes > budget;
                    EXPECT_TRUE(over_cap || over_budget);
                }
            }
        }
    }
}

TEST_F(partition_log_test, delete_records_moves_the_log_start_durably_and_retention_drops_segments) {
    cfg.segment_bytes = 4000;
    auto l = open_log();
    // Offsets 0..179 in several segments, timestamps recent (time retention keeps them).
    for (int i = 0; i < 60; ++i) put(*l, 3, clock.now_ms() + i, 80);
    auto before = l->segments().size();
    ASSERT_GT(before, 3u);
    EXPECT_EQ(l->records_start()(), 0);
    EXPECT_EQ(l->delete_records_before(kafka_offset(100))->value(), 100);
    EXPECT_EQ(l->log_start_offset()(), 100);
    EXPECT_EQ(l->offsets().log_start(), 100);
    EXPECT_EQ(l->records_start()(), 100);
    EXPECT_EQ(l->read(kafka_offset(99)).error().code(), errc::out_of_range);
    auto r = l->read(kafka_offset(100));
    ASSERT_TRUE(r) << r.error();
    EXPECT_FALSE(r->slices.empty());
    // Never backwards; never past the log end.
    EXPECT_EQ(l->delete_records_before(kafka_offset(50))->value(), 100);
    EXPECT_EQ(l->delete_records_before(kafka_offset(181)).error().code(), errc::out_of_range);
    // Appends report the new log start; retention removes whole segments below it.
    auto b = make_batch(1, 10, clock.now_ms());
    EXPECT_EQ(l->append(b)->log_start_offset(), 100);
    auto gone = l->apply_retention(std::nullopt);
    ASSERT_TRUE(gone) << gone.error();
    EXPECT_FALSE(gone->empty());
    for (auto& s : *gone) EXPECT_LE(s.next_offset(), 100);
    EXPECT_LE(l->segments().front().base_offset(), 100);
    EXPECT_EQ(l->log_start_offset()(), 100);
    // Survives a reopen.
    l->close();
    l.reset();
    l = open_log();
    EXPECT_EQ(l->log_start_offset()(), 100);
    EXPECT_EQ(l->records_start()(), 100);
    EXPECT_EQ(read_all(*l, 100).front().base_offset, 99); // the batch holding 100 starts at 99
    // Up to the log end: an empty readable range, appends continue after it.
    EXPECT_EQ(l->delete_records_before(l->log_end_offset())->value(), 181);
    EXPECT_EQ(put(*l, 2, clock.now_ms()), 181);
}
