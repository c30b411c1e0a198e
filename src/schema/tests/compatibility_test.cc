// Table-driven compatibility checks: for each type, pairs of (previous, new) schemas with the
// verdict the documented rules give at a level. BACKWARD: the new schema reads the previous
// one's data; FORWARD: the previous reads the new one's; FULL: both. Sources of the verdicts:
// the Avro specification's "Schema Resolution", protobuf's "Updating A Message Type" and
// Confluent's documented categories for Protobuf, and "every instance the writer accepts is
// accepted by the reader" for JSON Schema (Confluent's open/closed content model rules).

#include "schema/compatibility.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

using L = compatibility_level;

struct pair_case {
    const char* name;
    L level;
    std::string previous;
    std::string next;
    bool compatible;
};

std::shared_ptr<const parsed_schema> parse_or_die(schema_type t, const std::string& text) {
    auto p = parsed_schema::parse(t, text);
    if (!p) ADD_FAILURE() << "cannot parse: " << p.error().message() << "\n" << text;
    return p ? *p : nullptr;
}

void run_table(schema_type t, const std::vector<pair_case>& cases) {
    for (auto& c : cases) {
        auto prev = parse_or_die(t, c.previous);
        auto next = parse_or_die(t, c.next);
        if (!prev || !next) continue;
        previous_version pv{1, prev.get()};
        auto r = check_compatibility(c.level, *next, std::span(&pv, 1));
        std::string why;
        for (auto& m : r.messages) why += "\n  " + m;
        EXPECT_EQ(r.compatible, c.compatible) << c.name << " at " << to_string(c.level) << why;
        if (!r.compatible) {
            EXPECT_FALSE(r.messages.empty()) << c.name;
        }
    }
}

std::string rec(std::string fields, std::string name = "R") {
    return R"({"type":"record","name":")" + name + R"(","namespace":"t","fields":[)" + fields + "]}";
}

