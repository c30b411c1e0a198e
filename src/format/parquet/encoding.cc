#include "format/parquet/encoding.h"

#include "base/varint.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace floe::parquet {

namespace {
inline void put_u64_le(byte_buffer& out, uint64_t v, size_t nbytes) {
    uint8_t b[8];
    if constexpr (std::endian::native == std::endian::big) v = std::byteswap(v);
    std::memcpy(b, &v, 8);
    out.insert(out.end(), b, b + nbytes);
}
} // namespace

template<typename U>
static void bit_pack_impl(const U* values, size_t n, int width, byte_buffer& out) {
    if (width == 0 || n == 0) return;
    size_t start = out.size();
    size_t total = (n * static_cast<size_t>(width) + 7) / 8;
    out.resize(start + total + 8); // slack for 8-byte stores
    uint8_t* dst = out.data() + start;
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    unsigned __int128 acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; ++i) {
        acc |= static_cast<unsigned __int128>(static_cast<uint64_t>(values[i]) & mask) << bits;
        bits += width;
        if (bits >= 64) {
            uint64_t lo = static_cast<uint64_t>(acc);
            std::memcpy(dst, &lo, 8);
            dst += 8;
            acc >>= 64;
            bits -= 64;
        }
    }
    if (bits > 0) {
        uint64_t lo = static_cast<uint64_t>(acc);
        std::memcpy(dst, &lo, 8);
    }
    out.resize(start + total);
}

void bit_pack(const uint64_t* values, size_t n, int width, byte_buffer& out) {
    bit_pack_impl(values, n, width, out);
}
void bit_pack32(const uint32_t* values, size_t n, int width, byte_buffer& out) {
    bit_pack_impl(values, n, width, out);
}

void bit_unpack(const uint8_t* in, size_t n, int width, uint64_t* out) {
    if (width == 0) {
        std::fill(out, out + n, 0);
        return;
    }
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    size_t bitpos = 0;
    for (size_t i = 0; i < n; ++i) {
        size_t byte = bitpos >> 3;
        int shift = static_cast<int>(bitpos & 7);
        // Gather up to 9 bytes needed for a 64-bit value at an odd shift, staying in bounds.
        size_t need = (static_cast<size_t>(shift + width) + 7) / 8;
        unsigned __int128 acc = 0;
        for (size_t k = 0; k < need; ++k)
            acc |= static_cast<unsigned __int128>(in[byte + k]) << (8 * k);
        out[i] = static_cast<uint64_t>(acc >> shift) & mask;
        bitpos += static_cast<size_t>(width);
    }
}

// ---- RLE / bit-packed hybrid encoder

