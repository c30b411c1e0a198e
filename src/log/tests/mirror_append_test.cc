// Mirror partitions (ingest): batches kept at the source's offsets, gaps kept, nothing below the
// log end appended, append() refused, recovery after restart (clean and torn) keeping the gaps.
#include "log/batch_builder.h"
#include "log/log_manager.h"
#include "log/partition_log.h"
#include "log/record_batch_header.h"
#include "log/records.h"
#include "log/segment_scanner.h"
#include "log/tests/test_util.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<partition_log> open_mirror(const fs::path& dir, bool mirror = true,
                                           topic_config cfg = {}) {
    partition_log_options o;
    o.dir = dir;
    o.tp = {"m", 0};
    o.config = cfg;
    o.mirror = mirror;
    auto r = partition_log::open(o);
    EXPECT_TRUE(r) << r.error();
    return r ? *r : nullptr;
}

// One batch of `n` records at offsets first..first+n-1, value "v<offset>".
byte_buffer batch_at(int64_t first, int n) {
    batch_builder b;
    b.begin(first);
    std::vector<std::string> vals;
    for (int i = 0; i < n; ++i) vals.push_back(fmt::format("v{}", first + i));
    batch_builder::header h{"h", std::string_view("x")};
    for (int i = 0; i < n; ++i)
        b.add(first + i, 1'700'000'000'000 + first + i, std::string_view("k"), vals[size_t(i)],
              std::span<const batch_builder::header>(&h, 1));
    byte_buffer out;
    EXPECT_TRUE(b.finish(out));
    return out;
}

// Every (offset, value) the partition holds from `from`, read back through read() and decoded.
std::vector<std::pair<int64_t, std::string>> read_all(partition_log& l, int64_t from) {
    std::vector<std::pair<int64_t, std::string>> out;
    int64_t at = from;
    while (at < l.log_end_offset()()) {
        auto r = l.read(kafka_offset(at), {.max_bytes = 1 << 20});
        EXPECT_TRUE(r) << r.error();
        if (!r || r->slices.empty()) break;
        byte_buffer bytes;
        EXPECT_TRUE(r->copy_to(bytes));
        size_t pos = 0;
        while (pos < bytes.size()) {
            bytes_view rest(bytes.data() + pos, bytes.size() - pos);
            auto h = parse_batch_header(rest);
            EXPECT_TRUE(h);
            if (!h) return out;
            EXPECT_EQ(compute_batch_crc(rest.first(h->size_bytes())), h->crc);
            auto body = rest.subspan(batch_layout::header_size, h->size_bytes() - batch_layout::header_size);
            std::vector<header_view> hv;
            EXPECT_TRUE(for_each_record_body(*h, body, [&](int32_t, bytes_view rb) -> result<void> {
                auto rec = FLOE_TRY(decode_record(*h, rb, hv));
                if (rec.offset >= at) out.emplace_back(rec.offset, std::string(rec.value.value_or("")));
                return {};
            }));
            at = h->last_offset() + 1;
            pos += h->size_bytes();
        }
    }
    return out;
}

std::vector<std::pair<int64_t, std::string>> expected(std::initializer_list<std::pair<int64_t, int>> runs) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (auto [first, n] : runs)
        for (int i = 0; i < n; ++i) out.emplace_back(first + i, fmt::format("v{}", first + i));
    return out;
}

TEST(MirrorAppend, KeepsSourceOffsetsAndGaps) {
    temp_dir d;
    auto l = open_mirror(d.path);
    auto a = batch_at(500, 3);
    auto r = l->mirror_append(a);
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, append_status::ok) << r->message;
    EXPECT_EQ(r->base_offset(), 500);
    EXPECT_EQ(r->last_offset(), 502);
    // The empty first segment was re-based: the mirror starts where the source does.
    EXPECT_EQ(l->log_start_offset()(), 500);
    EXPECT_EQ(l->log_end_offset()(), 503);
    // Two batches in one call with a gap between them, then a gap before the next call.
    auto b = batch_at(510, 2);
    auto c = batch_at(520, 1);
    byte_buffer bc = b;
    bc.insert(bc.end(), c.begin(), c.end());
    r = l->mirror_append(bc);
    ASSERT_TRUE(r && r->status == append_status::ok) << (r ? r->message : r.error().message());
    EXPECT_EQ(r->base_offset(), 510);
    EXPECT_EQ(r->last_offset(), 520);
    EXPECT_EQ(l->log_end_offset()(), 521);
    EXPECT_EQ(read_all(*l, 500), expected({{500, 3}, {510, 2}, {520, 1}}));
    // Reading from inside a gap starts at the next record after it.
    EXPECT_EQ(read_all(*l, 505), expected({{510, 2}, {520, 1}}));
    // The bytes on disk are the batch as given (no patch): CRC valid through the scanner.
    auto segs = l->segments();
    ASSERT_EQ(segs.size(), 1u);
    EXPECT_EQ(segs[0].base_offset(), 500);
    EXPECT_EQ(segs[0].batch_count, 3u);
}

