// acks=all on the Redis tier: with floe.local.redis.min-replicas = 1, an append is durable once
// a real replica has it (WAIT), and a retriable error when no replica acknowledges in time.

#include "log/testing/batch_builder.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"

#include <gtest/gtest.h>

#include <future>

using namespace floe;
using namespace floe::log;

namespace {

struct temp {
    std::filesystem::path dir;
    temp() {
        char tmpl[] = "/tmp/floe-redis-tier-repl-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~temp() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

result<void> durable(local_partition& p, kafka_offset last) {
    std::promise<result<void>> done;
    p.when_durable(last, [&](result<void> r) { done.set_value(std::move(r)); });
    auto f = done.get_future();
    if (f.wait_for(std::chrono::seconds(20)) != std::future_status::ready)
        return fail(errc::timeout, "when_durable never called back");
    return f.get();
}

} // namespace

TEST(redis_tier_replicas, acks_all_waits_for_min_replicas) {
    temp t;
    std::filesystem::create_directories(t.dir / "master");
    std::filesystem::create_directories(t.dir / "replica");
    auto master = redis::fixture::server::start(t.dir / "master", {"--repl-diskless-sync-delay", "0"});
    ASSERT_TRUE(master) << master.error();
    auto replica = redis::fixture::server::start(
        t.dir / "replica", {"--replicaof", "127.0.0.1", std::to_string(master->port())});
    ASSERT_TRUE(replica) << replica.error();
    // Wait (bounded) until the replica is in sync.
    bool attached = false;
    for (int i = 0; i < 150 && !attached; ++i) {
        auto info = replica->raw({"INFO", "replication"});
        attached = info && info->str().find("master_link_status:up") != std::string::npos;
        if (!attached) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(attached);

    redis_tier::options o;
    o.redis = *redis::parse_uris(master->uri());
    o.ns = "repl";
    o.min_replicas = 1;
    // Generous: on a loaded machine a replica has taken over a second to acknowledge (the test
    // is that acks=all waits for it, not how fast it is); under the 5 s command timeout.
    o.wait_timeout = std::chrono::milliseconds(3000);
    auto tier = redis_tier::open(o);
    ASSERT_TRUE(tier) << tier.error();
    ASSERT_TRUE((*tier)->create_topic("t", 1));
    auto p = (*tier)->partition("t", 0);
    auto b = log::testing::make_batch(3, 10, 0);
    auto ar = p->append(b);
    ASSERT_TRUE(ar) << ar.error();
    auto d = durable(*p, ar->last_offset);
    EXPECT_TRUE(d) << d.error();
    // The replica really has the records. (On a loaded machine the link can drop and the replica
    // resync, answering -LOADING meanwhile: only a count is an answer.)
    auto n = replica->raw({"XLEN", "{repl:t:0}:stream"});
    for (int i = 0; i < 100 && n && n->is_error(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        n = replica->raw({"XLEN", "{repl:t:0}:stream"});
    }
    ASSERT_TRUE(n);
    ASSERT_TRUE(n->is_integer()) << n->str();
    EXPECT_EQ(n->integer(), 3);

    // No replica: the append is in the master, but acks=all gets a retriable error.
    replica->kill9();
    auto b2 = log::testing::make_batch(2, 10, 0);
    auto ar2 = p->append(b2);
    ASSERT_TRUE(ar2) << ar2.error();
    auto d2 = durable(*p, ar2->last_offset);
    ASSERT_FALSE(d2);
    EXPECT_EQ(d2.error().code(), errc::unavailable) << d2.error();
    EXPECT_TRUE(d2.error().retryable());
    (void)(*tier)->close();
}

// Redis unreachable: current_offsets() says so with a retriable error (what lets Fetch and the
// lookups of a tiered topic fall back to Iceberg), offsets(), known_offsets() and records_start()
// answer what was last read, appends fail retriably; back (AOF, same directory): as it was.
TEST(redis_tier_outage, current_offsets_reports_an_unreachable_server) {
    temp t;
    auto server = redis::fixture::server::start(t.dir, {"--appendonly", "yes"});
    ASSERT_TRUE(server) << server.error();
    redis_tier::options o;
    o.redis = *redis::parse_uris(server->uri());
    o.redis.command_timeout = std::chrono::milliseconds(500);
    o.redis.retry_budget = std::chrono::milliseconds(300);
    o.ns = "outage";
    auto tier = redis_tier::open(o);
    ASSERT_TRUE(tier) << tier.error();
    ASSERT_TRUE((*tier)->create_topic("t", 1));
    auto p = (*tier)->partition("t", 0);
    auto b = log::testing::make_batch(4, 10, 0);
    ASSERT_TRUE(p->append(b));
    ASSERT_TRUE(p->delete_records_before(kafka_offset(1)));
    auto now = p->current_offsets();
    ASSERT_TRUE(now) << now.error();
    EXPECT_EQ(now->log_end(), 4);
    EXPECT_EQ(p->known_offsets().log_end(), 4);

    server->kill9();
    auto down = p->current_offsets();
    ASSERT_FALSE(down);
    EXPECT_TRUE(down.error().code() == errc::unavailable || down.error().code() == errc::timeout) << down.error();
    EXPECT_TRUE(down.error().retryable());
    EXPECT_EQ(p->offsets().log_end(), 4);
    EXPECT_EQ(p->known_offsets().log_end(), 4);
    // The DeleteRecords floor last read: the remote tier keeps hiding what it removed.
    EXPECT_EQ(p->records_start()(), 1);
    auto b2 = log::testing::make_batch(1, 10, 0);
    auto ar = p->append(b2);
    ASSERT_FALSE(ar);
    EXPECT_TRUE(ar.error().retryable()) << ar.error();
    auto rd = p->read(kafka_offset(0));
    ASSERT_FALSE(rd);
    EXPECT_TRUE(rd.error().retryable()) << rd.error();

    ASSERT_TRUE(server->restart());
    result<partition_offsets> back = fail(errc::unavailable, "not yet");
    for (int i = 0; i < 50 && !back; ++i) {
        back = p->current_offsets();
        if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->log_end(), 4);
    auto b3 = log::testing::make_batch(1, 10, 0);
    auto ar3 = p->append(b3);
    ASSERT_TRUE(ar3) << ar3.error();
    EXPECT_EQ(ar3->base_offset(), 4);
    (void)(*tier)->close();
}