TEST(compatibility, avro_pairs) {
    const std::string a_int = R"({"name":"a","type":"int"})";
    std::vector<pair_case> cases = {
        // Fields added and removed.
        {"add field with default", L::backward, rec(a_int), rec(a_int + R"(,{"name":"b","type":"string","default":"x"})"), true},
        {"add field without default", L::backward, rec(a_int), rec(a_int + R"(,{"name":"b","type":"string"})"), false},
        {"add field without default (forward)", L::forward, rec(a_int), rec(a_int + R"(,{"name":"b","type":"string"})"), true},
        {"add field with default (full)", L::full, rec(a_int), rec(a_int + R"(,{"name":"b","type":"string","default":"x"})"), true},
        {"add field without default (full)", L::full, rec(a_int), rec(a_int + R"(,{"name":"b","type":"string"})"), false},
        {"remove field", L::backward, rec(a_int + R"(,{"name":"b","type":"string"})"), rec(a_int), true},
        {"remove field without default (forward)", L::forward, rec(a_int + R"(,{"name":"b","type":"string"})"), rec(a_int), false},
        {"remove field with default (forward)", L::forward, rec(a_int + R"(,{"name":"b","type":"string","default":""})"), rec(a_int), true},
        {"remove field with default (full)", L::full, rec(a_int + R"(,{"name":"b","type":"string","default":""})"), rec(a_int), true},
        {"add optional union field", L::full, rec(a_int), rec(a_int + R"(,{"name":"b","type":["null","string"],"default":null})"), true},
        // Promotions.
        {"int to long", L::backward, rec(a_int), rec(R"({"name":"a","type":"long"})"), true},
        {"int to float", L::backward, rec(a_int), rec(R"({"name":"a","type":"float"})"), true},
        {"int to double", L::backward, rec(a_int), rec(R"({"name":"a","type":"double"})"), true},
        {"long to double", L::backward, rec(R"({"name":"a","type":"long"})"), rec(R"({"name":"a","type":"double"})"), true},
        {"float to double", L::backward, rec(R"({"name":"a","type":"float"})"), rec(R"({"name":"a","type":"double"})"), true},
        {"long to int", L::backward, rec(R"({"name":"a","type":"long"})"), rec(a_int), false},
        {"int to long (forward)", L::forward, rec(a_int), rec(R"({"name":"a","type":"long"})"), false},
        {"int to long (full)", L::full, rec(a_int), rec(R"({"name":"a","type":"long"})"), false},
        {"double to float", L::backward, rec(R"({"name":"a","type":"double"})"), rec(R"({"name":"a","type":"float"})"), false},
        {"string to bytes", L::backward, rec(R"({"name":"a","type":"string"})"), rec(R"({"name":"a","type":"bytes"})"), true},
        {"bytes to string (full)", L::full, rec(R"({"name":"a","type":"bytes"})"), rec(R"({"name":"a","type":"string"})"), true},
        {"int to string", L::backward, rec(a_int), rec(R"({"name":"a","type":"string"})"), false},
        {"boolean to int", L::backward, rec(R"({"name":"a","type":"boolean"})"), rec(a_int), false},
        // Unions.
        {"type to union containing it", L::backward, rec(a_int), rec(R"({"name":"a","type":["null","int"]})"), true},
        {"union to type it contains (backward)", L::backward, rec(R"({"name":"a","type":["null","int"]})"), rec(a_int), false},
        {"union to single type (forward)", L::forward, rec(R"({"name":"a","type":["null","int"]})"), rec(a_int), true},
        {"union adds branch", L::backward, rec(R"({"name":"a","type":["null","int"]})"), rec(R"({"name":"a","type":["null","int","string"]})"), true},
        {"union removes branch", L::backward, rec(R"({"name":"a","type":["null","int","string"]})"), rec(R"({"name":"a","type":["null","int"]})"), false},
        {"union branch promoted", L::backward, rec(R"({"name":"a","type":["null","int"]})"), rec(R"({"name":"a","type":["null","long"]})"), true},
        {"union adds branch (forward)", L::forward, rec(R"({"name":"a","type":["null","int"]})"), rec(R"({"name":"a","type":["null","int","string"]})"), false},
        // Aliases and names.
        {"field renamed with alias", L::backward, rec(a_int), rec(R"({"name":"z","type":"int","aliases":["a"]})"), true},
        {"field renamed without alias", L::backward, rec(a_int), rec(R"({"name":"z","type":"int"})"), false},
        {"record renamed", L::backward, rec(a_int, "R"), rec(a_int, "S"), false},
        {"record renamed with alias", L::backward, rec(a_int, "R"),
         R"({"type":"record","name":"S","namespace":"t","aliases":["R"],"fields":[{"name":"a","type":"int"}]})", true},
        {"record namespace changed", L::backward, rec(a_int),
         R"({"type":"record","name":"R","namespace":"other","fields":[{"name":"a","type":"int"}]})", true},
        // Enums.
        {"enum adds symbol", L::backward, R"({"type":"enum","name":"E","symbols":["A","B"]})", R"({"type":"enum","name":"E","symbols":["A","B","C"]})", true},
        {"enum adds symbol (forward)", L::forward, R"({"type":"enum","name":"E","symbols":["A","B"]})", R"({"type":"enum","name":"E","symbols":["A","B","C"]})", false},
        {"enum adds symbol with default (forward)", L::forward, R"({"type":"enum","name":"E","symbols":["A","B"],"default":"A"})",
         R"({"type":"enum","name":"E","symbols":["A","B","C"],"default":"A"})", true},
        {"enum removes symbol", L::backward, R"({"type":"enum","name":"E","symbols":["A","B"]})", R"({"type":"enum","name":"E","symbols":["A"]})", false},
        {"enum removes symbol, reader default", L::backward, R"({"type":"enum","name":"E","symbols":["A","B"]})",
         R"({"type":"enum","name":"E","symbols":["A"],"default":"A"})", true},
        {"enum renamed", L::backward, R"({"type":"enum","name":"E","symbols":["A"]})", R"({"type":"enum","name":"F","symbols":["A"]})", false},
        // Fixed.
        {"fixed same size", L::full, R"({"type":"fixed","name":"F","size":4})", R"({"type":"fixed","name":"F","size":4})", true},
        {"fixed size changed", L::backward, R"({"type":"fixed","name":"F","size":4})", R"({"type":"fixed","name":"F","size":8})", false},
        // Arrays and maps.
        {"array items promoted", L::backward, R"({"type":"array","items":"int"})", R"({"type":"array","items":"long"})", true},
        {"array items narrowed", L::backward, R"({"type":"array","items":"long"})", R"({"type":"array","items":"int"})", false},
        {"map values promoted", L::backward, R"({"type":"map","values":"float"})", R"({"type":"map","values":"double"})", true},
        {"array to map", L::backward, R"({"type":"array","items":"int"})", R"({"type":"map","values":"int"})", false},
        // Nested records and recursion.
        {"nested field added with default", L::full,
         rec(R"({"name":"n","type":{"type":"record","name":"N","fields":[{"name":"x","type":"int"}]}})"),
         rec(R"({"name":"n","type":{"type":"record","name":"N","fields":[{"name":"x","type":"int"},{"name":"y","type":"int","default":0}]}})"), true},
        {"nested field added without default", L::backward,
         rec(R"({"name":"n","type":{"type":"record","name":"N","fields":[{"name":"x","type":"int"}]}})"),
         rec(R"({"name":"n","type":{"type":"record","name":"N","fields":[{"name":"x","type":"int"},{"name":"y","type":"int"}]}})"), false},
        {"recursive list unchanged", L::full_transitive,
         R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"],"default":null}]})",
         R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"],"default":null}]})", true},
        {"recursive list value promoted", L::backward,
         R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"],"default":null}]})",
         R"({"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"],"default":null}]})", true},
        // Levels.
        {"anything goes at NONE", L::none, rec(a_int), R"("string")", true},
        {"primitive changed", L::backward, R"("int")", R"("string")", false},
    };
    ASSERT_GE(cases.size(), 40u);
    run_table(schema_type::avro, cases);
}

