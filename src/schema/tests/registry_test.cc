// The registry and its REST resource model over an in-memory log: Confluent's semantics and
// error codes, and two registries sharing one log (two brokers) agreeing on ids.
#include "schema/rest_api.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace floe::schema {
namespace {

using json = nlohmann::json;

struct fixture {
    std::shared_ptr<registry_log> log = make_memory_log();
    registry reg{log};
    rest_api api{reg};

    rest_response call(std::string method, std::string path, json body = nullptr) {
        rest_request r;
        r.method = std::move(method);
        auto qpos = path.find('?');
        r.raw_path = path.substr(0, qpos);
        if (qpos != std::string::npos) {
            auto qs = path.substr(qpos + 1);
            size_t i = 0;
            while (i < qs.size()) {
                auto amp = qs.find('&', i);
                auto kv = qs.substr(i, amp == std::string::npos ? std::string::npos : amp - i);
                auto eq = kv.find('=');
                r.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
                if (amp == std::string::npos) break;
                i = amp + 1;
            }
        }
        if (!body.is_null()) r.body = body.dump();
        return api.handle(r);
    }
    int code(const rest_response& r) {
        auto j = json::parse(r.body, nullptr, false);
        return j.is_object() && j.contains("error_code") ? j["error_code"].get<int>() : 0;
    }
};

const std::string user_v1 = R"({"type":"record","name":"User","fields":[{"name":"name","type":"string"}]})";
const std::string user_v2 =
    R"({"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]})";
const std::string user_bad = R"({"type":"record","name":"User","fields":[{"name":"email","type":"string"}]})";

TEST(registry, register_lookup_and_versions) {
    fixture f;
    auto r1 = f.call("POST", "/subjects/users-value/versions", {{"schema", user_v1}});
    ASSERT_EQ(r1.status, 200) << r1.body;
    EXPECT_EQ(r1.body, R"({"id":1})");
    EXPECT_EQ(r1.endpoint, "/subjects/{subject}/versions");
    // Same schema again (other whitespace): same id, no new version.
    auto again = f.call("POST", "/subjects/users-value/versions",
                        {{"schema", "{ \"type\": \"record\", \"name\": \"User\", \"fields\": [{\"name\": \"name\", \"type\": \"string\"}] }"}});
    EXPECT_EQ(again.body, R"({"id":1})");
    // Same schema under another subject: same id.
    EXPECT_EQ(f.call("POST", "/subjects/other/versions", {{"schema", user_v1}}).body, R"({"id":1})");
    EXPECT_EQ(f.call("POST", "/subjects/users-value/versions", {{"schema", user_v2}}).body, R"({"id":2})");
    EXPECT_EQ(f.call("GET", "/subjects/users-value/versions").body, "[1,2]");
    auto latest = json::parse(f.call("GET", "/subjects/users-value/versions/latest").body);
    EXPECT_EQ(latest["version"], 2);
    EXPECT_EQ(latest["id"], 2);
    EXPECT_FALSE(latest.contains("schemaType")); // AVRO is implied
    auto look = json::parse(f.call("POST", "/subjects/users-value", {{"schema", user_v1}}).body);
    EXPECT_EQ(look["version"], 1);
    EXPECT_EQ(look["id"], 1);
    EXPECT_EQ(f.call("GET", "/schemas/ids/2/versions").body, R"([{"subject":"users-value","version":2}])");
    EXPECT_EQ(f.call("GET", "/subjects").body, R"(["other","users-value"])");
    EXPECT_EQ(f.call("GET", "/subjects/users-value/versions/1/schema").body, user_v1);
    EXPECT_EQ(json::parse(f.call("GET", "/schemas/ids/1").body)["schema"], user_v1);
    EXPECT_EQ(f.call("GET", "/schemas/types").body, R"(["JSON","PROTOBUF","AVRO"])");
    // Incompatible under BACKWARD: 409, with reasons.
    auto bad = f.call("POST", "/subjects/users-value/versions", {{"schema", user_bad}});
    EXPECT_EQ(bad.status, 409);
    EXPECT_EQ(f.code(bad), 409);
    EXPECT_NE(bad.body.find("READER_FIELD_MISSING_DEFAULT_VALUE"), std::string::npos) << bad.body;
    auto c = json::parse(f.call("POST", "/compatibility/subjects/users-value/versions/latest?verbose=true",
                                {{"schema", user_bad}}).body);
    EXPECT_EQ(c["is_compatible"], false);
    EXPECT_FALSE(c["messages"].empty());
    EXPECT_EQ(f.call("PUT", "/config/users-value", {{"compatibility", "NONE"}}).body, R"({"compatibility":"NONE"})");
    EXPECT_EQ(f.call("POST", "/subjects/users-value/versions", {{"schema", user_bad}}).status, 200);
    // The registry_client view.
    auto l = f.reg.latest("users-value");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->version, 3);
    EXPECT_EQ(l->schema->avro()->root().fields[0].name, "email");
    EXPECT_TRUE(f.reg.get_by_id(1));
    EXPECT_EQ(f.reg.get_by_id(99).error().code(), errc::not_found);
}

