#include "base/random.h"

#include <cerrno>
#include <random>
#include <sys/random.h>

namespace floe {

void os_random_bytes(void* out, size_t n) {
    auto* p = static_cast<char*>(out);
    size_t got = 0;
    while (got < n) {
        auto r = ::getrandom(p + got, n - got, 0);
        if (r > 0)
            got += static_cast<size_t>(r);
        else if (r < 0 && errno != EINTR)
            break;
    }
    if (got < n) { // no getrandom (a very old kernel): the same source through libstdc++
        std::random_device rd;
        for (size_t i = got; i < n; ++i) p[i] = static_cast<char>(rd());
    }
}

} // namespace floe
