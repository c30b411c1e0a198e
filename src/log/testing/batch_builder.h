#pragma once
// Test and benchmark helper: builds uncompressed Kafka RecordBatch v2 bytes the way a client
// does (header, varint records, CRC-32C). Not used by the library itself.

#include "base/bytes.h"
#include "base/crc32c.h"
#include "base/varint.h"
#include "log/record_batch_header.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::log::testing {

struct test_record {
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    int64_t timestamp_ms = 0;
};

struct batch_options {
    int64_t base_offset = 0;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    int16_t attributes = 0; ///< compression bits must stay 0: records are written uncompressed
};

/// Appends one batch holding `records` to `out`.
inline void append_batch(byte_buffer& out, const std::vector<test_record>& records,
                         const batch_options& o = {}) {
    const size_t start = out.size();
    byte_writer w(out);
    int64_t first_ts = records.empty() ? -1 : records.front().timestamp_ms;
    int64_t max_ts = -1;
    for (auto& r : records) {
        first_ts = std::min(first_ts, r.timestamp_ms);
        max_ts = std::max(max_ts, r.timestamp_ms);
    }
    w.put_be<int64_t>(o.base_offset);
    w.put_be<int32_t>(0); // length, patched
    w.put_be<int32_t>(-1); // partition leader epoch
    w.put_u8(2);
    w.put_be<uint32_t>(0); // crc, patched
    w.put_be<int16_t>(o.attributes);
    w.put_be<int32_t>(int32_t(records.size()) - 1);
    w.put_be<int64_t>(first_ts);
    w.put_be<int64_t>(max_ts);
    w.put_be<int64_t>(o.producer_id);
    w.put_be<int16_t>(o.producer_epoch);
    w.put_be<int32_t>(o.base_sequence);
    w.put_be<int32_t>(int32_t(records.size()));
    byte_buffer rec;
    for (size_t i = 0; i < records.size(); ++i) {
        auto& r = records[i];
        rec.clear();
        rec.push_back(0); // attributes
        put_varint(rec, r.timestamp_ms - first_ts);
        put_varint(rec, int64_t(i));
        auto put_opt = [&](const std::optional<std::string>& s) {
            if (!s) put_varint(rec, -1);
            else {
                put_varint(rec, int64_t(s->size()));
                rec.insert(rec.end(), s->begin(), s->end());
            }
        };
        put_opt(r.key);
        put_opt(r.value);
        put_varint(rec, int64_t(r.headers.size()));
        for (auto& [k, v] : r.headers) {
            put_varint(rec, int64_t(k.size()));
            rec.insert(rec.end(), k.begin(), k.end());
            put_opt(v);
        }
        put_varint(out, int64_t(rec.size()));
        out.insert(out.end(), rec.begin(), rec.end());
    }
    w.patch_be<int32_t>(start + 8, int32_t(out.size() - start - 12));
    uint32_t crc = crc32c(bytes_view(out.data() + start + 21, out.size() - start - 21));
    w.patch_be<uint32_t>(start + 17, crc);
}

/// `n` records of `value_size` bytes with keys "k<i>" and timestamps ts0, ts0+1, ...
inline byte_buffer make_batch(size_t n, size_t value_size, int64_t ts0,
                              const batch_options& o = {}) {
    std::vector<test_record> rs(n);
    for (size_t i = 0; i < n; ++i) {
        rs[i].key = "k" + std::to_string(i);
        rs[i].value = std::string(value_size, char('a' + i % 26));
        rs[i].timestamp_ms = ts0 + int64_t(i);
    }
    byte_buffer b;
    append_batch(b, rs, o);
    return b;
}

} // namespace floe::log::testing
