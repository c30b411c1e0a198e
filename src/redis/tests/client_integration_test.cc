// The client against real redis-server processes started here: a single server, and a
// three-master Redis Cluster created with redis-cli --cluster create.
#include "redis/client.h"
#include "redis/slot.h"
#include "redis/testing/server.h"
#include "redis/tests/connect.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

using namespace floe;
using namespace floe::redis;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(std::string_view name) { return fixture::fresh_dir(fmt::format("redis-{}", name)); }

std::unique_ptr<client> connect_to(const std::string& uris) {
    return fixture::connect_to(uris, [](options& o) {
        o.command_timeout = std::chrono::milliseconds(2000);
        o.retry_budget = std::chrono::milliseconds(5000);
    });
}

constexpr std::string_view test_library = R"(
redis.register_function('floe_test_incr_by', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)
redis.register_function('floe_test_fail', function(keys, args)
  return redis.error_reply('FLOE_TEST failed on purpose')
end)
)";

/// A raw reply decoded element by element with resp_reader: compared against hiredis's own
/// decoding of the same command (an independent reader of the same bytes).
reply decode_raw(resp_reader& rd) {
    auto it = rd.next();
    EXPECT_TRUE(it) << it.error();
    if (!it) return reply::nil();
    switch (it->type) {
    case reply_type::nil: return reply::nil();
    case reply_type::integer: return reply::integer(it->integer);
    case reply_type::string: return reply::string(std::string(it->str));
    case reply_type::status: return reply::status(std::string(it->str));
    case reply_type::error: return reply::error(std::string(it->str));
    case reply_type::array: {
        std::vector<reply> el;
        for (int64_t i = 0; i < it->integer; ++i) el.push_back(decode_raw(rd));
        return reply::array(std::move(el));
    }
    }
    return reply::nil();
}

reply decode_raw(const raw_reply& r) {
    auto rd = r.reader();
    auto out = decode_raw(rd);
    EXPECT_TRUE(rd.at_end()) << "bytes left after the reply";
    return out;
}

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
    void SetUp() override { ASSERT_TRUE(srv) << "redis-server did not start"; }
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
    // Code the server refuses: a clear error with the server's text, nothing replaced.
    auto broken = c->load_library("floe_test", "this is not lua(", "3");
    ASSERT_FALSE(broken);
    EXPECT_FALSE(broken.error().retryable());
    EXPECT_NE(broken.error().message().find("floe_test"), std::string::npos) << broken.error();
    auto still = c->fcall("floe_test_incr_by", {"{f}.n"}, {"1"});
    ASSERT_TRUE(still) << still.error();
    EXPECT_EQ(still->integer(), 7);
    // ... and the version still remembered is the good one: reloaded after a flush.
    ASSERT_TRUE(srv->raw({"FUNCTION", "FLUSH"}));
    auto reloaded = c->fcall("floe_test_incr_by", {"{f}.n"}, {"1"});
    ASSERT_TRUE(reloaded) << reloaded.error();
    EXPECT_EQ(reloaded->integer(), 8);
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
    // The server is gone: the pooled connection is found dead or a new one is refused. Either
    // way a second command never reaches a server, and the client says so.
    auto refused = (*c)->command({"GET", "a"});
    ASSERT_FALSE(refused);
    EXPECT_FALSE(outcome_unknown(refused.error())) << refused.error();
    EXPECT_FALSE((*c)->ping());
    ASSERT_TRUE(s->restart());
    // The pooled connection to the old process is detected dead before use.
    auto up = (*c)->command({"SET", "a", "2"});
    ASSERT_TRUE(up) << up.error();
    EXPECT_TRUE((*c)->ping());
    fs::remove_all(dir2);
}

