// The log cleaner (compacted topics): latest record per key kept at its offset, tombstones kept
// until delete.retention.ms after their first cleaning, keyless records dropped, the active
// segment never touched, dirty ratio / min / max compaction lag respected, tiered partitions
// cleaned only below the offload marker, producers' last batches kept, compressed batches
// re-encoded with their codec, and recovery of a log with offset gaps (indexes lost, a
// leftover temp file, reads at every offset), and transactions (aborted records go, nothing at
// or above the last stable offset is cleaned).
#include "log/batch_builder.h"
#include "log/cleaner.h"
#include "log/compression.h"
#include "log/offset_map.h"
#include "log/partition_log.h"
#include "log/record_batch_header.h"
#include "log/records.h"
#include "log/tests/test_util.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <unordered_map>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;
namespace fs = std::filesystem;

namespace {

topic_config compact_config() {
    topic_config c;
    c.cleanup_policy = "compact";
    c.min_cleanable_dirty_ratio = 0.01;
    c.delete_retention_ms = 60'000;
    return c;
}

struct fixture {
    temp_dir tmp;
    manual_clock clock;
    topic_config cfg = compact_config();
    std::shared_ptr<partition_log> log;

    void open() {
        log.reset();
        partition_log_options o;
        o.dir = tmp.path / "c-0";
        o.tp = {"c", 0};
        o.config = cfg;
        o.clock = &clock;
        auto r = partition_log::open(o);
        ASSERT_TRUE(r) << r.error();
        log = *r;
    }

    // Appends one batch of (key, value) records; nullopt value = tombstone, nullopt key = keyless.
    int64_t append(std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> recs,
                   compression_codec codec = compression_codec::none, int64_t pid = -1,
                   int32_t seq = -1) {
        batch_builder b;
        b.begin(0, codec, pid, pid >= 0 ? 0 : -1, seq);
        int64_t i = 0;
        for (auto& [k, v] : recs) {
            std::optional<std::string_view> kv, vv;
            if (k) kv = *k;
            if (v) vv = *v;
            b.add(i++, clock.now_ms(), kv, vv);
        }
        byte_buffer out;
        EXPECT_TRUE(b.finish(out));
        auto r = log->append(out);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, append_status::ok) << r->message;
        return r->base_offset();
    }

    result<clean_stats> clean(cleaner_options o = {}) {
        o.clock = &clock;
        log_cleaner c(o);
        return c.clean(*log);
    }

    // Cleans until a pass finds nothing left (at most `max_passes`); the passes that cleaned,
    // or -1 after a failed pass.
    int clean_until_done(const cleaner_options& o, int max_passes) {
        for (int passes = 0; passes < max_passes; ++passes) {
            auto st = clean(o);
            EXPECT_TRUE(st) << st.error();
            if (!st) return -1;
            if (!st->cleaned) return passes;
        }
        return max_passes;
    }
};

struct rec {
    int64_t offset;
    std::optional<std::string> key, value;
    bool operator==(const rec&) const = default;
};

// Every record from `from` on, read through read() batch after batch (as a consumer does: the
// next fetch starts after the last offset of the previous batch); checks CRCs and headers.
std::vector<rec> read_all(partition_log& l, int64_t from = 0, std::vector<record_batch_header>* hdrs = nullptr) {
    std::vector<rec> out;
    int64_t at = from;
    byte_buffer scratch;
    while (at < l.log_end_offset()()) {
        auto r = l.read(kafka_offset(at), {.max_bytes = 1 << 20});
        EXPECT_TRUE(r) << r.error();
        if (!r || r->slices.empty()) break;
        byte_buffer bytes;
        EXPECT_TRUE(r->copy_to(bytes));
        auto walked = for_each_batch(bytes, true, [&](const record_batch_header& h, bytes_view b) {
            if (hdrs) hdrs->push_back(h);
            bytes_view body = b.subspan(batch_layout::header_size);
            if (h.compression() != compression_codec::none) {
                EXPECT_TRUE(decompress(h.compression(), body, scratch, 1 << 26));
                body = scratch;
            }
            std::vector<header_view> hv;
            EXPECT_TRUE(for_each_record_body(h, body, [&](int32_t, bytes_view rb) -> result<void> {
                auto r2 = FLOE_TRY(decode_record(h, rb, hv));
                if (r2.offset >= at) {
                    rec x{r2.offset, {}, {}};
                    if (r2.key) x.key = std::string(*r2.key);
                    if (r2.value) x.value = std::string(*r2.value);
                    out.push_back(x);
                }
                return {};
            }));
            at = std::max(at, h.last_offset() + 1);
            return true;
        });
        EXPECT_TRUE(walked);
    }
    return out;
}

