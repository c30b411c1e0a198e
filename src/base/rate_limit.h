#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace floe {

/// Lets at most `per_window` events through per `window` (fixed windows) and counts the ones
/// it holds back, for log lines that a flood must not multiply (authorization denials): the
/// next event let through carries how many were held back since the previous one, so the log
/// says "K suppressed" instead of losing them silently. Thread-safe; time comes from the
/// caller (tests pass their own).
class log_rate_limit {
public:
    using clock = std::chrono::steady_clock;
    struct options {
        size_t per_window = 10;
        std::chrono::milliseconds window{1000};
    };
    struct verdict {
        bool log = false;        ///< write this event's line
        uint64_t suppressed = 0; ///< events held back since the last line written (when log)
    };
    log_rate_limit() : log_rate_limit(options{}) {}
    explicit log_rate_limit(options o) : _o(o) {}

    /// Starts over with other limits (tests).
    void reset(options o) {
        std::lock_guard lk(_mu);
        _o = o;
        _in_window = 0;
        _held = 0;
    }

    verdict admit(clock::time_point now = clock::now()) {
        std::lock_guard lk(_mu);
        if (_in_window == 0 || now - _window_start >= _o.window) {
            _window_start = now;
            _in_window = 0;
        }
        if (_in_window >= _o.per_window) {
            ++_held;
            return {};
        }
        ++_in_window;
        verdict v{true, _held};
        _held = 0;
        return v;
    }

private:
    options _o;
    std::mutex _mu;
    clock::time_point _window_start{};
    size_t _in_window = 0;
    uint64_t _held = 0;
};

} // namespace floe
