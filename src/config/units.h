#pragma once

#include "base/result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace floe::config {

/// "128MB" (10^6), "1GiB" (2^30), "64KiB", "4096" (bytes). Units are case-insensitive; a bare
/// number is bytes. Fails on anything else, and on values that overflow 63 bits.
result<int64_t> parse_size(std::string_view s);
/// "500ms", "10s", "1m", "2h", "7d". A unit is required except for "0".
result<std::chrono::milliseconds> parse_duration(std::string_view s);
/// true/false, yes/no, on/off (case-insensitive).
result<bool> parse_bool(std::string_view s);
/// A decimal integer with an optional sign, nothing else.
result<int64_t> parse_int(std::string_view s);
/// "host:port", port 0-65535 (0: any free port). IPv6 hosts in brackets: "[::1]:9092".
struct host_port {
    std::string host;
    uint16_t port = 0;
    std::string to_string() const;
};
result<host_port> parse_host_port(std::string_view s);

/// Human forms for `floe config`: 134217728 -> "128MiB" when exact, 10000ms -> "10s".
std::string format_size(int64_t bytes);
std::string format_duration(std::chrono::milliseconds d);

} // namespace floe::config
