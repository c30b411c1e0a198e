// libFuzzer target: the Avro container reader (header, schema JSON, codecs, values) on any bytes.
#include "format/avro/container.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    floe::avro::reader_options o;
    o.max_block_bytes = 16 << 20;
    auto r = floe::avro::container_reader::open({data, size}, "fuzz.avro", o);
    if (!r) return 0;
    floe::avro::datum d;
    for (int i = 0; i < 100000; ++i) {
        auto n = r->next(d);
        if (!n || !*n) break;
    }
    return 0;
}
