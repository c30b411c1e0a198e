// libFuzzer target for the in-place RESP2 reader (redis/resp.h): what a Redis server (or
// anything answering on its port) sends back. The scanner is fed the input whole and in
// pieces; the reader walks it generically and as an XRANGE answer. Nothing may crash or read
// past the input, and the scanner and the reader must agree on where a whole reply ends.
#include "redis/client.h"
#include "redis/resp.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace floe::redis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    resp_scanner whole;
    auto scanned = whole.feed(in);
    resp_reader rd(in);
    auto walked = rd.skip();
    if (scanned && *scanned) {
        // A whole reply per the scanner: the reader reads exactly the same bytes.
        if (!walked || rd.position() != **scanned) std::abort();
    }
    // Fed in pieces of growing size: the same verdict.
    resp_scanner pieces;
    for (size_t n = 1; n <= size; n += 1 + n / 3) {
        auto r = pieces.feed(in.substr(0, n));
        if (!r || *r) break;
    }
    // As an XRANGE answer: [[id, [field, value...]]...]
    resp_reader x(in);
    if (auto n = x.next_array()) {
        for (size_t i = 0; i < *n; ++i) {
            if (!x.next_array()) break;
            if (!x.next_string()) break;
            auto f = x.next_array();
            if (!f) break;
            bool ok = true;
            for (size_t k = 0; k < *f && ok; ++k) ok = x.next_nullable_string().has_value();
            if (!ok) break;
        }
    }
    resp_reader y(in);
    (void)y.next_integer();
    return 0;
}
