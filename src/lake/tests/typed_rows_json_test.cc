// JSON values (JSON Schema) into typed columns.
#include "lake/typed_rows_json.h"

#include "lake/tests/roundtrip.h"
#include "schema/iceberg_mapping.h"
#include "schema/json_mapping.h"

#include <gtest/gtest.h>

namespace floe::lake {
namespace {

constexpr std::string_view order_json_schema = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order", "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "customer": {"type": "object", "properties": {"name": {"type": "string"}, "address": {"$ref": "#/definitions/Address"}}},
    "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku"]}},
    "attrs": {"type": "object", "additionalProperties": {"type": "string"}},
    "amount": {"type": "number"},
    "ts": {"type": "string", "format": "date-time"},
    "day": {"type": "string", "format": "date"},
    "at": {"type": "string", "format": "time"},
    "uid": {"type": "string", "format": "uuid"},
    "status": {"type": "string", "enum": ["NEW", "PAID"]},
    "note": {"type": ["null", "string"]},
    "ref": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    "mixed": {"type": ["string", "number", "null"]},
    "paid": {"type": "boolean"},
    "extra": {}
  },
  "required": ["id"],
  "definitions": {"Address": {"type": "object", "properties": {"country": {"type": "string"}, "city": {"type": "string"}}}}
})";

std::shared_ptr<const schema::json_schema> parse(std::string_view text) {
    auto s = schema::json_schema::parse(text);
    EXPECT_TRUE(s) << s.error().message();
    return s ? *s : nullptr;
}

/// The value's columns as typed tables hold them: one struct `data`.
std::vector<iceberg::nested_field> data_of(const schema::json_schema& s) {
    auto f = schema::json_to_iceberg(s);
    EXPECT_TRUE(f) << f.error().message();
    auto t = std::make_shared<iceberg::type>();
    t->id = iceberg::type_id::struct_;
    t->fields = *f;
    std::vector<iceberg::nested_field> out{
        iceberg::nested_field{.id = 0, .name = "data", .required = false, .field_type = t}};
    int32_t last = 0;
    schema::assign_ids(out, nullptr, last);
    return out;
}

TEST(typed_rows_json, mapping_of_every_type) {
    auto s = parse(order_json_schema);
    auto f = schema::json_to_iceberg(*s);
    ASSERT_TRUE(f) << f.error().message();
    std::vector<std::string> got;
    for (auto& x : *f)
        got.push_back(x.name + ":" + schema::describe(*x.field_type));
    EXPECT_EQ(got, (std::vector<std::string>{"id:long", "customer:struct", "items:list<struct>",
                                             "attrs:map<string, string>", "amount:double",
                                             "ts:timestamptz", "day:date", "at:time", "uid:uuid",
                                             "status:string", "note:string", "ref:struct",
                                             "mixed:struct", "paid:boolean", "extra:string"}));
    auto names = [](const iceberg::type& t) {
        std::vector<std::string> n;
        for (auto& x : t.fields)
            n.push_back(x.name);
        return n;
    };
    EXPECT_EQ(names(*(*f)[11].field_type), (std::vector<std::string>{"integer", "string"}));
    EXPECT_EQ(names(*(*f)[12].field_type), (std::vector<std::string>{"number", "string"}));
    // Refused: recursion, allOf of two, tuples; a root that is not an object.
    auto rec = parse(R"({"type":"object","properties":{"n":{"$ref":"#"}}})");
    auto r = schema::json_to_iceberg(*rec);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("recursive"), std::string::npos) << r.error().message();
    auto all = parse(
        R"({"type":"object","properties":{"a":{"allOf":[{"type":"string"},{"minLength":1}]}}})");
    EXPECT_EQ(schema::json_to_iceberg(*all).error().code(), errc::unsupported);
    auto tuple = parse(
        R"({"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}})");
    EXPECT_EQ(schema::json_to_iceberg(*tuple).error().code(), errc::unsupported);
    EXPECT_FALSE(schema::json_to_iceberg(*parse(R"({"type":"string"})")));
    // Branch names: titles and $ref names, made unique.
    auto named = parse(
        R"({"type":"object","properties":{"pay":{"anyOf":[{"$ref":"#/definitions/Card"},{"title":"Cash","type":"object","properties":{"amt":{"type":"number"}}},{"type":"object","properties":{"x":{"type":"integer"}}},{"type":"object","properties":{"y":{"type":"integer"}}},{"type":"null"}]}},
      "definitions":{"Card":{"type":"object","properties":{"pan":{"type":"string"}}}}})");
    auto nf = schema::json_to_iceberg(*named);
    ASSERT_TRUE(nf) << nf.error().message();
    EXPECT_EQ(names(*(*nf)[0].field_type),
              (std::vector<std::string>{"Card", "Cash", "object", "object_3"}));
}

