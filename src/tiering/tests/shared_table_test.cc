// Tables shared by two topics (names that collided before that was refused): every read of one
// topic must leave the other's rows out, whether they sit in their own files (skipped by the
// manifest partition value) or mixed into one file (skipped row by row).
#include "format/parquet/io.h"
#include "iceberg/bounds.h"
#include "iceberg/schema.h"
#include "iceberg/table.h"
#include "lake/iceberg_lake.h"
#include "log/batch_builder.h"
#include "log/log_manager.h"
#include "tiering/batch_records.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace floe::tiering {
namespace {

namespace fs = std::filesystem;

constexpr const char* mine = "nc.mixed-events";
constexpr const char* theirs = "nc_mixed_events"; // same table: nc_mixed_events

std::string key_of(int64_t o) { return fmt::format("k-{}", o % 50); }

class SharedTableTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path() / fmt::format("floe-shared-table-{}", ::getpid());
        fs::remove_all(_dir);
        fs::create_directories(_dir);
        auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
        ASSERT_TRUE(cat);
        lake::lake_options o;
        o.warehouse = "file://" + (_dir / "warehouse").string();
        _lake = std::make_unique<lake::iceberg_lake>(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                                                     std::make_shared<iceberg::local_file_io>(), o);
        // Each topic's partition 0, offsets 0..149, same keys and timestamps, in its own files.
        append(mine, 0, 100);
        append(mine, 100, 150);
        append(theirs, 0, 150);
        // One file holding rows of both streams (offsets 150..199 each), registered as ours.
        add_mixed_file(150, 200);
    }
    void TearDown() override { fs::remove_all(_dir); }

    static parquet::message_row row(const std::string& stream, int64_t o, const std::string& id,
                                    const std::string& key, const std::string& value) {
        parquet::message_row r;
        r.stream_key = stream;
        r.segment_id = 0;
        r.message_id = id;
        r.message_ts = 1000 + o;
        r.kafka_timestamp = 1000 + o;
        r.key = key;
        r.value = value;
        r.partition = 0;
        r.offset = o;
        return r;
    }

    void append(const std::string& topic, int64_t from, int64_t to) {
        auto t = _lake->table_for_topic(topic);
        ASSERT_TRUE(t) << t.error();
        EXPECT_EQ((*t)->table_name(), "nc_mixed_events");
        auto app = (*t)->begin_append();
        ASSERT_TRUE(app);
        auto stream = stream_key_for(topic, 0);
        for (int64_t o = from; o < to; ++o) {
            auto id = std::to_string(o), key = key_of(o), value = fmt::format("{}/{}", topic, o);
            ASSERT_TRUE((*app)->add(row(stream, o, id, key, value)));
        }
        ASSERT_TRUE((*app)->commit({{stream, to}}));
    }

    void add_mixed_file(int64_t from, int64_t to) {
        auto t = _lake->table_for_topic(mine);
        ASSERT_TRUE(t);
        auto uri = (*t)->location() + "/data/mixed.parquet";
        auto path = iceberg::local_path(uri);
        ASSERT_TRUE(path);
        fs::create_directories(fs::path(*path).parent_path());
        auto sink = parquet::open_file_sink(*path);
        ASSERT_TRUE(sink);
        auto w = parquet::message_writer::open(std::move(*sink));
        ASSERT_TRUE(w);
        for (int64_t o = from; o < to; ++o)
            for (auto* topic : {theirs, mine}) {
                auto id = std::to_string(o), key = key_of(o), value = fmt::format("{}/{}", topic, o);
                ASSERT_TRUE(w->append(row(stream_key_for(topic, 0), o, id, key, value)));
            }
        auto summary = w->close();
        ASSERT_TRUE(summary);
        iceberg::data_file df;
        df.file_path = uri;
        df.partition = {avro::datum::string(stream_key_for(mine, 0))};
        df.record_count = summary->row_count;
        df.file_size_in_bytes = int64_t(summary->file_size);
        using namespace iceberg;
        df.lower_bounds = {{field_ids::offset, serialize_long(from)}, {field_ids::message_ts, serialize_long(1000 + from)}};
        df.upper_bounds = {{field_ids::offset, serialize_long(to - 1)},
                           {field_ids::message_ts, serialize_long(1000 + to - 1)}};
        iceberg::append_request req;
        req.files.push_back(df);
        req.prepare = [](const iceberg::table_metadata&, std::map<std::string, std::string>&) -> result<void> {
            return {};
        };
        auto c = iceberg::append_files(_lake->catalog(), _lake->io(), {"floe", "nc_mixed_events"}, std::move(req));
        ASSERT_TRUE(c) << c.error();
    }

    /// Every record of topic partition 0 in [from, to) through the Kafka read path, as
    /// "offset:value" strings.
    std::vector<std::string> fetch(remote_reader& rr, const std::string& topic, int64_t from, int64_t to) {
        std::vector<std::string> out;
        int64_t next = from;
        byte_buffer scratch;
        for (int i = 0; i < 100 && next < to; ++i) {
            auto r = rr.read(topic, 0, next, to, 1 << 20);
            EXPECT_TRUE(r) << r.error();
            if (!r || r->records == 0) break;
            auto ok = log::for_each_batch(r->batches, true, [&](const log::record_batch_header& h, bytes_view b) {
                auto rr2 = for_each_record(h, b, scratch, 64 << 20, [&](const record_view& v) -> result<void> {
                    out.push_back(fmt::format("{}:{}", v.offset, v.value ? std::string(*v.value) : "null"));
                    return {};
                });
                EXPECT_TRUE(rr2) << rr2.error();
                return true;
            });
            EXPECT_TRUE(ok);
            next = r->next_offset;
        }
        return out;
    }

    static std::vector<std::string> expected(const std::string& topic, int64_t from, int64_t to) {
        std::vector<std::string> v;
        for (int64_t o = from; o < to; ++o) v.push_back(fmt::format("{}:{}/{}", o, topic, o));
        return v;
    }

    fs::path _dir;
    std::unique_ptr<lake::iceberg_lake> _lake;
};

