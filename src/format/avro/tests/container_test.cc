#include "format/avro/container.h"
#include "format/avro/tests/sample.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::avro;

namespace {

schema sample_schema() {
    auto s = schema::parse(test_data::sample_schema_json);
    EXPECT_TRUE(s) << s.error();
    return std::move(*s);
}

std::vector<datum> sample_records(size_t n, size_t big_index = SIZE_MAX) {
    test_data::sample_gen g(42);
    std::vector<datum> v;
    for (size_t i = 0; i < n; ++i) v.push_back(g.record(i, big_index));
    return v;
}

byte_buffer write_file(const schema& s, const std::vector<datum>& records, writer_options o) {
    auto w = container_writer::create(s, std::move(o));
    EXPECT_TRUE(w) << w.error();
    for (auto& r : records) {
        auto ok = w->append(r);
        EXPECT_TRUE(ok) << ok.error();
    }
    auto bytes = w->finish();
    EXPECT_TRUE(bytes) << bytes.error();
    return std::move(*bytes);
}

class avro_codec_test : public ::testing::TestWithParam<codec> {};

} // namespace

TEST_P(avro_codec_test, round_trip_many_blocks) {
    auto s = sample_schema();
    auto records = sample_records(2000, 777);
    writer_options o;
    o.codec = GetParam();
    o.metadata = {{"iceberg.schema", "{}"}, {"format-version", "2"}};
    auto file = write_file(s, records, o);

    auto r = container_reader::open(file, "mem.avro");
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->codec(), GetParam());
    EXPECT_EQ(r->meta("avro.schema"), std::string_view(test_data::sample_schema_json));
    EXPECT_EQ(r->meta("format-version"), "2");
    EXPECT_EQ(r->meta("avro.codec"), codec_name(GetParam()));
    auto back = r->read_all();
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(back->size(), records.size());
    for (size_t i = 0; i < records.size(); ++i)
        ASSERT_EQ((*back)[i], records[i]) << i << ": " << to_debug_string((*back)[i]).substr(0, 500);
}

TEST_P(avro_codec_test, single_and_zero_record_files) {
    auto s = sample_schema();
    writer_options o;
    o.codec = GetParam();
    auto one = sample_records(1);
    auto file = write_file(s, one, o);
    auto r = container_reader::open(file, "one.avro");
    ASSERT_TRUE(r) << r.error();
    auto back = r->read_all();
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(*back, one);

    auto empty = write_file(s, {}, o);
    auto r0 = container_reader::open(empty, "empty.avro");
    ASSERT_TRUE(r0) << r0.error();
    auto none = r0->read_all();
    ASSERT_TRUE(none) << none.error();
    EXPECT_TRUE(none->empty());
}

INSTANTIATE_TEST_SUITE_P(codecs, avro_codec_test,
                         ::testing::Values(codec::null, codec::deflate, codec::zstd, codec::snappy),
                         [](auto& info) { return std::string(codec_name(info.param)); });

TEST(avro_container, fixed_sync_gives_identical_files) {
    auto s = sample_schema();
    writer_options o;
    o.sync = sync_marker{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    auto recs = sample_records(50);
    EXPECT_EQ(write_file(s, recs, o), write_file(s, recs, o));
}

TEST(avro_container, refuses_values_that_do_not_fit_and_stays_valid) {
    auto s = sample_schema();
    auto w = container_writer::create(s, {});
    ASSERT_TRUE(w);
    auto good = sample_records(2);
    ASSERT_TRUE(w->append(good[0]));
    auto bad = good[1];
    bad.field(7) = datum::fixed("short");  // md5 needs 16 bytes
    auto r = w->append(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_NE(r.error().message().find("digest"), std::string::npos) << r.error();
    auto wrong_kind = good[1];
    wrong_kind.field(0) = datum::string("not a long");
    EXPECT_FALSE(w->append(wrong_kind));
    auto few = datum::record({datum::int64(1)});
    EXPECT_FALSE(w->append(few));
    ASSERT_TRUE(w->append(good[1]));
    auto file = w->finish();
    ASSERT_TRUE(file);
    auto rd = container_reader::open(*file, "x.avro");
    ASSERT_TRUE(rd);
    auto back = rd->read_all();
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(*back, good);
}

TEST(avro_container, explicit_union_branch_and_promotion) {
    auto s = schema::parse(R"({"type":"record","name":"r","fields":[
        {"name":"u","type":["null","string","bytes"]},{"name":"l","type":["null","long"]}]})");
    ASSERT_TRUE(s);
    auto w = container_writer::create(*s, {});
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->append(datum::record({datum::string("s").in_branch(2), datum::int32(5)})));
    auto f = w->finish();
    ASSERT_TRUE(f);
    auto r = container_reader::open(*f, "u.avro");
    ASSERT_TRUE(r);
    auto v = r->read_all();
    ASSERT_TRUE(v) << v.error();
    ASSERT_EQ(v->size(), 1u);
    EXPECT_EQ((*v)[0].field(0).type(), datum::kind::bytes);
    EXPECT_EQ((*v)[0].field(0).branch(), 2u);
    EXPECT_EQ((*v)[0].field(1), datum::int64(5));
}