TEST_F(redis_single, timeouts_are_retriable_and_blocking_commands_get_their_time) {
    auto o = parse_uris(srv->uri());
    o->command_timeout = std::chrono::milliseconds(200);
    o->retry_budget = std::chrono::milliseconds(0);
    auto c = client::connect(*o);
    ASSERT_TRUE(c) << c.error();
    // The server stops answering for 800 ms: the command times out (retriable), later ones work.
    ASSERT_TRUE(srv->raw({"CLIENT", "PAUSE", "800", "ALL"}));
    auto t0 = std::chrono::steady_clock::now();
    auto slow = (*c)->command({"GET", "k1"});
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(slow);
    EXPECT_EQ(slow.error().code(), errc::timeout) << slow.error();
    EXPECT_TRUE(slow.error().retryable());
    // Sent, never answered: it may yet run (a paused server runs it when it resumes).
    EXPECT_TRUE(outcome_unknown(slow.error())) << slow.error();
    EXPECT_LT(took, std::chrono::milliseconds(700));
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ASSERT_TRUE((*c)->command({"SET", "{blk}.x", "1"}));
    // XREAD BLOCK 500 outlives command_timeout (200 ms) and returns nil when nothing comes...
    std::string_view xread[] = {"XREAD", "BLOCK", "500", "STREAMS", "{blk}.s", "$"};
    t0 = std::chrono::steady_clock::now();
    auto none = (*c)->command_blocking("{blk}", xread, std::chrono::milliseconds(500));
    ASSERT_TRUE(none) << none.error();
    EXPECT_TRUE(none->is_nil());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(450));
    // ... and the entry when one is added meanwhile.
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        (void)srv->raw({"XADD", "{blk}.s", "*", "f", "v"});
    });
    auto got = (*c)->command_blocking("{blk}", xread, std::chrono::milliseconds(2000));
    writer.join();
    ASSERT_TRUE(got) << got.error();
    ASSERT_TRUE(got->is_array());
    EXPECT_EQ((*got)[0][1][0][1][1].str(), "v") << got->debug_string();
    // The connection went back to the pool with the normal timeout.
    ASSERT_TRUE(srv->raw({"CLIENT", "PAUSE", "500", "ALL"}));
    auto again = (*c)->command({"GET", "{blk}.x"});
    EXPECT_FALSE(again);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

TEST_F(redis_single, raw_replies_read_in_place_match_decoded_ones) {
    auto c = connect_to(srv->uri());
    ASSERT_TRUE(c);
    // Entries with binary values (CR, LF, NUL inside), and one value larger than a socket read,
    // so the raw answer arrives in many pieces.
    std::vector<std::vector<std::string>> add;
    for (int i = 0; i < 3000; ++i)
        add.push_back({"XADD", "{raw}.s", "*", "offset", std::to_string(i), "value",
                       fmt::format("v{}\r\n$3\r\n*1", i) + std::string(1, '\0')});
    add.push_back({"XADD", "{raw}.s", "*", "offset", "3000", "value", std::string(3u << 20, 'x')});
    ASSERT_TRUE(c->pipeline("{raw}", add));
    std::vector<std::vector<std::string_view>> cmds = {
        {"XRANGE", "{raw}.s", "-", "+"}, {"GET", "{raw}.missing"}, {"XLEN", "{raw}.s"},
        {"HSET", "{raw}.s", "f", "v"}, // WRONGTYPE: an error reply among the others
        {"SET", "{raw}.k", "v"},       // status
        {"XRANGE", "{raw}.s", "-", "+", "COUNT", "0"}};
    auto decoded = c->pipeline("{raw}", cmds);
    ASSERT_TRUE(decoded) << decoded.error();
    auto raw = c->pipeline_raw("{raw}", cmds);
    ASSERT_TRUE(raw) << raw.error();
    ASSERT_EQ(raw->size(), cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) EXPECT_EQ(decode_raw((*raw)[i]), (*decoded)[i]) << "command " << i;
    EXPECT_TRUE((*raw)[3].is_error());
    EXPECT_TRUE((*raw)[3].error_text().starts_with("WRONGTYPE")) << (*raw)[3].error_text();
    EXPECT_EQ((*decoded)[0].size(), 3001u);
    // The replies keep their buffer alive on their own.
    auto first = (*raw)[0];
    raw->clear();
    EXPECT_EQ(decode_raw(first), (*decoded)[0]);
    // The connection is fine for decoded commands afterwards.
    EXPECT_EQ(c->command({"XLEN", "{raw}.s"})->integer(), 3001);

    // fcall_raw: an answer, a function's error as an error value, and the reload after a flush.
    ASSERT_TRUE(c->load_library("floe_test", test_library, "raw"));
    std::string_view keys[] = {"{raw}.n"}, five[] = {"5"};
    auto r = c->fcall_raw("floe_test_incr_by", keys, five);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->bytes(), ":5\r\n");
    auto e = c->fcall_raw("floe_test_fail", keys, {});
    ASSERT_FALSE(e);
    EXPECT_TRUE(server_error_is(e.error(), "FLOE_TEST")) << e.error();
    ASSERT_TRUE(srv->raw({"FUNCTION", "FLUSH"}));
    auto again = c->fcall_raw("floe_test_incr_by", keys, five);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->bytes(), ":10\r\n");
}

