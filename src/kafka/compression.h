#pragma once

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>

namespace floe::kafka {

/// Kafka record-batch compression codecs (attribute bits 0-2).
enum class codec : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

/// Decompresses `in` (the records section of a batch) into `out`, which is cleared first.
/// Accepts what Kafka producers send: gzip (zlib with gzip header), snappy raw or in the xerial
/// (snappy-java) block framing, LZ4 frame format, zstd frames. Never writes more than
/// `max_out` bytes: errc::invalid_argument ("too large") when the output would exceed it,
/// errc::corrupt on malformed input, errc::unsupported for an unknown codec.
result<void> decompress(codec c, bytes_view in, byte_buffer& out, size_t max_out);

/// Compresses `in` with `c` (tests and benchmarks build batches with it).
result<byte_buffer> compress(codec c, bytes_view in);

} // namespace floe::kafka
