#pragma once

// Validation of the record batches a producer sends, beyond what the log checks on append:
// the records inside each batch (decompressed when compressed) must decode, match the header's
// count and carry sequential offset deltas. The log (log/record_batch_header.h) owns the batch
// header layout, CRC and in-place patches.

#include "base/bytes.h"
#include "log/compression.h"
#include "kafka/protocol.h"

#include <cstdint>
#include <string>

namespace floe::kafka {

/// Kafka record-batch compression codecs (attribute bits 0-2); the codecs live in the log
/// module, which owns the batch format.
using codec = log::compression_codec;
using log::compress;
using log::decompress;

struct batch_limits {
    int32_t max_message_bytes = 1048588; ///< one batch, as the topic's max.message.bytes
    size_t max_decompressed = 64u << 20;  ///< refuse batches inflating beyond this
    /// A compacted topic: every record needs a key (Kafka refuses keyless ones, KIP-467).
    bool require_keys = false;
    /// A transactional Produce: every batch must be transactional (else none may be).
    bool transactional = false;
};

/// What a Produce partition's records hold, once they passed validation.
struct records_summary {
    size_t batches = 0;
    int64_t records = 0;
};

/// Why validation refused the records: the Kafka error code to answer and a message.
struct records_error {
    kerr code = kerr::corrupt_message;
    std::string message;
    /// Per-record causes (KIP-467): index of the record within its batch, and why.
    std::vector<std::pair<int32_t, std::string>> record_errors;
};

/// Validates a Produce partition's records field: one or more whole v2 batches back to back,
/// CRC-32C correct, each no larger than max.message.bytes, never a control batch, transactional
/// exactly when `limits.transactional`, and every record decodable after decompression with
/// count and offset deltas consistent; with `require_keys`, every record keyed (else
/// INVALID_RECORD listing each keyless record).
/// `scratch` is reused for decompression. Never reads past `records`; bounded allocation.
std::expected<records_summary, records_error> validate_records(bytes_view records,
                                                               const batch_limits& limits,
                                                               byte_buffer& scratch);

/// Walks the records section (uncompressed) of one batch: `count` records. errc::corrupt when
/// a record is malformed or deltas are not 0..count-1.
result<void> check_records(bytes_view data, int32_t count);

/// One record, for building batches in tests, benchmarks and tools.
struct record_spec {
    std::optional<std::string_view> key;
    std::optional<std::string_view> value;
    std::vector<std::pair<std::string_view, std::optional<std::string_view>>> headers;
    int64_t timestamp_delta = 0;
};

/// Builds one v2 batch (base offset 0) with the given records, compression and producer fields.
byte_buffer build_batch(std::span<const record_spec> records, codec c, int64_t base_timestamp,
                        int64_t producer_id = -1, int16_t producer_epoch = -1,
                        int32_t base_sequence = -1);

} // namespace floe::kafka
