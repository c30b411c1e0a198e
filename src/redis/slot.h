#pragma once

#include <cstdint>
#include <string_view>

namespace floe::redis {

inline constexpr uint16_t slot_count = 16384;

/// CRC16-CCITT (XMODEM: poly 0x1021, init 0) as Redis Cluster uses it.
uint16_t crc16(std::string_view data) noexcept;

/// The hash tag of a key: the part between the first '{' and the next '}' when that part is
/// not empty; else the whole key (Redis Cluster spec, "hash tags").
std::string_view hash_tag(std::string_view key) noexcept;

/// The cluster slot of a key: crc16(hash_tag(key)) mod 16384.
inline uint16_t key_slot(std::string_view key) noexcept { return crc16(hash_tag(key)) % slot_count; }

} // namespace floe::redis
