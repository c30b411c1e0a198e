// libFuzzer target: the JSON Schema parser on any bytes; what parses must be compatible with
// itself (reader = writer), recursive "$ref"s included.
#include "schema/compatibility.h"
#include "schema/json_schema.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe::schema;
    auto s = json_schema::parse({reinterpret_cast<const char*>(data), size});
    if (!s) return 0;
    (void)(*s)->normalized();
    (void)json_reader_problems((*s)->root(), (*s)->root());
    return 0;
}
