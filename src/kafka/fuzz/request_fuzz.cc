// libFuzzer target: one Kafka request frame (the bytes after the size prefix) through the
// header decoder and the body decoder of the API it names; SaslAuthenticate's bytes also go
// through the SCRAM and PLAIN message parsers; versions older than Floe serves through the
// answers in their own layouts (legacy_versions.h).
#include "kafka/legacy_versions.h"
#include "kafka/messages.h"
#include "kafka/messages_security.h"
#include "kafka/scram.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    floe::bytes_view frame(data, size);
    floe::bytes_view body;
    auto h = floe::kafka::decode_request_header(frame, body);
    if (h && h->supported) {
        (void)floe::kafka::decode_any(h->api_key, h->api_version, h->flexible, body);
        if (h->api_key == int16_t(floe::kafka::api_key::sasl_authenticate)) {
            floe::kafka::kreader r(body, h->flexible);
            if (auto q = floe::kafka::decode_sasl_authenticate(r, h->api_version)) {
                std::string_view msg(reinterpret_cast<const char*>(q->auth_bytes.data()), q->auth_bytes.size());
                (void)floe::kafka::parse_scram_client_first(msg);
                (void)floe::kafka::parse_scram_client_final(msg);
                (void)floe::kafka::parse_plain(msg);
                (void)floe::kafka::base64_decode(msg);
            }
        }
    }
    if (h && !h->supported) {
        floe::byte_buffer out;
        (void)floe::kafka::answer_legacy_request(*h, body, out);
    }
    return 0;
}