TEST_F(SharedTableTest, KafkaReadsReturnOnlyTheTopicsRows) {
    remote_reader rr(*_lake);
    EXPECT_EQ(fetch(rr, mine, 0, 200), expected(mine, 0, 200));
    EXPECT_EQ(fetch(rr, theirs, 0, 150), expected(theirs, 0, 150));
    // The mixed file is ours by its manifest: the other topic sees nothing past 150.
    EXPECT_EQ(fetch(rr, theirs, 150, 200), std::vector<std::string>{});
    EXPECT_EQ(**rr.start_offset(mine, 0), 0);
    EXPECT_EQ(**rr.start_offset(theirs, 0), 0);
}

TEST_F(SharedTableTest, KeyLookupsReturnOnlyTheTopicsRows) {
    remote_reader rr(*_lake);
    for (auto* topic : {mine, theirs}) {
        auto all = rr.find_by_key(topic, "k-7", true);
        ASSERT_TRUE(all) << all.error();
        std::vector<int64_t> offsets;
        for (auto& m : *all) {
            EXPECT_EQ(m.stream_key, stream_key_for(topic, 0));
            EXPECT_EQ(*m.value, fmt::format("{}/{}", topic, m.offset));
            offsets.push_back(m.offset);
        }
        std::sort(offsets.begin(), offsets.end());
        auto want = std::string(topic) == mine ? std::vector<int64_t>{7, 57, 107, 157}
                                               : std::vector<int64_t>{7, 57, 107};
        EXPECT_EQ(offsets, want) << topic;
        auto newest = rr.find_by_key(topic, "k-7", false);
        ASSERT_TRUE(newest);
        ASSERT_EQ(newest->size(), 1u);
        EXPECT_EQ(newest->front().offset, want.back());
        EXPECT_EQ(*newest->front().value, fmt::format("{}/{}", topic, want.back()));
    }
}

