#pragma once

// Value encodings of the Parquet spec (Encodings.md) used by Floe: bit packing (LSB first),
// the RLE/bit-packed hybrid (levels, dictionary indices) and DELTA_BINARY_PACKED (integers).
// Encoders append to a caller-owned byte_buffer and never allocate per value; decoders read
// untrusted bytes and fail with errc::corrupt instead of reading past the end.

#include "base/bytes.h"
#include "base/result.h"

#include <bit>
#include <cstdint>
#include <vector>

namespace floe::parquet {

/// Bits needed to store `max_value` (0 for 0).
constexpr int bit_width_of(uint64_t max_value) noexcept {
    return max_value == 0 ? 0 : 64 - std::countl_zero(max_value);
}

/// Packs `n` values of `width` bits each, least significant bit first. The output is
/// ceil(n * width / 8) bytes.
void bit_pack(const uint64_t* values, size_t n, int width, byte_buffer& out);
void bit_pack32(const uint32_t* values, size_t n, int width, byte_buffer& out);
/// Unpacks `n` values of `width` bits from `in` (which must hold ceil(n*width/8) bytes).
void bit_unpack(const uint8_t* in, size_t n, int width, uint64_t* out);

/// Encodes definition or repetition levels (one byte each, `width` <= 8 bits) as an
/// RLE/bit-packed hybrid stream (without the length prefix): runs of 8 or more equal values
/// that can start on a group boundary become RLE runs, the rest bit-packed groups of 8 (the
/// last one padded with zeros). Whole pages at once, with no per-value calls: a page's levels
/// are mostly long runs (flat columns) or short ones (lists), and both scan fast.
void encode_levels(const uint8_t* levels, size_t n, int width, byte_buffer& out);

/// Encodes dictionary indices (`width` <= 32 bits) as an RLE/bit-packed hybrid stream: the
/// same bytes as rle_encoder given the values one by one and finish(), a group of 8 at a step
/// (groups of 8 equal values start RLE runs, the others are bit-packed, 63 groups at most per
/// literal run), with no per-value state machine.
void encode_rle_hybrid(const uint32_t* values, size_t n, int width, byte_buffer& out);

/// RLE/bit-packed hybrid encoder (without the 4-byte length prefix; data pages v1 add it
/// around levels). Runs of 8 or more equal values become RLE runs, the rest bit-packed groups
/// of 8. Call finish() once at the end.
class rle_encoder {
public:
    rle_encoder(byte_buffer& out, int bit_width) : _out(out), _width(bit_width) {}
    void put(uint32_t v) {
        if (v == _current && _repeat > 0) {
            ++_repeat;
            if (_repeat > 8) return; // extends a run already being counted
        } else {
            if (_repeat >= 8) flush_repeated();
            _repeat = 1;
            _current = v;
        }
        _buffered[_num_buffered++] = v;
        if (_num_buffered == 8) flush_buffered();
    }
    /// `n` copies of `v`: after at most 16 single puts the rest extends an RLE run in O(1).
    void put_run(uint32_t v, uint64_t n) {
        while (n > 0 && !(_num_buffered == 0 && _repeat >= 8 && v == _current)) {
            put(v);
            --n;
        }
        _repeat += static_cast<int64_t>(n);
    }
    void finish();

private:
    void flush_buffered();
    void flush_literal(bool close);
    void flush_repeated();

    byte_buffer& _out;
    int _width;
    uint32_t _buffered[8] = {};
    int _num_buffered = 0;
    uint32_t _current = 0;
    int64_t _repeat = 0;
    int64_t _literal_count = 0;
    int64_t _indicator_pos = -1;
};

/// Decodes an RLE/bit-packed hybrid stream of `bit_width`-bit values.
class rle_decoder {
public:
    rle_decoder(bytes_view data, int bit_width) : _r(data), _width(bit_width) {}
    /// Reads exactly n values; fails if the stream ends first or a run is malformed.
    result<void> get(uint32_t* out, size_t n);

private:
    result<void> next_run();
    byte_reader _r;
    int _width;
    uint64_t _run_left = 0;
    bool _literal = false;
    uint32_t _run_value = 0;
    uint64_t _lit_buf[8] = {};
    int _lit_pos = 8;
    uint64_t _lit_groups_left = 0;
};

/// DELTA_BINARY_PACKED with blocks of 128 values in 4 miniblocks of 32. T is int32_t or
/// int64_t; deltas use wrapping arithmetic of T, as the spec requires.
template<typename T> void delta_binary_encode(const T* values, size_t n, byte_buffer& out);

/// Decodes a DELTA_BINARY_PACKED stream into `out` (appending); returns bytes consumed.
/// At most `max_values` values are accepted (the page's value count).
template<typename T>
result<size_t> delta_binary_decode(bytes_view in, size_t max_values, std::vector<T>& out);

} // namespace floe::parquet
