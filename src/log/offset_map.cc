#include "log/offset_map.h"

#include "base/result.h"
#include "base/random.h"

#include <bit>
#include <cstring>

namespace floe::log {

namespace {

struct sip_state {
    uint64_t v0, v1, v2, v3;

    void round() noexcept {
        v0 += v1;
        v1 = std::rotl(v1, 13);
        v1 ^= v0;
        v0 = std::rotl(v0, 32);
        v2 += v3;
        v3 = std::rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = std::rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = std::rotl(v1, 17);
        v1 ^= v2;
        v2 = std::rotl(v2, 32);
    }
    void absorb(uint64_t m) noexcept {
        v3 ^= m;
        round(); // c = 1 compression round per word
        v0 ^= m;
    }
    uint64_t fold() const noexcept { return v0 ^ v1 ^ v2 ^ v3; }
};

uint64_t load_le64(const uint8_t* p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) v = std::byteswap(v);
    return v;
}

} // namespace

digest_secret digest_secret::random() {
    digest_secret s;
    os_random_bytes(&s, sizeof s);
    return s;
}

key_digest digest_key(const digest_secret& s, bytes_view key) noexcept {
    sip_state st{s.k0 ^ 0x736f6d6570736575ull, s.k1 ^ 0x646f72616e646f6dull ^ 0xee,
                 s.k0 ^ 0x6c7967656e657261ull, s.k1 ^ 0x7465646279746573ull};
    const uint8_t* p = key.data();
    size_t n = key.size();
    for (; n >= 8; n -= 8, p += 8) st.absorb(load_le64(p));
    uint64_t last = uint64_t(key.size() & 0xff) << 56;
    for (size_t i = 0; i < n; ++i) last |= uint64_t(p[i]) << (8 * i);
    st.absorb(last);
    st.v2 ^= 0xee;
    for (int i = 0; i < 3; ++i) st.round(); // d = 3 finalization rounds
    key_digest d;
    d.lo = st.fold();
    st.v1 ^= 0xdd;
    for (int i = 0; i < 3; ++i) st.round();
    d.hi = st.fold();
    return d;
}

bool offset_map::put(const key_digest& digest, int64_t offset, uint32_t batch, uint32_t& replaced,
                     bool& fresh) {
    FLOE_ASSERT(offset >= 0, "offset map: negative offset");
    if ((_size + 1) * 4 > _slots.size() * 3) grow();
    for (size_t i = slot_of(digest);; i = (i + 1) & _mask) {
        auto& e = _slots[i];
        if (e.offset < 0) {
            e.digest = digest;
            e.offset = offset;
            e.batch = batch;
            ++_size;
            fresh = true;
            return true;
        }
        if (e.digest == digest) {
            fresh = false;
            if (e.offset >= offset) return false;
            replaced = e.batch;
            e.offset = offset;
            e.batch = batch;
            return true;
        }
    }
}

int64_t offset_map::latest(const key_digest& digest) const noexcept {
    if (_slots.empty()) return -1;
    for (size_t i = slot_of(digest);; i = (i + 1) & _mask) {
        auto& e = _slots[i];
        if (e.offset < 0) return -1;
        if (e.digest == digest) return e.offset;
    }
}

void offset_map::grow() {
    std::vector<entry> old(std::max<size_t>(_slots.size() * 2, 1024));
    old.swap(_slots);
    _mask = _slots.size() - 1;
    for (auto& e : old) {
        if (e.offset < 0) continue;
        size_t i = slot_of(e.digest);
        while (_slots[i].offset >= 0) i = (i + 1) & _mask;
        _slots[i] = e;
    }
}

} // namespace floe::log
