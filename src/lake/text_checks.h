#pragma once
// Checks on text inside values that every typed-row decoder makes (Avro, Protobuf, JSON):
// UTF-8 validity and uuid text. Header-only: they run on every string of every record.

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace floe::lake {

/// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
inline bool valid_utf8(std::string_view s) {
    auto p = reinterpret_cast<const uint8_t*>(s.data());
    auto e = p + s.size();
    while (p < e) {
        // 8 ASCII bytes at a time
        if (e - p >= 8) {
            uint64_t x;
            std::memcpy(&x, p, 8);
            if (!(x & 0x8080808080808080ull)) {
                p += 8;
                continue;
            }
        }
        uint8_t b = *p;
        if (b < 0x80) {
            ++p;
            continue;
        }
        int n;
        uint32_t cp;
        if ((b & 0xE0) == 0xC0)
            n = 1, cp = b & 0x1F;
        else if ((b & 0xF0) == 0xE0)
            n = 2, cp = b & 0x0F;
        else if ((b & 0xF8) == 0xF0)
            n = 3, cp = b & 0x07;
        else
            return false;
        if (e - p <= n) return false;
        for (int i = 1; i <= n; ++i) {
            if ((p[i] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800)
            || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        p += n + 1;
    }
    return true;
}

// Hex digit values, -1 for anything else (a table: uuid text is parsed on every record, twice).
inline constexpr auto hex_table = [] {
    std::array<int8_t, 256> t{};
    for (auto& x : t)
        x = -1;
    for (int i = 0; i < 10; ++i)
        t['0' + i] = static_cast<int8_t>(i);
    for (int i = 0; i < 6; ++i) {
        t['a' + i] = static_cast<int8_t>(10 + i);
        t['A' + i] = static_cast<int8_t>(10 + i);
    }
    return t;
}();

/// 36-character uuid text (8-4-4-4-12 hex digits) as 16 bytes; false for anything else.
inline bool parse_uuid(std::string_view s, char out[16]) {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return false;
    static constexpr uint8_t starts[16] = {0,  2,  4,  6,  9,  11, 14, 16,
                                           19, 21, 24, 26, 28, 30, 32, 34};
    auto u = reinterpret_cast<const uint8_t*>(s.data());
    int bad = 0;
    for (int i = 0; i < 16; ++i) {
        int h = hex_table[u[starts[i]]], l = hex_table[u[starts[i] + 1]];
        bad |= h | l; // negative when either is not a hex digit
        out[i] = static_cast<char>((h << 4) | (l & 0xF));
    }
    return bad >= 0;
}

} // namespace floe::lake
