// Broker registry and leases against a real redis-server (and leases on a real Redis Cluster).
#include "redis/coordination.h"
#include "redis/slot.h"
#include "redis/testing/server.h"
#include "redis/tests/connect.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

using namespace floe;
using namespace floe::redis;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(std::string_view name) { return fixture::fresh_dir(fmt::format("coord-{}", name)); }

using fixture::connect_to;

std::vector<int32_t> ids(const std::vector<broker_info>& v) {
    std::vector<int32_t> out;
    for (auto& b : v) out.push_back(b.id);
    return out;
}

} // namespace

class redis_coordination : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = temp_dir("single");
        auto s = fixture::server::start(dir);
        ASSERT_TRUE(s) << s.error();
        srv = new fixture::server(std::move(*s));
    }
    static void TearDownTestSuite() {
        delete srv;
        fs::remove_all(dir);
    }
    void SetUp() override { ASSERT_TRUE(srv) << "redis-server did not start"; }
    static inline fixture::server* srv = nullptr;
    static inline fs::path dir;
};

TEST_F(redis_coordination, register_broker_chooses_keeps_and_refuses_ids) {
    using reg_t = broker_registry::registration;
    auto ms_since = [](auto t0) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    };
    // Three brokers registering at once, without ids: three distinct ids, the lowest free ones.
    std::vector<std::unique_ptr<redis::client>> clients;
    for (int i = 0; i < 3; ++i) clients.push_back(connect_to(srv->uri()));
    std::vector<std::unique_ptr<broker_registry>> regs(3);
    {
        std::vector<std::thread> ts;
        for (int i = 0; i < 3; ++i)
            ts.emplace_back([&, i] {
                auto r = broker_registry::register_broker(*clients[size_t(i)], "auto",
                                                          reg_t{std::nullopt, fmt::format("dir{}", i), "L", 1500ms});
                if (r) regs[size_t(i)] = std::move(*r);
            });
        for (auto& t : ts) t.join();
    }
    std::set<int32_t> got;
    for (auto& r : regs) {
        ASSERT_TRUE(r);
        got.insert(r->id());
        r->start(300ms);
    }
    EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2}));
    // The id is kept with the directory's token.
    const int32_t id1 = regs[1]->id();
    EXPECT_EQ(srv->raw({"HGET", "auto{auto.brokers}.bindings", "dir1"})->str(), std::to_string(id1));
    // dir1's broker crashes (no leave): restarted, it takes its id back once its old entry is
    // seen not to move (half the ttl), long before the entry expires.
    regs[1]->stop();
    auto t0 = std::chrono::steady_clock::now();
    auto back = broker_registry::register_broker(*clients[1], "auto", reg_t{std::nullopt, "dir1", "L", 1500ms});
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ((*back)->id(), id1);
    EXPECT_LT(ms_since(t0), 1400ms);
    (*back)->start(300ms);
    // An explicit id a live broker of another directory has: refused at once.
    auto c = connect_to(srv->uri());
    t0 = std::chrono::steady_clock::now();
    auto dup = broker_registry::register_broker(*c, "auto", reg_t{regs[0]->id(), "dirX", "L", 1500ms});
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error().code(), errc::already_exists) << dup.error();
    EXPECT_LT(ms_since(t0), 200ms);
    // A copy of dir0 (same token) while dir0's broker heartbeats: refused, with or without id.
    auto copy = broker_registry::register_broker(*c, "auto", reg_t{std::nullopt, "dir0", "L", 1500ms});
    ASSERT_FALSE(copy);
    EXPECT_EQ(copy.error().code(), errc::conflict) << copy.error();
    auto copy9 = broker_registry::register_broker(*c, "auto", reg_t{9, "dir0", "L", 1500ms});
    ASSERT_FALSE(copy9);
    EXPECT_EQ(copy9.error().code(), errc::conflict) << copy9.error();
    // An explicit free id works; the next broker without id takes the lowest free one.
    auto seven = broker_registry::register_broker(*c, "auto", reg_t{7, "dirY", "L", 1500ms});
    ASSERT_TRUE(seven) << seven.error();
    EXPECT_EQ((*seven)->id(), 7);
    auto c2 = connect_to(srv->uri());
    auto next = broker_registry::register_broker(*c2, "auto", reg_t{std::nullopt, "dirZ", "L", 1500ms});
    ASSERT_TRUE(next) << next.error();
    EXPECT_EQ((*next)->id(), 3);
    (*seven)->heartbeat().value();
    EXPECT_EQ(ids(*(*next)->live()), (std::vector<int32_t>{0, 1, 2, 3, 7}));
    // With its place (host and path; the caller holds the directory's lock), a broker restarted
    // after a crash takes its id back at once: the live entry is its own previous life.
    auto cp = connect_to(srv->uri());
    auto placed = broker_registry::register_broker(*cp, "auto", reg_t{std::nullopt, "dirP", "L", 1500ms, "h1:/p"});
    ASSERT_TRUE(placed) << placed.error();
    EXPECT_EQ((*placed)->id(), 4);
    (*placed)->start(300ms);
    std::this_thread::sleep_for(400ms);
    (*placed)->stop(); // kill -9: no leave
    t0 = std::chrono::steady_clock::now();
    auto again = broker_registry::register_broker(*cp, "auto", reg_t{std::nullopt, "dirP", "L", 1500ms, "h1:/p"});
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ((*again)->id(), 4);
    EXPECT_LT(ms_since(t0), 200ms);
    (*again)->start(300ms);
    // The same token from another place while it heartbeats: a copy, refused.
    auto elsewhere = broker_registry::register_broker(*c2, "auto", reg_t{std::nullopt, "dirP", "L", 1500ms, "h2:/p"});
    ASSERT_FALSE(elsewhere);
    EXPECT_EQ(elsewhere.error().code(), errc::conflict) << elsewhere.error();
    // The previous life's heartbeats are refused now (its token no longer holds id 4).
    EXPECT_FALSE((*placed)->heartbeat());
    for (auto& r : regs)
        if (r) r->stop();
    (*back)->stop();
    (*again)->stop();
}