namespace {

/// Packs 8 levels (one byte each, every one below 2^width) into `width` bytes, LSB first.
/// Stores 8 bytes at `o`: the bytes past `width` are garbage for the next group to overwrite.
inline void pack_group8(const uint8_t* p, int width, uint8_t* o) {
    if constexpr (std::endian::native == std::endian::little) {
        // Halve the lanes three times: pairs of bytes, then of 16-bit lanes, then of 32-bit.
        uint64_t x;
        std::memcpy(&x, p, 8);
        auto w = static_cast<unsigned>(width);
        x = (x & 0x00FF00FF00FF00FFull) | ((x & 0xFF00FF00FF00FF00ull) >> (8 - w));
        x = (x & 0x0000FFFF0000FFFFull) | ((x & 0xFFFF0000FFFF0000ull) >> (16 - 2 * w));
        x = (x & 0xFFFFFFFFull) | ((x >> 32) << (4 * w));
        std::memcpy(o, &x, 8); // width <= 8: the 8w bits fit
    } else {
        uint64_t acc = 0;
        for (size_t j = 0; j < 8; ++j)
            acc |= static_cast<uint64_t>(p[j]) << (j * static_cast<size_t>(width));
        for (int b = 0; b < width; ++b)
            o[b] = static_cast<uint8_t>(acc >> (8 * b));
    }
}

/// Bit-packs `n` values of `w` <= 32 bits each, LSB first, continuing `acc`/`bits` (bits < 32
/// pending), one 4-byte little-endian store per full word; returns the end of the stored words
/// and leaves the rest (< 32 bits) in `acc`/`bits`.
template<typename T>
inline uint8_t* pack_words32(const T* v, size_t n, size_t w, uint8_t* d, uint64_t& acc,
                             size_t& bits) {
    for (size_t k = 0; k < n; ++k) {
        acc |= static_cast<uint64_t>(v[k]) << bits; // v[k] < 2^w and bits < 32: fits
        bits += w;
        if (bits >= 32) {
            auto lo = static_cast<uint32_t>(acc);
            if constexpr (std::endian::native == std::endian::big) lo = std::byteswap(lo);
            std::memcpy(d, &lo, 4);
            d += 4;
            acc >>= 32;
            bits -= 32;
        }
    }
    return d;
}

/// The first position p >= i where v[p .. p+8) are all equal, or n if there is none.
inline size_t find_run8(const uint8_t* v, size_t i, size_t n) {
    if (n < 8) return n;
    size_t p = i;
#if defined(__SSE2__)
    // Bit t of `eq` says v[p+t] == v[p+t+1]; 7 set bits in a row from t mark a run of 8 at p+t.
    // 16 candidate positions per step, reading v[p .. p+33).
    for (; p + 33 <= n; p += 16) {
        __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + p));
        __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + p + 1));
        __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + p + 16));
        __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + p + 17));
        uint32_t eq = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0)))
                      | (static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1))) << 16);
        uint32_t r = eq & (eq >> 1); // 2 in a row
        r &= r >> 2;                 // 4 in a row
        r &= r >> 3;                 // 7 in a row
        r &= 0xFFFFu;                // windows starting in this step
        if (r) return p + static_cast<size_t>(std::countr_zero(r));
    }
#endif
    for (; p + 8 <= n; ++p) {
        uint64_t w;
        std::memcpy(&w, v + p, 8);
        if (w == 0x0101010101010101ull * v[p]) return p;
    }
    return n;
}

} // namespace

void encode_levels(const uint8_t* v, size_t n, int width, byte_buffer& out) {
    if (n == 0) return;
    size_t lit = 0; // first value not yet encoded
    // Values [lit, end) as bit-packed groups of 8; `end` - lit is a multiple of 8 except at the
    // end of the page, where the last group is padded with zeros.
    auto put_literal = [&](size_t end) {
        size_t count = end - lit;
        if (count == 0) return;
        size_t groups = (count + 7) / 8;
        put_uvarint(out, (static_cast<uint64_t>(groups) << 1) | 1);
        size_t at = out.size();
        auto w = static_cast<size_t>(width);
        out.resize(at + groups * w + 8); // slack: pack_group8 stores up to 8 bytes
        uint8_t* o = out.data() + at;
        const uint8_t* p = v + lit;
        size_t full = count / 8;
        for (size_t g = 0; g < full; ++g)
            pack_group8(p + g * 8, width, o + g * w);
        if (full < groups) {
            uint8_t last[8] = {};
            std::memcpy(last, p + full * 8, count - full * 8);
            pack_group8(last, width, o + full * w);
        }
        out.resize(at + groups * w);
        lit = end;
    };
    // Only runs of 8 or more matter (shorter ones stay bit-packed), so the scan jumps from one
    // to the next; `i` is always the start of a run of equal values.
    size_t i = 0;
    while (i < n) {
        size_t s = find_run8(v, i, n);
        if (s == n) break;
        uint8_t x = v[s];
        uint64_t pat = 0x0101010101010101ull * x;
        size_t j = s + 8;
        while (j + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, v + j, 8);
            if (w != pat) break;
            j += 8;
        }
        while (j < n && v[j] == x)
            ++j;
        size_t run = j - s;
        // A bit-packed run holds whole groups: values of this run complete the pending group
        // first, and the rest (if still 8 or more) becomes an RLE run.
        size_t pad = (8 - (s - lit) % 8) % 8;
        if (run >= pad + 8) {
            put_literal(s + pad);
            put_uvarint(out, static_cast<uint64_t>(run - pad) << 1);
            out.push_back(x); // width <= 8: one byte
            lit = j;
        }
        i = j;
    }
    put_literal(n);
}

