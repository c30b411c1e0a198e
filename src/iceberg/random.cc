#include "iceberg/random.h"

#include "base/uuid.h"

#include <cerrno>
#include <random>
#include <sys/random.h>

namespace floe::iceberg {

namespace {

void fill_random(void* out, size_t n) {
    auto* p = static_cast<char*>(out);
    size_t got = 0;
    while (got < n) {
        auto r = ::getrandom(p + got, n - got, 0);
        if (r > 0)
            got += static_cast<size_t>(r);
        else if (r < 0 && errno != EINTR)
            break;
    }
    if (got < n) { // no getrandom (very old kernel): the same source through libstdc++
        std::random_device rd;
        for (size_t i = got; i < n; ++i)
            p[i] = static_cast<char>(rd());
    }
}

} // namespace

uint64_t os_random64() {
    uint64_t v = 0;
    fill_random(&v, sizeof v);
    return v;
}

std::string random_uuid_string() {
    uuid u;
    fill_random(u.bytes.data(), u.bytes.size());
    u.bytes[6] = uint8_t((u.bytes[6] & 0x0F) | 0x40);
    u.bytes[8] = uint8_t((u.bytes[8] & 0x3F) | 0x80);
    return u.to_string();
}

} // namespace floe::iceberg