TEST_F(redis_coordination, registry_lists_live_brokers_and_drops_dead_ones) {
    // Three brokers, each with its own client (as three processes would have).
    auto c0 = connect_to(srv->uri()), c1 = connect_to(srv->uri()), c2 = connect_to(srv->uri());
    auto r0 = broker_registry::create(*c0, "reg", 0, "PLAINTEXT://127.0.0.1:9092", 1500ms);
    auto r1 = broker_registry::create(*c1, "reg", 1, "PLAINTEXT://127.0.0.1:9093", 1500ms);
    auto r2 = broker_registry::create(*c2, "reg", 2, "PLAINTEXT://127.0.0.1:9094", 1500ms);
    ASSERT_TRUE(r0 && r1 && r2);
    (*r0)->start(300ms);
    (*r1)->start(300ms);
    (*r2)->start(300ms);
    std::vector<broker_info> live;
    for (int i = 0; i < 50 && live.size() < 3; ++i) {
        live = *(*r0)->live();
        std::this_thread::sleep_for(20ms);
    }
    ASSERT_EQ(ids(live), (std::vector<int32_t>{0, 1, 2}));
    EXPECT_EQ(live[1].listeners, "PLAINTEXT://127.0.0.1:9093");
    // The keys are plain Redis data a tool can read.
    EXPECT_EQ(srv->raw({"ZCARD", "reg{reg.brokers}.expiry"})->integer(), 3);
    // A second live process cannot take id 1.
    auto c3 = connect_to(srv->uri());
    auto impostor = broker_registry::create(*c3, "reg", 1, "PLAINTEXT://127.0.0.1:9999", 1500ms);
    ASSERT_TRUE(impostor);
    auto taken = (*impostor)->heartbeat();
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.error().code(), errc::already_exists) << taken.error();
    // The impostor's join waits for the id, and gives up after its limit.
    auto gave_up = (*impostor)->join(300ms);
    ASSERT_FALSE(gave_up);
    EXPECT_EQ(gave_up.error().code(), errc::already_exists);
    // Each heartbeat thread keeps a cached view: after a round all three see all three.
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(ids((*r2)->cached_live()), (std::vector<int32_t>{0, 1, 2}));
    auto gen = (*r0)->generation();
    // Broker 2 dies (heartbeats stop, no leave): gone within the ttl (+ a heartbeat).
    (*r2)->stop();
    auto died = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) {
        live = *(*r1)->live();
        if (live.size() == 2) break;
        std::this_thread::sleep_for(50ms);
    }
    auto gone_after = std::chrono::steady_clock::now() - died;
    ASSERT_EQ(ids(live), (std::vector<int32_t>{0, 1}));
    EXPECT_LT(gone_after, 2500ms);
    // Broker 0's thread notices too, and counts the change.
    for (int i = 0; i < 20 && (*r0)->cached_live().size() != 2; ++i) std::this_thread::sleep_for(50ms);
    EXPECT_EQ(ids((*r0)->cached_live()), (std::vector<int32_t>{0, 1}));
    EXPECT_GT((*r0)->generation(), gen);
    // Pruned from the keys too.
    EXPECT_EQ(srv->raw({"HEXISTS", "reg{reg.brokers}.listeners", "2"})->integer(), 0);
    // Broker 0 leaves cleanly: gone at once. The impostor can now take id 2's place... and id 0.
    (*r0)->stop();
    ASSERT_TRUE((*r0)->leave());
    EXPECT_EQ(ids(*(*r1)->live()), (std::vector<int32_t>{1}));
    // A restarted broker 2 (new process token) registers again.
    auto again = broker_registry::create(*c2, "reg", 2, "PLAINTEXT://127.0.0.1:9094", 1500ms);
    ASSERT_TRUE((*again)->heartbeat());
    (*again)->start(300ms);
    EXPECT_EQ(ids(*(*r1)->live()), (std::vector<int32_t>{1, 2}));
    // Broker 1 crashes and restarts at once: with a fresh token it waits for its old entry to
    // expire (join), with its kept token it is back at once.
    (*r1)->stop();
    auto kept = broker_registry::create(*c1, "reg", 3, "L3", 1500ms, "token-of-3");
    ASSERT_TRUE((*kept)->heartbeat());
    auto kept_restarted = broker_registry::create(*c3, "reg", 3, "L3b", 1500ms, "token-of-3");
    ASSERT_TRUE((*kept_restarted)->heartbeat());
    (*kept_restarted)->start(300ms);
    auto fresh = broker_registry::create(*c3, "reg", 1, "L1b", 1500ms);
    auto t0 = std::chrono::steady_clock::now();
    auto joined = (*fresh)->join(5000ms);
    ASSERT_TRUE(joined) << joined.error();
    EXPECT_GT(std::chrono::steady_clock::now() - t0, 200ms);
    auto now_live = *(*fresh)->live();
    ASSERT_EQ(ids(now_live), (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(now_live[0].listeners, "L1b");
    EXPECT_EQ(now_live[2].listeners, "L3b");
    EXPECT_FALSE(broker_registry::create(*c3, "a{b", 1, "x", 1500ms));
    EXPECT_EQ((*r1)->heartbeat_failures(), 0u);
}

TEST_F(redis_coordination, leases_fence_with_increasing_epochs) {
    auto c = connect_to(srv->uri());
    auto lm = lease_manager::create(*c);
    ASSERT_TRUE(lm) << lm.error();
    auto& m = **lm;
    const std::string key = "ns{orders.0}.lease.offload";
    auto a = m.try_acquire(key, "broker-a", 1200ms);
    ASSERT_TRUE(a && *a) << (a ? "held" : a.error().to_string());
    EXPECT_EQ((*a)->epoch, 1);
    // Held: b cannot take it.
    auto b = m.try_acquire(key, "broker-b", 1200ms);
    ASSERT_TRUE(b);
    EXPECT_FALSE(*b);
    // a renews (same epoch), and acquiring again while holding keeps the epoch.
    auto renewed = m.renew(**a, 1200ms);
    ASSERT_TRUE(renewed) << renewed.error();
    EXPECT_EQ(renewed->epoch, 1);
    auto again = m.try_acquire(key, "broker-a", 1200ms);
    EXPECT_EQ((*again)->epoch, 1);
    auto st = m.get(key);
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->held());
    EXPECT_EQ(st->holder, "broker-a");
    // a stops renewing (it died); after the ttl b steals it with a higher epoch.
    std::this_thread::sleep_for(1300ms);
    EXPECT_FALSE(m.get(key)->held());
    auto stolen = m.try_acquire(key, "broker-b", 1200ms);
    ASSERT_TRUE(stolen && *stolen);
    EXPECT_EQ((*stolen)->epoch, 2);
    // a comes back: its renew and release are refused / ignored; b keeps the lease.
    auto late = m.renew(**a, 1200ms);
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code(), errc::conflict) << late.error();
    ASSERT_TRUE(m.release(**a));
    EXPECT_EQ(m.get(key)->holder, "broker-b");
    // b releases; a takes it again with a new epoch.
    ASSERT_TRUE(m.release(**stolen));
    EXPECT_FALSE(m.get(key)->held());
    auto back = m.try_acquire(key, "broker-a", 1200ms);
    ASSERT_TRUE(back && *back);
    EXPECT_EQ((*back)->epoch, 3);
    // The lease is a plain hash a Redis function of the caller can check atomically.
    EXPECT_EQ(srv->raw({"HGET", key, "epoch"})->str(), "3");
    // Bad input: clear errors, nothing written.
    EXPECT_EQ(m.try_acquire(key, "", 1200ms).error().code(), errc::invalid_argument);
    EXPECT_EQ(m.try_acquire(key, "x", 0ms).error().code(), errc::invalid_argument);
}

