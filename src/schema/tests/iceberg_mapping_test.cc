#include "schema/iceberg_mapping.h"

#include <gtest/gtest.h>

#include <map>

namespace floe::schema {
namespace {

using iceberg::nested_field;
using iceberg::type_id;

std::shared_ptr<const avro_schema> parse(std::string_view text) {
    auto r = avro_schema::parse(text);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    return r ? *r : nullptr;
}

std::vector<nested_field> map_ok(std::string_view text) {
    auto s = parse(text);
    auto r = avro_to_iceberg(*s);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    return r ? *r : std::vector<nested_field>{};
}

const nested_field& field(const std::vector<nested_field>& fs, std::string_view name) {
    for (auto& f : fs)
        if (f.name == name) return f;
    ADD_FAILURE() << "no field " << name;
    static nested_field none;
    return none;
}

std::string type_of(const std::vector<nested_field>& fs, std::string_view name) {
    auto& f = field(fs, name);
    return f.field_type ? describe(*f.field_type) : "<none>";
}

std::map<std::string, int32_t> paths(const std::vector<nested_field>& fs) {
    iceberg::schema s;
    s.fields = fs;
    auto v = name_paths(s);
    return {v.begin(), v.end()};
}

TEST(iceberg_mapping, primitives_and_logical_types) {
    auto fs = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"i","type":"int"},{"name":"l","type":"long"},{"name":"f","type":"float"},
      {"name":"d","type":"double"},{"name":"b","type":"boolean"},{"name":"s","type":"string","doc":"text"},
      {"name":"by","type":"bytes"},{"name":"fx","type":{"type":"fixed","name":"F8","size":8}},
      {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
      {"name":"dec_b","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
      {"name":"dec_f","type":{"type":"fixed","name":"F6","size":6,"logicalType":"decimal","precision":12,"scale":3}},
      {"name":"date","type":{"type":"int","logicalType":"date"}},
      {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
      {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
      {"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
      {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
      {"name":"ltm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
      {"name":"ltu","type":{"type":"long","logicalType":"local-timestamp-micros"}},
      {"name":"us","type":{"type":"string","logicalType":"uuid"}},
      {"name":"uf","type":{"type":"fixed","name":"U16","size":16,"logicalType":"uuid"}},
      {"name":"dur","type":{"type":"fixed","name":"D12","size":12,"logicalType":"duration"}},
      {"name":"bad_date","type":{"type":"string","logicalType":"date"}},
      {"name":"nothing","type":"null"}
    ]})");
    std::map<std::string, std::string> want = {
        {"i", "int"},           {"l", "long"},           {"f", "float"},        {"d", "double"},
        {"b", "boolean"},       {"s", "string"},         {"by", "binary"},      {"fx", "fixed[8]"},
        {"e", "string"},        {"dec_b", "decimal(10, 2)"}, {"dec_f", "decimal(12, 3)"},
        {"date", "date"},       {"tm", "time"},          {"tu", "time"},        {"tsm", "timestamptz"},
        {"tsu", "timestamptz"}, {"ltm", "timestamp"},    {"ltu", "timestamp"},  {"us", "uuid"},
        {"uf", "uuid"},         {"dur", "fixed[12]"},    {"bad_date", "string"},
    };
    ASSERT_EQ(fs.size(), want.size()); // the null field has no column
    for (auto& [n, t] : want) EXPECT_EQ(type_of(fs, n), t) << n;
    for (auto& f : fs) {
        EXPECT_FALSE(f.required) << f.name << ": every decoded column is optional";
        EXPECT_EQ(f.id, 0);
    }
    EXPECT_EQ(field(fs, "s").doc, "text");
}

TEST(iceberg_mapping, nested_types_and_unions) {
    auto fs = map_ok(R"({"type":"record","name":"Order","namespace":"a","fields":[
      {"name":"customer","type":{"type":"record","name":"Customer","fields":[
        {"name":"name","type":"string"},
        {"name":"address","type":["null",{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}]}]}},
      {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
        {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
      {"name":"attrs","type":{"type":"map","values":"long"}},
      {"name":"note","type":["null","string"]},
      {"name":"note2","type":["string","null"]},
      {"name":"choice","type":["int","string",{"type":"record","name":"Item2","fields":[{"name":"x","type":"int"}]}]},
      {"name":"maybe_choice","type":["null","long","Address"]},
      {"name":"clash","type":[{"type":"fixed","name":"x.K","size":2},{"type":"enum","name":"y.K","symbols":["A"]}]}
    ]})");
    ASSERT_EQ(fs.size(), 8u);
    auto& c = *field(fs, "customer").field_type;
    ASSERT_EQ(c.id, type_id::struct_);
    ASSERT_EQ(c.fields.size(), 2u);
    EXPECT_EQ(c.fields[1].name, "address");
    EXPECT_FALSE(c.fields[1].required);
    EXPECT_EQ(c.fields[1].field_type->id, type_id::struct_);
    auto& items = *field(fs, "items").field_type;
    ASSERT_EQ(items.id, type_id::list);
    EXPECT_FALSE(items.element_required);
    EXPECT_EQ(items.element->fields.size(), 2u);
    auto& attrs = *field(fs, "attrs").field_type;
    EXPECT_EQ(describe(attrs), "map<string, long>");
    EXPECT_FALSE(attrs.value_required);
    EXPECT_EQ(type_of(fs, "note"), "string");
    EXPECT_EQ(type_of(fs, "note2"), "string");
    auto& ch = *field(fs, "choice").field_type;
    ASSERT_EQ(ch.id, type_id::struct_);
    ASSERT_EQ(ch.fields.size(), 3u);
    EXPECT_EQ(ch.fields[0].name, "int");
    EXPECT_EQ(ch.fields[1].name, "string");
    EXPECT_EQ(ch.fields[2].name, "Item2");
    for (auto& f : ch.fields) EXPECT_FALSE(f.required);
    auto& mc = *field(fs, "maybe_choice").field_type;
    ASSERT_EQ(mc.fields.size(), 2u);
    EXPECT_EQ(mc.fields[0].name, "long");
    EXPECT_EQ(mc.fields[1].name, "Address");
    auto& cl = *field(fs, "clash").field_type;
    ASSERT_EQ(cl.fields.size(), 2u);
    EXPECT_EQ(cl.fields[0].name, "x_K");
    EXPECT_EQ(cl.fields[1].name, "y_K");
}

TEST(iceberg_mapping, refuses_recursion_and_non_records) {
    auto s = parse(R"({"type":"record","name":"Node","fields":[{"name":"v","type":"int"},
      {"name":"next","type":["null","Node"]}]})");
    auto r = avro_to_iceberg(*s);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("recursive"), std::string::npos) << r.error().message();
    EXPECT_FALSE(avro_to_iceberg(*parse(R"("string")")));
    // The same record used twice, not recursively, is fine.
    auto twice = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"a","type":{"type":"record","name":"P","fields":[{"name":"x","type":"int"}]}},{"name":"b","type":"P"}]})");
    EXPECT_EQ(twice.size(), 2u);
    auto big = parse(R"({"type":"record","name":"R","fields":[
      {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":39,"scale":0}}]})");
    EXPECT_FALSE(avro_to_iceberg(*big));
}

