// Two brokers' Redis tiers on one redis-server (two clients, one namespace), as two `floe serve`
// of a cluster have: topics one creates, grows, alters, deletes or re-creates show up in the
// other (at once on a lookup that misses, else within the refresh interval), a lost creation
// race learns the winner's topic, and both append to one partition with contiguous offsets.

#include "log/testing/batch_builder.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace floe;
using namespace floe::log;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<local_tier> open_tier(const std::string& uri, std::string ns) {
    redis_tier::options o;
    auto r = redis::parse_uris(uri, "floe.local.redis.uri");
    EXPECT_TRUE(r) << r.error();
    o.redis = *r;
    o.ns = std::move(ns);
    o.log_dir = "/nonexistent";
    o.topic_refresh_interval = 100ms;
    auto t = redis_tier::open(std::move(o));
    EXPECT_TRUE(t) << t.error();
    return t ? std::move(*t) : nullptr;
}

/// Polls `cond` for up to 5 s (the refresh interval here is 100 ms).
template <class F>
bool eventually(F cond) {
    for (int i = 0; i < 100; ++i) {
        if (cond()) return true;
        std::this_thread::sleep_for(50ms);
    }
    return cond();
}

result<append_result> append(local_partition& p, byte_buffer bytes) {
    return p.append(std::span<uint8_t>(bytes.data(), bytes.size()));
}

} // namespace

TEST(redis_tier_brokers, topics_changed_by_one_broker_reach_the_other) {
    auto dir = redis::fixture::fresh_dir("redis-tier-brokers");
    auto srv = redis::fixture::server::start(dir);
    ASSERT_TRUE(srv) << srv.error();
    auto a = open_tier(srv->uri(), "brk"), b = open_tier(srv->uri(), "brk");
    ASSERT_TRUE(a && b);

    // Created through A: B finds it on the first lookup (a miss re-reads).
    auto t = a->create_topic("orders", 3);
    ASSERT_TRUE(t) << t.error();
    auto seen = b->topic("orders");
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->id, t->id);
    ASSERT_TRUE(b->partition("orders", 2));

    // B loses a creation race: already_exists, and it knows A's topic afterwards.
    auto again = b->create_topic("orders", 7);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists);
    EXPECT_EQ(b->topic("orders")->partitions, 3);

    // Both append to one partition: offsets stay contiguous whoever appends.
    ASSERT_TRUE(append(*a->partition("orders", 0), floe::log::testing::make_batch(2, 10, 1000)));
    auto r = append(*b->partition("orders", 0), floe::log::testing::make_batch(3, 10, 2000));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->base_offset(), 2);
    EXPECT_EQ(a->partition("orders", 0)->offsets().log_end(), 5);

    // Altered and grown through A.
    ASSERT_TRUE(a->alter_topic_config("orders", {{"segment.ms", "1234"}}));
    EXPECT_TRUE(eventually([&] { return b->topic("orders")->config.segment_ms == 1234; }));
    EXPECT_EQ(b->partition("orders", 1)->offsets().log_end(), 0);
    ASSERT_TRUE(a->create_partitions("orders", 5));
    EXPECT_TRUE(b->partition("orders", 4)); // a miss: re-read at once
    EXPECT_TRUE(eventually([&] { return b->topic("orders")->partitions == 5; }));

    // Broker-level dynamic defaults set through B reach A's topics.
    ASSERT_TRUE(b->set_dynamic_topic_defaults({{"retention.ms", "3600000"}}, false));
    EXPECT_TRUE(eventually([&] { return a->topic("orders")->config.retention_ms == 3600000; }));

    // Deleted through B: gone from A; re-created through A with another id: B follows.
    ASSERT_TRUE(b->delete_topic("orders"));
    EXPECT_TRUE(eventually([&] { return !a->topic("orders"); }));
    auto re = a->create_topic("orders", 1);
    ASSERT_TRUE(re) << re.error();
    EXPECT_TRUE(eventually([&] { auto x = b->topic("orders"); return x && x->id == re->id && x->partitions == 1; }));
    EXPECT_FALSE(b->partition("orders", 2));

    ASSERT_TRUE(a->close());
    ASSERT_TRUE(b->close());
    std::filesystem::remove_all(dir);
}

// The segment clock is Redis's (functions.lua, server_ms): a broker whose wall clock ran a day
// ahead and rolled a segment (the chaos run's clock steps) used to stamp the next segment as
// created a day from now, and no broker rolled it by segment.ms until real time caught up: no
// sealed segment for a day, so nothing offloaded (the lake fell 143,793 records behind a
// 30-minute run). Now the next segment rolls segment.ms after it began, whatever the clock of
// the broker that rolled.
TEST(redis_tier_brokers, a_broker_clock_a_day_ahead_does_not_stop_segments_rolling) {
    auto dir = redis::fixture::fresh_dir("redis-tier-clock");
    auto srv = redis::fixture::server::start(dir);
    ASSERT_TRUE(srv) << srv.error();
    auto a = open_tier(srv->uri(), "clk");
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->create_topic("ahead", 1, {{"segment.ms", "400"}}));
    auto p = a->partition("ahead", 0);
    ASSERT_TRUE(p);
    ASSERT_TRUE(append(*p, floe::log::testing::make_batch(3, 10, 1000)));
    // Another broker, its clock a day ahead, rolls the active segment (as its storage worker's
    // roll or an append of its own would).
    auto raw = redis::client::connect(redis::parse_uris(srv->uri()).value());
    ASSERT_TRUE(raw) << raw.error();
    const auto tag = redis_tier::partition_tag("clk", "ahead", 0);
    const auto ahead = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          (std::chrono::system_clock::now() + 24h).time_since_epoch())
                                          .count());
    auto rolled = (*raw)->fcall("floe_tier_roll", {tag + ":meta", tag + ":segments"}, {ahead});
    ASSERT_TRUE(rolled) << rolled.error();
    EXPECT_EQ(rolled->integer(), 1);
    ASSERT_EQ(p->sealed_segments().size(), 1u);
    // The next segment, appended to by this broker, rolls once segment.ms has passed.
    ASSERT_TRUE(append(*p, floe::log::testing::make_batch(3, 10, 2000)));
    EXPECT_FALSE(p->maybe_roll_by_time().value()); // not due yet
    std::this_thread::sleep_for(600ms);
    auto due = p->maybe_roll_by_time();
    ASSERT_TRUE(due) << due.error();
    EXPECT_TRUE(*due) << "the segment begun after a roll by a broker a day ahead did not roll by segment.ms";
    ASSERT_EQ(p->sealed_segments().size(), 2u);
    // And an append after segment.ms rolls by itself too.
    ASSERT_TRUE(append(*p, floe::log::testing::make_batch(3, 10, 3000)));
    std::this_thread::sleep_for(600ms);
    ASSERT_TRUE(append(*p, floe::log::testing::make_batch(3, 10, 4000)));
    EXPECT_EQ(p->sealed_segments().size(), 3u);
    std::filesystem::remove_all(dir);
}
