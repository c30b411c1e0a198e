// Protobuf and JSON Schema → Iceberg columns: references, evolution by name path, the rules that
// the headers (protobuf_mapping.h, json_mapping.h) document. The decoders' tests are in
// src/lake/tests (typed_rows_protobuf_test.cc, typed_rows_json_test.cc).
#include "schema/iceberg_mapping.h"
#include "schema/json_mapping.h"
#include "schema/protobuf_mapping.h"
#include "schema/protobuf_schema.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

std::vector<std::string> described(const std::vector<iceberg::nested_field>& fs) {
    std::vector<std::string> out;
    for (auto& f : fs)
        out.push_back(f.name + ":" + describe(*f.field_type));
    return out;
}

std::vector<iceberg::nested_field>
proto_fields(std::string_view text, const std::vector<protobuf_schema::dependency>& deps = {},
             std::string_view message = "") {
    auto s = protobuf_schema::parse(text, deps);
    EXPECT_TRUE(s) << s.error().message();
    auto* d = message.empty() ? (*s)->message_at({}) : (*s)->find_message(message);
    EXPECT_NE(d, nullptr);
    auto f = protobuf_to_iceberg(*d);
    EXPECT_TRUE(f) << f.error().message();
    return f ? *f : std::vector<iceberg::nested_field>{};
}

TEST(typed_mapping, protobuf_references_and_well_known_types) {
    // A message from a referenced file (a Confluent reference is an import), and the
    // well-known types, which need no reference.
    std::vector<protobuf_schema::dependency> deps = {
        {"common/money.proto", "syntax = \"proto3\"; package common; message Money { string "
                               "currency = 1; sint64 units = 2; uint32 nanos = 3; }"}};
    auto f = proto_fields(R"(syntax = "proto3"; package shop; import "common/money.proto";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto"; import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
message Order { common.Money total = 1; google.protobuf.Timestamp at = 2; google.protobuf.Duration took = 3;
  google.protobuf.StringValue memo = 4; google.protobuf.UInt64Value big = 5; google.protobuf.BoolValue flag = 6;
  google.protobuf.Any extra = 7; repeated google.protobuf.DoubleValue ds = 8; map<bool, fixed32> bm = 9; })",
                          deps);
    EXPECT_EQ(described(f), (std::vector<std::string>{"total:struct", "at:timestamptz", "took:long",
                                                      "memo:string", "big:decimal(20, 0)",
                                                      "flag:boolean", "extra:struct",
                                                      "ds:list<double>", "bm:map<boolean, long>"}));
    EXPECT_EQ(described(f[0].field_type->fields),
              (std::vector<std::string>{"currency:string", "units:long", "nanos:long"}));
    EXPECT_EQ(described(f[6].field_type->fields),
              (std::vector<std::string>{"type_url:string", "value:binary"}));
}

TEST(typed_mapping, protobuf_evolution_by_name_path) {
    auto v1 = proto_fields(
        "syntax = \"proto3\"; message M { int32 qty = 1; string name = 2; uint32 n = 3; "
        "message I { int32 a = 1; } repeated I items = 4; oneof o { string x = 5; int32 y = 6; } "
        "}");
    iceberg::schema table;
    table.fields = v1;
    int32_t last = 0;
    assign_ids(table.fields, nullptr, last);
    // Renumbered (qty 1 -> 7): same name, same column, promoted int -> long. Renamed (name ->
    // title, number 2 kept): a new column; `name` stays. A new oneof branch joins the struct.
    auto v2 = proto_fields(
        "syntax = \"proto3\"; message M { int64 qty = 7; string title = 2; uint32 n = 3; "
        "message I { int64 a = 1; string b = 2; } repeated I items = 4; "
        "oneof o { string x = 5; int32 y = 6; bool z = 8; } }");
    auto e = evolve(table, v2, last);
    ASSERT_EQ(e.outcome, evolution::kind::updated) << e.reason;
    auto paths = name_paths(e.schema);
    std::map<std::string, int32_t> by(paths.begin(), paths.end());
    auto old_paths = name_paths(table);
    for (auto& [p, id] : old_paths)
        EXPECT_EQ(by.at(p), id) << p; // nothing renumbered, nothing dropped
    EXPECT_TRUE(by.contains("title"));
    EXPECT_TRUE(by.contains("items.element.b"));
    EXPECT_TRUE(by.contains("o.z"));
    EXPECT_EQ(describe(*e.schema.find("qty")->field_type), "long");
    // uint32 -> uint64 is long -> decimal(20, 0): no Iceberg promotion.
    auto v3 = proto_fields("syntax = \"proto3\"; message M { uint64 n = 3; }");
    auto bad = evolve(e.schema, v3, e.last_column_id);
    EXPECT_EQ(bad.outcome, evolution::kind::incompatible);
    EXPECT_EQ(bad.reason, "field `n`: long -> decimal(20, 0)");
}

TEST(typed_mapping, json_references_nullable_and_any) {
    auto money = json_schema::parse(
        R"({"type":"object","properties":{"currency":{"type":"string"},"cents":{"type":"integer"}}})");
    ASSERT_TRUE(money) << money.error().message();
    auto s = json_schema::parse(R"({"type":"object","properties":{
        "total":{"$ref":"money.json"},
        "maybe":{"anyOf":[{"type":"null"},{"type":"number"}]},
        "loose":{},
        "free":{"type":"object"},
        "tags":{"type":"array","items":{"type":["string","null"]}},
        "counts":{"type":"object","additionalProperties":{"type":"integer"}},
        "gone":false,
        "nothing":{"type":"null"},
        "when":{"type":["null","string"],"format":"date-time"}}})",
                                {json_schema::reference{"money.json", *money}});
    ASSERT_TRUE(s) << s.error().message();
    auto f = json_to_iceberg(**s);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(described(*f),
              (std::vector<std::string>{"total:struct", "maybe:double", "loose:string",
                                        "free:string", "tags:list<string>",
                                        "counts:map<string, long>", "when:timestamptz"}));
    EXPECT_EQ(described((*f)[0].field_type->fields),
              (std::vector<std::string>{"currency:string", "cents:long"}));
    // Shapes: nullability is what the decoder accepts null for.
    auto maybe = json_classify(*(*s)->root().find_property("maybe"));
    ASSERT_TRUE(maybe);
    EXPECT_EQ(maybe->kind, json_kind::number);
    EXPECT_TRUE(maybe->nullable);
    auto total = json_classify(*(*s)->root().find_property("total"));
    ASSERT_TRUE(total);
    EXPECT_FALSE(total->nullable);
}

} // namespace
} // namespace floe::schema
