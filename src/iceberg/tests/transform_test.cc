#include "iceberg/manifest.h"
#include "iceberg/transform.h"

#include <gtest/gtest.h>

#include <climits>

using namespace floe;
using namespace floe::iceberg;

namespace {

type_ptr t(type_id id) { return type::primitive(id); }

std::string bytes_of(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

transform tr(std::string_view text) { return *transform::parse(text); }

} // namespace

// Iceberg spec, Appendix B: the 32-bit hash of each type's example value.
TEST(transform, appendix_b_hashes) {
    EXPECT_EQ(*iceberg_hash(*t(type_id::int_), avro::datum::int32(34)), 2017239379);
    EXPECT_EQ(*iceberg_hash(*t(type_id::long_), avro::datum::int64(34)), 2017239379);
    auto dec = std::make_shared<type>();
    dec->id = type_id::decimal;
    dec->precision = 9;
    dec->scale = 2;
    // 14.20: unscaled 1420 = 0x058C (also given with a redundant sign byte: hashed minimal).
    EXPECT_EQ(*iceberg_hash(*dec, avro::datum::bytes(bytes_of({0x05, 0x8C}))), -500754589);
    EXPECT_EQ(*iceberg_hash(*dec, avro::datum::bytes(bytes_of({0x00, 0x00, 0x05, 0x8C}))), -500754589);
    EXPECT_EQ(*iceberg_hash(*t(type_id::date), avro::datum::int32(days_from_civil(2017, 11, 16))), -653330422);
    EXPECT_EQ(*iceberg_hash(*t(type_id::time), avro::datum::int64((22 * 3600 + 31 * 60 + 8) * 1'000'000LL)), -662762989);
    const int64_t ts = (int64_t(days_from_civil(2017, 11, 16)) * 86400 + 22 * 3600 + 31 * 60 + 8) * 1'000'000LL;
    EXPECT_EQ(*iceberg_hash(*t(type_id::timestamp), avro::datum::int64(ts)), -2047944441);
    EXPECT_EQ(*iceberg_hash(*t(type_id::timestamptz), avro::datum::int64(ts)), -2047944441); // 14:31:08-08:00
    EXPECT_EQ(*iceberg_hash(*t(type_id::string), avro::datum::string("iceberg")), 1210000089);
    EXPECT_EQ(*iceberg_hash(*t(type_id::uuid), avro::datum::fixed(bytes_of({0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
                                                                             0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7}))),
              1488055340);
    EXPECT_EQ(*iceberg_hash(*t(type_id::binary), avro::datum::bytes(bytes_of({0, 1, 2, 3}))), -188683207);
    auto fx = std::make_shared<type>();
    fx->id = type_id::fixed;
    fx->length = 4;
    EXPECT_EQ(*iceberg_hash(*fx, avro::datum::fixed(bytes_of({0, 1, 2, 3}))), -188683207);
    EXPECT_FALSE(iceberg_hash(*t(type_id::double_), avro::datum::float64(1.0)));
}

TEST(transform, bucket) {
    // (hash & INT_MAX) % N: the spec's bucket[16] of 34 is 3.
    EXPECT_EQ(tr("bucket[16]").apply(*t(type_id::int_), avro::datum::int32(34))->as_int(), 3);
    EXPECT_EQ(tr("bucket[16]").apply(*t(type_id::long_), avro::datum::int64(34))->as_int(), 3);
    // A negative hash: -188683207 & INT_MAX = 1958800441; % 10 = 1.
    EXPECT_EQ(tr("bucket[10]").apply(*t(type_id::binary), avro::datum::bytes(bytes_of({0, 1, 2, 3})))->as_int(),
              (-188683207 & INT_MAX) % 10);
    EXPECT_EQ((-188683207 & INT_MAX) % 10, 1);
    EXPECT_TRUE(tr("bucket[4]").apply(*t(type_id::string), avro::datum::null())->is_null());
    EXPECT_EQ(tr("bucket[16]").result_type(*t(type_id::string)).value()->id, type_id::int_);
    EXPECT_FALSE(tr("bucket[16]").result_type(*t(type_id::boolean)));
}

TEST(transform, time_transforms_of_epoch_and_before) {
    struct time_case {
        int64_t ms;
        int32_t year, month, day, hour;
        const char* day_text;
        const char* hour_text;
    };
    // Floe's message_ts: long milliseconds. Pre-epoch values floor (1969-12-31 is day -1).
    for (auto c : {time_case{0, 0, 0, 0, 0, "1970-01-01", "1970-01-01-00"},
                   time_case{-1, -1, -1, -1, -1, "1969-12-31", "1969-12-31-23"},
                   time_case{1796306700000, 56, 683, 20790, 498974, "2026-12-03", "2026-12-03-14"},
                   time_case{-25201800000, -1, -10, -292, -7001, "1969-03-15", "1969-03-15-07"}}) {
        auto src = *t(type_id::long_);
        auto v = avro::datum::int64(c.ms);
        EXPECT_EQ(tr("year").apply(src, v)->as_int(), c.year) << c.ms;
        EXPECT_EQ(tr("month").apply(src, v)->as_int(), c.month) << c.ms;
        EXPECT_EQ(tr("day").apply(src, v)->as_int(), c.day) << c.ms;
        EXPECT_EQ(tr("hour").apply(src, v)->as_int(), c.hour) << c.ms;
        // The same instant as a timestamp (micros) gives the same values.
        auto us = avro::datum::int64(c.ms * 1000);
        for (auto kind : {type_id::timestamp, type_id::timestamptz}) {
            EXPECT_EQ(tr("day").apply(*t(kind), us)->as_int(), c.day) << c.ms;
            EXPECT_EQ(tr("hour").apply(*t(kind), us)->as_int(), c.hour) << c.ms;
            EXPECT_EQ(tr("month").apply(*t(kind), us)->as_int(), c.month) << c.ms;
            EXPECT_EQ(tr("year").apply(*t(kind), us)->as_int(), c.year) << c.ms;
        }
        EXPECT_EQ(tr("day").human(*t(type_id::date), *tr("day").apply(src, v)), c.day_text);
        EXPECT_EQ(tr("hour").human(*t(type_id::int_), *tr("hour").apply(src, v)), c.hour_text);
    }
    // Dates: day is the date, month and year from it.
    auto d = avro::datum::int32(days_from_civil(1900, 2, 28));
    EXPECT_EQ(d.as_int(), -25509);
    EXPECT_EQ(tr("year").apply(*t(type_id::date), d)->as_int(), -70);
    EXPECT_EQ(tr("month").apply(*t(type_id::date), d)->as_int(), -839);
    EXPECT_EQ(tr("month").human(*t(type_id::int_), avro::datum::int32(-839)), "1900-02");
    EXPECT_EQ(tr("year").human(*t(type_id::int_), avro::datum::int32(56)), "2026");
    EXPECT_EQ(tr("month").human(*t(type_id::int_), avro::datum::int32(683)), "2026-12");
    EXPECT_FALSE(tr("hour").result_type(*t(type_id::date)));
    EXPECT_FALSE(tr("day").result_type(*t(type_id::string)));
    EXPECT_EQ(tr("day").result_type(*t(type_id::long_)).value()->id, type_id::date);
    // civil_from_days round trip over four centuries either side of the epoch.
    for (int64_t z = -146097 * 2; z <= 146097 * 2; z += 997) {
        int32_t y = 0;
        uint32_t m = 0, dd = 0;
        civil_from_days(z, y, m, dd);
        ASSERT_EQ(days_from_civil(y, m, dd), z);
    }
}

TEST(transform, truncate_identity_void) {
    EXPECT_EQ(tr("truncate[10]").apply(*t(type_id::int_), avro::datum::int32(1))->as_int(), 0);
    EXPECT_EQ(tr("truncate[10]").apply(*t(type_id::int_), avro::datum::int32(-1))->as_int(), -10);
    EXPECT_EQ(tr("truncate[10]").apply(*t(type_id::long_), avro::datum::int64(-1))->as_long(), -10);
    EXPECT_EQ(tr("truncate[10]").apply(*t(type_id::long_), avro::datum::int64(109))->as_long(), 100);
    EXPECT_EQ(tr("truncate[3]").apply(*t(type_id::string), avro::datum::string("iceberg"))->as_string(), "ice");
    // Code points, not bytes: "é" is two bytes.
    EXPECT_EQ(tr("truncate[2]").apply(*t(type_id::string), avro::datum::string("\xC3\xA9t\xC3\xA9"))->as_string(),
              "\xC3\xA9t");
    EXPECT_EQ(tr("truncate[2]").apply(*t(type_id::binary), avro::datum::bytes(bytes_of({1, 2, 3})))->as_string(),
              bytes_of({1, 2}));
    EXPECT_EQ(tr("identity").apply(*t(type_id::string), avro::datum::string("orders-0"))->as_string(), "orders-0");
    EXPECT_TRUE(tr("void").apply(*t(type_id::string), avro::datum::string("x"))->is_null());
    EXPECT_EQ(tr("identity").human(*t(type_id::binary), avro::datum::bytes("foo")), "Zm9v");
    EXPECT_EQ(tr("identity").human(*t(type_id::long_), avro::datum::int64(-5)), "-5");
    EXPECT_EQ(tr("void").human(*t(type_id::string), avro::datum::null()), "null");
    EXPECT_EQ(tr("bucket[16]").to_string(), "bucket[16]");
    EXPECT_FALSE(transform::parse("bucket[0]"));
    EXPECT_FALSE(transform::parse("weekly"));
}

TEST(transform, build_spec_from_text_and_evolve) {
    const auto& s = floe_table_schema();
    std::vector<partition_spec> specs{floe_partition_spec()};
    auto terms = *parse_partition_spec_text("day(message_ts), bucket[16](key)");
    auto day = build_partition_spec(s, terms, specs, 1000);
    ASSERT_TRUE(day) << day.error();
    EXPECT_EQ(day->spec_id, 1);
    ASSERT_EQ(day->fields.size(), 2u);
    EXPECT_EQ(day->fields[0].name, "message_ts_day");
    EXPECT_EQ(day->fields[0].source_id, field_ids::message_ts);
    EXPECT_EQ(day->fields[0].field_id, 1001);
    EXPECT_EQ(day->fields[1].name, "key_bucket_16");
    EXPECT_EQ(day->fields[1].transform, "bucket[16]");
    EXPECT_EQ(day->fields[1].field_id, 1002);
    EXPECT_EQ(stream_key_field(*day), -1);
    specs.push_back(*day);
    // Evolution: hour + stream_key; stream_key keeps field 1000, hour takes 1003.
    auto hour = build_partition_spec(s, *parse_partition_spec_text("hour(message_ts), stream_key"), specs, 1002);
    ASSERT_TRUE(hour) << hour.error();
    EXPECT_EQ(hour->spec_id, 2);
    EXPECT_EQ(hour->fields[0].field_id, 1003);
    EXPECT_EQ(hour->fields[1].field_id, 1000);
    EXPECT_EQ(stream_key_field(*hour), 1);
    // The same text again is an existing spec.
    auto again = build_partition_spec(s, terms, specs, 1003);
    ASSERT_TRUE(again);
    auto* same = find_same_spec(specs, *again);
    ASSERT_TRUE(same);
    EXPECT_EQ(same->spec_id, 1);
    EXPECT_EQ(find_same_spec(specs, *build_partition_spec(s, *parse_partition_spec_text("stream_key"), specs, 1003))->spec_id, 0);
    // Errors name the term.
    auto bad = build_partition_spec(s, *parse_partition_spec_text("day(nope)"), specs, 1003);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("'day(nope)'"), std::string::npos) << bad.error().message();
    bad = build_partition_spec(s, *parse_partition_spec_text("hour(key)"), specs, 1003);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("binary"), std::string::npos) << bad.error().message();
    EXPECT_FALSE(build_partition_spec(s, *parse_partition_spec_text("day(headers)"), specs, 1003));
}