std::string proto(std::string body, std::string pkg = "t") {
    return "syntax = \"proto3\";\npackage " + pkg + ";\n" + body;
}

TEST(compatibility, protobuf_pairs) {
    const std::string base = proto("message M { int32 a = 1; string b = 2; }");
    std::vector<pair_case> cases = {
        {"identical", L::full, base, base, true},
        {"field added", L::backward, base, proto("message M { int32 a = 1; string b = 2; bool c = 3; }"), true},
        {"field added (full)", L::full, base, proto("message M { int32 a = 1; string b = 2; bool c = 3; }"), true},
        {"field removed", L::backward, base, proto("message M { int32 a = 1; }"), true},
        {"field removed, number reserved", L::full, base, proto("message M { int32 a = 1; reserved 2; }"), true},
        {"field renamed", L::full, base, proto("message M { int32 a = 1; string bee = 2; }"), true},
        {"int32 to int64", L::backward, base, proto("message M { int64 a = 1; string b = 2; }"), true},
        {"int32 to uint64", L::full, base, proto("message M { uint64 a = 1; string b = 2; }"), true},
        {"int32 to bool", L::backward, base, proto("message M { bool a = 1; string b = 2; }"), true},
        {"int32 to sint32", L::backward, base, proto("message M { sint32 a = 1; string b = 2; }"), false},
        {"int32 to fixed32", L::backward, base, proto("message M { fixed32 a = 1; string b = 2; }"), false},
        {"int32 to double", L::backward, base, proto("message M { double a = 1; string b = 2; }"), false},
        {"string to bytes", L::full, base, proto("message M { int32 a = 1; bytes b = 2; }"), true},
        {"sint32 to sint64", L::backward, proto("message M { sint32 a = 1; }"), proto("message M { sint64 a = 1; }"), true},
        {"fixed32 to sfixed32", L::backward, proto("message M { fixed32 a = 1; }"), proto("message M { sfixed32 a = 1; }"), true},
        {"fixed64 to fixed32", L::backward, proto("message M { fixed64 a = 1; }"), proto("message M { fixed32 a = 1; }"), false},
        {"scalar to message", L::backward, proto("message N { int32 x = 1; } message M { int32 a = 1; }"),
         proto("message N { int32 x = 1; } message M { N a = 1; }"), false},
        {"message type changed", L::backward, proto("message N { int32 x = 1; } message O { int32 x = 1; } message M { N a = 1; }"),
         proto("message N { int32 x = 1; } message O { int32 x = 1; } message M { O a = 1; }"), false},
        {"enum type changed", L::backward, proto("enum E { E0 = 0; } enum F { F0 = 0; } message M { E a = 1; }"),
         proto("enum E { E0 = 0; } enum F { F0 = 0; } message M { F a = 1; }"), false},
        {"message removed", L::backward, proto("message M { int32 a = 1; } message N { int32 x = 1; }"),
         proto("message M { int32 a = 1; }"), false},
        {"message added", L::backward, proto("message M { int32 a = 1; }"),
         proto("message M { int32 a = 1; } message N { int32 x = 1; }"), true},
        {"message added (forward)", L::forward, proto("message M { int32 a = 1; }"),
         proto("message M { int32 a = 1; } message N { int32 x = 1; }"), false},
        {"nested message removed", L::backward, proto("message M { message I { int32 x = 1; } I i = 1; }"),
         proto("message M { int32 j = 2; }"), false},
        {"enum removed", L::backward, proto("enum E { E0 = 0; } message M { int32 a = 1; }"), proto("message M { int32 a = 1; }"), false},
        {"enum value added", L::full, proto("enum E { E0 = 0; } message M { E a = 1; }"),
         proto("enum E { E0 = 0; E1 = 1; } message M { E a = 1; }"), true},
        {"enum value removed", L::backward, proto("enum E { E0 = 0; E1 = 1; } message M { E a = 1; }"),
         proto("enum E { E0 = 0; } message M { E a = 1; }"), true},
        {"package changed", L::backward, base, proto("message M { int32 a = 1; string b = 2; }", "u"), false},
        {"field removed from oneof", L::backward, proto("message M { oneof o { int32 a = 1; string b = 2; } }"),
         proto("message M { oneof o { int32 a = 1; } }"), false},
        {"field added to oneof", L::backward, proto("message M { oneof o { int32 a = 1; } }"),
         proto("message M { oneof o { int32 a = 1; string b = 2; } }"), true},
        {"one field moved into new oneof", L::backward, base, proto("message M { oneof o { int32 a = 1; } string b = 2; }"), true},
        {"two fields moved into new oneof", L::backward, base, proto("message M { oneof o { int32 a = 1; string b = 2; } }"), false},
        {"field moved into existing oneof", L::backward, proto("message M { oneof o { int32 a = 1; } string b = 2; }"),
         proto("message M { oneof o { int32 a = 1; string b = 2; } }"), false},
        {"field moved out of oneof", L::backward, proto("message M { oneof o { int32 a = 1; string b = 2; } }"),
         proto("message M { int32 a = 1; oneof o { string b = 2; } }"), false},
        {"repeated numeric to singular", L::backward, proto("message M { repeated int32 a = 1; }"), proto("message M { int32 a = 1; }"), false},
        {"repeated string to singular", L::backward, proto("message M { repeated string a = 1; }"), proto("message M { string a = 1; }"), true},
        {"proto2 required field added", L::backward, "syntax = \"proto2\"; package t; message M { optional int32 a = 1; }",
         "syntax = \"proto2\"; package t; message M { optional int32 a = 1; required int32 b = 2; }", false},
        {"proto2 required field removed", L::backward, "syntax = \"proto2\"; package t; message M { required int32 a = 1; optional int32 b = 2; }",
         "syntax = \"proto2\"; package t; message M { optional int32 b = 2; }", false},
        {"map value type compatible", L::backward, proto("message M { map<string, int32> m = 1; }"), proto("message M { map<string, int64> m = 1; }"), true},
        {"map value type incompatible", L::backward, proto("message M { map<string, int32> m = 1; }"), proto("message M { map<string, string> m = 1; }"), false},
        {"map to scalar", L::backward, proto("message M { map<string, int32> m = 1; }"), proto("message M { int32 m = 1; }"), false},
        {"anything goes at NONE", L::none, base, proto("message Z { double q = 7; }", "z"), true},
    };
    ASSERT_GE(cases.size(), 25u);
    run_table(schema_type::protobuf, cases);
}

