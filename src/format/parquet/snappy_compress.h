#pragma once

// Floe's own compressor for the snappy format. Every snappy decoder reads what it writes (the
// format fixes only the stream, not how matches are found); it trades a few percent of ratio for
// speed against the reference compressor: on event data it runs 1.2-1.5x faster, with output
// 1-3% larger. Decompression stays with the snappy library.
//
// How: the input is cut into independent 64 KiB blocks (so every offset fits the 2-byte copy
// form), a 16 KiB table of 2-byte positions finds 4-byte matches (it stays in L1 cache), and the
// search probes every fourth position from the end of the last match, growing its stride after
// misses; a found match is extended backwards as well as forwards, so sparse probing loses little
// of a match's length. Right after a match only its end is looked up (and entered).

#include <cstddef>
#include <cstdint>
#include <memory>

namespace floe::parquet {

class snappy_compressor {
public:
    snappy_compressor();
    ~snappy_compressor();
    snappy_compressor(const snappy_compressor&) = delete;
    snappy_compressor& operator=(const snappy_compressor&) = delete;

    /// Largest input the snappy format can describe (its length preamble is 32 bits).
    static constexpr size_t max_input_size = UINT32_MAX;
    /// Upper bound of the compressed size of `n` input bytes.
    static constexpr size_t max_compressed_size(size_t n) noexcept { return 32 + n + n / 6; }

    /// Compresses `n` bytes at `in` (n <= max_input_size) into `out`, which has room for
    /// max_compressed_size(n) bytes, and returns the compressed size.
    size_t compress(const uint8_t* in, size_t n, uint8_t* out) noexcept;

private:
    std::unique_ptr<uint16_t[]> _table;
};

} // namespace floe::parquet
