#pragma once
// Schema → Iceberg type mapping for typed tables, field ids stable by name path, and schema
// evolution from one registry version to the next. Avro here; Protobuf (protobuf_mapping.h) and
// JSON Schema (json_mapping.h) have their own `*_to_iceberg` and share assign_ids() and
// evolve(), which work on Iceberg types only.
//
// Avro → Iceberg rules:
//   record → struct (fields in schema order)       array → list (element optional)
//   map → map<string, V> (key required, value optional)
//   int → int, long → long, float → float, double → double, boolean → boolean,
//   string → string, bytes → binary, fixed(n) → fixed[n], enum → string (the symbol)
//   logical types (only when valid for their underlying type; otherwise the underlying type):
//     decimal(p,s) on bytes or fixed → decimal(p,s) (p > 38 is refused: Iceberg's maximum)
//     date → date; time-millis, time-micros → time (microseconds)
//     timestamp-millis, timestamp-micros → timestamptz (microseconds, UTC)
//     local-timestamp-millis, local-timestamp-micros → timestamp (microseconds, no zone)
//     uuid on string or fixed(16) → uuid; any other logical type → its underlying type
//   unions:
//     ["null", T] (either order) → T, optional
//     two or more non-null branches (with or without "null") → a struct with one optional
//       field per non-null branch, in branch order, named by the branch: the Avro type name for
//       unnamed types ("int", "long", "string", "bytes", "array", "map", ...) and the short
//       name for record, enum and fixed ("Address"); when two named branches share a short name
//       both use their full name with '.' replaced by '_'. Exactly one field of the struct is
//       set per value (the branch written); the struct itself is null when "null" was written.
//     ["null"] alone, and fields of type "null", have no column (they carry no data).
//   Every decoded column is OPTIONAL in Iceberg, whatever the Avro schema says: rows whose
//   value is a tombstone, or went to the dead-letter table, or were written with an older
//   version that lacked the field, must still be valid rows of the one table schema; an Iceberg
//   required column can never become required again once relaxed, and adding a required column
//   is not allowed at all, so optional from the start is the only choice that never blocks
//   evolution. Map keys stay required (Iceberg requires them; Avro map keys are never null).
//   Recursive records (a record containing itself) are refused: Iceberg types are finite trees.
//
// Name paths: a field's names from the top, joined by '.': `customer.address.city`; a list's
// element is `<list>.element`, a map's key and value `<map>.key` and `<map>.value`.

#include "base/result.h"
#include "iceberg/schema.h"
#include "schema/avro_schema.h"

#include <cstdint>
#include <string>
#include <vector>

namespace floe::schema {

/// The columns of an Avro record (the root of a value schema) under the rules above, with every
/// field id (fields, list elements, map keys and values) 0: call assign_ids() next.
/// errc::invalid_argument: the root is not a record, a record is recursive, a decimal's
/// precision exceeds 38.
result<std::vector<iceberg::nested_field>> avro_to_iceberg(const avro_schema& s);
result<std::vector<iceberg::nested_field>> avro_to_iceberg(const avro_node& record);

/// The Iceberg type one Avro node maps to (what avro_to_iceberg does for a field's type), ids 0.
/// `nullable`: the node was a union with "null". A null `type`: the node carries no data.
struct mapped_type {
    iceberg::type_ptr type;
    bool nullable = false;
};
result<mapped_type> avro_type_to_iceberg(const avro_node& node);

/// The struct field name of union branch `b` of union `u` (the rule above).
std::string avro_union_branch_name(const avro_node& u, const avro_node& b);

/// Sets every id of `fields` (nested included): an element whose name path exists in
/// `previous` (nullable) keeps that id; any other takes ++last_column_id. Ids never repeat.
void assign_ids(std::vector<iceberg::nested_field>& fields, const iceberg::schema* previous,
                int32_t& last_column_id);

/// The id of every name path in `s` (fields, `.element`, `.key`, `.value`).
std::vector<std::pair<std::string, int32_t>> name_paths(const iceberg::schema& s);

/// The outcome of moving a table schema to a new registry version.
struct evolution {
    enum class kind : uint8_t {
        unchanged,    ///< the table schema already holds the version: nothing to commit
        updated,      ///< `schema` is the new table schema (schema_id = current + 1)
        incompatible, ///< Iceberg cannot express the change; `reason` says where and what
    };
    kind outcome = kind::unchanged;
    iceberg::schema schema;      ///< updated (and unchanged: the current schema)
    int32_t last_column_id = 0;  ///< the table's last-column-id after the change
    std::string reason;          ///< incompatible: "field `a.b`: string -> int"
};

/// Evolves `current` (a table schema; every field of it, Floe's own included, is matched by
/// name) to hold `fields` (a new version's columns from *_to_iceberg, ids ignored):
///   - a field new by name path is added (optional) with a fresh id;
///   - a field in both keeps its id; int → long, float → double and decimal(p,s) →
///     decimal(p',s) with p' > p widen the column; a narrower or equal new type keeps the
///     column (values are widened when written); required becomes optional when the new one is;
///   - a field missing from the new version stays (null from then on);
///   - any other type change (string → int, a struct becoming a primitive, a decimal's scale)
///     is `incompatible`, naming the field and both types.
/// Ids are never reused or renumbered. `last_column_id`: the table's last-column-id (-1: the
/// highest id in `current`).
evolution evolve(const iceberg::schema& current, const std::vector<iceberg::nested_field>& fields,
                 int32_t last_column_id = -1);

/// "int", "decimal(9, 2)", "struct", "list<int>", ... for messages.
std::string describe(const iceberg::type& t);

} // namespace floe::schema
