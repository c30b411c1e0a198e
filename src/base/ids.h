#pragma once

#include "base/strong_id.h"

#include <cstdint>

namespace floe {

/// Kafka record offset within a partition.
using kafka_offset = named_type<int64_t, struct kafka_offset_tag>;
/// Kafka partition number.
using partition_id = named_type<int32_t, struct partition_id_tag>;
/// Local-tier segment id (the base offset of the segment's first batch).
using segment_id = named_type<int64_t, struct segment_id_tag>;
/// A byte position inside a file.
using file_position = named_type<uint64_t, struct file_position_tag>;
/// Milliseconds since the Unix epoch.
using timestamp_ms = named_type<int64_t, struct timestamp_ms_tag>;

} // namespace floe
