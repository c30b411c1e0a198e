#include "tiering/batch_records.h"

#include "base/varint.h"
#include "log/compression.h"

namespace floe::tiering {
namespace {

result<std::optional<std::string_view>> read_nullable(byte_reader& r) {
    auto len = FLOE_TRY(read_varint(r));
    if (len < 0) return std::optional<std::string_view>();
    auto b = FLOE_TRY(r.bytes(static_cast<size_t>(len)));
    return std::optional<std::string_view>(as_chars(b));
}

} // namespace

result<void> for_each_record(const log::record_batch_header& h, bytes_view batch, byte_buffer& scratch,
                             size_t max_decompressed,
                             const std::function<result<void>(const record_view&)>& fn) {
    if (h.is_control()) return {};
    if (batch.size() < log::batch_layout::header_size)
        return fail(errc::corrupt, "batch at offset {} shorter than its header", h.base_offset);
    bytes_view data = batch.subspan(log::batch_layout::header_size);
    if (h.compression() != log::compression_codec::none) {
        FLOE_TRY_CTX(log::decompress(h.compression(), data, scratch, max_decompressed),
                     "decompressing batch at offset {}", h.base_offset);
        data = scratch;
    }
    byte_reader r(data);
    std::vector<header_view> headers;
    record_view rec;
    rec.headers = &headers;
    for (int32_t i = 0; i < h.record_count; ++i) {
        auto len = FLOE_TRY_CTX(read_varint(r), "record {} of batch at offset {}", i, h.base_offset);
        if (len < 0 || static_cast<uint64_t>(len) > r.remaining())
            return fail(errc::corrupt, "record {} of batch at offset {}: length {} with {} bytes left",
                        i, h.base_offset, len, r.remaining());
        auto body = FLOE_TRY(r.bytes(static_cast<size_t>(len)));
        byte_reader rr(body);
        auto decode = [&]() -> result<void> {
            FLOE_TRY(rr.u8()); // attributes (unused in v2)
            auto ts_delta = FLOE_TRY(read_varint(rr));
            auto off_delta = FLOE_TRY(read_varint(rr));
            rec.offset = h.base_offset + off_delta;
            rec.timestamp = h.is_log_append_time() ? h.max_timestamp : h.base_timestamp + ts_delta;
            rec.key = FLOE_TRY(read_nullable(rr));
            rec.value = FLOE_TRY(read_nullable(rr));
            auto n_headers = FLOE_TRY(read_varint(rr));
            if (n_headers < 0 || static_cast<uint64_t>(n_headers) > rr.remaining())
                return fail(errc::corrupt, "header count {}", n_headers);
            headers.clear();
            for (int64_t k = 0; k < n_headers; ++k) {
                auto klen = FLOE_TRY(read_varint(rr));
                if (klen < 0) return fail(errc::corrupt, "null header key");
                auto key = as_chars(FLOE_TRY(rr.bytes(static_cast<size_t>(klen))));
                auto value = FLOE_TRY(read_nullable(rr));
                headers.push_back({key, value});
            }
            if (!rr.empty()) return fail(errc::corrupt, "{} trailing bytes", rr.remaining());
            return {};
        };
        FLOE_TRY_CTX(decode(), "record {} of batch at offset {}", i, h.base_offset);
        if (rec.offset < h.base_offset || rec.offset > h.last_offset())
            return fail(errc::corrupt, "record {} of batch at offset {} has offset {} outside the batch",
                        i, h.base_offset, rec.offset);
        FLOE_TRY(fn(rec));
    }
    if (!r.empty())
        return fail(errc::corrupt, "batch at offset {}: {} bytes after {} records", h.base_offset,
                    r.remaining(), h.record_count);
    return {};
}

result<int64_t> for_each_record_in(bytes_view batches, bool check_crc, byte_buffer& scratch,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn) {
    int64_t last = -1;
    bool stop = false;
    std::optional<error> record_error;
    auto walked = log::for_each_batch(batches, check_crc, [&](const log::record_batch_header& h, bytes_view b) {
        last = std::max(last, h.last_offset());
        auto rr = for_each_record(h, b, scratch, max_decompressed, [&](const record_view& v) -> result<void> {
            if (stop) return {};
            stop = !FLOE_TRY(fn(v));
            return {};
        });
        if (!rr) record_error = std::move(rr).error();
        return !stop && !record_error;
    });
    if (record_error) return fail(std::move(*record_error));
    FLOE_TRY(std::move(walked));
    return last;
}

result<void> for_each_local_record(log::partition_log& p, int64_t from, int64_t until, size_t chunk_bytes,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn) {
    byte_buffer chunk, scratch;
    int64_t offset = from;
    bool stop = false;
    while (offset < until && !stop) {
        auto rd = FLOE_TRY_CTX(p.read(kafka_offset(offset), {.max_bytes = chunk_bytes,
                                                             .min_one_batch = true,
                                                             .max_offset = kafka_offset(until)}),
                               "reading {}-{} at offset {}", p.tp().topic, p.tp().partition, offset);
        if (rd.slices.empty()) break;
        chunk.clear();
        FLOE_TRY(rd.copy_to(chunk));
        auto last = FLOE_TRY_CTX(for_each_record_in(chunk, true, scratch, max_decompressed,
                                                    [&](const record_view& v) -> result<bool> {
                                                        if (v.offset < from) return true;
                                                        stop = !FLOE_TRY(fn(v));
                                                        return !stop;
                                                    }),
                                 "{}-{} at offset {}", p.tp().topic, p.tp().partition, offset);
        if (last < offset) break; // no progress: nothing more below `until`
        offset = last + 1;
    }
    return {};
}

} // namespace floe::tiering
