#include "log/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>

namespace floe::log {

namespace {

constexpr uint8_t k_xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

std::unexpected<error> too_large(size_t max_out) {
    return fail(errc::invalid_argument, "decompressed size exceeds {} bytes", max_out);
}

result<void> gunzip(bytes_view in, byte_buffer& out, size_t max_out) {
    z_stream zs{};
    // 16 + MAX_WBITS: expect a gzip header; 32 would also accept zlib, which Kafka never sends.
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return fail(errc::internal, "inflateInit2");
    std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&zs, &inflateEnd);
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = uInt(in.size());
    size_t chunk = std::min<size_t>(std::max<size_t>(in.size() * 4, 4096), max_out);
    for (;;) {
        if (out.size() >= max_out) {
            // Output is full: only acceptable if the stream is already complete.
            uint8_t probe;
            zs.next_out = &probe;
            zs.avail_out = 1;
            int rc = inflate(&zs, Z_NO_FLUSH);
            if (rc == Z_STREAM_END && zs.avail_out == 1) break;
            return too_large(max_out);
        }
        size_t at = out.size();
        size_t grow = std::min(chunk, max_out - at);
        out.resize(at + grow);
        zs.next_out = out.data() + at;
        zs.avail_out = uInt(grow);
        int rc = inflate(&zs, Z_NO_FLUSH);
        out.resize(at + (grow - zs.avail_out));
        if (rc == Z_STREAM_END) {
            // Concatenated gzip members are legal; Kafka producers write one.
            if (zs.avail_in == 0) break;
            if (inflateReset(&zs) != Z_OK) return fail(errc::corrupt, "gzip: reset failed");
            continue;
        }
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) return fail(errc::corrupt, "gzip: truncated");
        if (rc != Z_OK && rc != Z_BUF_ERROR) return fail(errc::corrupt, "gzip: inflate error {}", rc);
        chunk *= 2;
    }
    return {};
}

result<void> snappy_block(bytes_view in, byte_buffer& out, size_t max_out) {
    size_t n = 0;
    if (snappy_uncompressed_length(reinterpret_cast<const char*>(in.data()), in.size(), &n)
        != SNAPPY_OK)
        return fail(errc::corrupt, "snappy: bad length header");
    if (n > max_out - out.size()) return too_large(max_out);
    size_t at = out.size();
    out.resize(at + n);
    size_t got = n;
    if (snappy_uncompress(reinterpret_cast<const char*>(in.data()), in.size(),
                          reinterpret_cast<char*>(out.data() + at), &got)
            != SNAPPY_OK
        || got != n)
        return fail(errc::corrupt, "snappy: corrupt block");
    return {};
}

result<void> unsnappy(bytes_view in, byte_buffer& out, size_t max_out) {
    if (in.size() >= 16 && std::memcmp(in.data(), k_xerial_magic, 8) == 0) {
        // xerial framing: magic, version, compatible version, then [int32 length][block]...
        byte_reader r(in.subspan(16));
        while (!r.empty()) {
            auto len = FLOE_TRY(r.be<int32_t>());
            if (len < 0) return fail(errc::corrupt, "snappy: negative xerial block length");
            auto block = FLOE_TRY(r.bytes(size_t(len)));
            FLOE_TRY(snappy_block(block, out, max_out));
        }
        return {};
    }
    return snappy_block(in, out, max_out);
}

