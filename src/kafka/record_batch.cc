#include "kafka/record_batch.h"

#include "base/crc32c.h"
#include "base/varint.h"
#include "log/record_batch_header.h"

namespace floe::kafka {

namespace {
using namespace floe::log;

result<void> skip_varbytes(byte_reader& r, bool nullable) {
    int32_t n = FLOE_TRY(read_varint32(r));
    if (n < 0) {
        if (n == -1 && nullable) return {};
        return fail(errc::corrupt, "bad length {}", n);
    }
    return r.skip(size_t(n));
}
} // namespace

result<void> check_records(bytes_view data, int32_t count) {
    byte_reader r(data);
    for (int32_t i = 0; i < count; ++i) {
        int32_t len = FLOE_TRY(read_varint32(r));
        if (len < 0) return fail(errc::corrupt, "record {}: negative length", i);
        auto body = FLOE_TRY_CTX(r.bytes(size_t(len)), "record {}", i);
        byte_reader b(body);
        FLOE_TRY(b.u8());           // attributes (unused in v2)
        FLOE_TRY(read_varint(b));   // timestamp delta
        int32_t off = FLOE_TRY(read_varint32(b));
        if (off != i) return fail(errc::corrupt, "record {}: offset delta {}", i, off);
        FLOE_TRY_CTX(skip_varbytes(b, true), "record {} key", i);
        FLOE_TRY_CTX(skip_varbytes(b, true), "record {} value", i);
        int32_t nh = FLOE_TRY(read_varint32(b));
        if (nh < 0) return fail(errc::corrupt, "record {}: {} headers", i, nh);
        for (int32_t h = 0; h < nh; ++h) {
            FLOE_TRY_CTX(skip_varbytes(b, false), "record {} header {} key", i, h);
            FLOE_TRY_CTX(skip_varbytes(b, true), "record {} header {} value", i, h);
        }
        if (!b.empty()) return fail(errc::corrupt, "record {}: {} trailing bytes", i, b.remaining());
    }
    if (!r.empty()) return fail(errc::corrupt, "{} bytes after the last record", r.remaining());
    return {};
}

std::expected<records_summary, records_error> validate_records(bytes_view records,
                                                               const batch_limits& limits,
                                                               byte_buffer& scratch) {
    records_summary sum;
    std::optional<records_error> failed;
    if (records.empty())
        return std::unexpected(records_error{kerr::invalid_record, "no record batches"});
    auto walked = for_each_batch(records, true, [&](const record_batch_header& h, bytes_view b) {
        if (b.size() > size_t(limits.max_message_bytes)) {
            failed = records_error{kerr::message_too_large,
                                   fmt::format("batch of {} bytes exceeds max.message.bytes {}",
                                               b.size(), limits.max_message_bytes)};
            return false;
        }
        if (h.is_control() || h.is_transactional()) {
            failed = records_error{kerr::invalid_record,
                                   "transactional and control batches are not supported"};
            return false;
        }
        if (h.record_count <= 0 || h.last_offset_delta != h.record_count - 1) {
            failed = records_error{kerr::invalid_record,
                                   fmt::format("record count {} with last offset delta {}",
                                               h.record_count, h.last_offset_delta)};
            return false;
        }
        auto body = b.subspan(batch_layout::header_size);
        auto c = codec(h.compression());
        if (uint8_t(c) > 4) {
            failed = records_error{kerr::unsupported_compression_type,
                                   fmt::format("compression codec {}", int(c))};
            return false;
        }
        bytes_view plain = body;
        if (c != codec::none) {
            auto d = decompress(c, body, scratch, limits.max_decompressed);
            if (!d) {
                failed = records_error{kerr::corrupt_message, d.error().to_string()};
                return false;
            }
            plain = scratch;
        }
        auto ok = check_records(plain, h.record_count);
        if (!ok) {
            failed = records_error{kerr::corrupt_message, ok.error().to_string()};
            return false;
        }
        ++sum.batches;
        sum.records += h.record_count;
        return true;
    });
    if (failed) return std::unexpected(std::move(*failed));
    if (!walked)
        return std::unexpected(records_error{kerr::corrupt_message, walked.error().to_string()});
    return sum;
}

byte_buffer build_batch(std::span<const record_spec> records, codec c, int64_t base_timestamp,
                        int64_t producer_id, int16_t producer_epoch, int32_t base_sequence) {
    byte_buffer body;
    body.reserve(records.size() * 64);
    byte_buffer rec;
    int64_t max_delta = 0;
    for (size_t i = 0; i < records.size(); ++i) {
        auto& s = records[i];
        rec.clear();
        rec.push_back(0);
        put_varint(rec, s.timestamp_delta);
        put_varint(rec, int64_t(i));
        auto put_opt = [&](std::optional<std::string_view> v) {
            if (!v) return put_varint(rec, -1);
            put_varint(rec, int64_t(v->size()));
            rec.insert(rec.end(), v->begin(), v->end());
        };
        put_opt(s.key);
        put_opt(s.value);
        put_varint(rec, int64_t(s.headers.size()));
        for (auto& [hk, hv] : s.headers) {
            put_opt(hk);
            put_opt(hv);
        }
        put_varint(body, int64_t(rec.size()));
        body.insert(body.end(), rec.begin(), rec.end());
        max_delta = std::max(max_delta, s.timestamp_delta);
    }
    byte_buffer payload = c == codec::none ? std::move(body) : compress(c, body).value();
    byte_buffer out;
    out.reserve(batch_layout::header_size + payload.size());
    byte_writer w(out);
    w.put_be<int64_t>(0);
    w.put_be<int32_t>(int32_t(batch_layout::header_size - batch_layout::log_overhead + payload.size()));
    w.put_be<int32_t>(-1);
    w.put_u8(2);
    w.put_be<uint32_t>(0);
    w.put_be<int16_t>(int16_t(c));
    w.put_be<int32_t>(int32_t(records.size()) - 1);
    w.put_be<int64_t>(base_timestamp);
    w.put_be<int64_t>(base_timestamp + max_delta);
    w.put_be<int64_t>(producer_id);
    w.put_be<int16_t>(producer_epoch);
    w.put_be<int32_t>(base_sequence);
    w.put_be<int32_t>(int32_t(records.size()));
    w.put_bytes(payload);
    uint32_t crc = crc32c(bytes_view(out).subspan(batch_layout::attributes));
    w.patch_be<uint32_t>(batch_layout::crc, crc);
    return out;
}

} // namespace floe::kafka
