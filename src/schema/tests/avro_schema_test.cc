#include "schema/avro_schema.h"
#include "schema/parsed_schema.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

std::shared_ptr<const avro_schema> ok(std::string_view text,
                                      const std::vector<std::shared_ptr<const avro_schema>>& refs = {}) {
    auto r = avro_schema::parse(text, refs);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    return r ? *r : nullptr;
}

std::string bad(std::string_view text) {
    auto r = avro_schema::parse(text);
    EXPECT_FALSE(r.has_value()) << text;
    if (r) return {};
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    return r.error().message();
}

TEST(avro_schema, primitives_and_canonical_text) {
    auto s = ok(R"( "string" )");
    EXPECT_EQ(s->root().kind, avro_kind::string);
    EXPECT_EQ(s->canonical(), R"("string")");
    auto t = ok(R"({ "type" : "long" })");
    EXPECT_EQ(t->root().kind, avro_kind::long_);
    EXPECT_EQ(t->canonical(), R"({"type":"long"})");
    EXPECT_EQ(t->normalized(), R"("long")");
    EXPECT_EQ(t->parsing_canonical_form(), R"("long")");
}

TEST(avro_schema, record_with_everything) {
    auto s = ok(R"({"type":"record","name":"Order","namespace":"com.acme","aliases":["OldOrder"],"doc":"an order",
      "fields":[
        {"name":"id","type":"long","doc":"the id","field-id":1},
        {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
        {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"],"default":"NEW"},"default":"NEW"},
        {"name":"tags","type":{"type":"array","items":"string"},"default":[]},
        {"name":"attrs","type":{"type":"map","values":"int"},"default":{"a":1}},
        {"name":"hash","type":{"type":"fixed","name":"MD5","size":16}},
        {"name":"note","type":["null","string"],"default":null,"aliases":["comment"],"order":"ignore"},
        {"name":"next","type":["null","Order"],"default":null},
        {"name":"bad_logical","type":{"type":"int","logicalType":"timestamp-millis"}}
      ]})");
    ASSERT_TRUE(s);
    auto& r = s->root();
    EXPECT_EQ(r.kind, avro_kind::record);
    EXPECT_EQ(r.full_name, "com.acme.Order");
    EXPECT_EQ(r.ns, "com.acme");
    ASSERT_EQ(r.aliases.size(), 1u);
    EXPECT_EQ(r.aliases[0], "com.acme.OldOrder");
    EXPECT_EQ(r.doc, "an order");
    ASSERT_EQ(r.fields.size(), 10u);
    EXPECT_EQ(r.fields[0].props.at("field-id"), 1);
    EXPECT_EQ(r.fields[0].doc, "the id");
    ASSERT_TRUE(r.fields[1].type->logical);
    EXPECT_EQ(r.fields[1].type->logical->name, "decimal");
    EXPECT_EQ(r.fields[1].type->logical->precision, 10);
    EXPECT_EQ(r.fields[1].type->logical->scale, 2);
    EXPECT_EQ(r.fields[2].type->logical->name, "timestamp-millis");
    auto* status = r.fields[3].type;
    EXPECT_EQ(status->full_name, "com.acme.Status");
    EXPECT_EQ(status->enum_default, "NEW");
    EXPECT_EQ(r.fields[4].type->kind, avro_kind::array);
    EXPECT_EQ(r.fields[4].type->items->kind, avro_kind::string);
    EXPECT_EQ(r.fields[5].type->kind, avro_kind::map);
    EXPECT_EQ(r.fields[6].type->fixed_size, 16u);
    EXPECT_EQ(r.fields[7].order, avro_order::ignore);
    EXPECT_EQ(r.fields[7].aliases, std::vector<std::string>{"comment"});
    EXPECT_TRUE(r.fields[7].default_value->is_null());
    // Recursion: the union's second branch is the record itself.
    EXPECT_EQ(r.fields[8].type->branches[1], &r);
    // A logical type on the wrong underlying type is ignored (the node reads as int).
    EXPECT_FALSE(r.fields[9].type->logical);
    EXPECT_EQ(s->named_types().size(), 3u);
    EXPECT_EQ(s->find_named("com.acme.MD5")->kind, avro_kind::fixed);
    // The normalized form names types in full and re-parses to the same normalized text.
    auto n = s->normalized();
    EXPECT_EQ(n.find("\"namespace\""), std::string::npos);
    auto again = ok(n);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->normalized(), n);
    EXPECT_EQ(s->parsing_canonical_form().substr(0, 44), R"({"name":"com.acme.Order","type":"record","fi)");
}

TEST(avro_schema, whitespace_does_not_change_canonical_text) {
    auto a = ok(R"({"type":"record","name":"A","fields":[{"name":"x","type":"int"}]})");
    auto b = ok("{ \"type\": \"record\",\n \"name\": \"A\",\n \"fields\": [ { \"name\": \"x\", \"type\": \"int\" } ] }");
    EXPECT_EQ(a->canonical(), b->canonical());
}

