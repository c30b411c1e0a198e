#include "app/cluster_lake.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace floe;
using namespace floe::app;

namespace {

config::settings settings_of(std::vector<std::string> sets) {
    config::load_options o;
    o.default_config_path = "/nonexistent/floe.yaml";
    o.overrides = std::move(sets);
    auto s = config::load(o);
    EXPECT_TRUE(s) << s.error();
    return std::move(*s);
}

} // namespace

// Paths are made absolute and normalized, passwords removed, and a URI a catalog does not use
// does not count.
TEST(cluster_lake, configured_lake_normalizes) {
    auto cwd = std::filesystem::current_path().string();
    auto l = configured_lake(settings_of({"floe.data-dir=/srv/b1", "floe.storage.remote.catalog.uri=sqlite://x/../cat.db",
                                          "floe.storage.remote.path=file:///srv/lake/wh/"}));
    EXPECT_EQ(l.catalog_type, "sql");
    EXPECT_EQ(l.catalog_uri, "sqlite://" + cwd + "/cat.db");
    EXPECT_EQ(l.warehouse, "file:///srv/lake/wh");
    EXPECT_EQ(l.ns, "floe");
    auto pg = configured_lake(settings_of({"floe.storage.remote.catalog.uri=postgresql://floe:s3cret@db:5432/cat"}));
    EXPECT_EQ(pg.catalog_uri.find("s3cret"), std::string::npos) << pg.catalog_uri;
    EXPECT_NE(pg.catalog_uri.find("postgresql://floe:"), std::string::npos) << pg.catalog_uri;
    auto fs1 = configured_lake(settings_of({"floe.data-dir=/srv/b1", "floe.storage.remote.catalog.type=filesystem",
                                            "floe.storage.remote.path=file:///srv/wh"}));
    auto fs2 = configured_lake(settings_of({"floe.data-dir=/srv/b2", "floe.storage.remote.catalog.type=filesystem",
                                            "floe.storage.remote.path=file:///srv/wh"}));
    EXPECT_TRUE(compare_lakes(fs1, fs2).empty()) << "the unused SQLite default under each data dir must not count";
}

TEST(cluster_lake, each_differing_setting_is_named_with_both_values) {
    auto a = configured_lake(settings_of({"floe.data-dir=/srv/b1"}));
    auto b = configured_lake(settings_of({"floe.data-dir=/srv/b2"}));
    a.catalog_id = "id-1";
    b.catalog_id = "id-1";
    auto d = compare_lakes(a, b);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].setting, "floe.storage.remote.catalog.uri");
    EXPECT_EQ(d[0].cluster_value, "sqlite:///srv/b1/catalog.db");
    EXPECT_EQ(d[0].broker_value, "sqlite:///srv/b2/catalog.db");
    EXPECT_EQ(d[1].setting, "floe.storage.remote.path");
    auto msg = describe_lake_mismatch(d, b, "/srv/b2");
    EXPECT_NE(msg.find("floe.storage.remote.path: cluster 'file:///srv/b1/warehouse', this broker "
                       "'file:///srv/b2/warehouse'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("under floe.data-dir (/srv/b2)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("floe cluster lake set"), std::string::npos) << msg;

    // Same settings, another catalog behind them: the id tells; no id on one side: not compared.
    auto c = a;
    c.catalog_id = "id-2";
    auto ids = compare_lakes(a, c);
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_NE(ids[0].setting.find("floe.lake-id"), std::string::npos);
    c.catalog_id.clear();
    EXPECT_TRUE(compare_lakes(a, c).empty());
}

TEST(cluster_lake, record_round_trips_through_json) {
    lake_identity l{"sql", "postgresql://floe:****@db/cat", "s3://b/wh", "floe", "1234"};
    auto back = lake_identity::from_json(l.to_json());
    ASSERT_TRUE(back) << back.error();
    EXPECT_TRUE(compare_lakes(l, *back).empty());
    EXPECT_EQ(back->catalog_id, "1234");
    EXPECT_FALSE(lake_identity::from_json("not json"));
    EXPECT_EQ(cluster_lake_key("floe"), "floe{floe.brokers}.lake");
}