TEST_F(redis_single, pipeline_of_borrowed_arguments) {
    auto c = connect_to(srv->uri());
    std::vector<std::string> values = {"a", "b", "c"};
    std::vector<std::vector<std::string_view>> cmds;
    for (auto& v : values) cmds.push_back({"RPUSH", "{v}.l", v});
    cmds.push_back({"LRANGE", "{v}.l", "0", "-1"});
    auto r = c->pipeline("{v}", cmds);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->back().debug_string(), "[\"a\", \"b\", \"c\"]");
}

TEST_F(redis_single, redis_down_at_start_then_up) {
    auto dir2 = temp_dir("late");
    auto s = fixture::server::start(dir2);
    ASSERT_TRUE(s) << s.error();
    s->stop();
    auto o = parse_uris(s->uri());
    o->retry_budget = std::chrono::milliseconds(100);
    EXPECT_FALSE(client::connect(*o));
    auto c = client::create(*o);
    auto down = c->command({"SET", "a", "1"});
    ASSERT_FALSE(down);
    EXPECT_TRUE(down.error().retryable()) << down.error();
    EXPECT_FALSE(c->ping());
    // The library is remembered while Redis is down and loaded by the first fcall after.
    EXPECT_FALSE(c->load_library("floe_test", test_library, "1"));
    ASSERT_TRUE(s->restart());
    auto r = c->fcall("floe_test_incr_by", {"{l}.n"}, {"4"});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->integer(), 4);
    EXPECT_FALSE(c->is_cluster());
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
    auto none = client::connect(*parse_uris(fmt::format("redis://127.0.0.1:{}", s->port())));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), errc::invalid_argument) << none.error();
    EXPECT_NE(none.error().message().find("NOAUTH"), std::string::npos) << none.error();
    auto good = client::connect(*parse_uris(fmt::format("redis://:sesame@127.0.0.1:{}/2", s->port())));
    ASSERT_TRUE(good) << good.error();
    ASSERT_TRUE((*good)->command({"SET", "x", "1"}));
    // The db really is selected: db 0 does not see x.
    auto db0 = client::connect(*parse_uris(fmt::format("redis://:sesame@127.0.0.1:{}", s->port())));
    ASSERT_TRUE(db0) << db0.error();
    EXPECT_TRUE((*db0)->command({"GET", "x"})->is_nil());
    EXPECT_EQ((*good)->command({"GET", "x"})->str(), "1");
    // An ACL user with its password (AUTH user password).
    ASSERT_TRUE((*db0)->command({"ACL", "SETUSER", "floe", "on", ">pw2", "~*", "&*", "+@all"}));
    auto acl = client::connect(*parse_uris(fmt::format("redis://floe:pw2@127.0.0.1:{}", s->port())));
    ASSERT_TRUE(acl) << acl.error();
    EXPECT_TRUE((*acl)->ping());
    auto wrong_user = client::connect(*parse_uris(fmt::format("redis://other:pw2@127.0.0.1:{}", s->port())));
    ASSERT_FALSE(wrong_user);
    EXPECT_EQ(wrong_user.error().code(), errc::invalid_argument) << wrong_user.error();
    auto nodb = client::connect(*parse_uris(fmt::format("redis://:sesame@127.0.0.1:{}/99", s->port())));
    ASSERT_FALSE(nodb);
    EXPECT_NE(nodb.error().message().find("SELECT"), std::string::npos) << nodb.error();
    fs::remove_all(dir2);
}

// ---- Redis Cluster -------------------------------------------------------------------------

class redis_cluster : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = temp_dir("cluster");
        auto c = fixture::cluster::start(dir);
        ASSERT_TRUE(c) << c.error();
        cl = new fixture::cluster(std::move(*c));
    }
    static void TearDownTestSuite() {
        delete cl;
        cl = nullptr;
        fs::remove_all(dir);
    }
    static std::string node_id(fixture::server& s) { return s.raw({"CLUSTER", "MYID"})->str(); }
    static fixture::server& owner_of(client& c, std::string_view key) {
        auto name = c.node_for(key);
        auto port = static_cast<uint16_t>(std::stoi(name.substr(name.rfind(':') + 1)));
        return *cl->by_port(port);
    }
    void SetUp() override { ASSERT_TRUE(cl) << "the cluster did not start"; }
    static inline fixture::cluster* cl = nullptr;
    static inline fs::path dir;
};

