// The storage worker with per-partition leases in Redis (redis_partition_leases over a real
// redis-server, the Redis local tier, a real Iceberg table on a SQLite catalog): two brokers'
// workers spread the partitions by rendezvous and each offloads its own; a broker that stops
// (its registry heartbeat and its worker paused) loses its partitions to the other after the
// lease duration, and when it resumes it does nothing; a lease taken away in the middle of an
// offload stops that offload at once: the fenced marker does not move, and the next holder
// marks what was committed without adding a row twice.
#include "app/offload_leases.h"
#include "lake/iceberg_lake.h"
#include "lake/table_reader.h"
#include "log/batch_builder.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"
#include "tiering/storage_worker.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <thread>

namespace floe::app {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A broker's registry (joined, heartbeating with a ttl of half the lease) and its partition
/// leases over it, as serve wires them through the cluster's registry.
struct wiring {
    std::unique_ptr<redis::broker_registry> registry;
    std::unique_ptr<redis_partition_leases> leases;
};
result<wiring> wire(redis::client& c, const std::string& ns, int32_t id, const std::string& listeners,
                    const std::string& holder, std::chrono::milliseconds lease) {
    wiring w;
    auto ttl = lease / 2;
    w.registry = FLOE_TRY(redis::broker_registry::create(c, ns, id, listeners, ttl));
    FLOE_TRY(w.registry->join(ttl + std::chrono::seconds(1)));
    w.registry->start(ttl / 3);
    w.leases = FLOE_TRY(redis_partition_leases::create(c, ns, w.registry.get(), id, holder, lease));
    return w;
}

/// Runs `hook` before each begin_append of the wrapped lake's tables (fault injection).
class hooked_table final : public lake::table_writer {
public:
    hooked_table(std::shared_ptr<lake::table_writer> in, std::function<void()>& hook) : _in(std::move(in)), _hook(hook) {}
    result<lake::position_map> committed_positions() override { return _in->committed_positions(); }
    result<std::unique_ptr<lake::append>> begin_append(const lake::value_decoding& d) override {
        if (_hook) _hook();
        return _in->begin_append(d);
    }
    result<std::unique_ptr<lake::append>> begin_rewrite(std::vector<std::string> r) override {
        return _in->begin_rewrite(std::move(r));
    }
    result<size_t> expire_before(int64_t cutoff_ms) override { return _in->expire_before(cutoff_ms); }
    const std::string& table_name() const override { return _in->table_name(); }
    std::string location() const override { return _in->location(); }

private:
    std::shared_ptr<lake::table_writer> _in;
    std::function<void()>& _hook;
};

class hooked_lake final : public ::floe::lake::lake {
public:
    explicit hooked_lake(::floe::lake::lake& in) : _in(in) {}
    result<std::shared_ptr<::floe::lake::table_writer>> table_for_topic(const std::string& topic) override {
        auto t = FLOE_TRY(_in.table_for_topic(topic));
        return std::shared_ptr<::floe::lake::table_writer>(std::make_shared<hooked_table>(std::move(t), hook));
    }
    std::function<void()> hook;

private:
    ::floe::lake::lake& _in;
};

struct env {
    fs::path dir = redis::fixture::fresh_dir("offload-leases");
    std::optional<redis::fixture::server> server;
    std::shared_ptr<redis::client> client;
    std::unique_ptr<log::local_tier> tier;
    std::unique_ptr<lake::iceberg_lake> lake;
    std::string ns = "lt";

