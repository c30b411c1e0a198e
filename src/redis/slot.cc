#include "redis/slot.h"

#include <array>

namespace floe::redis {

namespace {

// Table for CRC16-CCITT/XMODEM (polynomial 0x1021, MSB first), built at compile time.
constexpr std::array<uint16_t, 256> make_table() {
    std::array<uint16_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint16_t c = static_cast<uint16_t>(i << 8);
        for (int b = 0; b < 8; ++b) c = (c & 0x8000) ? static_cast<uint16_t>((c << 1) ^ 0x1021) : static_cast<uint16_t>(c << 1);
        t[i] = c;
    }
    return t;
}
constexpr auto table = make_table();

} // namespace

uint16_t crc16(std::string_view data) noexcept {
    uint16_t crc = 0;
    for (unsigned char ch : data) crc = static_cast<uint16_t>((crc << 8) ^ table[((crc >> 8) ^ ch) & 0xff]);
    return crc;
}

std::string_view hash_tag(std::string_view key) noexcept {
    auto open = key.find('{');
    if (open == std::string_view::npos) return key;
    auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

} // namespace floe::redis