std::optional<std::string> s(const char* v) { return std::string(v); }
const std::optional<std::string> tomb;

// The expected compacted view: latest record per key among `all` (offsets below `end` only are
// compacted; from `end` on everything stays).
std::vector<rec> latest_per_key(const std::vector<rec>& all, int64_t end) {
    std::map<std::string, int64_t> last;
    for (auto& r : all)
        if (r.offset < end && r.key) last[*r.key] = r.offset;
    std::vector<rec> out;
    for (auto& r : all)
        if (r.offset >= end || (r.key && last[*r.key] == r.offset)) out.push_back(r);
    return out;
}

} // namespace

TEST(cleaner, keeps_the_latest_record_per_key_with_offset_gaps) {
    fixture f;
    f.open();
    // Three sealed segments of repeated keys and a tombstone, then an active segment.
    f.append({{s("a"), s("a1")}, {s("b"), s("b1")}, {s("c"), s("c1")}});
    f.append({{s("a"), s("a2")}, {s("b"), tomb}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("a"), s("a3")}, {s("c"), s("c2")}}, compression_codec::gzip);
    f.append({{s("d"), s("d1")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("d"), s("d2")}, {s("e"), s("e1")}}, compression_codec::zstd);
    ASSERT_TRUE(f.log->roll());
    f.append({{s("a"), s("a4")}}); // active: never cleaned
    auto before = read_all(*f.log);
    ASSERT_EQ(before.size(), 11u);
    auto active_base = f.log->segments().back().base_offset();

    auto st = f.clean();
    ASSERT_TRUE(st) << st.error();
    EXPECT_TRUE(st->cleaned) << st->skipped;
    EXPECT_EQ(st->cleaned_up_to, active_base);
    auto after = read_all(*f.log);
    EXPECT_EQ(after, latest_per_key(before, active_base));
    // b's tombstone stays (delete.retention.ms not over); a1, a2, b1, c1, d1 are gone.
    EXPECT_EQ(st->records_removed, 5u);
    // Offsets skip what was removed; the log's offsets did not move.
    EXPECT_EQ(after.front().offset, 4); // b's tombstone
    EXPECT_EQ(f.log->offsets().log_start(), 0);
    EXPECT_EQ(f.log->offsets().log_end(), 11);
    // A read at any offset returns the first record at or after it.
    for (int64_t o = 0; o < 11; ++o) {
        auto got = read_all(*f.log, o);
        ASSERT_FALSE(got.empty()) << o;
        auto want = std::find_if(after.begin(), after.end(), [&](const rec& r) { return r.offset >= o; });
        EXPECT_EQ(got.front(), *want) << o;
    }
    // Compressed batches stay compressed with their codec.
    std::vector<record_batch_header> hdrs;
    read_all(*f.log, 0, &hdrs);
    bool saw_zstd = false;
    for (auto& h : hdrs) saw_zstd |= h.compression() == compression_codec::zstd;
    EXPECT_TRUE(saw_zstd);

    // Reopen: recovery accepts the gaps (trusted indexes), and again with the indexes gone.
    f.open();
    EXPECT_EQ(read_all(*f.log), after);
    EXPECT_EQ(f.log->last_recovery().truncated_bytes, 0u);
    for (auto& e : fs::directory_iterator(f.tmp.path / "c-0"))
        if (e.path().extension() == ".index" || e.path().extension() == ".timeindex") fs::remove(e.path());
    // A temp file left by a crash before a swap is removed.
    {
        auto tmp = f.tmp.path / "c-0" / "00000000000000000000.log.cleaning.tmp";
        FILE* fp = std::fopen(tmp.c_str(), "w");
        std::fputs("junk", fp);
        std::fclose(fp);
    }
    f.open();
    EXPECT_EQ(read_all(*f.log), after);
    EXPECT_EQ(f.log->last_recovery().truncated_bytes, 0u);
    EXPECT_GE(f.log->last_recovery().indexes_rebuilt, 3u);
    EXPECT_FALSE(fs::exists(f.tmp.path / "c-0" / "00000000000000000000.log.cleaning.tmp"));
    // Appends go on at the log end.
    EXPECT_EQ(f.append({{s("f"), s("f1")}}), 11);

    // Nothing dirty: a second pass does nothing.
    auto again = f.clean();
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->cleaned);
}

