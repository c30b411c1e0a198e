#pragma once

#include "base/bytes.h"

#include <cstdint>

namespace floe {

/// CRC-32C (Castagnoli), as Kafka record batches and many storage formats use.
/// `crc32c_extend` continues a running CRC; `crc32c(data)` == `crc32c_extend(0, data)`.
/// Uses the SSE4.2 instruction when the CPU has it, else a slicing-by-8 table.
uint32_t crc32c_extend(uint32_t crc, bytes_view data) noexcept;
inline uint32_t crc32c(bytes_view data) noexcept { return crc32c_extend(0, data); }

/// Both paths, exposed so tests check them against each other and the published check values.
uint32_t crc32c_portable(uint32_t crc, bytes_view data) noexcept;
uint32_t crc32c_hardware(uint32_t crc, bytes_view data) noexcept;
bool crc32c_hardware_available() noexcept;

} // namespace floe
