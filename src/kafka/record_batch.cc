#include "kafka/record_batch.h"

#include "log/batch_builder.h"

#include "base/crc32c.h"
#include "log/record_batch_header.h"
#include "log/records.h"

namespace floe::kafka {

using namespace floe::log;

result<void> check_records(bytes_view data, int32_t count) {
    // A producer numbers its records 0..count-1 from the batch's base offset: check them against
    // a header saying exactly that.
    record_batch_header h{};
    h.record_count = count;
    h.last_offset_delta = count - 1;
    std::vector<header_view> headers;
    return for_each_record_body(h, data, [&](int32_t i, bytes_view body) -> result<void> {
        auto rec = FLOE_TRY_CTX(decode_record(h, body, headers), "record {}", i);
        if (rec.offset != i) return fail(errc::corrupt, "record {}: offset delta {}", i, rec.offset);
        return {};
    });
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
        if (h.is_control()) {
            failed = records_error{kerr::invalid_record, "control batches are written by the broker only"};
            return false;
        }
        if (h.is_transactional() != limits.transactional) {
            failed = records_error{kerr::invalid_record,
                                   limits.transactional
                                       ? "a transactional Produce holds a non-transactional batch"
                                       : "a transactional batch without a transactional id"};
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
        if (limits.require_keys) {
            std::vector<std::pair<int32_t, std::string>> keyless;
            std::vector<header_view> headers;
            (void)for_each_record_body(h, plain, [&](int32_t i, bytes_view body) -> result<void> {
                auto rec = FLOE_TRY(decode_record(h, body, headers));
                if (!rec.key)
                    keyless.emplace_back(i, "a compacted topic accepts only records with a key");
                return {};
            });
            if (!keyless.empty()) {
                failed = records_error{
                    kerr::invalid_record,
                    fmt::format("{} record(s) without a key refused (cleanup.policy=compact), "
                                "the first at index {} of batch {}: nothing of the batch was "
                                "appended",
                                keyless.size(), keyless.front().first, sum.batches),
                    std::move(keyless)};
                return false;
            }
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
    log::batch_builder b;
    b.begin(0, c, producer_id, producer_epoch, base_sequence, base_timestamp);
    std::vector<log::batch_builder::header> hs;
    for (size_t i = 0; i < records.size(); ++i) {
        auto& s = records[i];
        hs.clear();
        for (auto& [hk, hv] : s.headers) hs.push_back({hk, hv});
        b.add(int64_t(i), base_timestamp + s.timestamp_delta, s.key, s.value, hs);
    }
    byte_buffer out;
    auto r = b.finish(out);
    FLOE_ASSERT(r.has_value(), "building a test batch failed");
    return out;
}

} // namespace floe::kafka