TEST(cleaner, tombstones_go_after_delete_retention) {
    fixture f;
    f.open();
    f.append({{s("a"), s("a1")}, {s("b"), s("b1")}});
    f.append({{s("a"), tomb}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("x"), s("x1")}});
    ASSERT_TRUE(f.clean());
    auto v = read_all(*f.log);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[1], (rec{2, s("a"), tomb})); // the tombstone stays for now
    // More dirty data; before the horizon the tombstone still stays.
    f.append({{s("b"), s("b2")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("y"), s("y1")}});
    f.clock.advance(std::chrono::milliseconds(30'000));
    ASSERT_TRUE(f.clean());
    v = read_all(*f.log);
    EXPECT_EQ(v, (std::vector<rec>{{2, s("a"), tomb}, {3, s("x"), s("x1")}, {4, s("b"), s("b2")}, {5, s("y"), s("y1")}}));
    // Past delete.retention.ms after the first cleaning: the tombstone goes.
    f.append({{s("z"), s("z1")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("w"), s("w1")}});
    f.clock.advance(std::chrono::milliseconds(31'000));
    auto st = f.clean();
    ASSERT_TRUE(st);
    EXPECT_EQ(st->tombstones_removed, 1u);
    v = read_all(*f.log);
    EXPECT_EQ(v.front(), (rec{3, s("x"), s("x1")}));
    EXPECT_EQ(f.log->offsets().log_start(), 0); // the log start does not move
}

TEST(cleaner, respects_dirty_ratio_lags_and_the_offload_marker) {
    fixture f;
    f.cfg.min_cleanable_dirty_ratio = 0.99;
    f.open();
    f.append({{s("a"), s("1")}, {s("a"), s("2")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("a"), s("3")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("b"), s("1")}});
    // First pass: everything is dirty (ratio 1).
    auto st = f.clean();
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->cleaned);
    EXPECT_EQ(read_all(*f.log).size(), 2u);
    // A small dirty segment after a big clean section: below the ratio, nothing happens.
    f.append({{s("b"), s("2")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("c"), s("1")}});
    st = f.clean();
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->cleaned);
    EXPECT_NE(st->skipped.find("dirty ratio"), std::string::npos) << st->skipped;
    // max.compaction.lag.ms forces it once the dirty data is old enough.
    f.cfg.max_compaction_lag_ms = 10'000;
    f.log->update_config(f.cfg);
    st = f.clean();
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->cleaned);
    f.clock.advance(std::chrono::milliseconds(10'001));
    st = f.clean();
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->cleaned) << st->skipped;

    // min.compaction.lag.ms: segments with records younger than it are not cleanable.
    fixture g;
    g.cfg.min_compaction_lag_ms = 5'000;
    g.open();
    g.append({{s("a"), s("1")}, {s("a"), s("2")}});
    ASSERT_TRUE(g.log->roll());
    g.append({{s("b"), s("1")}});
    st = g.clean();
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->cleaned);
    g.clock.advance(std::chrono::milliseconds(5'000));
    st = g.clean();
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->cleaned) << st->skipped;

    // Tiered: only segments wholly below the offload marker (the table gets every record).
    fixture t;
    t.cfg.remote_storage_enable = true;
    t.open();
    t.append({{s("a"), s("1")}, {s("a"), s("2")}});
    ASSERT_TRUE(t.log->roll());
    t.append({{s("a"), s("3")}, {s("a"), s("4")}});
    ASSERT_TRUE(t.log->roll());
    t.append({{s("b"), s("1")}});
    st = t.clean();
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->cleaned);
    ASSERT_TRUE(t.log->set_offloaded_up_to(kafka_offset(2)));
    st = t.clean();
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->cleaned);
    EXPECT_EQ(st->cleaned_up_to, 2);
    // Only the first segment was compacted (a=1 gone); the second is intact.
    auto v = read_all(*t.log);
    EXPECT_EQ(v.size(), 4u);
    EXPECT_EQ(v.front().offset, 1);

    // Not compacted: nothing.
    fixture d;
    d.cfg.cleanup_policy = "delete";
    d.open();
    st = d.clean();
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->cleaned);
}