TEST(iceberg_mapping, ids_by_name_path) {
    auto fs = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"id","type":"long"},
      {"name":"customer","type":{"type":"record","name":"C","fields":[
        {"name":"address","type":{"type":"record","name":"A","fields":[{"name":"city","type":"string"}]}}]}},
      {"name":"items","type":{"type":"array","items":"string"}},
      {"name":"attrs","type":{"type":"map","values":"int"}}]})");
    int32_t last = 13; // Floe's own columns take 1..13
    assign_ids(fs, nullptr, last);
    auto p = paths(fs);
    std::map<std::string, int32_t> want = {
        {"id", 14},           {"customer", 15}, {"customer.address", 16}, {"customer.address.city", 17},
        {"items", 18},        {"items.element", 19}, {"attrs", 20}, {"attrs.key", 21}, {"attrs.value", 22}};
    EXPECT_EQ(p, want);
    EXPECT_EQ(last, 22);

    // Next version: a field in front, a nested field added; existing paths keep their ids.
    iceberg::schema prev;
    prev.fields = fs;
    auto fs2 = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"first","type":"int"},
      {"name":"id","type":"long"},
      {"name":"customer","type":{"type":"record","name":"C","fields":[
        {"name":"zip","type":"string"},
        {"name":"address","type":{"type":"record","name":"A","fields":[{"name":"city","type":"string"}]}}]}},
      {"name":"attrs","type":{"type":"map","values":"int"}}]})");
    assign_ids(fs2, &prev, last);
    auto p2 = paths(fs2);
    EXPECT_EQ(p2["first"], 23);
    EXPECT_EQ(p2["id"], 14);
    EXPECT_EQ(p2["customer.zip"], 24);
    EXPECT_EQ(p2["customer.address.city"], 17);
    EXPECT_EQ(p2["attrs.value"], 22);
    EXPECT_EQ(last, 24);
}

