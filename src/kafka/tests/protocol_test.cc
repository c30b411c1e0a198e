#include "kafka/fetch_sessions.h"
#include "kafka/messages.h"
#include "kafka/messages_admin.h"
#include "kafka/protocol.h"
#include "kafka/messages_txn.h"

#include <gtest/gtest.h>

namespace floe::kafka {
namespace {

TEST(KafkaProtocol, PrimitivesRoundTripClassicAndFlexible) {
    for (bool flex : {false, true}) {
        byte_buffer b;
        kwriter w(b, flex);
        w.i8(-3);
        w.i16(-2);
        w.i32(123456);
        w.i64(-9876543210);
        w.boolean(true);
        w.str("hello");
        w.nstr(std::nullopt);
        w.bytes(as_bytes("xyz"));
        w.nbytes(std::nullopt);
        w.array_len(2);
        w.null_array();
        uuid u = uuid::random();
        w.id(u);
        w.tags();
        kreader r(b, flex);
        EXPECT_EQ(*r.i8(), -3);
        EXPECT_EQ(*r.i16(), -2);
        EXPECT_EQ(*r.i32(), 123456);
        EXPECT_EQ(*r.i64(), -9876543210);
        EXPECT_TRUE(*r.boolean());
        EXPECT_EQ(*r.str(), "hello");
        EXPECT_FALSE(r.nstr()->has_value());
        EXPECT_EQ(as_chars(*r.bytes()), "xyz");
        EXPECT_FALSE(r.nbytes()->has_value());
        EXPECT_EQ(*r.array_len(0), 2);
        EXPECT_EQ(*r.array_len(), -1);
        EXPECT_EQ(*r.id(), u);
        EXPECT_TRUE(r.tags());
        EXPECT_EQ(r.remaining(), 0u);
    }
}

TEST(KafkaProtocol, CompactEncodingIsLengthPlusOne) {
    byte_buffer b;
    kwriter w(b, true);
    w.str("ab");
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0], 3);
    b.clear();
    kwriter c(b, false);
    c.str("ab");
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[1], 2);
}

TEST(KafkaProtocol, LyingLengthsFailWithoutAllocating) {
    // Array claiming 2^31-1 elements in 4 bytes.
    uint8_t arr[] = {0x7f, 0xff, 0xff, 0xff};
    kreader r(arr, false);
    EXPECT_FALSE(r.array_len());
    // String longer than the input.
    uint8_t s[] = {0x00, 0x10, 'a'};
    kreader r2(s, false);
    EXPECT_FALSE(r2.str());
    // Tagged field claiming more bytes than there are.
    uint8_t t[] = {0x01, 0x00, 0x7f};
    kreader r3(t, true);
    EXPECT_FALSE(r3.tags());
}

TEST(KafkaProtocol, SkipsUnknownTaggedFields) {
    uint8_t t[] = {0x02, 0x00, 0x01, 0xAA, 0x05, 0x02, 0xBB, 0xCC, 0x09};
    kreader r(t, true);
    ASSERT_TRUE(r.tags());
    EXPECT_EQ(*r.i8(), 9);
}

TEST(KafkaProtocol, RequestHeaderVersions) {
    // Metadata v9 (flexible): header v2 with classic client id and tags.
    byte_buffer f;
    kwriter w(f, false);
    w.i16(3);
    w.i16(9);
    w.i32(77);
    w.str("cli");
    f.push_back(0); // header tags
    f.push_back(1); // body: topics compact array null? (0 = null, 1 = empty)
    bytes_view body;
    auto h = decode_request_header(f, body);
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->supported);
    EXPECT_TRUE(h->flexible);
    EXPECT_EQ(h->correlation_id, 77);
    EXPECT_EQ(*h->client_id, "cli");
    ASSERT_EQ(body.size(), 1u);

    // Unknown API key: still decodes key, version and correlation id.
    byte_buffer u;
    kwriter wu(u, false);
    wu.i16(999);
    wu.i16(0);
    wu.i32(5);
    auto hu = decode_request_header(u, body);
    ASSERT_TRUE(hu);
    EXPECT_FALSE(hu->supported);
    EXPECT_EQ(hu->correlation_id, 5);

    // Produce v2 is below the advertised range.
    byte_buffer p;
    kwriter wp(p, false);
    wp.i16(0);
    wp.i16(2);
    wp.i32(1);
    wp.str("x");
    auto hp = decode_request_header(p, body);
    ASSERT_TRUE(hp);
    EXPECT_FALSE(hp->supported);
}

