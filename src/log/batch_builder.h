#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <optional>
#include <string_view>
#include <vector>

namespace floe::log {

/// Builds Kafka RecordBatch v2 bytes from records: for the tiered read path (rows of the remote
/// tier become batches again, with their original offsets) and for tests and tools.
/// Not thread-safe; reuse one builder to keep its buffers.
class batch_builder {
public:
    struct header {
        std::string_view key;
        std::optional<std::string_view> value;
    };

    /// Starts a batch; offsets of added records must be >= base_offset and increasing.
    /// `base_timestamp`: the batch's first timestamp; default: the first record's.
    void begin(int64_t base_offset, compression_codec codec = compression_codec::none,
               int64_t producer_id = -1, int16_t producer_epoch = -1, int32_t base_sequence = -1,
               std::optional<int64_t> base_timestamp = std::nullopt);
    void add(int64_t offset, int64_t timestamp, std::optional<std::string_view> key,
             std::optional<std::string_view> value, std::span<const header> headers = {});
    size_t records() const noexcept { return _count; }
    /// Uncompressed bytes of the records so far (for cutting batches by size).
    size_t records_bytes() const noexcept { return _records.size(); }
    /// Appends the finished batch (header, CRC) to `out`.
    result<void> finish(byte_buffer& out);

private:
    int64_t _base_offset = 0, _last_offset = 0, _base_ts = 0, _max_ts = -1, _producer_id = -1;
    int16_t _producer_epoch = -1;
    bool _fixed_base_ts = false;
    int32_t _base_sequence = -1;
    compression_codec _codec = compression_codec::none;
    size_t _count = 0;
    byte_buffer _records, _record, _compressed;
};

} // namespace floe::log
