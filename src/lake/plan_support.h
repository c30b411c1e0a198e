#pragma once
// Pieces the typed-row planners share (typed_rows.cc for Avro, typed_rows_protobuf.cc,
// typed_rows_json.cc): why a plan could not be made, and finding a table field by name together
// with the leaf offset of its first column. Internal to the lake module.

#include "iceberg/schema.h"
#include "lake/typed_rows.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace floe::lake::detail {

/// A writer schema the table cannot take: the dead-letter reason and what was wrong.
struct plan_error {
    std::string_view reason;
    std::string detail;
};

/// The field named `name` among `fields`, or nullptr; `off` gets the leaf offset of its first
/// column within `fields` (the leaves of the fields before it).
inline const iceberg::nested_field* find_field(const std::vector<iceberg::nested_field>& fields,
                                               std::string_view name, uint32_t& off) {
    off = 0;
    for (auto& f : fields) {
        if (f.name == name) return &f;
        off += static_cast<uint32_t>(leaf_count(*f.field_type));
    }
    return nullptr;
}

} // namespace floe::lake::detail
