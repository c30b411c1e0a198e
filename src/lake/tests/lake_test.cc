#include "lake/iceberg_lake.h"
#include "lake/tests/test_lake.h"

#include "format/parquet/reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace floe::lake {
namespace {

namespace fs = std::filesystem;

class LakeTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = testing::fresh_test_dir("floe-lake-test");
        _lake = make_lake();
    }
    void TearDown() override { fs::remove_all(_dir); }

    std::unique_ptr<iceberg_lake> make_lake(int64_t target_file_size = 128 << 20) {
        lake_options o;
        o.parquet.target_file_size = static_cast<uint64_t>(target_file_size);
        o.parquet.row_group_size = 64 << 10;
        return testing::open_test_lake(_dir, o);
    }

    /// Appends rows [from, to) of `stream` and commits the position `to`.
    result<commit_result> append_range(lake& l, const std::string& topic, const std::string& stream,
                                       int64_t from, int64_t to) {
        auto t = FLOE_TRY(l.table_for_topic(topic));
        auto app = FLOE_TRY(t->begin_append());
        for (int64_t o = from; o < to; ++o) {
            auto id = std::to_string(o);
            auto value = fmt::format("value-{}", o);
            parquet::message_row row;
            row.stream_key = stream;
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = 1000 + o;
            row.kafka_timestamp = 1000 + o;
            row.key = id;
            row.value = value;
            row.partition = 0;
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        return app->commit({{stream, to}});
    }

    /// Every (stream, offset) in the table's live data files, read back from the Parquet files.
    std::vector<std::pair<std::string, int64_t>> table_rows(iceberg_lake& l, const std::string& table) {
        auto t = iceberg::load_table(l.catalog(), l.io(), {"floe", table});
        EXPECT_TRUE(t) << t.error();
        auto files = iceberg::live_files(l.io(), t->metadata);
        EXPECT_TRUE(files) << files.error();
        std::vector<std::pair<std::string, int64_t>> rows;
        for (auto& e : *files) {
            auto path = iceberg::local_path(e.file.file_path);
            auto src = parquet::open_file_source(*path);
            auto r = parquet::message_reader::open(std::move(*src));
            EXPECT_TRUE(r) << r.error();
            std::vector<parquet::message_record> got;
            while (true) {
                auto more = r->next_row_group(got);
                EXPECT_TRUE(more) << more.error();
                if (!more || !*more) break;
            }
            for (auto& row : got) rows.emplace_back(row.stream_key, row.offset);
        }
        std::sort(rows.begin(), rows.end());
        return rows;
    }

    fs::path _dir;
    std::unique_ptr<iceberg_lake> _lake;
};

TEST_F(LakeTest, TableNamesFollowTheDesign) {
    EXPECT_EQ(table_name_for_topic("orders.created-v1"), "orders_created_v1");
    EXPECT_EQ(table_name_for_topic("a:b"), "a_b");
    EXPECT_EQ(escape_partition_value("orders-0"), "orders-0");
    EXPECT_EQ(escape_partition_value("a/b c"), "a%2Fb%20c");
}

TEST_F(LakeTest, DataDirectoryNamesStayWithinNameMax) {
    EXPECT_EQ(data_dir_name("orders-0"), "stream_key=orders-0");
    // Kafka's longest topic name: its stream key's directory would be 11 + 249 + 2 bytes.
    std::string topic(249, 't');
    auto a = data_dir_name(topic + "-0"), b = data_dir_name(topic + "-1");
    EXPECT_EQ(a.size(), 255u);
    EXPECT_TRUE(a.starts_with("stream_key~ttt"));
    EXPECT_EQ(a.find('='), std::string::npos); // never a Hive-style partition with a cut value
    EXPECT_NE(a, b);
    // An escape is never cut in half.
    for (size_t n = 240; n < 260; ++n) {
        auto d = data_dir_name(std::string(n, '/'));
        EXPECT_LE(d.size(), 255u);
        auto body = d.substr(11, d.rfind('~') - 11);
        EXPECT_EQ(body.size() % 3, 0u) << d;
    }
}

TEST_F(LakeTest, LongestTopicNameLandsInItsTable) {
    std::string topic(249, 'x');
    topic[10] = '.';
    auto stream = topic + "-0";
    auto r = append_range(*_lake, topic, stream, 0, 50);
    ASSERT_TRUE(r) << r.error();
    auto table = table_name_for_topic(topic);
    auto rows = table_rows(*_lake, table);
    ASSERT_EQ(rows.size(), 50u);
    EXPECT_EQ(rows.front(), std::make_pair(stream, int64_t(0)));
    for (auto& f : r->data_files) EXPECT_NE(f.find("/data/" + data_dir_name(stream) + "/"), std::string::npos) << f;
}

