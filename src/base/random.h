#pragma once
// Random bytes from the kernel (getrandom) on every call: ids, file names, sync markers and
// backoff jitter. No generator state that fork() would duplicate between processes and no
// device opened per call. Thread-safe.

#include <cstddef>
#include <cstdint>

namespace floe {

void os_random_bytes(void* out, size_t n);

inline uint64_t os_random64() {
    uint64_t v = 0;
    os_random_bytes(&v, sizeof v);
    return v;
}

} // namespace floe