TEST(registry, error_codes) {
    fixture f;
    ASSERT_EQ(f.call("POST", "/subjects/s/versions", {{"schema", user_v1}}).status, 200);
    EXPECT_EQ(f.code(f.call("GET", "/subjects/nope/versions")), 40401);
    EXPECT_EQ(f.code(f.call("GET", "/subjects/s/versions/9")), 40402);
    EXPECT_EQ(f.code(f.call("GET", "/schemas/ids/77")), 40403);
    EXPECT_EQ(f.code(f.call("GET", "/subjects/s/versions/abc")), 42202);
    EXPECT_EQ(f.code(f.call("POST", "/subjects/s/versions", {{"schema", "{nope"}})), 42201);
    EXPECT_EQ(f.code(f.call("PUT", "/config", {{"compatibility", "SIDEWAYS"}})), 42203);
    EXPECT_EQ(f.code(f.call("GET", "/config/s")), 40408);
    EXPECT_EQ(f.call("GET", "/config/s?defaultToGlobal=true").body, R"({"compatibilityLevel":"BACKWARD"})");
    EXPECT_EQ(f.code(f.call("DELETE", "/subjects/s?permanent=true")), 40405);
    EXPECT_EQ(f.code(f.call("DELETE", "/subjects/s/versions/1?permanent=true")), 40407);
    EXPECT_EQ(f.call("DELETE", "/subjects/s/versions/1").body, "1");
    EXPECT_EQ(f.code(f.call("DELETE", "/subjects/s/versions/1")), 40406);
    EXPECT_EQ(f.code(f.call("DELETE", "/subjects/s")), 40404);
    EXPECT_EQ(f.call("GET", "/subjects?deleted=true").body, R"(["s"])");
    EXPECT_EQ(f.call("GET", "/subjects").body, "[]");
    EXPECT_EQ(f.call("DELETE", "/subjects/s?permanent=true").body, "[1]");
    EXPECT_EQ(f.code(f.call("GET", "/schemas/ids/1")), 40403);
    EXPECT_EQ(f.code(f.call("PUT", "/mode", {{"mode", "WRITEONLY"}})), 42204);
    EXPECT_EQ(f.call("PUT", "/mode/s", {{"mode", "READONLY"}}).body, R"({"mode":"READONLY"})");
    EXPECT_EQ(f.code(f.call("POST", "/subjects/s/versions", {{"schema", user_v1}})), 42205);
    // Re-registering after a permanent delete: the id is not reused for another schema, and
    // the same schema gets its old id back.
    ASSERT_EQ(f.call("DELETE", "/mode/s").status, 200);
    EXPECT_EQ(f.call("POST", "/subjects/s/versions", {{"schema", user_v2}}).body, R"({"id":2})");
    EXPECT_EQ(f.call("POST", "/subjects/t/versions", {{"schema", user_v1}}).body, R"({"id":1})");
    EXPECT_EQ(f.call("GET", "/nope").status, 404);
    EXPECT_EQ(f.call("PATCH", "/subjects").status, 405);
}

