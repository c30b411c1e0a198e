#include "base/bytes.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

TEST(Bytes, WriterAndReaderAgree) {
    byte_buffer buf;
    byte_writer w(buf);
    w.put_be<int32_t>(-2);
    w.put_le<uint16_t>(0x1234);
    w.put_le<double>(1.5);
    w.put_bytes(std::string_view("abc"));
    EXPECT_EQ(buf[0], 0xFF);
    EXPECT_EQ(buf[3], 0xFE);
    EXPECT_EQ(buf[4], 0x34);

    byte_reader r(buf);
    EXPECT_EQ(*r.be<int32_t>(), -2);
    EXPECT_EQ(*r.le<uint16_t>(), 0x1234);
    EXPECT_EQ(*r.le<double>(), 1.5);
    EXPECT_EQ(as_chars(*r.bytes(3)), "abc");
    EXPECT_TRUE(r.empty());
}

TEST(Bytes, ReadingPastTheEndIsCorruptNotACrash) {
    byte_buffer buf{1, 2, 3};
    byte_reader r(buf);
    auto v = r.be<int64_t>();
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code(), errc::corrupt);
    EXPECT_NE(v.error().message().find("need 8 bytes"), std::string::npos);
    EXPECT_FALSE(r.bytes(4));
    EXPECT_TRUE(r.skip(3));
    EXPECT_FALSE(r.u8());
}

TEST(Bytes, PatchBigEndian) {
    byte_buffer buf;
    byte_writer w(buf);
    w.put_be<int32_t>(0);
    w.put_bytes(std::string_view("xy"));
    w.patch_be<int32_t>(0, 2);
    EXPECT_EQ(buf, (byte_buffer{0, 0, 0, 2, 'x', 'y'}));
}

} // namespace
} // namespace floe