result<void> unlz4(bytes_view in, byte_buffer& out, size_t max_out) {
    LZ4F_dctx* ctx = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
        return fail(errc::internal, "lz4: context");
    std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> guard(
        ctx, &LZ4F_freeDecompressionContext);
    size_t pos = 0;
    size_t chunk = std::min<size_t>(std::max<size_t>(in.size() * 4, 65536), max_out);
    size_t hint = 1;
    while (pos < in.size()) {
        if (out.size() >= max_out) return too_large(max_out);
        size_t at = out.size();
        size_t grow = std::min(chunk, max_out - at);
        out.resize(at + grow);
        size_t dst = grow, src = in.size() - pos;
        hint = LZ4F_decompress(ctx, out.data() + at, &dst, in.data() + pos, &src, nullptr);
        out.resize(at + dst);
        if (LZ4F_isError(hint))
            return fail(errc::corrupt, "lz4: {}", LZ4F_getErrorName(hint));
        pos += src;
        if (hint == 0 && pos < in.size()) continue; // another frame follows
        if (src == 0 && dst == 0) break;
    }
    if (hint != 0) {
        // Drain output still buffered inside the context.
        for (int guard_iter = 0; hint != 0 && guard_iter < 1024; ++guard_iter) {
            if (out.size() >= max_out) return too_large(max_out);
            size_t at = out.size();
            size_t grow = std::min(chunk, max_out - at);
            out.resize(at + grow);
            size_t dst = grow, src = 0;
            hint = LZ4F_decompress(ctx, out.data() + at, &dst, nullptr, &src, nullptr);
            out.resize(at + dst);
            if (LZ4F_isError(hint)) return fail(errc::corrupt, "lz4: {}", LZ4F_getErrorName(hint));
            if (dst == 0) break;
        }
        if (hint != 0) return fail(errc::corrupt, "lz4: truncated frame");
    }
    return {};
}

result<void> unzstd(bytes_view in, byte_buffer& out, size_t max_out) {
    ZSTD_DStream* ds = ZSTD_createDStream();
    if (!ds) return fail(errc::internal, "zstd: context");
    std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> guard(ds, &ZSTD_freeDStream);
    // Bound the window so a hostile frame cannot make zstd allocate a huge history buffer.
    ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, 24);
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    size_t chunk = std::min<size_t>(std::max<size_t>(in.size() * 4, 65536), max_out);
    size_t rc = 1;
    while (ib.pos < ib.size || rc != 0) {
        if (out.size() >= max_out) {
            uint8_t probe;
            ZSTD_outBuffer ob{&probe, 1, 0};
            rc = ZSTD_decompressStream(ds, &ob, &ib);
            if (!ZSTD_isError(rc) && ob.pos == 0 && rc == 0 && ib.pos == ib.size) break;
            return too_large(max_out);
        }
        size_t at = out.size();
        size_t grow = std::min(chunk, max_out - at);
        out.resize(at + grow);
        ZSTD_outBuffer ob{out.data() + at, grow, 0};
        size_t before_in = ib.pos;
        rc = ZSTD_decompressStream(ds, &ob, &ib);
        out.resize(at + ob.pos);
        if (ZSTD_isError(rc)) return fail(errc::corrupt, "zstd: {}", ZSTD_getErrorName(rc));
        if (ob.pos == 0 && ib.pos == before_in) {
            if (rc != 0) return fail(errc::corrupt, "zstd: truncated frame");
            break;
        }
    }
    return {};
}

} // namespace

result<void> decompress(compression_codec c, bytes_view in, byte_buffer& out, size_t max_out) {
    out.clear();
    switch (c) {
    case compression_codec::none:
        if (in.size() > max_out) return too_large(max_out);
        out.assign(in.begin(), in.end());
        return {};
    case compression_codec::gzip: return gunzip(in, out, max_out);
    case compression_codec::snappy: return unsnappy(in, out, max_out);
    case compression_codec::lz4: return unlz4(in, out, max_out);
    case compression_codec::zstd: return unzstd(in, out, max_out);
    }
    return fail(errc::unsupported, "compression codec {}", int(c));
}

