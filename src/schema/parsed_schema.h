#pragma once
// One parsed schema of any of the registry's three types, with the references it was parsed
// against. What the registry stores and returns by id, and what the typed tables decode with.
//
// Model API: stable.

#include "base/result.h"
#include "schema/avro_schema.h"
#include "schema/json_schema.h"
#include "schema/protobuf_schema.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::schema {

enum class schema_type : uint8_t { avro, protobuf, json };

/// "AVRO", "PROTOBUF", "JSON" (the registry's `schemaType`).
std::string_view to_string(schema_type t) noexcept;
/// Parses a `schemaType` (exact upper case, as Confluent's API spells it).
std::optional<schema_type> parse_schema_type(std::string_view s) noexcept;

/// A Confluent schema reference: the name the schema uses for it (an Avro full name, a
/// Protobuf import path, a JSON Schema "$ref" URL) and the registered version it names.
struct schema_reference {
    std::string name;
    std::string subject;
    int32_t version = 0;
    bool operator==(const schema_reference&) const = default;
};

class parsed_schema;

/// A reference resolved to its parsed schema (whose own references are resolved too).
struct resolved_reference {
    std::string name;
    std::shared_ptr<const parsed_schema> schema;
};

struct schema_parse_options {
    int max_depth = 64;
};

/// Immutable after parse; safe to share across threads.
class parsed_schema {
public:
    schema_type type() const noexcept { return _type; }
    /// The text the registry stores for it (see each model's canonical()).
    const std::string& canonical() const noexcept;
    /// The normalized text (`normalize=true`).
    std::string normalized() const;
    const std::vector<resolved_reference>& references() const noexcept { return _refs; }

    /// The model for this type (exactly one is set).
    const std::shared_ptr<const avro_schema>& avro() const noexcept { return _avro; }
    const std::shared_ptr<const protobuf_schema>& protobuf() const noexcept { return _protobuf; }
    const std::shared_ptr<const json_schema>& json() const noexcept { return _json; }

    /// Parses `text` as `type` against resolved references (of the same type; a reference of
    /// another type is errc::invalid_argument). Errors are errc::invalid_argument and say what
    /// is wrong with the schema.
    static result<std::shared_ptr<const parsed_schema>> parse(schema_type type, std::string_view text,
                                                              std::vector<resolved_reference> refs = {},
                                                              schema_parse_options opts = {});

private:
    parsed_schema() = default;
    schema_type _type = schema_type::avro;
    std::vector<resolved_reference> _refs;
    std::shared_ptr<const avro_schema> _avro;
    std::shared_ptr<const protobuf_schema> _protobuf;
    std::shared_ptr<const json_schema> _json;
};

} // namespace floe::schema
