#include "log/topic_config.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::log;

TEST(topic_config, defaults_match_kafka_and_round_trip_as_text) {
    topic_config d;
    for (auto& k : topic_config_keys()) {
        auto v = topic_config_value(d, k.name);
        ASSERT_TRUE(v) << k.name;
        if (k.name == "message.timestamp.type") EXPECT_EQ(*v, "CreateTime");
        else EXPECT_EQ(*v, k.default_value) << k.name;
        EXPECT_TRUE(validate_topic_config(k.name, k.default_value)) << k.name;
    }
}

TEST(topic_config, overrides_apply_over_defaults) {
    config_map defaults{{"retention.ms", "1000"}, {"segment.bytes", "5000"}};
    config_map overrides{{"segment.bytes", "7000"}, {"remote.storage.enable", "true"},
                         {"local.retention.ms", "10"}, {"message.timestamp.type", "LogAppendTime"}};
    auto c = resolve_topic_config(defaults, overrides);
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->retention_ms, 1000);
    EXPECT_EQ(c->segment_bytes, 7000);
    EXPECT_TRUE(c->remote_storage_enable);
    EXPECT_EQ(c->effective_local_retention_ms(), 10);
    EXPECT_EQ(c->effective_local_retention_bytes(), -1);
    EXPECT_EQ(c->message_timestamp_type, timestamp_type::log_append_time);
    c->remote_storage_enable = false;
    EXPECT_EQ(c->effective_local_retention_ms(), 1000);
}

TEST(topic_config, rejects_bad_values_naming_the_key) {
    auto e = validate_topic_config("segment.bytes", "abc");
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message().find("segment.bytes"), std::string::npos);
    EXPECT_FALSE(validate_topic_config("segment.bytes", "10"));
    EXPECT_FALSE(validate_topic_config("retention.ms", "-5"));
    EXPECT_FALSE(validate_topic_config("remote.storage.enable", "yes"));
    EXPECT_FALSE(validate_topic_config("no.such.key", "1"));
    EXPECT_EQ(validate_topic_config("cleanup.policy", "compact").error().code(), errc::unsupported);
    EXPECT_FALSE(validate_topic_config("message.timestamp.type", "Now"));
    EXPECT_FALSE(validate_topic_config("compression.type", "brotli"));
    EXPECT_TRUE(validate_topic_config("compression.type", "zstd"));
}
