#pragma once
// A map that keeps its most recently used entries within a capacity, each entry weighing what
// its owner says (bytes, or 1 to bound a count). Not thread-safe: owners hold their own lock.
// Values are usually shared_ptrs, so an evicted entry stays alive for callers still using it.

#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace floe {

template <typename K, typename V>
class lru_cache {
public:
    explicit lru_cache(size_t capacity) : _capacity(capacity) {}

    /// The entry for `k` (now the most recent), or nullptr.
    const V* get(const K& k) {
        auto it = _map.find(k);
        if (it == _map.end()) return nullptr;
        _order.splice(_order.begin(), _order, it->second.pos);
        return &it->second.value;
    }
    bool contains(const K& k) const { return _map.contains(k); }

    /// Adds `v` as the most recent entry unless `k` is there already or `weight` alone exceeds
    /// the capacity; then evicts the least recently used entries until the total fits.
    void put(const K& k, V v, size_t weight = 1) {
        if (weight > _capacity || _map.contains(k)) return;
        _order.push_front(k);
        _map.emplace(k, entry{std::move(v), weight, _order.begin()});
        _weight += weight;
        while (_weight > _capacity) {
            auto victim = _map.find(_order.back());
            _weight -= victim->second.weight;
            _map.erase(victim);
            _order.pop_back();
        }
    }

    size_t weight() const noexcept { return _weight; }
    size_t size() const noexcept { return _map.size(); }

private:
    struct entry {
        V value;
        size_t weight;
        typename std::list<K>::iterator pos;
    };
    size_t _capacity, _weight = 0;
    std::list<K> _order; ///< most recent first
    std::unordered_map<K, entry> _map;
};

} // namespace floe
