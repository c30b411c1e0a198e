#include "config/settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

namespace floe::config {
namespace {

namespace fs = std::filesystem;

class SettingsTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path()
               / fmt::format("floe-config-test-{}-{}", ::getpid(),
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(_dir);
        fs::create_directories(_dir);
    }
    void TearDown() override { fs::remove_all(_dir); }

    std::string write_yaml(const std::string& text) {
        auto p = (_dir / "floe.yaml").string();
        std::ofstream(p) << text;
        return p;
    }

    result<settings> load_with(std::optional<std::string> file, std::vector<std::string> env,
                               std::vector<std::string> sets) {
        _env_storage = std::move(env);
        _env_ptrs.clear();
        for (auto& e : _env_storage) _env_ptrs.push_back(e.data());
        load_options o;
        o.config_path = std::move(file);
        o.default_config_path = (_dir / "absent.yaml").string();
        o.overrides = std::move(sets);
        o.environment = _env_ptrs;
        return load(o);
    }

    fs::path _dir;
    std::vector<std::string> _env_storage;
    std::vector<char*> _env_ptrs;
};

TEST_F(SettingsTest, DefaultsMatchTheDesign) {
    auto s = load_with(std::nullopt, {}, {"floe.data-dir=/var/lib/floe"});
    ASSERT_TRUE(s) << s.error();
    EXPECT_EQ(s->get_string("floe.kafka.listen"), "127.0.0.1:9092");
    EXPECT_EQ(s->get_string("floe.kafka.advertised-listener"), "127.0.0.1:9092");
    EXPECT_EQ(s->get_string("floe.http.listen"), "127.0.0.1:8080");
    EXPECT_EQ(s->get_string("floe.namespace"), "floe");
    EXPECT_EQ(s->get_string("floe.storage.remote.path"), "file:///var/lib/floe/warehouse");
    EXPECT_EQ(s->get_string("floe.storage.remote.catalog.type"), "sql");
    EXPECT_EQ(s->get_string("floe.storage.remote.catalog.uri"), "sqlite:///var/lib/floe/catalog.db");
    EXPECT_EQ(s->get_size("floe.storage.remote.iceberg.row-group-size"), 128'000'000);
    EXPECT_EQ(s->get_size("floe.storage.remote.iceberg.target-file-size"), 128'000'000);
    EXPECT_EQ(s->get_string("floe.storage.remote.iceberg.compression"), "zstd");
    EXPECT_TRUE(s->get_bool("floe.storage.worker.enabled"));
    EXPECT_EQ(s->get_duration("floe.storage.worker.tick-interval"), std::chrono::seconds(10));
    EXPECT_EQ(s->get_duration("floe.storage.worker.lease-duration"), std::chrono::minutes(2));
    EXPECT_TRUE(s->get_bool("floe.auto-create-topics"));
    EXPECT_EQ(s->get_int("floe.default-partitions"), 1);
    EXPECT_FALSE(s->get_optional("floe.storage.remote.s3.region"));
    auto td = s->topic_defaults();
    EXPECT_EQ(td["remote.storage.enable"], "false");
    EXPECT_EQ(td["local.retention.ms"], "-2");
    EXPECT_EQ(td["segment.bytes"], "1073741824");
    EXPECT_EQ(td["cleanup.policy"], "delete");
}

TEST_F(SettingsTest, PrecedenceIsDefaultsFileEnvThenSet) {
    auto file = write_yaml(R"(floe:
  kafka:
    listen: 127.0.0.1:1001
  http.listen: 127.0.0.1:2001
  namespace: from_file
  storage:
    worker:
      tick-interval: 1s
  topic-defaults:
    remote.storage.enable: true
    segment.ms: 1000
)");
    auto s = load_with(file, {"FLOE_HTTP_LISTEN=127.0.0.1:2002", "FLOE_NAMESPACE=from_env",
                              "PATH=/usr/bin", "FLOE_TOPIC_DEFAULTS_SEGMENT_MS=2000"},
                       {"floe.namespace=from_set"});
    ASSERT_TRUE(s) << s.error();
    EXPECT_EQ(s->get_string("floe.kafka.listen"), "127.0.0.1:1001");
    EXPECT_EQ(s->get_string("floe.http.listen"), "127.0.0.1:2002");
    EXPECT_EQ(s->get_string("floe.namespace"), "from_set");
    EXPECT_EQ(s->get_duration("floe.storage.worker.tick-interval"), std::chrono::seconds(1));
    EXPECT_EQ(s->topic_defaults()["remote.storage.enable"], "true");
    EXPECT_EQ(s->topic_defaults()["segment.ms"], "2000");
    // Only what a source set, for the broker to report the rest as Kafka's defaults.
    auto set = s->topic_defaults(/*overridden_only=*/true);
    EXPECT_EQ(set.size(), 2u);
    EXPECT_EQ(set["remote.storage.enable"], "true");
    // Derived defaults follow the value actually in force.
    EXPECT_EQ(s->get_string("floe.kafka.advertised-listener"), "127.0.0.1:1001");

    std::map<std::string, std::string> sources;
    for (auto& e : s->entries())
        sources[std::string(e.def->name)] = e.source.describe();
    EXPECT_EQ(sources["floe.kafka.listen"], "file " + file + ":3");
    EXPECT_EQ(sources["floe.http.listen"], "env FLOE_HTTP_LISTEN");
    EXPECT_EQ(sources["floe.namespace"], "--set");
    EXPECT_EQ(sources["floe.data-dir"], "default");
    EXPECT_EQ(sources["floe.kafka.advertised-listener"], "default (from floe.kafka.listen)");
}

void expect_error(const result<settings>& r, std::initializer_list<std::string_view> parts) {
    ASSERT_FALSE(r) << "expected an error";
    EXPECT_EQ(r.error().code(), errc::invalid_argument) << r.error();
    for (auto p : parts)
        EXPECT_NE(r.error().message().find(p), std::string::npos)
            << "'" << p << "' not in: " << r.error().message();
}

TEST_F(SettingsTest, S3SettingsValidated) {
    auto ok = load_with(std::nullopt, {},
                        {"floe.storage.remote.path=s3://b/wh", "floe.storage.remote.s3.access-key-id=AK",
                         "floe.storage.remote.s3.secret-access-key=SK", "floe.storage.remote.s3.session-token=T",
                         "floe.storage.remote.s3.multipart-part-size=8MiB"});
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->get_size("floe.storage.remote.s3.multipart-part-size"), 8 << 20);
    EXPECT_EQ(ok->get_int("floe.storage.remote.s3.max-attempts"), 5);
    EXPECT_TRUE(registry::instance().find("floe.storage.remote.s3.session-token")->secret);
    EXPECT_TRUE(registry::instance().find("floe.storage.remote.s3.secret-access-key")->secret);
    auto half = load_with(std::nullopt, {}, {"floe.storage.remote.s3.access-key-id=AK"});
    ASSERT_FALSE(half);
    EXPECT_NE(half.error().message().find("floe.storage.remote.s3.secret-access-key"), std::string::npos);
    auto ep = load_with(std::nullopt, {}, {"floe.storage.remote.s3.endpoint=localhost:9000"});
    ASSERT_FALSE(ep);
    EXPECT_NE(ep.error().message().find("floe.storage.remote.s3.endpoint"), std::string::npos);
    auto small = load_with(std::nullopt, {}, {"floe.storage.remote.s3.multipart-part-size=1MiB"});
    ASSERT_FALSE(small);
    EXPECT_NE(small.error().message().find("multipart-part-size"), std::string::npos);
}

