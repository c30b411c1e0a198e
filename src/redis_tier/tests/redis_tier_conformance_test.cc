// The local-tier conformance suite on the Redis Streams tier, against a real redis-server
// started on loopback in a temporary directory, and against a real three-master Redis Cluster
// (one server / cluster for the binary, one namespace per test so tests never see each other's
// keys).

#include "log/batch_builder.h"
#include "log/records.h"
#include "log/testing/local_tier_conformance.h"
#include "redis/coordination.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"
#include "redis/slot.h"

#include <atomic>
#include <cstdlib>
#include <thread>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;

namespace {

struct shared_server {
    std::filesystem::path dir;
    std::optional<redis::fixture::server> server;
    std::string error;

    shared_server() {
        char tmpl[] = "/tmp/floe-redis-tier-XXXXXX";
        if (!::mkdtemp(tmpl)) {
            error = "mkdtemp failed";
            return;
        }
        dir = tmpl;
        auto s = redis::fixture::server::start(dir);
        if (!s) error = s.error().message();
        else server.emplace(std::move(*s));
    }
    ~shared_server() {
        server.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

shared_server& the_server() {
    static shared_server s;
    return s;
}

struct shared_cluster {
    std::filesystem::path dir;
    std::optional<redis::fixture::cluster> cluster;
    std::string error;

    shared_cluster() {
        char tmpl[] = "/tmp/floe-redis-tier-cluster-XXXXXX";
        if (!::mkdtemp(tmpl)) {
            error = "mkdtemp failed";
            return;
        }
        dir = tmpl;
        auto c = redis::fixture::cluster::start(dir);
        if (!c) error = c.error().message();
        else cluster.emplace(std::move(*c));
    }
    ~shared_cluster() {
        cluster.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

shared_cluster& the_cluster() {
    static shared_cluster c;
    return c;
}

class redis_store : public conformance_store {
public:
    explicit redis_store(std::string uris) : _uris(std::move(uris)) {
        static std::atomic<int> n{0};
        _ns = fmt::format("conf{}", n++);
    }
    result<std::unique_ptr<local_tier>> open(const config_map& topic_defaults) override {
        return open_with(topic_defaults, {});
    }
    result<std::unique_ptr<local_tier>> open_with(const config_map& topic_defaults, topic_capabilities caps) {
        redis_tier::options o;
        o.capabilities = caps;
        o.redis = FLOE_TRY(redis::parse_uris(_uris, "floe.local.redis.uri"));
        o.ns = _ns;
        o.topic_defaults = topic_defaults;
        o.log_dir = "/nonexistent";
        return redis_tier::open(std::move(o));
    }
    const std::string& ns() const { return _ns; }

private:
    std::string _uris;
    std::string _ns;
};

const std::string& store_ns(const redis_store& s) { return s.ns(); }

} // namespace

INSTANTIATE_TEST_SUITE_P(
    redis, local_tier_conformance,
    ::testing::Values(conformance_param{"redis",
                                        [](std::string& why) -> std::unique_ptr<conformance_store> {
                                            auto& s = the_server();
                                            if (!s.server) {
                                                why = "redis-server: " + s.error;
                                                return nullptr;
                                            }
                                            return std::make_unique<redis_store>(s.server->uri());
                                        }},
                      conformance_param{"redis_cluster",
                                        [](std::string& why) -> std::unique_ptr<conformance_store> {
                                            auto& c = the_cluster();
                                            if (!c.cluster) {
                                                why = "redis cluster: " + c.error;
                                                return nullptr;
                                            }
                                            return std::make_unique<redis_store>(c.cluster->uris());
                                        }}),
    conformance_param_name);

// Beyond the conformance suite: what the Redis tier refuses. Compacted topics need the log
// cleaner, which works on segment files only: every way to get cleanup.policy=compact is refused
// with errc::unsupported naming the policy and the tier, and nothing is created or changed.
TEST(redis_tier_refusals, compacted_topics_are_refused_everywhere) {
    auto& s = the_server();
    ASSERT_TRUE(s.server) << s.error;
    redis_store store(s.server->uri());
    auto tier = store.open({});
    ASSERT_TRUE(tier) << tier.error();
    auto& t = **tier;
    for (auto policy : {"compact", "compact,delete"}) {
        auto c = t.create_topic("compacted", 1, {{"cleanup.policy", policy}});
        ASSERT_FALSE(c);
        EXPECT_EQ(c.error().code(), errc::unsupported);
        EXPECT_NE(c.error().message().find("floe.local.type=redis"), std::string::npos) << c.error().message();
        EXPECT_NE(c.error().message().find("cleanup.policy"), std::string::npos) << c.error().message();
    }
    EXPECT_FALSE(t.topic("compacted"));
    ASSERT_TRUE(t.create_topic("plain", 1, {{"cleanup.policy", "delete"}}));
    auto a = t.alter_topic_config("plain", {{"cleanup.policy", "compact"}});
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code(), errc::unsupported);
    config_op op{"cleanup.policy", config_op::kind::set, "compact"};
    auto ia = t.incremental_alter_topic_config("plain", std::span<const config_op>(&op, 1));
    ASSERT_FALSE(ia);
    EXPECT_EQ(ia.error().code(), errc::unsupported);
    EXPECT_EQ(t.topic("plain")->config.cleanup_policy, "delete");
    auto d = t.set_dynamic_topic_defaults({{"cleanup.policy", "compact"}});
    ASSERT_FALSE(d);
    EXPECT_TRUE(t.dynamic_topic_defaults().empty());
    ASSERT_TRUE(t.close());
    // As a start-up default: the tier does not open, and says which setting.
    auto bad = store.open({{"cleanup.policy", "compact"}});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("floe.topic-defaults"), std::string::npos) << bad.error().message();
}

// Encrypted tables need a key provider on the broker: without one every way to ask for
// floe.iceberg.encryption is refused naming floe.encryption.provider (issue 30).
TEST(redis_tier_refusals, encrypted_topics_need_a_key_provider) {
    auto& s = the_server();
    ASSERT_TRUE(s.server) << s.error;
    redis_store store(s.server->uri());
    {
        auto tier = store.open({});
        ASSERT_TRUE(tier) << tier.error();
        auto& t = **tier;
        auto c = t.create_topic("secret", 1, {{"floe.iceberg.encryption", "uniform"}});
        ASSERT_FALSE(c);
        EXPECT_NE(c.error().message().find("floe.encryption.provider"), std::string::npos) << c.error().message();
        EXPECT_FALSE(t.topic("secret"));
        ASSERT_TRUE(t.create_topic("plain", 1, {}));
        EXPECT_FALSE(t.alter_topic_config("plain", {{"floe.iceberg.encryption", "uniform"}}));
        EXPECT_FALSE(t.set_dynamic_topic_defaults({{"floe.iceberg.encryption", "uniform"}}));
        EXPECT_FALSE(t.topic("plain")->config.encrypted());
        ASSERT_TRUE(t.close());
    }
    auto tier = store.open_with({}, {.key_provider = true, .lake_encrypts = true});
    ASSERT_TRUE(tier) << tier.error();
    auto c = (*tier)->create_topic("secret", 1, {{"floe.iceberg.encryption", "uniform"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_TRUE(c->config.encrypted());
    auto a = (*tier)->alter_topic_config("plain", {{"floe.iceberg.encryption", "columns"},
                                                   {"floe.iceberg.encryption.columns", "value"}});
    ASSERT_TRUE(a) << a.error();
    EXPECT_EQ(a->config.encrypted_columns(), std::vector<std::string>{"value"});
    ASSERT_TRUE((*tier)->close());
}

// The storage worker's partition lease and the tier's fencing (log::offload_fence): the lease
// hash lives in the partition's slot (redis_tier::offload_lease_key), and the marker and trim
// functions run only while the caller's epoch is the lease's current one, on one Redis and on
// a three-master Redis Cluster.

namespace {

class offload_fence_test : public ::testing::TestWithParam<bool> {
protected:
    std::string uris(std::string& why) {
        if (GetParam()) {
            auto& c = the_cluster();
            if (!c.cluster) why = "redis cluster: " + c.error;
            return c.cluster ? c.cluster->uris() : "";
        }
        auto& s = the_server();
        if (!s.server) why = "redis-server: " + s.error;
        return s.server ? s.server->uri() : "";
    }
};

void append_records(local_partition& p, int64_t first, int n) {
    log::batch_builder b;
    byte_buffer buf;
    b.begin(0);
    for (int i = 0; i < n; ++i) {
        auto v = fmt::format("value-{}", first + i);
        b.add(i, 1000 + first + i, std::string_view("k"), std::string_view(v)); // old timestamps: due for retention
    }
    ASSERT_TRUE(b.finish(buf));
    auto r = p.append(std::span<uint8_t>(buf.data(), buf.size()));
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, append_status::ok);
}

TEST_P(offload_fence_test, a_stale_epoch_moves_no_marker_and_trims_nothing) {
    std::string why;
    auto u = uris(why);
    ASSERT_FALSE(u.empty()) << why;
    redis_store store(u);
    auto tier = store.open({});
    ASSERT_TRUE(tier) << tier.error();
    ASSERT_TRUE((*tier)->create_topic("fenced", 1, {{"remote.storage.enable", "true"}, {"local.retention.ms", "1"}}));
    auto p = (*tier)->partition("fenced", 0);
    ASSERT_TRUE(p);
    for (int s = 0; s < 4; ++s) {
        append_records(*p, s * 10, 10);
        ASSERT_TRUE(p->roll());
    }
    auto sealed = p->sealed_segments();
    ASSERT_EQ(sealed.size(), 4u);

    auto opts = redis::parse_uris(u, "uri");
    ASSERT_TRUE(opts);
    auto c = redis::client::connect(*opts);
    ASSERT_TRUE(c) << c.error();
    auto leases = redis::lease_manager::create(**c);
    ASSERT_TRUE(leases) << leases.error();
    auto key = redis_tier::offload_lease_key(store.ns(), "fenced", 0);
    EXPECT_EQ(redis::key_slot(key), redis::key_slot(redis_tier::partition_tag(store.ns(), "fenced", 0) + ":meta"));

    // No lease taken yet: epoch 0 is current, any other is refused.
    auto none = p->set_offloaded_up_to(sealed[0].next_offset, 1);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), errc::conflict) << none.error();
    EXPECT_EQ(p->offloaded_up_to()(), 0);

    // Broker A takes the lease (short ttl), renews it, moves the marker under its epoch.
    auto ttl = std::chrono::milliseconds(400);
    auto a = (*leases)->try_acquire(key, "broker-a", ttl);
    ASSERT_TRUE(a && *a) << (a ? "held" : a.error().message());
    const int64_t ea = (*a)->epoch;
    EXPECT_GE(ea, 1);
    ASSERT_TRUE(p->set_offloaded_up_to(sealed[0].next_offset, ea));
    EXPECT_EQ(p->offloaded_up_to(), sealed[0].next_offset);
    auto renewed = (*leases)->renew(**a, ttl);
    ASSERT_TRUE(renewed) << renewed.error();
    EXPECT_EQ(renewed->epoch, ea);
    // While A holds it, B cannot take it.
    auto b_early = (*leases)->try_acquire(key, "broker-b", ttl);
    ASSERT_TRUE(b_early);
    EXPECT_FALSE(*b_early);

    // A pauses past its lease; B takes it over with a higher epoch.
    std::this_thread::sleep_for(ttl + std::chrono::milliseconds(200));
    auto b = (*leases)->try_acquire(key, "broker-b", std::chrono::seconds(30));
    ASSERT_TRUE(b && *b);
    const int64_t eb = (*b)->epoch;
    EXPECT_GT(eb, ea);
    auto lost = (*leases)->renew(*renewed, ttl);
    ASSERT_FALSE(lost);
    EXPECT_EQ(lost.error().code(), errc::conflict);

    // A, resuming, can neither move the marker, rewind it, nor trim.
    auto stale = p->set_offloaded_up_to(sealed[2].next_offset, ea);
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), errc::conflict) << stale.error();
    EXPECT_NE(stale.error().message().find("not the current lease epoch"), std::string::npos) << stale.error();
    EXPECT_EQ(p->offloaded_up_to(), sealed[0].next_offset);
    auto stale_rewind = p->rewind_offloaded_up_to(kafka_offset(0), ea);
    ASSERT_FALSE(stale_rewind);
    EXPECT_EQ(stale_rewind.error().code(), errc::conflict);
    EXPECT_EQ(p->offloaded_up_to(), sealed[0].next_offset);
    auto stale_trim = p->apply_retention(sealed[0].next_offset, ea);
    ASSERT_FALSE(stale_trim);
    EXPECT_EQ(stale_trim.error().code(), errc::conflict);
    EXPECT_EQ(p->log_start_offset()(), 0) << "a fenced trim removed nothing";

