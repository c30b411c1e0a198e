#include "log/batch_builder.h"
#include "log/compression.h"
#include "tiering/batch_records.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"
#include "lake/table_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <filesystem>
#include <thread>

namespace floe::tiering {
namespace {

namespace fs = std::filesystem;

struct decoded {
    int64_t offset, timestamp;
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    bool operator==(const decoded&) const = default;
};

std::vector<decoded> decode_all(bytes_view batches) {
    std::vector<decoded> out;
    byte_buffer scratch;
    auto r = log::for_each_batch(batches, true, [&](const log::record_batch_header& h, bytes_view b) {
        auto rr = for_each_record(h, b, scratch, 64 << 20, [&](const record_view& v) -> result<void> {
            decoded d{v.offset, v.timestamp, {}, {}, {}};
            if (v.key) d.key = std::string(*v.key);
            if (v.value) d.value = std::string(*v.value);
            for (auto& hv : *v.headers)
                d.headers.emplace_back(std::string(hv.key),
                                       hv.value ? std::optional<std::string>(std::string(*hv.value)) : std::nullopt);
            out.push_back(std::move(d));
            return {};
        });
        EXPECT_TRUE(rr) << rr.error();
        return true;
    });
    EXPECT_TRUE(r) << r.error();
    return out;
}

decoded expected(int64_t o) {
    decoded d{o, 5000 + o * 3, {}, {}, {}};
    if (o % 7 != 0) d.key = "key-" + std::to_string(o % 100);
    if (o % 11 != 5) d.value = std::string("v\0x", 3) + std::to_string(o);
    for (int k = 0; k < o % 4; ++k)
        d.headers.emplace_back(k % 2 ? "b" : "a", k == 2 ? std::nullopt : std::optional<std::string>(fmt::format("h{}", k)));
    return d;
}

TEST(BatchBuilder, RoundTripsThroughTheDecoderForEveryCodec) {
    for (auto codec : {log::compression_codec::none, log::compression_codec::gzip, log::compression_codec::snappy,
                       log::compression_codec::lz4, log::compression_codec::zstd}) {
        log::batch_builder b;
        byte_buffer out;
        b.begin(100, codec);
        std::vector<decoded> want;
        for (int64_t o = 100; o < 140; ++o) {
            auto d = expected(o);
            std::vector<log::batch_builder::header> hs;
            for (auto& [k, v] : d.headers) hs.push_back({k, v ? std::optional<std::string_view>(*v) : std::nullopt});
            b.add(o, d.timestamp, d.key ? std::optional<std::string_view>(*d.key) : std::nullopt,
                  d.value ? std::optional<std::string_view>(*d.value) : std::nullopt, hs);
            want.push_back(d);
        }
        ASSERT_TRUE(b.finish(out));
        auto h = log::validate_batch(out);
        ASSERT_TRUE(h) << h.error();
        EXPECT_EQ(h->base_offset, 100);
        EXPECT_EQ(h->last_offset(), 139);
        EXPECT_EQ(h->record_count, 40);
        EXPECT_EQ(h->compression(), codec);
        EXPECT_EQ(decode_all(out), want) << int(codec);
    }
}

TEST(BatchRecords, CorruptRecordsAreErrorsNotCrashes) {
    log::batch_builder b;
    byte_buffer out;
    b.begin(0);
    b.add(0, 1, std::string_view("k"), std::string_view("v"));
    ASSERT_TRUE(b.finish(out));
    auto h = *log::parse_batch_header(out);
    byte_buffer scratch;
    for (size_t cut = log::batch_layout::header_size; cut < out.size(); ++cut) {
        auto r = for_each_record(h, bytes_view(out).first(cut), scratch, 1 << 20,
                                 [](const record_view&) -> result<void> { return {}; });
        EXPECT_FALSE(r) << cut;
    }
}

TEST(IndexedBatch, FindsRecordsByOffsetWithGapsForEveryCodec) {
    const std::vector<int64_t> offsets{10, 11, 13, 14, 20, 31};
    for (auto codec : {log::compression_codec::none, log::compression_codec::lz4, log::compression_codec::zstd}) {
        log::batch_builder b;
        byte_buffer out;
        b.begin(10, codec);
        for (auto o : offsets) {
            auto d = expected(o);
            std::vector<log::batch_builder::header> hs;
            for (auto& [k, v] : d.headers) hs.push_back({k, v ? std::optional<std::string_view>(*v) : std::nullopt});
            b.add(o, d.timestamp, d.key ? std::optional<std::string_view>(*d.key) : std::nullopt,
                  d.value ? std::optional<std::string_view>(*d.value) : std::nullopt, hs);
        }
        ASSERT_TRUE(b.finish(out));
        auto ib = indexed_batch::build(out, 1 << 20);
        ASSERT_TRUE(ib) << ib.error();
        ASSERT_EQ((*ib)->size(), offsets.size());
        std::vector<header_view> hs;
        for (int64_t want = 9; want <= 32; ++want) {
            size_t i = 99;
            auto r = (*ib)->at_or_after(want, i, hs);
            ASSERT_TRUE(r) << r.error();
            auto it = std::lower_bound(offsets.begin(), offsets.end(), want);
            if (it == offsets.end()) {
                EXPECT_FALSE(r->has_value()) << want;
                continue;
            }
            ASSERT_TRUE(r->has_value()) << want;
            EXPECT_EQ(i, size_t(it - offsets.begin()));
            auto d = expected(*it);
            EXPECT_EQ((*r)->offset, *it);
            EXPECT_EQ((*r)->timestamp, d.timestamp);
            EXPECT_EQ((*r)->value ? std::optional<std::string>(std::string(*(*r)->value)) : std::nullopt, d.value);
            EXPECT_EQ((*r)->headers->size(), d.headers.size());
        }
        // A flipped byte anywhere after the CRC field is caught before any record is used.
        out[out.size() - 2] ^= 0x40;
        auto bad = indexed_batch::build(out, 1 << 20);
        ASSERT_FALSE(bad);
        EXPECT_EQ(bad.error().code(), errc::corrupt);
    }
}

class RemoteReaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path() / fmt::format("floe-remote-reader-{}", ::getpid());
        fs::remove_all(_dir);
        fs::create_directories(_dir);
        auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
        ASSERT_TRUE(cat);
        lake::lake_options o;
        o.warehouse = "file://" + (_dir / "warehouse").string();
        o.parquet.target_file_size = 64 << 10; // several files
        o.parquet.row_group_size = 64 << 10;
        _lake = std::make_unique<lake::iceberg_lake>(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                                                     std::make_shared<iceberg::local_file_io>(), o);
        // Offsets 0..2999 of t-0 in two commits.
        for (auto [from, to] : {std::pair<int64_t, int64_t>{0, 1500}, {1500, 3000}}) {
            auto t = _lake->table_for_topic("t");
            auto app = (*t)->begin_append();
            ASSERT_TRUE(app);
            for (int64_t o = from; o < to; ++o) {
                auto d = expected(o);
                std::vector<parquet::message_header_view> hs;
                for (auto& [k, v] : d.headers) hs.push_back({k, v ? std::optional<std::string_view>(*v) : std::nullopt});
                auto id = std::to_string(o);
                parquet::message_row row;
                row.stream_key = "t-0";
                row.segment_id = from;
                row.message_id = id;
                row.message_ts = d.timestamp;
                row.kafka_timestamp = d.timestamp;
                if (d.key) row.key = *d.key;
                if (d.value) row.value = *d.value;
                row.headers = std::span<const parquet::message_header_view>(hs);
                row.offset = o;
                ASSERT_TRUE((*app)->add(row));
            }
            ASSERT_TRUE((*app)->commit({{"t-0", to}}));
        }
    }
    void TearDown() override { fs::remove_all(_dir); }
    fs::path _dir;
    std::unique_ptr<lake::iceberg_lake> _lake;
};

