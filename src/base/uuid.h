#pragma once

#include "base/random.h"
#include "base/result.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace floe {

/// A 128-bit UUID as 16 raw bytes in network order (Kafka topic ids, Iceberg table uuids).
/// The all-zero value is the nil UUID (Kafka's "no topic id").
struct uuid {
    std::array<uint8_t, 16> bytes{};

    bool is_nil() const noexcept {
        for (auto b : bytes)
            if (b) return false;
        return true;
    }
    auto operator<=>(const uuid&) const = default;

    /// A random (version 4, RFC 4122 variant) UUID from the OS entropy source on every call,
    /// so forked processes never repeat each other's ids. Thread-safe.
    static uuid random() {
        uuid u;
        os_random_bytes(u.bytes.data(), u.bytes.size());
        u.bytes[6] = uint8_t((u.bytes[6] & 0x0F) | 0x40);
        u.bytes[8] = uint8_t((u.bytes[8] & 0x3F) | 0x80);
        return u;
    }

    /// Canonical 8-4-4-4-12 lower-case hex form.
    std::string to_string() const {
        static constexpr char hex[] = "0123456789abcdef";
        std::string s;
        s.reserve(36);
        for (int i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
            s.push_back(hex[bytes[i] >> 4]);
            s.push_back(hex[bytes[i] & 0xF]);
        }
        return s;
    }

    /// Parses the canonical form (hyphens optional). errc::invalid_argument otherwise.
    static result<uuid> parse(std::string_view s) {
        uuid u;
        int n = 0;
        auto nibble = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        for (char c : s) {
            if (c == '-') continue;
            int v = nibble(c);
            if (v < 0 || n >= 32) return fail(errc::invalid_argument, "bad uuid '{}'", s);
            u.bytes[n / 2] = uint8_t(u.bytes[n / 2] | (n % 2 == 0 ? v << 4 : v));
            ++n;
        }
        if (n != 32) return fail(errc::invalid_argument, "bad uuid '{}'", s);
        return u;
    }
};

} // namespace floe

template<>
struct std::hash<floe::uuid> {
    size_t operator()(const floe::uuid& u) const noexcept {
        uint64_t a = 0, b = 0;
        for (int i = 0; i < 8; ++i) {
            a = (a << 8) | u.bytes[i];
            b = (b << 8) | u.bytes[8 + i];
        }
        return size_t(a ^ (b * 0x9E3779B97F4A7C15ull));
    }
};