TEST_F(SettingsTest, UnknownKeyNamesKeyAndSource) {
    expect_error(load_with(std::nullopt, {}, {"floe.kafka.lisen=1.2.3.4:1"}),
                 {"unknown setting 'floe.kafka.lisen'", "--set"});
    auto file = write_yaml("floe:\n  storage:\n    remote:\n      pth: file:///x\n");
    expect_error(load_with(file, {}, {}), {"floe.storage.remote.pth", "floe.yaml:4"});
    expect_error(load_with(std::nullopt, {"FLOE_KAFKA_LISEN=x"}, {}),
                 {"FLOE_KAFKA_LISEN", "environment"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.segment.millis=5"}),
                 {"floe.topic-defaults.segment.millis", "Kafka topic config names"});
    expect_error(load_with(std::nullopt, {}, {"kafka.listen=x"}), {"start with 'floe.'"});
}

TEST_F(SettingsTest, UnknownKeyGetsTheNearestSettingSuggested) {
    expect_error(load_with(std::nullopt, {}, {"floe.kafka.lisen=1.2.3.4:1"}),
                 {"did you mean 'floe.kafka.listen'?"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.worker.tick-intervall=1s"}),
                 {"did you mean 'floe.storage.worker.tick-interval'?"});
    // A segment left out: the one setting with that last segment.
    expect_error(load_with(std::nullopt, {}, {"floe.storage.tick-interval=1s"}),
                 {"did you mean 'floe.storage.worker.tick-interval'?"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.segmnt.ms=5"}),
                 {"did you mean 'floe.topic-defaults.segment.ms'?"});
    auto file = write_yaml("floe:\n  data-dri: /tmp/x\n");
    expect_error(load_with(file, {}, {}), {"floe.data-dri", "floe.yaml:2", "did you mean 'floe.data-dir'?"});
    expect_error(load_with(std::nullopt, {"FLOE_KAFKA_LISEN=x"}, {}), {"did you mean 'FLOE_KAFKA_LISTEN'?"});
    // Nothing near: no guess.
    auto far = load_with(std::nullopt, {}, {"floe.something-else=1"});
    ASSERT_FALSE(far);
    EXPECT_EQ(far.error().message().find("did you mean"), std::string::npos) << far.error().message();
}

TEST_F(SettingsTest, WrongTypesNameKeyAndSource) {
    expect_error(load_with(std::nullopt, {}, {"floe.storage.worker.enabled=maybe"}),
                 {"floe.storage.worker.enabled", "--set", "not a boolean", "expected bool"});
    expect_error(load_with(std::nullopt, {"FLOE_DEFAULT_PARTITIONS=three"}, {}),
                 {"floe.default-partitions", "env FLOE_DEFAULT_PARTITIONS", "not an integer"});
    expect_error(load_with(std::nullopt, {}, {"floe.kafka.listen=localhost"}),
                 {"floe.kafka.listen", "not host:port"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.path=/tmp/wh"}),
                 {"floe.storage.remote.path", "file:// or s3://"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.iceberg.compression=brotli"}),
                 {"floe.storage.remote.iceberg.compression", "not one of zstd, snappy"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.remote.storage.enable=1x"}),
                 {"floe.topic-defaults.remote.storage.enable"});
    auto file = write_yaml("floe:\n  kafka:\n    listen: [a, b]\n");
    expect_error(load_with(file, {}, {}), {"floe.kafka.listen", "not a list"});
}

TEST_F(SettingsTest, BadSizesAndDurations) {
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.iceberg.row-group-size=12 parsecs"}),
                 {"floe.storage.remote.iceberg.row-group-size", "unknown unit"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.iceberg.row-group-size=1KB"}),
                 {"row-group-size", "outside 64KiB..2GiB"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.worker.tick-interval=10"}),
                 {"floe.storage.worker.tick-interval", "needs a unit"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.worker.tick-interval=5 weeks"}),
                 {"tick-interval", "unknown unit"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.worker.lease-duration=10ms"}),
                 {"lease-duration", "outside 1s..1d"});
    expect_error(load_with(std::nullopt, {}, {"floe.default-partitions=0"}),
                 {"floe.default-partitions", "outside 1..10000"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.local.retention.ms=-3"}),
                 {"local.retention.ms", "below the minimum -2"});
    auto ok = load_with(std::nullopt, {},
                        {"floe.storage.remote.iceberg.row-group-size=1GiB",
                         "floe.storage.worker.tick-interval=500ms"});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->get_size("floe.storage.remote.iceberg.row-group-size"), 1ll << 30);
    EXPECT_EQ(ok->get_duration("floe.storage.worker.tick-interval"), std::chrono::milliseconds(500));
}

// The broker's caps on one Fetch answer (kept under librdkafka's pre-fetch queue limits).
TEST_F(SettingsTest, FetchAnswerCaps) {
    auto s = load_with(std::nullopt, {}, {});
    ASSERT_TRUE(s) << s.error();
    EXPECT_EQ(s->get_size("floe.kafka.fetch-max-bytes"), 16ll << 20);
    EXPECT_EQ(s->get_int("floe.kafka.fetch-max-records"), 32768);
    expect_error(load_with(std::nullopt, {}, {"floe.kafka.fetch-max-records=0"}),
                 {"floe.kafka.fetch-max-records", "outside 1.."});
    expect_error(load_with(std::nullopt, {"FLOE_KAFKA_FETCH_MAX_BYTES=512B"}, {}),
                 {"floe.kafka.fetch-max-bytes", "env FLOE_KAFKA_FETCH_MAX_BYTES", "outside 1KiB..2GiB"});
    auto big = load_with(std::nullopt, {}, {"floe.kafka.fetch-max-bytes=64MiB", "floe.kafka.fetch-max-records=1000000"});
    ASSERT_TRUE(big) << big.error();
    EXPECT_EQ(big->get_size("floe.kafka.fetch-max-bytes"), 64ll << 20);
    EXPECT_EQ(big->get_int("floe.kafka.fetch-max-records"), 1000000);
}

TEST_F(SettingsTest, FileProblems) {
    expect_error(load_with(std::nullopt, {}, {"no-equals-sign"}), {"must be key=value"});
    auto missing = load_with((_dir / "nope.yaml").string(), {}, {});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found);
    EXPECT_NE(missing.error().message().find("nope.yaml"), std::string::npos);
    expect_error(load_with(write_yaml("floe: [unclosed\n"), {}, {}), {"floe.yaml", "not valid YAML"});
    expect_error(load_with(write_yaml("- a\n- b\n"), {}, {}), {"map of settings"});
    expect_error(load_with(write_yaml("floe:\n  namespace:\n"), {}, {}),
                 {"floe.namespace", "has no value"});
    auto empty = load_with(write_yaml(""), {}, {});
    EXPECT_TRUE(empty) << empty.error();
}

TEST_F(SettingsTest, CatalogUriMustFitType) {
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.uri=http://x"}),
                 {"catalog.uri", "catalog type sql"});
    auto ok = load_with(std::nullopt, {},
                        {"floe.storage.remote.catalog.uri=postgresql://u@127.0.0.1/floe"});
    EXPECT_TRUE(ok) << ok.error();
}

// Issue 31: the Glue, Nessie and SigV4 settings are checked at start-up, naming the key.
TEST_F(SettingsTest, GlueNessieAndSigv4Settings) {
    auto glue = load_with(std::nullopt, {},
                          {"floe.storage.remote.catalog.type=glue", "floe.storage.remote.catalog.glue.region=eu-west-1",
                           "floe.storage.remote.catalog.glue.catalog-id=123456789012",
                           "floe.storage.remote.catalog.glue.endpoint=http://127.0.0.1:5000",
                           "floe.aws.role-arn=arn:aws:iam::123456789012:role/floe", "floe.aws.external-id=x",
                           "floe.aws.role-duration=20m"});
    ASSERT_TRUE(glue) << glue.error();
    EXPECT_EQ(glue->get_duration("floe.aws.role-duration"), std::chrono::minutes(20));
    EXPECT_EQ(glue->get_string("floe.aws.session-name"), "floe");
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=glue",
                                              "floe.storage.remote.catalog.glue.endpoint=glue.local"}),
                 {"floe.storage.remote.catalog.glue.endpoint", "http://"});
    // Hive: a thrift:// metastore URI (the SQLite default does not fit), lock wait and heartbeat.
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=hive"}),
                 {"floe.storage.remote.catalog.uri", "catalog type hive", "thrift://"});
    auto hive = load_with(std::nullopt, {},
                          {"floe.storage.remote.catalog.type=hive", "floe.storage.remote.catalog.uri=thrift://hms:9083",
                           "floe.storage.remote.catalog.hive.lock-wait=30s"});
    ASSERT_TRUE(hive) << hive.error();
    EXPECT_EQ(hive->get_duration("floe.storage.remote.catalog.hive.lock-wait"), std::chrono::seconds(30));
    EXPECT_EQ(hive->get_duration("floe.storage.remote.catalog.hive.heartbeat-interval"), std::chrono::minutes(1));
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=hive",
                                              "floe.storage.remote.catalog.uri=http://hms:9083"}),
                 {"catalog type hive"});
    auto nessie = load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=nessie",
                                               "floe.storage.remote.catalog.uri=http://nessie:19120/iceberg"});
    ASSERT_TRUE(nessie) << nessie.error();
    EXPECT_EQ(nessie->get_string("floe.storage.remote.catalog.ref"), "main");
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=nessie"}),
                 {"catalog.uri", "catalog type nessie"});
    expect_error(load_with(std::nullopt, {}, {"floe.storage.remote.catalog.type=rest",
                                              "floe.storage.remote.catalog.uri=https://glue.eu-west-1.amazonaws.com/iceberg",
                                              "floe.storage.remote.catalog.rest.sigv4.enabled=true",
                                              "floe.storage.remote.catalog.token=t"}),
                 {"sigv4.enabled", "catalog.token"});
    expect_error(load_with(std::nullopt, {}, {"floe.aws.external-id=x"}), {"floe.aws.external-id", "floe.aws.role-arn"});
    expect_error(load_with(std::nullopt, {}, {"floe.aws.role-duration=100ms"}), {"floe.aws.role-duration"});
}

