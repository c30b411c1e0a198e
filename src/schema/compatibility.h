#pragma once
// Schema compatibility as Confluent's registry defines it, checked for real for each type:
// - Avro: the specification's schema resolution (can a reader with schema R decode data written
//   with schema W?): promotions int→long→float→double, string↔bytes, unions, record names and
//   aliases, field defaults, enum symbols and enum defaults, fixed sizes, named types.
// - Protobuf: field numbers and types (wire-compatible scalar groups), kinds, named types,
//   labels, required fields, removed messages and enums, fields removed from or moved into a
//   oneof, package changes.
// - JSON Schema: R must accept every instance W accepts: types, properties and the open,
//   partially open or closed content model (additionalProperties), required, enums and const,
//   number ranges and multipleOf, string lengths and patterns, array items and sizes,
//   combinators.
// A level says who reads whose data: BACKWARD = the new schema reads data of the previous one,
// FORWARD = the previous one reads the new one's, FULL = both; *_TRANSITIVE = against every
// earlier version, not only the latest.

#include "schema/parsed_schema.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::schema {

enum class compatibility_level : uint8_t {
    none,
    backward,
    backward_transitive,
    forward,
    forward_transitive,
    full,
    full_transitive,
};
std::string_view to_string(compatibility_level l) noexcept;
std::optional<compatibility_level> parse_compatibility_level(std::string_view s) noexcept;

/// One reason a reader cannot read a writer's data.
struct compatibility_problem {
    std::string error_type;  ///< "READER_FIELD_MISSING_DEFAULT_VALUE", "FIELD_SCALAR_KIND_CHANGED", ...
    std::string path;        ///< where in the schema ("/fields/1/type", "#/properties/id", "acme.Order.id")
    std::string description;
    /// Confluent's verbose message form: {errorType:'...', description:'...', additionalInfo:'...'}
    std::string to_message() const;
};

/// Why a reader with schema `reader` cannot read data written with `writer` (empty: it can).
std::vector<compatibility_problem> avro_reader_problems(const avro_node& reader, const avro_node& writer);
std::vector<compatibility_problem> protobuf_reader_problems(const protobuf_schema& reader,
                                                            const protobuf_schema& writer);
std::vector<compatibility_problem> json_reader_problems(const json_schema_node& reader,
                                                        const json_schema_node& writer);
/// Dispatches on type; schemas of different types are a TYPE_MISMATCH problem.
std::vector<compatibility_problem> reader_problems(const parsed_schema& reader, const parsed_schema& writer);

struct compatibility_result {
    bool compatible = true;
    /// Verbose messages: the problems, then which version and level they were found against.
    std::vector<std::string> messages;
};

/// One earlier version of the subject.
struct previous_version {
    int32_t version = 0;
    const parsed_schema* schema = nullptr;
};

/// Checks `candidate` against the subject's earlier versions (oldest first) at `level`. The
/// non-transitive levels check only the last of them.
compatibility_result check_compatibility(compatibility_level level, const parsed_schema& candidate,
                                         std::span<const previous_version> previous);

} // namespace floe::schema