    // B, the holder, does both.
    ASSERT_TRUE(p->set_offloaded_up_to(sealed[1].next_offset, eb));
    EXPECT_EQ(p->offloaded_up_to(), sealed[1].next_offset);
    auto trimmed = p->apply_retention(sealed[1].next_offset, eb);
    ASSERT_TRUE(trimmed) << trimmed.error();
    EXPECT_EQ(trimmed->size(), 2u);
    EXPECT_EQ(p->log_start_offset(), sealed[1].next_offset);
    // A released-and-retaken lease gets a new epoch again: B's old one is then stale too.
    ASSERT_TRUE((*leases)->release(**b));
    auto a2 = (*leases)->try_acquire(key, "broker-a", ttl);
    ASSERT_TRUE(a2 && *a2);
    EXPECT_GT((*a2)->epoch, eb);
    EXPECT_EQ(p->set_offloaded_up_to(sealed[2].next_offset, eb).error().code(), errc::conflict);
    ASSERT_TRUE(p->set_offloaded_up_to(sealed[2].next_offset, (*a2)->epoch));
    // Unfenced writes (the embedded log's way) still work.
    ASSERT_TRUE(p->set_offloaded_up_to(sealed[3].next_offset));
    EXPECT_EQ(p->offloaded_up_to(), sealed[3].next_offset);
    ASSERT_TRUE((*tier)->close());
}

INSTANTIATE_TEST_SUITE_P(redis, offload_fence_test, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "cluster" : "single"); });

} // namespace
// One produce request of several batches, each compressed with another codec: the append passes
// values as views into each batch's decompressed bytes, so all of them must stay valid until
// the one server call. Every record comes back through read() and through a plain XRANGE, with
// null keys and values, headers (null values too), binary bytes and a value larger than one
// socket read.
TEST(redis_tier_append, compressed_multi_batch_request_round_trips) {
    auto& s = the_server();
    ASSERT_TRUE(s.server) << s.error;
    redis_store store(s.server->uri());
    auto tier = store.open({});
    ASSERT_TRUE(tier) << tier.error();
    ASSERT_TRUE((*tier)->create_topic("codecs", 1));
    auto p = (*tier)->partition("codecs", 0);
    ASSERT_TRUE(p);
    struct rec {
        std::optional<std::string> key, value;
        std::vector<std::pair<std::string, std::optional<std::string>>> headers;
        int64_t ts;
    };
    std::vector<rec> want;
    byte_buffer request;
    int64_t i = 0;
    for (auto codec : {compression_codec::gzip, compression_codec::snappy, compression_codec::lz4,
                       compression_codec::zstd, compression_codec::none}) {
        batch_builder b;
        b.begin(0, codec);
        for (int k = 0; k < 40; ++k, ++i) {
            rec r;
            if (i % 7 != 3) r.key = fmt::format("key-{}", i);
            if (i % 11 != 5) r.value = fmt::format("value {} ", i) + std::string(size_t(i % 13) * 10, char('a' + i % 26));
            if (i == 17) r.value = std::string("bin\r\n\0\xff", 7);
            if (i == 90) r.value = std::string(300000, 'L');
            if (i % 5 == 0) r.headers = {{"h1", "v1"}, {"nul", std::nullopt}, {"", std::string("\0x", 2)}};
            r.ts = 1700000000000 + i * 3;
            std::vector<batch_builder::header> hs;
            for (auto& [hk, hv] : r.headers) hs.push_back({hk, hv ? std::optional<std::string_view>(*hv) : std::nullopt});
            auto opt = [](const std::optional<std::string>& x) {
                return x ? std::optional<std::string_view>(*x) : std::nullopt;
            };
            b.add(k, r.ts, opt(r.key), opt(r.value), hs);
            want.push_back(std::move(r));
        }
        ASSERT_TRUE(b.finish(request));
    }
    auto a = p->append(std::span<uint8_t>(request.data(), request.size()), {.crc_checked = false});
    ASSERT_TRUE(a) << a.error();
    ASSERT_EQ(a->status, append_status::ok) << a->message;
    EXPECT_EQ(a->base_offset(), 0);
    EXPECT_EQ(a->last_offset(), int64_t(want.size()) - 1);
    // Back through read(), in answers of 64 KiB.
    std::vector<rec> got;
    std::vector<header_view> hs;
    for (int64_t next = 0; next < int64_t(want.size());) {
        auto rd = p->read(kafka_offset(next), {.max_bytes = 64 << 10});
        ASSERT_TRUE(rd) << rd.error();
        ASSERT_FALSE(rd->slices.empty());
        byte_buffer bytes;
        ASSERT_TRUE(rd->copy_to(bytes));
        auto walked = for_each_batch(bytes_view(bytes), true, [&](const record_batch_header& h, bytes_view bb) {
            auto ok = for_each_record_body(h, bb.subspan(batch_layout::header_size), [&](int32_t, bytes_view body) -> result<void> {
                auto v = FLOE_TRY(decode_record(h, body, hs));
                EXPECT_EQ(v.offset, int64_t(got.size()));
                rec r;
                if (v.key) r.key = std::string(*v.key);
                if (v.value) r.value = std::string(*v.value);
                for (auto& x : hs) r.headers.emplace_back(std::string(x.key), x.value ? std::optional<std::string>(*x.value) : std::nullopt);
                r.ts = v.timestamp;
                got.push_back(std::move(r));
                return {};
            });
            EXPECT_TRUE(ok) << ok.error();
            return true;
        });
        ASSERT_TRUE(walked) << walked.error();
        next = rd->slices.back().last_offset() + 1;
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(got[k].key, want[k].key) << k;
        EXPECT_EQ(got[k].value, want[k].value) << k;
        EXPECT_EQ(got[k].headers, want[k].headers) << k;
        EXPECT_EQ(got[k].ts, want[k].ts) << k;
    }
    // A plain Redis client sees the same values, one entry per record.
    auto x = s.server->raw({"XRANGE", fmt::format("{{{}:codecs:0}}:stream", store_ns(store)), "-", "+"});
    ASSERT_TRUE(x) << x.error();
    ASSERT_EQ(x->size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        std::optional<std::string> value;
        auto& f = (*x)[k][1];
        for (size_t j = 0; j + 1 < f.size(); j += 2)
            if (f[j].str() == "value") value = f[j + 1].str();
        EXPECT_EQ(value, want[k].value) << k;
    }
    ASSERT_TRUE((*tier)->close());
}
