#include "iceberg/metadata.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace floe;
using namespace floe::iceberg;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<fs::path> spark_metadata_files() {
    std::vector<fs::path> out;
    fs::path root(FLOE_SPARK_FIXTURES);
    if (!fs::exists(root)) return out;
    for (auto& e : fs::recursive_directory_iterator(root))
        if (e.path().string().ends_with(".metadata.json")) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST(iceberg_schema, floe_schema_has_design_field_ids) {
    auto& s = floe_table_schema();
    auto j = to_json(s);
    const char* names[] = {"stream_key", "segment_id", "message_id", "message_ts", "kafka_timestamp",
                           "key", "value", "headers", "partition", "offset"};
    const bool required[] = {true, true, true, true, true, false, false, false, true, true};
    ASSERT_EQ(j["fields"].size(), 10u);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(j["fields"][i]["id"], i + 1);
        EXPECT_EQ(j["fields"][i]["name"], names[i]);
        EXPECT_EQ(j["fields"][i]["required"], required[i]);
    }
    auto& h = j["fields"][7]["type"];
    EXPECT_EQ(h["type"], "list");
    EXPECT_EQ(h["element-id"], 11);
    EXPECT_EQ(h["element"]["fields"][0]["id"], 12);
    EXPECT_EQ(h["element"]["fields"][0]["name"], "header_key");
    EXPECT_EQ(h["element"]["fields"][1]["id"], 13);
    EXPECT_EQ(h["element"]["fields"][1]["required"], false);
    EXPECT_EQ(s.highest_field_id(), 13);
    EXPECT_EQ(s.find(12)->name, "header_key");
    // Round trip through JSON.
    auto back = schema_from_json(nlohmann::json::parse(j.dump()));
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(to_json(*back).dump(), j.dump());
}

TEST(iceberg_metadata, reads_every_spark_metadata_file_and_round_trips) {
    auto files = spark_metadata_files();
    ASSERT_GE(files.size(), 6u);
    for (auto& p : files) {
        auto m = parse_metadata(slurp(p));
        ASSERT_TRUE(m) << p << ": " << m.error();
        auto text = to_json_text(*m);
        auto again = parse_metadata(text);
        ASSERT_TRUE(again) << p << ": " << again.error();
        EXPECT_EQ(to_json_text(*again), text) << p;
        // Compare with the raw JSON, independently of our model.
        auto raw = nlohmann::json::parse(slurp(p));
        EXPECT_EQ(m->table_uuid, raw["table-uuid"].get<std::string>());
        EXPECT_EQ(m->last_column_id, raw["last-column-id"].get<int>());
        EXPECT_EQ(m->snapshots.size(), raw.value("snapshots", nlohmann::json::array()).size());
        auto cur = raw.value("current-snapshot-id", int64_t{-1});
        EXPECT_EQ(m->current_snapshot_id.value_or(-1), cur) << p;
        for (size_t i = 0; i < m->snapshots.size(); ++i) {
            EXPECT_EQ(m->snapshots[i].snapshot_id, raw["snapshots"][i]["snapshot-id"].get<int64_t>());
            EXPECT_EQ(m->snapshots[i].sequence_number, raw["snapshots"][i]["sequence-number"].get<int64_t>());
            EXPECT_EQ(m->snapshots[i].summary.at("total-records"),
                      raw["snapshots"][i]["summary"]["total-records"].get<std::string>());
        }
        EXPECT_EQ(m->metadata_log.size(), raw.value("metadata-log", nlohmann::json::array()).size());
    }
}

TEST(iceberg_metadata, spark_partition_bigint_values) {
    auto m = parse_metadata(slurp(fs::path(FLOE_SPARK_FIXTURES) / "partition_bigint/metadata/v2.metadata.json"));
    ASSERT_TRUE(m) << m.error();
    EXPECT_EQ(m->last_sequence_number, 1);
    EXPECT_EQ(m->current_snapshot_id, 1919487672997309926);
    EXPECT_EQ(m->refs.at("main").snapshot_id, 1919487672997309926);
    ASSERT_EQ(m->default_spec()->fields.size(), 1u);
    EXPECT_EQ(m->default_spec()->fields[0].transform, "identity");
    EXPECT_EQ(m->default_spec()->fields[0].field_id, 1000);
    EXPECT_EQ(m->current_schema()->find(3)->name, "event_type");
    EXPECT_EQ(m->current_snapshot()->operation(), "append");
}

