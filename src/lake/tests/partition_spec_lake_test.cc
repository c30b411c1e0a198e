// Partition specs in the lake (issue 29): rows split by a day / hour spec with one stream key
// per file, partition evolution on a live table, and every reader of the table (offset plans,
// retention) finding each file's stream key whatever its spec.
#include "iceberg/transform.h"
#include "lake/iceberg_lake.h"
#include "lake/tests/test_lake.h"
#include "lake/table_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace floe::lake {
namespace {

namespace fs = std::filesystem;
constexpr int64_t day_ms = 86'400'000;
constexpr int64_t dec1 = 20788 * day_ms; // 2026-12-01T00:00Z

class PartitionSpecLakeTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = testing::fresh_test_dir("floe-pspec-test");
        _lake = testing::open_test_lake(_dir);
        ASSERT_TRUE(_lake);
    }
    void TearDown() override { fs::remove_all(_dir); }

    /// Appends offsets [from, to) of each stream, row o at ts(o), and commits the positions.
    void append(table_writer& t, const std::vector<std::string>& streams, int64_t from, int64_t to,
                const std::function<int64_t(int64_t)>& ts) {
        auto app = t.begin_append();
        ASSERT_TRUE(app) << app.error();
        position_map pos;
        for (auto& s : streams) {
            for (int64_t o = from; o < to; ++o) {
                auto id = std::to_string(o);
                auto value = fmt::format("value-{}", o);
                parquet::message_row row;
                row.stream_key = s;
                row.segment_id = from;
                row.message_id = id;
                row.message_ts = ts(o);
                row.kafka_timestamp = ts(o);
                row.key = id;
                row.value = value;
                row.offset = o;
                auto added = (*app)->add(row);
                ASSERT_TRUE(added) << added.error();
            }
            pos[s] = to;
        }
        auto c = (*app)->commit(pos);
        ASSERT_TRUE(c) << c.error();
    }

    iceberg::loaded_table load(const std::string& table) {
        auto t = iceberg::load_table(_lake->catalog(), _lake->io(), {"floe", table});
        EXPECT_TRUE(t) << t.error();
        return std::move(*t);
    }

    fs::path _dir;
    std::unique_ptr<iceberg_lake> _lake;
};

TEST_F(PartitionSpecLakeTest, DaySpecThenHourSpecKeepOneStreamPerFileAndEveryReaderWorks) {
    // A long topic name: its stream keys pass the 64 bytes Parquet statistics keep.
    const std::string topic = "clicks." + std::string(80, 'c');
    const std::vector<std::string> streams{topic + "-0", topic + "-1"};
    auto t = _lake->table_for_topic(topic);
    ASSERT_TRUE(t) << t.error();
    auto set = (*t)->set_partition_spec("day(message_ts)");
    ASSERT_TRUE(set) << set.error();
    // Days interleave by offset: offset o is on day o % 3 (Nov 28 .. 30).
    append(**t, streams, 0, 30, [](int64_t o) { return dec1 - 3 * day_ms + (o % 3) * day_ms + o * 1000; });

    auto m = load((*t)->table_name());
    EXPECT_EQ(m.metadata.default_spec_id, 1);
    ASSERT_EQ(m.metadata.partition_specs.size(), 2u);
    auto live = iceberg::live_files(_lake->io(), m.metadata);
    ASSERT_TRUE(live) << live.error();
    ASSERT_EQ(live->size(), 6u); // 2 streams x 3 days
    std::set<std::pair<std::string, int32_t>> seen;
    for (auto& e : *live) {
        EXPECT_EQ(e.file.spec_id, 1);
        ASSERT_EQ(e.file.partition.size(), 1u);
        auto key = iceberg::file_stream_key(e.file, m.metadata.partition_specs);
        ASSERT_TRUE(key) << e.file.file_path;
        seen.emplace(*key, e.file.partition[0].as_int());
        auto day_dir = fmt::format("/data/message_ts_day=2026-11-{}/", 28 + (e.file.partition[0].as_int() - 20785));
        EXPECT_NE(e.file.file_path.find(day_dir), std::string::npos) << e.file.file_path;
        EXPECT_EQ(e.file.record_count, 10);
    }
    EXPECT_EQ(seen.size(), 6u);

    // Evolution: hour and stream_key; the old files keep spec 1.
    set = (*t)->set_partition_spec("hour(message_ts), stream_key");
    ASSERT_TRUE(set) << set.error();
    append(**t, streams, 30, 40, [](int64_t o) { return dec1 + (o % 2) * 3'600'000; });
    m = load((*t)->table_name());
    EXPECT_EQ(m.metadata.default_spec_id, 2);
    EXPECT_EQ(m.metadata.last_partition_id, 1002);
    live = iceberg::live_files(_lake->io(), m.metadata);
    ASSERT_TRUE(live);
    int old_spec = 0, new_spec = 0;
    for (auto& e : *live) {
        if (e.file.spec_id == 1) ++old_spec;
        if (e.file.spec_id == 2) {
            ++new_spec;
            ASSERT_EQ(e.file.partition.size(), 2u);
            EXPECT_EQ(e.file.partition[1].as_string(), *iceberg::file_stream_key(e.file, m.metadata.partition_specs));
        }
    }
    EXPECT_EQ(old_spec, 6);
    EXPECT_EQ(new_spec, 4); // 2 streams x 2 hours

    // Offset plans find each stream's files of both specs; read together, every offset once.
    table_reader reader(*_lake, topic);
    for (auto& s : streams) {
        auto plan = reader.files_for_offsets(s, 0, 40);
        ASSERT_TRUE(plan) << plan.error();
        EXPECT_EQ(plan->size(), 5u) << s; // 3 days + 2 hours
        std::vector<int64_t> offsets;
        for (auto& f : *plan) {
            EXPECT_EQ(f.stream_key, s);
            auto rows = reader.read_file(f);
            ASSERT_TRUE(rows) << rows.error();
            for (auto& r : *rows) {
                EXPECT_EQ(r.stream_key, s);
                offsets.push_back(r.offset);
            }
        }
        std::sort(offsets.begin(), offsets.end());
        ASSERT_EQ(offsets.size(), 40u);
        for (int64_t o = 0; o < 40; ++o) EXPECT_EQ(offsets[static_cast<size_t>(o)], o);
    }

    // Back to the day spec: spec 1 again, no fourth spec.
    set = (*t)->set_partition_spec("day(message_ts)");
    ASSERT_TRUE(set) << set.error();
    m = load((*t)->table_name());
    EXPECT_EQ(m.metadata.default_spec_id, 1);
    EXPECT_EQ(m.metadata.partition_specs.size(), 3u);

    // Retention by message_ts finds the old spec's files by their stream-key bounds.
    auto removed = (*t)->expire_before(dec1 - 1 * day_ms); // Nov 28 and 29
    ASSERT_TRUE(removed) << removed.error();
    EXPECT_EQ(*removed, 4u);

    // A spec over a column Floe cannot partition rows by is refused, naming it.
    auto bad = (*t)->set_partition_spec("identity(headers)");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("headers"), std::string::npos) << bad.error().message();
}

} // namespace
} // namespace floe::lake
