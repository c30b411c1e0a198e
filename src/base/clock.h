#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace floe {

/// Time goes through this interface so tests can drive it (FoundationDB's simulated time).
/// Implementations are thread-safe.
class clock_source {
public:
    virtual ~clock_source() = default;
    /// Wall-clock milliseconds since the Unix epoch (record timestamps, file names).
    virtual int64_t now_ms() const = 0;
    /// Monotonic time for timeouts and durations.
    virtual std::chrono::steady_clock::time_point monotonic() const = 0;
};

/// The real clocks of the machine.
class system_clock_source final : public clock_source {
public:
    int64_t now_ms() const override;
    std::chrono::steady_clock::time_point monotonic() const override;
    /// One shared instance; lives for the whole process.
    static system_clock_source& instance();
};

/// A clock that moves only when told to. For tests.
class manual_clock final : public clock_source {
public:
    explicit manual_clock(int64_t start_ms = 1'700'000'000'000) : _now_ms(start_ms) {}
    int64_t now_ms() const override { return _now_ms.load(); }
    std::chrono::steady_clock::time_point monotonic() const override {
        return std::chrono::steady_clock::time_point(std::chrono::milliseconds(_now_ms.load()));
    }
    void advance(std::chrono::milliseconds d) { _now_ms += d.count(); }

private:
    std::atomic<int64_t> _now_ms;
};

} // namespace floe
