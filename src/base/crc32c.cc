#include "base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace floe {
namespace {

constexpr uint32_t poly = 0x82F63B78; // reflected Castagnoli polynomial

constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
}
constexpr auto tables = make_tables();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t hw(uint32_t crc, const uint8_t* p, size_t n) {
    uint64_t c = ~crc;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<uint32_t>(c);
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
#endif

const bool have_hw = [] {
#if defined(__x86_64__)
    return __builtin_cpu_supports("sse4.2") != 0;
#else
    return false;
#endif
}();

} // namespace

uint32_t crc32c_portable(uint32_t crc, bytes_view data) noexcept {
    uint32_t c = ~crc;
    const uint8_t* p = data.data();
    size_t n = data.size();
    while (n >= 8) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        lo ^= c; // little-endian hosts only; Floe targets x86_64 and aarch64 little-endian
        c = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF]
            ^ tables[4][lo >> 24] ^ tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF]
            ^ tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ tables[0][(c ^ *p++) & 0xFF];
    return ~c;
}

bool crc32c_hardware_available() noexcept { return have_hw; }

uint32_t crc32c_hardware(uint32_t crc, bytes_view data) noexcept {
#if defined(__x86_64__)
    if (have_hw) return hw(crc, data.data(), data.size());
#endif
    return crc32c_portable(crc, data);
}

uint32_t crc32c_extend(uint32_t crc, bytes_view data) noexcept {
    return have_hw ? crc32c_hardware(crc, data) : crc32c_portable(crc, data);
}

} // namespace floe
