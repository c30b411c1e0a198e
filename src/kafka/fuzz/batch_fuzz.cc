// libFuzzer target: a Produce partition's records field through batch validation
// (header, CRC, decompression of every codec, record walk).
#include "kafka/record_batch.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    floe::byte_buffer scratch;
    floe::kafka::batch_limits limits{1 << 20, 1 << 20};
    (void)floe::kafka::validate_records(floe::bytes_view(data, size), limits, scratch);
    // The CRC gate stops most mutations early; also walk the payload as if the CRC matched, so
    // the decompressors and the record decoder see hostile bytes too.
    if (size > 61) {
        for (uint8_t c = 0; c <= 4; ++c) {
            if (floe::kafka::decompress(floe::kafka::codec(c), floe::bytes_view(data + 61, size - 61),
                                        scratch, 1 << 20)) {
                (void)floe::kafka::check_records(scratch, int32_t(data[0] % 64));
            }
        }
    }
    return 0;
}
