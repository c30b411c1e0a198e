#pragma once
// The remote tier as readers of the local log see it (KIP-405): records of a partition below
// its local log start are served from elsewhere (in Floe, the topic's Iceberg table). Declared
// here, beside the local tier, so the Kafka front end reads through it without depending on the
// module that implements it (tiering::remote_reader). Implementations are thread-safe.

#include "base/bytes.h"
#include "base/result.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace floe::log {

class remote_tier {
public:
    virtual ~remote_tier() = default;

    struct read_result {
        byte_buffer batches;     ///< whole v2 batches, back to back
        int64_t next_offset = 0; ///< one past the last record returned
        size_t records = 0;
    };
    /// Records of topic/partition from `offset` on, with offsets below `limit` (where the local
    /// tier takes over), about `max_bytes` of batches (at least one record when there is one).
    /// Empty when the remote tier holds nothing at or after `offset` below `limit`.
    virtual result<read_result> read(const std::string& topic, int32_t partition, int64_t offset, int64_t limit,
                                     size_t max_bytes) = 0;
    /// The first offset the remote tier holds for the partition (ListOffsets earliest), read
    /// from its current state.
    virtual result<std::optional<int64_t>> start_offset(const std::string& topic, int32_t partition) = 0;
    /// The same, answered from a copy at most `max_age` old: for reports (the log start offset
    /// in every Fetch answer), never for deciding whether an offset is readable.
    virtual result<std::optional<int64_t>> recent_start_offset(const std::string& topic, int32_t partition,
                                                               std::chrono::milliseconds max_age) = 0;
    struct ts_hit {
        int64_t offset;
        int64_t timestamp;
    };
    /// First record (offset order) with timestamp >= ts and offset < limit.
    virtual result<std::optional<ts_hit>> offset_for_timestamp(const std::string& topic, int32_t partition,
                                                                int64_t ts, int64_t limit) = 0;
};

} // namespace floe::log
