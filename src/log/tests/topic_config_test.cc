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
    EXPECT_FALSE(validate_topic_config("cleanup.policy", "compacted"));
    EXPECT_FALSE(validate_topic_config("cleanup.policy", ""));
    EXPECT_FALSE(validate_topic_config("message.timestamp.type", "Now"));
    EXPECT_FALSE(validate_topic_config("compression.type", "brotli"));
    EXPECT_TRUE(validate_topic_config("compression.type", "zstd"));
    EXPECT_FALSE(validate_topic_config("floe.iceberg.mode", "typed"));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.mode", "latest-schema"));
    EXPECT_FALSE(validate_topic_config("floe.iceberg.key-mode", "typed"));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.key-mode", "schema-id"));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.key-mode", "latest-schema"));
}

TEST(topic_config, typed_table_configs) {
    auto c = resolve_topic_config({{"floe.iceberg.mode", "latest-schema"}}, {});
    ASSERT_TRUE(c) << c.error();
    EXPECT_TRUE(c->typed());
    EXPECT_EQ(c->value_subject("orders"), "orders-value");
    auto d = resolve_topic_config({}, {{"floe.iceberg.value-subject", "shared-value"}});
    ASSERT_TRUE(d) << d.error();
    EXPECT_FALSE(d->typed());
    EXPECT_EQ(d->value_subject("orders"), "shared-value");
    EXPECT_EQ(d->key_subject("orders"), "orders-key");
    // Keys alone make a typed table too (key_data), with their own subject.
    auto k = resolve_topic_config({{"floe.iceberg.key-mode", "schema-id"}}, {{"floe.iceberg.key-subject", "ids"}});
    ASSERT_TRUE(k) << k.error();
    EXPECT_TRUE(k->typed());
    EXPECT_EQ(k->iceberg_mode, "raw");
    EXPECT_EQ(k->key_subject("orders"), "ids");
    EXPECT_EQ(topic_config_value(*k, "floe.iceberg.key-mode"), "schema-id");
}

// A column's own key is checked when the config is set, by whatever the broker's key provider
// says: a refusal names the key; "cannot tell now" (retryable) lets it through; configs that
// name no key are not asked about.
TEST(topic_config, column_keys_are_checked_when_set) {
    EXPECT_EQ(encryption_column_key_ids("key,value:pii, headers:hr ,data.ssn:pii"),
              (std::vector<std::string>{"pii", "hr"}));
    EXPECT_TRUE(encryption_column_key_ids("key,value").empty());
    // A KMS key ARN has colons of its own: the first ':' splits the column from its key.
    const std::string arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    EXPECT_EQ(encryption_column_key_ids("key,value:" + arn), (std::vector<std::string>{arn}));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.encryption.columns", "value:" + arn + ",headers:alias/pii"));

    std::vector<std::string> asked;
    topic_capabilities caps;
    caps.check_key = [&](std::string_view id) -> result<void> {
        asked.emplace_back(id);
        if (id == "pii") return {};
        if (id == "kms-down") return fail(errc::unavailable, "KMS unreachable");
        return fail(errc::not_found, "key '{}' is not in the keyring", id);
    };
    EXPECT_TRUE(check_config_keys("floe.iceberg.encryption.columns", "key,value:pii", caps));
    EXPECT_TRUE(check_config_keys("floe.iceberg.encryption.columns", "value:kms-down", caps));
    auto r = check_config_keys("floe.iceberg.encryption.columns", "key,value:piii", caps);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_NE(r.error().message().find("floe.iceberg.encryption.columns"), std::string::npos) << r.error();
    EXPECT_NE(r.error().message().find("'piii'"), std::string::npos) << r.error();
    EXPECT_EQ(asked, (std::vector<std::string>{"pii", "kms-down", "piii"}));
    EXPECT_TRUE(check_config_keys("retention.ms", "value:piii", caps));
    EXPECT_TRUE(check_config_keys("floe.iceberg.encryption.columns", "value:piii", {})); // no provider: not checked
    EXPECT_EQ(asked.size(), 3u);
}

