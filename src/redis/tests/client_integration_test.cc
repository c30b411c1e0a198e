// The client against real redis-server processes started here: a single server, and a
// three-master Redis Cluster created with redis-cli --cluster create.
#include "redis/client.h"
#include "redis/slot.h"
#include "redis/testing/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

using namespace floe;
using namespace floe::redis;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(std::string_view name) {
    auto d = fs::temp_directory_path() / fmt::format("floe-redis-{}-{}", name, ::getpid());
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::unique_ptr<client> connect_to(const std::string& uris) {
    auto o = parse_uris(uris);
    EXPECT_TRUE(o) << o.error();
    o->command_timeout = std::chrono::milliseconds(2000);
    o->retry_budget = std::chrono::milliseconds(5000);
    auto c = client::connect(*o);
    EXPECT_TRUE(c) << c.error();
    return c ? std::move(*c) : nullptr;
}

constexpr std::string_view test_library = R"(
redis.register_function('floe_test_incr_by', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)
redis.register_function('floe_test_fail', function(keys, args)
  return redis.error_reply('FLOE_TEST failed on purpose')
end)
)";

} // namespace

class redis_single : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = temp_dir("single");
        auto s = fixture::server::start(dir);
        ASSERT_TRUE(s) << s.error();
        srv = new fixture::server(std::move(*s));
    }
    static void TearDownTestSuite() {
        delete srv;
        srv = nullptr;
        fs::remove_all(dir);
    }
    static inline fixture::server* srv = nullptr;
    static inline fs::path dir;
};

TEST_F(redis_single, commands_replies_and_errors) {
    auto c = connect_to(srv->uri());
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->is_cluster());
    ASSERT_TRUE(c->ping());
    auto set = c->command({"SET", "k1", "v1"});
    ASSERT_TRUE(set) << set.error();
    EXPECT_TRUE(set->is_status());
    auto get = c->command({"GET", "k1"});
    ASSERT_TRUE(get);
    EXPECT_EQ(get->str(), "v1");
    EXPECT_TRUE(c->command({"GET", "missing"})->is_nil());
    EXPECT_EQ(c->command({"INCR", "n"})->integer(), 1);
    std::string binary("a\0b\r\n", 5);
    ASSERT_TRUE(c->command({"SET", "bin", binary}));
    EXPECT_EQ(c->command({"GET", "bin"})->str(), binary);
    auto arr = c->command({"MGET", "k1", "missing"});
    ASSERT_TRUE(arr);
    ASSERT_EQ(arr->size(), 2u);
    EXPECT_EQ((*arr)[0].str(), "v1");
    EXPECT_TRUE((*arr)[1].is_nil());
    auto wrong = c->command({"LPUSH", "k1", "x"});
    ASSERT_FALSE(wrong);
    EXPECT_FALSE(wrong.error().retryable());
    EXPECT_TRUE(server_error_is(wrong.error(), "WRONGTYPE")) << wrong.error();
}

TEST_F(redis_single, pipeline_is_one_round_trip_with_per_command_errors) {
    auto c = connect_to(srv->uri());
    ASSERT_TRUE(c);
    std::vector<std::vector<std::string>> cmds;
    for (int i = 0; i < 100; ++i) cmds.push_back({"XADD", "{p}.s", "*", "i", std::to_string(i)});
    cmds.push_back({"HSET", "{p}.s", "f", "v"}); // WRONGTYPE, but the others ran
    cmds.push_back({"XLEN", "{p}.s"});
    auto r = c->pipeline("{p}", cmds);
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->size(), 102u);
    EXPECT_TRUE((*r)[0].is_string());
    EXPECT_TRUE((*r)[100].is_error());
    EXPECT_EQ((*r)[101].integer(), 100);
}