TEST_F(RemoteReaderTest, ReadsEveryRecordInOrderAcrossFiles) {
    remote_reader rr(*_lake, 1 << 20);
    auto start = rr.start_offset("t", 0);
    ASSERT_TRUE(start && *start);
    EXPECT_EQ(**start, 0);
    int64_t next = 0;
    std::vector<decoded> got;
    for (int i = 0; i < 1000 && next < 3000; ++i) {
        auto r = rr.read("t", 0, next, 3000, 32 << 10);
        ASSERT_TRUE(r) << r.error();
        ASSERT_GT(r->records, 0u);
        auto d = decode_all(r->batches);
        EXPECT_EQ(d.front().offset, next);
        got.insert(got.end(), d.begin(), d.end());
        next = r->next_offset;
    }
    ASSERT_EQ(got.size(), 3000u);
    for (int64_t o = 0; o < 3000; ++o) ASSERT_EQ(got[size_t(o)], expected(o)) << o;
    EXPECT_GT(rr.stats().hits, 0u);
}

TEST_F(RemoteReaderTest, RespectsTheLocalLimitAndMissingRanges) {
    remote_reader rr(*_lake);
    auto r = rr.read("t", 0, 2990, 2995, 1 << 20);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->records, 5u);
    EXPECT_EQ(r->next_offset, 2995);
    auto none = rr.read("t", 0, 5000, 6000, 1 << 20);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->records, 0u);
    auto other = rr.read("t", 1, 0, 100, 1 << 20);
    ASSERT_TRUE(other);
    EXPECT_EQ(other->records, 0u);
    auto unknown = rr.start_offset("nope", 0);
    ASSERT_TRUE(unknown);
    EXPECT_FALSE(*unknown);
}

