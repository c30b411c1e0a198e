#include "base/clock.h"

namespace floe {

int64_t system_clock_source::now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::chrono::steady_clock::time_point system_clock_source::monotonic() const {
    return std::chrono::steady_clock::now();
}

system_clock_source& system_clock_source::instance() {
    static system_clock_source c;
    return c;
}

} // namespace floe