TEST(KafkaProtocol, AdvertisedRangesMatchTheIssue) {
    auto r = [](api_key k) { return *find_api(int16_t(k)); };
    EXPECT_EQ(r(api_key::produce).min, 3);
    EXPECT_EQ(r(api_key::produce).max, 9);
    EXPECT_EQ(r(api_key::fetch).min, 4);
    EXPECT_EQ(r(api_key::fetch).max, 13);
    EXPECT_EQ(r(api_key::metadata).max, 12);
    EXPECT_EQ(r(api_key::api_versions).max, 3);
    EXPECT_EQ(r(api_key::list_offsets).max, 7);
    EXPECT_EQ(r(api_key::join_group).max, 9);
    EXPECT_EQ(r(api_key::offset_fetch).max, 9); // v9: KIP-848 member id and epoch
    EXPECT_EQ(r(api_key::offset_commit).max, 9);
    ASSERT_NE(find_api(17), nullptr); // SaslHandshake
    EXPECT_EQ(find_api(17)->max, 1);
    EXPECT_EQ(r(api_key::sasl_authenticate).max, 2);
    EXPECT_EQ(r(api_key::alter_user_scram_credentials).first_flexible, 0);
    EXPECT_EQ(r(api_key::create_partitions).max, 3);
    EXPECT_EQ(r(api_key::delete_records).max, 2);
    EXPECT_EQ(r(api_key::describe_log_dirs).max, 4);
    EXPECT_EQ(r(api_key::elect_leaders).max, 2);
    EXPECT_EQ(r(api_key::offset_delete).max, 0);
    EXPECT_EQ(r(api_key::offset_delete).first_flexible, 1); // OffsetDelete has no flexible version
    EXPECT_EQ(r(api_key::describe_producers).first_flexible, 0);
    // Transactions (KIP-98).
    EXPECT_EQ(r(api_key::add_partitions_to_txn).max, 3);
    EXPECT_EQ(r(api_key::add_partitions_to_txn).first_flexible, 3);
    EXPECT_EQ(r(api_key::end_txn).max, 3);
    EXPECT_EQ(r(api_key::txn_offset_commit).max, 3);
    EXPECT_EQ(r(api_key::describe_transactions).first_flexible, 0);
    EXPECT_EQ(r(api_key::list_transactions).max, 1);
    // KIP-848 (librdkafka 2.12+ sends ConsumerGroupHeartbeat v1 only).
    EXPECT_EQ(r(api_key::consumer_group_heartbeat).max, 1);
    EXPECT_EQ(r(api_key::consumer_group_heartbeat).first_flexible, 0);
    EXPECT_EQ(r(api_key::consumer_group_describe).max, 0);
    EXPECT_EQ(supported_apis().size(), 43u);
}