TEST(registry, references_and_referencedby) {
    fixture f;
    const std::string addr = R"({"type":"record","name":"Address","namespace":"a","fields":[{"name":"city","type":"string"}]})";
    ASSERT_EQ(f.call("POST", "/subjects/addr/versions", {{"schema", addr}}).body, R"({"id":1})");
    json body{{"schema", R"({"type":"record","name":"Person","namespace":"a","fields":[{"name":"home","type":"Address"}]})"},
              {"references", json::array({{{"name", "a.Address"}, {"subject", "addr"}, {"version", 1}}})}};
    ASSERT_EQ(f.call("POST", "/subjects/person/versions", body).body, R"({"id":2})");
    EXPECT_EQ(f.call("GET", "/subjects/addr/versions/1/referencedby").body, "[2]");
    EXPECT_EQ(f.code(f.call("DELETE", "/subjects/addr/versions/1")), 42206);
    auto bad = body;
    bad["references"][0]["version"] = 5;
    EXPECT_EQ(f.code(f.call("POST", "/subjects/person/versions", bad)), 42201);
    auto p = json::parse(f.call("GET", "/schemas/ids/2").body);
    EXPECT_EQ(p["references"][0]["subject"], "addr");
}

TEST(registry, protobuf_and_json_schema_types) {
    fixture f;
    auto r = f.call("POST", "/subjects/p/versions",
                    {{"schemaType", "PROTOBUF"}, {"schema", "syntax = \"proto3\"; message M { int32 a = 1; }"}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto v = json::parse(f.call("GET", "/subjects/p/versions/1").body);
    EXPECT_EQ(v["schemaType"], "PROTOBUF");
    auto j = f.call("POST", "/subjects/j/versions", {{"schemaType", "JSON"}, {"schema", R"({"type":"object"})"}});
    ASSERT_EQ(j.status, 200) << j.body;
    EXPECT_EQ(f.code(f.call("POST", "/subjects/j/versions", {{"schemaType", "XML"}, {"schema", "<a/>"}})), 42201);
    // Changing the type of a subject is incompatible (BACKWARD).
    EXPECT_EQ(f.call("POST", "/subjects/j/versions", {{"schema", R"("string")"}}).status, 409);
}

TEST(registry, two_registries_on_one_log_agree) {
    auto log = std::shared_ptr<registry_log>(make_memory_log());
    registry a(log), b(log);
    ASSERT_TRUE(a.set_config("", "NONE"));
    std::vector<std::string> schemas;
    for (int i = 0; i < 50; ++i)
        schemas.push_back(fmt::format(R"({{"type":"record","name":"R{}","fields":[]}})", i));
    std::vector<int32_t> ids_a(50), ids_b(50);
    std::thread ta([&] {
        for (int i = 0; i < 50; ++i) ids_a[i] = a.register_schema(fmt::format("s{}", i % 5), {.schema = schemas[i]}).value_or(-1);
    });
    std::thread tb([&] {
        for (int i = 49; i >= 0; --i) ids_b[i] = b.register_schema(fmt::format("s{}", i % 5), {.schema = schemas[i]}).value_or(-1);
    });
    ta.join();
    tb.join();
    EXPECT_EQ(ids_a, ids_b);
    std::set<int32_t> distinct(ids_a.begin(), ids_a.end());
    EXPECT_EQ(distinct.size(), 50u);
    // Each subject has exactly one version per schema.
    auto v = a.versions("s0", false);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->size(), 10u);
}

} // namespace
} // namespace floe::schema