TEST(MirrorAppend, RefusesBelowLogEndAndAddsNothing) {
    temp_dir d;
    auto l = open_mirror(d.path);
    ASSERT_TRUE(l->mirror_append(batch_at(0, 5)));
    auto before = l->segments()[0].size_bytes;
    // A replay of what is already there, and one overlapping the end.
    for (auto [first, n] : {std::pair{0, 5}, std::pair{3, 2}, std::pair{4, 4}}) {
        auto b = batch_at(first, n);
        auto r = l->mirror_append(b);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, append_status::below_log_end) << first;
        EXPECT_NE(r->message.find("below the log end 5"), std::string::npos) << r->message;
    }
    EXPECT_EQ(l->segments()[0].size_bytes, before);
    EXPECT_EQ(l->log_end_offset()(), 5);
    // Batches inside one call must go forward.
    auto x = batch_at(10, 2);
    auto y = batch_at(11, 1);
    x.insert(x.end(), y.begin(), y.end());
    auto r = l->mirror_append(x);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::invalid_record);
    EXPECT_EQ(l->log_end_offset()(), 5);
    // Exactly at the end is fine.
    auto z = batch_at(5, 1);
    r = l->mirror_append(z);
    ASSERT_TRUE(r && r->status == append_status::ok);
    EXPECT_EQ(read_all(*l, 0), expected({{0, 6}}));
}

TEST(MirrorAppend, RefusesCorruptBatch) {
    temp_dir d;
    auto l = open_mirror(d.path);
    auto b = batch_at(7, 2);
    b[b.size() - 1] ^= 0x5a; // a record byte: covered by the CRC
    auto r = l->mirror_append(b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::corrupt);
    EXPECT_EQ(l->log_end_offset()(), 0);
}

TEST(MirrorAppend, ProduceRefusedOnMirrorAndMirrorAppendOnPlainLog) {
    temp_dir d1, d2;
    auto m = open_mirror(d1.path);
    auto b = batch_at(0, 1);
    auto r = m->append(b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::mirror_read_only);
    EXPECT_EQ(m->log_end_offset()(), 0);
    auto plain = open_mirror(d2.path, false);
    auto c = batch_at(3, 1);
    r = plain->mirror_append(c);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::mirror_read_only);
}

TEST(MirrorAppend, RecoversGapsAcrossSegmentsAfterRestart) {
    temp_dir d;
    topic_config cfg;
    cfg.segment_bytes = 300; // a few batches per segment
    {
        auto l = open_mirror(d.path, true, cfg);
        for (int64_t first : {100, 104, 200, 203, 1000, 1003, 5000})
            ASSERT_TRUE(l->mirror_append(batch_at(first, 2)));
        ASSERT_GT(l->segments().size(), 2u);
        ASSERT_TRUE(l->roll());
        ASSERT_TRUE(l->mirror_append(batch_at(9000, 2))); // after a roll: re-based empty segment
        ASSERT_TRUE(l->close());
    }
    auto want = expected({{100, 2}, {104, 2}, {200, 2}, {203, 2}, {1000, 2}, {1003, 2}, {5000, 2}, {9000, 2}});
    {
        auto l = open_mirror(d.path, true, cfg);
        EXPECT_EQ(l->last_recovery().truncated_bytes, 0u) << l->last_recovery().detail;
        EXPECT_EQ(l->log_start_offset()(), 100);
        EXPECT_EQ(l->log_end_offset()(), 9002);
        EXPECT_EQ(read_all(*l, 100), want);
        // The resume point is the local log end: a replay from an older position adds nothing.
        auto again = batch_at(5000, 2);
        auto r = l->mirror_append(again);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, append_status::below_log_end);
        ASSERT_TRUE(l->close());
    }
    // Index files lost (a crash before sealing): every segment is scanned, gaps accepted.
    for (auto& e : fs::directory_iterator(d.path))
        if (e.path().extension() == ".index" || e.path().extension() == ".timeindex") fs::remove(e.path());
    auto l = open_mirror(d.path, true, cfg);
    EXPECT_EQ(l->last_recovery().truncated_bytes, 0u) << l->last_recovery().detail;
    EXPECT_EQ(read_all(*l, 100), want);
}