TEST(KafkaProtocol, TxnOffsetCommitV3Decodes) {
    byte_buffer b;
    kwriter w(b, true);
    w.str("tx");
    w.str("group");
    w.i64(1000);
    w.i16(2);
    w.i32(7);          // generation
    w.str("member-1"); // member id
    w.nstr(std::nullopt);
    w.array_len(1);
    w.str("topic");
    w.array_len(1);
    w.i32(3);
    w.i64(42);
    w.i32(-1);
    w.nstr("md");
    w.tags();
    w.tags();
    w.tags();
    kreader r(b, true);
    auto q = decode_txn_offset_commit(r, 3);
    ASSERT_TRUE(q) << q.error();
    EXPECT_EQ(q->transactional_id, "tx");
    EXPECT_EQ(q->group_id, "group");
    EXPECT_EQ(q->producer_id, 1000);
    EXPECT_EQ(q->producer_epoch, 2);
    EXPECT_EQ(q->generation_id, 7);
    EXPECT_EQ(q->member_id, "member-1");
    ASSERT_EQ(q->topics.size(), 1u);
    ASSERT_EQ(q->topics[0].partitions.size(), 1u);
    EXPECT_EQ(q->topics[0].partitions[0].offset, 42);
    EXPECT_EQ(q->topics[0].partitions[0].metadata, std::optional<std::string_view>("md"));
    EXPECT_EQ(r.remaining(), 0u);
    // Truncated anywhere: an error, never a read past the end.
    for (size_t n = 0; n < b.size(); ++n) {
        kreader t(bytes_view(b.data(), n), true);
        EXPECT_FALSE(decode_txn_offset_commit(t, 3)) << n;
    }
}

TEST(KafkaProtocol, ApiVersionsResponseUsesHeaderV0) {
    request_header h;
    h.api_key = 18;
    h.api_version = 3;
    h.correlation_id = 9;
    h.flexible = true;
    byte_buffer out;
    size_t start = begin_response(out, h);
    kwriter w(out, true);
    encode(w, 3, api_versions_response{});
    finish_response(out, start);
    kreader r(out, false);
    EXPECT_EQ(*r.i32(), int32_t(out.size() - 4));
    EXPECT_EQ(*r.i32(), 9);
    kreader body(r.rest(), true);
    EXPECT_EQ(*body.i16(), 0);             // error code, no header tags before it
    EXPECT_EQ(*body.array_len(0), 43);
}

TEST(KafkaProtocol, ProduceRequestDecodesEveryVersion) {
    for (int16_t v = 3; v <= 9; ++v) {
        bool flex = v >= 9;
        byte_buffer b;
        kwriter w(b, flex);
        w.nstr(std::nullopt);
        w.i16(-1);
        w.i32(1000);
        w.array_len(1);
        w.str("t");
        w.array_len(1);
        w.i32(2);
        w.nbytes(as_bytes("RECORDS"));
        w.tags();
        w.tags();
        w.tags();
        kreader r(b, flex);
        auto p = decode_produce(r, v);
        ASSERT_TRUE(p) << v;
        EXPECT_EQ(p->acks, -1);
        ASSERT_EQ(p->topics.size(), 1u);
        EXPECT_EQ(p->topics[0].name, "t");
        EXPECT_EQ(p->topics[0].partitions[0].index, 2);
        EXPECT_EQ(as_chars(*p->topics[0].partitions[0].records), "RECORDS");
        EXPECT_EQ(r.remaining(), 0u);
    }
}

TEST(KafkaProtocol, FetchRequestTopicIdsFromV13) {
    byte_buffer b;
    kwriter w(b, true);
    uuid id = uuid::random();
    w.i32(-1);
    w.i32(500);
    w.i32(1);
    w.i32(1 << 20);
    w.i8(0);
    w.i32(0);
    w.i32(-1);
    w.array_len(1);
    w.id(id);
    w.array_len(1);
    w.i32(0);
    w.i32(-1);
    w.i64(42);
    w.i32(-1);
    w.i64(-1);
    w.i32(1 << 20);
    w.tags();
    w.tags();
    w.array_len(0);
    w.str("");
    w.tags();
    kreader r(b, true);
    auto f = decode_fetch(r, 13);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->topics[0].topic_id, id);
    EXPECT_EQ(f->topics[0].partitions[0].fetch_offset, 42);
    EXPECT_EQ(r.remaining(), 0u);
}


// ---------------- admin APIs (messages_admin.h) ----------------

// Every proper prefix of a well-formed body must fail cleanly (no crash, no over-read).
template<typename Fn>
void expect_truncations_fail(const byte_buffer& b, bool flex, int16_t v, Fn&& decode) {
    for (size_t n = 0; n < b.size(); ++n) {
        kreader r(bytes_view(b.data(), n), flex);
        EXPECT_FALSE(decode(r, v)) << "prefix of " << n << " bytes decoded, v" << v;
    }
}

