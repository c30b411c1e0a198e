#include "lake/typed_rows.h"

#include "format/parquet/reader.h"
#include "format/parquet/tests/typed_rows.h"
#include "lake/tests/roundtrip.h"
#include "schema/iceberg_mapping.h"
#include "schema/parsed_schema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

namespace floe::lake {
namespace {

using parquet::testing::column_entries;

// A minimal Avro binary encoder for the tests (the DuckDB test uses avsc, an independent one).
struct enc {
    std::string b;
    enc& l(int64_t v) {
        uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
        while (z >= 0x80) {
            b.push_back(static_cast<char>((z & 0x7F) | 0x80));
            z >>= 7;
        }
        b.push_back(static_cast<char>(z));
        return *this;
    }
    enc& s(std::string_view v) {
        l(static_cast<int64_t>(v.size()));
        b.append(v);
        return *this;
    }
    enc& raw(std::string_view v) {
        b.append(v);
        return *this;
    }
    enc& f32(float f) {
        b.append(reinterpret_cast<const char*>(&f), 4);
        return *this;
    }
    enc& f64(double f) {
        b.append(reinterpret_cast<const char*>(&f), 8);
        return *this;
    }
    enc& boolean(bool v) {
        b.push_back(v ? 1 : 0);
        return *this;
    }
};

std::string framed(int32_t id, const std::string& payload) {
    std::string out(1, '\0');
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((id >> (8 * i)) & 0xFF));
    return out + payload;
}

class map_registry final : public schema::registry_client {
public:
    void add(int32_t id, schema::schema_type t, std::string_view text) {
        auto p = schema::parsed_schema::parse(t, text);
        ASSERT_TRUE(p) << p.error().message();
        _by_id[id] = *p;
    }
    result<std::shared_ptr<const schema::parsed_schema>> get_by_id(int32_t id) override {
        ++lookups;
        auto it = _by_id.find(id);
        if (it == _by_id.end()) return fail(errc::not_found, "no schema {}", id);
        return it->second;
    }
    result<subject_version> latest(std::string_view) override { return fail(errc::not_found, "none"); }
    int lookups = 0;

private:
    std::map<int32_t, std::shared_ptr<const schema::parsed_schema>> _by_id;
};

std::vector<iceberg::nested_field> fields_of(std::string_view avro) {
    auto s = schema::avro_schema::parse(avro);
    EXPECT_TRUE(s) << s.error().message();
    auto f = schema::avro_to_iceberg(**s);
    EXPECT_TRUE(f) << f.error().message();
    int32_t last = 0;
    schema::assign_ids(*f, nullptr, last);
    return *f;
}

TEST(typed_rows, confluent_header) {
    std::string v = framed(258, "xy"); // the payload is a view into it
    auto ok = parse_confluent(v);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->schema_id, 258);
    EXPECT_EQ(ok->payload, "xy");
    auto magic = parse_confluent(std::string("\x01\x00\x00\x00\x01", 5));
    ASSERT_FALSE(magic);
    EXPECT_EQ(magic.error().reason, decode_reason::bad_magic_byte);
    EXPECT_EQ(magic.error().detail, "magic byte 0x01, expected 0x00");
    EXPECT_EQ(parse_confluent("").error().reason, decode_reason::bad_magic_byte);
    EXPECT_EQ(parse_confluent(std::string("\0\0\1", 3)).error().reason, decode_reason::decode_error);
}

