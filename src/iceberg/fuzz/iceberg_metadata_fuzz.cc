// libFuzzer target: table metadata JSON parsing and validation on any bytes.
#include "iceberg/metadata.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto m = floe::iceberg::parse_metadata({reinterpret_cast<const char*>(data), size});
    if (m) (void)floe::iceberg::to_json_text(*m);
    return 0;
}
