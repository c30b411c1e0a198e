// libFuzzer target: the Avro schema parser on any bytes; what parses must normalize, reparse
// to the same normalized text, and resolve against itself (reader = writer) with no problem.
#include "schema/avro_schema.h"
#include "schema/compatibility.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe::schema;
    auto s = avro_schema::parse({reinterpret_cast<const char*>(data), size});
    if (!s) return 0;
    auto n = (*s)->normalized();
    (void)(*s)->parsing_canonical_form();
    auto again = avro_schema::parse(n);
    if (!again || (*again)->normalized() != n) std::abort();
    if (!avro_reader_problems((*s)->root(), (*s)->root()).empty()) std::abort();
    return 0;
}
