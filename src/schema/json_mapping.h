#pragma once
// JSON Schema → Iceberg columns for typed tables (beside avro_to_iceberg and
// protobuf_to_iceberg; ids and evolution by the same assign_ids()/evolve()).
//
// A subschema is first given a shape (json_classify), which both the mapping and the value
// decoder (lake/typed_rows_json.h) use, so the two cannot disagree:
//   "$ref" → the schema it names (refs are resolved by the parser)
//   "type": "boolean" → boolean; "integer" → long; "number" → double
//   "type": "string" → string, or by "format": date → date, date-time → timestamptz,
//     time → time (no zone), uuid → uuid
//   "type": "object" with "properties" → struct, one field per property in written order;
//     keys the schema does not name are ignored (an open content model)
//   "type": "object" without "properties" and with an "additionalProperties" schema →
//     map<string, V>
//   "type": "array" with one "items" schema → list<V> (element optional)
//   no "type": inferred from "properties"/"additionalProperties" (object), "items" (array),
//     "enum"/"const" of strings or "format" (string); else "any"
//   "any" ({}, true, an object or array with nothing said about its contents) → string: the
//     value's JSON text as written (so nothing is lost and engines can parse it with json
//     functions)
//   nullable: "type": ["null", T], or a oneOf/anyOf with a {"type": "null"} branch → T,
//     optional (every column is optional anyway; null is then a valid value, else a null
//     value is a decode error)
//   unions: "type" with two or more non-null types, or oneOf/anyOf with two or more non-null
//     branches → a struct with one optional field per branch, the same rule as Avro unions.
//     Branch names: the JSON type name for type lists ("string", "integer", "number",
//     "boolean", "object", "array"); for oneOf/anyOf the branch's "title", else the last
//     segment of its "$ref", else its type name, else "branch<i>"; a name already taken gets
//     "_<i>" appended (i: the branch's position). A value sets the first branch it fits
//     (for anyOf too: one branch per value), the others are null.
//   refused (errc::unsupported, dead letter `unsupported-schema-type`): allOf with more than
//     one subschema, tuple arrays ("items": [...] / "prefixItems"), "not", if/then/else,
//     oneOf and anyOf together; recursion (errc::invalid_argument, as for Avro and Protobuf)
//   `false` and {"type": "null"} carry no data: no column.
//   The root must be an object with properties (its fields become `data`'s fields).

#include "base/result.h"
#include "iceberg/schema.h"
#include "schema/json_schema.h"

#include <string>
#include <vector>

namespace floe::schema {

enum class json_kind : uint8_t {
    none,
    any,
    boolean,
    integer,
    number,
    string,
    date,
    timestamptz,
    time,
    uuid,
    object,
    map,
    array,
    union_
};

struct json_branch {
    std::string name;
    const json_schema_node* node = nullptr;
    uint8_t types = json_any; ///< the branch of a type list allows only its own type
};

struct json_shape {
    json_kind kind = json_kind::none;
    bool nullable = false;
    const json_schema_node* node = nullptr; ///< the effective node (properties, items, ...)
    std::vector<json_branch> branches;      ///< union_
};

/// The shape of `n` restricted to `allowed` types (a union branch of a type list).
result<json_shape> json_classify(const json_schema_node& n, uint8_t allowed = json_any);

/// The columns of the root object's properties under the rules above, ids 0.
result<std::vector<iceberg::nested_field>> json_to_iceberg(const json_schema& s);
/// The Iceberg type of a shape's values (nullptr: no column).
result<iceberg::type_ptr> json_shape_type(const json_shape& s);

} // namespace floe::schema
