// Fuzz target: the thrift compact decoder (FileMetaData, PageHeader, BloomFilterHeader, the
// schema rebuilt from it) and the value decoders (RLE/bit-packed hybrid, DELTA_BINARY_PACKED,
// decompression with a declared size). The first byte picks the decoder.
#include "format/parquet/compression.h"
#include "format/parquet/encoding.h"
#include "format/parquet/metadata.h"
#include "format/parquet/schema.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace floe::parquet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    uint8_t sel = data[0];
    floe::bytes_view in(data + 1, size - 1);
    switch (sel % 6) {
    case 0: {
        auto m = decode_file_metadata(in);
        if (m) (void)schema::from_elements(m->schema);
        break;
    }
    case 1: {
        size_t used = 0;
        (void)decode_page_header(in, used);
        break;
    }
    case 2: {
        size_t used = 0;
        (void)decode_bloom_filter_header(in, used);
        break;
    }
    case 3: {
        int width = (sel >> 3) % 33;
        std::vector<uint32_t> out(4096);
        rle_decoder d(in, width);
        (void)d.get(out.data(), out.size());
        break;
    }
    case 4: {
        std::vector<int64_t> out64;
        (void)delta_binary_decode<int64_t>(in, 100000, out64);
        std::vector<int32_t> out32;
        (void)delta_binary_decode<int32_t>(in, 100000, out32);
        break;
    }
    default: {
        static decompressor dec;
        floe::byte_buffer out;
        auto codec = static_cast<compression_codec>((sel >> 3) % 8);
        (void)dec.decompress(codec, in, 1u << 16, out);
        break;
    }
    }
    return 0;
}