TEST_F(redis_cluster, detects_cluster_and_routes_every_slot) {
    // One seed is enough; the other masters come from CLUSTER SLOTS.
    auto c = connect_to(cl->nodes()[1].uri());
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->is_cluster());
    EXPECT_EQ(c->masters().size(), 3u);
    ASSERT_TRUE(c->ping());
    // Our slot function agrees with the server's CLUSTER KEYSLOT (an independent check).
    for (int i = 0; i < 300; ++i) {
        auto key = fmt::format("key:{}:{{tag{}}}:x", i * 7919, i % 13);
        auto srv_slot = cl->nodes()[0].raw({"CLUSTER", "KEYSLOT", key});
        ASSERT_TRUE(srv_slot);
        ASSERT_EQ(srv_slot->integer(), key_slot(key)) << key;
    }
    // Keys everywhere: every command lands on its owner without a redirect.
    for (int i = 0; i < 300; ++i) {
        auto key = fmt::format("k{}", i);
        ASSERT_TRUE(c->command({"SET", key, std::to_string(i)})) << key;
    }
    for (int i = 0; i < 300; ++i) EXPECT_EQ(c->command({"GET", fmt::format("k{}", i)})->str(), std::to_string(i));
    EXPECT_EQ(c->counters().moved, 0u);
    // Each master holds some of them (the keys really are spread).
    for (auto& n : cl->nodes()) EXPECT_GT(n.raw({"DBSIZE"})->integer(), 50);
    // A pipeline of one slot, and a cross-slot command answered as the server's error.
    std::vector<std::vector<std::string>> cmds;
    for (int i = 0; i < 50; ++i) cmds.push_back({"RPUSH", "{q}.list", std::to_string(i)});
    cmds.push_back({"LLEN", "{q}.list"});
    auto r = c->pipeline("{q}", cmds);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->back().integer(), 50);
    auto cross = c->command({"MGET", "a", "b"});
    ASSERT_FALSE(cross);
    EXPECT_TRUE(server_error_is(cross.error(), "CROSSSLOT")) << cross.error();
    // Per-node commands: the DBSIZEs of the masters add up to every key.
    int64_t total = 0;
    for (auto& m : c->masters()) {
        auto n = c->command_on_node(m, {"DBSIZE"});
        ASSERT_TRUE(n) << n.error();
        total += n->integer();
    }
    EXPECT_EQ(total, 300 + 1);
    EXPECT_EQ(c->command_on_node("127.0.0.1:1", {"PING"}).error().code(), errc::not_found);
    // A wrong db is refused at connect.
    auto db = parse_uris(cl->nodes()[0].uri() + "/1");
    auto refused = client::connect(*db);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::invalid_argument);
}

TEST_F(redis_cluster, functions_on_every_master) {
    auto c = connect_to(cl->uris());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->load_library("floe_test", test_library, "1"));
    EXPECT_EQ(c->counters().library_loads, 3u);
    ASSERT_TRUE(c->load_library("floe_test", test_library, "1"));
    EXPECT_EQ(c->counters().library_loads, 3u);
    for (int i = 0; i < 30; ++i) {
        auto key = fmt::format("{{f{}}}.n", i);
        auto r = c->fcall("floe_test_incr_by", {key}, {"2"});
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r->integer(), 2);
    }
}

