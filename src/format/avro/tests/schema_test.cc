#include "format/avro/schema.h"

#include <gtest/gtest.h>

using namespace floe::avro;

TEST(avro_schema, keeps_iceberg_ids_and_text) {
    std::string text = R"({"type":"record","name":"manifest_file","fields":[
        {"name":"manifest_path","type":"string","field-id":500},
        {"name":"partitions","type":["null",{"type":"array","element-id":508,
            "items":{"type":"record","name":"r508","fields":[
                {"name":"contains_null","type":"boolean","field-id":509}]}}],
         "default":null,"field-id":507},
        {"name":"props","type":{"type":"map","values":"long","key-id":7,"value-id":8}}]})";
    auto s = schema::parse(text);
    ASSERT_TRUE(s) << s.error();
    EXPECT_EQ(s->json(), text);
    auto& root = s->root();
    ASSERT_EQ(root.kind, type::record);
    EXPECT_EQ(root.name, "manifest_file");
    ASSERT_EQ(root.fields.size(), 3u);
    EXPECT_EQ(root.fields[0].field_id, 500);
    EXPECT_EQ(root.fields[1].field_id, 507);
    auto* u = root.fields[1].type;
    ASSERT_EQ(u->kind, type::union_);
    ASSERT_EQ(u->branches.size(), 2u);
    EXPECT_EQ(u->branches[1]->kind, type::array);
    EXPECT_EQ(u->branches[1]->element_id, 508);
    EXPECT_EQ(u->branches[1]->items->fields[0].field_id, 509);
    EXPECT_EQ(root.fields[2].type->key_id, 7);
    EXPECT_EQ(root.fields[2].type->value_id, 8);
    EXPECT_EQ(root.field_index("props"), 2);
}

TEST(avro_schema, named_references_and_namespaces) {
    auto s = schema::parse(R"({"type":"record","name":"list","namespace":"a.b","fields":[
        {"name":"v","type":{"type":"fixed","name":"f16","size":16}},
        {"name":"w","type":"f16"},
        {"name":"x","type":"a.b.f16"},
        {"name":"e","type":{"type":"enum","name":"color","symbols":["R","G"]}},
        {"name":"next","type":["null","list"]}]})");
    ASSERT_TRUE(s) << s.error();
    auto& r = s->root();
    EXPECT_EQ(r.name, "a.b.list");
    EXPECT_EQ(r.fields[1].type, r.fields[0].type);
    EXPECT_EQ(r.fields[2].type, r.fields[0].type);
    EXPECT_EQ(r.fields[4].type->branches[1], &r);
    EXPECT_EQ(r.min_encoded_size, 16u + 16 + 16 + 1 + 1);
}

TEST(avro_schema, rejects_bad_schemas) {
    const char* bad[] = {
        "",
        "{",
        "\"nosuchtype\"",
        R"({"type":"record","name":"r"})",
        R"({"type":"record","name":"r","fields":[{"name":"a","type":"r"}]})",  // infinite
        R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]})",
        R"({"type":"fixed","name":"f","size":-1})",
        R"({"type":"enum","name":"e"})",
        R"(["int",["null"]])",
        R"([])",
        R"({"type":"array"})",
        R"({"type":"record","name":"r","fields":[{"name":"a","type":"int","field-id":"x"}]})",
        R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]},{"type":"record","name":"r","fields":[]})",
    };
    for (auto* b : bad) EXPECT_FALSE(schema::parse(b)) << b;
    std::string deep(10000, '[');
    EXPECT_FALSE(schema::parse(deep));
    std::string deep_arrays;
    for (int i = 0; i < 100; ++i) deep_arrays += R"({"type":"array","items":)";
    deep_arrays += "\"int\"" + std::string(100, '}');
    auto r = schema::parse(deep_arrays);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("nested deeper"), std::string::npos) << r.error();
}
