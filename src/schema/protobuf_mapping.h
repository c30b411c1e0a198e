#pragma once
// Protobuf message → Iceberg columns for typed tables (beside avro_to_iceberg in
// iceberg_mapping.h; ids are assigned and evolved by the same assign_ids()/evolve()).
//
// Rules (a field's column is named by the field's name, not its json_name):
//   int32, sint32, sfixed32 → int            int64, sint64, sfixed64 → long
//   uint32, fixed32 → long (every uint32 fits)
//   uint64, fixed64 → decimal(20, 0): exact for the whole unsigned range (a long would turn
//     values ≥ 2^63 negative and make sums and comparisons wrong; decimal(20,0) is what Iceberg
//     readers sum and compare as numbers)
//   float → float, double → double, bool → boolean, string → string, bytes → binary
//   enum → string: the value's name; a number the enum does not declare (an open proto3 enum,
//     or a newer writer) is written as its decimal text ("7"), so nothing is lost
//   message → struct (fields in declaration order); a message with no fields has no column
//   repeated T → list<T> (element optional, like Avro arrays); map<K, V> → map<K', V'> with K'
//     the scalar rule above (key required, value optional)
//   oneof o { A a; B b; } → a struct field `o` with one optional field per branch (`o.a`,
//     `o.b`), the same rule as Avro unions of two or more types: exactly one branch set per
//     value, the struct null when none is. A proto3 `optional` field (a synthetic oneof) is an
//     ordinary optional field.
//   well-known types:
//     google.protobuf.Timestamp → timestamptz (microseconds; nanoseconds below a microsecond
//       are dropped, toward the past)
//     google.protobuf.Duration → long: the duration in microseconds (Iceberg has no interval
//       type; nanoseconds below a microsecond dropped, toward zero)
//     google.protobuf.{Double,Float,Int64,UInt64,Int32,UInt32,Bool,String,Bytes}Value → the
//       wrapped scalar's column by the rules above, null when the wrapper is absent
//     any other well-known message (Any, Empty, FieldMask, ...) is an ordinary message;
//     Struct, Value and ListValue are recursive and so refused, as every recursive message is
//   refused: proto2 groups (errc::unsupported); recursive messages (errc::invalid_argument:
//     Iceberg types are finite trees); nesting deeper than 64 messages.
//
// Field ids follow name paths (iceberg_mapping.h), and Protobuf identifies fields by number: a
// field renamed with its number kept becomes a new column (the old one is null from then on),
// a number changed with the name kept stays the same column (each schema id decodes with its
// own numbers). Renaming is a new column; that is the rule, as for Avro without aliases.
// Type changes follow evolve(): int32 → int64 widens int to long; uint32 → uint64 (long →
// decimal(20, 0)) and any change between the kinds above is incompatible-schema.
//
// Absent fields (decoding, lake/typed_rows_protobuf.h): a field with presence (proto2
// optional, proto3 `optional`, messages, oneof members, wrappers) is null when absent; a proto3
// scalar without presence is written as its default (0, false, "", the enum's first value)
// because the wire cannot tell "absent" from "default" and every Protobuf reader (generated
// getters, JSON printing with defaults) sees the default; a null there would make
// `WHERE qty = 0` miss rows the producer wrote with qty 0. Repeated fields and maps absent are
// empty, never null.

#include "base/result.h"
#include "iceberg/schema.h"

#include <google/protobuf/descriptor.h>

#include <string_view>
#include <vector>

namespace floe::schema {

/// The columns of message `m` under the rules above, every id 0 (call assign_ids() next).
result<std::vector<iceberg::nested_field>>
protobuf_to_iceberg(const google::protobuf::Descriptor& m);

/// The kind of well-known type a message is (none for an ordinary message).
enum class protobuf_wkt : uint8_t { none, timestamp, duration, wrapper };
protobuf_wkt protobuf_well_known(const google::protobuf::Descriptor& m) noexcept;

/// The Iceberg type of a scalar (non-message) field's values, ids 0.
iceberg::type_ptr protobuf_scalar_type(const google::protobuf::FieldDescriptor& f);

} // namespace floe::schema
