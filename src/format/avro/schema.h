#pragma once

#include "base/result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::avro {

enum class type : uint8_t {
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

std::string_view to_string(type t) noexcept;

struct node;

/// A record field. `field_id` is Iceberg's "field-id" attribute when present.
struct field {
    std::string name;
    const node* type = nullptr;
    std::optional<int32_t> field_id;
};

/// One schema node. Nodes are owned by their `schema`; the pointers between them (record field
/// types, array items, union branches, named-type references) stay valid for its lifetime and
/// may form cycles (a record that refers to itself by name).
struct node {
    avro::type kind = type::null;
    std::string name;                   ///< full name of a record, enum or fixed
    std::string logical_type;           ///< "logicalType" attribute, or empty
    std::vector<field> fields;          ///< record
    std::vector<std::string> symbols;   ///< enum
    size_t fixed_size = 0;              ///< fixed
    const node* items = nullptr;        ///< array items, map values
    std::vector<const node*> branches;  ///< union
    std::optional<int32_t> element_id;  ///< Iceberg "element-id" on an array
    std::optional<int32_t> key_id;      ///< Iceberg "key-id" on a map
    std::optional<int32_t> value_id;    ///< Iceberg "value-id" on a map
    size_t min_encoded_size = 0;        ///< fewest bytes a value of this type takes (0 for null)

    /// The field with this name, or nullptr.
    const avro::field* find_field(std::string_view n) const noexcept;
    /// Index of the field with this name, or -1.
    int field_index(std::string_view n) const noexcept;
};

/// A parsed Avro schema. Keeps the JSON text it was parsed from verbatim, so a writer puts into
/// the file exactly what it was given (Iceberg readers need attributes such as "field-id" that a
/// re-serialisation could drop or reorder). Immutable after parse; safe to share across threads.
class schema {
public:
    /// Parses a schema. Rejects unknown types, unresolved names, duplicate names, nesting deeper
    /// than `max_depth`, and anything that is not valid Avro schema JSON.
    static result<schema> parse(std::string_view json_text);

    const node& root() const noexcept { return *_root; }
    const std::string& json() const noexcept { return _json; }

    schema(schema&&) noexcept = default;
    schema& operator=(schema&&) noexcept = default;

    static constexpr int max_depth = 64;

private:
    schema() = default;
    friend class schema_parser;
    std::vector<std::unique_ptr<node>> _nodes;
    const node* _root = nullptr;
    std::string _json;
};

} // namespace floe::avro