// Remote retention of one topic removes only that topic's files from a shared table.
TEST_F(SharedTableTest, RemoteRetentionRemovesOnlyTheTopicsFiles) {
    auto files_of = [&](const char* topic) {
        auto t = iceberg::load_table(_lake->catalog(), _lake->io(), {"floe", "nc_mixed_events"});
        EXPECT_TRUE(t) << t.error();
        auto live = iceberg::live_files(_lake->io(), t->metadata);
        EXPECT_TRUE(live) << live.error();
        size_t n = 0;
        for (auto& e : *live) n += e.file.partition[0].as_string() == stream_key_for(topic, 0);
        return n;
    };
    const size_t mine_before = files_of(mine);
    ASSERT_EQ(files_of(theirs), 1u);
    auto t = _lake->table_for_topic(theirs);
    ASSERT_TRUE(t) << t.error();
    auto removed = (*t)->expire_before(int64_t(1) << 50);  // every row is older than this
    ASSERT_TRUE(removed) << removed.error();
    EXPECT_EQ(*removed, 1u);
    EXPECT_EQ(files_of(theirs), 0u);
    EXPECT_EQ(files_of(mine), mine_before);
}

TEST_F(SharedTableTest, OffsetAndTimeLookupsReturnOnlyTheTopicsRows) {
    remote_reader rr(*_lake);
    for (size_t limit : {size_t(1000), size_t(7)}) {
        auto rows = rr.read_rows(mine, 0, 140, 200, limit);
        ASSERT_TRUE(rows) << rows.error();
        std::vector<std::string> got;
        for (auto& m : *rows) got.push_back(fmt::format("{}:{}", m.offset, *m.value));
        EXPECT_EQ(got, expected(mine, 140, 140 + int64_t(std::min<size_t>(limit, 60)))) << limit;
    }
    auto theirs_rows = rr.read_rows(theirs, 0, 0, 1000, 1000);
    ASSERT_TRUE(theirs_rows);
    EXPECT_EQ(theirs_rows->size(), 150u);
    for (auto& m : *theirs_rows) EXPECT_EQ(*m.value, fmt::format("{}/{}", theirs, m.offset));

    auto by_time = rr.find_by_time(mine, 0, 1000 + 145, 1000 + 155, 1000, 100);
    ASSERT_TRUE(by_time);
    std::vector<std::string> got;
    for (auto& m : *by_time) got.push_back(fmt::format("{}:{}", m.offset, *m.value));
    EXPECT_EQ(got, expected(mine, 145, 156));

    auto hit = rr.offset_for_timestamp(theirs, 0, 1000 + 120, 1000);
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->offset, 120);
    auto none = rr.offset_for_timestamp(theirs, 0, 1000 + 150, 1000);
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST(StreamKeys, BelongToExactlyOneTopic) {
    EXPECT_TRUE(is_stream_key_of("a", "a-0"));
    EXPECT_TRUE(is_stream_key_of("a", "a-12"));
    EXPECT_FALSE(is_stream_key_of("a", "a-"));
    EXPECT_FALSE(is_stream_key_of("a", "a-1-0"));  // topic a-1's partition 0
    EXPECT_TRUE(is_stream_key_of("a-1", "a-1-0"));
    EXPECT_FALSE(is_stream_key_of("a-1", "a-1"));  // topic a's partition 1
    EXPECT_FALSE(is_stream_key_of("a.b", "a_b-0"));
    for (auto* t : {"a", "a-1", "x.y", "x_y"})
        for (int p : {0, 7, 123}) EXPECT_TRUE(is_stream_key_of(t, stream_key_for(t, p)));
}

// The log refuses topics whose collision key is taken; the lake names tables with its own copy
// of the rule. They must agree, or two topics could share a table after all.
TEST(StreamKeys, CollisionKeyIsTheTableName) {
    std::mt19937 rng(12);
    const std::string alphabet = "aZ09._-:";
    for (int i = 0; i < 2000; ++i) {
        std::string name(1 + rng() % 20, 'a');
        for (auto& c : name) c = alphabet[rng() % alphabet.size()];
        EXPECT_EQ(log::log_manager::topic_collision_key(name), lake::table_name_for_topic(name)) << name;
    }
    EXPECT_EQ(log::log_manager::topic_collision_key("nc.mixed-events"), "nc_mixed_events");
}

} // namespace
} // namespace floe::tiering
