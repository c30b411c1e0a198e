#include "kafka/messages.h"
#include "kafka/protocol.h"

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
    EXPECT_EQ(r(api_key::offset_fetch).max, 8);
    EXPECT_EQ(find_api(17), nullptr); // SaslHandshake: not served
    EXPECT_EQ(supported_apis().size(), 22u);
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
    EXPECT_EQ(*body.array_len(0), 22);
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

} // namespace
} // namespace floe::kafka
