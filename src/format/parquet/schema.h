#pragma once

// The schema model: a tree of named nodes with Iceberg field ids, repetition, and physical and
// logical types at the leaves; flattened into one column_descriptor per leaf (its path and
// max definition/repetition levels), and to/from Parquet's depth-first SchemaElement list.
// Immutable once built; safe to share between threads.

#include "base/result.h"
#include "format/parquet/metadata.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace floe::parquet {

/// How a leaf's values are encoded. `auto_` picks per type: DELTA_BINARY_PACKED for integers,
/// dictionary (falling back to PLAIN when it does not pay) for byte arrays.
enum class value_encoding : int8_t { auto_, plain, dictionary, delta };

struct schema_node {
    std::string name;
    std::optional<int32_t> field_id;
    repetition rep = repetition::required;
    std::optional<physical_type> type; ///< set on leaves only
    logical_type logical = logical_type::none;
    int32_t type_length = 0;          ///< FIXED_LEN_BYTE_ARRAY: bytes per value
    int32_t precision = 0, scale = 0; ///< DECIMAL
    bool utc = true;                  ///< TIME / TIMESTAMP: isAdjustedToUTC
    value_encoding enc = value_encoding::auto_;
    bool bloom_filter = false; ///< write a split-block bloom filter for this leaf
    std::vector<schema_node> children;

    bool is_leaf() const noexcept { return type.has_value(); }
};

schema_node leaf_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                      physical_type type, logical_type logical = logical_type::none);
schema_node group_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                       std::vector<schema_node> children);
/// A 3-level LIST: `<rep> group name (LIST) { repeated group list { element } }`; the element
/// node is renamed "element" and keeps its field id (Iceberg's element-id).
schema_node list_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                      schema_node element);
/// A FIXED_LEN_BYTE_ARRAY leaf of `length` bytes (UUID: length 16, logical_type::uuid).
schema_node fixed_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                       int32_t length, logical_type logical = logical_type::none);
/// A DECIMAL(precision, scale) leaf: INT32 for precision <= 9, INT64 for <= 18, else
/// FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold 10^precision - 1 in two's complement
/// (values big-endian, as Iceberg writes them). Ordered as signed numbers in statistics.
schema_node decimal_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                         int32_t precision, int32_t scale);
/// A 3-level MAP: `<rep> group name (MAP) { repeated group key_value { required key; value } }`;
/// the key node is renamed "key" (and made required), the value node "value"; both keep their
/// field ids (Iceberg's key-id and value-id).
schema_node map_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                     schema_node key, schema_node value);
/// Bytes of the smallest two's complement number holding every decimal of `precision` digits.
int32_t decimal_fixed_length(int32_t precision);

struct column_descriptor {
    std::vector<std::string> path;
    physical_type type = physical_type::int32;
    logical_type logical = logical_type::none;
    int32_t type_length = 0;
    int32_t precision = 0, scale = 0;
    bool utc = true;
    int16_t max_def = 0;
    int16_t max_rep = 0;
    std::optional<int32_t> field_id;
    value_encoding enc = value_encoding::auto_;
    bool bloom_filter = false;
    std::string dotted_path() const;
};

/// The order of two values of column `d` given as Parquet plain bytes (statistics bounds), by
/// its TYPE_ORDER: signed for integers and decimals (DECIMAL in FIXED_LEN_BYTE_ARRAY as
/// big-endian two's complement), numeric for floats, unsigned byte-wise for byte arrays,
/// other fixed-length values and booleans. -1, 0 or 1; values shorter than the type's width
/// are read zero-padded (callers check sizes).
int compare_plain(const column_descriptor& d, std::string_view a, std::string_view b);

class schema {
public:
    /// Validates a tree (root is the message group) and flattens it.
    static result<schema> make(schema_node root);
    /// Rebuilds a schema from a file's SchemaElement list (untrusted: bounded depth and counts).
    static result<schema> from_elements(const std::vector<schema_element>& elements);

    const schema_node& root() const noexcept { return _root; }
    const std::vector<column_descriptor>& columns() const noexcept { return _columns; }
    std::vector<schema_element> to_elements() const;
    std::optional<size_t> column_by_field_id(int32_t field_id) const;
    std::optional<size_t> column_by_path(std::string_view dotted) const;

private:
    schema_node _root;
    std::vector<column_descriptor> _columns;
};

/// Floe's Iceberg message table (DESIGN.md), in column order, with the field ids the Iceberg
/// module assigns: stream_key 1, segment_id 2, message_id 3, message_ts 4, kafka_timestamp 5,
/// key 6, value 7, headers 8, partition 9, offset 10, headers.element 11, header_key 12,
/// header_value 13. A bloom filter is written on `key`.
schema_node message_schema_node();
const schema& message_schema();

/// Leaf column indexes of message_schema().
namespace message_col {
inline constexpr size_t stream_key = 0, segment_id = 1, message_id = 2, message_ts = 3,
                        kafka_timestamp = 4, key = 5, value = 6, header_key = 7, header_value = 8,
                        partition = 9, offset = 10, count = 11;
}

} // namespace floe::parquet