TEST(transform, file_stream_key_from_partition_or_bounds) {
    std::vector<partition_spec> specs{floe_partition_spec(),
                                      partition_spec{1, {{field_ids::message_ts, 1001, "message_ts_day", "day"}}}};
    data_file a;
    a.partition = {avro::datum::string("orders-0")};
    EXPECT_EQ(file_stream_key(a, specs), "orders-0");
    data_file b;
    b.spec_id = 1;
    b.partition = {avro::datum::int32(20790)};
    EXPECT_EQ(file_stream_key(b, specs), std::nullopt);
    b.lower_bounds[field_ids::stream_key] = "orders-1";
    b.upper_bounds[field_ids::stream_key] = "orders-1";
    EXPECT_EQ(file_stream_key(b, specs), "orders-1");
    b.upper_bounds[field_ids::stream_key] = "orders-2"; // two streams: unknown
    EXPECT_EQ(file_stream_key(b, specs), std::nullopt);
}

// A manifest of a day(message_ts) spec: the partition record holds a date, and reading it back
// gives the values, the spec id and the summaries' bounds.
TEST(transform, manifest_round_trip_of_a_day_spec) {
    const auto& s = floe_table_schema();
    partition_spec spec{3, {{field_ids::message_ts, 1001, "message_ts_day", "day"},
                            {field_ids::key, 1002, "key_bucket_16", "bucket[16]"}}};
    auto text = manifest_entry_avro_schema(s, spec);
    ASSERT_TRUE(text) << text.error();
    EXPECT_NE(text->find("\"message_ts_day\""), std::string::npos);
    EXPECT_NE(text->find("\"logicalType\":\"date\""), std::string::npos) << *text;
    std::vector<manifest_entry> entries;
    for (int32_t day : {20789, 20790}) {
        manifest_entry e;
        e.file.file_path = fmt::format("file:///wh/t/data/message_ts_day={}/f.parquet", day);
        e.file.partition = {avro::datum::int32(day), avro::datum::int32(day % 16)};
        e.file.record_count = 1;
        e.file.file_size_in_bytes = 10;
        e.file.spec_id = 3;
        entries.push_back(e);
    }
    auto w = write_manifest({&s, &spec, 42, 1}, entries);
    ASSERT_TRUE(w) << w.error();
    EXPECT_EQ(w->entry.partition_spec_id, 3);
    ASSERT_TRUE(w->entry.partitions);
    ASSERT_EQ(w->entry.partitions->size(), 2u);
    EXPECT_EQ((*w->entry.partitions)[0].lower_bound, std::string("\x35\x51\x00\x00", 4)); // 20789 LE
    auto back = read_manifest(w->bytes, "m.avro"); // no list entry: the spec id from the metadata
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(back->size(), 2u);
    EXPECT_EQ((*back)[1].file.partition[0].as_int(), 20790);
    EXPECT_EQ((*back)[1].file.partition[1].as_int(), 20790 % 16);
    EXPECT_EQ((*back)[1].file.spec_id, 3);
}