TEST(cleaner, keeps_a_producers_last_batch_and_drops_keyless_records) {
    fixture f;
    f.open();
    // An idempotent producer's only batch is superseded entirely by a later plain one.
    f.append({{s("a"), s("p0")}, {s("b"), s("p1")}}, compression_codec::lz4, 7, 0);
    f.append({{s("a"), s("x")}, {s("b"), s("y")}, {std::nullopt, s("keyless")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("z"), s("1")}});
    ASSERT_TRUE(f.clean());
    std::vector<record_batch_header> hdrs;
    auto v = read_all(*f.log, 0, &hdrs);
    EXPECT_EQ(v, (std::vector<rec>{{2, s("a"), s("x")}, {3, s("b"), s("y")}, {5, s("z"), s("1")}}));
    ASSERT_GE(hdrs.size(), 2u);
    // The emptied batch keeps producer id, epoch, sequence and its offset span.
    EXPECT_EQ(hdrs[0].producer_id, 7);
    EXPECT_EQ(hdrs[0].record_count, 0);
    EXPECT_EQ(hdrs[0].base_offset, 0);
    EXPECT_EQ(hdrs[0].last_offset_delta, 1);
    EXPECT_EQ(hdrs[0].base_sequence, 0);
    // The rewritten batch: offsets span kept (last offset delta 2), record count 2.
    EXPECT_EQ(hdrs[1].base_offset, 2);
    EXPECT_EQ(hdrs[1].last_offset_delta, 2);
    EXPECT_EQ(hdrs[1].record_count, 2);
    // After a crash (no producer snapshot) the producer state is rebuilt from the log: a retry
    // of its batch is still a duplicate.
    f.log->close();
    fs::remove(f.tmp.path / "c-0" / "producers.snapshot");
    f.open();
    auto ps = f.log->producer(7);
    ASSERT_TRUE(ps);
    EXPECT_EQ(ps->last_seq(), 1);
}

TEST(cleaner, reads_skip_emptied_segments_and_gaps) {
    fixture f;
    f.open();
    // Three segments whose every record a later one supersedes, then the survivors.
    for (int seg = 0; seg < 3; ++seg) {
        f.append({{s("a"), s("old")}, {s("b"), s("old")}});
        ASSERT_TRUE(f.log->roll());
    }
    f.append({{s("a"), s("new")}, {s("b"), s("new")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("c"), s("active")}});
    auto st = f.clean();
    ASSERT_TRUE(st);
    ASSERT_TRUE(st->cleaned);
    auto segs = f.log->segments();
    ASSERT_EQ(segs.size(), 5u);
    EXPECT_EQ(segs[0].size_bytes, 0u);
    EXPECT_EQ(segs[2].size_bytes, 0u);
    // A fetch at 0 with a record cap far below the first surviving offset (Kafka's handler
    // passes max_offset = fetch offset + records left) still returns the first batch.
    for (int64_t at : {0, 1, 2, 5}) {
        auto r = f.log->read(kafka_offset(at), {.max_bytes = 1 << 20, .max_offset = kafka_offset(at + 1)});
        ASSERT_TRUE(r) << at << ": " << r.error();
        ASSERT_EQ(r->slices.size(), 1u) << at;
        EXPECT_EQ(r->slices[0].first_offset(), 6) << at;
    }
    EXPECT_EQ(read_all(*f.log), (std::vector<rec>{{6, s("a"), s("new")}, {7, s("b"), s("new")}, {8, s("c"), s("active")}}));
    // Retention does not take emptied segments for records below the DeleteRecords floor.
    ASSERT_TRUE(f.log->apply_retention(std::nullopt));
    EXPECT_EQ(f.log->offsets().log_start(), 0);
    f.open();
    EXPECT_EQ(read_all(*f.log).size(), 3u);
}

