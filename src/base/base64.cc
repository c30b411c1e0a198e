#include "base/base64.h"

namespace floe {
namespace {

constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

} // namespace

std::string base64_encode(std::span<const uint8_t> raw) {
    std::string out;
    out.reserve((raw.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= raw.size(); i += 3) {
        uint32_t v = uint32_t(raw[i]) << 16 | uint32_t(raw[i + 1]) << 8 | raw[i + 2];
        for (int s = 18; s >= 0; s -= 6)
            out.push_back(alphabet[(v >> s) & 63]);
    }
    if (size_t left = raw.size() - i; left > 0) {
        uint32_t v = uint32_t(raw[i]) << 16 | (left == 2 ? uint32_t(raw[i + 1]) << 8 : 0);
        out.push_back(alphabet[(v >> 18) & 63]);
        out.push_back(alphabet[(v >> 12) & 63]);
        out.push_back(left == 2 ? alphabet[(v >> 6) & 63] : '=');
        out.push_back('=');
    }
    return out;
}

std::optional<std::vector<uint8_t>> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
    std::vector<uint8_t> out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        bool last = i + 4 == text.size();
        uint32_t v = 0;
        for (size_t j = 0; j < 4; ++j) {
            char c = text[i + j];
            int d = value_of(c);
            if (d < 0) {
                if (!(c == '=' && last && j >= 4 - pad)) return std::nullopt;
                d = 0;
            }
            v = v << 6 | uint32_t(d);
        }
        out.push_back(uint8_t(v >> 16));
        if (!last || pad < 2) out.push_back(uint8_t(v >> 8));
        if (!last || pad < 1) out.push_back(uint8_t(v));
        // Non-canonical encodings (unused bits set) are refused: one text per byte string.
        if (last && pad == 2 && (v & 0xFFFF) != 0) return std::nullopt;
        if (last && pad == 1 && (v & 0xFF) != 0) return std::nullopt;
    }
    return out;
}

} // namespace floe
