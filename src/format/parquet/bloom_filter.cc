#include "format/parquet/bloom_filter.h"

#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>

namespace floe::parquet {

namespace {
constexpr uint32_t salt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                              0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
static_assert(std::endian::native == std::endian::little,
              "bloom filter assumes little-endian words");
} // namespace

size_t bloom_filter::optimal_bytes(uint64_t ndv, double fpp, size_t max_bytes) {
    if (ndv == 0) return 32;
    double bits = -8.0 * static_cast<double>(ndv) / std::log(1.0 - std::pow(fpp, 1.0 / 8.0));
    double bytes = bits / 8.0;
    size_t n = 32;
    while (static_cast<double>(n) < bytes && n < max_bytes)
        n <<= 1;
    return n;
}

uint64_t bloom_filter::hash(bytes_view value) {
    return XXH64(value.data(), value.size(), 0);
}
uint64_t bloom_filter::hash_i64(int64_t v) {
    return XXH64(&v, 8, 0);
}
uint64_t bloom_filter::hash_i32(int32_t v) {
    return XXH64(&v, 4, 0);
}

bloom_filter::bloom_filter(size_t num_bytes)
    : _words(std::max<size_t>(32, num_bytes / 32 * 32) / 4, 0) {}

result<bloom_filter> bloom_filter::from_bitset(bytes_view bitset) {
    if (bitset.empty() || bitset.size() % 32 != 0)
        return fail(errc::corrupt,
                    "bloom filter bitset of {} bytes is not a positive multiple of 32",
                    bitset.size());
    bloom_filter f;
    f._words.resize(bitset.size() / 4);
    std::memcpy(f._words.data(), bitset.data(), bitset.size());
    return f;
}

void bloom_filter::insert(uint64_t h) noexcept {
    uint32_t key = static_cast<uint32_t>(h);
    uint32_t* block = _words.data() + block_start(h);
    for (int i = 0; i < 8; ++i)
        block[i] |= uint32_t{1} << ((key * salt[i]) >> 27);
}

void bloom_filter::insert(std::span<const uint64_t> hs) noexcept {
    constexpr size_t ahead = 8;
    for (size_t i = 0; i < hs.size(); ++i) {
        if (i + ahead < hs.size()) __builtin_prefetch(_words.data() + block_start(hs[i + ahead]), 1);
        insert(hs[i]);
    }
}

bool bloom_filter::may_contain(uint64_t h) const noexcept {
    uint32_t key = static_cast<uint32_t>(h);
    const uint32_t* block = _words.data() + block_start(h);
    for (int i = 0; i < 8; ++i)
        if ((block[i] & (uint32_t{1} << ((key * salt[i]) >> 27))) == 0) return false;
    return true;
}

void bloom_filter::fold_to_fpp(double fpp) {
    // A query probes one bit in each of a block's 8 words; with a fraction f of bits set the
    // false-positive rate is about f^8. Stay at half the target to allow for uneven blocks.
    while (_words.size() >= 16 && (_words.size() / 8) % 2 == 0) {
        size_t half_blocks = _words.size() / 16;
        uint64_t set = 0;
        for (size_t b = 0; b < half_blocks; ++b)
            for (size_t w = 0; w < 8; ++w)
                set += std::popcount(_words[(2 * b) * 8 + w] | _words[(2 * b + 1) * 8 + w]);
        double f = static_cast<double>(set) / static_cast<double>(half_blocks * 256);
        if (std::pow(f, 8) > fpp / 2) break;
        std::vector<uint32_t> folded(half_blocks * 8);
        for (size_t b = 0; b < half_blocks; ++b)
            for (size_t w = 0; w < 8; ++w)
                folded[b * 8 + w] = _words[(2 * b) * 8 + w] | _words[(2 * b + 1) * 8 + w];
        _words = std::move(folded);
    }
}

} // namespace floe::parquet