TEST(cleaner, segments_larger_than_its_read_chunk_and_batches_larger_than_it) {
    fixture f;
    f.cfg.max_message_bytes = 16 << 20;
    f.open();
    // 12 batches of ~700 KB (they straddle the cleaner's 4 MiB read chunks), then one ~6 MB
    // batch, all in one segment; keys k0..k9 repeated.
    std::string big(70'000, 'x');
    for (int b = 0; b < 12; ++b) {
        std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> recs;
        for (int i = 0; i < 10; ++i) recs.push_back({fmt::format("k{}", i), fmt::format("{}-{}-{}", b, i, big)});
        f.append(recs);
    }
    std::string huge(600'000, 'y');
    std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> recs;
    for (int i = 0; i < 10; ++i) recs.push_back({fmt::format("k{}", i % 5), fmt::format("last-{}-{}", i, huge)});
    f.append(recs);
    ASSERT_TRUE(f.log->roll());
    f.append({{s("z"), s("active")}});
    auto before = read_all(*f.log);
    auto st = f.clean();
    ASSERT_TRUE(st) << st.error();
    ASSERT_TRUE(st->cleaned) << st->skipped;
    auto after = read_all(*f.log);
    EXPECT_EQ(after, latest_per_key(before, 130));
    EXPECT_EQ(after.size(), 11u); // k0..k4 from the huge batch, k5..k9 from batch 11, z
}

TEST(cleaner, an_emptied_batch_goes_once_its_producer_wrote_again) {
    fixture f;
    f.open();
    f.append({{s("a"), s("1")}}, compression_codec::none, 9, 0);
    f.append({{s("a"), s("2")}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("x"), s("1")}});
    ASSERT_TRUE(f.clean());
    std::vector<record_batch_header> hdrs;
    read_all(*f.log, 0, &hdrs);
    ASSERT_FALSE(hdrs.empty());
    EXPECT_EQ(hdrs[0].record_count, 0); // producer 9's last batch: kept empty
    // Producer 9 writes again; the next pass drops the empty batch.
    f.append({{s("b"), s("1")}}, compression_codec::none, 9, 1);
    ASSERT_TRUE(f.log->roll());
    f.append({{s("y"), s("1")}});
    ASSERT_TRUE(f.clean());
    hdrs.clear();
    auto v = read_all(*f.log, 0, &hdrs);
    EXPECT_EQ(hdrs[0].base_offset, 1);
    EXPECT_EQ(v.front(), (rec{1, s("a"), s("2")}));
    // delete.retention.ms at its maximum does not overflow the horizon.
    f.cfg.delete_retention_ms = INT64_MAX;
    f.log->update_config(f.cfg);
    f.append({{s("a"), tomb}});
    ASSERT_TRUE(f.log->roll());
    f.append({{s("z"), s("1")}});
    ASSERT_TRUE(f.clean());
    v = read_all(*f.log);
    EXPECT_TRUE(std::find(v.begin(), v.end(), rec{5, s("a"), tomb}) != v.end());
}

// Transactions on a compacted topic: an aborted transaction's record never becomes a key's
// latest value (it goes, the committed value stays), and nothing at or above the last stable
// offset is cleaned while a transaction is open.
TEST(cleaner, aborted_records_go_and_open_transactions_wait) {
    fixture f;
    f.open();
    auto txn_append = [&](int64_t pid, int32_t seq, std::string_view key, std::string_view value) {
        batch_builder b;
        b.begin(0, compression_codec::none, pid, 0, seq);
        b.add(0, f.clock.now_ms(), key, value);
        byte_buffer out;
        EXPECT_TRUE(b.finish(out));
        out[batch_layout::attributes + 1] |= uint8_t(batch_attr::transactional);
        uint32_t crc = compute_batch_crc(out);
        for (int i = 0; i < 4; ++i) out[batch_layout::crc + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
        auto r = f.log->append(out);
        EXPECT_TRUE(r) << r.error();
        EXPECT_EQ(r->status, append_status::ok) << r->message;
        return r->base_offset();
    };
    f.append({{s("a"), s("committed")}});                 // 0
    txn_append(7, 0, "a", "aborted");                    // 1
    ASSERT_TRUE(f.log->append_txn_marker(7, 0, txn_marker::abort, 0)); // 2
    ASSERT_TRUE(f.log->roll());
    f.append({{s("b"), s("b1")}});                        // 3
    ASSERT_TRUE(f.log->roll());
    f.append({{s("z"), s("active")}});                    // 4, active
    auto st = f.clean();
    ASSERT_TRUE(st) << st.error();
    EXPECT_TRUE(st->cleaned) << st->skipped;
    auto v = read_all(*f.log);
    EXPECT_TRUE(std::find(v.begin(), v.end(), rec{0, s("a"), s("committed")}) != v.end());
    for (auto& r : v) EXPECT_NE(r.value, s("aborted")) << r.offset;

    // An open transaction holds the cleaner below its first offset.
    ASSERT_TRUE(f.log->roll());
    const int64_t open_at = txn_append(8, 0, "b", "open"); // 5
    ASSERT_TRUE(f.log->roll());
    f.append({{s("b"), s("b2")}}); // 6
    ASSERT_TRUE(f.log->roll());
    f.append({{s("z"), s("active2")}});
    ASSERT_EQ(f.log->last_stable_offset()(), open_at);
    st = f.clean();
    ASSERT_TRUE(st) << st.error();
    EXPECT_LE(st->cleaned_up_to, open_at);
    v = read_all(*f.log);
    EXPECT_TRUE(std::find(v.begin(), v.end(), rec{open_at, s("b"), s("open")}) != v.end());
    EXPECT_TRUE(std::find(v.begin(), v.end(), rec{3, s("b"), s("b1")}) != v.end())
        << "b1 stays while the segment holding b's newer value is above the last stable offset";
}

// The key map's digest: a function of the secret and every byte of the key (its length too).
TEST(cleaner, key_digests_differ_for_distinct_keys_and_secrets) {
    const digest_secret sa{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    const digest_secret sb{0x0706050403020100ull, 0x0f0e0d0c0b0a0909ull};
    auto dig = [](const digest_secret& s, std::string_view k) { return digest_key(s, as_bytes(k)); };
    std::set<std::pair<uint64_t, uint64_t>> seen;
    std::vector<std::string> keys = {"", std::string(1, '\0'), std::string(2, '\0'),
                                     std::string(7, '\0'), std::string(8, '\0'), std::string(9, '\0'),
                                     "a", "b", "ab", "ba", "abcdefgh", "abcdefghi", "abcdefgi"};
    for (int i = 0; i < 200'000; ++i) keys.push_back(fmt::format("key-{:06}", i));
    for (auto& k : keys) {
        auto d = dig(sa, k);
        EXPECT_TRUE(seen.insert({d.lo, d.hi}).second) << "digest shared by two keys, e.g. " << k;
        EXPECT_EQ(d, dig(sa, k)); // deterministic for one secret
        EXPECT_NE(d, dig(sb, k)); // another secret (another pass): another digest
    }
    EXPECT_EQ(seen.size(), keys.size());
}

// The offset map against a plain map: latest offset per key, which batch held the entry it
// replaced, across growth.
TEST(cleaner, offset_map_keeps_the_latest_offset_and_batch_of_each_digest) {
    const auto secret = digest_secret::random();
    offset_map m;
    std::unordered_map<std::string, std::pair<int64_t, uint32_t>> model;
    std::mt19937_64 rng(7);
    int64_t offset = 0;
    for (int i = 0; i < 300'000; ++i) {
        auto key = fmt::format("k{}", rng() % 50'000);
        auto d = digest_key(secret, as_bytes(key));
        // Mostly increasing offsets, sometimes an older one (which must not win).
        int64_t o = (rng() % 10 == 0 && offset > 100) ? offset - 100 : offset++;
        uint32_t batch = uint32_t(o / 7);
        uint32_t replaced = UINT32_MAX;
        bool fresh = false;
        bool took = m.put(d, o, batch, replaced, fresh);
        auto it = model.find(key);
        if (it == model.end()) {
            EXPECT_TRUE(took);
            EXPECT_TRUE(fresh);
            model[key] = {o, batch};
        } else if (it->second.first < o) {
            EXPECT_TRUE(took);
            EXPECT_FALSE(fresh);
            EXPECT_EQ(replaced, it->second.second);
            it->second = {o, batch};
        } else {
            EXPECT_FALSE(took);
            EXPECT_FALSE(fresh);
        }
    }
    EXPECT_EQ(m.size(), model.size());
    for (auto& [k, v] : model) EXPECT_EQ(m.latest(digest_key(secret, as_bytes(k))), v.first) << k;
    EXPECT_EQ(m.latest(digest_key(secret, as_bytes(std::string_view("absent")))), -1);
    EXPECT_GE(m.memory_bytes(), model.size() * sizeof(offset_map::entry));
}

namespace {

struct full_rec {
    int64_t offset = 0, timestamp = 0;
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    bool operator==(const full_rec&) const = default;
};

// Every record with its timestamp and headers, and each batch's bytes by base offset.
std::vector<full_rec> read_full(partition_log& l, std::map<int64_t, byte_buffer>* batches = nullptr) {
    std::vector<full_rec> out;
    int64_t at = 0;
    byte_buffer scratch;
    for (int guard = 0; at < l.log_end_offset()() && guard < 100'000; ++guard) {
        auto r = l.read(kafka_offset(at), {.max_bytes = 1 << 20});
        EXPECT_TRUE(r) << r.error();
        if (!r || r->slices.empty()) break;
        byte_buffer bytes;
        EXPECT_TRUE(r->copy_to(bytes));
        EXPECT_TRUE(for_each_batch(bytes, true, [&](const record_batch_header& h, bytes_view b) {
            if (h.last_offset() < at) return true;
            if (batches) (*batches)[h.base_offset] = byte_buffer(b.begin(), b.end());
            bytes_view body = b.subspan(batch_layout::header_size);
            if (h.compression() != compression_codec::none) {
                EXPECT_TRUE(decompress(h.compression(), body, scratch, 1 << 26));
                body = scratch;
            }
            std::vector<header_view> hv;
            EXPECT_TRUE(for_each_record_body(h, body, [&](int32_t, bytes_view rb) -> result<void> {
                auto r2 = FLOE_TRY(decode_record(h, rb, hv));
                full_rec x{r2.offset, r2.timestamp, {}, {}, {}};
                if (r2.key) x.key = std::string(*r2.key);
                if (r2.value) x.value = std::string(*r2.value);
                for (auto& e : hv)
                    x.headers.push_back({std::string(e.key), e.value ? std::optional<std::string>(std::string(*e.value))
                                                                     : std::nullopt});
                out.push_back(std::move(x));
                return {};
            }));
            at = std::max(at, h.last_offset() + 1);
            return true;
        }));
    }
    return out;
}

} // namespace

// Randomized: six segments of batches in every codec, with record headers, distinct
// timestamps, tombstones and keyless records, cleaned in passes of one segment each (a dedupe
// buffer of one byte) and then in one pass; the result is the latest record of each key with
// its timestamp and headers as written, and a batch whose records all stay keeps its bytes.
TEST(cleaner, random_log_in_every_codec_matches_the_latest_per_key_with_headers_and_timestamps) {
    for (size_t dedupe : {size_t(1), size_t(128) << 20}) {
        SCOPED_TRACE(dedupe);
        fixture f;
        f.cfg.delete_retention_ms = INT64_MAX; // tombstones stay: the model keeps them
        f.open();
        std::mt19937_64 rng(dedupe);
        const compression_codec codecs[] = {compression_codec::none, compression_codec::lz4,
                                            compression_codec::zstd, compression_codec::gzip,
                                            compression_codec::snappy};
        int64_t ts = 1'700'000'000'000;
        for (int seg = 0; seg < 6; ++seg) {
            for (int b = 0; b < 15; ++b) {
                batch_builder bb;
                bb.begin(0, codecs[rng() % 5]);
                int n = 1 + int(rng() % 25);
                for (int i = 0; i < n; ++i) {
                    auto key = fmt::format("key-{}", rng() % 40);
                    auto value = fmt::format("v{}-{}", seg, rng());
                    std::string hk = fmt::format("h{}", i);
                    std::vector<batch_builder::header> hs;
                    if (rng() % 2) hs.push_back({hk, std::string_view(value).substr(0, 3)});
                    if (rng() % 4 == 0) hs.push_back({"null", std::nullopt});
                    ts += int64_t(rng() % 1000) - 300; // not monotonic
                    uint64_t kind = rng() % 20;
                    if (kind == 0) bb.add(i, ts, std::nullopt, std::string_view(value), hs);
                    else if (kind == 1) bb.add(i, ts, std::string_view(key), std::nullopt, hs);
                    else bb.add(i, ts, std::string_view(key), std::string_view(value), hs);
                }
                byte_buffer out;
                ASSERT_TRUE(bb.finish(out));
                auto r = f.log->append(out);
                ASSERT_TRUE(r && r->status == append_status::ok);
            }
            if (seg == 5) // a batch of keys written once only: all its records stay
                f.append({{s("once-1"), s("x")}, {s("once-2"), s("y")}}, compression_codec::lz4);
            ASSERT_TRUE(f.log->roll());
        }
        f.append({{s("key-1"), s("active")}}); // the active segment: never cleaned
        const int64_t active_base = f.log->segments().back().base_offset();
        std::map<int64_t, byte_buffer> batches_before;
        auto before = read_full(*f.log, &batches_before);
        const int64_t once_base = before[before.size() - 3].offset;
        ASSERT_EQ(before[before.size() - 3].key, s("once-1"));

        cleaner_options o;
        o.dedupe_buffer_bytes = dedupe;
        EXPECT_EQ(f.clean_until_done(o, 20), dedupe == 1 ? 6 : 1);

        // The model: the latest record of each key below the active segment, keyless ones gone.
        std::map<std::string, int64_t> last;
        for (auto& r : before)
            if (r.offset < active_base && r.key) last[*r.key] = r.offset;
        std::vector<full_rec> want;
        for (auto& r : before)
            if (r.offset >= active_base || (r.key && last[*r.key] == r.offset)) want.push_back(r);
        std::map<int64_t, byte_buffer> batches_after;
        auto after = read_full(*f.log, &batches_after);
        EXPECT_EQ(after.size(), want.size());
        EXPECT_TRUE(after == want);
        ASSERT_TRUE(batches_after.contains(once_base));
        EXPECT_TRUE(batches_after[once_base] == batches_before[once_base]);
        // Recovery reads the same log back.
        f.open();
        EXPECT_TRUE(read_full(*f.log) == want);
    }
}

// The cleaner's reusable decompressor: lz4 frames of any size (past its first buffer), the
// output bound, and a corrupt or truncated frame that fails without spoiling the next call.
TEST(cleaner, batch_decompressor_reuses_its_lz4_context_across_frames) {
    batch_decompressor dec;
    std::mt19937_64 rng(3);
    for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(70'000), size_t(3) << 20, size_t(9) << 20}) {
        byte_buffer plain(n);
        for (size_t i = 0; i < n; ++i) plain[i] = uint8_t(i % 251 < 200 ? 'a' + (i % 7) : rng());
        auto packed = compress(compression_codec::lz4, plain);
        ASSERT_TRUE(packed);
        auto out = dec.decompress(compression_codec::lz4, *packed, 64u << 20);
        ASSERT_TRUE(out) << n << ": " << out.error();
        EXPECT_TRUE(std::equal(out->begin(), out->end(), plain.begin(), plain.end())) << n;
        // Truncated: an error, and the next frame decodes again.
        if (packed->size() > 8) {
            auto cut = bytes_view(*packed).first(packed->size() / 2);
            EXPECT_FALSE(dec.decompress(compression_codec::lz4, cut, 64u << 20)) << n;
        }
        // Past the bound: refused.
        if (n > 1000) {
            EXPECT_FALSE(dec.decompress(compression_codec::lz4, *packed, n - 1)) << n;
        }
        out = dec.decompress(compression_codec::lz4, *packed, 64u << 20);
        ASSERT_TRUE(out) << n;
        EXPECT_EQ(out->size(), n);
    }
    // Other codecs go through decompress(); none is the input itself.
    auto z = compress(compression_codec::zstd, as_bytes(std::string_view("zstd frame")));
    ASSERT_TRUE(z);
    auto zo = dec.decompress(compression_codec::zstd, *z, 1 << 20);
    ASSERT_TRUE(zo);
    EXPECT_EQ(as_chars(*zo), "zstd frame");
    auto raw = as_bytes(std::string_view("plain"));
    auto ro = dec.decompress(compression_codec::none, raw, 1 << 20);
    ASSERT_TRUE(ro);
    EXPECT_EQ(ro->data(), raw.data());
}

// Segments of more records than one unit of the map pass's reader (32,768), so that the reader
// runs ahead of the map by several units, and a dedupe buffer that ends each pass after one
// segment while the reader has already queued the next one's units (it is cancelled).
TEST(cleaner, map_pass_reader_ahead_by_many_units_and_cancelled_at_the_buffer_limit) {
    for (size_t dedupe : {size_t(1), size_t(128) << 20}) {
        SCOPED_TRACE(dedupe);
        fixture f;
        f.open();
        std::vector<rec> all;
        int64_t offset = 0;
        for (int seg = 0; seg < 3; ++seg) {
            for (int b = 0; b < 250; ++b) {
                batch_builder bb;
                bb.begin(0, b % 2 ? compression_codec::lz4 : compression_codec::none);
                for (int i = 0; i < 200; ++i) {
                    auto key = fmt::format("k{}", (offset * 7919) % 3000);
                    auto value = fmt::format("v{}", offset);
                    bb.add(i, 1'700'000'000'000 + offset, std::string_view(key), std::string_view(value));
                    all.push_back({offset++, key, value});
                }
                byte_buffer out;
                ASSERT_TRUE(bb.finish(out));
                auto r = f.log->append(out);
                ASSERT_TRUE(r && r->status == append_status::ok);
            }
            ASSERT_TRUE(f.log->roll());
        }
        f.append({{s("z"), s("active")}});
        all.push_back({offset, s("z"), s("active")});
        cleaner_options o;
        o.dedupe_buffer_bytes = dedupe;
        EXPECT_EQ(f.clean_until_done(o, 10), dedupe == 1 ? 3 : 1);
        auto after = read_all(*f.log);
        EXPECT_EQ(after.size(), 3001u);
        EXPECT_TRUE(after == latest_per_key(all, offset));
    }
}
