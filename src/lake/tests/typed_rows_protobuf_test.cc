// Protobuf values into typed columns. Values are encoded here by hand from the encoding spec
// (varints, zigzag, tags, packed fields); the DuckDB check (tests/js/lake/typed_formats.mjs)
// uses protobufjs, an independent encoder.
#include "lake/typed_rows_protobuf.h"

#include "lake/tests/roundtrip.h"
#include "schema/iceberg_mapping.h"
#include "schema/protobuf_mapping.h"
#include "schema/protobuf_schema.h"

#include <gtest/gtest.h>

namespace floe::lake {
namespace {

/// A Protobuf encoder from the spec: tag = number << 3 | wire type.
struct pb {
    std::string b;
    std::vector<size_t> boundaries; // where each top-level field ends (a valid prefix)
    pb& raw_varint(uint64_t v) {
        while (v >= 0x80) {
            b.push_back(static_cast<char>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        b.push_back(static_cast<char>(v));
        return *this;
    }
    pb& mark() {
        boundaries.push_back(b.size());
        return *this;
    }
    pb& tag(int n, int wt) {
        return raw_varint((static_cast<uint64_t>(n) << 3) | static_cast<uint64_t>(wt));
    }
    pb& v(int n, uint64_t x) { return tag(n, 0).raw_varint(x).mark(); }
    pb& vs(int n, int64_t x) {
        return v(n, static_cast<uint64_t>(x));
    } // int32/int64: sign-extended
    pb& zz(int n, int64_t x) {
        return v(n, (static_cast<uint64_t>(x) << 1) ^ static_cast<uint64_t>(x >> 63));
    }
    pb& s(int n, std::string_view x) {
        tag(n, 2).raw_varint(x.size());
        b.append(x);
        return mark();
    }
    pb& m(int n, const pb& x) { return s(n, x.b); }
    pb& f32(int n, uint32_t x) {
        tag(n, 5);
        b.append(reinterpret_cast<const char*>(&x), 4);
        return mark();
    }
    pb& f64(int n, uint64_t x) {
        tag(n, 1);
        b.append(reinterpret_cast<const char*>(&x), 8);
        return mark();
    }
};

constexpr std::string_view order_proto = R"(syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message Order {
  int64 id = 1;
  Customer customer = 2;
  repeated Item items = 3;
  map<string, string> attrs = 4;
  google.protobuf.Timestamp ts = 5;
  Status status = 6;
  optional string note = 7;
  oneof ref { int64 ref_id = 8; string ref_code = 9; }
  google.protobuf.Int64Value qty_hint = 10;
  google.protobuf.Duration ttl = 11;
  uint64 big = 12;
  sint32 delta = 13;
  fixed64 f64 = 14;
  sfixed32 sf32 = 15;
  float ratio = 16;
  double price = 17;
  bool paid = 18;
  bytes blob = 19;
  uint32 u32 = 20;
  repeated int32 nums = 21;
  map<int32, Item> by_pos = 22;
  message Customer { string name = 1; Address address = 2; }
  message Address { string country = 1; string city = 2; }
  message Item { string sku = 1; int32 qty = 2; }
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
}
message Other { string s = 1; }
)";

std::shared_ptr<const schema::protobuf_schema> compile(std::string_view text) {
    auto s = schema::protobuf_schema::parse(text);
    EXPECT_TRUE(s) << s.error().message();
    return s ? *s : nullptr;
}

std::vector<iceberg::nested_field> columns_of(const google::protobuf::Descriptor& d) {
    auto f = schema::protobuf_to_iceberg(d);
    EXPECT_TRUE(f) << f.error().message();
    int32_t last = 0;
    schema::assign_ids(*f, nullptr, last);
    return *f;
}

std::string be9(uint64_t v) { // decimal(20,0) as FIXED[9], big-endian
    std::string out(9, '\0');
    for (int i = 0; i < 8; ++i)
        out[static_cast<size_t>(8 - i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

/// The full order of test 1, with repeats, merges, packed and unpacked numbers, unknown fields.
pb full_order() {
    pb item_a, item_b, ts, hint, ttl, cust1, cust2, addr, entry, pos_item, pos_entry;
    item_a.s(1, "a").v(2, 2);
    item_b.s(1, "b").vs(2, -3);
    ts.v(1, 1700000000).v(2, 123456789);
    hint.v(1, 5);
    ttl.v(1, 1).v(2, 500000000);
    cust1.s(1, "ann");
    addr.s(1, "JP");
    cust2.m(2, addr);
    entry.s(1, "k").s(2, "v");
    pos_item.s(1, "x");
    pos_entry.v(1, 7).m(2, pos_item);
    pb packed;
    packed.raw_varint(1).raw_varint(static_cast<uint64_t>(int64_t{-2})).raw_varint(3);
    pb o;
    o.v(1, 5)        // id, later overwritten (last wins)
        .m(2, cust1) // customer, merged with the second occurrence below
        .m(3, item_a)
        .v(99, 12345) // unknown varint
        .m(4, entry)
        .m(5, ts)
        .v(6, 1) // status PAID
        .s(7, "n")
        .v(8, 42) // ref_id, then ref_code wins
        .m(10, hint)
        .m(11, ttl)
        .v(12, UINT64_MAX)
        .zz(13, -3)
        .f64(14, uint64_t{1} << 63)
        .f32(15, static_cast<uint32_t>(-7))
        .f32(16, std::bit_cast<uint32_t>(0.5f))
        .f64(17, std::bit_cast<uint64_t>(-2.25))
        .v(18, 1)
        .s(19, std::string("\0\xff", 2))
        .v(20, 4000000000u)
        .s(21, packed.b)   // packed [1, -2, 3]
        .m(3, item_b)      // items interleaved with other fields
        .v(21, 4)          // and one more unpacked
        .s(100, "skip me") // unknown length-delimited
        .m(22, pos_entry)
        .s(9, "R-9")
        .m(2, cust2)
        .v(1, 1);
    // An unknown group (wire types 3 and 4) with a nested field.
    o.tag(101, 3).tag(1, 0).raw_varint(9).tag(101, 4).mark();
    return o;
}

TEST(typed_rows_protobuf, mapping_of_every_type) {
    auto s = compile(order_proto);
    auto f = schema::protobuf_to_iceberg(*s->message_at({}));
    ASSERT_TRUE(f) << f.error().message();
    std::vector<std::string> got;
    for (auto& x : *f)
        got.push_back(x.name + ":" + schema::describe(*x.field_type));
    EXPECT_EQ(got, (std::vector<std::string>{"id:long",
                                             "customer:struct",
                                             "items:list<struct>",
                                             "attrs:map<string, string>",
                                             "ts:timestamptz",
                                             "status:string",
                                             "note:string",
                                             "ref:struct",
                                             "qty_hint:long",
                                             "ttl:long",
                                             "big:decimal(20, 0)",
                                             "delta:int",
                                             "f64:decimal(20, 0)",
                                             "sf32:int",
                                             "ratio:float",
                                             "price:double",
                                             "paid:boolean",
                                             "blob:binary",
                                             "u32:long",
                                             "nums:list<int>",
                                             "by_pos:map<int, struct>"}));
    auto& ref = (*f)[7].field_type->fields;
    ASSERT_EQ(ref.size(), 2u);
    EXPECT_EQ(ref[0].name, "ref_id");
    EXPECT_EQ(ref[1].name, "ref_code");
    for (auto& x : *f)
        EXPECT_FALSE(x.required) << x.name;

    auto rec = compile("syntax = \"proto3\"; message N { string v = 1; N next = 2; }");
    auto r = schema::protobuf_to_iceberg(*rec->message_at({}));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("recursive"), std::string::npos) << r.error().message();
    auto st = compile("syntax = \"proto3\"; import \"google/protobuf/struct.proto\"; message S { "
                      "google.protobuf.Struct s = 1; }");
    EXPECT_FALSE(schema::protobuf_to_iceberg(*st->message_at({}))); // Struct/Value are recursive
    auto grp = compile(
        "syntax = \"proto2\"; message G { optional group Inner = 1 { optional int32 a = 2; } }");
    auto g = schema::protobuf_to_iceberg(*grp->message_at({}));
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::unsupported);
    // A message with no fields has no column; proto3 `optional` is a plain optional field.
    auto e = compile("syntax = \"proto3\"; import \"google/protobuf/empty.proto\"; message E { "
                     "google.protobuf.Empty e = 1; optional int32 x = 2; }");
    auto ef = schema::protobuf_to_iceberg(*e->message_at({}));
    ASSERT_TRUE(ef);
    ASSERT_EQ(ef->size(), 1u);
    EXPECT_EQ((*ef)[0].name, "x");
}

TEST(typed_rows_protobuf, message_indexes) {
    const std::string v1("\x00rest", 5), v2("\x04\x02\x00p", 4); // payloads are views into them
    auto one = parse_message_indexes(v1);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->indexes, (std::vector<int>{0}));
    EXPECT_EQ(one->payload, "rest");
    auto two = parse_message_indexes(v2); // count 2: [1, 0]
    ASSERT_TRUE(two);
    EXPECT_EQ(two->indexes, (std::vector<int>{1, 0}));
    EXPECT_EQ(two->payload, "p");
    EXPECT_FALSE(parse_message_indexes(""));
    EXPECT_FALSE(parse_message_indexes("\x01"));     // count -1
    EXPECT_FALSE(parse_message_indexes("\x02"));     // count 1, index cut
    EXPECT_FALSE(parse_message_indexes("\x02\x01")); // index -1
    EXPECT_FALSE(parse_message_indexes("\x82\x01")); // count 65
}

TEST(typed_rows_protobuf, decodes_every_type_with_levels) {
    auto s = compile(order_proto);
    auto fields = columns_of(*s->message_at({}));
    auto plan = protobuf_row_plan::make(*s->message_at({}), fields, 0);
    ASSERT_TRUE(plan) << plan.error().detail;
    roundtrip rt(fields);
    pb full = full_order();
    ASSERT_EQ((*plan)->decode(full.b, *rt.w), std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    ASSERT_EQ((*plan)->decode("", *rt.w), std::nullopt); // every field absent
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    auto values = [&](std::string_view p) { return cols[rt.col(p)].values; };
    auto defs = [&](std::string_view p) { return cols[rt.col(p)].def; };

    EXPECT_EQ(values("id"), (std::vector<std::string>{le64(1), le64(0)})); // last wins; default
    EXPECT_EQ(values("customer.name"), (std::vector<std::string>{"ann"})); // merged
    EXPECT_EQ(values("customer.address.country"), (std::vector<std::string>{"JP"}));
    EXPECT_EQ(defs("customer.address.country"), (std::vector<int16_t>{3, 0}));
    EXPECT_EQ(values("customer.address.city"), (std::vector<std::string>{""})); // proto3 default
    EXPECT_EQ(values("items.list.element.sku"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(defs("items.list.element.sku"), (std::vector<int16_t>{4, 4, 1}));
    EXPECT_EQ(cols[rt.col("items.list.element.sku")].rep, (std::vector<int16_t>{0, 1, 0}));
    EXPECT_EQ(values("items.list.element.qty"), (std::vector<std::string>{le32(2), le32(-3)}));
    EXPECT_EQ(values("attrs.key_value.key"), (std::vector<std::string>{"k"}));
    EXPECT_EQ(values("attrs.key_value.value"), (std::vector<std::string>{"v"}));
    EXPECT_EQ(defs("attrs.key_value.key"), (std::vector<int16_t>{2, 1}));
    EXPECT_EQ(values("ts"),
              (std::vector<std::string>{le64(int64_t{1700000000} * 1000000 + 123456)}));
    EXPECT_EQ(defs("ts"), (std::vector<int16_t>{1, 0}));
    EXPECT_EQ(values("status"), (std::vector<std::string>{"PAID", "NEW"}));
    EXPECT_EQ(values("note"), (std::vector<std::string>{"n"}));
    EXPECT_EQ(defs("note"), (std::vector<int16_t>{1, 0}));
    EXPECT_EQ(defs("ref.ref_id"), (std::vector<int16_t>{1, 0})); // the later branch won
    EXPECT_EQ(values("ref.ref_code"), (std::vector<std::string>{"R-9"}));
    EXPECT_EQ(defs("ref.ref_code"), (std::vector<int16_t>{2, 0}));
    EXPECT_EQ(values("qty_hint"), (std::vector<std::string>{le64(5)}));
    EXPECT_EQ(defs("qty_hint"), (std::vector<int16_t>{1, 0}));
    EXPECT_EQ(values("ttl"), (std::vector<std::string>{le64(1500000)}));
    EXPECT_EQ(values("big"), (std::vector<std::string>{be9(UINT64_MAX), be9(0)}));
    EXPECT_EQ(values("delta"), (std::vector<std::string>{le32(-3), le32(0)}));
    EXPECT_EQ(values("f64"), (std::vector<std::string>{be9(uint64_t{1} << 63), be9(0)}));
    EXPECT_EQ(values("sf32"), (std::vector<std::string>{le32(-7), le32(0)}));
    float half = 0.5f;
    EXPECT_EQ(values("ratio")[0], std::string(reinterpret_cast<const char*>(&half), 4));
    double price = -2.25;
    EXPECT_EQ(values("price")[0], std::string(reinterpret_cast<const char*>(&price), 8));
    EXPECT_EQ(values("paid"),
              (std::vector<std::string>{std::string(1, '\1'), std::string(1, '\0')}));
    EXPECT_EQ(values("blob"), (std::vector<std::string>{std::string("\0\xff", 2), ""}));
    EXPECT_EQ(values("u32"), (std::vector<std::string>{le64(4000000000), le64(0)}));
    EXPECT_EQ(values("nums.list.element"),
              (std::vector<std::string>{le32(1), le32(-2), le32(3), le32(4)}));
    EXPECT_EQ(cols[rt.col("nums.list.element")].rep, (std::vector<int16_t>{0, 1, 1, 1, 0}));
    EXPECT_EQ(values("by_pos.key_value.key"), (std::vector<std::string>{le32(7)}));
    EXPECT_EQ(values("by_pos.key_value.value.sku"), (std::vector<std::string>{"x"}));
    EXPECT_EQ(values("by_pos.key_value.value.qty"), (std::vector<std::string>{le32(0)}));
}

TEST(typed_rows_protobuf, every_truncation_is_a_dead_letter_or_a_whole_prefix) {
    auto s = compile(order_proto);
    auto fields = columns_of(*s->message_at({}));
    auto plan = *protobuf_row_plan::make(*s->message_at({}), fields, 0);
    roundtrip rt(fields);
    pb full = full_order();
    size_t rows = 0, refused = 0;
    for (size_t n = 0; n < full.b.size(); ++n) {
        bool boundary = n == 0
                        || std::find(full.boundaries.begin(), full.boundaries.end(), n)
                               != full.boundaries.end();
        auto err = plan->decode(std::string_view(full.b).substr(0, n), *rt.w);
        // At a field boundary the bytes are a shorter, valid message (Protobuf has no end
        // marker); anywhere inside a field they cannot parse.
        if (boundary)
            EXPECT_EQ(err, std::nullopt) << "prefix " << n;
        else
            EXPECT_NE(err, std::nullopt)
                << "prefix " << n << " of " << full.b.size() << " was accepted";
        if (err) {
            ++refused;
        } else {
            ASSERT_TRUE(rt.w->end_row());
            ++rows;
        }
        for (size_t c = 0; c < rt.w->num_columns(); ++c)
            ASSERT_EQ(static_cast<size_t>(rt.w->column(c).chunk_rows()), rows)
                << "column " << c << " prefix " << n;
    }
    EXPECT_GT(refused, full.b.size() / 2);
    auto cols = rt.finish();
    EXPECT_EQ(cols[rt.col("id")].def.size(), rows);
}

TEST(typed_rows_protobuf, bad_values_write_nothing) {
    auto s = compile(order_proto);
    auto fields = columns_of(*s->message_at({}));
    auto plan = *protobuf_row_plan::make(*s->message_at({}), fields, 0);
    roundtrip rt(fields);
    auto expect_bad = [&](const pb& v, std::string_view part) {
        auto err = plan->decode(v.b, *rt.w);
        ASSERT_TRUE(err) << "accepted: " << part;
        EXPECT_NE(err->find(part), std::string::npos) << *err;
        for (size_t c = 0; c < rt.w->num_columns(); ++c)
            EXPECT_EQ(rt.w->column(c).chunk_rows(), 0);
    };
    expect_bad(pb{}.s(1, "x"), "field `id`: wire type 2, not 0");
    expect_bad(pb{}.s(9, "\xc3\x28"), "field `ref.ref_code`: string is not valid UTF-8");
    pb bad_ts;
    bad_ts.v(1, static_cast<uint64_t>(int64_t{253402300800}));
    expect_bad(pb{}.m(5, bad_ts), "Timestamp seconds");
    pb bad_nanos;
    bad_nanos.v(2, 1000000000);
    expect_bad(pb{}.m(5, bad_nanos), "Timestamp nanos");
    pb e1, e2;
    e1.s(1, "k").s(2, "a");
    e2.s(1, "k").s(2, "b");
    expect_bad(pb{}.m(4, e1).m(4, e2), "field `attrs`: a map key appears twice");
    pb zero;
    zero.tag(0, 0).raw_varint(1);
    expect_bad(zero, "field number 0");
    pb wt7;
    wt7.tag(1, 7);
    expect_bad(wt7, "wire type 7");
    pb group_mismatch;
    group_mismatch.tag(50, 3).tag(51, 4);
    expect_bad(group_mismatch, "group 50 ended by end-group 51");
    pb stray_end;
    stray_end.tag(50, 4);
    expect_bad(stray_end, "end-group 50 without a start");
    pb long_len;
    long_len.tag(19, 2).raw_varint(1000).b += "xy";
    expect_bad(long_len, "length 1000 with 2 bytes left");
    pb deep; // a message nested 200 levels in unknown groups
    for (int i = 0; i < 200; ++i)
        deep.tag(50, 3);
    expect_bad(deep, "groups nested too deep");
    pb varint11;
    varint11.tag(1, 0).b += std::string(11, '\xff');
    expect_bad(varint11, "varint");

    // An enum number the schema does not declare is kept as its number.
    ASSERT_EQ(plan->decode(pb{}.v(6, 7).b, *rt.w), std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    EXPECT_EQ(cols[rt.col("status")].values, (std::vector<std::string>{"7"}));
}

TEST(typed_rows_protobuf, proto2_presence_and_required) {
    auto s = compile(R"(syntax = "proto2";
message P { required int32 a = 1; optional int32 b = 2 [default = 9]; optional string c = 3; repeated int32 r = 4 [packed = true]; })");
    auto fields = columns_of(*s->message_at({}));
    auto plan = *protobuf_row_plan::make(*s->message_at({}), fields, 0);
    roundtrip rt(fields);
    auto err = plan->decode(pb{}.v(2, 1).b, *rt.w);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("field `a`: required field is absent"), std::string::npos) << *err;
    // Packed and unpacked elements of one field mixed, in order.
    pb v;
    v.v(1, 3).v(4, 10);
    pb packed;
    packed.raw_varint(11).raw_varint(12);
    v.s(4, packed.b).v(4, 13);
    ASSERT_EQ(plan->decode(v.b, *rt.w), std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    EXPECT_EQ(cols[rt.col("a")].values, (std::vector<std::string>{le32(3)}));
    EXPECT_EQ(cols[rt.col("b")].def, (std::vector<int16_t>{0})); // presence: absent is null
    EXPECT_EQ(cols[rt.col("c")].def, (std::vector<int16_t>{0}));
    EXPECT_EQ(cols[rt.col("r.list.element")].values,
              (std::vector<std::string>{le32(10), le32(11), le32(12), le32(13)}));
}

TEST(typed_rows_protobuf, widened_columns_and_incompatible_types) {
    // v1: int32 qty, float r; the table was evolved to long and double by another version.
    auto v1 =
        compile("syntax = \"proto3\"; message M { int32 qty = 1; float r = 2; string s = 3; }");
    auto v2 = compile("syntax = \"proto3\"; message M { int64 qty = 1; double r = 2; string s = 3; "
                      "string added = 4; }");
    iceberg::schema table;
    table.fields = columns_of(*v1->message_at({}));
    auto e = schema::evolve(table, *schema::protobuf_to_iceberg(*v2->message_at({})));
    ASSERT_EQ(e.outcome, schema::evolution::kind::updated) << e.reason;
    auto plan = protobuf_row_plan::make(*v1->message_at({}), e.schema.fields, 0);
    ASSERT_TRUE(plan) << plan.error().detail;
    roundtrip rt(e.schema.fields);
    ASSERT_EQ((*plan)->decode(pb{}.vs(1, -5).f32(2, std::bit_cast<uint32_t>(1.5f)).b, *rt.w),
              std::nullopt);
    ASSERT_TRUE(rt.w->end_row());
    auto cols = rt.finish();
    EXPECT_EQ(cols[rt.col("qty")].values, (std::vector<std::string>{le64(-5)}));
    double r = 1.5;
    EXPECT_EQ(cols[rt.col("r")].values,
              (std::vector<std::string>{std::string(reinterpret_cast<const char*>(&r), 8)}));
    EXPECT_EQ(cols[rt.col("added")].def, (std::vector<int16_t>{0}));
    EXPECT_EQ(cols[rt.col("s")].values, (std::vector<std::string>{""}));

    // string -> int is not a promotion.
    auto v3 = compile("syntax = \"proto3\"; message M { int32 s = 3; }");
    auto bad = protobuf_row_plan::make(*v3->message_at({}), e.schema.fields, 0);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().reason, decode_reason::incompatible_schema);
    EXPECT_EQ(bad.error().detail, "field `s`: int -> string");
    auto ev = schema::evolve(e.schema, *schema::protobuf_to_iceberg(*v3->message_at({})));
    EXPECT_EQ(ev.outcome, schema::evolution::kind::incompatible);
    // A renamed field (same number) is a new column, by name path.
    auto renamed = compile("syntax = \"proto3\"; message M { int64 quantity = 1; }");
    auto er = schema::evolve(e.schema, *schema::protobuf_to_iceberg(*renamed->message_at({})));
    ASSERT_EQ(er.outcome, schema::evolution::kind::updated);
    EXPECT_NE(er.schema.find("quantity"), nullptr);
    EXPECT_NE(er.schema.find("qty"), nullptr);
}

} // namespace
} // namespace floe::lake