TEST(avro_schema, namespaces_inherit_and_dotted_names_override) {
    auto s = ok(R"({"type":"record","name":"a.b.Outer","fields":[
        {"name":"x","type":{"type":"record","name":"Inner","fields":[]}},
        {"name":"y","type":{"type":"record","name":"Other","namespace":"c","fields":[
            {"name":"z","type":{"type":"enum","name":"E","symbols":["A"]}}]}},
        {"name":"w","type":"Inner"},
        {"name":"v","type":"c.E"}]})");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->find_named("a.b.Inner"));
    EXPECT_TRUE(s->find_named("c.Other"));
    EXPECT_TRUE(s->find_named("c.E"));
    EXPECT_EQ(s->root().fields[2].type, s->find_named("a.b.Inner"));
}

TEST(avro_schema, references_bring_named_types_into_scope) {
    auto addr = ok(R"({"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]})");
    auto user = ok(R"({"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"}]})",
                   {addr});
    ASSERT_TRUE(user);
    EXPECT_EQ(user->root().fields[0].type, &addr->root());
    // Normalizing does not inline the referenced type... the reference stays a name.
    EXPECT_EQ(bad(R"({"type":"record","name":"User","fields":[{"name":"home","type":"com.acme.Address"}]})")
                  .find("undefined name"),
              std::string("invalid Avro schema: field \"home\" of User: ").size());
}

TEST(avro_schema, refuses_malformed_schemas) {
    bad("");
    bad("{");
    bad("42");
    bad(R"({"type":"strin"})");
    bad(R"({"type":"record","fields":[]})");                                        // no name
    bad(R"({"type":"record","name":"1A","fields":[]})");                            // bad name
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"x","type":"int"}]})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x"}]})");                 // no type
    bad(R"({"type":"enum","name":"E","symbols":["A","A"]})");
    bad(R"({"type":"enum","name":"E","symbols":["A"],"default":"B"})");
    bad(R"({"type":"fixed","name":"F","size":-1})");
    bad(R"(["int","int"])");
    bad(R"(["int",["string"]])");
    bad(R"({"type":"array"})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":"B"}]})");     // undefined
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":{"type":"fixed","name":"A","size":1}}]})");
    bad(R"({"type":"record","name":"int","fields":[]})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":"int","default":"no"}]})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":"int","default":3000000000}]})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":{"type":"fixed","name":"F","size":2},"default":"abc"}]})");
    bad(R"({"type":"record","name":"A","fields":[{"name":"x","type":"string","order":"up"}]})");
    std::string deep(100, '[');
    deep += "\"int\"";
    deep += std::string(100, ']');
    EXPECT_NE(bad(deep).find("nested deeper"), std::string::npos);
    // Deep but valid JSON whose type nesting exceeds the limit.
    std::string nested = "\"int\"";
    for (int i = 0; i < 70; ++i) nested = R"({"type":"array","items":)" + nested + "}";
    bad(nested);
}

TEST(avro_schema, defaults_by_type) {
    auto with_default = [](std::string type, std::string def) {
        return avro_schema::parse(R"({"type":"record","name":"A","fields":[{"name":"x","type":)" + type +
                                  R"(,"default":)" + def + "}]}")
            .has_value();
    };
    EXPECT_TRUE(with_default(R"("bytes")", R"("\u00ff")"));
    EXPECT_FALSE(with_default(R"("bytes")", R"("\u0100")"));
    EXPECT_TRUE(with_default(R"("double")", "1"));
    EXPECT_TRUE(with_default(R"("float")", R"("NaN")"));
    EXPECT_TRUE(with_default(R"(["null","int"])", "null"));
    EXPECT_TRUE(with_default(R"(["null","int"])", "3"));
    EXPECT_FALSE(with_default(R"(["null","int"])", R"("x")"));
    EXPECT_TRUE(with_default(R"({"type":"record","name":"B","fields":[{"name":"y","type":"int","default":1}]})", "{}"));
    EXPECT_FALSE(with_default(R"({"type":"record","name":"B","fields":[{"name":"y","type":"int"}]})", "{}"));
}

TEST(parsed_schema, types_and_reference_kinds) {
    EXPECT_EQ(parse_schema_type("AVRO"), schema_type::avro);
    EXPECT_EQ(parse_schema_type("PROTOBUF"), schema_type::protobuf);
    EXPECT_EQ(parse_schema_type("JSON"), schema_type::json);
    EXPECT_FALSE(parse_schema_type("avro"));
    auto j = parsed_schema::parse(schema_type::json, R"({"type":"string"})");
    ASSERT_TRUE(j);
    auto a = parsed_schema::parse(schema_type::avro, R"("int")", {{"x", *j}});
    ASSERT_FALSE(a);
    EXPECT_NE(a.error().message().find("not a AVRO schema"), std::string::npos);
}

} // namespace
} // namespace floe::schema
