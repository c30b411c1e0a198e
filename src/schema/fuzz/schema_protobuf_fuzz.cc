// libFuzzer target: .proto text through libprotobuf's compiler front end (in memory, imports
// from a fixed reference); what compiles must reprint, recompile and be compatible with itself.
#include "schema/compatibility.h"
#include "schema/protobuf_schema.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe::schema;
    static const std::vector<protobuf_schema::dependency> deps{
        {"common.proto", "syntax = \"proto3\"; package common; message Money { int64 units = 1; }"}};
    auto s = protobuf_schema::parse({reinterpret_cast<const char*>(data), size}, deps);
    if (!s) return 0;
    auto again = protobuf_schema::parse((*s)->normalized(), deps);
    if (!again) std::abort();
    if (!protobuf_reader_problems(**s, **s).empty()) std::abort();
    for (int i = 0; i < (*s)->file().message_type_count(); ++i) {
        auto path = (*s)->indexes_of(*(*s)->file().message_type(i));
        if ((*s)->message_at(path) != (*s)->file().message_type(i)) std::abort();
    }
    return 0;
}