TEST(KafkaAdminProtocol, CreatePartitionsRoundTripEveryVersion) {
    for (int16_t v = 0; v <= 3; ++v) {
        bool flex = v >= 2;
        byte_buffer b;
        kwriter w(b, flex);
        w.array_len(2);
        w.str("a");
        w.i32(5);
        w.null_array(); // no assignments
        w.tags();
        w.str("b");
        w.i32(3);
        w.array_len(1); // one new partition, on broker 0
        w.array_len(1);
        w.i32(0);
        w.tags();
        w.tags();
        w.i32(30000);
        w.boolean(true);
        w.tags();
        kreader r(b, flex);
        auto c = decode_create_partitions(r, v);
        ASSERT_TRUE(c) << v << ": " << c.error();
        EXPECT_EQ(r.remaining(), 0u);
        ASSERT_EQ(c->topics.size(), 2u);
        EXPECT_EQ(c->topics[0].name, "a");
        EXPECT_EQ(c->topics[0].count, 5);
        EXPECT_FALSE(c->topics[0].has_assignments);
        EXPECT_TRUE(c->topics[1].has_assignments);
        EXPECT_EQ(c->topics[1].assignment_count, 1);
        EXPECT_EQ(c->timeout_ms, 30000);
        EXPECT_TRUE(c->validate_only);
        expect_truncations_fail(b, flex, v, decode_create_partitions);

        create_partitions_response resp;
        resp.results.push_back({"a", 37, std::string("already has 5")});
        resp.results.push_back({"b", 0, std::nullopt});
        byte_buffer o;
        kwriter ow(o, flex);
        encode(ow, v, resp);
        kreader rr(o, flex);
        EXPECT_EQ(*rr.i32(), 0); // throttle
        EXPECT_EQ(*rr.array_len(), 2);
        EXPECT_EQ(*rr.str(), "a");
        EXPECT_EQ(*rr.i16(), 37);
        EXPECT_EQ(**rr.nstr(), "already has 5");
        ASSERT_TRUE(rr.tags());
        EXPECT_EQ(*rr.str(), "b");
        EXPECT_EQ(*rr.i16(), 0);
        EXPECT_FALSE(*rr.nstr());
        ASSERT_TRUE(rr.tags());
        ASSERT_TRUE(rr.tags());
        EXPECT_EQ(rr.remaining(), 0u);
    }
}

TEST(KafkaAdminProtocol, DeleteRecordsRoundTripEveryVersion) {
    for (int16_t v = 0; v <= 2; ++v) {
        bool flex = v >= 2;
        byte_buffer b;
        kwriter w(b, flex);
        w.array_len(1);
        w.str("t");
        w.array_len(2);
        w.i32(0);
        w.i64(42);
        w.tags();
        w.i32(1);
        w.i64(-1);
        w.tags();
        w.tags();
        w.i32(5000);
        w.tags();
        kreader r(b, flex);
        auto d = decode_delete_records(r, v);
        ASSERT_TRUE(d) << v << ": " << d.error();
        EXPECT_EQ(r.remaining(), 0u);
        ASSERT_EQ(d->topics.size(), 1u);
        ASSERT_EQ(d->topics[0].partitions.size(), 2u);
        EXPECT_EQ(d->topics[0].partitions[0].offset, 42);
        EXPECT_EQ(d->topics[0].partitions[1].index, 1);
        EXPECT_EQ(d->topics[0].partitions[1].offset, -1);
        EXPECT_EQ(d->timeout_ms, 5000);
        expect_truncations_fail(b, flex, v, decode_delete_records);

        delete_records_response resp;
        resp.topics.push_back({"t", {{0, 42, 0}, {1, -1, 1}}});
        byte_buffer o;
        kwriter ow(o, flex);
        encode(ow, v, resp);
        kreader rr(o, flex);
        EXPECT_EQ(*rr.i32(), 0);
        EXPECT_EQ(*rr.array_len(), 1);
        EXPECT_EQ(*rr.str(), "t");
        EXPECT_EQ(*rr.array_len(), 2);
        EXPECT_EQ(*rr.i32(), 0);
        EXPECT_EQ(*rr.i64(), 42);
        EXPECT_EQ(*rr.i16(), 0);
        ASSERT_TRUE(rr.tags());
        EXPECT_EQ(*rr.i32(), 1);
        EXPECT_EQ(*rr.i64(), -1);
        EXPECT_EQ(*rr.i16(), 1);
        ASSERT_TRUE(rr.tags());
        ASSERT_TRUE(rr.tags());
        ASSERT_TRUE(rr.tags());
        EXPECT_EQ(rr.remaining(), 0u);
    }
}

