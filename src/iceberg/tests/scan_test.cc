#include "iceberg/bounds.h"
#include "iceberg/scan.h"
#include "iceberg/table.h"
#include "iceberg/tests/test_dir.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::iceberg;

namespace {

data_file file_for(const std::string& location, const std::string& stream, int64_t first, int64_t n, int64_t ts) {
    data_file f;
    f.file_path = fmt::format("{}/data/stream_key={}/segment-{}.parquet", location, stream, first);
    f.partition = {avro::datum::string(stream)};
    f.record_count = n;
    f.file_size_in_bytes = n * 10;
    f.lower_bounds = {{field_ids::offset, serialize_long(first)}, {field_ids::message_ts, serialize_long(ts)}};
    f.upper_bounds = {{field_ids::offset, serialize_long(first + n - 1)},
                      {field_ids::message_ts, serialize_long(ts + 99)}};
    return f;
}

} // namespace

TEST(iceberg_scan, prunes_by_partition_and_bounds) {
    test_util::temp_dir d;
    local_file_io io;
    auto cat = open_sql_catalog("sqlite://" + d.str() + "/c.db", "floe");
    ASSERT_TRUE(cat);
    table_ident t{"floe", "scan"};
    auto location = file_uri(d.str() + "/wh/floe/scan");
    ASSERT_TRUE(create_table_if_missing(**cat, io, t, location));
    // Commit 1: stream a, offsets 0-99 and 100-199. Commit 2: stream b 0-99. Commit 3: a 200-299.
    auto commit = [&](std::vector<data_file> files) {
        append_request r;
        r.files = std::move(files);
        auto c = append_files(**cat, io, t, std::move(r));
        ASSERT_TRUE(c) << c.error();
    };
    commit({file_for(location, "a-0", 0, 100, 1000), file_for(location, "a-0", 100, 100, 2000)});
    commit({file_for(location, "b-0", 0, 100, 1500)});
    commit({file_for(location, "a-0", 200, 100, 3000)});
    auto m = load_table(**cat, io, t)->metadata;

    auto offsets = [](const std::vector<manifest_entry>& es) {
        std::vector<int64_t> v;
        for (auto& e : es) v.push_back(*deserialize_long(e.file.lower_bounds.at(field_ids::offset)));
        std::sort(v.begin(), v.end());
        return v;
    };
    scan_stats st;
    auto all = plan_files(io, m, {}, &st);
    ASSERT_TRUE(all) << all.error();
    EXPECT_EQ(all->size(), 4u);
    EXPECT_EQ(st.files_skipped, 0u);

    st = {};
    auto b = plan_files(io, m, {.stream_key = "b-0"}, &st);
    ASSERT_TRUE(b);
    ASSERT_EQ(b->size(), 1u);
    EXPECT_EQ(b->front().file.partition[0].as_string(), "b-0");
    EXPECT_EQ(st.manifests_skipped, 2u) << "manifests of stream a skipped by their partition summary";

    st = {};
    auto a_mid = plan_files(io, m, {.stream_key = "a-0", .min_offset = 150, .max_offset = 210}, &st);
    ASSERT_TRUE(a_mid);
    EXPECT_EQ(offsets(*a_mid), (std::vector<int64_t>{100, 200}));
    EXPECT_EQ(st.manifests_skipped, 1u);

    auto by_ts = plan_files(io, m, {.stream_key = "a-0", .min_message_ts = 2050, .max_message_ts = 2060});
    ASSERT_TRUE(by_ts);
    EXPECT_EQ(offsets(*by_ts), (std::vector<int64_t>{100}));

    auto none = plan_files(io, m, {.stream_key = "c-0"});
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
    auto past = plan_files(io, m, {.stream_key = "a-0", .min_offset = 300});
    ASSERT_TRUE(past);
    EXPECT_TRUE(past->empty());
}
