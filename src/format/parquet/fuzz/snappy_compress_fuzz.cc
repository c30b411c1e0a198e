// Fuzz target: Floe's snappy compressor against the snappy library's decoder. Any input must
// compress to a valid stream within the size bound that decodes to exactly the input. The first
// byte picks how the rest is laid out: as is, or tiled past a 64 KiB block boundary.
#include "format/parquet/snappy_compress.h"

#include <snappy.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace floe::parquet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) && !in.empty()) {
        // Tiled to just past one or two block boundaries, with the tail cut by the first byte.
        size_t target = 65536 * (1 + ((data[0] >> 1) & 1)) + (data[0] >> 2);
        std::string tiled;
        tiled.reserve(target + in.size());
        while (tiled.size() < target)
            tiled += in;
        tiled.resize(target);
        in = std::move(tiled);
    }
    static snappy_compressor z; // reused across inputs, as a writer reuses it across pages
    std::string out(snappy_compressor::max_compressed_size(in.size()), '\0');
    size_t n = z.compress(reinterpret_cast<const uint8_t*>(in.data()), in.size(),
                          reinterpret_cast<uint8_t*>(out.data()));
    if (n > out.size()) std::abort();
    if (!snappy::IsValidCompressedBuffer(out.data(), n)) std::abort();
    std::string back;
    if (!snappy::Uncompress(out.data(), n, &back) || back != in) std::abort();
    return 0;
}