result<byte_buffer> compress(compression_codec c, bytes_view in) {
    byte_buffer out;
    switch (c) {
    case compression_codec::none: out.assign(in.begin(), in.end()); return out;
    case compression_codec::gzip: {
        z_stream zs{};
        if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return fail(errc::internal, "deflateInit2");
        out.resize(deflateBound(&zs, uLong(in.size())) + 32);
        zs.next_in = const_cast<Bytef*>(in.data());
        zs.avail_in = uInt(in.size());
        zs.next_out = out.data();
        zs.avail_out = uInt(out.size());
        int rc = deflate(&zs, Z_FINISH);
        out.resize(zs.total_out);
        deflateEnd(&zs);
        if (rc != Z_STREAM_END) return fail(errc::internal, "deflate {}", rc);
        return out;
    }
    case compression_codec::snappy: {
        size_t n = snappy_max_compressed_length(in.size());
        out.resize(n);
        if (snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(),
                            reinterpret_cast<char*>(out.data()), &n)
            != SNAPPY_OK)
            return fail(errc::internal, "snappy_compress");
        out.resize(n);
        return out;
    }
    case compression_codec::lz4: {
        out.resize(LZ4F_compressFrameBound(in.size(), nullptr));
        size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), nullptr);
        if (LZ4F_isError(n)) return fail(errc::internal, "lz4: {}", LZ4F_getErrorName(n));
        out.resize(n);
        return out;
    }
    case compression_codec::zstd: {
        out.resize(ZSTD_compressBound(in.size()));
        size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
        if (ZSTD_isError(n)) return fail(errc::internal, "zstd: {}", ZSTD_getErrorName(n));
        out.resize(n);
        return out;
    }
    }
    return fail(errc::unsupported, "compression codec {}", int(c));
}

batch_decompressor::~batch_decompressor() {
    if (_lz4) LZ4F_freeDecompressionContext(static_cast<LZ4F_dctx*>(_lz4));
}

result<bytes_view> batch_decompressor::decompress(compression_codec c, bytes_view in,
                                                  size_t max_out) {
    if (c == compression_codec::none) {
        if (in.size() > max_out) return too_large(max_out);
        return in;
    }
    if (c != compression_codec::lz4) {
        FLOE_TRY(log::decompress(c, in, _out, max_out));
        return bytes_view(_out);
    }
    if (!_lz4) {
        LZ4F_dctx* ctx = nullptr;
        if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
            return fail(errc::internal, "lz4: context");
        _lz4 = ctx;
    }
    auto* ctx = static_cast<LZ4F_dctx*>(_lz4);
    // A buffer larger than a frame's block lets lz4 decode in place; it grows (doubling, up to
    // max_out) when a batch holds more.
    const size_t want = std::min<size_t>(std::max<size_t>(in.size() * 8, 1u << 20), max_out);
    if (_out.size() < want) _out.resize(want);
    size_t at = 0, pos = 0, hint = 1;
    for (int rounds = 0; rounds < 1 << 20; ++rounds) {
        // The buffer may be larger than this call's bound (it only grows): the bound caps it.
        size_t cap = std::min(_out.size(), max_out);
        if (at == cap) {
            if (cap >= max_out) {
                LZ4F_resetDecompressionContext(ctx);
                return too_large(max_out);
            }
            _out.resize(std::min(max_out, _out.size() * 2));
            cap = std::min(_out.size(), max_out);
        }
        size_t dst = cap - at, src = in.size() - pos;
        hint = LZ4F_decompress(ctx, _out.data() + at, &dst, in.data() + pos, &src, nullptr);
        if (LZ4F_isError(hint)) {
            LZ4F_resetDecompressionContext(ctx);
            return fail(errc::corrupt, "lz4: {}", LZ4F_getErrorName(hint));
        }
        at += dst;
        pos += src;
        if (hint == 0 && pos == in.size()) return bytes_view(_out.data(), at);
        // hint == 0 with input left: another frame follows. Otherwise the frame wants more:
        // input if there is some, room for output (buffered in the context) if not.
        if (pos == in.size() && dst == 0 && at < cap) {
            LZ4F_resetDecompressionContext(ctx);
            return fail(errc::corrupt, "lz4: truncated frame");
        }
    }
    LZ4F_resetDecompressionContext(ctx);
    return fail(errc::corrupt, "lz4: frame does not end");
}

} // namespace floe::log
