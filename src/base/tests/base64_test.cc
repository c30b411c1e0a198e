#include "base/base64.h"

#include <gtest/gtest.h>

using namespace floe;

namespace {
std::vector<uint8_t> b(std::string_view s) {
    return {s.begin(), s.end()};
}
} // namespace

TEST(Base64, Rfc4648Vectors) {
    const std::pair<std::string_view, std::string_view> v[] = {{"", ""},
                                                               {"f", "Zg=="},
                                                               {"fo", "Zm8="},
                                                               {"foo", "Zm9v"},
                                                               {"foob", "Zm9vYg=="},
                                                               {"fooba", "Zm9vYmE="},
                                                               {"foobar", "Zm9vYmFy"}};
    for (auto& [raw, text] : v) {
        EXPECT_EQ(base64_encode(b(raw)), text);
        auto d = base64_decode(text);
        ASSERT_TRUE(d) << text;
        EXPECT_EQ(*d, b(raw));
    }
}

TEST(Base64, AllBytesRoundTrip) {
    std::vector<uint8_t> all;
    for (int i = 0; i < 256; ++i)
        all.push_back(uint8_t(i));
    for (size_t n = 0; n <= all.size(); n += 37) {
        std::vector<uint8_t> part(all.begin(), all.begin() + long(n));
        EXPECT_EQ(base64_decode(base64_encode(part)), part);
    }
}

TEST(Base64, StrictDecoding) {
    EXPECT_FALSE(base64_decode("Zg="));      // length
    EXPECT_FALSE(base64_decode("Zg=\n"));    // whitespace
    EXPECT_FALSE(base64_decode("Z=g="));     // padding inside
    EXPECT_FALSE(base64_decode("Zg==Zg==")); // padding before the end
    EXPECT_FALSE(base64_decode("Zh=="));     // unused bits set
    EXPECT_FALSE(base64_decode("Zm9="
                               "x"));    // length
    EXPECT_FALSE(base64_decode("Zm-v")); // url alphabet
    EXPECT_FALSE(base64_decode("===="));
}