TEST(typed_rows, parquet_schema_of_every_type) {
    auto fields = fields_of(R"({"type":"record","name":"R","fields":[
      {"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"f","type":"float"},{"name":"d","type":"double"},
      {"name":"d9","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
      {"name":"d18","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}},
      {"name":"d38","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":10}},
      {"name":"dt","type":{"type":"int","logicalType":"date"}},
      {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
      {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
      {"name":"lts","type":{"type":"long","logicalType":"local-timestamp-micros"}},
      {"name":"u","type":{"type":"string","logicalType":"uuid"}},
      {"name":"fx","type":{"type":"fixed","name":"F3","size":3}},
      {"name":"by","type":"bytes"},
      {"name":"m","type":{"type":"map","values":{"type":"array","items":"string"}}}]})");
    auto s = parquet::schema::make(parquet::group_node("t", std::nullopt, parquet::repetition::required, parquet_nodes(fields)));
    ASSERT_TRUE(s) << s.error().message();
    using pt = parquet::physical_type;
    using lt = parquet::logical_type;
    struct want {
        std::string path;
        pt type;
        lt logical;
        int16_t def, rep;
    };
    std::vector<want> w = {
        {"b", pt::boolean, lt::none, 1, 0},
        {"i", pt::int32, lt::none, 1, 0},
        {"f", pt::float_, lt::none, 1, 0},
        {"d", pt::double_, lt::none, 1, 0},
        {"d9", pt::int32, lt::decimal, 1, 0},
        {"d18", pt::int64, lt::decimal, 1, 0},
        {"d38", pt::fixed_len_byte_array, lt::decimal, 1, 0},
        {"dt", pt::int32, lt::date, 1, 0},
        {"tm", pt::int64, lt::time_micros, 1, 0},
        {"ts", pt::int64, lt::timestamp_micros, 1, 0},
        {"lts", pt::int64, lt::timestamp_micros, 1, 0},
        {"u", pt::fixed_len_byte_array, lt::uuid, 1, 0},
        {"fx", pt::fixed_len_byte_array, lt::none, 1, 0},
        {"by", pt::byte_array, lt::none, 1, 0},
        {"m.key_value.key", pt::byte_array, lt::string, 2, 1},
        {"m.key_value.value.list.element", pt::byte_array, lt::string, 5, 2},
    };
    ASSERT_EQ(s->columns().size(), w.size());
    for (size_t i = 0; i < w.size(); ++i) {
        auto& c = s->columns()[i];
        EXPECT_EQ(c.dotted_path(), w[i].path);
        EXPECT_EQ(c.type, w[i].type) << w[i].path;
        EXPECT_EQ(c.logical, w[i].logical) << w[i].path;
        EXPECT_EQ(c.max_def, w[i].def) << w[i].path;
        EXPECT_EQ(c.max_rep, w[i].rep) << w[i].path;
        EXPECT_TRUE(c.field_id.has_value()) << w[i].path;
    }
    EXPECT_EQ(s->columns()[8].utc, false);  // time
    EXPECT_EQ(s->columns()[9].utc, true);   // timestamptz
    EXPECT_EQ(s->columns()[10].utc, false); // timestamp
    EXPECT_EQ(s->columns()[6].type_length, 16);
    EXPECT_EQ(s->columns()[6].scale, 10);
    // Every group node carries its id too (list element / map key, value included).
    auto& m = s->root().children.back();
    EXPECT_TRUE(m.field_id);
    EXPECT_TRUE(m.children[0].children[1].field_id); // value (the list)
    EXPECT_TRUE(m.children[0].children[1].children[0].children[0].field_id); // element
}

constexpr std::string_view order_schema = R"({"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"customer","type":{"type":"record","name":"Customer","fields":[
    {"name":"name","type":"string"},{"name":"vip","type":"boolean"}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
  {"name":"attrs","type":{"type":"map","values":"string"}},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
  {"name":"note","type":["null","string"],"default":null},
  {"name":"ref","type":["long","string"]},
  {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
  {"name":"ratio","type":"float"}
]})";

std::string order(int64_t id, std::string_view name, bool vip, std::vector<std::pair<std::string, int>> items,
                  std::vector<std::pair<std::string, std::string>> attrs, std::string amount_be, int64_t ts,
                  int status, std::optional<std::string> note, std::variant<int64_t, std::string> ref,
                  std::string_view uid, float ratio) {
    enc e;
    e.l(id).s(name).boolean(vip);
    if (!items.empty()) {
        e.l(static_cast<int64_t>(items.size()));
        for (auto& [s, q] : items) e.s(s).l(q);
    }
    e.l(0);
    if (!attrs.empty()) {
        // a block with a byte size (negative count), as some encoders write
        enc body;
        for (auto& [k, v] : attrs) body.s(k).s(v);
        e.l(-static_cast<int64_t>(attrs.size())).l(static_cast<int64_t>(body.b.size())).raw(body.b);
    }
    e.l(0);
    e.s(amount_be).l(ts).l(status);
    if (note)
        e.l(1).s(*note);
    else
        e.l(0);
    if (ref.index() == 0)
        e.l(0).l(std::get<0>(ref));
    else
        e.l(1).s(std::get<1>(ref));
    e.s(uid).f32(ratio);
    return e.b;
}

TEST(typed_rows, decodes_nested_record_with_levels) {
    map_registry reg;
    reg.add(7, schema::schema_type::avro, order_schema);
    auto fields = fields_of(order_schema);
    roundtrip rt(fields);
    typed_decoder dec(reg, fields, 0);
    std::vector<std::string> values = {
        order(1, "ann", true, {{"a", 2}, {"b", 3}}, {{"k", "v"}}, std::string("\x30\x39", 2) /*12345*/, 1700000000123,
              1, std::nullopt, int64_t{42}, "0f8fad5b-d9cb-469f-a165-70867728950e", 0.5f),
        order(2, "bob", false, {}, {}, std::string("\xff\x38", 2) /*-200*/, -1, 2, std::string("fragile"),
              std::string("R-9"), "00000000-0000-0000-0000-000000000001", -1.25f),
    };
    for (auto& v : values) {
        auto st = dec.decode(framed(7, v), *rt.w);
        ASSERT_TRUE(st);
        ASSERT_TRUE(st->ok()) << st->failure->detail;
        EXPECT_EQ(st->schema_id, 7);
        ASSERT_TRUE(rt.w->end_row());
    }
    EXPECT_EQ(reg.lookups, 1); // the plan is cached by id
    auto cols = rt.finish();

    auto& sku = cols[rt.col("items.list.element.sku")];
    EXPECT_EQ(sku.def, (std::vector<int16_t>{4, 4, 1})); // two items, then an empty list
    EXPECT_EQ(sku.rep, (std::vector<int16_t>{0, 1, 0}));
    EXPECT_EQ(sku.values, (std::vector<std::string>{"a", "b"}));
    auto& qty = cols[rt.col("items.list.element.qty")];
    EXPECT_EQ(qty.values, (std::vector<std::string>{le32(2), le32(3)}));
    auto& key = cols[rt.col("attrs.key_value.key")];
    EXPECT_EQ(key.def, (std::vector<int16_t>{2, 1}));
    EXPECT_EQ(key.values, (std::vector<std::string>{"k"}));
    EXPECT_EQ(cols[rt.col("amount")].values, (std::vector<std::string>{le32(12345), le32(-200)}));
    EXPECT_EQ(cols[rt.col("ts")].values, (std::vector<std::string>{le64(1700000000123000), le64(-1000)}));
    EXPECT_EQ(cols[rt.col("status")].values, (std::vector<std::string>{"PAID", "SHIPPED"}));
    auto& note = cols[rt.col("note")];
    EXPECT_EQ(note.def, (std::vector<int16_t>{0, 1}));
    EXPECT_EQ(note.values, (std::vector<std::string>{"fragile"}));
    auto& ref_long = cols[rt.col("ref.long")];
    auto& ref_str = cols[rt.col("ref.string")];
    EXPECT_EQ(ref_long.def, (std::vector<int16_t>{2, 1}));
    EXPECT_EQ(ref_str.def, (std::vector<int16_t>{1, 2}));
    EXPECT_EQ(ref_long.values, (std::vector<std::string>{le64(42)}));
    EXPECT_EQ(ref_str.values, (std::vector<std::string>{"R-9"}));
    auto& uid = cols[rt.col("uid")];
    ASSERT_EQ(uid.values.size(), 2u);
    EXPECT_EQ(uid.values[0], std::string("\x0f\x8f\xad\x5b\xd9\xcb\x46\x9f\xa1\x65\x70\x86\x77\x28\x95\x0e", 16));
    float r = -1.25f;
    EXPECT_EQ(cols[rt.col("ratio")].values[1], std::string(reinterpret_cast<const char*>(&r), 4));
    EXPECT_EQ(cols[rt.col("customer.vip")].values, (std::vector<std::string>{std::string(1, '\1'), std::string(1, '\0')}));
}

TEST(typed_rows, bad_records_write_nothing) {
    map_registry reg;
    reg.add(7, schema::schema_type::avro, order_schema);
    reg.add(8, schema::schema_type::json, R"({"type":"object"})");
    auto fields = fields_of(order_schema);
    roundtrip rt(fields);
    typed_decoder dec(reg, fields, 0);
    auto good = order(1, "ann", true, {{"a", 2}}, {{"k", "v"}}, std::string("\x01", 1), 5, 0, std::string("n"),
                      int64_t{1}, "0f8fad5b-d9cb-469f-a165-70867728950e", 1.0f);
    auto expect_fail = [&](const std::string& value, std::string_view reason, std::string_view detail_part) {
        auto st = dec.decode(value, *rt.w);
        ASSERT_TRUE(st);
        ASSERT_FALSE(st->ok()) << "accepted: " << detail_part;
        EXPECT_EQ(st->failure->reason, reason) << st->failure->detail;
        EXPECT_NE(st->failure->detail.find(detail_part), std::string::npos) << st->failure->detail;
        for (size_t c = 0; c < rt.w->num_columns(); ++c)
            EXPECT_EQ(rt.w->column(c).chunk_rows(), 0) << "column " << c << " got part of a bad record";
    };
    // Every truncation of a good record.
    for (size_t n = 0; n < good.size(); ++n)
        expect_fail(framed(7, good.substr(0, n)), decode_reason::decode_error, "");
    expect_fail(framed(7, good + "x"), decode_reason::decode_error, "1 bytes left after the record");
    expect_fail(std::string("\x01\0\0\0\x07", 5) + good, decode_reason::bad_magic_byte, "0x01");
    expect_fail(framed(99, good), decode_reason::unknown_schema_id, "99");
    expect_fail(framed(8, good), decode_reason::decode_error, "only Avro");

    auto bad_enum = order(1, "a", true, {}, {}, "", 5, 3, std::nullopt, int64_t{1}, "0f8fad5b-d9cb-469f-a165-70867728950e", 1);
    expect_fail(framed(7, bad_enum), decode_reason::decode_error, "enum index 3 of 3");
    auto bad_utf8 = order(1, "\xc3\x28", true, {}, {}, "", 5, 0, std::nullopt, int64_t{1}, "0f8fad5b-d9cb-469f-a165-70867728950e", 1);
    expect_fail(framed(7, bad_utf8), decode_reason::decode_error, "UTF-8");
    auto bad_uuid = order(1, "a", true, {}, {}, "", 5, 0, std::nullopt, int64_t{1}, "not-a-uuid", 1);
    expect_fail(framed(7, bad_uuid), decode_reason::decode_error, "uuid");
    auto wide = order(1, "a", true, {}, {}, std::string("\x7f\xff\xff\xff\xff", 5), 5, 0, std::nullopt, int64_t{1},
                      "0f8fad5b-d9cb-469f-a165-70867728950e", 1);
    expect_fail(framed(7, wide), decode_reason::decode_error, "does not fit decimal(9)");
    // A huge array count with no bytes behind it.
    std::string huge = enc{}.l(1).s("a").boolean(true).l(int64_t{1} << 40).b;
    expect_fail(framed(7, huge), decode_reason::decode_error, "entries cannot fit");
    std::string bad_union = enc{}.l(1).s("a").boolean(true).l(0).l(0).s("").l(5).l(0).l(0).l(7).b;
    expect_fail(framed(7, bad_union), decode_reason::decode_error, "union index 7 of 2");
    std::string long_varint(12, '\xff');
    expect_fail(framed(7, long_varint), decode_reason::decode_error, "varint");

    // The good record still decodes after all that.
    auto st = dec.decode(framed(7, good), *rt.w);
    ASSERT_TRUE(st && st->ok());
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    EXPECT_EQ(cols[rt.col("id")].values, (std::vector<std::string>{le64(1)}));
}

TEST(typed_rows, older_and_newer_versions_into_one_table) {
    // The table after evolution: qty promoted to long, price decimal widened, `extra` added,
    // `gone` kept though v2 removed it.
    constexpr std::string_view v1 = R"({"type":"record","name":"R","fields":[
      {"name":"qty","type":"int"},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
      {"name":"gone","type":"string"},{"name":"t","type":{"type":"int","logicalType":"time-millis"}}]})";
    constexpr std::string_view v2 = R"({"type":"record","name":"R","fields":[
      {"name":"qty","type":"long"},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
      {"name":"extra","type":["null","double"]},{"name":"t","type":{"type":"int","logicalType":"time-millis"}}]})";
    constexpr std::string_view bad_scale = R"({"type":"record","name":"R","fields":[
      {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":3}}]})";
    constexpr std::string_view bad_type = R"({"type":"record","name":"R","fields":[{"name":"gone","type":"int"}]})";
    map_registry reg;
    reg.add(1, schema::schema_type::avro, v1);
    reg.add(2, schema::schema_type::avro, v2);
    reg.add(3, schema::schema_type::avro, bad_scale);
    reg.add(4, schema::schema_type::avro, bad_type);
    iceberg::schema table;
    table.fields = fields_of(v1);
    auto e = schema::evolve(table, *schema::avro_to_iceberg(**schema::avro_schema::parse(v2)));
    ASSERT_EQ(e.outcome, schema::evolution::kind::updated) << e.reason;
    roundtrip rt(e.schema.fields);
    typed_decoder dec(reg, e.schema.fields, 0);
    auto row = [&](int32_t id, const std::string& payload) {
        auto st = dec.decode(framed(id, payload), *rt.w);
        ASSERT_TRUE(st);
        ASSERT_TRUE(st->ok()) << st->failure->detail;
        ASSERT_TRUE(rt.w->end_row());
    };
    row(1, enc{}.l(5).s(std::string("\x04\xd2", 2)).s("old").l(1500).b);            // 12.34
    row(2, enc{}.l(int64_t{1} << 40).s(std::string("\xfb\x2e", 2)).l(1).f64(2.5).l(7).b); // -12.34
    dec.write_nulls(*rt.w);
    ASSERT_TRUE(rt.w->end_row());
    auto s3 = dec.decode(framed(3, enc{}.s("\x01").b), *rt.w);
    ASSERT_TRUE(s3);
    ASSERT_FALSE(s3->ok());
    EXPECT_EQ(s3->failure->reason, decode_reason::decode_error);
    EXPECT_NE(s3->failure->detail.find("scale 3"), std::string::npos) << s3->failure->detail;
    auto s4 = dec.decode(framed(4, enc{}.l(1).b), *rt.w);
    ASSERT_TRUE(s4);
    ASSERT_FALSE(s4->ok());
    EXPECT_EQ(s4->failure->reason, decode_reason::incompatible_schema);
    EXPECT_EQ(s4->failure->detail, "field `gone`: int -> string");

    auto cols = rt.finish();
    auto& qty = cols[rt.col("qty")];
    EXPECT_EQ(qty.values, (std::vector<std::string>{le64(5), le64(int64_t{1} << 40)}));
    EXPECT_EQ(qty.def, (std::vector<int16_t>{1, 1, 0}));
    // decimal(20,2): FIXED of 9 bytes, big-endian, sign-extended.
    auto& price = cols[rt.col("price")];
    ASSERT_EQ(price.values.size(), 2u);
    EXPECT_EQ(price.values[0], std::string("\0\0\0\0\0\0\0\x04\xd2", 9));
    EXPECT_EQ(price.values[1], std::string("\xff\xff\xff\xff\xff\xff\xff\xfb\x2e", 9));
    EXPECT_EQ(cols[rt.col("gone")].def, (std::vector<int16_t>{1, 0, 0}));
    EXPECT_EQ(cols[rt.col("extra")].def, (std::vector<int16_t>{0, 1, 0}));
    EXPECT_EQ(cols[rt.col("t")].values, (std::vector<std::string>{le64(1500000), le64(7000)}));
}

} // namespace
} // namespace floe::lake