// Issue 30: the key provider settings are checked at start-up, naming the key.
TEST_F(SettingsTest, EncryptionSettings) {
    auto none = load_with(std::nullopt, {}, {});
    ASSERT_TRUE(none) << none.error();
    EXPECT_FALSE(none->get_optional("floe.encryption.provider"));
    EXPECT_EQ(none->get_string("floe.encryption.kms.data-key-spec"), "AES_256");
    EXPECT_EQ(none->get_int("floe.encryption.kms.cache-size"), 10000);
    EXPECT_EQ(none->topic_defaults().at("floe.iceberg.encryption"), "none");
    EXPECT_EQ(none->topic_defaults().at("floe.iceberg.encryption.footer"), "encrypted");
    EXPECT_EQ(none->topic_defaults().at("floe.iceberg.encryption.algorithm"), "AES_GCM_V1");

    auto kr = load_with(std::nullopt, {"FLOE_ENCRYPTION_PROVIDER=keyring"},
                        {"floe.encryption.keyring-file=/etc/floe/keys.json",
                         "floe.topic-defaults.floe.iceberg.encryption=uniform"});
    ASSERT_TRUE(kr) << kr.error();
    EXPECT_EQ(kr->get_optional("floe.encryption.provider"), "keyring");
    EXPECT_EQ(kr->topic_defaults(true).at("floe.iceberg.encryption"), "uniform");
    auto kms = load_with(std::nullopt, {},
                         {"floe.encryption.provider=aws-kms", "floe.encryption.kms.key-id=alias/floe",
                          "floe.encryption.kms.endpoint=http://127.0.0.1:4566",
                          "floe.encryption.kms.data-key-spec=AES_128"});
    ASSERT_TRUE(kms) << kms.error();

    expect_error(load_with(std::nullopt, {}, {"floe.encryption.provider=vault"}),
                 {"floe.encryption.provider", "not one of"});
    expect_error(load_with(std::nullopt, {}, {"floe.encryption.provider=keyring"}),
                 {"floe.encryption.keyring-file"});
    expect_error(load_with(std::nullopt, {}, {"floe.encryption.provider=aws-kms"}),
                 {"floe.encryption.kms.key-id"});
    expect_error(load_with(std::nullopt, {}, {"floe.encryption.provider=aws-kms", "floe.encryption.kms.key-id=k",
                                              "floe.encryption.kms.endpoint=kms.local"}),
                 {"floe.encryption.kms.endpoint", "http://"});
    expect_error(load_with(std::nullopt, {}, {"floe.encryption.kms.data-key-spec=AES_192"}),
                 {"floe.encryption.kms.data-key-spec"});
    expect_error(load_with(std::nullopt, {}, {"floe.encryption.kms.cache-size=0"}),
                 {"floe.encryption.kms.cache-size"});
    // A topic default asking for encryption without a provider stops start-up.
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.floe.iceberg.encryption=uniform"}),
                 {"floe.topic-defaults.floe.iceberg.encryption", "floe.encryption.provider"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.floe.iceberg.encryption=all"}),
                 {"floe.topic-defaults.floe.iceberg.encryption"});
    expect_error(load_with(std::nullopt, {}, {"floe.topic-defaults.floe.iceberg.encryption.algorithm=AES_CBC"}),
                 {"floe.iceberg.encryption.algorithm"});
}

