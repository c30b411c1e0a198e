#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace floe {

/// How long to wait before answering a failed authentication, per client address: `first`
/// after the first failure, doubling with each further failure up to `max`, so a client that
/// keeps guessing slows itself down while others are not delayed. A success, or `forget`
/// without failures, starts the address over. At most `capacity` addresses are remembered (the
/// least recently failed are forgotten first), so a flood of addresses cannot grow it.
/// Thread-safe; time comes from the caller (tests pass their own clock).
class auth_backoff {
public:
    using clock = std::chrono::steady_clock;
    struct options {
        std::chrono::milliseconds first{100};
        std::chrono::milliseconds max{5000};
        std::chrono::milliseconds forget{std::chrono::minutes(10)};
        size_t capacity = 10000;
    };
    auth_backoff() : auth_backoff(options{}) {}
    explicit auth_backoff(options o) : _o(o) {}

    /// Records a failure from `address` at `now`; returns the delay to apply to this answer.
    std::chrono::milliseconds failed(std::string_view address, clock::time_point now = clock::now()) {
        std::lock_guard lk(_mu);
        auto& e = _by_address[std::string(address)];
        if (e.failures > 0 && now - e.last > _o.forget) e.failures = 0;
        e.last = now;
        ++e.failures;
        if (_by_address.size() > _o.capacity) prune(now);
        auto d = _o.first;
        for (unsigned i = 1; i < e.failures && d < _o.max; ++i) d *= 2;
        return std::min(d, _o.max);
    }
    /// A successful authentication from `address`: its next failure starts at `first` again.
    void succeeded(std::string_view address) {
        std::lock_guard lk(_mu);
        _by_address.erase(std::string(address));
    }

private:
    struct entry {
        unsigned failures = 0;
        clock::time_point last{};
    };
    /// Drops expired entries, then the oldest half if still over capacity. Called with _mu held.
    void prune(clock::time_point now) {
        std::erase_if(_by_address, [&](auto& kv) { return now - kv.second.last > _o.forget; });
        if (_by_address.size() <= _o.capacity) return;
        std::vector<clock::time_point> times;
        times.reserve(_by_address.size());
        for (auto& [_, e] : _by_address) times.push_back(e.last);
        auto mid = times.begin() + std::ptrdiff_t(times.size() / 2);
        std::nth_element(times.begin(), mid, times.end());
        auto cut = *mid;
        std::erase_if(_by_address, [&](auto& kv) { return kv.second.last < cut; });
    }
    options _o;
    std::mutex _mu;
    std::unordered_map<std::string, entry> _by_address;
};

} // namespace floe
