#include "tiering/batch_records.h"

#include "base/varint.h"
#include "log/compression.h"

namespace floe::tiering {
namespace {

/// The record bytes of `batch` (whole, header included), decompressed into `scratch` if needed.
result<bytes_view> record_bytes(const log::record_batch_header& h, bytes_view batch, byte_buffer& scratch,
                                size_t max_decompressed) {
    if (batch.size() < log::batch_layout::header_size)
        return fail(errc::corrupt, "batch at offset {} shorter than its header", h.base_offset);
    bytes_view data = batch.subspan(log::batch_layout::header_size);
    if (h.compression() == log::compression_codec::none) return data;
    FLOE_TRY_CTX(log::decompress(h.compression(), data, scratch, max_decompressed),
                 "decompressing batch at offset {}", h.base_offset);
    return bytes_view(scratch);
}

} // namespace

result<void> for_each_record(const log::record_batch_header& h, bytes_view batch, byte_buffer& scratch,
                             size_t max_decompressed,
                             const std::function<result<void>(const record_view&)>& fn) {
    if (h.is_control()) return {};
    auto data = FLOE_TRY(record_bytes(h, batch, scratch, max_decompressed));
    std::vector<header_view> headers;
    return log::for_each_record_body(h, data, [&](int32_t i, bytes_view body) -> result<void> {
        auto rec = FLOE_TRY_CTX(decode_record(h, body, headers), "record {} of batch at offset {}", i, h.base_offset);
        return fn(rec);
    });
}

result<std::shared_ptr<const indexed_batch>> indexed_batch::build(bytes_view batch, size_t max_decompressed) {
    auto b = std::make_shared<indexed_batch>();
    b->header = FLOE_TRY(log::validate_batch(batch));
    if (b->header.is_control()) return std::shared_ptr<const indexed_batch>(std::move(b));
    byte_buffer scratch;
    auto data = FLOE_TRY(record_bytes(b->header, batch, scratch, max_decompressed));
    b->records.assign(data.begin(), data.end());
    b->bodies.reserve(size_t(std::max(b->header.record_count, 0)));
    FLOE_TRY(log::for_each_record_body(b->header, b->records, [&](int32_t, bytes_view body) -> result<void> {
        b->bodies.push_back({uint32_t(body.data() - b->records.data()), uint32_t(body.size())});
        return {};
    }));
    return std::shared_ptr<const indexed_batch>(std::move(b));
}

result<std::optional<record_view>> indexed_batch::at_or_after(int64_t offset, size_t& index,
                                                               std::vector<header_view>& headers) const {
    auto decode = [&](size_t i) {
        return decode_record(header, bytes_view(records).subspan(bodies[i].begin, bodies[i].size), headers);
    };
    // Offsets rise within a batch and are usually base + index: try that slot, else search.
    size_t lo = 0, hi = bodies.size();
    if (offset >= header.base_offset && size_t(offset - header.base_offset) < bodies.size()) {
        size_t guess = size_t(offset - header.base_offset);
        auto r = FLOE_TRY(decode(guess));
        if (r.offset == offset) {
            index = guess;
            return std::optional<record_view>(r);
        }
    }
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (FLOE_TRY(decode(mid)).offset < offset) lo = mid + 1;
        else hi = mid;
    }
    index = lo;
    if (lo == bodies.size()) return std::optional<record_view>();
    return std::optional<record_view>(FLOE_TRY(decode(lo)));
}

result<record_view> indexed_batch::record(size_t index, std::vector<header_view>& headers) const {
    return decode_record(header, bytes_view(records).subspan(bodies[index].begin, bodies[index].size), headers);
}

result<int64_t> for_each_record_in(bytes_view batches, bool check_crc, byte_buffer& scratch,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn,
                                   const std::function<bool(const log::record_batch_header&)>& keep_batch) {
    int64_t last = -1;
    bool stop = false;
    std::optional<error> record_error;
    auto walked = log::for_each_batch(batches, check_crc, [&](const log::record_batch_header& h, bytes_view b) {
        last = std::max(last, h.last_offset());
        if (keep_batch && !keep_batch(h)) return true;
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

result<void> for_each_local_record(log::local_partition& p, int64_t from, int64_t until, size_t chunk_bytes,
                                   size_t max_decompressed,
                                   const std::function<result<bool>(const record_view&)>& fn,
                                   bool committed_only) {
    byte_buffer chunk, scratch;
    int64_t offset = from;
    bool stop = false;
    // Aborted transactions of the range: their batches are not committed data.
    std::vector<log::aborted_txn> aborted;
    if (committed_only) aborted = p.aborted_transactions(kafka_offset(from), kafka_offset(until));
    std::function<bool(const log::record_batch_header&)> keep;
    if (!aborted.empty())
        keep = [&aborted](const log::record_batch_header& h) { return !log::in_aborted_transaction(h, aborted); };
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
                                                    }, keep),
                                 "{}-{} at offset {}", p.tp().topic, p.tp().partition, offset);
        if (last < offset) break; // no progress: nothing more below `until`
        offset = last + 1;
    }
    return {};
}

} // namespace floe::tiering
