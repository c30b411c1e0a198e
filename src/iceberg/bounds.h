#pragma once
// Iceberg's single-value binary serialization (spec appendix D), used for manifest lower/upper
// bounds and partition summaries: int/date as 4 bytes little-endian, long/time/timestamp as 8
// bytes little-endian, float/double IEEE 754 little-endian, string as UTF-8 bytes, binary and
// fixed as-is, boolean as one byte, uuid as 16 big-endian bytes.

#include "iceberg/schema.h"
#include "format/avro/datum.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace floe::iceberg {

std::string serialize_int(int32_t v);
std::string serialize_long(int64_t v);
std::string serialize_double(double v);

result<int32_t> deserialize_int(std::string_view b);
result<int64_t> deserialize_long(std::string_view b);

/// Serialises a partition value (as the Avro datum it is in a manifest) for a field of type t.
result<std::string> serialize_value(const type& t, const avro::datum& v);

/// Orders two serialised values of type t (-1, 0, 1): numeric for numbers, unsigned bytewise for
/// string/binary/fixed/uuid (which is code point order for UTF-8).
int compare_serialized(const type& t, std::string_view a, std::string_view b);

} // namespace floe::iceberg
