#include "log/record_batch_header.h"
#include "log/records.h"
#include "base/varint.h"
#include "log/testing/batch_builder.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;

TEST(record_batch_header, parses_every_field) {
    batch_options o;
    o.base_offset = 42;
    o.producer_id = 7;
    o.producer_epoch = 3;
    o.base_sequence = 11;
    auto b = make_batch(5, 10, 1000, o);
    auto h = validate_batch(b);
    ASSERT_TRUE(h) << h.error();
    EXPECT_EQ(h->base_offset, 42);
    EXPECT_EQ(h->size_bytes(), b.size());
    EXPECT_EQ(h->magic, 2);
    EXPECT_EQ(h->last_offset_delta, 4);
    EXPECT_EQ(h->last_offset(), 46);
    EXPECT_EQ(h->base_timestamp, 1000);
    EXPECT_EQ(h->max_timestamp, 1004);
    EXPECT_EQ(h->producer_id, 7);
    EXPECT_EQ(h->producer_epoch, 3);
    EXPECT_EQ(h->base_sequence, 11);
    EXPECT_EQ(h->last_sequence(), 15);
    EXPECT_EQ(h->record_count, 5);
    EXPECT_EQ(h->compression(), compression_codec::none);
    EXPECT_FALSE(h->is_log_append_time());
}

TEST(record_batch_header, sequence_wraps_like_kafka) {
    record_batch_header h;
    h.base_sequence = INT32_MAX - 1;
    h.last_offset_delta = 3;
    EXPECT_EQ(h.last_sequence(), 1);
}

TEST(record_batch_header, base_offset_patch_keeps_crc_timestamp_patch_recomputes) {
    auto b = make_batch(3, 10, 1000);
    patch_base_offset(b, 123456789);
    auto h = validate_batch(b);
    ASSERT_TRUE(h) << h.error();
    EXPECT_EQ(h->base_offset, 123456789);
    uint32_t before = h->crc;
    patch_log_append_time(b, 5555);
    h = validate_batch(b);
    ASSERT_TRUE(h) << h.error();
    EXPECT_NE(h->crc, before);
    EXPECT_TRUE(h->is_log_append_time());
    EXPECT_EQ(h->max_timestamp, 5555);
    EXPECT_EQ(h->base_timestamp, 1000);
}

TEST(record_batch_header, rejects_bad_input) {
    auto b = make_batch(2, 10, 1000);
    EXPECT_FALSE(parse_batch_header(bytes_view(b.data(), 60)));
    EXPECT_FALSE(validate_batch(bytes_view(b.data(), b.size() - 1)));
    auto bad_magic = b;
    bad_magic[16] = 1;
    EXPECT_EQ(parse_batch_header(bad_magic).error().code(), errc::corrupt);
    auto bad_crc = b;
    bad_crc.back() ^= 1;
    EXPECT_TRUE(parse_batch_header(bad_crc));
    EXPECT_FALSE(validate_batch(bad_crc));
    auto bad_len = b;
    bad_len[8] = bad_len[9] = bad_len[10] = 0;
    bad_len[11] = 10; // below the 49-byte minimum
    EXPECT_FALSE(parse_batch_header(bad_len));
}

TEST(record_batch_header, for_each_batch_walks_and_stops_on_damage) {
    byte_buffer all;
    for (int i = 0; i < 4; ++i) {
        auto b = make_batch(size_t(i + 1), 20, 1000 + i * 10);
        all.insert(all.end(), b.begin(), b.end());
    }
    int seen = 0;
    auto n = for_each_batch(all, true, [&](const record_batch_header& h, bytes_view bytes) {
        EXPECT_EQ(h.record_count, seen + 1);
        EXPECT_EQ(bytes.size(), h.size_bytes());
        ++seen;
        return true;
    });
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, all.size());
    EXPECT_EQ(seen, 4);
    all.pop_back();
    EXPECT_FALSE(for_each_batch(all, true, [](auto&, auto) { return true; }));
}

namespace {
// One record body: attributes, timestamp delta, offset delta, key, value, headers.
byte_buffer record_body(int64_t off_delta, int64_t key_len, std::string_view key, int64_t n_headers) {
    byte_buffer b;
    b.push_back(0);
    put_varint(b, 7);
    put_varint(b, off_delta);
    put_varint(b, key_len);
    b.insert(b.end(), key.begin(), key.end());
    put_varint(b, -1); // null value
    put_varint(b, n_headers);
    return b;
}
} // namespace

TEST(Records, DecodeRecordReadsFieldsAndRefusesBadLengths) {
    record_batch_header h{};
    h.base_offset = 100;
    h.base_timestamp = 1000;
    h.record_count = 2;
    h.last_offset_delta = 1;
    std::vector<header_view> hs;
    auto body = record_body(1, 2, "ab", 0); // the views point into it
    auto ok = decode_record(h, body, hs);
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->offset, 101);
    EXPECT_EQ(ok->timestamp, 1007);
    EXPECT_EQ(ok->key, std::optional<std::string_view>("ab"));
    EXPECT_FALSE(ok->value.has_value());
    // -1 is null; any other negative length is corrupt, as is an offset outside the batch.
    EXPECT_EQ(decode_record(h, record_body(0, -2, "", 0), hs).error().code(), errc::corrupt);
    EXPECT_EQ(decode_record(h, record_body(2, 2, "ab", 0), hs).error().code(), errc::corrupt);
    EXPECT_EQ(decode_record(h, record_body(0, 2, "ab", -1), hs).error().code(), errc::corrupt);
}

TEST(Records, ForEachRecordBodyNeedsExactlyTheCountedRecords) {
    record_batch_header h{};
    h.record_count = 1;
    auto body = record_body(0, 1, "k", 0);
    byte_buffer data;
    put_varint(data, int64_t(body.size()));
    data.insert(data.end(), body.begin(), body.end());
    int n = 0;
    auto count = [&](int32_t, bytes_view) -> result<void> {
        ++n;
        return {};
    };
    ASSERT_TRUE(for_each_record_body(h, data, count));
    EXPECT_EQ(n, 1);
    data.push_back(0); // a byte after the last record
    EXPECT_EQ(for_each_record_body(h, data, count).error().code(), errc::corrupt);
    h.record_count = 2; // one record missing
    data.pop_back();
    EXPECT_FALSE(for_each_record_body(h, data, count));
}