void rle_encoder::flush_buffered() {
    if (_repeat >= 8) {
        // The buffered values all belong to the run; drop them and close any literal run.
        _num_buffered = 0;
        if (_literal_count != 0) flush_literal(true);
        return;
    }
    _literal_count += _num_buffered;
    int64_t groups = _literal_count / 8;
    // A literal run header holds up to 63 groups.
    flush_literal(groups + 1 >= (1 << 6));
    _repeat = 0;
}

void rle_encoder::flush_literal(bool close) {
    if (_indicator_pos < 0) {
        _indicator_pos = static_cast<int64_t>(_out.size());
        _out.push_back(0);
    }
    if (_num_buffered > 0) {
        bit_pack32(_buffered, 8, _width, _out);
        _num_buffered = 0;
    }
    if (close) {
        int64_t groups = (_literal_count + 7) / 8;
        _out[static_cast<size_t>(_indicator_pos)] = static_cast<uint8_t>((groups << 1) | 1);
        _indicator_pos = -1;
        _literal_count = 0;
    }
}

void rle_encoder::flush_repeated() {
    put_uvarint(_out, static_cast<uint64_t>(_repeat) << 1);
    put_u64_le(_out, _current, static_cast<size_t>((_width + 7) / 8));
    _num_buffered = 0;
    _repeat = 0;
}

void rle_encoder::finish() {
    if (_literal_count == 0 && _repeat > 0 && (_repeat == _num_buffered || _num_buffered == 0)) {
        flush_repeated();
    } else if (_num_buffered > 0 || _literal_count > 0) {
        for (int i = _num_buffered; i < 8 && _num_buffered > 0; ++i)
            _buffered[i] = 0;
        _literal_count += _num_buffered;
        if (_num_buffered > 0) _num_buffered = 8;
        flush_literal(true);
        _repeat = 0;
    }
}

void encode_rle_hybrid(const uint32_t* v, size_t n, int width, byte_buffer& out) {
    // Mirrors rle_encoder: values are taken in groups of 8 from the end of the last RLE run;
    // a group of 8 equal values starts an RLE run that takes every following equal value,
    // any other group is bit-packed into the open literal run (closed at 63 groups or by an
    // RLE run); at the end, fewer than 8 values are an RLE run if they are equal and no literal
    // run is open, else a zero-padded literal group.
    if (n == 0) return;
    auto w = static_cast<size_t>(width);
    size_t value_bytes = (w + 7) / 8;
    // Room for the worst case, trimmed at the end: per group of 8 values either a literal
    // header byte and w bytes, or a run of 10 + 4 bytes at most; 8 bytes of slack for stores.
    size_t start = out.size();
    out.resize(start + (n / 8 + 2) * (w + 16) + 8);
    uint8_t* base = out.data();
    uint8_t* d = base + start;
    uint8_t* indicator = nullptr; // the open literal run's header byte
    uint64_t groups = 0;          // groups in the open literal run
    auto close_literal = [&] {
        if (!indicator) return;
        *indicator = static_cast<uint8_t>((groups << 1) | 1);
        indicator = nullptr;
        groups = 0;
    };
    auto put_group = [&](const uint32_t* g) {
        if (!indicator) indicator = d++;
        // 8 values of w <= 32 bits: w bytes, written 4 at a time (and up to 8 past the end).
        uint64_t acc = 0;
        size_t bits = 0;
        d = pack_words32(g, 8, w, d, acc, bits);
        if constexpr (std::endian::native == std::endian::big) acc = std::byteswap(acc);
        std::memcpy(d, &acc, 8);
        d += bits / 8; // 8w bits in all: what is left is whole bytes
        if (++groups == 63) close_literal();
    };
    auto put_run = [&](uint32_t x, size_t count) {
        close_literal();
        uint64_t h = static_cast<uint64_t>(count) << 1;
        while (h >= 0x80) {
            *d++ = static_cast<uint8_t>(h) | 0x80;
            h >>= 7;
        }
        *d++ = static_cast<uint8_t>(h);
        for (size_t b = 0; b < value_bytes; ++b)
            *d++ = static_cast<uint8_t>(x >> (8 * b));
    };
    size_t pos = 0;
    while (pos + 8 <= n) {
        const uint32_t* g = v + pos;
        uint32_t x = g[0];
        bool same = true;
        for (size_t k = 1; k < 8; ++k)
            same &= g[k] == x;
        if (!same) {
            put_group(g);
            pos += 8;
            continue;
        }
        size_t j = pos + 8;
        while (j < n && v[j] == x)
            ++j;
        put_run(x, j - pos);
        pos = j;
    }
    size_t m = n - pos;
    if (m > 0) {
        uint32_t x = v[pos];
        bool same = true;
        for (size_t k = 1; k < m; ++k)
            same &= v[pos + k] == x;
        if (same && !indicator) {
            put_run(x, m);
        } else {
            uint32_t last[8] = {};
            std::memcpy(last, v + pos, m * sizeof(uint32_t));
            put_group(last);
        }
    }
    close_literal();
    out.resize(static_cast<size_t>(d - base));
}

