#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "log/local_tier.h"
#include "log/record_batch_header.h"
#include "log/records.h"

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace floe::tiering {

// The record views and the single-record decoder live with the batch format in log.
using header_view = log::header_view;
using record_view = log::record_view;
using log::decode_record;

/// Decodes every record of one v2 batch (`batch` is the whole batch, header included),
/// decompressing into `scratch` (at most `max_decompressed` bytes). Calls fn(const record_view&)
/// -> result<void> for each, in order. Control batches yield nothing. errc::corrupt when a
/// record is malformed or the count does not match the header.
result<void> for_each_record(const log::record_batch_header& h, bytes_view batch, byte_buffer& scratch,
                             size_t max_decompressed,
                             const std::function<result<void>(const record_view&)>& fn);

/// One batch checked (CRC) and decompressed once, with where each record starts, so single
/// records are decoded on demand (lookups keep these in a cache). Immutable once built.
struct indexed_batch {
    struct span {
        uint32_t begin, size;
    };
    log::record_batch_header header;
    byte_buffer records;      ///< the batch's record bytes, decompressed
    std::vector<span> bodies; ///< each record's body within `records`; empty for control batches

    /// Validates `batch` (exactly one whole batch: length, CRC) and indexes its records.
    static result<std::shared_ptr<const indexed_batch>> build(bytes_view batch, size_t max_decompressed);
    size_t size() const noexcept { return bodies.size(); }
    size_t memory() const noexcept { return records.capacity() + bodies.capacity() * sizeof(span); }
    /// The first record with offset >= `offset` (nullopt when none), its index in `index`.
    result<std::optional<record_view>> at_or_after(int64_t offset, size_t& index,
                                                   std::vector<header_view>& headers) const;
    result<record_view> record(size_t index, std::vector<header_view>& headers) const;
};

/// Decodes every record of the whole batches in `batches` (a fetch answer, a segment range),
/// checking CRCs when asked. fn(const record_view&) -> result<bool>; false stops the walk.
/// Returns the last offset of the last batch walked (-1 when none), so callers progress past
/// batches that hold no records for them (control batches).
/// `keep_batch`, when given, chooses the batches whose records are decoded (the others are
/// walked past, as control batches are).
result<int64_t> for_each_record_in(bytes_view batches, bool check_crc, byte_buffer& scratch,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn,
                                   const std::function<bool(const log::record_batch_header&)>& keep_batch = {});

/// Reads a partition's local log from `from` up to `until` (exclusive) in chunks of about
/// `chunk_bytes` and decodes each record at or after `from` (fn as above). Errors from the log
/// (errc::out_of_range once retention moved the start past `from`) are returned.
/// With `committed_only`, records of aborted transactions are skipped (control batches always
/// are); `until` must then not pass the partition's last stable offset, above which a
/// transaction's outcome is not known yet.
result<void> for_each_local_record(log::local_partition& p, int64_t from, int64_t until, size_t chunk_bytes,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn,
                                   bool committed_only = false);

} // namespace floe::tiering
