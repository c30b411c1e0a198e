#include "iceberg/bounds.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace floe;
using namespace floe::iceberg;
using avro::datum;
namespace fs = std::filesystem;

namespace {

byte_buffer slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return byte_buffer(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

data_file sample_file(std::string stream, int64_t first_offset, int64_t n) {
    data_file f;
    f.file_path = "file:///wh/floe/t/data/stream_key=" + stream + "/segment-1-x.parquet";
    f.partition = {datum::string(stream)};
    f.record_count = n;
    f.file_size_in_bytes = 1000 + n;
    f.column_sizes = {{1, 10}, {10, 20}};
    f.value_counts = {{1, n}, {10, n}};
    f.null_value_counts = {{1, 0}, {6, 1}};
    f.lower_bounds = {{1, stream}, {10, serialize_long(first_offset)}};
    f.upper_bounds = {{1, stream}, {10, serialize_long(first_offset + n - 1)}};
    f.split_offsets = std::vector<int64_t>{4};
    f.sort_order_id = 1;
    return f;
}

} // namespace

TEST(iceberg_bounds, single_value_serialization) {
    EXPECT_EQ(serialize_int(20455), std::string("\xe7\x4f\x00\x00", 4));
    EXPECT_EQ(serialize_long(1), std::string("\x01\0\0\0\0\0\0\0", 8));
    EXPECT_EQ(serialize_long(-2), std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8));
    EXPECT_EQ(*deserialize_long(serialize_long(INT64_MIN)), INT64_MIN);
    EXPECT_EQ(*deserialize_long(serialize_int(-5)), -5);  // promoted int bound
    auto lt = type::primitive(type_id::long_);
    EXPECT_LT(compare_serialized(*lt, serialize_long(-1), serialize_long(1)), 0);
    auto st = type::primitive(type_id::string);
    EXPECT_LT(compare_serialized(*st, "a", "\xc3\xa9"), 0);  // unsigned bytes: 'a' < 'é'
    EXPECT_LT(compare_serialized(*st, "ab", "b"), 0);
    EXPECT_FALSE(deserialize_long("abc"));
}

TEST(iceberg_manifest, round_trip_with_summaries_and_inheritance) {
    auto& s = floe_table_schema();
    auto spec = floe_partition_spec();
    std::vector<manifest_entry> entries;
    entries.push_back({entry_status::added, {}, {}, {}, sample_file("orders-0", 0, 100)});
    entries.push_back({entry_status::added, {}, {}, {}, sample_file("orders-1", 0, 50)});
    entries.push_back({entry_status::existing, 77, 3, 3, sample_file("orders-0", 100, 10)});
    auto w = write_manifest({&s, &spec, 12345, 7, avro::codec::deflate}, entries);
    ASSERT_TRUE(w) << w.error();
    auto& mf = w->entry;
    EXPECT_EQ(mf.manifest_length, static_cast<int64_t>(w->bytes.size()));
    EXPECT_EQ(mf.added_files_count, 2);
    EXPECT_EQ(mf.existing_files_count, 1);
    EXPECT_EQ(mf.added_rows_count, 150);
    EXPECT_EQ(mf.existing_rows_count, 10);
    EXPECT_EQ(mf.min_sequence_number, 3);
    ASSERT_TRUE(mf.partitions);
    ASSERT_EQ(mf.partitions->size(), 1u);
    EXPECT_FALSE((*mf.partitions)[0].contains_null);
    EXPECT_EQ((*mf.partitions)[0].lower_bound, "orders-0");
    EXPECT_EQ((*mf.partitions)[0].upper_bound, "orders-1");

    mf.manifest_path = "file:///wh/m.avro";
    auto back = read_manifest(w->bytes, "m.avro", &mf);
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(back->size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        auto& a = (*back)[i].file;
        auto& b = entries[i].file;
        EXPECT_EQ(a.file_path, b.file_path);
        EXPECT_EQ(a.partition, b.partition);
        EXPECT_EQ(a.record_count, b.record_count);
        EXPECT_EQ(a.column_sizes, b.column_sizes);
        EXPECT_EQ(a.value_counts, b.value_counts);
        EXPECT_EQ(a.null_value_counts, b.null_value_counts);
        EXPECT_EQ(a.lower_bounds, b.lower_bounds);
        EXPECT_EQ(a.upper_bounds, b.upper_bounds);
        EXPECT_EQ(a.split_offsets, b.split_offsets);
        EXPECT_EQ(a.sort_order_id, b.sort_order_id);
    }
    EXPECT_EQ((*back)[0].snapshot_id, 12345);
    EXPECT_EQ((*back)[0].sequence_number, 7);  // inherited
    EXPECT_EQ((*back)[2].snapshot_id, 77);
    EXPECT_EQ((*back)[2].sequence_number, 3);  // kept
    auto raw = read_manifest(w->bytes, "m.avro");
    ASSERT_TRUE(raw);
    EXPECT_FALSE((*raw)[0].sequence_number.has_value());  // written as null

    auto list = write_manifest_list(12345, 99, 7, {mf});
    ASSERT_TRUE(list) << list.error();
    auto lback = read_manifest_list(*list, "snap.avro");
    ASSERT_TRUE(lback) << lback.error();
    ASSERT_EQ(lback->size(), 1u);
    auto& l = (*lback)[0];
    EXPECT_EQ(l.manifest_path, mf.manifest_path);
    EXPECT_EQ(l.manifest_length, mf.manifest_length);
    EXPECT_EQ(l.sequence_number, 7);
    EXPECT_EQ(l.min_sequence_number, 3);
    EXPECT_EQ(l.added_snapshot_id, 12345);
    EXPECT_EQ(l.added_rows_count, 150);
    ASSERT_TRUE(l.partitions);
    EXPECT_EQ((*l.partitions)[0].upper_bound, "orders-1");
    EXPECT_EQ((*l.partitions)[0].contains_nan, false);
}

