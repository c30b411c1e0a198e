#include "log/record_batch_header.h"
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
