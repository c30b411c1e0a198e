#include "base/result.h"

#include <spdlog/spdlog.h>

namespace floe {

void assert_failed(const char* expr, const char* file, int line, const char* msg) {
    spdlog::critical("assertion failed: {} ({}) at {}:{}", msg, expr, file, line);
    spdlog::shutdown();
    std::fprintf(stderr, "floe: assertion failed: %s (%s) at %s:%d\n", msg, expr, file, line);
    std::abort();
}

} // namespace floe
