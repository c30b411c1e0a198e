#pragma once

#include "base/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace floe {

/// One term of a partition spec's text (topic config floe.iceberg.partition-spec), as written:
/// `day(message_ts)`, `bucket[16](key)`, `identity(stream_key)` or a bare column name (identity).
/// Only the syntax: the iceberg module checks the transform against the source column's type.
struct partition_term {
    std::string transform;  ///< identity, year, month, day, hour, bucket, truncate, void
    int32_t param = 0;      ///< bucket: N buckets; truncate: width W (both > 0)
    std::string source;     ///< column name (a dotted path for a nested struct field)
    std::string text;       ///< the term as written, trimmed (for messages)
    /// The Iceberg transform text: "identity", "bucket[16]", "truncate[4]", "day", ...
    std::string iceberg_transform() const;
};

/// Parses a comma list of terms. Errors (errc::invalid_argument) name the bad term: an unknown
/// transform, a missing or non-positive [N], a missing column, stray characters, an empty
/// list or term, the same column and transform twice.
result<std::vector<partition_term>> parse_partition_spec_text(std::string_view text);

/// The canonical text of parsed terms ("identity(stream_key), day(message_ts)"), so the same
/// spec written two ways compares equal.
std::string partition_spec_text(const std::vector<partition_term>& terms);

/// Floe's default: every Kafka partition in its own Iceberg partition.
inline constexpr std::string_view default_partition_spec_text = "identity(stream_key)";

} // namespace floe
