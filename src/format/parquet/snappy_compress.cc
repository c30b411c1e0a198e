#include "format/parquet/snappy_compress.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace floe::parquet {

namespace {

static_assert(std::endian::native == std::endian::little,
              "match extension compares 8-byte little-endian words");

constexpr size_t block_size = 65536; // every offset fits the 2-byte copy form
constexpr int max_table_bits = 13;   // 8K entries of 2 bytes: 16 KiB, stays in L1
constexpr int min_table_bits = 8;
constexpr size_t min_match_input = 16; // shorter blocks are one literal
constexpr uint32_t skip_shift = 5;     // the stride grows by one every 32 misses
constexpr uint32_t first_stride = 4;   // probe every fourth position after a match

// Element tags (snappy format_description): the low two bits say literal, or copy with a 1-,
// 2- or 4-byte offset.
constexpr uint8_t tag_literal = 0;
constexpr uint8_t tag_copy1 = 1;
constexpr uint8_t tag_copy2 = 2;

inline uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

inline uint32_t hash4(const uint8_t* p, int shift) {
    return (load32(p) * 0x9E3779B1u) >> shift;
}

/// Writes a literal of `n` >= 1 bytes from `src`; `src_end` and `out_end` bound the 16-byte
/// fast path for short literals (it may copy past the literal, never past either buffer).
inline uint8_t* emit_literal(uint8_t* op, const uint8_t* src, size_t n, const uint8_t* src_end,
                             const uint8_t* out_end) {
    size_t m = n - 1;
    if (m < 60) {
        *op++ = static_cast<uint8_t>(tag_literal | (m << 2));
        if (n <= 16 && src_end - src >= 16 && out_end - op >= 16) {
            std::memcpy(op, src, 16);
            return op + n;
        }
    } else {
        // Tag values 60..63: the length minus one follows in 1..4 little-endian bytes.
        int bytes = m < (1u << 8) ? 1 : m < (1u << 16) ? 2 : m < (1u << 24) ? 3 : 4;
        *op++ = static_cast<uint8_t>(tag_literal | ((59 + bytes) << 2));
        for (int i = 0; i < bytes; ++i)
            *op++ = static_cast<uint8_t>(m >> (8 * i));
    }
    std::memcpy(op, src, n);
    return op + n;
}

/// Writes a copy of `len` >= 4 bytes from `offset` (1..65535) back, split into elements of at
/// most 64 bytes, each at least 4 long.
inline uint8_t* emit_copy(uint8_t* op, size_t offset, size_t len) {
    auto copy2 = [&](size_t l) {
        *op++ = static_cast<uint8_t>(tag_copy2 | ((l - 1) << 2));
        *op++ = static_cast<uint8_t>(offset);
        *op++ = static_cast<uint8_t>(offset >> 8);
    };
    while (len >= 68) {
        copy2(64);
        len -= 64;
    }
    if (len > 64) { // 65..67: leave at least 4 for the last element
        copy2(60);
        len -= 60;
    }
    if (len < 12 && offset < 2048) {
        *op++ = static_cast<uint8_t>(tag_copy1 | ((len - 4) << 2) | ((offset >> 8) << 5));
        *op++ = static_cast<uint8_t>(offset);
    } else {
        copy2(len);
    }
    return op;
}

/// How far the bytes at `s` (known equal to `c` for 4 bytes) keep matching, up to `end`.
inline const uint8_t* extend_match(const uint8_t* s, const uint8_t* c, const uint8_t* end) {
    s += 4;
    c += 4;
    while (end - s >= 8) {
        uint64_t x = load64(s) ^ load64(c);
        if (x) return s + (std::countr_zero(x) >> 3);
        s += 8;
        c += 8;
    }
    while (s < end && *s == *c) {
        ++s;
        ++c;
    }
    return s;
}

} // namespace

snappy_compressor::snappy_compressor() : _table(new uint16_t[size_t{1} << max_table_bits]) {}
snappy_compressor::~snappy_compressor() = default;

size_t snappy_compressor::compress(const uint8_t* in, size_t n, uint8_t* out) noexcept {
    uint8_t* op = out;
    const uint8_t* const out_end = out + max_compressed_size(n);
    for (uint64_t v = n; ; v >>= 7) { // preamble: the uncompressed length, varint
        if (v < 128) {
            *op++ = static_cast<uint8_t>(v);
            break;
        }
        *op++ = static_cast<uint8_t>(v | 128);
    }
    uint16_t* table = _table.get();
    const uint8_t* const in_end = in + n;
    for (size_t block_start = 0; block_start < n; block_start += block_size) {
        const uint8_t* const base = in + block_start;
        const size_t len = std::min(block_size, n - block_start);
        const uint8_t* const end = base + len;
        const uint8_t* anchor = base; // first byte not yet emitted
        if (len >= min_match_input) {
            int bits = std::clamp(static_cast<int>(std::bit_width(len - 1)), min_table_bits, max_table_bits);
            const int shift = 32 - bits;
            std::memset(table, 0, sizeof(uint16_t) << bits);
            // A match may start up to here: hashing loads 4 bytes, and the last bytes are
            // left as a literal (as small a loss as any and no bounds checks in the loop).
            const uint8_t* const limit = end - 12;
            const uint8_t* ip = base + 1;
            for (;;) {
                // Search (ip <= limit): the table holds positions below ip, so a hit is a real
                // offset >= 1.
                const uint8_t* cand;
                uint32_t steps = first_stride << skip_shift;
                for (;;) {
                    uint32_t h = hash4(ip, shift);
                    cand = base + table[h];
                    table[h] = static_cast<uint16_t>(ip - base);
                    if (load32(cand) == load32(ip)) break;
                    size_t stride = steps++ >> skip_shift;
                    if (static_cast<size_t>(limit - ip) < stride) goto block_done;
                    ip += stride;
                }
                while (ip > anchor && cand > base && ip[-1] == cand[-1]) {
                    --ip;
                    --cand;
                }
                if (ip > anchor) op = emit_literal(op, anchor, ip - anchor, in_end, out_end);
                // Emit matches back to back while the position right after one matches too.
                for (;;) {
                    const uint8_t* match_end = extend_match(ip, cand, end);
                    op = emit_copy(op, static_cast<size_t>(ip - cand),
                                   static_cast<size_t>(match_end - ip));
                    ip = anchor = match_end;
                    if (ip > limit) goto block_done;
                    uint32_t h = hash4(ip, shift);
                    cand = base + table[h];
                    table[h] = static_cast<uint16_t>(ip - base);
                    if (load32(cand) != load32(ip)) {
                        if (++ip > limit) goto block_done;
                        break;
                    }
                }
            }
        }
    block_done:
        if (anchor < end) op = emit_literal(op, anchor, end - anchor, in_end, out_end);
    }
    return static_cast<size_t>(op - out);
}

} // namespace floe::parquet