TEST_F(redis_single, functions_load_once_per_version_and_reload_after_flush) {
    auto c = connect_to(srv->uri());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->load_library("floe_test", test_library, "1"));
    EXPECT_EQ(c->counters().library_loads, 1u);
    ASSERT_TRUE(c->load_library("floe_test", test_library, "1"));
    EXPECT_EQ(c->counters().library_loads, 1u) << "same version must not be loaded again";
    // A second client (another broker) sees the version and does not reload either.
    auto c2 = connect_to(srv->uri());
    ASSERT_TRUE(c2->load_library("floe_test", test_library, "1"));
    EXPECT_EQ(c2->counters().library_loads, 0u);
    ASSERT_TRUE(c->load_library("floe_test", test_library, "2"));
    EXPECT_EQ(c->counters().library_loads, 2u);
    auto r = c->fcall("floe_test_incr_by", {"{f}.n"}, {"5"});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->integer(), 5);
    auto e = c->fcall("floe_test_fail", {"{f}.n"}, {});
    ASSERT_FALSE(e);
    EXPECT_TRUE(server_error_is(e.error(), "FLOE_TEST")) << e.error();
    // Functions gone (a restarted server without persistence): fcall reloads and succeeds.
    ASSERT_TRUE(srv->raw({"FUNCTION", "FLUSH"}));
    auto again = c->fcall("floe_test_incr_by", {"{f}.n"}, {"1"});
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->integer(), 6);
    auto unknown = c->fcall("no_such_function", {"{f}.n"}, {});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code(), errc::not_found);
}

TEST_F(redis_single, many_threads_share_the_pool) {
    auto o = parse_uris(srv->uri());
    o->pool_size = 3;
    auto c = client::connect(*o);
    ASSERT_TRUE(c);
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < 200; ++i)
                if (!(*c)->command({"INCR", "{mt}.n"})) ++failures;
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ((*c)->command({"GET", "{mt}.n"})->str(), "1600");
    // The pool's 3, plus the probe connection that detected the mode at connect.
    EXPECT_LE((*c)->counters().connections, 3u + 1u);
}

TEST_F(redis_single, server_restart_gives_retriable_errors_then_recovers) {
    auto dir2 = temp_dir("restart");
    auto s = fixture::server::start(dir2);
    ASSERT_TRUE(s) << s.error();
    auto o = parse_uris(s->uri());
    o->retry_budget = std::chrono::milliseconds(300);
    o->connect_timeout = std::chrono::milliseconds(300);
    auto c = client::connect(*o);
    ASSERT_TRUE(c) << c.error();
    ASSERT_TRUE((*c)->command({"SET", "a", "1"}));
    s->kill9();
    auto down = (*c)->command({"GET", "a"});
    ASSERT_FALSE(down);
    EXPECT_TRUE(down.error().retryable()) << down.error();
    EXPECT_FALSE((*c)->ping());
    ASSERT_TRUE(s->restart());
    // The pooled connection to the old process is detected dead before use.
    auto up = (*c)->command({"SET", "a", "2"});
    ASSERT_TRUE(up) << up.error();
    EXPECT_TRUE((*c)->ping());
    fs::remove_all(dir2);
}

TEST_F(redis_single, auth_and_db_errors_name_the_problem) {
    auto dir2 = temp_dir("auth");
    auto s = fixture::server::start(dir2, {"--requirepass", "sesame"});
    ASSERT_TRUE(s) << s.error();
    auto bad = client::connect(*parse_uris(fmt::format("redis://:wrong@127.0.0.1:{}", s->port())));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), errc::invalid_argument) << bad.error();
    EXPECT_NE(bad.error().message().find("AUTH"), std::string::npos) << bad.error();
    auto good = client::connect(*parse_uris(fmt::format("redis://:sesame@127.0.0.1:{}/2", s->port())));
    ASSERT_TRUE(good) << good.error();
    ASSERT_TRUE((*good)->command({"SET", "x", "1"}));
    auto in_db2 = s->raw({"AUTH", "sesame"}); // raw opens its own connection: db 0
    (void)in_db2;
    auto nodb = client::connect(*parse_uris(fmt::format("redis://:sesame@127.0.0.1:{}/99", s->port())));
    ASSERT_FALSE(nodb);
    EXPECT_NE(nodb.error().message().find("SELECT"), std::string::npos) << nodb.error();
    fs::remove_all(dir2);
}
