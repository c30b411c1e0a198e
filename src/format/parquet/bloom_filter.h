#pragma once

// Split-block bloom filter as Parquet's BloomFilter.md defines it: blocks of eight 32-bit words,
// xxHash64 (seed 0) of the plain-encoded value (byte arrays without length prefix), block
// chosen from the hash's high 32 bits, one bit per word set from the low 32 bits and 8 salts.
// A plain value; not thread-safe.

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>
#include <span>
#include <vector>

namespace floe::parquet {

class bloom_filter {
public:
    /// Bytes for `ndv` distinct values at false-positive rate `fpp`: a power of two, at least
    /// 32 and at most `max_bytes`.
    static size_t optimal_bytes(uint64_t ndv, double fpp, size_t max_bytes = 128u << 20);
    static uint64_t hash(bytes_view value);
    static uint64_t hash(std::string_view value) { return hash(as_bytes(value)); }
    static uint64_t hash_i64(int64_t v);
    static uint64_t hash_i32(int32_t v);

    /// An empty filter of `num_bytes` (a multiple of 32).
    explicit bloom_filter(size_t num_bytes);
    /// A filter over the bitset as stored in a file (num_bytes a positive multiple of 32).
    static result<bloom_filter> from_bitset(bytes_view bitset);

    void insert(uint64_t h) noexcept;
    /// Inserts every hash, fetching blocks a few hashes ahead (they are random cache lines).
    void insert(std::span<const uint64_t> hs) noexcept;
    bool may_contain(uint64_t h) const noexcept;
    /// Halves the filter (OR-ing block pairs, which keeps every inserted hash found, since the
    /// block index is the top bits of the hash's high word) while the estimated false-positive
    /// rate of the result stays under `fpp`.
    void fold_to_fpp(double fpp);
    size_t num_bytes() const noexcept { return _words.size() * 4; }
    /// The bitset in file order (little-endian words).
    bytes_view bitset() const noexcept {
        return {reinterpret_cast<const uint8_t*>(_words.data()), _words.size() * 4};
    }

private:
    bloom_filter() = default;
    /// The first word of the 8-word block a hash selects: the top 32 bits scaled to the blocks.
    size_t block_start(uint64_t h) const noexcept {
        return static_cast<size_t>(((h >> 32) * (_words.size() / 8)) >> 32) * 8;
    }
    std::vector<uint32_t> _words;
};

} // namespace floe::parquet