TEST(iceberg_manifest, refuses_bad_entries_and_names_corrupt_files) {
    auto& s = floe_table_schema();
    auto spec = floe_partition_spec();
    auto f = sample_file("a", 0, 1);
    f.partition.clear();
    EXPECT_FALSE(write_manifest({&s, &spec, 1, 1}, {{entry_status::added, {}, {}, {}, f}}));
    EXPECT_FALSE(write_manifest({&s, &spec, 1, 1}, {{entry_status::existing, {}, {}, {}, sample_file("a", 0, 1)}}));
    auto w = write_manifest({&s, &spec, 1, 1}, {{entry_status::added, {}, {}, {}, sample_file("a", 0, 1)}});
    ASSERT_TRUE(w);
    auto bytes = w->bytes;
    bytes.resize(bytes.size() - 20);
    auto r = read_manifest(bytes, "file:///wh/broken-m0.avro");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("broken-m0.avro"), std::string::npos) << r.error();
    // A manifest list is not a manifest.
    auto list = write_manifest_list(1, {}, 1, {w->entry});
    auto r2 = read_manifest(*list, "file:///wh/list.avro");
    ASSERT_FALSE(r2);
    EXPECT_NE(r2.error().message().find("list.avro"), std::string::npos);
}

TEST(iceberg_manifest, reads_spark_manifests_with_inheritance) {
    fs::path dir = fs::path(FLOE_SPARK_FIXTURES) / "map_stats/default.db/map_stats/metadata";
    auto list_path = dir / "snap-554549470069664013-0-8574bca8-244f-4667-965a-03a41a3e4e0e.avro";
    auto list = read_manifest_list(slurp(list_path), list_path.string());
    ASSERT_TRUE(list) << list.error();
    ASSERT_EQ(list->size(), 2u);
    auto date_t = type::primitive(type_id::date);
    for (auto& mf : *list) {
        auto mp = dir / fs::path(mf.manifest_path).filename();
        auto entries = read_manifest(slurp(mp), mp.string(), &mf);
        ASSERT_TRUE(entries) << entries.error();
        ASSERT_EQ(entries->size(), 1u);
        auto& e = (*entries)[0];
        EXPECT_EQ(e.status, entry_status::added);
        EXPECT_EQ(e.sequence_number, mf.sequence_number);  // null in the file, inherited
        EXPECT_EQ(e.snapshot_id, mf.added_snapshot_id);
        EXPECT_EQ(e.file.record_count, mf.added_rows_count);
        ASSERT_EQ(e.file.partition.size(), 1u);
        // The list's partition summary is the single-value serialisation of the partition value.
        auto ser = serialize_value(*date_t, e.file.partition[0]);
        ASSERT_TRUE(ser) << ser.error();
        ASSERT_TRUE(mf.partitions);
        EXPECT_EQ((*mf.partitions)[0].lower_bound, *ser);
        EXPECT_EQ((*mf.partitions)[0].upper_bound, *ser);
        EXPECT_EQ(e.file.split_offsets, std::vector<int64_t>{4});
        EXPECT_EQ(e.file.lower_bounds.at(2), "hello");
    }
    EXPECT_EQ((*list)[0].sequence_number, 2);
    EXPECT_EQ((*list)[1].sequence_number, 1);
}