TEST(topic_config, encryption_configs) {
    auto d = resolve_topic_config({}, {});
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->encrypted());
    EXPECT_EQ(topic_config_value(*d, "floe.iceberg.encryption"), "none");
    EXPECT_EQ(topic_config_value(*d, "floe.iceberg.encryption.footer"), "encrypted");
    EXPECT_EQ(topic_config_value(*d, "floe.iceberg.encryption.algorithm"), "AES_GCM_V1");
    EXPECT_EQ(topic_config_value(*d, "floe.iceberg.encryption.columns"), "");
    EXPECT_TRUE(d->encrypted_columns().empty());

    auto u = resolve_topic_config({{"floe.iceberg.encryption", "uniform"}}, {});
    ASSERT_TRUE(u) << u.error();
    EXPECT_TRUE(u->encrypted());
    auto c = resolve_topic_config({}, {{"floe.iceberg.encryption", "columns"},
                                       {"floe.iceberg.encryption.columns", " key , value,headers.header_value"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->iceberg_encryption_columns, "key,value,headers.header_value");
    EXPECT_EQ(c->encrypted_columns(), (std::vector<std::string>{"key", "value", "headers.header_value"}));

    // columns needs the list; values outside the choices are refused naming the config.
    auto no_list = resolve_topic_config({}, {{"floe.iceberg.encryption", "columns"}});
    ASSERT_FALSE(no_list);
    EXPECT_NE(no_list.error().message().find("floe.iceberg.encryption.columns"), std::string::npos);
    for (auto [k, v] : {std::pair{"floe.iceberg.encryption", "all"}, {"floe.iceberg.encryption", "UNIFORM"},
                        {"floe.iceberg.encryption.footer", "signed"},
                        {"floe.iceberg.encryption.algorithm", "AES_CTR"},
                        {"floe.iceberg.encryption.columns", "key,,value"},
                        {"floe.iceberg.encryption.columns", "value:"},
                        {"floe.iceberg.encryption.columns", ":pii"}}) {
        auto r = validate_topic_config(k, v);
        ASSERT_FALSE(r) << k << "=" << v;
        EXPECT_NE(r.error().message().find(k), std::string::npos) << r.error();
    }
    EXPECT_TRUE(validate_topic_config("floe.iceberg.encryption.algorithm", "AES_GCM_CTR_V1"));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.encryption.footer", "plaintext"));
    EXPECT_TRUE(validate_topic_config("floe.iceberg.encryption.columns", "value:pii,headers,data.ssn:hr-key"));
    auto* k = find_topic_config_key("floe.iceberg.encryption.columns");
    ASSERT_TRUE(k);
    EXPECT_EQ(k->type, config_type::list); // IncrementalAlterConfigs APPEND/SUBTRACT apply

    // Without a key provider the broker refuses an encrypted table, naming what to set.
    auto refused = check_topic_capabilities(*u, {});
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("floe.encryption.provider"), std::string::npos);
    // With a provider, still refused while the lake cannot encrypt (never offloaded in plaintext).
    auto unwired = check_topic_capabilities(*u, {.key_provider = true});
    ASSERT_FALSE(unwired);
    EXPECT_NE(unwired.error().message().find("does not encrypt the lake's data files yet"), std::string::npos);
    EXPECT_TRUE(check_topic_capabilities(*u, {.key_provider = true, .lake_encrypts = true}));
    EXPECT_TRUE(check_topic_capabilities(*d, {}));
}

TEST(topic_config, every_kafka_topic_config_is_accepted_typed_and_reported) {
    // Kafka 3.7's topic configs, each with a valid non-default value.
    config_map all{{"cleanup.policy", "delete"},
                   {"compression.type", "lz4"},
                   {"delete.retention.ms", "1000"},
                   {"file.delete.delay.ms", "5"},
                   {"flush.messages", "10"},
                   {"flush.ms", "10"},
                   {"follower.replication.throttled.replicas", "0:0,1:0"},
                   {"index.interval.bytes", "100"},
                   {"leader.replication.throttled.replicas", "*"},
                   {"local.retention.bytes", "5"},
                   {"local.retention.ms", "5"},
                   {"max.compaction.lag.ms", "5"},
                   {"max.message.bytes", "5"},
                   {"message.downconversion.enable", "FALSE"},
                   {"message.format.version", "2.8-IV1"},
                   {"message.timestamp.after.max.ms", "5"},
                   {"message.timestamp.before.max.ms", "5"},
                   {"message.timestamp.difference.max.ms", "5"},
                   {"message.timestamp.type", "LogAppendTime"},
                   {"min.cleanable.dirty.ratio", "0.75"},
                   {"min.compaction.lag.ms", "5"},
                   {"min.insync.replicas", "2"},
                   {"preallocate", "true"},
                   {"remote.storage.enable", "true"},
                   {"retention.bytes", "5"},
                   {"retention.ms", "5"},
                   {"segment.bytes", "5000"},
                   {"segment.index.bytes", "4096"},
                   {"segment.jitter.ms", "5"},
                   {"segment.ms", "5"},
                   {"unclean.leader.election.enable", "true"},
                   // Floe's own (typed tables).
                   {"floe.iceberg.mode", "schema-id"},
                   {"floe.iceberg.value-subject", "orders-v2"},
                   {"floe.iceberg.protobuf-message", "acme.Order"},
                   {"floe.iceberg.key-mode", "latest-schema"},
                   {"floe.iceberg.key-subject", "orders-keys"},
                   {"floe.iceberg.partition-spec", "day(message_ts), bucket[16](key)"},
                   // Floe's own (encrypted tables).
                   {"floe.iceberg.encryption", "columns"},
                   {"floe.iceberg.encryption.columns", "key,value,headers"},
                   {"floe.iceberg.encryption.footer", "plaintext"},
                   {"floe.iceberg.encryption.algorithm", "AES_GCM_CTR_V1"},
                   {"floe.iceberg.encryption.aad-prefix", "stored"}};
    EXPECT_EQ(topic_config_keys().size(), all.size());
    auto c = resolve_topic_config({}, all);
    ASSERT_TRUE(c) << c.error();
    for (auto& [k, v] : all) {
        ASSERT_TRUE(find_topic_config_key(k)) << k;
        auto got = topic_config_value(*c, k);
        ASSERT_TRUE(got) << k;
        EXPECT_EQ(*got, k == "message.downconversion.enable" ? "false" : v) << k; // booleans normalised
    }
    EXPECT_EQ(c->segment_bytes, 5000); // honoured ones land in the typed fields
    // Type and range checks as Kafka's validators.
    for (auto [k, v] : {std::pair{"delete.retention.ms", "-1"}, {"delete.retention.ms", "1h"},
                        {"min.cleanable.dirty.ratio", "1.01"}, {"min.cleanable.dirty.ratio", "x"},
                        {"min.insync.replicas", "0"}, {"segment.index.bytes", "3"},
                        {"preallocate", "1"}, {"message.format.version", "three"},
                        {"message.format.version", "3"}, {"leader.replication.throttled.replicas", "0-1"},
                        {"max.compaction.lag.ms", "0"}})
        EXPECT_FALSE(validate_topic_config(k, v)) << k << "=" << v;
    // A stored value equal to the default is not kept as a difference.
    auto d = resolve_topic_config({}, {{"preallocate", "false"}});
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->stored.empty());
}

