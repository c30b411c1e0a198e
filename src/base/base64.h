#pragma once
// Standard base64 (RFC 4648 section 4, '+' '/' and '=' padding): keys in a keyring file, KMS's
// JSON blobs. Pure functions, any thread.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe {

std::string base64_encode(std::span<const uint8_t> raw);
/// Strict: the length a multiple of 4, padding only at the end, no whitespace, the unused bits
/// of the last character zero; nullopt on anything else.
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);

} // namespace floe