TEST_F(SettingsTest, EnvNamesFollowTheRule) {
    EXPECT_EQ(registry::instance().find("floe.storage.remote.path")->env_name(),
              "FLOE_STORAGE_REMOTE_PATH");
    EXPECT_EQ(registry::instance().find("floe.storage.remote.s3.path-style-access")->env_name(),
              "FLOE_STORAGE_REMOTE_S3_PATH_STYLE_ACCESS");
    // Env names are unique, so an environment variable maps to exactly one setting.
    std::set<std::string> names;
    for (auto& d : registry::instance().all()) EXPECT_TRUE(names.insert(d.env_name()).second) << d.name;
}

TEST_F(SettingsTest, EveryDefaultValidatesAndIsDescribed) {
    for (auto& d : registry::instance().all()) {
        EXPECT_FALSE(d.description.empty()) << d.name;
        if (!d.default_text.empty()) EXPECT_TRUE(validate(d, d.default_text)) << d.name;
        else EXPECT_TRUE(d.optional) << d.name;
    }
}


TEST_F(SettingsTest, IngestSourcesAreADynamicFamily) {
    auto file = write_yaml("floe:\n  ingest:\n    sources:\n      orders:\n        type: kafka\n"
                           "        bootstrap-servers: 127.0.0.1:9092\n        topics: a,b\n"
                           "        librdkafka:\n          security.protocol: plaintext\n");
    auto s = load_with(file, {}, {"floe.ingest.sources.orders.group-id=g1",
                                  "floe.ingest.sources.more.type=kafka",
                                  "floe.ingest.sources.more.bootstrap-servers=h:1",
                                  "floe.ingest.sources.more.topics=^ev\\..*",
                                  "floe.ingest.sources.more.start=latest",
                                  "floe.ingest.sources.more.topic-prefix=src."});
    ASSERT_TRUE(s) << s.error();
    auto& src = s->ingest_sources();
    ASSERT_EQ(src.size(), 2u);
    auto& o = src.at("orders");
    EXPECT_EQ(o.get("type"), "kafka");
    EXPECT_EQ(o.get("topics"), "a,b");
    EXPECT_EQ(o.get("group-id"), "g1");
    EXPECT_EQ(o.get("librdkafka.security.protocol"), "plaintext");
    EXPECT_EQ(src.at("more").get("start"), "latest");
    EXPECT_EQ(src.at("more").get("topic-prefix"), "src.");

    // Unknown sub-keys, bad values and missing requirements stop start-up naming the key.
    auto err = [&](std::vector<std::string> sets) {
        auto r = load_with(std::nullopt, {}, std::move(sets));
        EXPECT_FALSE(r);
        return r ? std::string() : r.error().message();
    };
    EXPECT_NE(err({"floe.ingest.sources.x.bootstrap=h:1"}).find("floe.ingest.sources.x.bootstrap"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.x.start=middle"}).find("floe.ingest.sources.x.start"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.x.type=mq"}).find("floe.ingest.sources.x.type"), std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.x.topics=a"}).find("floe.ingest.sources.x.type"), std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.x.type=kafka", "floe.ingest.sources.x.topics=a"})
                  .find("floe.ingest.sources.x.bootstrap-servers"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.x.type=kafka", "floe.ingest.sources.x.topics=a",
                   "floe.ingest.sources.x.bootstrap-servers=h:1", "floe.ingest.sources.x.stream=s"})
                  .find("floe.ingest.sources.x.stream"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.b@d.type=kafka"}).find("floe.ingest.sources.b@d.type"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1"})
                  .find("floe.ingest.sources.j.stream"),
              std::string::npos);
    // Thresholds and the budget: typed, positive; a wrong one names its key.
    for (auto bad : {"max-age=-1s", "max-age=soon", "max-messages=-1", "max-messages=1x", "max-bytes=-1",
                     "max-bytes=lots", "idle-seal=-1s", "idle-seal=soon", "max-local-bytes=0",
                     "overrides.S.max-age=soon", "overrides.S.idle-seal=soon", "overrides.S.url=x", "overrides.S=x",
                     "overrides..mode=offload"}) {
        std::string kv = std::string("floe.ingest.sources.j.") + bad;
        auto key = kv.substr(0, kv.find('='));
        EXPECT_NE(err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                       "floe.ingest.sources.j.stream=S", kv})
                      .find(key),
                  std::string::npos)
            << bad;
    }
    EXPECT_NE(err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                   "floe.ingest.sources.j.stream=S", "floe.ingest.sources.j.mode=keep"})
                  .find("floe.ingest.sources.j.mode"),
              std::string::npos);
    // Thresholds of 0 (every message at once); stream and streams, exactly one of them.
    EXPECT_TRUE(load_with(std::nullopt, {}, {"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                                             "floe.ingest.sources.j.stream=S", "floe.ingest.sources.j.max-age=0",
                                             "floe.ingest.sources.j.max-messages=0", "floe.ingest.sources.j.max-bytes=0"}));
    EXPECT_NE(err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                   "floe.ingest.sources.j.stream=S", "floe.ingest.sources.j.streams=A,B"})
                  .find("not both"),
              std::string::npos);
    EXPECT_NE(err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                   "floe.ingest.sources.j.streams=A", "floe.ingest.sources.j.overrides.A.mode=offload",
                   "floe.ingest.sources.j.overrides.A.remote-storage=false"})
                  .find("floe.ingest.sources.j.overrides.A.mode"),
              std::string::npos);
    auto many_file = write_yaml("floe:\n  ingest:\n    sources:\n      n:\n        type: jetstream\n"
                                "        url: nats://h:1\n        streams: [ORDERS, KV_cfg, OBJ_files]\n"
                                "        topic-prefix: nats.\n        overrides:\n          ORDERS:\n"
                                "            mode: offload\n            max-age: 0\n");
    auto many = load_with(many_file, {}, {});
    ASSERT_TRUE(many) << many.error();
    auto& n = many->ingest_sources().at("n");
    EXPECT_EQ(n.get("streams"), "ORDERS,KV_cfg,OBJ_files");
    EXPECT_EQ(n.get("topic-prefix"), "nats.");
    EXPECT_EQ(n.get("overrides.ORDERS.mode"), "offload");
    EXPECT_EQ(n.get("overrides.ORDERS.max-age"), "0");
    auto j = load_with(std::nullopt, {}, {"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                                          "floe.ingest.sources.j.stream=S", "floe.ingest.sources.j.topic=s.mirror",
                                          "floe.ingest.sources.j.mode=offload", "floe.ingest.sources.j.max-age=1s",
                                          "floe.ingest.sources.j.max-messages=1000", "floe.ingest.sources.j.max-bytes=1MiB",
                                          "floe.ingest.sources.j.max-local-bytes=64MiB"});
    ASSERT_TRUE(j) << j.error();
    EXPECT_EQ(j->ingest_sources().at("j").get("topic"), "s.mirror");
    EXPECT_EQ(j->ingest_sources().at("j").get("max-age"), "1s");
    // The budget applies to Kafka sources too.
    EXPECT_TRUE(load_with(std::nullopt, {}, {"floe.ingest.sources.k.type=kafka", "floe.ingest.sources.k.topics=a",
                                             "floe.ingest.sources.k.bootstrap-servers=h:1",
                                             "floe.ingest.sources.k.max-local-bytes=1GiB"}));
    // So do the seal thresholds (a Kafka mirror lands in Iceberg without waiting for segment.ms)
    // and remote-storage, the opt-out of landing mirrors in Iceberg (true or false).
    auto k = load_with(std::nullopt, {}, {"floe.ingest.sources.k.type=kafka", "floe.ingest.sources.k.topics=a",
                                          "floe.ingest.sources.k.bootstrap-servers=h:1",
                                          "floe.ingest.sources.k.max-age=1s", "floe.ingest.sources.k.max-messages=10",
                                          "floe.ingest.sources.k.max-bytes=1MiB", "floe.ingest.sources.k.idle-seal=200ms",
                                          "floe.ingest.sources.k.remote-storage=false"});
    ASSERT_TRUE(k) << k.error();
    EXPECT_EQ(k->ingest_sources().at("k").get("idle-seal"), "200ms");
    EXPECT_EQ(k->ingest_sources().at("k").get("remote-storage"), "false");
    EXPECT_NE(err({"floe.ingest.sources.k.type=kafka", "floe.ingest.sources.k.topics=a",
                   "floe.ingest.sources.k.bootstrap-servers=h:1", "floe.ingest.sources.k.remote-storage=off"})
                  .find("floe.ingest.sources.k.remote-storage"),
              std::string::npos);
    // mode=offload removes from NATS what Iceberg holds: it cannot go with remote-storage=false.
    auto both = err({"floe.ingest.sources.j.type=jetstream", "floe.ingest.sources.j.url=nats://h:1",
                     "floe.ingest.sources.j.stream=S", "floe.ingest.sources.j.mode=offload",
                     "floe.ingest.sources.j.remote-storage=false"});
    EXPECT_NE(both.find("floe.ingest.sources.j.remote-storage"), std::string::npos) << both;
    EXPECT_NE(both.find("floe.ingest.sources.j.mode"), std::string::npos) << both;
}

} // namespace
} // namespace floe::config