TEST(topic_config, compacted_topics) {
    for (auto v : {"compact", "delete,compact", "compact,delete", "compact, delete"}) {
        auto c = resolve_topic_config({}, {{"cleanup.policy", v}});
        ASSERT_TRUE(c) << v << ": " << c.error();
        EXPECT_TRUE(c->compacted()) << v;
        EXPECT_EQ(c->deletes(), std::string_view(v) != "compact") << v;
    }
    auto one = resolve_topic_config({}, {{"cleanup.policy", "compact,compact"}});
    ASSERT_TRUE(one);
    EXPECT_EQ(one->cleanup_policy, "compact");
    auto d = resolve_topic_config({}, {});
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->compacted());
    EXPECT_TRUE(d->deletes());
    EXPECT_EQ(d->delete_retention_ms, 86400000);
    EXPECT_EQ(d->min_cleanable_dirty_ratio, 0.5);
    // Typed and reported.
    auto c = resolve_topic_config({{"delete.retention.ms", "10"}},
                                  {{"cleanup.policy", "compact"},
                                   {"min.cleanable.dirty.ratio", "0.01"},
                                   {"min.compaction.lag.ms", "7"},
                                   {"max.compaction.lag.ms", "60000"},
                                   {"segment.ms", "100000"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->delete_retention_ms, 10);
    EXPECT_EQ(c->min_cleanable_dirty_ratio, 0.01);
    EXPECT_EQ(c->min_compaction_lag_ms, 7);
    EXPECT_EQ(*topic_config_value(*c, "min.cleanable.dirty.ratio"), "0.01");
    EXPECT_EQ(*topic_config_value(*c, "max.compaction.lag.ms"), "60000");
    // The active segment of a compacted topic rolls by max.compaction.lag.ms when smaller.
    EXPECT_EQ(c->effective_roll_ms(), 60000);
    c->cleanup_policy = "delete";
    EXPECT_EQ(c->effective_roll_ms(), 100000);
    // Kafka refuses min.compaction.lag.ms above max.compaction.lag.ms, naming the key.
    auto bad = resolve_topic_config({}, {{"min.compaction.lag.ms", "10"}, {"max.compaction.lag.ms", "5"}});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("min.compaction.lag.ms"), std::string::npos);
}

TEST(topic_config, partition_spec_checked_and_canonical) {
    auto c = resolve_topic_config({}, {{"floe.iceberg.partition-spec", " stream_key,day( message_ts )"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->iceberg_partition_spec, "identity(stream_key), day(message_ts)");
    EXPECT_EQ(resolve_topic_config({}, {})->iceberg_partition_spec, "identity(stream_key)");
    for (auto [v, names] : {std::pair{"day(key)", "'day(key)'"}, {"hour(nope)", "'nope'"},
                            {"bucket(key)", "bucket[N]"}, {"", "empty"}, {"weekly(message_ts)", "weekly"}}) {
        auto r = validate_topic_config("floe.iceberg.partition-spec", v);
        ASSERT_FALSE(r) << v;
        EXPECT_NE(r.error().message().find("floe.iceberg.partition-spec"), std::string::npos) << r.error().message();
        EXPECT_NE(r.error().message().find(names), std::string::npos) << v << ": " << r.error().message();
    }
}
