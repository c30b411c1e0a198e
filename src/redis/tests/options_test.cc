#include "redis/client.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::redis;

TEST(redis_options, single_uri) {
    auto o = parse_uris("redis://127.0.0.1:6380");
    ASSERT_TRUE(o) << o.error();
    ASSERT_EQ(o->seeds.size(), 1u);
    EXPECT_EQ(o->seeds[0].host, "127.0.0.1");
    EXPECT_EQ(o->seeds[0].port, 6380);
    EXPECT_EQ(o->db, 0);
    EXPECT_TRUE(o->user.empty());
    EXPECT_TRUE(o->password.empty());
}

TEST(redis_options, credentials_db_and_default_port) {
    auto o = parse_uris("redis://floe:s%40cret@redis.local/3");
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->user, "floe");
    EXPECT_EQ(o->password, "s@cret");
    EXPECT_EQ(o->db, 3);
    EXPECT_EQ(o->seeds[0].host, "redis.local");
    EXPECT_EQ(o->seeds[0].port, 6379);
    auto p = parse_uris("redis://:pw@[::1]:7000/");
    ASSERT_TRUE(p) << p.error();
    EXPECT_EQ(p->user, "");
    EXPECT_EQ(p->password, "pw");
    EXPECT_EQ(p->seeds[0].host, "::1");
    EXPECT_EQ(p->seeds[0].to_string(), "[::1]:7000");
}

TEST(redis_options, several_seeds) {
    auto o = parse_uris("redis://a:7000, redis://b:7001,redis://a:7000");
    ASSERT_TRUE(o) << o.error();
    ASSERT_EQ(o->seeds.size(), 2u);
    EXPECT_EQ(o->seeds[1].to_string(), "b:7001");
}

TEST(redis_options, errors_name_the_setting_and_hide_the_password) {
    auto bad = [](std::string_view uri) {
        auto o = parse_uris(uri, "floe.local.redis.uri");
        EXPECT_FALSE(o) << uri;
        if (o) return std::string();
        EXPECT_EQ(o.error().code(), errc::invalid_argument);
        EXPECT_TRUE(o.error().message().starts_with("floe.local.redis.uri: ")) << o.error();
        return o.error().message();
    };
    EXPECT_NE(bad("http://h:1").find("redis://"), std::string::npos);
    EXPECT_NE(bad("redis://h:x").find("port 'x'"), std::string::npos);
    EXPECT_NE(bad("redis://h:70000").find("port"), std::string::npos);
    EXPECT_NE(bad("redis://h:1/db").find("database"), std::string::npos);
    EXPECT_NE(bad("redis://:1").find("no host"), std::string::npos);
    EXPECT_NE(bad("rediss://h:1").find("TLS"), std::string::npos);
    EXPECT_NE(bad("redis://user@h:1").find("user:password"), std::string::npos);
    EXPECT_NE(bad("").find("no redis://"), std::string::npos);
    EXPECT_NE(bad("redis://h:1,").find("empty URI"), std::string::npos);
    EXPECT_NE(bad("redis://h:1/1,redis://g:1/2").find("different databases"), std::string::npos);
    auto hidden = bad("redis://u:topsecret@h:x");
    EXPECT_EQ(hidden.find("topsecret"), std::string::npos) << hidden;
}

TEST(redis_reply, accessors) {
    EXPECT_EQ(*reply::string("42").as_integer(), 42);
    EXPECT_EQ(*reply::integer(7).as_integer(), 7);
    EXPECT_FALSE(reply::string("4x").as_integer());
    EXPECT_FALSE(reply::nil().as_string());
    EXPECT_EQ(*reply::status("OK").as_string(), "OK");
    auto a = reply::array({reply::integer(1), reply::nil(), reply::string("x")});
    EXPECT_EQ(a.size(), 3u);
    EXPECT_TRUE(a[1].is_nil());
    EXPECT_EQ(a.debug_string(), "[(integer) 1, nil, \"x\"]");
    auto e = check(reply::error("WRONGTYPE Operation against a key"));
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code(), errc::invalid_argument);
    EXPECT_TRUE(server_error_is(e.error(), "WRONGTYPE"));
    auto t = check(reply::error("TRYAGAIN Multiple keys request during rehashing of slot"));
    ASSERT_FALSE(t);
    EXPECT_TRUE(t.error().retryable());
    auto l = check(reply::error("LOADING Redis is loading the dataset in memory"));
    EXPECT_TRUE(l.error().retryable());
    EXPECT_TRUE(check(reply::error("READONLY You can't write against a read only replica.")).error().retryable());
    EXPECT_TRUE(check(reply::error("CLUSTERDOWN The cluster is down")).error().retryable());
    EXPECT_TRUE(check(reply::error("MASTERDOWN Link with MASTER is down")).error().retryable());
    EXPECT_EQ(check(reply::error("ERR Function not found")).error().code(), errc::not_found);
}