TEST_F(LakeTest, AppendCommitsRowsAndPositions) {
    auto r = append_range(*_lake, "orders.v1", "orders.v1-0", 0, 100);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 100);
    EXPECT_EQ(r->data_files.size(), 1u);
    EXPECT_TRUE(r->data_files[0].find("/floe/orders_v1/data/stream_key=orders.v1-0/segment-0-")
                != std::string::npos)
        << r->data_files[0];
    auto t = _lake->table_for_topic("orders.v1");
    auto pos = (*t)->committed_positions();
    ASSERT_TRUE(pos) << pos.error();
    EXPECT_EQ((*pos)["orders.v1-0"], 100);

    ASSERT_TRUE(append_range(*_lake, "orders.v1", "orders.v1-1", 0, 10));
    pos = (*t)->committed_positions();
    EXPECT_EQ((*pos)["orders.v1-0"], 100); // carried forward
    EXPECT_EQ((*pos)["orders.v1-1"], 10);
    auto rows = table_rows(*_lake, "orders_v1");
    EXPECT_EQ(rows.size(), 110u);
    // Path readers find the table without a catalog.
    EXPECT_TRUE(fs::exists(_dir / "warehouse/floe/orders_v1/metadata/version-hint.text"));
}

TEST_F(LakeTest, RetriedAppendAddsNothingTwice) {
    ASSERT_TRUE(append_range(*_lake, "t", "t-0", 0, 50));
    // A retry of the same range (e.g. after a crash before the local marker moved).
    auto again = append_range(*_lake, "t", "t-0", 0, 50);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->added_rows, 0);
    EXPECT_EQ(again->skipped_rows, 50);
    // An overlapping range adds only the new part.
    auto overlap = append_range(*_lake, "t", "t-0", 40, 80);
    ASSERT_TRUE(overlap) << overlap.error();
    EXPECT_EQ(overlap->added_rows, 30);
    auto rows = table_rows(*_lake, "t");
    ASSERT_EQ(rows.size(), 80u);
    for (int64_t i = 0; i < 80; ++i) EXPECT_EQ(rows[size_t(i)].second, i);
}

TEST_F(LakeTest, RemoteRetentionDropsOnlyOldFilesAndKeepsPositions) {
    ASSERT_TRUE(append_range(*_lake, "ret", "ret-0", 0, 50));   // message_ts 1000..1049
    ASSERT_TRUE(append_range(*_lake, "ret", "ret-0", 50, 100)); // message_ts 1050..1099
    auto t = *_lake->table_for_topic("ret");
    auto n = t->expire_before(1050);
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 1u);
    auto rows = table_rows(*_lake, "ret");
    ASSERT_EQ(rows.size(), 50u);
    EXPECT_EQ(rows.front().second, 50);
    EXPECT_EQ((*t->committed_positions())["ret-0"], 100);
    EXPECT_EQ(*t->expire_before(1050), 0u); // nothing more is that old
    // A retried offload of the expired range still adds nothing.
    auto again = append_range(*_lake, "ret", "ret-0", 0, 100);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->added_rows, 0);
}

TEST_F(LakeTest, FilesRollAtTargetSize) {
    auto small = make_lake(64 << 10);
    auto r = append_range(*small, "big", "big-0", 0, 20000);
    ASSERT_TRUE(r) << r.error();
    EXPECT_GT(r->data_files.size(), 1u);
    EXPECT_EQ(table_rows(*small, "big").size(), 20000u);
}

TEST_F(LakeTest, ConcurrentWritersOfOneStreamNeverDuplicate) {
    // Two lakes (as two processes would) race to commit the same rows: one wins, the other's
    // commit is refused and adds nothing.
    auto other = make_lake();
    ASSERT_TRUE(append_range(*_lake, "race", "race-0", 0, 1)); // create the table
    auto t1 = _lake->table_for_topic("race");
    auto t2 = other->table_for_topic("race");
    auto a1 = (*t1)->begin_append();
    auto a2 = (*t2)->begin_append();
    for (auto* a : {&*a1, &*a2}) {
        for (int64_t o = 1; o < 20; ++o) {
            auto id = std::to_string(o);
            parquet::message_row row;
            row.stream_key = "race-0";
            row.message_id = id;
            row.offset = o;
            ASSERT_TRUE((*a)->add(row));
        }
    }
    auto c1 = (*a1)->commit({{"race-0", 20}});
    auto c2 = (*a2)->commit({{"race-0", 20}});
    ASSERT_TRUE(c1) << c1.error();
    ASSERT_FALSE(c2);
    EXPECT_EQ(c2.error().code(), errc::already_exists) << c2.error();
    EXPECT_EQ(table_rows(*_lake, "race").size(), 20u);
}

TEST_F(LakeTest, ConcurrentWritersOfDifferentStreamsBothLand) {
    auto other = make_lake();
    ASSERT_TRUE(append_range(*_lake, "multi", "multi-0", 0, 1));
    std::thread a([&] {
        for (int i = 1; i <= 20; ++i) ASSERT_TRUE(append_range(*_lake, "multi", "multi-0", i * 10, i * 10 + 10));
    });
    std::thread b([&] {
        for (int i = 0; i < 20; ++i) ASSERT_TRUE(append_range(*other, "multi", "multi-1", i * 10, i * 10 + 10));
    });
    a.join();
    b.join();
    auto rows = table_rows(*_lake, "multi");
    EXPECT_EQ(rows.size(), 1u + 200u + 200u);
    auto pos = (*_lake->table_for_topic("multi"))->committed_positions();
    EXPECT_EQ((*pos)["multi-0"], 210);
    EXPECT_EQ((*pos)["multi-1"], 200);
}

} // namespace
} // namespace floe::lake