TEST(MirrorAppend, TornTailCutAtLastWholeBatch) {
    temp_dir d;
    fs::path seg;
    {
        auto l = open_mirror(d.path);
        ASSERT_TRUE(l->mirror_append(batch_at(40, 3)));
        ASSERT_TRUE(l->mirror_append(batch_at(60, 3)));
        ASSERT_TRUE(l->close());
        seg = l->segments().back().path;
    }
    auto size = fs::file_size(seg);
    fs::resize_file(seg, size - 5);
    auto l = open_mirror(d.path);
    EXPECT_GT(l->last_recovery().truncated_bytes, 0u);
    EXPECT_EQ(l->log_end_offset()(), 43);
    EXPECT_EQ(read_all(*l, 40), expected({{40, 3}}));
    // The resume point is the log end after the cut: the lost batch comes again and fits.
    auto r = l->mirror_append(batch_at(60, 3));
    ASSERT_TRUE(r && r->status == append_status::ok);
    EXPECT_EQ(read_all(*l, 40), expected({{40, 3}, {60, 3}}));
}

TEST(MirrorAppend, PlainLogRecoveryStillRefusesGaps) {
    // A gap is only accepted in a mirror: the scanner keeps the strict chain otherwise.
    auto a = batch_at(0, 2);
    auto b = batch_at(5, 1);
    byte_buffer both = a;
    both.insert(both.end(), b.begin(), b.end());
    auto strict = scan_segment_bytes(both, 0);
    EXPECT_EQ(strict.batches, 1u);
    EXPECT_EQ(strict.next_offset, 2);
    auto gaps = scan_segment_bytes(both, 0, {}, true);
    EXPECT_EQ(gaps.batches, 2u);
    EXPECT_EQ(gaps.next_offset, 6);
    // Going backwards is refused even with gaps allowed.
    byte_buffer back = b;
    back.insert(back.end(), a.begin(), a.end());
    EXPECT_EQ(scan_segment_bytes(back, 0, {}, true).batches, 1u);
}


TEST(MirrorAppend, MirrorTopicPersistsInTheTopicStore) {
    temp_dir d;
    auto open_mgr = [&] {
        log_manager_options o;
        o.data_dir = d.path;
        o.background_threads = false;
        auto m = log_manager::open(o);
        EXPECT_TRUE(m) << m.error();
        return m ? std::move(*m) : nullptr;
    };
    {
        auto m = open_mgr();
        auto t = m->create_topic("mir", 2, {}, false, "kafka:up");
        ASSERT_TRUE(t) << t.error();
        EXPECT_EQ(t->mirror_of, "kafka:up");
        ASSERT_TRUE(m->create_topic("plain", 1));
        auto p = m->partition("mir", 1);
        ASSERT_TRUE(p && p->is_mirror());
        ASSERT_TRUE(p->mirror_append(batch_at(70, 2)));
        ASSERT_TRUE(m->create_partitions("mir", 3));
        EXPECT_TRUE(m->partition("mir", 2)->is_mirror());
        ASSERT_TRUE(m->close());
    }
    auto m = open_mgr();
    EXPECT_EQ(m->topic("mir")->mirror_of, "kafka:up");
    EXPECT_EQ(m->topic("plain")->mirror_of, "");
    auto p = m->partition("mir", 1);
    ASSERT_TRUE(p && p->is_mirror());
    EXPECT_EQ(p->log_end_offset()(), 72);
    EXPECT_EQ(read_all(*p, 70), expected({{70, 2}}));
    EXPECT_FALSE(m->partition("plain", 0)->is_mirror());
    auto b = batch_at(0, 1);
    auto r = p->append(b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, append_status::mirror_read_only);
}

} // namespace
