#pragma once

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>

namespace floe::log {

/// Kafka RecordBatch v2 (magic 2) header, as it appears on the wire and in segment files.
/// All integers are big-endian. Offsets of each field from the start of the batch:
///
///   0  baseOffset            int64
///   8  batchLength           int32   bytes after this field (total size = 12 + batchLength)
///  12  partitionLeaderEpoch  int32
///  16  magic                 int8    must be 2
///  17  crc                   uint32  CRC-32C of bytes [21, end): attributes onward, so patching
///                                    baseOffset or the leader epoch keeps it valid, but patching
///                                    maxTimestamp or attributes does not
///  21  attributes            int16   bits 0-2 compression, bit 3 timestamp type (1 = LogAppendTime),
///                                    bit 4 transactional, bit 5 control, bit 6 delete horizon
///  23  lastOffsetDelta       int32
///  27  baseTimestamp         int64   ("first timestamp")
///  35  maxTimestamp          int64
///  43  producerId            int64   -1 when not idempotent
///  51  producerEpoch         int16
///  53  baseSequence          int32   -1 when not idempotent
///  57  recordCount           int32
///  61  records...
namespace batch_layout {
inline constexpr size_t base_offset = 0;
inline constexpr size_t batch_length = 8;
inline constexpr size_t partition_leader_epoch = 12;
inline constexpr size_t magic = 16;
inline constexpr size_t crc = 17;
inline constexpr size_t attributes = 21;
inline constexpr size_t last_offset_delta = 23;
inline constexpr size_t base_timestamp = 27;
inline constexpr size_t max_timestamp = 35;
inline constexpr size_t producer_id = 43;
inline constexpr size_t producer_epoch = 51;
inline constexpr size_t base_sequence = 53;
inline constexpr size_t record_count = 57;
/// Size of the fixed header; records follow.
inline constexpr size_t header_size = 61;
/// baseOffset + batchLength: the prefix not counted in batchLength.
inline constexpr size_t log_overhead = 12;
/// Smallest legal batchLength (a header with no records).
inline constexpr int32_t min_batch_length = int32_t(header_size - log_overhead);
} // namespace batch_layout

enum class compression_codec : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

/// Attribute bits of a v2 batch.
namespace batch_attr {
inline constexpr int16_t compression_mask = 0x07;
inline constexpr int16_t log_append_time = 0x08;
inline constexpr int16_t transactional = 0x10;
inline constexpr int16_t control = 0x20;
inline constexpr int16_t delete_horizon = 0x40;
} // namespace batch_attr

/// The decoded fixed header of one RecordBatch v2. A plain value; cheap to copy.
struct record_batch_header {
    int64_t base_offset = 0;
    int32_t batch_length = 0;
    int32_t partition_leader_epoch = -1;
    int8_t magic = 2;
    uint32_t crc = 0;
    int16_t attributes = 0;
    int32_t last_offset_delta = 0;
    int64_t base_timestamp = -1;
    int64_t max_timestamp = -1;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    int32_t record_count = 0;

    /// Bytes the whole batch occupies (12 + batchLength).
    size_t size_bytes() const noexcept { return batch_layout::log_overhead + size_t(batch_length); }
    int64_t last_offset() const noexcept { return base_offset + last_offset_delta; }
    compression_codec compression() const noexcept {
        return compression_codec(attributes & batch_attr::compression_mask);
    }
    bool is_log_append_time() const noexcept { return attributes & batch_attr::log_append_time; }
    bool is_transactional() const noexcept { return attributes & batch_attr::transactional; }
    bool is_control() const noexcept { return attributes & batch_attr::control; }
    bool has_producer_id() const noexcept { return producer_id >= 0; }
    /// Sequence of the last record, wrapping at INT32_MAX as Kafka does.
    int32_t last_sequence() const noexcept;
};

/// Decodes the fixed 61-byte header at the start of `data` (which may be longer, or just the
/// header). Checks only what the header alone can tell: magic == 2, batchLength >= 49,
/// lastOffsetDelta >= 0, recordCount >= 0. Does not check the CRC or that `data` holds the whole
/// batch (use `validate_batch` for that). errc::corrupt on any failure. Never reads past `data`.
result<record_batch_header> parse_batch_header(bytes_view data);

/// Reads only baseOffset and batchLength (the 12-byte prefix, valid for every magic).
/// errc::corrupt if fewer than 12 bytes.
struct batch_prefix {
    int64_t base_offset;
    int32_t batch_length;
};
result<batch_prefix> parse_batch_prefix(bytes_view data);

/// Computes the CRC-32C the batch should carry (over [21, size)). `batch` is exactly one batch.
uint32_t compute_batch_crc(bytes_view batch) noexcept;

/// Full check of exactly one batch held in `batch`: header decodes, `batch.size()` equals
/// 12 + batchLength, and the CRC matches. Returns the header. errc::corrupt otherwise.
result<record_batch_header> validate_batch(bytes_view batch);

/// Walks `data` holding zero or more whole batches back to back (a Produce request's records
/// field, or a span of a segment file) and calls `fn(header, batch_bytes)` for each; `fn`
/// returns bool (false stops early). Fails with errc::corrupt on the first batch that is
/// truncated or malformed (CRC checked when `check_crc`). Returns the number of bytes consumed
/// by valid batches.
template<typename Fn>
result<size_t> for_each_batch(bytes_view data, bool check_crc, Fn&& fn);

/// In-place patches of a batch held in a mutable buffer. The caller owns the buffer.
void patch_base_offset(std::span<uint8_t> batch, int64_t base_offset) noexcept;
/// Sets the LogAppendTime attribute bit and maxTimestamp, then recomputes the CRC.
void patch_log_append_time(std::span<uint8_t> batch, int64_t timestamp_ms) noexcept;
void patch_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch) noexcept;

// ---- implementation of the template ----

template<typename Fn>
result<size_t> for_each_batch(bytes_view data, bool check_crc, Fn&& fn) {
    size_t pos = 0;
    while (pos < data.size()) {
        auto rest = data.subspan(pos);
        auto h = FLOE_TRY_CTX(parse_batch_header(rest), "batch at byte {}", pos);
        if (h.size_bytes() > rest.size())
            return fail(errc::corrupt, "batch at byte {} needs {} bytes, {} left", pos,
                        h.size_bytes(), rest.size());
        auto bytes = rest.first(h.size_bytes());
        if (check_crc) {
            uint32_t c = compute_batch_crc(bytes);
            if (c != h.crc)
                return fail(errc::corrupt, "batch at byte {}: crc {:#010x} != stored {:#010x}",
                            pos, c, h.crc);
        }
        pos += h.size_bytes();
        if (!fn(h, bytes)) break;
    }
    return pos;
}

} // namespace floe::log
