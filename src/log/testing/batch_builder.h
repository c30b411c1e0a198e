#pragma once
// Test and benchmark helper: uncompressed Kafka RecordBatch v2 bytes the way a client sends
// them (offsets from base_offset, the batch's base timestamp the smallest record timestamp),
// built with the library's log::batch_builder. Not used by the library itself.

#include "base/bytes.h"
#include "base/result.h"
#include "log/batch_builder.h"

#include <fmt/format.h>
#include <algorithm>
#include <optional>
#include <string>
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
};

/// Appends one batch holding `records` (at least one) to `out`.
inline void append_batch(byte_buffer& out, const std::vector<test_record>& records,
                         const batch_options& o = {}) {
    FLOE_ASSERT(!records.empty(), "a test batch holds at least one record");
    int64_t first_ts = std::min_element(records.begin(), records.end(), [](auto& a, auto& b) {
                           return a.timestamp_ms < b.timestamp_ms;
                       })->timestamp_ms;
    batch_builder b;
    b.begin(o.base_offset, compression_codec::none, o.producer_id, o.producer_epoch, o.base_sequence, first_ts);
    std::vector<batch_builder::header> hs;
    for (size_t i = 0; i < records.size(); ++i) {
        auto& r = records[i];
        hs.clear();
        for (auto& [k, v] : r.headers) hs.push_back({k, v ? std::optional<std::string_view>(*v) : std::nullopt});
        auto opt = [](const std::optional<std::string>& s) {
            return s ? std::optional<std::string_view>(*s) : std::nullopt;
        };
        b.add(o.base_offset + int64_t(i), r.timestamp_ms, opt(r.key), opt(r.value), hs);
    }
    auto done = b.finish(out);
    FLOE_ASSERT(done.has_value(), "an uncompressed batch always builds");
}

/// `n` records of `value_size` bytes with keys "k<i>" and timestamps ts0, ts0+1, ...
inline byte_buffer make_batch(size_t n, size_t value_size, int64_t ts0,
                              const batch_options& o = {}) {
    std::vector<test_record> rs(n);
    for (size_t i = 0; i < n; ++i) {
        rs[i].key = fmt::format("k{}", i); // not "k" + string: GCC 12 -Wrestrict false positive
        rs[i].value = std::string(value_size, char('a' + i % 26));
        rs[i].timestamp_ms = ts0 + int64_t(i);
    }
    byte_buffer b;
    append_batch(b, rs, o);
    return b;
}

} // namespace floe::log::testing
