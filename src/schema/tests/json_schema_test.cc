#include "schema/json_schema.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

TEST(json_schema, object_model) {
    auto s = json_schema::parse(R"({
      "$schema": "http://json-schema.org/draft-07/schema#",
      "title": "Order", "type": "object",
      "properties": {
        "id": {"type": "integer", "minimum": 1},
        "name": {"type": ["string", "null"], "maxLength": 20, "pattern": "^[a-z]+$"},
        "price": {"type": "number", "exclusiveMaximum": 100, "multipleOf": 0.01},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true},
        "status": {"enum": ["NEW", "PAID"]},
        "kind": {"const": "order"},
        "next": {"$ref": "#"},
        "addr": {"$ref": "#/definitions/Address"}
      },
      "required": ["id"],
      "additionalProperties": false,
      "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}
    })");
    ASSERT_TRUE(s) << s.error().message();
    auto& r = (*s)->root();
    EXPECT_EQ((*s)->dialect(), "http://json-schema.org/draft-07/schema#");
    EXPECT_EQ(r.types, json_object);
    EXPECT_EQ(r.title, "Order");
    ASSERT_EQ(r.properties.size(), 8u);
    EXPECT_EQ(r.properties[0].first, "id");
    EXPECT_TRUE(r.is_required("id"));
    EXPECT_FALSE(r.is_required("name"));
    ASSERT_TRUE(r.additional_properties);
    EXPECT_EQ(r.additional_properties->boolean_schema, false);
    EXPECT_EQ(r.find_property("id")->minimum, 1.0);
    EXPECT_EQ(r.find_property("name")->types, json_string | json_null);
    EXPECT_EQ(r.find_property("name")->max_length, 20u);
    EXPECT_EQ(r.find_property("price")->types, json_number | json_integer);
    EXPECT_EQ(r.find_property("price")->exclusive_maximum, 100.0);
    EXPECT_EQ(r.find_property("tags")->items->types, json_string);
    EXPECT_TRUE(r.find_property("tags")->unique_items);
    EXPECT_EQ(r.find_property("status")->enum_values->size(), 2u);
    EXPECT_EQ(*r.find_property("kind")->const_value, "order");
    // "$ref": "#" is the root itself (a cycle).
    EXPECT_EQ(r.find_property("next")->ref, &r);
    EXPECT_EQ(&r.find_property("next")->effective(), &r);
    EXPECT_EQ(r.find_property("addr")->effective().find_property("city")->types, json_string);
    EXPECT_EQ(json_types_to_string(json_string | json_null), "null,string");
}

TEST(json_schema, draft4_exclusive_bounds_and_references) {
    auto s = json_schema::parse(R"({"type":"number","minimum":0,"exclusiveMinimum":true})");
    ASSERT_TRUE(s);
    EXPECT_FALSE((*s)->root().minimum);
    EXPECT_EQ((*s)->root().exclusive_minimum, 0.0);

    auto addr = json_schema::parse(R"({"type":"object","properties":{"city":{"type":"string"}},
                                       "definitions":{"Zip":{"type":"string","maxLength":5}}})");
    ASSERT_TRUE(addr);
    auto user = json_schema::parse(R"({"type":"object","properties":{
                                        "home":{"$ref":"address.json"},
                                        "zip":{"$ref":"address.json#/definitions/Zip"}}})",
                                   {{"address.json", *addr}});
    ASSERT_TRUE(user) << user.error().message();
    EXPECT_EQ((*user)->root().find_property("home")->ref, &(*addr)->root());
    EXPECT_EQ((*user)->root().find_property("zip")->effective().max_length, 5u);
}

TEST(json_schema, refuses_malformed_schemas) {
    for (const char* t : {"", "{", "42", "\"x\"", R"({"type":"strng"})", R"({"type":[]})",
                          R"({"properties":[]})", R"({"required":"id"})", R"({"minLength":-1})",
                          R"({"minimum":"1"})", R"({"$ref":"#/definitions/Nope"})", R"({"$ref":"other.json"})",
                          R"({"allOf":[]})", R"({"multipleOf":0})", R"({"enum":"A"})"}) {
        auto r = json_schema::parse(t);
        EXPECT_FALSE(r) << t;
        if (!r) {
            EXPECT_EQ(r.error().code(), errc::invalid_argument);
        }
    }
    std::string deep;
    for (int i = 0; i < 100; ++i) deep += R"({"items":)";
    deep += "{}";
    for (int i = 0; i < 100; ++i) deep += "}";
    auto r = json_schema::parse(deep);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("nested deeper"), std::string::npos);
}

TEST(json_schema, boolean_schemas_and_canonical_text) {
    auto t = json_schema::parse("true");
    ASSERT_TRUE(t);
    EXPECT_EQ((*t)->root().boolean_schema, true);
    auto a = json_schema::parse(R"({ "type" : "object", "properties" : { "b":{}, "a":{} } })");
    ASSERT_TRUE(a);
    EXPECT_EQ((*a)->canonical(), R"({"type":"object","properties":{"b":{},"a":{}}})");
    EXPECT_EQ((*a)->normalized(), R"({"properties":{"a":{},"b":{}},"type":"object"})");
}

} // namespace
} // namespace floe::schema
