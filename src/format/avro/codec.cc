#include "format/avro/codec.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

namespace floe::avro {

std::string_view codec_name(codec c) noexcept {
    switch (c) {
    case codec::null: return "null";
    case codec::deflate: return "deflate";
    case codec::zstd: return "zstandard";
    case codec::snappy: return "snappy";
    }
    return "?";
}

std::optional<codec> codec_from_name(std::string_view name) noexcept {
    if (name == "null") return codec::null;
    if (name == "deflate") return codec::deflate;
    if (name == "zstandard") return codec::zstd;
    if (name == "snappy") return codec::snappy;
    return std::nullopt;
}

namespace {

uint32_t crc32_of(bytes_view b) {
    uLong c = crc32(0L, Z_NULL, 0);
    // zlib takes uInt lengths; feed large inputs in pieces.
    size_t pos = 0;
    while (pos < b.size()) {
        size_t n = std::min<size_t>(b.size() - pos, 1u << 30);
        c = crc32(c, b.data() + pos, static_cast<uInt>(n));
        pos += n;
    }
    return static_cast<uint32_t>(c);
}

result<void> deflate_raw(bytes_view in, byte_buffer& out, int level) {
    z_stream zs{};
    // Avro's deflate is raw RFC 1951: negative window bits, no zlib header or checksum.
    if (deflateInit2(&zs, level < 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, -15, 8,
                     Z_DEFAULT_STRATEGY)
        != Z_OK)
        return fail(errc::internal, "deflateInit2 failed");
    size_t start = out.size();
    out.resize(start + deflateBound(&zs, static_cast<uLong>(in.size())));
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = out.data() + start;
    zs.avail_out = static_cast<uInt>(out.size() - start);
    int rc = deflate(&zs, Z_FINISH);
    size_t written = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) return fail(errc::internal, "deflate failed ({})", rc);
    out.resize(start + written);
    return {};
}

result<void> inflate_raw(bytes_view in, byte_buffer& out, size_t max_size) {
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK) return fail(errc::internal, "inflateInit2 failed");
    std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    out.clear();
    size_t cap = std::min(max_size, std::max<size_t>(in.size() * 4, 4096));
    for (;;) {
        out.resize(cap);
        zs.next_out = out.data() + zs.total_out;
        zs.avail_out = static_cast<uInt>(cap - zs.total_out);
        int rc = inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            // Bytes after the end of the stream are ignored, as Java's and Python's Avro do:
            // Spark-written manifests carry a few (seen in the fixtures).
            out.resize(zs.total_out);
            return {};
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return fail(errc::corrupt, "deflate stream damaged ({})", zs.msg ? zs.msg : "?");
        if (zs.avail_out != 0) return fail(errc::corrupt, "deflate stream truncated");
        if (cap >= max_size)
            return fail(errc::corrupt, "block inflates past the {} byte limit", max_size);
        cap = std::min(max_size, cap * 2);
    }
}

result<void> zstd_decompress(bytes_view in, byte_buffer& out, size_t max_size) {
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!ctx) return fail(errc::internal, "ZSTD_createDCtx failed");
    size_t cap = std::min(max_size, std::max<size_t>(in.size() * 4, 4096));
    out.resize(cap);
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    ZSTD_outBuffer ob{out.data(), cap, 0};
    for (;;) {
        if (ob.pos == ob.size) {
            if (cap >= max_size)
                return fail(errc::corrupt, "block decompresses past the {} byte limit", max_size);
            cap = std::min(max_size, cap * 2);
            out.resize(cap);
            ob.dst = out.data();
            ob.size = cap;
        }
        size_t rc = ZSTD_decompressStream(ctx.get(), &ob, &ib);
        if (ZSTD_isError(rc))
            return fail(errc::corrupt, "zstd stream damaged: {}", ZSTD_getErrorName(rc));
        if (rc == 0 && ib.pos == ib.size) break;  // last frame complete, all input used
        if (ib.pos == ib.size && ob.pos < ob.size) return fail(errc::corrupt, "zstd stream truncated");
    }
    out.resize(ob.pos);
    return {};
}

result<void> snappy_decompress(bytes_view in, byte_buffer& out, size_t max_size) {
    // Avro's snappy blocks end with the big-endian CRC-32 of the uncompressed bytes.
    if (in.size() < 4) return fail(errc::corrupt, "snappy block shorter than its checksum");
    auto body = in.first(in.size() - 4);
    size_t n = 0;
    if (!snappy::GetUncompressedLength(reinterpret_cast<const char*>(body.data()), body.size(), &n))
        return fail(errc::corrupt, "snappy block header damaged");
    if (n > max_size) return fail(errc::corrupt, "snappy block of {} bytes exceeds the limit", n);
    if (!snappy::IsValidCompressedBuffer(reinterpret_cast<const char*>(body.data()), body.size()))
        return fail(errc::corrupt, "snappy block damaged");
    out.resize(n);
    if (!snappy::RawUncompress(reinterpret_cast<const char*>(body.data()), body.size(),
                               reinterpret_cast<char*>(out.data())))
        return fail(errc::corrupt, "snappy block damaged");
    auto tail = in.last(4);
    uint32_t want = (uint32_t(tail[0]) << 24) | (uint32_t(tail[1]) << 16) | (uint32_t(tail[2]) << 8)
                    | uint32_t(tail[3]);
    if (crc32_of(out) != want) return fail(errc::corrupt, "snappy block checksum mismatch");
    return {};
}

} // namespace

result<void> compress(codec c, bytes_view in, byte_buffer& out, int level) {
    switch (c) {
    case codec::null: out.insert(out.end(), in.begin(), in.end()); return {};
    case codec::deflate: return deflate_raw(in, out, level);
    case codec::zstd: {
        size_t start = out.size();
        out.resize(start + ZSTD_compressBound(in.size()));
        size_t n = ZSTD_compress(out.data() + start, out.size() - start, in.data(), in.size(),
                                 level < 0 ? 3 : level);
        if (ZSTD_isError(n)) return fail(errc::internal, "zstd: {}", ZSTD_getErrorName(n));
        out.resize(start + n);
        return {};
    }
    case codec::snappy: {
        size_t start = out.size();
        out.resize(start + snappy::MaxCompressedLength(in.size()) + 4);
        size_t n = 0;
        snappy::RawCompress(reinterpret_cast<const char*>(in.data()), in.size(),
                            reinterpret_cast<char*>(out.data() + start), &n);
        out.resize(start + n);
        byte_writer(out).put_be(crc32_of(in));
        return {};
    }
    }
    return fail(errc::internal, "unknown codec");
}

result<void> decompress(codec c, bytes_view in, byte_buffer& out, size_t max_size) {
    switch (c) {
    case codec::null:
        if (in.size() > max_size) return fail(errc::corrupt, "block of {} bytes exceeds the limit", in.size());
        out.assign(in.begin(), in.end());
        return {};
    case codec::deflate: return inflate_raw(in, out, max_size);
    case codec::zstd: return zstd_decompress(in, out, max_size);
    case codec::snappy: return snappy_decompress(in, out, max_size);
    }
    return fail(errc::internal, "unknown codec");
}

} // namespace floe::avro
