// libFuzzer target: the typed-row Protobuf decoder on any bytes, against a message with every
// structural kind (nested message, repeated message, packed scalars, maps with scalar and message
// values, oneof, proto3 optional, Timestamp, Duration, a wrapper, enum, uint64, sint/fixed types)
// and the Confluent message-index parser. A message that validates must write exactly one row;
// one that does not must write nothing; the file must close.
#include "format/parquet/io.h"
#include "format/parquet/writer.h"
#include "lake/typed_rows_protobuf.h"
#include "schema/iceberg_mapping.h"
#include "schema/protobuf_mapping.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {
constexpr std::string_view schema_text = R"(syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message R {
  int64 id = 1;
  C c = 2;
  repeated I items = 3;
  map<string, string> m = 4;
  map<int64, I> mi = 5;
  google.protobuf.Timestamp ts = 6;
  google.protobuf.Duration d = 7;
  google.protobuf.UInt64Value w = 8;
  E e = 9;
  optional string note = 10;
  oneof ref { sint64 a = 11; string b = 12; C cc = 13; }
  uint64 big = 14;
  repeated sint32 packed = 15;
  fixed32 f32 = 16;
  sfixed64 sf64 = 17;
  float f = 18;
  double g = 19;
  bool ok = 20;
  bytes raw = 21;
  message C { string s = 1; optional int32 z = 2; }
  message I { string k = 1; repeated double t = 2; }
  enum E { A = 0; B = 1; }
})";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace floe;
    static auto proto = *schema::protobuf_schema::parse(schema_text);
    static auto fields = [] {
        auto f = *schema::protobuf_to_iceberg(*proto->message_at({}));
        int32_t last = 0;
        schema::assign_ids(f, nullptr, last);
        return f;
    }();
    static auto plan = *lake::protobuf_row_plan::make(*proto->message_at({}), fields, 0);
    static auto pq = *parquet::schema::make(parquet::group_node(
        "t", std::nullopt, parquet::repetition::required, lake::parquet_nodes(fields)));
    std::string_view in(reinterpret_cast<const char*>(data), size);
    (void)lake::parse_message_indexes(in);
    byte_buffer out;
    auto w = parquet::file_writer::open(parquet::make_memory_sink(out), pq, {});
    if (!w) std::abort();
    auto err = plan->decode(in, **w);
    int64_t want = err ? 0 : 1;
    for (size_t c = 0; c < (*w)->num_columns(); ++c)
        if ((*w)->column(c).chunk_rows() != want) std::abort();
    if (!err && !(*w)->end_row()) std::abort();
    if (!(*w)->close()) std::abort();
    return 0;
}
