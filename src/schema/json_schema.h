#pragma once
// A JSON Schema (drafts 4, 6, 7 and the 2019-09/2020-12 keywords the registry needs) as a
// resolved tree: every "$ref" resolved to its node (local JSON pointers such as
// "#/definitions/X" and "#/$defs/X", and other schemas given as Confluent references by name),
// so recursive schemas are cycles of pointers. Keywords the model does not name stay in `raw`.
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

/// JSON value types as a bit set ("type": ["string", "null"] is string | null).
enum json_type_bits : uint8_t {
    json_null = 1,
    json_boolean = 2,
    json_integer = 4, ///< also matched by "number"
    json_number = 8,
    json_string = 16,
    json_object = 32,
    json_array = 64,
    json_any = 127,
};
std::string json_types_to_string(uint8_t bits);

struct json_schema_node {
    /// `true` / `false` schemas (and {} is an unconstrained object schema, not a boolean).
    std::optional<bool> boolean_schema;
    /// The types "type" allows; json_any when absent. "number" includes integer.
    uint8_t types = json_any;
    bool has_type = false;

    // Objects.
    std::vector<std::pair<std::string, const json_schema_node*>> properties; ///< in written order
    std::vector<std::string> required;
    /// nullptr: "additionalProperties" absent (anything allowed: an open content model).
    const json_schema_node* additional_properties = nullptr;
    std::vector<std::pair<std::string, const json_schema_node*>> pattern_properties;
    const json_schema_node* property_names = nullptr;
    std::optional<uint64_t> min_properties, max_properties;
    std::map<std::string, std::vector<std::string>> dependent_required;
    std::map<std::string, const json_schema_node*> dependent_schemas;

    // Arrays.
    const json_schema_node* items = nullptr;              ///< "items" as one schema
    std::vector<const json_schema_node*> tuple_items;     ///< "items" as an array / "prefixItems"
    const json_schema_node* additional_items = nullptr;   ///< after tuple_items
    std::optional<uint64_t> min_items, max_items;
    bool unique_items = false;
    const json_schema_node* contains = nullptr;

    // Strings.
    std::optional<uint64_t> min_length, max_length;
    std::optional<std::string> pattern;
    std::optional<std::string> format;
    std::optional<std::string> content_encoding, content_media_type;

    // Numbers (draft-04's boolean exclusiveMinimum/Maximum are turned into the numeric form).
    std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;

    // Any type.
    std::optional<std::vector<nlohmann::ordered_json>> enum_values;
    std::optional<nlohmann::ordered_json> const_value;
    std::vector<const json_schema_node*> all_of, any_of, one_of;
    const json_schema_node* not_ = nullptr;
    const json_schema_node* if_ = nullptr;
    const json_schema_node* then_ = nullptr;
    const json_schema_node* else_ = nullptr;
    /// "$ref": the node it names (the other keywords of this node still apply, as in 2019-09;
    /// draft-07 readers ignore them, and so does `effective()`).
    const json_schema_node* ref = nullptr;
    std::string ref_uri;

    std::string title, description;
    std::optional<nlohmann::ordered_json> default_value;
    /// The node's own JSON (its subschemas included), for keywords the model does not name
    /// (Confluent's "connect.type", "javaType", ...).
    const nlohmann::ordered_json* raw = nullptr;

    const json_schema_node* find_property(std::string_view name) const noexcept;
    bool is_required(std::string_view name) const noexcept;
    /// Follows "$ref" chains to the node that holds the constraints (bounded, cycles stop).
    const json_schema_node& effective() const noexcept;
};

/// A parsed, resolved JSON Schema. Immutable after parse; safe to share across threads.
struct json_parse_options {
    int max_depth = 64;
};

class json_schema {
public:
    /// A schema another one refers to by "$ref": Confluent's reference name (a URL or file
    /// name used verbatim in "$ref") and the parsed schema.
    struct reference {
        std::string name;
        std::shared_ptr<const json_schema> schema;
    };
    /// Parses `text`. errc::invalid_argument for JSON that is not a schema (a keyword of the
    /// wrong type, an unknown "type" name), a "$ref" that resolves to nothing, nesting deeper
    /// than max_depth.
    static result<std::shared_ptr<const json_schema>> parse(std::string_view text,
                                                            const std::vector<reference>& references = {},
                                                            json_parse_options opts = {});
    static result<std::shared_ptr<const json_schema>> parse(std::string_view text,
                                                            const std::vector<reference>& references,
                                                            int max_depth) {
        return parse(text, references, json_parse_options{.max_depth = max_depth});
    }

    const json_schema_node& root() const noexcept { return *_root; }
    const nlohmann::ordered_json& document() const noexcept { return *_doc; }
    /// "$schema" when given ("http://json-schema.org/draft-07/schema#").
    const std::string& dialect() const noexcept { return _dialect; }
    /// Compact JSON, keys in the order written: what the registry stores.
    const std::string& canonical() const noexcept { return _canonical; }
    /// Normalized (`normalize=true`): compact JSON with keys sorted.
    std::string normalized() const;

private:
    json_schema() = default;
    friend class json_schema_parser;
    std::unique_ptr<nlohmann::ordered_json> _doc;
    std::vector<std::unique_ptr<json_schema_node>> _nodes;
    const json_schema_node* _root = nullptr;
    std::vector<reference> _refs;
    std::string _dialect;
    std::string _canonical;
};

} // namespace floe::schema