TEST(KafkaAdminProtocol, OffsetDeleteIsClassicV0) {
    byte_buffer b;
    kwriter w(b, false);
    w.str("g");
    w.array_len(1);
    w.str("t");
    w.array_len(2);
    w.i32(0);
    w.i32(3);
    kreader r(b, false);
    auto o = decode_offset_delete(r, 0);
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_EQ(o->group_id, "g");
    ASSERT_EQ(o->topics.size(), 1u);
    EXPECT_EQ(o->topics[0].partitions, (std::vector<int32_t>{0, 3}));
    expect_truncations_fail(b, false, 0, decode_offset_delete);

    offset_delete_response resp;
    resp.error_code = 0;
    resp.topics.push_back({"t", {{0, 0}, {3, 86}}});
    byte_buffer out;
    kwriter ow(out, false);
    encode(ow, 0, resp);
    kreader rr(out, false);
    EXPECT_EQ(*rr.i16(), 0); // error code comes before the throttle time here
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.str(), "t");
    EXPECT_EQ(*rr.array_len(), 2);
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.i16(), 0);
    EXPECT_EQ(*rr.i32(), 3);
    EXPECT_EQ(*rr.i16(), 86);
    EXPECT_EQ(rr.remaining(), 0u);
}

TEST(KafkaAdminProtocol, DescribeLogDirsNullMeansAllAndV4AddsSizes) {
    for (int16_t v = 0; v <= 4; ++v) {
        bool flex = v >= 2;
        byte_buffer b;
        kwriter w(b, flex);
        w.null_array();
        w.tags();
        kreader r(b, flex);
        auto d = decode_describe_log_dirs(r, v);
        ASSERT_TRUE(d);
        EXPECT_TRUE(d->all_topics);

        describe_log_dirs_response resp;
        resp.results.push_back({0, "/d", {{"t", {{0, 100, 0, false}}}}, 1000, 500});
        byte_buffer o;
        kwriter ow(o, flex);
        encode(ow, v, resp);
        kreader rr(o, flex);
        EXPECT_EQ(*rr.i32(), 0);
        if (v >= 3) {
            EXPECT_EQ(*rr.i16(), 0);
        }
        EXPECT_EQ(*rr.array_len(), 1);
        EXPECT_EQ(*rr.i16(), 0);
        EXPECT_EQ(*rr.str(), "/d");
        EXPECT_EQ(*rr.array_len(), 1);
        EXPECT_EQ(*rr.str(), "t");
        EXPECT_EQ(*rr.array_len(), 1);
        EXPECT_EQ(*rr.i32(), 0);
        EXPECT_EQ(*rr.i64(), 100);
        EXPECT_EQ(*rr.i64(), 0);
        EXPECT_EQ(*rr.boolean(), false);
        ASSERT_TRUE(rr.tags());
        ASSERT_TRUE(rr.tags());
        if (v >= 4) {
            EXPECT_EQ(*rr.i64(), 1000);
            EXPECT_EQ(*rr.i64(), 500);
        }
        ASSERT_TRUE(rr.tags());
        ASSERT_TRUE(rr.tags());
        EXPECT_EQ(rr.remaining(), 0u);
    }
}

