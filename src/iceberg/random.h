#pragma once
// Random ids for snapshots, file names and backoff jitter, drawn from the kernel (getrandom) on
// every call: no generator state that fork() would duplicate between writer processes, and no
// device to open per call (std::random_device costs more than the rest of naming a file).
// Thread-safe.

#include <cstdint>
#include <string>

namespace floe::iceberg {

uint64_t os_random64();
/// A random (version 4) UUID in canonical form, like floe::uuid::random().to_string().
std::string random_uuid_string();

} // namespace floe::iceberg