constexpr std::string_view full_value =
    R"({"id":7,"customer":{"name":"na\u00efve \ud83d\ude00","address":{"country":"JP"}},"items":[{"sku":"a","qty":2},{"sku":"b"}],)"
    R"("attrs":{"k":"v","k2":"w"},"amount":12.5,"ts":"2024-01-02T03:04:05.123456789+01:00","day":"2024-02-29","at":"23:59:59.5Z",)"
    R"("uid":"0f8fad5b-d9cb-469f-a165-70867728950e","status":"PAID","note":null,"ref":"R-9","mixed":2e2,"paid":true,)"
    R"("unknown":{"deep":[1,{"x":null}]},"extra":{"any": [1, "two"]},"id":8})";

TEST(typed_rows_json, decodes_every_type_with_levels) {
    auto s = parse(order_json_schema);
    auto fields = data_of(*s);
    auto plan = json_row_plan::make_in_column(*s, fields[0], 0);
    ASSERT_TRUE(plan) << plan.error().detail;
    roundtrip rt(fields);
    ASSERT_EQ((*plan)->decode(full_value, *rt.w), std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    ASSERT_EQ(
        (*plan)->decode(R"( {"id": -1, "items": [], "attrs": {}, "ref": 5, "mixed": "m"} )", *rt.w),
        std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    auto values = [&](std::string_view p) {
        return cols[rt.col(fmt::format("data.{}", p))].values;
    };
    auto defs = [&](std::string_view p) { return cols[rt.col(fmt::format("data.{}", p))].def; };
    EXPECT_EQ(values("id"),
              (std::vector<std::string>{le64(8), le64(-1)})); // a key twice: the last wins
    EXPECT_EQ(values("customer.name"), (std::vector<std::string>{"na\xc3\xafve \xf0\x9f\x98\x80"}));
    EXPECT_EQ(defs("customer.name"), (std::vector<int16_t>{3, 1}));
    EXPECT_EQ(values("customer.address.country"), (std::vector<std::string>{"JP"}));
    EXPECT_EQ(defs("customer.address.city"), (std::vector<int16_t>{3, 1}));
    EXPECT_EQ(values("items.list.element.sku"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(defs("items.list.element.qty"), (std::vector<int16_t>{5, 4, 2}));
    EXPECT_EQ(values("items.list.element.qty"), (std::vector<std::string>{le64(2)}));
    EXPECT_EQ(values("attrs.key_value.key"), (std::vector<std::string>{"k", "k2"}));
    EXPECT_EQ(cols[rt.col("data.attrs.key_value.key")].rep, (std::vector<int16_t>{0, 1, 0}));
    double amount = 12.5;
    EXPECT_EQ(values("amount"),
              (std::vector<std::string>{std::string(reinterpret_cast<const char*>(&amount), 8)}));
    // 2024-01-02T02:04:05.123456Z
    EXPECT_EQ(values("ts"),
              (std::vector<std::string>{le64(int64_t{1704161045} * 1000000 + 123456)}));
    EXPECT_EQ(values("day"), (std::vector<std::string>{le32(19782)}));
    EXPECT_EQ(values("at"), (std::vector<std::string>{le64(int64_t{86399} * 1000000 + 500000)}));
    EXPECT_EQ(values("uid")[0],
              std::string("\x0f\x8f\xad\x5b\xd9\xcb\x46\x9f\xa1\x65\x70\x86\x77\x28\x95\x0e", 16));
    EXPECT_EQ(values("status"), (std::vector<std::string>{"PAID"}));
    EXPECT_EQ(defs("note"), (std::vector<int16_t>{1, 1}));
    EXPECT_EQ(values("ref.string"), (std::vector<std::string>{"R-9"}));
    EXPECT_EQ(values("ref.integer"), (std::vector<std::string>{le64(5)}));
    EXPECT_EQ(defs("ref.integer"), (std::vector<int16_t>{2, 3}));
    double two_hundred = 200;
    EXPECT_EQ(
        values("mixed.number"),
        (std::vector<std::string>{std::string(reinterpret_cast<const char*>(&two_hundred), 8)}));
    EXPECT_EQ(values("mixed.string"), (std::vector<std::string>{"m"}));
    EXPECT_EQ(values("paid"), (std::vector<std::string>{std::string(1, '\1')}));
    EXPECT_EQ(values("extra"),
              (std::vector<std::string>{R"({"any": [1, "two"]})"})); // the JSON text as written
}

TEST(typed_rows_json, bad_values_write_nothing) {
    auto s = parse(order_json_schema);
    auto fields = data_of(*s);
    auto plan = *json_row_plan::make_in_column(*s, fields[0], 0);
    roundtrip rt(fields);
    auto expect_bad = [&](std::string_view v, std::string_view part) {
        auto err = plan->decode(v, *rt.w);
        ASSERT_TRUE(err) << "accepted: " << v;
        EXPECT_NE(err->find(part), std::string::npos) << *err;
        for (size_t c = 0; c < rt.w->num_columns(); ++c)
            EXPECT_EQ(rt.w->column(c).chunk_rows(), 0);
    };
    // Every truncation of a good value.
    for (size_t n = 0; n < full_value.size(); ++n)
        expect_bad(full_value.substr(0, n), "");
    expect_bad(R"({"id":"7"})", "field `id`: expected integer, got string");
    expect_bad(R"({"id":1.5})", "field `id`: expected integer, got 1.5");
    expect_bad(R"({"id":99999999999999999999})", "out of range");
    expect_bad(R"({"customer":{}})", "required property is absent");
    expect_bad(R"({"id":1,"customer":null})",
               "field `customer`: null where the schema does not allow it");
    expect_bad(R"({"id":1,"items":[{"qty":1}]})",
               "field `items.element.sku`: required property is absent");
    expect_bad(R"({"id":1,"status":"LOST"})", "not one of the enum's values");
    expect_bad(R"({"id":1,"day":"2023-02-29"})", "is not a date");
    expect_bad(R"({"id":1,"ts":"2024-01-02T03:04:05"})", "RFC 3339");
    expect_bad(R"({"id":1,"uid":"nope"})", "uuid");
    expect_bad(R"({"id":1,"attrs":{"k":"a","k":"b"}})", "field `attrs`: a map key appears twice");
    expect_bad(R"({"id":1,"ref":true})",
               "field `ref`: a boolean fits none of the union's branches");
    expect_bad(R"({"id":1,"customer":{"name":"\ud800"}})", "surrogate");
    expect_bad("{\"id\":1,\"customer\":{\"name\":\"\xc3\x28\"}}", "UTF-8");
    expect_bad(R"({"id":1} x)", "bytes left after the JSON value");
    expect_bad(R"([1])", "expected object, got array");
    expect_bad("null", "null where the schema does not allow it");
    std::string deep =
        R"({"id":1,"unknown":)" + std::string(300, '[') + std::string(300, ']') + "}";
    expect_bad(deep, "nested too deep");
    auto cols = rt.finish();
    EXPECT_TRUE(cols[rt.col("data.id")].def.empty());
}

} // namespace
} // namespace floe::lake