TEST_F(RemoteReaderTest, OffsetForTimestamp) {
    remote_reader rr(*_lake);
    auto hit = rr.offset_for_timestamp("t", 0, 5000 + 1000 * 3 + 1, 3000);
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->offset, 1001);
    auto beyond = rr.offset_for_timestamp("t", 0, 1'000'000, 3000);
    ASSERT_TRUE(beyond);
    EXPECT_FALSE(*beyond);
}

} // namespace
} // namespace floe::tiering

namespace floe::tiering {
namespace {

/// Rewrites every live file of topic t's table into new files (one replace commit), then
/// deletes the replaced files: what compaction followed by expiry does.
void rewrite_and_delete(lake::iceberg_lake& lk) {
    auto table = lk.table_for_topic("t");
    ASSERT_TRUE(table) << table.error();
    lake::table_reader tr(lk, "t");
    auto files = tr.files();
    ASSERT_TRUE(files) << files.error();
    std::vector<std::string> uris;
    for (auto& f : *files) uris.push_back(f.uri);
    auto rw = (*table)->begin_rewrite(uris);
    ASSERT_TRUE(rw) << rw.error();
    for (auto& f : *files) {
        auto rows = tr.read_file(f);
        ASSERT_TRUE(rows) << rows.error();
        std::vector<parquet::message_header_view> hs;
        for (auto& r : *rows) {
            parquet::message_row row;
            row.stream_key = r.stream_key;
            row.segment_id = r.segment_id;
            row.message_id = r.message_id;
            row.message_ts = r.message_ts;
            row.kafka_timestamp = r.kafka_timestamp;
            if (r.key) row.key = *r.key;
            if (r.value) row.value = *r.value;
            hs.clear();
            if (r.headers)
                for (auto& h : *r.headers)
                    hs.push_back({h.key, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt});
            if (r.headers) row.headers = std::span<const parquet::message_header_view>(hs);
            row.offset = r.offset;
            ASSERT_TRUE((*rw)->add(row));
        }
    }
    ASSERT_TRUE((*rw)->commit({}));
    for (auto& u : uris) ASSERT_TRUE(lk.io().remove(u));
}

// Compaction replaces files and expiry deletes the old ones while consumers read: a fetch that
// planned a file which is gone by the time it opens it plans again from the current metadata.
TEST_F(RemoteReaderTest, FetchReplansWhenAPlannedFileIsGone) {
    auto table = _lake->table_for_topic("t");
    ASSERT_TRUE(table);
    std::atomic<bool> stop{false};
    std::atomic<int> rewrites{0};
    std::thread rewriter([&] {
        while (!stop) {
            rewrite_and_delete(*_lake);
            if (::testing::Test::HasFatalFailure()) return;
            ++rewrites;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
    struct join_at_exit {
        std::atomic<bool>& stop;
        std::thread& t;
        ~join_at_exit() {
            stop = true;
            if (t.joinable()) t.join();
        }
    } joiner{stop, rewriter};
    remote_reader rr(*_lake, 1);  // no cache: every read opens its files
    int reads = 0;
    for (; reads < 400 && rewrites < 40; ++reads) {
        int64_t next = 0;
        size_t got = 0;
        for (int i = 0; i < 1000 && next < 3000; ++i) {
            auto r = rr.read("t", 0, next, 3000, 256 << 10);
            ASSERT_TRUE(r) << r.error() << " (after " << rewrites << " rewrites)";
            ASSERT_GT(r->records, 0u);
            auto d = decode_all(r->batches);
            ASSERT_EQ(d.front().offset, next);
            got += d.size();
            next = r->next_offset;
        }
        ASSERT_EQ(got, 3000u);
    }
    stop = true;
    rewriter.join();
    EXPECT_GT(rewrites, 2);
    EXPECT_GT(reads, 2);
}

} // namespace
} // namespace floe::tiering

namespace floe::tiering {
namespace {

/// The catalog of a lake whose readers see a commit only after they planned: armed, the next
/// metadata_location() answers the current location, but first runs `on_lookup` (which commits
/// a rewrite through another catalog object and deletes the files it replaced). So the reader
/// plans from a version whose files are gone by the time it opens them, every time.
class stale_once_catalog final : public iceberg::catalog {
public:
    stale_once_catalog(std::unique_ptr<iceberg::catalog> in, std::function<void()> on_lookup)
        : _in(std::move(in)), _on_lookup(std::move(on_lookup)) {}
    void arm() { _armed = true; }
    bool armed() const { return _armed; }
    result<void> create_namespace_if_missing(const std::string& ns) override {
        return _in->create_namespace_if_missing(ns);
    }
    result<bool> namespace_exists(const std::string& ns) override { return _in->namespace_exists(ns); }
    result<std::optional<std::string>> metadata_location(const iceberg::table_ident& t) override {
        auto loc = _in->metadata_location(t);
        if (_armed.exchange(false)) _on_lookup();
        return loc;
    }
    result<void> create_table(const iceberg::table_ident& t, const std::string& l) override {
        return _in->create_table(t, l);
    }
    result<void> swap(const iceberg::table_ident& t, const std::string& e, const std::string& n) override {
        return _in->swap(t, e, n);
    }
    result<std::vector<std::string>> list_tables(const std::string& ns) override { return _in->list_tables(ns); }
    std::string metadata_file_name(int64_t v) const override { return _in->metadata_file_name(v); }

private:
    std::unique_ptr<iceberg::catalog> _in;
    std::function<void()> _on_lookup;
    std::atomic<bool> _armed{false};
};

// The lookups behind the HTTP API (by key, by offset, by time) and ListOffsets by time: a file
// planned from the metadata of before a compaction and deleted by expiry before it is opened
// makes the lookup plan again from the current metadata, not fail. Deterministic: the catalog
// runs the rewrite right after telling the reader where the (then current) metadata is.
TEST_F(RemoteReaderTest, LookupsReplanWhenAPlannedFileIsGone) {
    auto writer_cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
    ASSERT_TRUE(writer_cat);
    lake::iceberg_lake writer(std::shared_ptr<iceberg::catalog>(std::move(*writer_cat)),
                              std::make_shared<iceberg::local_file_io>(), _lake->options());
    auto reader_cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
    ASSERT_TRUE(reader_cat);
    auto stale = std::make_shared<stale_once_catalog>(std::move(*reader_cat), [&] { rewrite_and_delete(writer); });
    lake::iceberg_lake reading(stale, std::make_shared<iceberg::local_file_io>(), _lake->options());

    auto check = [&](const char* what, auto lookup) {
        SCOPED_TRACE(what);
        remote_reader rr(reading, 1); // a new reader: nothing of the old files is open or cached
        ASSERT_TRUE(rr.start_offset("t", 0)); // plans (opens no file): the reader knows this version
        stale->arm();
        lookup(rr);
        EXPECT_FALSE(stale->armed()) << "the rewrite did not run";
    };
    check("by offset", [](remote_reader& rr) {
        auto rows = rr.read_rows("t", 0, 1490, 3000, 20);
        ASSERT_TRUE(rows) << rows.error();
        ASSERT_EQ(rows->size(), 20u);
        for (size_t i = 0; i < rows->size(); ++i) EXPECT_EQ((*rows)[i].offset, 1490 + int64_t(i));
    });
    check("by key", [](remote_reader& rr) {
        auto rows = rr.find_by_key("t", "key-42", true);
        ASSERT_TRUE(rows) << rows.error();
        size_t want = 0;
        for (int64_t o = 0; o < 3000; ++o) want += expected(o).key == std::optional<std::string>("key-42");
        EXPECT_EQ(rows->size(), want);
        for (auto& m : *rows) EXPECT_EQ(m.key, std::optional<std::string>("key-42"));
    });
    check("by time", [](remote_reader& rr) {
        auto rows = rr.find_by_time("t", 0, expected(100).timestamp, expected(199).timestamp, 3000, 1000);
        ASSERT_TRUE(rows) << rows.error();
        ASSERT_EQ(rows->size(), 100u);
        EXPECT_EQ(rows->front().offset, 100);
        EXPECT_EQ(rows->back().offset, 199);
    });
    check("offset for timestamp", [](remote_reader& rr) {
        auto hit = rr.offset_for_timestamp("t", 0, expected(2500).timestamp, 3000);
        ASSERT_TRUE(hit) << hit.error();
        ASSERT_TRUE(*hit);
        EXPECT_EQ((*hit)->offset, 2500);
    });
}

// Issue 26: history the local marker says was offloaded, below the local start, that the table
// does not hold (another lake, a restored catalog) is in neither tier. Every read below the local
// start then fails with a retriable error naming the table, never "nothing there"; the gap is
// listed until the table holds it or DeleteRecords (the floor) gives it up.
TEST_F(RemoteReaderTest, HistoryTheTableMissesIsAnErrorNeverNothing) {
    remote_reader rr(*_lake);
    remote_reader::tier_marks marks{5000, 4000}; // offloaded up to 5000, local from 4000; table: 3000
    int64_t floor = 0;
    rr.set_tier_marks([&](const std::string& topic, int32_t p) -> std::optional<remote_reader::tier_marks> {
        if (topic != "t" || p != 0) return std::nullopt;
        return marks;
    });
    rr.set_records_floor([&](const std::string&, int32_t) { return floor; });
    auto missing = [](const auto& r, const char* what) {
        SCOPED_TRACE(what);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), errc::unavailable) << r.error();
        EXPECT_NE(r.error().message().find("misses offsets 3000..3999 of t-0"), std::string::npos) << r.error();
    };
    EXPECT_TRUE(rr.history_gaps().empty()); // nothing read yet
    missing(rr.check_history("t", 0), "check_history");
    missing(rr.read("t", 0, 3500, 4000, 1 << 20), "read in the gap");
    missing(rr.read("t", 0, 0, 4000, 1 << 20), "read below it");
    missing(rr.start_offset("t", 0), "start_offset");
    missing(rr.recent_start_offset("t", 0, std::chrono::seconds(1)), "recent_start_offset (remembered)");
    missing(rr.read_rows("t", 0, 10, 4000, 5), "read_rows");
    missing(rr.find_by_time("t", 0, 0, INT64_MAX, 4000, 5), "find_by_time");
    auto gaps = rr.history_gaps();
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_NE(gaps[0].find("misses offsets 3000..3999 of t-0"), std::string::npos) << gaps[0];
    EXPECT_NE(gaps[0].find("floe."), std::string::npos) << gaps[0]; // the table, namespace-qualified
    // Another partition, and reads with no marks, are not affected.
    EXPECT_TRUE(rr.check_history("t", 1));
    // The local tier still holds what the table misses: no gap.
    marks = {5000, 3000};
    EXPECT_TRUE(rr.check_history("t", 0));
    EXPECT_TRUE(rr.history_gaps().empty());
    // The marker says no more than the table holds: no gap (3000..3999 were never offloaded).
    marks = {3000, 4000};
    EXPECT_TRUE(rr.check_history("t", 0));
    // Back in the gap, then DeleteRecords up to the local start gives it up.
    marks = {5000, 4000};
    missing(rr.check_history("t", 0), "again");
    EXPECT_EQ(rr.history_gaps().size(), 1u);
    floor = 4000;
    EXPECT_TRUE(rr.history_gaps().empty());
    auto r = rr.read("t", 0, 0, 4000, 1 << 20); // below the floor: nothing, by intent
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->records, 0u);
}

} // namespace
} // namespace floe::tiering