TEST(KafkaAdminProtocol, ElectLeadersAndDescribeProducersDecode) {
    for (int16_t v = 0; v <= 2; ++v) {
        bool flex = v >= 2;
        byte_buffer b;
        kwriter w(b, flex);
        if (v >= 1) w.i8(1);
        w.array_len(1);
        w.str("t");
        w.array_len(1);
        w.i32(4);
        w.tags();
        w.i32(60000);
        w.tags();
        kreader r(b, flex);
        auto e = decode_elect_leaders(r, v);
        ASSERT_TRUE(e) << v;
        EXPECT_EQ(r.remaining(), 0u);
        EXPECT_EQ(e->election_type, v >= 1 ? 1 : 0);
        EXPECT_EQ(e->topics[0].partitions, (std::vector<int32_t>{4}));
        expect_truncations_fail(b, flex, v, decode_elect_leaders);
    }
    byte_buffer b;
    kwriter w(b, true);
    w.array_len(1);
    w.str("t");
    w.array_len(1);
    w.i32(0);
    w.tags();
    w.tags();
    kreader r(b, true);
    auto d = decode_describe_producers(r, 0);
    ASSERT_TRUE(d);
    EXPECT_EQ(r.remaining(), 0u);
    expect_truncations_fail(b, true, 0, decode_describe_producers);

    describe_producers_response resp;
    resp.topics.push_back({"t", {{0, 0, std::nullopt, {{1000, 2, 41, 1234, -1, -1}}}}});
    byte_buffer o;
    kwriter ow(o, true);
    encode(ow, 0, resp);
    kreader rr(o, true);
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.str(), "t");
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.i16(), 0);
    EXPECT_FALSE(*rr.nstr());
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.i64(), 1000);
    EXPECT_EQ(*rr.i32(), 2);
    EXPECT_EQ(*rr.i32(), 41);
    EXPECT_EQ(*rr.i64(), 1234);
    EXPECT_EQ(*rr.i32(), -1);
    EXPECT_EQ(*rr.i64(), -1);
}

TEST(KafkaAdminProtocol, LyingArrayLengthsFailWithoutAllocating) {
    // A partition array claiming 2^30 elements in a few bytes: refused before any reserve.
    for (auto api : {api_key::create_partitions, api_key::delete_records, api_key::describe_log_dirs,
                     api_key::elect_leaders}) {
        byte_buffer b;
        kwriter w(b, false);
        w.i32(0x40000000);
        w.i32(0);
        EXPECT_FALSE(decode_any(int16_t(api), 0, false, b)) << api_name(int16_t(api));
    }
    byte_buffer b;
    kwriter w(b, false);
    w.str("g");
    w.i32(0x40000000);
    EXPECT_FALSE(decode_any(int16_t(api_key::offset_delete), 0, false, b));
    // decode_any reaches the new decoders (what the request fuzzer calls).
    byte_buffer ok;
    kwriter ow(ok, false);
    ow.array_len(0);
    ow.i32(0);
    ow.boolean(false);
    EXPECT_TRUE(decode_any(int16_t(api_key::create_partitions), 0, false, ok));
}

namespace {
fetch_request fetch_req(int32_t id, int32_t epoch, std::vector<std::pair<int32_t, int64_t>> parts,
                        std::vector<int32_t> forget = {}) {
    fetch_request f;
    f.session_id = id;
    f.session_epoch = epoch;
    if (!parts.empty()) {
        auto& t = f.topics.emplace_back();
        t.name = "t";
        for (auto [p, o] : parts) t.partitions.push_back({p, o, -1, 1000});
    }
    if (!forget.empty()) f.forgotten.push_back({"t", {}, forget});
    return f;
}
fetch_partition_header hdr(int32_t p, int64_t hw) {
    fetch_partition_header h;
    h.index = p;
    h.high_watermark = h.last_stable_offset = hw;
    h.log_start_offset = 0;
    return h;
}
} // namespace