    void SetUp() {
        auto s = redis::fixture::server::start(dir / "redis");
        ASSERT_TRUE(s) << s.error();
        server.emplace(std::move(*s));
        auto o = redis::parse_uris(server->uri(), "uri");
        ASSERT_TRUE(o);
        auto c = redis::client::connect(*o);
        ASSERT_TRUE(c) << c.error();
        client = std::shared_ptr<redis::client>(std::move(*c));
        redis_tier::options to;
        to.ns = ns;
        to.log_dir = dir;
        auto t = redis_tier::open(client, to);
        ASSERT_TRUE(t) << t.error();
        tier = std::move(*t);
        auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
        ASSERT_TRUE(cat) << cat.error();
        lake::lake_options lo;
        lo.warehouse = "file://" + (dir / "warehouse").string();
        lake = std::make_unique<lake::iceberg_lake>(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                                                    std::make_shared<iceberg::local_file_io>(), lo);
    }
    ~env() {
        if (tier) (void)tier->close();
        client.reset();
        server.reset();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    /// `segments` sealed segments of 50 records on every partition of `topic`.
    void fill(const std::string& topic, int segments) {
        auto t = tier->topic(topic);
        ASSERT_TRUE(t);
        for (int32_t p = 0; p < t->partitions; ++p) {
            auto part = tier->partition(topic, p);
            for (int s = 0; s < segments; ++s) {
                log::batch_builder b;
                byte_buffer buf;
                b.begin(0);
                for (int i = 0; i < 50; ++i) {
                    auto v = fmt::format("p{}-{}", p, i);
                    b.add(i, system_clock_source::instance().now_ms(), std::string_view("k"), std::string_view(v));
                }
                ASSERT_TRUE(b.finish(buf));
                auto r = part->append(std::span<uint8_t>(buf.data(), buf.size()));
                ASSERT_TRUE(r && r->status == log::append_status::ok);
                ASSERT_TRUE(part->roll());
            }
        }
    }
    bool all_offloaded(const std::string& topic) {
        auto t = tier->topic(topic);
        for (int32_t p = 0; p < t->partitions; ++p) {
            auto part = tier->partition(topic, p);
            if (part->offloaded_up_to() != part->log_end_offset()) return false;
        }
        return true;
    }
    /// Every offset of every partition exactly once in the table.
    void expect_rows_once(const std::string& topic) {
        auto t = tier->topic(topic);
        lake::table_reader tr(*lake, topic);
        for (int32_t p = 0; p < t->partitions; ++p) {
            auto key = fmt::format("{}-{}", topic, p);
            auto files = tr.files_for_offsets(key, 0, INT64_MAX);
            ASSERT_TRUE(files) << files.error();
            std::vector<int64_t> offs;
            for (auto& f : *files) {
                auto rows = tr.read_file(f);
                ASSERT_TRUE(rows) << rows.error();
                for (auto& r : *rows)
                    if (r.stream_key == key) offs.push_back(r.offset);
            }
            std::sort(offs.begin(), offs.end());
            auto end = tier->partition(topic, p)->log_end_offset()();
            ASSERT_EQ(int64_t(offs.size()), end) << key;
            for (int64_t i = 0; i < end; ++i) ASSERT_EQ(offs[size_t(i)], i) << key;
        }
    }
    std::string holder_of(const std::string& topic, int32_t p) {
        auto r = client->command({"HGET", redis_tier::offload_lease_key(ns, topic, p), "holder"});
        return r && r->is_string() ? std::string(r->str()) : std::string();
    }
};

tiering::worker_options fast_worker() {
    tiering::worker_options wo;
    wo.tick_interval = 50ms;
    wo.parallelism = 1;
    wo.max_backoff = 1ms;
    return wo;
}

TEST(offload_leases, spread_takeover_and_a_resumed_holder_does_nothing) {
    env e;
    e.SetUp();
    if (HasFatalFailure()) return;
    const std::string topic = "spread";
    ASSERT_TRUE(e.tier->create_topic(topic, 6, {{"remote.storage.enable", "true"}}));
    e.fill(topic, 2);
    const auto lease = 1500ms;
    auto w1 = wire(*e.client, e.ns, 1, "b1", "broker-1", lease);
    ASSERT_TRUE(w1) << w1.error();
    auto w2 = wire(*e.client, e.ns, 2, "b2", "broker-2", lease);
    ASSERT_TRUE(w2) << w2.error();
    auto reg1 = std::move(w1->registry), reg2 = std::move(w2->registry);
    for (int i = 0; i < 100 && (reg1->cached_live().size() < 2 || reg2->cached_live().size() < 2); ++i)
        std::this_thread::sleep_for(20ms);
    ASSERT_EQ(reg1->cached_live().size(), 2u);
    ASSERT_EQ(reg2->cached_live().size(), 2u);
    std::vector<int32_t> ids{1, 2};
    std::set<int32_t> owned_by_1, owned_by_2;
    for (int32_t p = 0; p < 6; ++p)
        (redis::rendezvous_owner(redis::partition_item(topic, p), ids) == 1 ? owned_by_1 : owned_by_2).insert(p);
    ASSERT_FALSE(owned_by_1.empty());
    ASSERT_FALSE(owned_by_2.empty());

    tiering::storage_worker one(*e.tier, *e.lake, std::move(w1->leases), fast_worker());
    tiering::storage_worker two(*e.tier, *e.lake, std::move(w2->leases), fast_worker());
    size_t segs1 = 0, segs2 = 0;
    for (int i = 0; i < 100 && !e.all_offloaded(topic); ++i) {
        segs1 += one.tick().segments_offloaded;
        segs2 += two.tick().segments_offloaded;
    }
    ASSERT_TRUE(e.all_offloaded(topic));
    EXPECT_EQ(segs1, 2 * owned_by_1.size()) << "broker 1 offloaded exactly its own partitions";
    EXPECT_EQ(segs2, 2 * owned_by_2.size()) << "broker 2 offloaded exactly its own partitions";
    for (int32_t p = 0; p < 6; ++p)
        EXPECT_EQ(e.holder_of(topic, p), owned_by_1.contains(p) ? "broker-1" : "broker-2") << "partition " << p;

    // Broker 2 stops heartbeating and working (as if paused or killed): broker 1 takes its
    // partitions once the leases expire, and offloads what came since.
    reg2->stop();
    e.fill(topic, 1);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200 && !e.all_offloaded(topic); ++i) {
        one.tick();
        std::this_thread::sleep_for(25ms);
    }
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(e.all_offloaded(topic));
    EXPECT_GE(took, lease - 200ms) << "broker 2's leases were still valid for a while";
    for (int32_t p = 0; p < 6; ++p) EXPECT_EQ(e.holder_of(topic, p), "broker-1") << "partition " << p;

