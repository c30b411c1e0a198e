#include "ingest/jetstream_source.h"

#include <gtest/gtest.h>

namespace floe::ingest {
namespace {

TEST(AckSubject, PlainFormGivesStreamSequenceAndTime) {
    uint64_t seq = 0;
    int64_t ts = 0;
    ASSERT_TRUE(parse_ack_subject("$JS.ACK.ORDERS.floe-1.1.4242.17.1764614400123456789.3", seq, ts));
    EXPECT_EQ(seq, 4242u);
    EXPECT_EQ(ts, 1764614400123456789);
}

TEST(AckSubject, DomainFormGivesStreamSequenceAndTime) {
    uint64_t seq = 0;
    int64_t ts = 0;
    ASSERT_TRUE(parse_ack_subject("$JS.ACK.hub.ACCHASH.ORDERS.floe-1.2.99.7.1700000000000000001.0.tok", seq, ts));
    EXPECT_EQ(seq, 99u);
    EXPECT_EQ(ts, 1700000000000000001);
    ASSERT_TRUE(parse_ack_subject("$JS.ACK._.ACCHASH.ORDERS.c.1.5.5.123.0", seq, ts)); // no token
    EXPECT_EQ(seq, 5u);
    EXPECT_EQ(ts, 123);
}

TEST(AckSubject, AnythingElseIsLeftToLibnats) {
    uint64_t seq = 7;
    int64_t ts = 7;
    EXPECT_FALSE(parse_ack_subject("", seq, ts));
    EXPECT_FALSE(parse_ack_subject("_INBOX.abc.def", seq, ts));
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.S.C.1.2.3", seq, ts));                  // too few tokens
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.S.C.1.2.3.4.5.6", seq, ts));            // 8: neither form
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.S.C.1.x2.3.4.5", seq, ts));             // not a number
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.S.C.1..3.4.5", seq, ts));               // empty sequence
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.S.C.1.99999999999999999999.3.4.5", seq, ts)); // 20 digits
    EXPECT_FALSE(parse_ack_subject("$JS.ACK.d.a.S.C.1.2.3.4.5.t.u.v.w", seq, ts));  // more than 12
}

} // namespace
} // namespace floe::ingest
