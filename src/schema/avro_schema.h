#pragma once
// The resolved model of an Avro schema as the registry and the typed tables see it: every named
// type resolved to its node, full names, aliases, logical types, field defaults (validated
// against their type), doc, order and the remaining attributes. Unlike format/avro's schema
// (which keeps the text of container files verbatim and only what a file reader needs), this one
// keeps everything schema resolution and a column mapping need.
//
// Model API: stable (the typed-table decoder and the Iceberg type mapping build on it).

#include "base/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::schema {

enum class avro_kind : uint8_t {
    null,
    boolean,
    int_,
    long_,
    float_,
    double_,
    bytes,
    string,
    record,
    enum_,
    array,
    map,
    union_,
    fixed,
};

/// "int", "record", ... (the Avro type name).
std::string_view to_string(avro_kind k) noexcept;
/// True for record, enum and fixed (the types that have a full name).
constexpr bool is_named(avro_kind k) noexcept {
    return k == avro_kind::record || k == avro_kind::enum_ || k == avro_kind::fixed;
}
/// True for the eight primitive types.
constexpr bool is_primitive(avro_kind k) noexcept { return k <= avro_kind::string; }

struct avro_node;

enum class avro_order : uint8_t { ascending, descending, ignore };

/// A record field.
struct avro_field {
    std::string name;
    std::vector<std::string> aliases; ///< other names this field was known by
    std::string doc;
    const avro_node* type = nullptr;
    /// The default as written in the schema JSON; checked against `type` at parse time (for a
    /// union: against one of its branches). nullopt: no default.
    std::optional<nlohmann::json> default_value;
    avro_order order = avro_order::ascending;
    size_t position = 0;           ///< index in the record's fields
    nlohmann::json props;          ///< other attributes (Iceberg's "field-id", ...); an object
};

/// A logical type annotation that was valid for its underlying type. Invalid ones are ignored,
/// as the specification says (the node reads as its underlying type); their attributes stay in
/// `props`.
struct avro_logical {
    std::string name;       ///< "decimal", "uuid", "date", "time-millis", "time-micros",
                            ///< "timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                            ///< "local-timestamp-micros", "duration", or another (unknown) name
    int32_t precision = 0;  ///< decimal
    int32_t scale = 0;      ///< decimal
};

/// One node of the schema tree. Nodes are owned by their `avro_schema` (and the schemas it
/// references); the pointers between them stay valid as long as that schema lives and may form
/// cycles (a record referring to itself by name).
struct avro_node {
    avro_kind kind = avro_kind::null;
    // Named types (record, enum, fixed):
    std::string full_name;              ///< "com.acme.Order" (namespace + '.' + name, or name)
    std::string name;                   ///< "Order"
    std::string ns;                     ///< "com.acme" or empty
    std::vector<std::string> aliases;   ///< full names
    std::string doc;
    // Record:
    std::vector<avro_field> fields;
    bool is_error = false;              ///< declared as "error" (a record)
    // Enum:
    std::vector<std::string> symbols;
    std::optional<std::string> enum_default;
    // Fixed:
    size_t fixed_size = 0;
    // Array items, map values:
    const avro_node* items = nullptr;
    // Union:
    std::vector<const avro_node*> branches;
    std::optional<avro_logical> logical;
    nlohmann::json props = nlohmann::json::object(); ///< attributes the model does not name

    const avro_field* find_field(std::string_view n) const noexcept;
    /// Index of the enum symbol, or -1.
    int symbol_index(std::string_view s) const noexcept;
    /// True when this node's full name or one of its aliases is `full`.
    bool answers_to(std::string_view full) const noexcept;
};

/// A parsed, resolved Avro schema. Immutable after parse; safe to share across threads.
/// References (Confluent schema references) are other schemas whose named types this one uses
/// by name; they are kept alive by this schema.
struct avro_parse_options {
    int max_depth = 64;           ///< nesting of type definitions (and of the JSON text)
    bool validate_defaults = true;
};

class avro_schema {
public:
    /// Parses `json_text`. `references` are parsed schemas whose named types are in scope
    /// (each one's own references too). Fails with errc::invalid_argument saying what is wrong:
    /// not JSON, unknown type, undefined or redefined name, bad name, duplicate field or
    /// symbol, a union inside a union or with two branches of one type, a default that does not
    /// fit its type, nesting deeper than max_depth.
    static result<std::shared_ptr<const avro_schema>> parse(
        std::string_view json_text, const std::vector<std::shared_ptr<const avro_schema>>& references = {},
        avro_parse_options opts = {});
    static result<std::shared_ptr<const avro_schema>> parse(
        std::string_view json_text, const std::vector<std::shared_ptr<const avro_schema>>& references,
        int max_depth) {
        return parse(json_text, references, avro_parse_options{.max_depth = max_depth});
    }

    const avro_node& root() const noexcept { return *_root; }
    /// Every named type defined by this schema (not its references), by full name.
    const std::map<std::string, const avro_node*>& named_types() const noexcept { return _defined; }
    /// A named type defined here or in a reference, or nullptr.
    const avro_node* find_named(std::string_view full_name) const noexcept;
    const std::vector<std::shared_ptr<const avro_schema>>& references() const noexcept { return _refs; }

    /// The schema as compact JSON, attributes in the order written (whitespace dropped): what
    /// the registry stores and compares for "the same schema".
    const std::string& canonical() const noexcept { return _canonical; }
    /// Normalized form (the registry's `normalize=true`): full names everywhere (no
    /// "namespace" attributes), a primitive written as its bare name when it has no other
    /// attribute, a named type written in full once and by name afterwards; other attributes
    /// kept in their order. Two schemas that differ only in those spellings normalize equal.
    std::string normalized() const;
    /// Avro's Parsing Canonical Form (the specification's transformation: only the attributes
    /// that matter for reading, full names, fixed attribute order, no whitespace).
    std::string parsing_canonical_form() const;

private:
    avro_schema() = default;
    friend class avro_parser;
    std::vector<std::unique_ptr<avro_node>> _nodes;
    const avro_node* _root = nullptr;
    std::map<std::string, const avro_node*> _defined;
    std::vector<std::shared_ptr<const avro_schema>> _refs;
    std::string _canonical;
};

/// True when `json` is a valid value of `type` as a field default (Avro's JSON encoding: bytes
/// and fixed as strings of code points 0-255, a union's value by one of its branches).
bool avro_default_fits(const avro_node& type, const nlohmann::json& value, int depth = 0);

} // namespace floe::schema