    // Broker 2 resumes: its leases are gone, it offloads and trims nothing.
    e.fill(topic, 1);
    std::vector<int64_t> markers;
    for (int32_t p = 0; p < 6; ++p) markers.push_back(e.tier->partition(topic, p)->offloaded_up_to()());
    auto rep = two.tick();
    EXPECT_EQ(rep.leased, 0u);
    EXPECT_EQ(rep.segments_offloaded, 0u);
    for (int32_t p = 0; p < 6; ++p) EXPECT_EQ(e.tier->partition(topic, p)->offloaded_up_to()(), markers[size_t(p)]);
    for (int i = 0; i < 50 && !e.all_offloaded(topic); ++i) one.tick();
    ASSERT_TRUE(e.all_offloaded(topic));
    e.expect_rows_once(topic);
    one.stop();
    two.stop();
    reg1->stop();
}

TEST(offload_leases, a_lease_lost_mid_offload_stops_it_and_nothing_lands_twice) {
    env e;
    e.SetUp();
    if (HasFatalFailure()) return;
    const std::string topic = "stolen";
    ASSERT_TRUE(e.tier->create_topic(topic, 1, {{"remote.storage.enable", "true"}}));
    e.fill(topic, 3);
    auto leases = redis_partition_leases::create(*e.client, e.ns, nullptr, 1, "broker-1", 30s);
    ASSERT_TRUE(leases) << leases.error();
    hooked_lake hl(*e.lake);
    tiering::storage_worker w(*e.tier, hl, std::move(*leases), fast_worker());
    // While the worker writes its first segment, another broker takes the lease over.
    auto key = redis_tier::offload_lease_key(e.ns, topic, 0);
    int appends = 0;
    hl.hook = [&] {
        if (++appends != 1) return;
        auto r = e.client->command({"HINCRBY", key, "epoch", "1"});
        ASSERT_TRUE(r) << r.error();
        ASSERT_TRUE(e.client->command({"HSET", key, "holder", "thief"}));
    };
    auto p = e.tier->partition(topic, 0);
    auto rep = w.tick();
    EXPECT_EQ(rep.leased, 1u);
    EXPECT_EQ(rep.leases_lost, 1u) << "the fenced marker write told the worker";
    EXPECT_EQ(rep.failures, 0u) << "a lost lease is not a failure of the partition";
    EXPECT_EQ(rep.segments_offloaded, 0u) << "stopped after the first commit, before marking it";
    EXPECT_EQ(p->offloaded_up_to()(), 0) << "the stale epoch moved no marker";
    EXPECT_EQ(e.holder_of(topic, 0), "thief");
    // Held by the thief (unexpired): nothing happens.
    rep = w.tick();
    EXPECT_EQ(rep.leased, 0u);
    EXPECT_EQ(p->offloaded_up_to()(), 0);
    // The thief lets go: the worker takes a new epoch, marks what the table already holds and
    // offloads the rest, each row once.
    ASSERT_TRUE(e.client->command({"HSET", key, "holder", "", "expires", "0"}));
    for (int i = 0; i < 20 && !e.all_offloaded(topic); ++i) w.tick();
    ASSERT_TRUE(e.all_offloaded(topic));
    e.expect_rows_once(topic);
    w.stop();
}

} // namespace
} // namespace floe::app
