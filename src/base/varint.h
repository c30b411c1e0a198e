#pragma once

#include "base/bytes.h"

#include <cstdint>

namespace floe {

/// ZigZag maps signed to unsigned so small magnitudes encode short (Protobuf, Avro, Kafka).
constexpr uint32_t zigzag_encode(int32_t v) noexcept {
    return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}
constexpr uint64_t zigzag_encode(int64_t v) noexcept {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int32_t zigzag_decode(uint32_t v) noexcept {
    return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
}
constexpr int64_t zigzag_decode(uint64_t v) noexcept {
    return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

/// Unsigned LEB128 ("varint"): 7 bits per byte, low group first. At most 10 bytes for 64 bits.
inline void put_uvarint(byte_buffer& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<uint8_t>(v) | 0x80);
        v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
}
inline void put_varint(byte_buffer& out, int64_t v) { put_uvarint(out, zigzag_encode(v)); }

constexpr size_t uvarint_size(uint64_t v) noexcept {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

/// Reads an unsigned varint of at most `max_bits` significant bits; fails on truncation or on an
/// encoding longer than the type allows (a hostile input cannot make it loop or overflow).
inline result<uint64_t> read_uvarint(byte_reader& r, unsigned max_bits = 64) {
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        auto b = r.u8();
        if (!b) return fail(errc::corrupt, "truncated varint at offset {}", r.position());
        uint64_t part = *b & 0x7F;
        bool overflows = shift >= max_bits
                         || (max_bits - shift < 7 && (part >> (max_bits - shift)) != 0);
        if (overflows)
            return fail(errc::corrupt, "varint longer than {} bits at offset {}", max_bits,
                        r.position());
        v |= part << shift;
        if ((*b & 0x80) == 0) return v;
        shift += 7;
    }
}
inline result<int64_t> read_varint(byte_reader& r) {
    return zigzag_decode(FLOE_TRY(read_uvarint(r, 64)));
}
inline result<int32_t> read_varint32(byte_reader& r) {
    return zigzag_decode(static_cast<uint32_t>(FLOE_TRY(read_uvarint(r, 32))));
}

} // namespace floe
