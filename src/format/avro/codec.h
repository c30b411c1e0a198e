#pragma once

#include "base/bytes.h"

#include <optional>
#include <string_view>

namespace floe::avro {

/// Block compression of an object container file ("avro.codec").
enum class codec : uint8_t { null, deflate, zstd, snappy };

/// The name written in "avro.codec": null, deflate, zstandard, snappy.
std::string_view codec_name(codec c) noexcept;
std::optional<codec> codec_from_name(std::string_view name) noexcept;

/// Appends `in` compressed with `c` to `out`. `level` < 0 means the codec's default.
result<void> compress(codec c, bytes_view in, byte_buffer& out, int level = -1);

/// Replaces `out` with `in` decompressed. Fails with errc::corrupt on a damaged stream and when
/// the result would exceed `max_size` bytes (a decompression bomb is refused, not allocated).
result<void> decompress(codec c, bytes_view in, byte_buffer& out, size_t max_size);

} // namespace floe::avro
