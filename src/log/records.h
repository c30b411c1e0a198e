#pragma once
// The records inside a Kafka RecordBatch v2 (after decompression): walking their bodies and
// decoding one into views. Shared by every reader of batches: Produce validation (kafka), the
// storage worker, tiered reads and lookups (tiering, http).

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace floe::log {

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

/// Calls fn(index, body) for each of the `h.record_count` records in `data` (a batch's record
/// bytes, decompressed), body being the bytes after the record's length varint. errc::corrupt
/// when a length is bad or bytes are left over.
result<void> for_each_record_body(const record_batch_header& h, bytes_view data,
                                  const std::function<result<void>(int32_t, bytes_view)>& fn);

/// Decodes one record's body (the bytes after its length varint) of a batch with header `h`;
/// header views go to `headers`. errc::corrupt when malformed or its offset is outside the batch.
result<record_view> decode_record(const record_batch_header& h, bytes_view body,
                                  std::vector<header_view>& headers);

} // namespace floe::log