TEST(iceberg_metadata, new_floe_table_has_every_required_field) {
    auto m = new_floe_table("file:///wh/floe/t", "49e5a3b9-f8af-497a-9fed-7edd59dc1f43", 1000);
    auto j = nlohmann::json::parse(to_json_text(m));
    const char* required[] = {"format-version", "table-uuid", "location", "last-sequence-number",
                              "last-updated-ms", "last-column-id", "schemas", "current-schema-id",
                              "partition-specs", "default-spec-id", "last-partition-id",
                              "sort-orders", "default-sort-order-id"};
    for (auto* k : required) {
        EXPECT_TRUE(j.contains(k)) << k;
        auto broken = j;
        broken.erase(k);
        auto r = parse_metadata(broken.dump());
        ASSERT_FALSE(r) << k;
        EXPECT_EQ(r.error().code(), errc::corrupt);
        EXPECT_NE(r.error().message().find(k), std::string::npos) << k << ": " << r.error();
    }
    EXPECT_EQ(j["format-version"], 2);
    EXPECT_EQ(j["last-column-id"], 13);
    EXPECT_EQ(j["last-partition-id"], 1000);
    EXPECT_EQ(j["partition-specs"][0]["fields"][0]["name"], "stream_key");
    EXPECT_EQ(j["partition-specs"][0]["fields"][0]["source-id"], 1);
    EXPECT_EQ(j["sort-orders"][1]["fields"][0]["source-id"], 4);
    EXPECT_EQ(j["default-sort-order-id"], 1);
    auto wrong = j;
    wrong["last-sequence-number"] = "seven";
    auto r = parse_metadata(wrong.dump());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("last-sequence-number"), std::string::npos);
    auto dangling = j;
    dangling["current-snapshot-id"] = 42;
    EXPECT_FALSE(parse_metadata(dangling.dump()));
    EXPECT_FALSE(parse_metadata("{not json"));
    EXPECT_FALSE(parse_metadata(std::string(100000, '[')));
}

TEST(iceberg_metadata, json_text_escapes_strings_and_reuses_snapshot_text) {
    auto m = new_floe_table("file:///wh/floe/t \"q\"", "49e5a3b9-f8af-497a-9fed-7edd59dc1f43", 1000,
                            {{"quote\"back\\slash", "tab\tnl\nctl\x01"}, {"utf8", "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80"},
                             {"bad-utf8", std::string("a\xC3(b\xFF", 5)}});
    for (int i = 1; i <= 3; ++i) {
        snapshot s;
        s.snapshot_id = 100 + i;
        if (i > 1) s.parent_snapshot_id = 99 + i;
        s.sequence_number = i;
        s.timestamp_ms = 1000 + i;
        s.manifest_list = fmt::format("file:///wh/floe/t/metadata/snap-{}.avro", i);
        s.summary = {{"operation", "append"}, {"floe.positions", "{\"s-0\":12}"}};
        s.schema_id = 0;
        m.snapshots.push_back(s);
        m.snapshot_log.push_back({s.timestamp_ms, s.snapshot_id});
    }
    m.current_snapshot_id = 103;
    m.refs["main"] = snapshot_ref{103, "branch", {}, {}, {}};
    m.metadata_log.push_back({999, "file:///wh/floe/t/metadata/v1.metadata.json"});
    auto text = to_json_text(m);
    auto raw = nlohmann::json::parse(text);  // valid JSON, invalid UTF-8 replaced
    EXPECT_EQ(raw["properties"]["quote\"back\\slash"], "tab\tnl\nctl\x01");
    EXPECT_EQ(raw["properties"]["utf8"], "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80");
    EXPECT_EQ(raw["properties"]["bad-utf8"], "a\xEF\xBF\xBD(b\xEF\xBF\xBD");
    EXPECT_EQ(raw["location"], "file:///wh/floe/t \"q\"");
    // "operation" comes first in each summary, as Java writes it.
    EXPECT_EQ(nlohmann::ordered_json::parse(text)["snapshots"][0]["summary"].begin().key(), "operation");
    EXPECT_EQ(raw["snapshots"][2]["summary"]["floe.positions"], "{\"s-0\":12}");
    auto back = parse_metadata(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->snapshots.size(), 3u);
    EXPECT_EQ(back->properties.at("quote\"back\\slash"), "tab\tnl\nctl\x01");
    // With a snapshot cache: the same text, and after one more snapshot still the same as
    // serialising from scratch; a cache entry whose id no longer matches is rebuilt.
    snapshot_json_cache cache;
    EXPECT_EQ(to_json_text(m, cache), text);
    ASSERT_EQ(cache.texts.size(), 3u);
    auto s = m.snapshots.back();
    s.snapshot_id = 104;
    s.parent_snapshot_id = 103;
    s.sequence_number = 4;
    m.snapshots.push_back(s);
    m.current_snapshot_id = 104;
    m.refs["main"].snapshot_id = 104;
    EXPECT_EQ(to_json_text(m, cache), to_json_text(m));
    m.snapshots.erase(m.snapshots.begin());  // as snapshot expiry would
    m.snapshot_log.erase(m.snapshot_log.begin());
    std::string out = "stale";
    to_json_text(m, cache, out);
    EXPECT_EQ(out, to_json_text(m));
    EXPECT_TRUE(parse_metadata(out));
}