// ---- RLE / bit-packed hybrid decoder

result<void> rle_decoder::next_run() {
    uint64_t header = FLOE_TRY(read_uvarint(_r, 32));
    if (header & 1) {
        uint64_t groups = header >> 1;
        if (groups == 0) return fail(errc::corrupt, "rle: empty literal run");
        _literal = true;
        _lit_groups_left = groups;
        _run_left = groups * 8;
        _lit_pos = 8;
    } else {
        _literal = false;
        _run_left = header >> 1;
        if (_run_left == 0) return fail(errc::corrupt, "rle: empty repeated run");
        size_t nbytes = static_cast<size_t>((_width + 7) / 8);
        auto b = FLOE_TRY(_r.bytes(nbytes));
        uint64_t v = 0;
        for (size_t i = 0; i < nbytes; ++i)
            v |= uint64_t{b[i]} << (8 * i);
        if (_width < 32 && (v >> _width) != 0)
            return fail(errc::corrupt, "rle: run value {} wider than {} bits", v, _width);
        _run_value = static_cast<uint32_t>(v);
    }
    return {};
}

result<void> rle_decoder::get(uint32_t* out, size_t n) {
    if (_width < 0 || _width > 32)
        return fail(errc::corrupt, "rle: bit width {} out of range", _width);
    size_t i = 0;
    while (i < n) {
        if (_run_left == 0) FLOE_TRY(next_run());
        if (!_literal) {
            size_t take = static_cast<size_t>(std::min<uint64_t>(_run_left, n - i));
            std::fill(out + i, out + i + take, _run_value);
            i += take;
            _run_left -= take;
        } else {
            if (_lit_pos == 8) {
                auto b = FLOE_TRY(_r.bytes(static_cast<size_t>(_width)));
                bit_unpack(b.data(), 8, _width, _lit_buf);
                _lit_pos = 0;
            }
            while (_lit_pos < 8 && i < n && _run_left > 0) {
                out[i++] = static_cast<uint32_t>(_lit_buf[_lit_pos++]);
                --_run_left;
            }
        }
    }
    return {};
}

// ---- DELTA_BINARY_PACKED

namespace {
/// Bit-packs 32 values of `width` <= 32 bits (4 * width bytes), 4 bytes at a store.
inline void pack32_narrow(const uint64_t* v, int width, byte_buffer& out) {
    auto w = static_cast<size_t>(width);
    size_t at = out.size();
    out.resize(at + 4 * w);
    uint64_t acc = 0;
    size_t bits = 0;
    // 32 * w bits are a whole number of 32-bit words: nothing is left over.
    pack_words32(v, 32, w, out.data() + at, acc, bits);
}
} // namespace

