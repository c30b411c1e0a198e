#include "lake/value_codec.h"

#include "schema/parsed_schema.h"
#include "schema/registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>

namespace floe::lake {

const std::shared_ptr<const parquet::schema>& dlq_layout() {
    static const std::shared_ptr<const parquet::schema> s = [] {
        using pt = parquet::physical_type;
        using lt = parquet::logical_type;
        auto root = parquet::message_schema_node();
        root.children.push_back(parquet::leaf_node("error_reason", iceberg::field_ids::error_reason,
                                                   parquet::repetition::required, pt::byte_array, lt::string));
        root.children.push_back(parquet::leaf_node("error_detail", iceberg::field_ids::error_detail,
                                                   parquet::repetition::optional, pt::byte_array, lt::string));
        root.children.push_back(parquet::leaf_node("schema_id", iceberg::field_ids::schema_id,
                                                   parquet::repetition::optional, pt::int32));
        auto made = parquet::schema::make(std::move(root));
        FLOE_ASSERT(made.has_value(), "the dead-letter layout is a valid Parquet schema");
        return std::make_shared<const parquet::schema>(std::move(*made));
    }();
    return s;
}

} // namespace floe::lake

namespace floe::lake {

namespace {

using schema::registry_client;

/// Confluent's wire format: magic byte 0, then the schema id as 4 bytes big-endian.
constexpr size_t wire_header = 5;

std::string hex_prefix(std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 8; ++i) out += fmt::format("{:02x}", static_cast<uint8_t>(v[i]));
    return out;
}

} // namespace

} // namespace floe::lake
