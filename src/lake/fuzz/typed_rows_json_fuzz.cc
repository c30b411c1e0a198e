// libFuzzer target: the typed-row JSON decoder on any bytes, against a schema with every shape
// (nested objects, $ref, arrays of objects, a map, formats date/date-time/time/uuid, a string
// enum, a nullable type list, oneOf, a union of types, an untyped "any"). A value that validates
// must write exactly one row; one that does not must write nothing; the file must close.
#include "format/parquet/io.h"
#include "format/parquet/writer.h"
#include "lake/typed_rows_json.h"
#include "schema/iceberg_mapping.h"
#include "schema/json_mapping.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {
constexpr std::string_view schema_text = R"({"type":"object","required":["id"],"properties":{
  "id":{"type":"integer"},"n":{"type":"number"},"ok":{"type":"boolean"},
  "c":{"type":"object","properties":{"s":{"type":"string"},"a":{"$ref":"#/definitions/A"}}},
  "items":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"},"t":{"type":"array","items":{"type":"number"}}},"required":["k"]}},
  "m":{"type":"object","additionalProperties":{"type":["null","integer"]}},
  "d":{"type":"string","format":"date"},"ts":{"type":"string","format":"date-time"},
  "tm":{"type":"string","format":"time"},"u":{"type":"string","format":"uuid"},
  "e":{"type":"string","enum":["A","B"]},"note":{"type":["null","string"]},
  "ref":{"oneOf":[{"type":"integer"},{"type":"string"},{"$ref":"#/definitions/A"}]},
  "mixed":{"type":["string","number","boolean","null"]},"any":{}},
  "definitions":{"A":{"type":"object","properties":{"x":{"type":"integer"}}}}})";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe;
    static auto js = *schema::json_schema::parse(schema_text);
    static auto fields = [] {
        auto inner = *schema::json_to_iceberg(*js);
        auto t = std::make_shared<iceberg::type>();
        t->id = iceberg::type_id::struct_;
        t->fields = std::move(inner);
        std::vector<iceberg::nested_field> f{
            iceberg::nested_field{.id = 0, .name = "data", .required = false, .field_type = t}};
        int32_t last = 0;
        schema::assign_ids(f, nullptr, last);
        return f;
    }();
    static auto plan = *lake::json_row_plan::make_in_column(*js, fields[0], 0);
    static auto pq = *parquet::schema::make(parquet::group_node(
        "t", std::nullopt, parquet::repetition::required, lake::parquet_nodes(fields)));
    byte_buffer out;
    auto w = parquet::file_writer::open(parquet::make_memory_sink(out), pq, {});
    if (!w) std::abort();
    auto err = plan->decode({reinterpret_cast<const char*>(data), size}, **w);
    int64_t want = err ? 0 : 1;
    for (size_t c = 0; c < (*w)->num_columns(); ++c)
        if ((*w)->column(c).chunk_rows() != want) std::abort();
    if (!err && !(*w)->end_row()) std::abort();
    if (!(*w)->close()) std::abort();
    return 0;
}
