// libFuzzer target: the typed-row Avro decoder on any bytes, against a schema with every
// structural kind (nested record, array of records, map, unions, decimal, enum, uuid, fixed).
// A record that validates must write exactly one row; one that does not must write nothing;
// the file must close.
#include "format/parquet/io.h"
#include "format/parquet/writer.h"
#include "lake/typed_rows.h"
#include "schema/iceberg_mapping.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {
constexpr std::string_view schema_text = R"({"type":"record","name":"R","fields":[
  {"name":"id","type":"long"},{"name":"b","type":"boolean"},{"name":"f","type":"float"},
  {"name":"c","type":{"type":"record","name":"C","fields":[{"name":"s","type":"string"},
    {"name":"z","type":["null","int"]}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"I","fields":[
    {"name":"k","type":"string"},{"name":"t","type":{"type":"array","items":"double"}}]}}},
  {"name":"m","type":{"type":"map","values":["null","long","string"]}},
  {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
  {"name":"d2","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal","precision":6,"scale":1}},
  {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
  {"name":"u","type":{"type":"string","logicalType":"uuid"}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"n","type":"null"}]})";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe;
    static auto avro = *schema::avro_schema::parse(schema_text);
    static auto fields = [] {
        auto f = *schema::avro_to_iceberg(*avro);
        int32_t last = 0;
        schema::assign_ids(f, nullptr, last);
        return f;
    }();
    static auto plan = *lake::avro_row_plan::make(avro->root(), fields, 0);
    static auto pq = *parquet::schema::make(
        parquet::group_node("t", std::nullopt, parquet::repetition::required, lake::parquet_nodes(fields)));
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
