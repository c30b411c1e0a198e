#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace floe::tiering {

struct header_view {
    std::string_view key;
    std::optional<std::string_view> value;
};

/// One record of a batch, with absolute offset and timestamp. Views point into the batch or
/// the decompression scratch buffer: valid until the next record of the same batch is decoded
/// (headers) or the scratch buffer is reused (everything).
struct record_view {
    int64_t offset = 0;
    int64_t timestamp = 0;
    std::optional<std::string_view> key;
    std::optional<std::string_view> value;
    const std::vector<header_view>* headers = nullptr;
};

/// Decodes every record of one v2 batch (`batch` is the whole batch, header included),
/// decompressing into `scratch` (at most `max_decompressed` bytes). Calls fn(const record_view&)
/// -> result<void> for each, in order. Control batches yield nothing. errc::corrupt when a
/// record is malformed or the count does not match the header.
result<void> for_each_record(const log::record_batch_header& h, bytes_view batch, byte_buffer& scratch,
                             size_t max_decompressed,
                             const std::function<result<void>(const record_view&)>& fn);

} // namespace floe::tiering