std::string obj(std::string props, std::string extra = "") {
    return R"({"type":"object","properties":{)" + props + "}" + extra + "}";
}

TEST(compatibility, json_schema_pairs) {
    const std::string closed = R"(,"additionalProperties":false)";
    std::vector<pair_case> cases = {
        {"identical", L::full, obj(R"("a":{"type":"string"})"), obj(R"("a":{"type":"string"})"), true},
        {"property added to open content model", L::backward, obj(R"("a":{"type":"string"})"),
         obj(R"("a":{"type":"string"},"b":{"type":"integer"})"), false},
        {"property added to closed content model", L::backward, obj(R"("a":{"type":"string"})", closed),
         obj(R"("a":{"type":"string"},"b":{"type":"integer"})", closed), true},
        {"property removed from open content model", L::backward, obj(R"("a":{"type":"string"},"b":{"type":"integer"})"),
         obj(R"("a":{"type":"string"})"), true},
        {"property removed from closed content model", L::backward, obj(R"("a":{"type":"string"},"b":{"type":"integer"})", closed),
         obj(R"("a":{"type":"string"})", closed), false},
        {"property added to partially open model, matching", L::backward,
         obj(R"("a":{"type":"string"})", R"(,"additionalProperties":{"type":"integer"})"),
         obj(R"("a":{"type":"string"},"b":{"type":"integer"})", R"(,"additionalProperties":{"type":"integer"})"), true},
        {"property added to partially open model, other type", L::backward,
         obj(R"("a":{"type":"string"})", R"(,"additionalProperties":{"type":"integer"})"),
         obj(R"("a":{"type":"string"},"b":{"type":"string"})", R"(,"additionalProperties":{"type":"integer"})"), false},
        {"open model closed", L::backward, obj(R"("a":{"type":"string"})"), obj(R"("a":{"type":"string"})", closed), false},
        {"closed model opened", L::backward, obj(R"("a":{"type":"string"})", closed), obj(R"("a":{"type":"string"})"), true},
        {"closed model opened (forward)", L::forward, obj(R"("a":{"type":"string"})", closed), obj(R"("a":{"type":"string"})"), false},
        {"required added", L::backward, obj(R"("a":{"type":"string"})"), obj(R"("a":{"type":"string"})", R"(,"required":["a"])"), false},
        {"required removed", L::backward, obj(R"("a":{"type":"string"})", R"(,"required":["a"])"), obj(R"("a":{"type":"string"})"), true},
        {"required removed (full)", L::full, obj(R"("a":{"type":"string"})", R"(,"required":["a"])"), obj(R"("a":{"type":"string"})"), false},
        {"type narrowed", L::backward, R"({"type":["string","null"]})", R"({"type":"string"})", false},
        {"type extended", L::backward, R"({"type":"string"})", R"({"type":["string","null"]})", true},
        {"integer to number", L::backward, R"({"type":"integer"})", R"({"type":"number"})", true},
        {"number to integer", L::backward, R"({"type":"number"})", R"({"type":"integer"})", false},
        {"string to integer", L::backward, R"({"type":"string"})", R"({"type":"integer"})", false},
        {"enum extended", L::backward, R"({"enum":["A","B"]})", R"({"enum":["A","B","C"]})", true},
        {"enum narrowed", L::backward, R"({"enum":["A","B"]})", R"({"enum":["A"]})", false},
        {"enum added", L::backward, R"({"type":"string"})", R"({"type":"string","enum":["A"]})", false},
        {"enum removed", L::backward, R"({"type":"string","enum":["A"]})", R"({"type":"string"})", true},
        {"maximum increased", L::backward, R"({"type":"number","maximum":10})", R"({"type":"number","maximum":20})", true},
        {"maximum decreased", L::backward, R"({"type":"number","maximum":10})", R"({"type":"number","maximum":5})", false},
        {"maximum added", L::backward, R"({"type":"number"})", R"({"type":"number","maximum":5})", false},
        {"minimum decreased", L::backward, R"({"type":"number","minimum":10})", R"({"type":"number","minimum":0})", true},
        {"minimum increased", L::backward, R"({"type":"number","minimum":0})", R"({"type":"number","minimum":1})", false},
        {"exclusive maximum made inclusive", L::backward, R"({"type":"number","exclusiveMaximum":10})",
         R"({"type":"number","maximum":10})", true},
        {"inclusive maximum made exclusive", L::backward, R"({"type":"number","maximum":10})",
         R"({"type":"number","exclusiveMaximum":10})", false},
        {"number range changed (full)", L::full, R"({"type":"number","minimum":0,"maximum":10})",
         R"({"type":"number","minimum":0,"maximum":20})", false},
        {"multipleOf loosened", L::backward, R"({"type":"number","multipleOf":4})", R"({"type":"number","multipleOf":2})", true},
        {"multipleOf tightened", L::backward, R"({"type":"number","multipleOf":2})", R"({"type":"number","multipleOf":4})", false},
        {"maxLength decreased", L::backward, R"({"type":"string","maxLength":10})", R"({"type":"string","maxLength":5})", false},
        {"maxLength increased", L::backward, R"({"type":"string","maxLength":10})", R"({"type":"string","maxLength":50})", true},
        {"pattern added", L::backward, R"({"type":"string"})", R"({"type":"string","pattern":"^a"})", false},
        {"items type narrowed", L::backward, R"({"type":"array","items":{"type":["string","null"]}})",
         R"({"type":"array","items":{"type":"string"}})", false},
        {"items type extended", L::backward, R"({"type":"array","items":{"type":"integer"}})",
         R"({"type":"array","items":{"type":"number"}})", true},
        {"nested property type changed", L::backward, obj(R"("n":)" + obj(R"("x":{"type":"string"})") + ""),
         obj(R"("n":)" + obj(R"("x":{"type":"integer"})")), false},
        {"oneOf branch added", L::backward, R"({"oneOf":[{"type":"string"},{"type":"integer"}]})",
         R"({"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]})", true},
        {"oneOf branch removed", L::backward, R"({"oneOf":[{"type":"string"},{"type":"integer"}]})",
         R"({"oneOf":[{"type":"string"}]})", false},
        {"recursive definition unchanged", L::full_transitive,
         R"({"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}})",
         R"({"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}})", true},
        {"ref target narrowed", L::backward,
         R"({"definitions":{"A":{"type":"number"}},"type":"object","properties":{"a":{"$ref":"#/definitions/A"}}})",
         R"({"definitions":{"A":{"type":"integer"}},"type":"object","properties":{"a":{"$ref":"#/definitions/A"}}})", false},
        {"anything goes at NONE", L::none, R"({"type":"string"})", R"({"type":"integer"})", true},
    };
    ASSERT_GE(cases.size(), 25u);
    run_table(schema_type::json, cases);
}

