#include "base/varint.h"

#include <gtest/gtest.h>

#include <limits>

namespace floe {
namespace {

TEST(Varint, ZigZagKnownValues) {
    EXPECT_EQ(zigzag_encode(int64_t{0}), 0u);
    EXPECT_EQ(zigzag_encode(int64_t{-1}), 1u);
    EXPECT_EQ(zigzag_encode(int64_t{1}), 2u);
    EXPECT_EQ(zigzag_encode(int64_t{-2}), 3u);
    EXPECT_EQ(zigzag_encode(int32_t{2147483647}), 4294967294u);
    EXPECT_EQ(zigzag_encode(int32_t{-2147483648}), 4294967295u);
    for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max()})
        EXPECT_EQ(zigzag_decode(zigzag_encode(v)), v);
}

TEST(Varint, RoundTripAndSizes) {
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{300},
                       uint64_t{1} << 35, std::numeric_limits<uint64_t>::max()}) {
        byte_buffer b;
        put_uvarint(b, v);
        EXPECT_EQ(b.size(), uvarint_size(v));
        byte_reader r(b);
        auto got = read_uvarint(r);
        ASSERT_TRUE(got) << got.error();
        EXPECT_EQ(*got, v);
        EXPECT_TRUE(r.empty());
    }
    byte_buffer b;
    put_uvarint(b, 300);
    EXPECT_EQ(b, (byte_buffer{0xAC, 0x02}));
    for (int64_t v : {int64_t{-1}, int64_t{-64}, int64_t{64}, std::numeric_limits<int64_t>::min()}) {
        byte_buffer s;
        put_varint(s, v);
        byte_reader r(s);
        EXPECT_EQ(*read_varint(r), v);
    }
}

TEST(Varint, TruncatedIsCorrupt) {
    byte_buffer b{0x80, 0x80};
    byte_reader r(b);
    auto got = read_uvarint(r);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), errc::corrupt);
}

TEST(Varint, OverlongIsRejected) {
    byte_buffer b(11, 0xFF);
    b.push_back(0x01);
    byte_reader r(b);
    EXPECT_FALSE(read_uvarint(r));
    // 5 bytes whose last carries bits beyond 32.
    byte_buffer c{0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
    byte_reader r32(c);
    EXPECT_FALSE(read_uvarint(r32, 32));
    byte_buffer ok{0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
    byte_reader rok(ok);
    EXPECT_EQ(*read_uvarint(rok, 32), 0xFFFFFFFFu);
}

} // namespace
} // namespace floe
