#pragma once

// Test and benchmark helpers: owned rows of Floe's message table made from the deterministic
// generator (testkit/datagen.h), and views of them for message_writer::append().

#include "format/parquet/reader.h"
#include "format/parquet/writer.h"
#include "testkit/datagen.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace floe::parquet::testing {

/// Rows as a partition's log would give them: stream_key "<topic>-<partition>", offsets from
/// `first_offset` up, message_id "<stream_key>/<offset>", append time a little after the
/// producer time.
inline std::vector<message_record> generate_rows(size_t n, testkit::datagen_options opts,
                                                 std::string topic = "orders",
                                                 int32_t partition = 0, int64_t first_offset = 0,
                                                 int64_t segment_id = 0) {
    testkit::datagen g(opts);
    std::vector<message_record> rows;
    rows.reserve(n);
    std::string stream = fmt::format("{}-{}", topic, partition);
    for (size_t i = 0; i < n; ++i) {
        auto rec = g.next();
        message_record r;
        r.stream_key = stream;
        r.segment_id = segment_id;
        r.offset = first_offset + static_cast<int64_t>(i);
        r.message_id = fmt::format("{}/{}", stream, r.offset);
        r.kafka_timestamp = rec.timestamp_ms;
        r.message_ts = rec.timestamp_ms + static_cast<int64_t>(i % 7);
        r.key = std::move(rec.key);
        r.value = std::move(rec.value);
        r.headers.emplace();
        for (auto& h : rec.headers)
            r.headers->push_back({std::move(h.key), std::move(h.value)});
        r.partition = partition;
        rows.push_back(std::move(r));
    }
    return rows;
}

/// A view of `r` for append(); `scratch` holds the header views and must outlive the call.
inline message_row view_of(const message_record& r, std::vector<message_header_view>& scratch) {
    message_row v;
    v.stream_key = r.stream_key;
    v.segment_id = r.segment_id;
    v.message_id = r.message_id;
    v.message_ts = r.message_ts;
    v.kafka_timestamp = r.kafka_timestamp;
    if (r.key) v.key = *r.key;
    if (r.value) v.value = *r.value;
    if (r.headers) {
        scratch.clear();
        for (auto& h : *r.headers) {
            message_header_view hv;
            hv.key = h.key;
            if (h.value) hv.value = *h.value;
            scratch.push_back(hv);
        }
        v.headers = std::span<const message_header_view>(scratch);
    }
    v.partition = r.partition;
    v.offset = r.offset;
    return v;
}

/// Writes `rows` to `sink` and returns the summary.
inline result<file_summary> write_rows(std::unique_ptr<output_sink> sink,
                                       const std::vector<message_record>& rows,
                                       writer_options opts = {}) {
    auto w = FLOE_TRY(message_writer::open(std::move(sink), std::move(opts)));
    std::vector<message_header_view> scratch;
    for (auto& r : rows)
        FLOE_TRY(w.append(view_of(r, scratch)));
    return w.close();
}

/// Hand-made rows for the edge cases: nulls, empty strings, zero bytes, unicode, 0-20 headers
/// with duplicate names, null vs empty header lists, integer extremes, values over 1 MiB.
inline std::vector<message_record> edge_rows(int64_t first_offset) {
    std::vector<message_record> out;
    auto base = [&](int64_t i) {
        message_record r;
        r.stream_key = "orders-0";
        r.segment_id = 7;
        r.offset = first_offset + i;
        r.message_id = fmt::format("orders-0/{}", r.offset);
        r.message_ts = 1'767'225'600'000 + i;
        r.kafka_timestamp = 1'767'225'500'000 + i;
        r.partition = 0;
        return r;
    };
    int64_t i = 0;
    {
        auto r = base(i++);
        out.push_back(r);
    } // null key, tombstone, null headers
    {
        auto r = base(i++);
        r.key = "";
        r.value = "";
        r.headers.emplace();
        r.message_id = "";
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = std::string("\0\0a\0", 4);
        std::string v;
        for (int b = 0; b < 256; ++b)
            v.push_back(static_cast<char>(b));
        r.value = v;
        r.headers = std::vector<message_record::header>{{"bin", std::string("\0\xff\0", 3)}};
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.message_id = "héllo-世界-🎉";
        r.stream_key = "orders-0";
        r.key = "ключ-🔑";
        r.value = "значение — ✓ 値 \xf0\x9f\x98\x80";
        r.headers = std::vector<message_record::header>{{"ключ", std::string("värde")},
                                                        {"名前", std::nullopt}};
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = "dup-headers";
        r.value = "x";
        r.headers.emplace();
        for (int k = 0; k < 20; ++k) {
            message_record::header h;
            h.key = k % 3 == 0 ? "trace-id" : (k % 3 == 1 ? "source" : "");
            if (k % 4 != 3) h.value = fmt::format("v{}", k);
            r.headers->push_back(h);
        }
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = "one-null-header";
        r.headers = std::vector<message_record::header>{{"h", std::nullopt}};
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = "empty-header";
        r.value = "v";
        r.headers = std::vector<message_record::header>{{"", std::string()}};
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = std::string("\xff\xfe\xfd", 3);
        r.kafka_timestamp = INT64_MIN;
        r.segment_id = INT64_MAX;
        r.partition = INT32_MAX;
        r.message_ts = INT64_MAX;
        r.headers.emplace();
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = std::string("\x80", 1);
        r.kafka_timestamp = INT64_MAX;
        r.segment_id = INT64_MIN;
        r.partition = INT32_MIN;
        r.message_ts = INT64_MIN;
        r.value = std::string(1, '\0');
        out.push_back(r);
    }
    for (int big = 0; big < 2; ++big) {
        auto r = base(i++);
        r.key = fmt::format("big-{}", big);
        std::string v;
        v.reserve((3u << 19) + 7);
        uint64_t s = 0x12345678u + static_cast<uint64_t>(big);
        for (size_t k = 0; k < (3u << 19) + 7; ++k) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v.push_back(static_cast<char>(big == 0 ? 0xFF : (s >> 56)));
        }
        r.value = v; // 1.5 MiB: all 0xFF (max bound has no truncated form) / random bytes
        r.headers.emplace();
        out.push_back(r);
    }
    {
        auto r = base(i++);
        r.key = "last";
        r.value = "tail";
        r.headers = std::vector<message_record::header>{{"a", "1"}, {"a", "1"}};
        out.push_back(r);
    }
    return out;
}

/// The next values of `g` PLAIN-encoded (4-byte little-endian length, then the bytes; a
/// tombstone as an empty value) until the page holds at least `bytes` bytes: what the writer
/// compresses for the `value` column.
inline std::string plain_value_page(testkit::datagen& g, size_t bytes) {
    std::string s;
    while (s.size() < bytes) {
        std::string v = g.next().value.value_or("");
        auto len = static_cast<uint32_t>(v.size());
        s.append(reinterpret_cast<const char*>(&len), 4);
        s += v;
    }
    return s;
}

} // namespace floe::parquet::testing