TEST(compatibility, transitive_levels_check_every_version) {
    // v1 has no b; v2 adds b with a default; v3 drops b's default. BACKWARD (latest only)
    // accepts v3 since v2 has b; BACKWARD_TRANSITIVE refuses it since v1 lacks b.
    auto v1 = parse_or_die(schema_type::avro, rec(R"({"name":"a","type":"int"})"));
    auto v2 = parse_or_die(schema_type::avro,
                           rec(R"({"name":"a","type":"int"},{"name":"b","type":"string","default":""})"));
    auto v3 = parse_or_die(schema_type::avro, rec(R"({"name":"a","type":"int"},{"name":"b","type":"string"})"));
    std::vector<previous_version> prev{{1, v1.get()}, {2, v2.get()}};
    EXPECT_TRUE(check_compatibility(L::backward, *v3, prev).compatible);
    auto t = check_compatibility(L::backward_transitive, *v3, prev);
    EXPECT_FALSE(t.compatible);
    ASSERT_GE(t.messages.size(), 4u);
    EXPECT_NE(t.messages[0].find("READER_FIELD_MISSING_DEFAULT_VALUE"), std::string::npos) << t.messages[0];
    EXPECT_EQ(t.messages[1], "{oldSchemaVersion: 1}");
    EXPECT_EQ(t.messages.back(), "{compatibility: 'BACKWARD_TRANSITIVE'}");
}

TEST(compatibility, schema_type_change_is_incompatible) {
    auto a = parse_or_die(schema_type::avro, R"("string")");
    auto j = parse_or_die(schema_type::json, R"({"type":"string"})");
    previous_version pv{1, a.get()};
    EXPECT_FALSE(check_compatibility(L::backward, *j, std::span(&pv, 1)).compatible);
    EXPECT_TRUE(check_compatibility(L::none, *j, std::span(&pv, 1)).compatible);
}

TEST(compatibility, level_names) {
    for (auto s : {"NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE"})
        EXPECT_EQ(to_string(*parse_compatibility_level(s)), s);
    EXPECT_FALSE(parse_compatibility_level("backward"));
}

} // namespace
} // namespace floe::schema
