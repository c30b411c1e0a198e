// The local-tier conformance suite on the Redis Streams tier, against a real redis-server
// started on loopback in a temporary directory, and against a real three-master Redis Cluster
// (one server / cluster for the binary, one namespace per test so tests never see each other's
// keys).

#include "log/testing/local_tier_conformance.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"

#include <atomic>
#include <cstdlib>

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
        redis_tier::options o;
        o.redis = FLOE_TRY(redis::parse_uris(_uris, "floe.local.redis.uri"));
        o.ns = _ns;
        o.topic_defaults = topic_defaults;
        o.log_dir = "/nonexistent";
        return redis_tier::open(std::move(o));
    }

private:
    std::string _uris;
    std::string _ns;
};

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