TEST_F(redis_cluster, live_slot_migration_follows_ask_then_moved) {
    auto c = connect_to(cl->uris());
    ASSERT_TRUE(c);
    const std::string tag = "{mig}";
    const auto slot = key_slot(tag);
    auto& from = owner_of(*c, tag);
    fixture::server* to = nullptr;
    for (auto& n : cl->nodes())
        if (n.port() != from.port()) to = &n;
    ASSERT_TRUE(to);
    auto from_id = node_id(from), to_id = node_id(*to);
    std::vector<std::string> keys;
    for (int i = 0; i < 20; ++i) keys.push_back(fmt::format("{}.k{}", tag, i));
    for (auto& k : keys) ASSERT_TRUE(c->command({"SET", k, "v-" + k}));
    auto s = std::to_string(slot);
    ASSERT_TRUE(check(*to->raw({"CLUSTER", "SETSLOT", s, "IMPORTING", from_id})));
    ASSERT_TRUE(check(*from.raw({"CLUSTER", "SETSLOT", s, "MIGRATING", to_id})));
    // Move half of the keys: those are now answered with ASK by the old owner.
    std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000", "KEYS"};
    for (int i = 0; i < 10; ++i) migrate.push_back(keys[static_cast<size_t>(i)]);
    auto m = from.raw(migrate);
    ASSERT_TRUE(m && check(*m)) << (m ? m->debug_string() : m.error().to_string());
    for (auto& k : keys) {
        auto v = c->command({"GET", k});
        ASSERT_TRUE(v) << v.error();
        EXPECT_EQ(v->str(), "v-" + k);
    }
    EXPECT_GE(c->counters().ask, 10u);
    // A new key of the slot during the migration goes to the new owner (ASK).
    ASSERT_TRUE(c->command({"SET", tag + ".new", "n"}));
    // A pipeline during the migration: some commands answered at the source, some via ASK.
    std::vector<std::vector<std::string>> cmds;
    for (auto& k : keys) cmds.push_back({"GET", k});
    auto pr = c->pipeline(tag, cmds);
    ASSERT_TRUE(pr) << pr.error();
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ((*pr)[i].str(), "v-" + keys[i]);
    // The same as raw replies: the ASK answers are followed the same way.
    std::vector<std::vector<std::string_view>> views;
    for (auto& cmd : cmds) views.emplace_back(cmd.begin(), cmd.end());
    auto asks = c->counters().ask;
    auto raw = c->pipeline_raw(tag, views);
    ASSERT_TRUE(raw) << raw.error();
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(decode_raw((*raw)[i]).str(), "v-" + keys[i]);
    EXPECT_GT(c->counters().ask, asks);
    // Finish: move the rest and give the slot to the new owner on every node.
    std::vector<std::string> rest = {"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000", "KEYS"};
    for (int i = 10; i < 20; ++i) rest.push_back(keys[static_cast<size_t>(i)]);
    ASSERT_TRUE(check(*from.raw(rest)));
    for (auto* n : {to, &from})
        ASSERT_TRUE(check(*n->raw({"CLUSTER", "SETSLOT", s, "NODE", to_id})));
    for (auto& n : cl->nodes())
        if (n.port() != to->port() && n.port() != from.port()) (void)n.raw({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    auto moved_before = c->counters().moved;
    // A raw pipeline sent to the old owner (the map is stale) is answered MOVED and followed.
    auto moved_raw = c->pipeline_raw(tag, views);
    ASSERT_TRUE(moved_raw) << moved_raw.error();
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(decode_raw((*moved_raw)[i]).str(), "v-" + keys[i]);
    for (auto& k : keys) {
        auto v = c->command({"GET", k});
        ASSERT_TRUE(v) << v.error();
        EXPECT_EQ(v->str(), "v-" + k);
    }
    EXPECT_GE(c->counters().moved, moved_before + 1);
    EXPECT_EQ(c->node_for(tag), fmt::format("127.0.0.1:{}", to->port()));
    EXPECT_EQ(c->command({"GET", tag + ".new"})->str(), "n");
}

TEST_F(redis_cluster, tryagain_during_migration_is_retried_until_the_slot_settles) {
    auto o = parse_uris(cl->uris());
    o->retry_budget = std::chrono::milliseconds(400);
    auto cc = client::connect(*o);
    ASSERT_TRUE(cc) << cc.error();
    auto& c = *cc;
    const std::string tag = "{try}";
    const auto s = std::to_string(key_slot(tag));
    auto& from = owner_of(*c, tag);
    fixture::server* to = nullptr;
    for (auto& n : cl->nodes())
        if (n.port() != from.port()) to = &n;
    auto from_id = node_id(from), to_id = node_id(*to);
    const std::string a = tag + ".a", b = tag + ".b";
    ASSERT_TRUE(c->command({"SET", a, "1"}));
    ASSERT_TRUE(c->command({"SET", b, "2"}));
    ASSERT_TRUE(check(*to->raw({"CLUSTER", "SETSLOT", s, "IMPORTING", from_id})));
    ASSERT_TRUE(check(*from.raw({"CLUSTER", "SETSLOT", s, "MIGRATING", to_id})));
    ASSERT_TRUE(check(*from.raw({"MIGRATE", "127.0.0.1", std::to_string(to->port()), a, "0", "5000"})));
    // One key moved, the other not: a command on both is answered TRYAGAIN until the
    // migration ends. Within the budget nothing changes: a retriable error naming TRYAGAIN.
    auto retries_before = c->counters().retries;
    auto stuck = c->command({"MGET", a, b});
    ASSERT_FALSE(stuck);
    EXPECT_TRUE(stuck.error().retryable()) << stuck.error();
    EXPECT_TRUE(server_error_is(stuck.error(), "TRYAGAIN")) << stuck.error();
    EXPECT_GT(c->counters().retries, retries_before + 2);
    // The migration finishes while the client is retrying: the same call then succeeds. The
    // nodes learn the new owner one by one (in no particular order), so for a moment they
    // redirect to each other: the client backs off through that.
    auto o2 = parse_uris(cl->uris());
    o2->retry_budget = std::chrono::milliseconds(5000);
    auto patient = client::connect(*o2);
    ASSERT_TRUE(patient) << patient.error();
    std::thread finisher([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        (void)from.raw({"MIGRATE", "127.0.0.1", std::to_string(to->port()), b, "0", "5000"});
        for (auto& n : cl->nodes()) (void)n.raw({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    });
    auto settled = (*patient)->command({"MGET", a, b});
    finisher.join();
    ASSERT_TRUE(settled) << settled.error();
    EXPECT_EQ(settled->debug_string(), "[\"1\", \"2\"]");
}

TEST_F(redis_cluster, node_restart_gives_retriable_errors_then_recovers) {
    auto o = parse_uris(cl->uris());
    o->retry_budget = std::chrono::milliseconds(500);
    o->connect_timeout = std::chrono::milliseconds(500);
    auto cc = client::connect(*o);
    ASSERT_TRUE(cc) << cc.error();
    auto& c = *cc;
    ASSERT_TRUE(c->load_library("floe_test", test_library, "1"));
    const auto loads_before = c->counters().library_loads;
    const std::string key = "{restart}.n";
    auto& victim = owner_of(*c, key);
    ASSERT_TRUE(c->command({"SET", key, "1"}));
    victim.kill9();
    auto down = c->command({"GET", key});
    ASSERT_FALSE(down);
    EXPECT_TRUE(down.error().retryable()) << down.error();
    ASSERT_TRUE(victim.restart());
    ASSERT_TRUE(cl->wait_ok(std::chrono::seconds(20)));
    // The restarted node kept its slots (nodes.conf) but not its data or functions (no
    // persistence): the client reconnects, and fcall reloads the library there.
    result<reply> back = fail(errc::unavailable, "not tried");
    for (int i = 0; i < 100 && !back; ++i) {
        back = c->fcall("floe_test_incr_by", {key}, {"3"});
        if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->integer(), 3);
    EXPECT_EQ(c->counters().library_loads, loads_before + 1) << "the library is loaded again on the restarted node";
    EXPECT_TRUE(c->ping());
}

TEST(redis_cluster_failover, master_killed_replica_promoted_client_follows) {
    auto dir = temp_dir("failover");
    auto cl = fixture::cluster::start(dir, 3, 1);
    ASSERT_TRUE(cl) << cl.error();
    auto o = parse_uris(cl->uris());
    o->retry_budget = std::chrono::milliseconds(300);
    o->connect_timeout = std::chrono::milliseconds(300);
    auto cc = client::connect(*o);
    ASSERT_TRUE(cc) << cc.error();
    auto& c = *cc;
    EXPECT_EQ(c->masters().size(), 3u);
    // Writes acknowledged by a replica (WAIT in the same pipeline) survive the failover.
    const std::string key = "{fo}.k";
    std::vector<std::vector<std::string>> cmds = {{"SET", key, "kept"}, {"WAIT", "1", "2000"}};
    auto w = c->pipeline("{fo}", cmds);
    ASSERT_TRUE(w) << w.error();
    ASSERT_EQ((*w)[1].integer(), 1) << "the replica acknowledged";
    auto old_master = c->node_for(key);
    auto port = static_cast<uint16_t>(std::stoi(old_master.substr(old_master.rfind(':') + 1)));
    auto refreshes = c->counters().refreshes;
    cl->by_port(port)->kill9();
    // Until the replica is promoted (node timeout 2 s), calls fail with retriable errors; then
    // the client finds the new master through a slot map reload.
    result<reply> got = fail(errc::unavailable, "not tried");
    int failures = 0;
    for (int i = 0; i < 150; ++i) {
        got = c->command({"GET", key});
        if (got) break;
        EXPECT_TRUE(got.error().retryable()) << got.error();
        ++failures;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(got) << got.error();
    EXPECT_EQ(got->str(), "kept");
    EXPECT_GT(failures, 0);
    EXPECT_NE(c->node_for(key), old_master);
    EXPECT_GT(c->counters().refreshes, refreshes);
    ASSERT_TRUE(c->command({"SET", key, "after"}));
    EXPECT_EQ(c->command({"GET", key})->str(), "after");
    fs::remove_all(dir);
}
