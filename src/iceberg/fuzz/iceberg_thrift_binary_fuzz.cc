// libFuzzer target: Thrift binary-protocol messages from a metastore (the Hive catalog's
// replies) on any bytes; whatever decodes must encode back to the bytes it came from.
#include "iceberg/thrift_binary.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in{reinterpret_cast<const char*>(data), size};
    floe::iceberg::thrift::limits lim;
    lim.max_message_bytes = 1 << 20;
    auto d = floe::iceberg::thrift::decode_message(in, lim);
    if (d && *d) {
        auto again = floe::iceberg::thrift::encode_message((*d)->msg);
        if (again != in.substr(0, (*d)->consumed)) std::abort();
    }
    return 0;
}
