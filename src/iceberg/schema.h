#pragma once

#include "base/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::iceberg {

enum class type_id : uint8_t {
    boolean, int_, long_, float_, double_, decimal, date, time, timestamp, timestamptz, string,
    uuid, fixed, binary, struct_, list, map,
};

struct type;
using type_ptr = std::shared_ptr<const type>;

/// A field of a struct, with its Iceberg field id (stable forever: engines match columns by it).
struct nested_field {
    int32_t id = 0;
    std::string name;
    bool required = false;
    type_ptr field_type;
    std::string doc;
};

/// An Iceberg type. Immutable and shared.
struct type {
    type_id id = type_id::string;
    int32_t precision = 0, scale = 0;  ///< decimal
    uint32_t length = 0;               ///< fixed
    std::vector<nested_field> fields;  ///< struct
    int32_t element_id = 0;            ///< list
    bool element_required = false;
    type_ptr element;
    int32_t key_id = 0, value_id = 0;  ///< map
    bool value_required = false;
    type_ptr key, value;

    bool is_primitive() const noexcept { return id < type_id::struct_; }
    static type_ptr primitive(type_id id);
};

/// "long", "decimal(9,2)", "fixed[16]", ... for primitives.
std::string primitive_name(const type& t);

/// A table schema: a struct with a schema id.
struct schema {
    int32_t schema_id = 0;
    std::vector<nested_field> fields;
    std::vector<int32_t> identifier_field_ids;

    /// Depth-first search for the field with this id (nested fields included), or nullptr.
    const nested_field* find(int32_t field_id) const noexcept;
    const nested_field* find(std::string_view top_level_name) const noexcept;
    /// The highest field id used anywhere in the schema (for last-column-id).
    int32_t highest_field_id() const noexcept;
};

/// Floe's table schema (DESIGN.md "Table format"): field ids 1-10 for the columns in order,
/// then 11 (headers element), 12 (header_key), 13 (header_value), as Iceberg assigns them.
const schema& floe_table_schema();

/// A typed topic's dead-letter table `<table>_dlq`: Floe's columns (ids 1-13) and why the
/// record could not become a typed row: error_reason string required (14: bad-magic-byte,
/// unknown-schema-id, decode-error, incompatible-schema, ...), error_detail string (15),
/// schema_id int (16: the id the value named or the schema it was decoded with, if any).
const schema& floe_dlq_table_schema();

namespace field_ids {
inline constexpr int32_t stream_key = 1, segment_id = 2, message_id = 3, message_ts = 4,
                         kafka_timestamp = 5, key = 6, value = 7, headers = 8, partition = 9,
                         offset = 10, header_element = 11, header_key = 12, header_value = 13,
                         error_reason = 14, error_detail = 15, schema_id = 16;
}

struct partition_field {
    int32_t source_id = 0;
    int32_t field_id = 0;
    std::string name;
    std::string transform;  ///< "identity", "bucket[16]", "day", ...
};

struct partition_spec {
    int32_t spec_id = 0;
    std::vector<partition_field> fields;

    /// Result type of each field (identity keeps the source type; others per the spec).
    result<std::vector<type_ptr>> result_types(const schema& s) const;
};

/// identity(stream_key) with partition field id 1000.
partition_spec floe_partition_spec();

struct sort_field {
    int32_t source_id = 0;
    std::string transform = "identity";
    std::string direction = "asc";
    std::string null_order = "nulls-first";
};

struct sort_order {
    int32_t order_id = 0;
    std::vector<sort_field> fields;
};

/// message_ts ascending, as order id 1 (0 is reserved for "unsorted").
sort_order floe_sort_order();

// JSON codecs, shaped as the table metadata spec writes them.
nlohmann::ordered_json to_json(const schema& s);
nlohmann::ordered_json to_json(const partition_spec& p);
nlohmann::ordered_json to_json(const sort_order& o);
result<schema> schema_from_json(const nlohmann::json& j);
result<partition_spec> partition_spec_from_json(const nlohmann::json& j);
result<sort_order> sort_order_from_json(const nlohmann::json& j);

} // namespace floe::iceberg
