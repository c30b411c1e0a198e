#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <cstdint>
#include <functional>
#include <string>

namespace floe::log {

/// Where a scan of segment bytes stopped. Everything before `valid_bytes` is a chain of whole,
/// CRC-valid batches with contiguous offsets starting at the segment's base offset (with
/// `allow_gaps`, a mirror's segment: increasing offsets, each batch at or above the previous
/// batch's end).
struct scan_outcome {
    uint64_t valid_bytes = 0;
    int64_t next_offset = 0;    ///< one past the last valid batch's last offset
    size_t batches = 0;
    std::string stop_reason;    ///< empty when the data ended exactly at a batch boundary
};

using scan_callback = std::function<void(const record_batch_header&, uint64_t position)>;

/// Recovery scanner over bytes in memory (the fuzz target's entry point). Stops at the first
/// batch that is truncated, fails to decode or its CRC-32C, or whose base offset is not the
/// expected next offset (with `allow_gaps`: below it). Never reads past `data`; allocates nothing
/// proportional to lying lengths.
scan_outcome scan_segment_bytes(bytes_view data, int64_t base_offset, const scan_callback& cb = {},
                                bool allow_gaps = false);

/// The same scan over an open file, read in bounded chunks (a batch larger than the chunk is
/// read whole only after its length was checked against what the file holds).
/// errc::io_error if reads fail.
result<scan_outcome> scan_segment_file(int fd, uint64_t file_size, int64_t base_offset,
                                       const scan_callback& cb = {}, bool allow_gaps = false);

} // namespace floe::log