TEST(KafkaFetchSessions, FullIncrementalForgetCloseAndErrors) {
    fetch_session_cache c;
    // Sessionless (librdkafka, kafkajs): nothing kept, everything answered.
    auto f = fetch_req(0, -1, {{0, 5}});
    auto none = c.begin(f, 12);
    EXPECT_EQ(none.error, 0);
    EXPECT_EQ(none.session_id, 0);
    EXPECT_EQ(c.size(), 0u);
    // Open a session with two partitions; the full answer lists both.
    f = fetch_req(0, 0, {{0, 5}, {1, 7}});
    auto full = c.begin(f, 12);
    ASSERT_NE(full.session_id, 0);
    EXPECT_FALSE(full.incremental);
    EXPECT_TRUE(c.include(full, "t", {}, hdr(0, 10), false));
    EXPECT_TRUE(c.include(full, "t", {}, hdr(1, 7), false));
    int32_t id = full.session_id;
    // Epoch 1, nothing named: the request becomes the whole session at the cached offsets.
    f = fetch_req(id, 1, {});
    auto inc = c.begin(f, 12);
    ASSERT_EQ(inc.error, 0);
    EXPECT_TRUE(inc.incremental);
    ASSERT_EQ(f.topics.size(), 1u);
    EXPECT_EQ(f.topics[0].name, "t");
    ASSERT_EQ(f.topics[0].partitions.size(), 2u);
    EXPECT_EQ(f.topics[0].partitions[1].fetch_offset, 7);
    // Only partitions with news are answered.
    EXPECT_FALSE(c.include(inc, "t", {}, hdr(0, 10), false)); // unchanged
    EXPECT_TRUE(c.include(inc, "t", {}, hdr(1, 9), false));   // high watermark moved
    EXPECT_TRUE(c.include(inc, "t", {}, hdr(0, 10), true));   // records
    // Epoch 2: a new fetch offset for partition 1, partition 0 forgotten.
    f = fetch_req(id, 2, {{1, 9}}, {0});
    inc = c.begin(f, 12);
    ASSERT_EQ(inc.error, 0);
    ASSERT_EQ(f.topics[0].partitions.size(), 1u);
    EXPECT_EQ(f.topics[0].partitions[0].index, 1);
    EXPECT_EQ(f.topics[0].partitions[0].fetch_offset, 9);
    // Wrong epoch, unknown id, incremental without a session.
    f = fetch_req(id, 7, {});
    EXPECT_EQ(c.begin(f, 12).error, int16_t(kerr::invalid_fetch_session_epoch));
    f = fetch_req(id + 1, 1, {});
    EXPECT_EQ(c.begin(f, 12).error, int16_t(kerr::fetch_session_id_not_found));
    f = fetch_req(0, 3, {});
    EXPECT_EQ(c.begin(f, 12).error, int16_t(kerr::invalid_fetch_session_epoch));
    // Epoch -1 closes it.
    f = fetch_req(id, -1, {{0, 1}});
    EXPECT_EQ(c.begin(f, 12).session_id, 0);
    EXPECT_EQ(c.size(), 0u);
    f = fetch_req(id, 3, {});
    EXPECT_EQ(c.begin(f, 12).error, int16_t(kerr::fetch_session_id_not_found));
    // Before v7 there are no sessions.
    f = fetch_req(0, 0, {{0, 1}});
    EXPECT_EQ(c.begin(f, 6).session_id, 0);
}

TEST(KafkaFetchSessions, BoundedByCountLeastRecentlyUsedFirst) {
    fetch_session_cache c({.max_sessions = 3});
    std::vector<int32_t> ids;
    for (int i = 0; i < 5; ++i) {
        auto f = fetch_req(0, 0, {{0, i}});
        ids.push_back(c.begin(f, 12).session_id);
    }
    EXPECT_EQ(c.size(), 3u);
    auto f = fetch_req(ids[0], 1, {});
    EXPECT_EQ(c.begin(f, 12).error, int16_t(kerr::fetch_session_id_not_found));
    f = fetch_req(ids[4], 1, {});
    EXPECT_EQ(c.begin(f, 12).error, 0);
}