template<typename T> void delta_binary_encode(const T* values, size_t n, byte_buffer& out) {
    using U = std::make_unsigned_t<T>;
    constexpr size_t block = 128, mini = 4, per_mini = 32;
    put_uvarint(out, block);
    put_uvarint(out, mini);
    put_uvarint(out, n);
    put_varint(out, static_cast<int64_t>(n > 0 ? values[0] : 0));
    if (n <= 1) return;
    U deltas[block];
    uint64_t packed[per_mini];
    for (size_t i = 1; i < n; i += block) {
        size_t count = std::min(block, n - i);
        T min_delta = std::numeric_limits<T>::max();
        for (size_t k = 0; k < count; ++k) {
            U d = static_cast<U>(static_cast<U>(values[i + k]) - static_cast<U>(values[i + k - 1]));
            deltas[k] = d;
            min_delta = std::min(min_delta, static_cast<T>(d));
        }
        for (size_t k = count; k < block; ++k)
            deltas[k] = static_cast<U>(min_delta);
        put_varint(out, static_cast<int64_t>(min_delta));
        int widths[mini];
        size_t width_pos = out.size();
        out.resize(out.size() + mini);
        size_t used = (count + per_mini - 1) / per_mini;
        for (size_t m = 0; m < mini; ++m) {
            if (m >= used) {
                widths[m] = 0;
                out[width_pos + m] = 0;
                continue;
            }
            // The width of the largest value is the width of all of them OR-ed together.
            U any = 0;
            for (size_t k = 0; k < per_mini; ++k)
                any |= static_cast<U>(deltas[m * per_mini + k] - static_cast<U>(min_delta));
            widths[m] = bit_width_of(any);
            out[width_pos + m] = static_cast<uint8_t>(widths[m]);
        }
        for (size_t m = 0; m < used; ++m) {
            if (widths[m] == 0) continue;
            for (size_t k = 0; k < per_mini; ++k)
                packed[k] = static_cast<U>(deltas[m * per_mini + k] - static_cast<U>(min_delta));
            if (widths[m] <= 32)
                pack32_narrow(packed, widths[m], out);
            else
                bit_pack(packed, per_mini, widths[m], out);
        }
    }
}

template<typename T>
result<size_t> delta_binary_decode(bytes_view in, size_t max_values, std::vector<T>& out) {
    using U = std::make_unsigned_t<T>;
    byte_reader r(in);
    uint64_t block = FLOE_TRY(read_uvarint(r, 32));
    uint64_t mini = FLOE_TRY(read_uvarint(r, 32));
    uint64_t total = FLOE_TRY(read_uvarint(r, 32));
    int64_t first = zigzag_decode(FLOE_TRY(read_uvarint(r, 64)));
    if (block == 0 || block % 128 != 0 || block > 65536)
        return fail(errc::corrupt, "delta: block size {} is not a multiple of 128", block);
    if (mini == 0 || block % mini != 0 || (block / mini) % 32 != 0)
        return fail(errc::corrupt, "delta: {} miniblocks do not divide block of {}", mini, block);
    if (total > max_values)
        return fail(errc::corrupt, "delta: {} values but the page holds {}", total, max_values);
    if (total == 0) return r.position();
    size_t per_mini = block / mini;
    out.push_back(static_cast<T>(first));
    U last = static_cast<U>(static_cast<T>(first));
    size_t left = total - 1;
    std::vector<uint64_t> tmp(per_mini);
    std::vector<uint8_t> widths(mini);
    while (left > 0) {
        int64_t min_delta = zigzag_decode(FLOE_TRY(read_uvarint(r, 64)));
        auto wb = FLOE_TRY(r.bytes(mini));
        std::copy(wb.begin(), wb.end(), widths.begin());
        for (size_t m = 0; m < mini && left > 0; ++m) {
            int w = widths[m];
            if (w > static_cast<int>(sizeof(T) * 8))
                return fail(errc::corrupt, "delta: miniblock bit width {} too wide", w);
            auto b = FLOE_TRY(r.bytes(per_mini * static_cast<size_t>(w) / 8));
            bit_unpack(b.data(), per_mini, w, tmp.data());
            size_t take = std::min(left, per_mini);
            for (size_t k = 0; k < take; ++k) {
                last = static_cast<U>(last + static_cast<U>(min_delta) + static_cast<U>(tmp[k]));
                out.push_back(static_cast<T>(last));
            }
            left -= take;
        }
    }
    return r.position();
}

template void delta_binary_encode<int32_t>(const int32_t*, size_t, byte_buffer&);
template void delta_binary_encode<int64_t>(const int64_t*, size_t, byte_buffer&);
template result<size_t> delta_binary_decode<int32_t>(bytes_view, size_t, std::vector<int32_t>&);
template result<size_t> delta_binary_decode<int64_t>(bytes_view, size_t, std::vector<int64_t>&);

} // namespace floe::parquet
