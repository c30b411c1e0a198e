#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <cstdint>

namespace floe::log {


/// Decompresses `in` (the records section of a batch) into `out`, which is cleared first.
/// Accepts what Kafka producers send: gzip (zlib with gzip header), snappy raw or in the xerial
/// (snappy-java) block framing, LZ4 frame format, zstd frames. Never writes more than
/// `max_out` bytes: errc::invalid_argument ("too large") when the output would exceed it,
/// errc::corrupt on malformed input, errc::unsupported for an unknown codec.
result<void> decompress(compression_codec c, bytes_view in, byte_buffer& out, size_t max_out);

/// Decompression that keeps its state between calls: one lz4 context and an output buffer that
/// only grows (no allocation or zero fill per batch, and lz4 decodes straight into it instead of
/// through its own block buffer). For loops over many batches (the log cleaner). Other codecs
/// go through decompress(). Owned by one thread; not thread-safe.
class batch_decompressor {
public:
    batch_decompressor() = default;
    batch_decompressor(const batch_decompressor&) = delete;
    batch_decompressor& operator=(const batch_decompressor&) = delete;
    ~batch_decompressor();

    /// The records section `in` decompressed with `c` (for none: `in` itself), with
    /// decompress()'s errors and bound; the view is valid until the next call.
    result<bytes_view> decompress(compression_codec c, bytes_view in, size_t max_out);

private:
    void* _lz4 = nullptr; // LZ4F_dctx
    byte_buffer _out;     // its size is its capacity; the output's length is returned
};

/// Compresses `in` with `c` (tests and benchmarks build batches with it).
result<byte_buffer> compress(compression_codec c, bytes_view in);

} // namespace floe::log