TEST(KafkaFetchSessions, ForgottenTopicsDecode) {
    for (int16_t v : {7, 12, 13}) {
        bool flex = v >= 12;
        byte_buffer b;
        kwriter w(b, flex);
        w.i32(-1);
        w.i32(500);
        w.i32(1);
        w.i32(1 << 20);
        w.i8(0);
        w.i32(42);
        w.i32(3);
        w.array_len(0);
        w.array_len(1); // forgotten
        uuid id = uuid::random();
        if (v >= 13) w.id(id);
        else w.str("gone");
        w.array_len(2);
        w.i32(4);
        w.i32(5);
        w.tags();
        if (v >= 11) w.str("");
        w.tags();
        kreader r(b, flex);
        auto f = decode_fetch(r, v);
        ASSERT_TRUE(f) << v << ": " << f.error();
        EXPECT_EQ(r.remaining(), 0u);
        EXPECT_EQ(f->session_id, 42);
        EXPECT_EQ(f->session_epoch, 3);
        ASSERT_EQ(f->forgotten.size(), 1u);
        if (v >= 13) EXPECT_EQ(f->forgotten[0].topic_id, id);
        else EXPECT_EQ(f->forgotten[0].name, "gone");
        EXPECT_EQ(f->forgotten[0].partitions, (std::vector<int32_t>{4, 5}));
    }
}

TEST(KafkaAdminProtocol, DescribeConfigsWritesSynonymsAndAuthorizedOpsWhenAsked) {
    describe_configs_response resp;
    auto& res = resp.results.emplace_back();
    res.type = 2;
    res.name = "t";
    config_entry_out e;
    e.name = "retention.ms";
    e.value = "1000";
    e.source = 1;
    e.synonyms.push_back({"retention.ms", std::string("1000"), 1});
    e.synonyms.push_back({"log.retention.ms", std::string("604800000"), 5});
    res.configs.push_back(e);
    byte_buffer o;
    kwriter ow(o, false);
    encode(ow, 1, resp);
    kreader rr(o, false);
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.i16(), 0);
    EXPECT_FALSE(*rr.nstr());
    EXPECT_EQ(*rr.i8(), 2);
    EXPECT_EQ(*rr.str(), "t");
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.str(), "retention.ms");
    EXPECT_EQ(**rr.nstr(), "1000");
    EXPECT_FALSE(*rr.boolean());
    EXPECT_EQ(*rr.i8(), 1);
    EXPECT_FALSE(*rr.boolean());
    EXPECT_EQ(*rr.array_len(), 2);
    EXPECT_EQ(*rr.str(), "retention.ms");
    EXPECT_EQ(**rr.nstr(), "1000");
    EXPECT_EQ(*rr.i8(), 1);
    EXPECT_EQ(*rr.str(), "log.retention.ms");
    EXPECT_EQ(**rr.nstr(), "604800000");
    EXPECT_EQ(*rr.i8(), 5);
    EXPECT_EQ(rr.remaining(), 0u);

    metadata_response m;
    m.cluster_authorized_operations = k_cluster_all_ops;
    m.topics.push_back({0, "t", {}, {}, k_topic_all_ops});
    byte_buffer mo;
    kwriter mw(mo, false);
    encode(mw, 8, m);
    // ... brokers (0), cluster id, controller, topics: error, name, internal, partitions, ops
    kreader mr(mo, false);
    EXPECT_EQ(*mr.i32(), 0);
    EXPECT_EQ(*mr.array_len(), 0);
    EXPECT_EQ(*mr.nstr(), std::optional<std::string_view>(""));
    EXPECT_EQ(*mr.i32(), 0);
    EXPECT_EQ(*mr.array_len(), 1);
    EXPECT_EQ(*mr.i16(), 0);
    EXPECT_EQ(*mr.str(), "t");
    EXPECT_FALSE(*mr.boolean());
    EXPECT_EQ(*mr.array_len(), 0);
    EXPECT_EQ(*mr.i32(), k_topic_all_ops);
    EXPECT_EQ(*mr.i32(), k_cluster_all_ops);
    EXPECT_EQ(k_topic_all_ops, 3576); // Kafka's bitfields for topics and the cluster
    EXPECT_EQ(k_cluster_all_ops, 8096);
}

} // namespace
} // namespace floe::kafka
