#include "log/records.h"

#include "base/varint.h"

namespace floe::log {
namespace {

result<std::optional<std::string_view>> read_nullable(byte_reader& r) {
    auto len = FLOE_TRY(read_varint(r));
    if (len == -1) return std::optional<std::string_view>();
    if (len < 0) return fail(errc::corrupt, "length {}", len);
    auto b = FLOE_TRY(r.bytes(static_cast<size_t>(len)));
    return std::optional<std::string_view>(as_chars(b));
}

} // namespace

result<void> for_each_record_body(const record_batch_header& h, bytes_view data,
                                  const std::function<result<void>(int32_t, bytes_view)>& fn) {
    byte_reader r(data);
    for (int32_t i = 0; i < h.record_count; ++i) {
        auto len = FLOE_TRY_CTX(read_varint(r), "record {} of batch at offset {}", i, h.base_offset);
        if (len < 0 || static_cast<uint64_t>(len) > r.remaining())
            return fail(errc::corrupt, "record {} of batch at offset {}: length {} with {} bytes left",
                        i, h.base_offset, len, r.remaining());
        FLOE_TRY(fn(i, FLOE_TRY(r.bytes(static_cast<size_t>(len)))));
    }
    if (!r.empty())
        return fail(errc::corrupt, "batch at offset {}: {} bytes after {} records", h.base_offset,
                    r.remaining(), h.record_count);
    return {};
}

result<record_view> decode_record(const record_batch_header& h, bytes_view body,
                                  std::vector<header_view>& headers) {
    byte_reader rr(body);
    record_view rec;
    rec.headers = &headers;
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
    if (rec.offset < h.base_offset || rec.offset > h.last_offset())
        return fail(errc::corrupt, "offset {} outside the batch", rec.offset);
    return rec;
}

} // namespace floe::log