// Five registry versions through evolve(): add, promote, remove, required->optional, and an
// incompatible change. Ids stay stable by path, nothing is renumbered or reused.
TEST(iceberg_mapping, evolution_over_five_versions) {
    iceberg::schema table = iceberg::floe_table_schema();
    int32_t last = table.highest_field_id();
    ASSERT_EQ(last, 13);

    auto v1 = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"country","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"float"},
      {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
      {"name":"tags","type":{"type":"array","items":"int"}}]})");
    auto e1 = evolve(table, v1, last);
    ASSERT_EQ(e1.outcome, evolution::kind::updated) << e1.reason;
    EXPECT_EQ(e1.schema.schema_id, table.schema_id + 1);
    EXPECT_EQ(e1.last_column_id, 19);
    auto ids1 = name_paths(e1.schema);
    auto p1 = std::map<std::string, int32_t>(ids1.begin(), ids1.end());
    EXPECT_EQ(p1["stream_key"], 1);
    EXPECT_EQ(p1["country"], 14);
    EXPECT_EQ(p1["qty"], 15);
    EXPECT_EQ(p1["tags.element"], 19);
    // The same version again changes nothing.
    EXPECT_EQ(evolve(e1.schema, v1, e1.last_column_id).outcome, evolution::kind::unchanged);

    // v2: add a field (nested too), promote int->long, float->double, decimal(9,2)->(12,2),
    // list<int> -> list<long>.
    auto v2 = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"country","type":"string"},{"name":"qty","type":"long"},{"name":"price","type":"double"},
      {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
      {"name":"tags","type":{"type":"array","items":"long"}},
      {"name":"shipping","type":{"type":"record","name":"S","fields":[{"name":"city","type":"string"}]}}]})");
    auto e2 = evolve(e1.schema, v2, e1.last_column_id);
    ASSERT_EQ(e2.outcome, evolution::kind::updated) << e2.reason;
    auto p2 = paths(e2.schema.fields);
    EXPECT_EQ(p2["qty"], 15);
    EXPECT_EQ(describe(*e2.schema.find(15)->field_type), "long");
    EXPECT_EQ(describe(*e2.schema.find(16)->field_type), "double");
    EXPECT_EQ(describe(*e2.schema.find(17)->field_type), "decimal(12, 2)");
    EXPECT_EQ(describe(*e2.schema.find("tags")->field_type), "list<long>");
    EXPECT_EQ(p2["tags.element"], 19);
    EXPECT_EQ(p2["shipping"], 20);
    EXPECT_EQ(p2["shipping.city"], 21);
    EXPECT_EQ(e2.last_column_id, 21);

    // v3: `price` and `shipping` removed: the columns stay; an old int version still fits the
    // promoted long column (written widened).
    auto v3 = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"country","type":"string"},{"name":"qty","type":"int"},
      {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
      {"name":"tags","type":{"type":"array","items":"long"}}]})");
    auto e3 = evolve(e2.schema, v3, e2.last_column_id);
    EXPECT_EQ(e3.outcome, evolution::kind::unchanged) << e3.reason;
    EXPECT_NE(e3.schema.find("price"), nullptr);
    EXPECT_NE(e3.schema.find("shipping"), nullptr);
    EXPECT_EQ(describe(*e3.schema.find(17)->field_type), "decimal(12, 2)");

    // v4: required -> optional. Decoded columns are optional already, so take a table whose
    // `country` column was required (as an older writer may have made it).
    iceberg::schema strict = e2.schema;
    for (auto& f : strict.fields)
        if (f.name == "country") f.required = true;
    auto v4 = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"country","type":["null","string"]},{"name":"qty","type":"long"},{"name":"price","type":"double"}]})");
    auto e4 = evolve(strict, v4, e2.last_column_id);
    ASSERT_EQ(e4.outcome, evolution::kind::updated) << e4.reason;
    EXPECT_FALSE(e4.schema.find("country")->required);
    EXPECT_EQ(e4.schema.find("country")->id, 14);
    EXPECT_EQ(e4.last_column_id, 21);
    EXPECT_EQ(evolve(e2.schema, v4, e2.last_column_id).outcome, evolution::kind::unchanged);

    // v5: string -> int is incompatible; the reason names the field and both types. Nested and
    // shape changes too.
    auto v5 = map_ok(R"({"type":"record","name":"R","fields":[{"name":"country","type":"int"}]})");
    auto e5 = evolve(e4.schema, v5, e4.last_column_id);
    ASSERT_EQ(e5.outcome, evolution::kind::incompatible);
    EXPECT_EQ(e5.reason, "field `country`: string -> int");
    auto nested = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"shipping","type":{"type":"record","name":"S","fields":[{"name":"city","type":"long"}]}}]})");
    EXPECT_EQ(evolve(e4.schema, nested, e4.last_column_id).reason, "field `shipping.city`: string -> long");
    auto narrower = map_ok(R"({"type":"record","name":"R","fields":[{"name":"qty","type":"double"}]})");
    EXPECT_EQ(evolve(e4.schema, narrower, e4.last_column_id).reason, "field `qty`: long -> double");
    auto scale = map_ok(R"({"type":"record","name":"R","fields":[
      {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":14,"scale":3}}]})");
    EXPECT_EQ(evolve(e4.schema, scale, e4.last_column_id).reason,
              "field `amount`: decimal(12, 2) -> decimal(14, 3)");
    auto shape = map_ok(R"({"type":"record","name":"R","fields":[{"name":"tags","type":"long"}]})");
    EXPECT_EQ(evolve(e4.schema, shape, e4.last_column_id).reason, "field `tags`: list<long> -> long");

    // A field removed and added back keeps its id; a column dropped from the table earlier
    // (last_column_id above the highest id) never has its id reused.
    auto again = map_ok(R"({"type":"record","name":"R","fields":[{"name":"brand_new","type":"int"}]})");
    auto e6 = evolve(e4.schema, again, 40);
    ASSERT_EQ(e6.outcome, evolution::kind::updated);
    EXPECT_EQ(e6.schema.find("brand_new")->id, 41);
    EXPECT_EQ(e6.schema.find("price")->id, 16);
}

} // namespace
} // namespace floe::schema
