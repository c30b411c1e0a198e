#pragma once

// Page compression codecs: zstd, snappy (compressed by Floe's own snappy_compressor,
// decompressed by the snappy library), gzip (zlib's gzip wrapper), LZ4_RAW (LZ4 block format),
// none. A compressor owns its library contexts and reuses them across pages; one per writer or
// reader, not thread-safe.

#include "base/bytes.h"
#include "base/result.h"
#include "format/parquet/metadata.h"
#include "format/parquet/snappy_compress.h"

#include <memory>
#include <optional>
#include <string_view>

namespace floe::parquet {

/// Parses "zstd", "snappy", "gzip", "lz4" / "lz4_raw", "none" / "uncompressed" (any case).
std::optional<compression_codec> parse_codec(std::string_view name);

class compressor {
public:
    /// `level`: codec level where the codec has one (zstd, gzip); 0 picks Floe's default (zstd 1
    /// with a smaller hash table and 5-byte minimum matches: on event data its files are within a
    /// few percent of level 3's at about twice the speed).
    explicit compressor(compression_codec codec, int level = 0);
    ~compressor();
    compressor(const compressor&) = delete;
    compressor& operator=(const compressor&) = delete;

    compression_codec codec() const noexcept { return _codec; }
    /// Compresses `in` into `out` from its start and returns the compressed size. `out` is only
    /// grown, never shrunk or zero-filled again, so a buffer reused across pages costs nothing.
    result<size_t> compress(bytes_view in, byte_buffer& out);
    /// Upper bound of the compressed size of `n` bytes.
    size_t max_compressed_size(size_t n) const noexcept;
    /// Compresses `in` into `out`, which has room for max_compressed_size(in.size()) bytes
    /// (`cap`); returns the compressed size. For callers that own their (non-zeroed) memory.
    result<size_t> compress_to(bytes_view in, uint8_t* out, size_t cap);

private:
    compression_codec _codec;
    int _level;
    void* _zstd = nullptr; // ZSTD_CCtx
    std::unique_ptr<snappy_compressor> _snappy;
};

class decompressor {
public:
    decompressor();
    ~decompressor();
    decompressor(const decompressor&) = delete;
    decompressor& operator=(const decompressor&) = delete;

    /// Decompresses `in` into `out` (replacing its contents); the result must be exactly
    /// `expected_size` bytes, which bounds the allocation for hostile input.
    result<void> decompress(compression_codec codec, bytes_view in, size_t expected_size,
                            byte_buffer& out);

private:
    void* _zstd = nullptr; // ZSTD_DCtx
};

} // namespace floe::parquet
