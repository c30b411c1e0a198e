#pragma once
// The log cleaner's key map: the latest offset of each record key of a dirty section, keyed by a
// fixed-size digest of the key instead of the key bytes (as Kafka's SkimpyOffsetMap), in one
// flat open-addressing table. See the README's "Compaction" for why a digest is safe here.

#include "base/bytes.h"

#include <cstdint>
#include <vector>

namespace floe::log {

/// 128 bits of keyed SipHash-1-3 (SipHash with one compression and three finalization rounds,
/// as Rust's and Python's hash tables use it, in its 128-bit output variant) of a record key.
/// The 128-bit secret is drawn per cleaner pass and never leaves the process, so which keys
/// collide cannot be chosen by a producer (nothing a producer can observe of one pass helps it
/// against the next): two distinct keys of one pass share a digest with probability about
/// n^2 / 2^129 for n keys.
struct key_digest {
    uint64_t lo = 0, hi = 0;
    bool operator==(const key_digest&) const = default;
};

struct digest_secret {
    uint64_t k0 = 0, k1 = 0;
    static digest_secret random(); ///< from the kernel's random source
};

key_digest digest_key(const digest_secret& s, bytes_view key) noexcept;

/// Latest offset per key digest, with the ordinal of the batch holding it (the cleaner counts
/// the records of each batch that are still their key's latest). Linear probing over a
/// power-of-two table kept at most 3/4 full; grows by doubling. Not thread-safe; one per pass.
class offset_map {
public:
    struct entry {
        key_digest digest;
        int64_t offset = -1; ///< -1: empty slot
        uint32_t batch = 0;
        uint32_t pad_ = 0;
    };
    static_assert(sizeof(entry) == 32);

    /// Records that `digest` has a record at `offset` in batch `batch`. When it replaces an
    /// earlier offset of the same digest, returns that entry's batch ordinal through `replaced`
    /// and true; when the digest is new, returns true with replaced untouched (`fresh` set);
    /// when the map already holds a later or equal offset, returns false (the record is not the
    /// latest).
    bool put(const key_digest& digest, int64_t offset, uint32_t batch, uint32_t& replaced,
             bool& fresh);

    /// Makes room for `more` new digests without growing (so that prefetched slots stay put).
    void reserve_more(size_t more) {
        while ((_size + more) * 4 > _slots.size() * 3) grow();
    }
    /// Starts loading the slot where `digest` is looked for (callers look up many keys of one
    /// batch: a digest table is larger than the caches, and its loads overlap this way).
    void prefetch(const key_digest& digest) const noexcept {
        if (!_slots.empty()) __builtin_prefetch(&_slots[slot_of(digest)]);
    }

    /// The latest offset of `digest`, or -1 when absent.
    int64_t latest(const key_digest& digest) const noexcept;

    size_t size() const noexcept { return _size; }
    /// Bytes the table needs for its entries at the target fill (what the dedupe buffer counts).
    size_t memory_bytes() const noexcept { return _size * sizeof(entry) * 4 / 3; }

private:
    std::vector<entry> _slots;
    size_t _size = 0;
    size_t _mask = 0;

    void grow();
    size_t slot_of(const key_digest& d) const noexcept { return size_t(d.lo) & _mask; }
};

} // namespace floe::log
