#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace floe {
namespace {

// Published check values: the CRC catalogue ("123456789") and RFC 3720 appendix B.4.
struct vector_case {
    std::vector<uint8_t> data;
    uint32_t expected;
};

std::vector<vector_case> published() {
    std::vector<vector_case> v;
    std::string s = "123456789";
    v.push_back({{s.begin(), s.end()}, 0xE3069283});
    v.push_back({std::vector<uint8_t>(32, 0x00), 0x8A9136AA});
    v.push_back({std::vector<uint8_t>(32, 0xFF), 0x62A8AB43});
    std::vector<uint8_t> inc(32), dec(32);
    std::iota(inc.begin(), inc.end(), 0);
    for (int i = 0; i < 32; ++i) dec[i] = static_cast<uint8_t>(31 - i);
    v.push_back({inc, 0x46DD794E});
    v.push_back({dec, 0x113FDB5C});
    v.push_back({{}, 0});
    return v;
}

TEST(Crc32c, PublishedCheckValuesPortable) {
    for (auto& c : published()) EXPECT_EQ(crc32c_portable(0, c.data), c.expected);
}

TEST(Crc32c, PublishedCheckValuesHardware) {
    if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
    for (auto& c : published()) EXPECT_EQ(crc32c_hardware(0, c.data), c.expected);
}

TEST(Crc32c, PathsAgreeOnRandomLengthsAndAlignments) {
    std::mt19937_64 rng(42);
    std::vector<uint8_t> buf(4096 + 16);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    for (size_t off = 0; off < 9; ++off) {
        for (size_t len : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4096}) {
            bytes_view v(buf.data() + off, len);
            EXPECT_EQ(crc32c_portable(0, v), crc32c_hardware(0, v)) << off << " " << len;
            EXPECT_EQ(crc32c(v), crc32c_portable(0, v));
        }
    }
}

TEST(Crc32c, ExtendEqualsWhole) {
    std::string s = "the quick brown fox jumps over the lazy dog";
    auto whole = crc32c(as_bytes(s));
    for (size_t cut = 0; cut <= s.size(); ++cut) {
        auto a = crc32c(as_bytes(std::string_view(s).substr(0, cut)));
        EXPECT_EQ(crc32c_extend(a, as_bytes(std::string_view(s).substr(cut))), whole);
    }
}

} // namespace
} // namespace floe