TEST_F(redis_coordination, concurrent_acquirers_one_winner_per_epoch) {
    // Eight "brokers" race for the same lease repeatedly; each epoch has exactly one holder.
    const std::string key = "ns{race}.lease";
    std::mutex mu;
    std::map<int64_t, std::set<std::string>> holders_by_epoch;
    std::vector<std::thread> ts;
    std::atomic<int> errors{0};
    for (int t = 0; t < 8; ++t)
        ts.emplace_back([&, t] {
            auto c = connect_to(srv->uri());
            auto lm = lease_manager::create(*c);
            if (!lm) {
                ++errors;
                return;
            }
            auto me = fmt::format("b{}", t);
            for (int i = 0; i < 40; ++i) {
                auto l = (*lm)->try_acquire(key, me, 30ms);
                if (!l) {
                    ++errors;
                    continue;
                }
                if (*l) {
                    {
                        std::lock_guard lk(mu);
                        holders_by_epoch[(*l)->epoch].insert(me);
                    }
                    // Usually give it up; sometimes let it expire (a holder that died).
                    if (i % 3 != 0 && !(*lm)->release(**l)) ++errors;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(3 + t));
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_GT(holders_by_epoch.size(), 20u);
    for (auto& [epoch, holders] : holders_by_epoch) EXPECT_EQ(holders.size(), 1u) << "epoch " << epoch;
}

TEST(redis_coordination_cluster, registry_and_leases_on_a_cluster) {
    auto dir = temp_dir("cluster");
    auto cl = fixture::cluster::start(dir);
    ASSERT_TRUE(cl) << cl.error();
    auto c = connect_to(cl->uris());
    ASSERT_TRUE(c->is_cluster());
    auto lm = lease_manager::create(*c);
    ASSERT_TRUE(lm) << lm.error();
    // Leases in many slots (one per partition), spread over the masters.
    std::set<std::string> nodes;
    for (int p = 0; p < 30; ++p) {
        auto key = fmt::format("ns{{t.{}}}.lease", p);
        nodes.insert(c->node_for(key));
        auto l = (*lm)->try_acquire(key, "b0", 5000ms);
        ASSERT_TRUE(l && *l) << key;
        EXPECT_EQ((*l)->epoch, 1);
        EXPECT_FALSE(*(*lm)->try_acquire(key, "b1", 5000ms));
    }
    EXPECT_EQ(nodes.size(), 3u);
    auto reg = broker_registry::create(*c, "ns", 7, "PLAINTEXT://h:1", 2000ms);
    ASSERT_TRUE(reg);
    ASSERT_TRUE((*reg)->heartbeat());
    auto live = (*reg)->live();
    ASSERT_TRUE(live) << live.error();
    EXPECT_EQ(ids(*live), (std::vector<int32_t>{7}));
    fs::remove_all(dir);
}
