// libFuzzer target: one Kafka request frame (the bytes after the size prefix) through the
// header decoder and the body decoder of the API it names.
#include "kafka/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    floe::bytes_view frame(data, size);
    floe::bytes_view body;
    auto h = floe::kafka::decode_request_header(frame, body);
    if (h && h->supported)
        (void)floe::kafka::decode_any(h->api_key, h->api_version, h->flexible, body);
    return 0;
}
