// The conformance tests of the local-tier interface (see local_tier_conformance.h). Only what
// log/local_tier.h promises is checked: the records a reader gets back (offsets, keys, values,
// headers, timestamps), offsets, markers, segments as the storage worker sees them, producer
// state and topics. Never batch boundaries or bytes on disk.

#include "log/testing/local_tier_conformance.h"

#include "log/compression.h"
#include "log/record_batch_header.h"
#include "log/records.h"
#include "log/testing/batch_builder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

namespace floe::log::testing {
namespace {

struct got_record {
    int64_t offset = 0;
    int64_t timestamp = 0;
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

std::optional<std::string> opt(std::optional<std::string_view> v) {
    return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

/// Every record of whole batches in `bytes` (CRC checked), with LogAppendTime applied.
result<std::vector<got_record>> decode_all(bytes_view bytes) {
    std::vector<got_record> out;
    byte_buffer scratch;
    std::vector<header_view> hs;
    std::optional<error> err;
    auto walked = for_each_batch(bytes, true, [&](const record_batch_header& h, bytes_view b) {
        bytes_view data = b.subspan(batch_layout::header_size);
        if (h.compression() != compression_codec::none) {
            if (auto d = decompress(h.compression(), data, scratch, 64u << 20); !d) {
                err = d.error();
                return false;
            }
            data = scratch;
        }
        auto r = for_each_record_body(h, data, [&](int32_t, bytes_view body) -> result<void> {
            auto v = FLOE_TRY(decode_record(h, body, hs));
            auto& g = out.emplace_back();
            g.offset = v.offset;
            g.timestamp = h.is_log_append_time() ? h.max_timestamp : v.timestamp;
            g.key = opt(v.key);
            g.value = opt(v.value);
            for (auto& x : hs) g.headers.emplace_back(std::string(x.key), opt(x.value));
            return {};
        });
        if (!r) {
            err = r.error();
            return false;
        }
        return true;
    });
    if (err) return fail(std::move(*err));
    FLOE_TRY(std::move(walked));
    return out;
}

/// Every record from `from` to the log end, read as a consumer would (1 MiB fetches).
std::vector<got_record> read_all(const local_partition& p, int64_t from) {
    std::vector<got_record> all;
    int64_t next = from, end = p.log_end_offset()();
    while (next < end) {
        auto rd = p.read(kafka_offset(next), {.max_bytes = 1 << 20});
        EXPECT_TRUE(rd) << "read at " << next << ": " << (rd ? "" : rd.error().message());
        if (!rd || rd->slices.empty()) break;
        byte_buffer buf;
        EXPECT_TRUE(rd->copy_to(buf));
        EXPECT_EQ(buf.size(), rd->total_bytes);
        auto recs = decode_all(buf);
        EXPECT_TRUE(recs) << (recs ? "" : recs.error().message());
        if (!recs || recs->empty()) break;
        EXPECT_LE(recs->front().offset, next) << "the first batch holds the offset asked for";
        for (auto& r : *recs)
            if (r.offset >= next) all.push_back(std::move(r));
        if (recs->back().offset < next) break;
        next = recs->back().offset + 1;
    }
    return all;
}

test_record rec(std::string key, std::string value, int64_t ts,
                std::vector<std::pair<std::string, std::optional<std::string>>> headers = {}) {
    test_record r;
    r.key = std::move(key);
    r.value = std::move(value);
    r.timestamp_ms = ts;
    r.headers = std::move(headers);
    return r;
}

result<append_result> append(local_partition& p, byte_buffer bytes) {
    return p.append(std::span<uint8_t>(bytes.data(), bytes.size()));
}

/// A transactional producer's batch: make_batch with the transactional attribute (CRC redone).
byte_buffer txn_batch(size_t n, int64_t pid, int16_t epoch, int32_t seq) {
    auto b = make_batch(n, 20, 1000, {.producer_id = pid, .producer_epoch = epoch, .base_sequence = seq});
    b[batch_layout::attributes + 1] |= uint8_t(batch_attr::transactional);
    uint32_t crc = compute_batch_crc(b);
    for (int i = 0; i < 4; ++i) b[batch_layout::crc + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
    return b;
}

} // namespace

void local_tier_conformance::SetUp() {
    std::string why;
    _store = GetParam().make_store(why);
    if (!_store) FAIL() << GetParam().name << " could not start: " << why;
}

void local_tier_conformance::TearDown() {
    if (_tier) (void)_tier->close();
    _tier.reset();
    _store.reset();
}

local_tier& local_tier_conformance::open(const config_map& defaults) {
    if (_tier) {
        EXPECT_TRUE(_tier->close());
        _tier.reset();
    }
    auto t = _store->open(defaults);
    if (!t) throw std::runtime_error(fmt::format("the backend did not open: {}", t.error().message()));
    _tier = std::move(*t);
    return *_tier;
}

std::shared_ptr<local_partition> local_tier_conformance::create(local_tier& t, const std::string& name,
                                                                int32_t parts, const config_map& overrides) {
    auto c = t.create_topic(name, parts, overrides);
    EXPECT_TRUE(c) << (c ? "" : c.error().message());
    auto p = t.partition(name, 0);
    EXPECT_TRUE(p);
    return p;
}

namespace {

TEST_P(local_tier_conformance, topics_are_created_looked_up_altered_and_deleted) {
    auto& t = open({{"retention.ms", "600000"}});
    auto c = t.create_topic("orders.v1", 3, {{"retention.ms", "1234"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->partitions, 3);
    EXPECT_FALSE(c->id.is_nil());
    EXPECT_EQ(c->config.retention_ms, 1234);
    EXPECT_EQ(t.create_topic("orders.v1", 1).error().code(), errc::already_exists);
    EXPECT_EQ(t.create_topic("orders_v1", 1).error().code(), errc::already_exists) << "collision key";
    EXPECT_EQ(t.create_topic("bad name", 1).error().code(), errc::invalid_argument);
    EXPECT_FALSE(t.create_topic("x", 1, {{"segment.bytes", "nope"}}));
    EXPECT_FALSE(t.topic("x"));
    ASSERT_TRUE(t.create_topic("validate", 1, {}, true));
    EXPECT_FALSE(t.topic("validate"));
    EXPECT_FALSE(t.partition("validate", 0));

    auto by_name = t.topic("orders.v1");
    ASSERT_TRUE(by_name);
    auto by_id = t.topic(c->id);
    ASSERT_TRUE(by_id);
    EXPECT_EQ(by_id->name, "orders.v1");
    EXPECT_TRUE(t.partition("orders.v1", 2));
    EXPECT_FALSE(t.partition("orders.v1", 3));
    EXPECT_FALSE(t.partition("orders.v1", -1));
    EXPECT_TRUE(t.partition(c->id, 2));
    EXPECT_EQ(t.partition("orders.v1", 1)->tp().partition, 1);
    EXPECT_EQ(t.partition("orders.v1", 1)->tp().topic, "orders.v1");
    EXPECT_EQ(t.partition("orders.v1", 1)->topic_id(), c->id);

    auto grown = t.create_partitions("orders.v1", 5);
    ASSERT_TRUE(grown) << grown.error();
    EXPECT_EQ(grown->partitions, 5);
    EXPECT_TRUE(t.partition("orders.v1", 4));
    EXPECT_FALSE(t.create_partitions("orders.v1", 5));

    auto alt = t.alter_topic_config("orders.v1", {{"segment.ms", "60000"}});
    ASSERT_TRUE(alt) << alt.error();
    EXPECT_EQ(alt->config.segment_ms, 60000);
    EXPECT_EQ(alt->config.retention_ms, 600000) << "the override is gone: the broker default applies";
    EXPECT_EQ(t.partition("orders.v1", 0)->config().segment_ms, 60000);
    std::vector<config_op> ops{{"retention.ms", config_op::kind::set, "999"}};
    auto inc = t.incremental_alter_topic_config("orders.v1", ops);
    ASSERT_TRUE(inc) << inc.error();
    EXPECT_EQ(inc->config.retention_ms, 999);
    EXPECT_EQ(inc->config.segment_ms, 60000);

    ASSERT_TRUE(t.set_dynamic_topic_defaults({{"retention.ms", "777"}}));
    EXPECT_EQ(t.dynamic_topic_defaults().at("retention.ms"), "777");
    ASSERT_TRUE(t.create_topic("plain", 1));
    EXPECT_EQ(t.topic("plain")->config.retention_ms, 777);

    auto b = make_batch(3, 10, 1000);
    ASSERT_TRUE(append(*t.partition("orders.v1", 2), b));

    // Everything survives a restart.
    auto& t2 = open({{"retention.ms", "600000"}});
    auto again = t2.topic("orders.v1");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->id, c->id);
    EXPECT_EQ(again->partitions, 5);
    EXPECT_EQ(again->config.retention_ms, 999);
    EXPECT_EQ(again->config.segment_ms, 60000);
    EXPECT_EQ(t2.topic("plain")->config.retention_ms, 777);
    EXPECT_EQ(t2.partition("orders.v1", 2)->log_end_offset()(), 3);

    ASSERT_TRUE(t2.delete_topic("orders.v1"));
    EXPECT_FALSE(t2.topic("orders.v1"));
    EXPECT_FALSE(t2.partition("orders.v1", 0));
    EXPECT_EQ(t2.delete_topic("orders.v1").error().code(), errc::not_found);
    // The name is free again, with nothing of the old topic in it.
    auto re = t2.create_topic("orders.v1", 1);
    ASSERT_TRUE(re);
    EXPECT_NE(re->id, c->id);
    EXPECT_EQ(t2.partition("orders.v1", 0)->log_end_offset()(), 0);
    auto names = t2.topics();
    std::set<std::string> got;
    for (auto& x : names) got.insert(x.name);
    EXPECT_EQ(got, (std::set<std::string>{"orders.v1", "plain"}));
}

TEST_P(local_tier_conformance, appends_take_contiguous_offsets_and_read_back_every_record) {
    auto& t = open();
    auto p = create(t, "r");
    ASSERT_TRUE(p);
    std::vector<test_record> want;
    int64_t next = 0;
    for (int req = 0; req < 20; ++req) {
        byte_buffer bytes;
        // One to three batches per request, as a client batching several may send.
        int batches = 1 + req % 3;
        for (int b = 0; b < batches; ++b) {
            std::vector<test_record> rs;
            for (int i = 0; i < 1 + (req + b) % 4; ++i) {
                auto r = rec(fmt::format("k{}-{}-{}", req, b, i), std::string(size_t(1 + i * 37), char('a' + i)),
                             10'000 + req * 10 + i,
                             {{"h1", std::string("v") + char('0' + i)}, {"empty", std::nullopt}});
                if (i == 2) r.key.reset();
                if (i == 3) r.value.reset();
                rs.push_back(r);
            }
            append_batch(bytes, rs);
            want.insert(want.end(), rs.begin(), rs.end());
        }
        int64_t n = 0;
        ASSERT_TRUE((for_each_batch(bytes_view(bytes), false, [&](const record_batch_header& h, bytes_view) {
                         n += h.record_count;
                         return true;
                     })));
        auto ar = append(*p, std::move(bytes));
        ASSERT_TRUE(ar) << ar.error();
        ASSERT_EQ(ar->status, append_status::ok) << ar->message;
        EXPECT_EQ(ar->base_offset(), next);
        EXPECT_EQ(ar->last_offset(), next + n - 1);
        EXPECT_EQ(ar->log_append_time_ms, -1);
        next += n;
    }
    auto o = p->offsets();
    EXPECT_EQ(o.log_start(), 0);
    EXPECT_EQ(o.log_end(), next);
    EXPECT_EQ(o.high_watermark(), next);
    EXPECT_EQ(o.last_stable(), next);
    EXPECT_EQ(p->log_end_offset()(), next);
    EXPECT_EQ(p->log_start_offset()(), 0);

    auto all = read_all(*p, 0);
    ASSERT_EQ(all.size(), want.size());
    for (size_t i = 0; i < all.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(all[i].offset, int64_t(i));
        EXPECT_EQ(all[i].key, want[i].key);
        EXPECT_EQ(all[i].value, want[i].value);
        EXPECT_EQ(all[i].timestamp, want[i].timestamp_ms);
        EXPECT_EQ(all[i].headers, want[i].headers);
    }
    // A read at every offset starts with the batch holding it.
    for (int64_t at = 0; at < next; ++at) {
        auto rd = p->read(kafka_offset(at), {.max_bytes = 1});
        ASSERT_TRUE(rd) << rd.error();
        ASSERT_FALSE(rd->slices.empty());
        EXPECT_LE(rd->slices.front().first_offset(), at);
        EXPECT_GE(rd->slices.front().last_offset(), at);
        byte_buffer buf;
        ASSERT_TRUE(rd->copy_to(buf));
        auto recs = decode_all(buf);
        ASSERT_TRUE(recs) << recs.error();
        bool found = false;
        for (auto& r : *recs) found |= r.offset == at;
        EXPECT_TRUE(found) << "offset " << at;
        EXPECT_EQ(rd->offsets.log_end(), next);
    }
    auto at_end = p->read(kafka_offset(next));
    ASSERT_TRUE(at_end);
    EXPECT_TRUE(at_end->slices.empty());
    EXPECT_EQ(at_end->total_bytes, 0u);
    EXPECT_EQ(p->read(kafka_offset(next + 1)).error().code(), errc::out_of_range);

    // Records survive a restart.
    auto& t2 = open();
    auto p2 = t2.partition("r", 0);
    ASSERT_TRUE(p2);
    EXPECT_EQ(p2->log_end_offset()(), next);
    auto again = read_all(*p2, 0);
    ASSERT_EQ(again.size(), want.size());
    EXPECT_EQ(again.back().key, want.back().key);
    auto more = append(*p2, make_batch(2, 5, 50'000));
    ASSERT_TRUE(more);
    EXPECT_EQ(more->base_offset(), next);
}

TEST_P(local_tier_conformance, reads_respect_the_byte_budget_and_the_offset_bound) {
    auto& t = open();
    auto p = create(t, "budget");
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(append(*p, make_batch(10, 100, i * 100)));
    // min_one_batch: a budget of one byte still returns the first batch.
    auto one = p->read(kafka_offset(0), {.max_bytes = 1, .min_one_batch = true});
    ASSERT_TRUE(one);
    ASSERT_FALSE(one->slices.empty());
    EXPECT_GT(one->total_bytes, 0u);
    auto none = p->read(kafka_offset(0), {.max_bytes = 1, .min_one_batch = false});
    ASSERT_TRUE(none);
    EXPECT_EQ(none->total_bytes, 0u);
    // The budget bounds the answer (whole batches; the first one may pass it).
    auto some = p->read(kafka_offset(0), {.max_bytes = 4000, .min_one_batch = true});
    ASSERT_TRUE(some);
    EXPECT_LE(some->total_bytes, 4000u);
    EXPECT_GT(some->total_bytes, 0u);
    size_t sum = 0;
    for (auto& s : some->slices) sum += s.length;
    EXPECT_EQ(sum, some->total_bytes);
    // max_offset: nothing starting at or past it.
    auto bounded = p->read(kafka_offset(5), {.max_bytes = 1 << 20, .max_offset = kafka_offset(25)});
    ASSERT_TRUE(bounded);
    ASSERT_FALSE(bounded->slices.empty());
    for (auto& s : bounded->slices) EXPECT_LT(s.first_offset(), 25);
    byte_buffer buf;
    ASSERT_TRUE(bounded->copy_to(buf));
    auto recs = decode_all(buf);
    ASSERT_TRUE(recs);
    bool has24 = false;
    for (auto& r : *recs) has24 |= r.offset == 24;
    EXPECT_TRUE(has24);
}

TEST_P(local_tier_conformance, time_lookups) {
    auto& t = open();
    auto p = create(t, "times");
    EXPECT_FALSE(p->max_timestamp());
    auto none = p->offset_for_timestamp(0);
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    // Timestamps 1000.. rising, with one batch of older timestamps in the middle.
    ASSERT_TRUE(append(*p, make_batch(5, 10, 1000)));   // 0..4: 1000..1004
    ASSERT_TRUE(append(*p, make_batch(5, 10, 5000)));   // 5..9: 5000..5004
    ASSERT_TRUE(append(*p, make_batch(5, 10, 2000)));   // 10..14: 2000..2004
    ASSERT_TRUE(append(*p, make_batch(5, 10, 9000)));   // 15..19: 9000..9004
    auto at = [&](int64_t ts) -> int64_t {
        auto r = p->offset_for_timestamp(ts);
        EXPECT_TRUE(r);
        return r && *r ? (*r)->offset() : -1;
    };
    EXPECT_EQ(at(0), 0);
    EXPECT_EQ(at(1000), 0);
    EXPECT_EQ(at(1003), 3);
    EXPECT_EQ(at(1005), 5); // the first record with timestamp >= ts in offset order
    EXPECT_EQ(at(5004), 9);
    EXPECT_EQ(at(5005), 15);
    EXPECT_EQ(at(9004), 19);
    EXPECT_EQ(at(9005), -1);
    auto hit = p->offset_for_timestamp(1003);
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->timestamp_ms, 1003);
    auto m = p->max_timestamp();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->timestamp_ms, 9004);
    EXPECT_GE(m->offset(), 15);
    EXPECT_LE(m->offset(), 19);
    auto h = p->batch_header_at(kafka_offset(12));
    ASSERT_TRUE(h);
    ASSERT_TRUE(*h);
    EXPECT_LE((*h)->base_offset, 12);
    EXPECT_GE((*h)->last_offset(), 12);
    auto past = p->batch_header_at(kafka_offset(20));
    ASSERT_TRUE(past);
    EXPECT_FALSE(*past);
}

TEST_P(local_tier_conformance, log_append_time_topics_stamp_the_append_time) {
    auto& t = open();
    auto p = create(t, "lat", 1, {{"message.timestamp.type", "LogAppendTime"}});
    auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    auto ar = append(*p, make_batch(3, 10, 5));
    ASSERT_TRUE(ar) << ar.error();
    ASSERT_EQ(ar->status, append_status::ok);
    EXPECT_GE(ar->log_append_time_ms, before - 1000);
    auto all = read_all(*p, 0);
    ASSERT_EQ(all.size(), 3u);
    for (auto& r : all) EXPECT_EQ(r.timestamp, ar->log_append_time_ms);
}

TEST_P(local_tier_conformance, idempotent_producers_are_deduplicated_and_fenced) {
    auto& t = open();
    auto p = create(t, "idem");
    const int64_t pid = 4242;
    auto ar = append(*p, make_batch(3, 10, 0, {.producer_id = pid, .producer_epoch = 0, .base_sequence = 0}));
    ASSERT_TRUE(ar);
    ASSERT_EQ(ar->status, append_status::ok);
    auto ar2 = append(*p, make_batch(2, 10, 0, {.producer_id = pid, .producer_epoch = 0, .base_sequence = 3}));
    ASSERT_TRUE(ar2);
    ASSERT_EQ(ar2->status, append_status::ok);
    EXPECT_EQ(ar2->base_offset(), 3);
    // A retry of the first batch: not appended again, answered with its offsets.
    auto dup = append(*p, make_batch(3, 10, 0, {.producer_id = pid, .producer_epoch = 0, .base_sequence = 0}));
    ASSERT_TRUE(dup);
    EXPECT_EQ(dup->status, append_status::duplicate);
    EXPECT_EQ(dup->base_offset(), 0);
    EXPECT_EQ(dup->last_offset(), 2);
    EXPECT_EQ(p->log_end_offset()(), 5);
    auto gap = append(*p, make_batch(1, 10, 0, {.producer_id = pid, .producer_epoch = 0, .base_sequence = 9}));
    ASSERT_TRUE(gap);
    EXPECT_EQ(gap->status, append_status::out_of_order_sequence);
    // A new epoch starts at sequence 0 and fences the old one.
    auto e1 = append(*p, make_batch(1, 10, 0, {.producer_id = pid, .producer_epoch = 1, .base_sequence = 0}));
    ASSERT_TRUE(e1);
    EXPECT_EQ(e1->status, append_status::ok);
    auto stale = append(*p, make_batch(1, 10, 0, {.producer_id = pid, .producer_epoch = 0, .base_sequence = 5}));
    ASSERT_TRUE(stale);
    EXPECT_EQ(stale->status, append_status::invalid_producer_epoch);
    EXPECT_EQ(p->log_end_offset()(), 6);
    auto st = p->producer(pid);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->epoch, 1);
    EXPECT_EQ(st->last_seq(), 0);
    EXPECT_EQ(p->producers().size(), 1u);
    // Refused requests left nothing behind; the state survives a restart.
    auto& t2 = open();
    auto p2 = t2.partition("idem", 0);
    auto st2 = p2->producer(pid);
    ASSERT_TRUE(st2);
    EXPECT_EQ(st2->epoch, 1);
    auto dup2 = append(*p2, make_batch(1, 10, 0, {.producer_id = pid, .producer_epoch = 1, .base_sequence = 0}));
    ASSERT_TRUE(dup2);
    EXPECT_EQ(dup2->status, append_status::duplicate);
    EXPECT_EQ(dup2->base_offset(), 5);
    auto next = append(*p2, make_batch(2, 10, 0, {.producer_id = pid, .producer_epoch = 1, .base_sequence = 1}));
    ASSERT_TRUE(next);
    EXPECT_EQ(next->status, append_status::ok);
    EXPECT_EQ(next->base_offset(), 6);
    EXPECT_EQ(read_all(*p2, 0).size(), 8u);
}

TEST_P(local_tier_conformance, corrupt_requests_are_refused_whole) {
    auto& t = open();
    auto p = create(t, "bad");
    byte_buffer two = make_batch(2, 10, 0);
    auto second = make_batch(2, 10, 0);
    second[batch_layout::crc + 1] ^= 0x5a;
    two.insert(two.end(), second.begin(), second.end());
    auto ar = append(*p, std::move(two));
    ASSERT_TRUE(ar);
    EXPECT_EQ(ar->status, append_status::corrupt);
    EXPECT_EQ(p->log_end_offset()(), 0) << "nothing of a refused request is written";
    auto big = append(*p, make_batch(1, 2'000'000, 0));
    ASSERT_TRUE(big);
    EXPECT_EQ(big->status, append_status::message_too_large);
    EXPECT_EQ(p->log_end_offset()(), 0);
}

TEST_P(local_tier_conformance, segments_seal_and_the_offload_marker_only_moves_forward) {
    auto& t = open();
    auto p = create(t, "seg", 1, {{"segment.bytes", "2000"}, {"remote.storage.enable", "true"}});
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(append(*p, make_batch(2, 100, i)));
    auto sealed = p->sealed_segments();
    ASSERT_GE(sealed.size(), 2u);
    ASSERT_TRUE(p->roll());
    sealed = p->sealed_segments();
    ASSERT_FALSE(sealed.empty());
    EXPECT_EQ(sealed.front().base_offset(), 0);
    EXPECT_EQ(sealed.back().next_offset(), 80) << "roll() seals everything appended";
    for (size_t i = 0; i + 1 < sealed.size(); ++i) {
        EXPECT_EQ(sealed[i].next_offset(), sealed[i + 1].base_offset());
        EXPECT_TRUE(sealed[i].sealed);
        EXPECT_GT(sealed[i].size_bytes, 0u);
        EXPECT_GE(sealed[i].max_timestamp_ms, sealed[i].first_timestamp_ms);
    }
    auto all = p->segments();
    ASSERT_GE(all.size(), sealed.size());
    EXPECT_EQ(all.front().base_offset(), 0);

    EXPECT_EQ(p->offloaded_up_to()(), 0);
    auto mid = sealed[sealed.size() / 2].base_offset;
    ASSERT_TRUE(p->set_offloaded_up_to(mid));
    EXPECT_EQ(p->offloaded_up_to(), mid);
    ASSERT_TRUE(p->set_offloaded_up_to(kafka_offset(1)));
    EXPECT_EQ(p->offloaded_up_to(), mid) << "never backwards";
    ASSERT_TRUE(p->rewind_offloaded_up_to(kafka_offset(mid() - 1)));
    EXPECT_EQ(p->offloaded_up_to()(), mid() - 1);
    ASSERT_TRUE(p->set_offloaded_up_to(mid));

    // Appends after a roll go on at the next offset, in a new segment.
    auto ar = append(*p, make_batch(1, 10, 0));
    ASSERT_TRUE(ar);
    EXPECT_EQ(ar->base_offset(), 80);
    auto& t2 = open();
    auto p2 = t2.partition("seg", 0);
    EXPECT_EQ(p2->offloaded_up_to(), mid);
    auto sealed2 = p2->sealed_segments();
    ASSERT_FALSE(sealed2.empty());
    EXPECT_EQ(sealed2.front().base_offset(), 0);
    EXPECT_EQ(p2->log_end_offset()(), 81);
}

TEST_P(local_tier_conformance, tiered_retention_removes_only_what_is_offloaded) {
    auto& t = open();
    auto p = create(t, "ret", 1,
                    {{"segment.bytes", "2000"}, {"remote.storage.enable", "true"}, {"local.retention.bytes", "1"}});
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(append(*p, make_batch(2, 100, i)));
    ASSERT_TRUE(p->roll());
    auto sealed = p->sealed_segments();
    ASSERT_GE(sealed.size(), 3u);
    // Nothing offloaded: nothing goes, whatever the remote tier says.
    auto r0 = p->apply_retention(kafka_offset(80));
    ASSERT_TRUE(r0);
    EXPECT_TRUE(r0->empty());
    // Offloaded below the second segment's end, remote unknown: nothing goes.
    auto marker = sealed[1].next_offset;
    ASSERT_TRUE(p->set_offloaded_up_to(marker));
    auto r1 = p->apply_retention(std::nullopt);
    ASSERT_TRUE(r1);
    EXPECT_TRUE(r1->empty());
    // Now the first two segments go, nothing at or above the marker.
    auto r2 = p->apply_retention(kafka_offset(80));
    ASSERT_TRUE(r2) << r2.error();
    ASSERT_EQ(r2->size(), 2u);
    for (auto& s : *r2) EXPECT_LE(s.next_offset(), marker());
    EXPECT_EQ(p->log_start_offset(), marker);
    EXPECT_EQ(p->offsets().log_start(), marker());
    EXPECT_EQ(p->read(kafka_offset(0)).error().code(), errc::out_of_range);
    auto rest = read_all(*p, marker());
    ASSERT_EQ(int64_t(rest.size()), 80 - marker());
    EXPECT_EQ(rest.front().offset, marker());
    auto& t2 = open();
    EXPECT_EQ(t2.partition("ret", 0)->log_start_offset(), marker);
}

TEST_P(local_tier_conformance, delete_records_moves_the_start_for_every_reader) {
    auto& t = open();
    auto p = create(t, "del");
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(append(*p, make_batch(1, 10, i)));
    EXPECT_EQ(p->records_start()(), 0);
    auto moved = p->delete_records_before(kafka_offset(4));
    ASSERT_TRUE(moved) << moved.error();
    EXPECT_EQ(*moved, kafka_offset(4));
    EXPECT_EQ(p->log_start_offset()(), 4);
    EXPECT_EQ(p->records_start()(), 4);
    EXPECT_EQ(p->read(kafka_offset(3)).error().code(), errc::out_of_range);
    EXPECT_EQ(read_all(*p, 4).front().offset, 4);
    auto back = p->delete_records_before(kafka_offset(2));
    ASSERT_TRUE(back);
    EXPECT_EQ(p->log_start_offset()(), 4) << "never backwards";
    EXPECT_EQ(p->delete_records_before(kafka_offset(11)).error().code(), errc::out_of_range);
    auto& t2 = open();
    EXPECT_EQ(t2.partition("del", 0)->log_start_offset()(), 4);
}

TEST_P(local_tier_conformance, mirror_partitions_keep_the_source_offsets) {
    auto& t = open();
    ASSERT_TRUE(t.create_topic("mirror", 1, {}, false, "kafka:orders"));
    EXPECT_EQ(t.topic("mirror")->mirror_of, "kafka:orders");
    auto p = t.partition("mirror", 0);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->is_mirror());
    auto refused = append(*p, make_batch(1, 10, 0));
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, append_status::mirror_read_only);
    auto mirror = [&](size_t n, int64_t base) {
        auto b = make_batch(n, 10, 1000 + base, {.base_offset = base});
        return p->mirror_append(bytes_view(b));
    };
    auto a = mirror(3, 1000);
    ASSERT_TRUE(a) << a.error();
    ASSERT_EQ(a->status, append_status::ok) << a->message;
    EXPECT_EQ(a->base_offset(), 1000);
    EXPECT_EQ(a->last_offset(), 1002);
    EXPECT_EQ(p->log_start_offset()(), 1000) << "an empty mirror starts where its source does";
    auto gap = mirror(2, 1010);
    ASSERT_TRUE(gap);
    ASSERT_EQ(gap->status, append_status::ok);
    EXPECT_EQ(p->log_end_offset()(), 1012);
    auto replay = mirror(2, 1005);
    ASSERT_TRUE(replay);
    EXPECT_EQ(replay->status, append_status::below_log_end);
    EXPECT_EQ(p->log_end_offset()(), 1012);
    // Reads skip the source's gap.
    std::vector<int64_t> offsets;
    for (int64_t next = 1000; next < 1012;) {
        auto rd = p->read(kafka_offset(next));
        ASSERT_TRUE(rd) << rd.error();
        if (rd->slices.empty()) break;
        byte_buffer buf;
        ASSERT_TRUE(rd->copy_to(buf));
        auto recs = decode_all(buf);
        ASSERT_TRUE(recs);
        for (auto& r : *recs)
            if (r.offset >= next) offsets.push_back(r.offset);
        next = recs->back().offset + 1;
    }
    EXPECT_EQ(offsets, (std::vector<int64_t>{1000, 1001, 1002, 1010, 1011}));
    // A produced topic refuses mirror appends.
    auto plain = create(t, "plain");
    auto b = make_batch(1, 10, 0);
    auto no = plain->mirror_append(bytes_view(b));
    ASSERT_TRUE(no);
    EXPECT_EQ(no->status, append_status::mirror_read_only);
    // All of it survives a restart.
    auto& t2 = open();
    auto p2 = t2.partition("mirror", 0);
    ASSERT_TRUE(p2);
    EXPECT_TRUE(p2->is_mirror());
    EXPECT_EQ(p2->log_end_offset()(), 1012);
    EXPECT_EQ(p2->log_start_offset()(), 1000);
}

TEST_P(local_tier_conformance, durability_callbacks_and_flush) {
    auto& t = open();
    auto p = create(t, "dur");
    auto ar = append(*p, make_batch(3, 10, 0));
    ASSERT_TRUE(ar);
    std::promise<result<void>> done;
    p->when_durable(ar->last_offset, [&](result<void> r) { done.set_value(std::move(r)); });
    auto f = done.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(f.get());
    EXPECT_TRUE(p->flush());
    EXPECT_TRUE(t.flush_all());
    EXPECT_GE(p->offsets().durable_end(), 3);
}

TEST_P(local_tier_conformance, concurrent_writers_get_distinct_contiguous_offsets) {
    auto& t = open();
    auto p = create(t, "conc");
    constexpr int writers = 4, per_writer = 50;
    std::vector<std::thread> ths;
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    std::atomic<int> failures{0};
    for (int w = 0; w < writers; ++w)
        ths.emplace_back([&, w] {
            for (int i = 0; i < per_writer; ++i) {
                auto ar = append(*p, make_batch(size_t(1 + (w + i) % 3), 20, i));
                if (!ar || ar->status != append_status::ok) {
                    ++failures;
                    continue;
                }
                std::lock_guard g(mu);
                ranges.emplace_back(ar->base_offset(), ar->last_offset());
            }
        });
    std::thread reader([&] {
        for (int i = 0; i < 50; ++i) (void)p->read(kafka_offset(0), {.max_bytes = 4096});
    });
    for (auto& th : ths) th.join();
    reader.join();
    EXPECT_EQ(failures.load(), 0);
    std::sort(ranges.begin(), ranges.end());
    int64_t next = 0;
    for (auto& [a, b] : ranges) {
        EXPECT_EQ(a, next);
        next = b + 1;
    }
    EXPECT_EQ(p->log_end_offset()(), next);
    EXPECT_EQ(int64_t(read_all(*p, 0).size()), next);
}

} // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(local_tier_conformance);

// A backend keeps transactions whole (open -> LSO held back, abort -> in the aborted index) or
// refuses them whole (transactional batches and markers refused, nothing written, LSO == HW):
// never stores transactional records it cannot account for.
TEST_P(local_tier_conformance, transactions_are_kept_or_refused_whole) {
    auto& t = open();
    auto p = create(t, "txn");
    ASSERT_TRUE(p);
    ASSERT_TRUE(append(*p, make_batch(2, 10, 0)));
    const int64_t pid = 4242;
    auto ar = append(*p, txn_batch(3, pid, 0, 0));
    ASSERT_TRUE(ar) << ar.error();
    if (p->supports_transactions()) {
        ASSERT_EQ(ar->status, append_status::ok) << ar->message;
        EXPECT_EQ(p->log_end_offset()(), 5);
        EXPECT_EQ(p->last_stable_offset()(), 2);
        EXPECT_EQ(p->open_transactions().at(pid), 2);
        auto m = p->append_txn_marker(pid, 0, txn_marker::abort, 0);
        ASSERT_TRUE(m) << m.error();
        ASSERT_EQ(m->status, append_status::ok) << m->message;
        EXPECT_EQ(p->last_stable_offset(), p->log_end_offset());
        EXPECT_TRUE(p->open_transactions().empty());
        auto ab = p->aborted_transactions(kafka_offset(0), p->log_end_offset());
        ASSERT_EQ(ab.size(), 1u);
        EXPECT_EQ(ab[0].producer_id, pid);
        EXPECT_EQ(ab[0].first_offset, 2);
    } else {
        EXPECT_EQ(ar->status, append_status::invalid_record);
        EXPECT_NE(ar->message.find("transactional"), std::string::npos) << ar->message;
        EXPECT_EQ(p->log_end_offset()(), 2);
        auto m = p->append_txn_marker(pid, 0, txn_marker::commit, 0);
        ASSERT_FALSE(m);
        EXPECT_EQ(m.error().code(), errc::unsupported);
        EXPECT_EQ(p->log_end_offset()(), 2);
        EXPECT_EQ(p->last_stable_offset(), p->offsets().high_watermark);
        EXPECT_EQ(p->offsets().last_stable, p->offsets().high_watermark);
        EXPECT_TRUE(p->open_transactions().empty());
        EXPECT_TRUE(p->aborted_transactions(kafka_offset(0), p->log_end_offset()).empty());
        EXPECT_EQ(read_all(*p, 0).size(), 2u);
    }
}

} // namespace floe::log::testing
