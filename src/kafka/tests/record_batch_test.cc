#include "kafka/record_batch.h"

#include <gtest/gtest.h>

namespace floe::kafka {
namespace {

std::vector<record_spec> sample() {
    std::vector<record_spec> r;
    r.push_back({"k1", "v1", {{"h", "x"}}, 0});
    r.push_back({std::nullopt, "v2", {}, 1});
    r.push_back({"k3", std::nullopt, {{"a", std::nullopt}, {"a", "dup"}}, 2});
    return r;
}

TEST(KafkaRecordBatch, EveryCodecValidates) {
    byte_buffer scratch;
    for (int c = 0; c <= 4; ++c) {
        auto recs = sample();
        auto b = build_batch(recs, codec(c), 1'700'000'000'000);
        auto v = validate_records(b, {}, scratch);
        ASSERT_TRUE(v) << c << ": " << v.error().message;
        EXPECT_EQ(v->records, 3);
        EXPECT_EQ(v->batches, 1u);
    }
}

TEST(KafkaRecordBatch, CorruptCrcIsCorruptMessage) {
    byte_buffer scratch;
    auto recs = sample();
    auto b = build_batch(recs, codec::none, 1);
    b.back() ^= 0x01;
    auto v = validate_records(b, {}, scratch);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, kerr::corrupt_message);
}

TEST(KafkaRecordBatch, OversizedBatchIsMessageTooLarge) {
    byte_buffer scratch;
    auto recs = sample();
    auto b = build_batch(recs, codec::none, 1);
    auto v = validate_records(b, {int32_t(b.size() - 1), 1 << 20}, scratch);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, kerr::message_too_large);
}

TEST(KafkaRecordBatch, TwoBatchesBackToBack) {
    byte_buffer scratch;
    auto recs = sample();
    auto a = build_batch(recs, codec::zstd, 1);
    auto b = build_batch(recs, codec::lz4, 2);
    a.insert(a.end(), b.begin(), b.end());
    auto v = validate_records(a, {}, scratch);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->batches, 2u);
    EXPECT_EQ(v->records, 6);
    a.pop_back(); // truncated second batch
    EXPECT_FALSE(validate_records(a, {}, scratch));
}

TEST(KafkaRecordBatch, SnappyXerialFraming) {
    std::string text(5000, 'q');
    for (size_t i = 0; i < text.size(); i += 7) text[i] = char('a' + i % 26);
    auto block1 = compress(codec::snappy, as_bytes(std::string_view(text).substr(0, 3000))).value();
    auto block2 = compress(codec::snappy, as_bytes(std::string_view(text).substr(3000))).value();
    byte_buffer x = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    byte_writer w(x);
    w.put_be<int32_t>(int32_t(block1.size()));
    w.put_bytes(block1);
    w.put_be<int32_t>(int32_t(block2.size()));
    w.put_bytes(block2);
    byte_buffer out;
    ASSERT_TRUE(decompress(codec::snappy, x, out, 1 << 20));
    EXPECT_EQ(as_chars(out), text);
}

TEST(KafkaRecordBatch, DecompressionIsBounded) {
    std::string big(1 << 20, 'z');
    for (int c = 1; c <= 4; ++c) {
        auto z = compress(codec(c), as_bytes(big)).value();
        byte_buffer out;
        auto r = decompress(codec(c), z, out, 4096);
        ASSERT_FALSE(r) << c;
        EXPECT_LE(out.size(), 4096u);
        ASSERT_TRUE(decompress(codec(c), z, out, 1 << 20)) << c;
        EXPECT_EQ(out.size(), big.size());
    }
}

TEST(KafkaRecordBatch, BadOffsetDeltaIsRejected) {
    // Hand-build a record whose offset delta is 5 instead of 0.
    byte_buffer rec = {0x00, 0x00, 0x0A, 0x01, 0x01, 0x00};
    byte_buffer data;
    data.push_back(uint8_t(rec.size() * 2));
    data.insert(data.end(), rec.begin(), rec.end());
    EXPECT_FALSE(check_records(data, 1));
}

} // namespace
} // namespace floe::kafka
