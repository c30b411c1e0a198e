#include "base/varint.h"
#include "format/avro/container.h"
#include "format/avro/tests/sample.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::avro;

namespace {

constexpr sync_marker sync16 = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};

void put_str(byte_buffer& out, std::string_view s) {
    put_varint(out, static_cast<int64_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

// A container file assembled by hand, so tests can lie in any field.
byte_buffer handmade(std::string_view schema_json, std::string_view codec_text,
                     const std::vector<std::pair<int64_t, byte_buffer>>& blocks,
                     std::optional<int64_t> size_override = std::nullopt) {
    byte_buffer f = {'O', 'b', 'j', 1};
    put_varint(f, 2);
    put_str(f, "avro.schema");
    put_str(f, schema_json);
    put_str(f, "avro.codec");
    put_str(f, codec_text);
    f.push_back(0);
    f.insert(f.end(), sync16.begin(), sync16.end());
    for (auto& [count, data] : blocks) {
        put_varint(f, count);
        put_varint(f, size_override ? *size_override : static_cast<int64_t>(data.size()));
        f.insert(f.end(), data.begin(), data.end());
        f.insert(f.end(), sync16.begin(), sync16.end());
    }
    return f;
}

error read_error(bytes_view file, reader_options o = {}) {
    auto r = container_reader::open(file, "hostile.avro", o);
    if (!r) return r.error();
    auto all = r->read_all();
    EXPECT_FALSE(all) << "expected an error";
    if (all) return error(errc::internal, "no error");
    return all.error();
}

void expect_error(bytes_view file, std::string_view what, reader_options o = {}) {
    auto e = read_error(file, o);
    EXPECT_EQ(e.code(), errc::corrupt) << e;
    EXPECT_NE(e.message().find("hostile.avro"), std::string::npos) << e;
    EXPECT_NE(e.message().find(what), std::string::npos) << "want \"" << what << "\" in: " << e;
}

byte_buffer valid_file(codec c, size_t n) {
    static auto s = std::move(*schema::parse(test_data::sample_schema_json));
    writer_options o;
    o.codec = c;
    o.sync = sync16;
    o.block_target_bytes = 2048;
    auto w = container_writer::create(s, o);
    test_data::sample_gen g(7);
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(w->append(g.record(i)));
    return std::move(*w->finish());
}

} // namespace

TEST(avro_hostile, bad_magic) {
    auto f = valid_file(codec::null, 3);
    f[0] = 'X';
    expect_error(f, "bad magic");
    expect_error(byte_buffer{}, "bad magic");
}

TEST(avro_hostile, every_truncation_fails_or_reads_a_prefix) {
    for (codec c : {codec::null, codec::deflate, codec::zstd, codec::snappy}) {
        auto f = valid_file(c, 40);
        auto full = container_reader::open(f, "hostile.avro");
        ASSERT_TRUE(full);
        auto all = full->read_all();
        ASSERT_TRUE(all) << all.error();
        size_t errors = 0;
        for (size_t len = 0; len < f.size(); ++len) {
            auto part = bytes_view(f).first(len);
            auto r = container_reader::open(part, "hostile.avro");
            if (!r) {
                ++errors;
                EXPECT_NE(r.error().message().find("hostile.avro"), std::string::npos);
                continue;
            }
            auto got = r->read_all();
            if (!got) {
                ++errors;
                EXPECT_NE(got.error().message().find("hostile.avro"), std::string::npos)
                    << got.error();
                continue;
            }
            // Cut exactly between blocks: a shorter valid file (Avro has no footer).
            ASSERT_LT(got->size(), all->size());
            for (size_t i = 0; i < got->size(); ++i) ASSERT_EQ((*got)[i], (*all)[i]);
        }
        EXPECT_GT(errors, f.size() * 9 / 10) << codec_name(c);
    }
}

TEST(avro_hostile, lying_block_size_and_bad_sync) {
    const char* s = R"({"type":"record","name":"r","fields":[{"name":"a","type":"long"}]})";
    byte_buffer one = {2};  // long 1
    expect_error(handmade(s, "null", {{1, one}}, int64_t{1} << 40), "exceeds");
    expect_error(handmade(s, "null", {{1, one}}, -5), "block size -5");
    auto f = handmade(s, "null", {{1, one}});
    f.back() ^= 1;
    expect_error(f, "sync marker mismatch");
    expect_error(handmade(s, "null", {{-1, one}}), "negative object count");
    expect_error(handmade(s, "null", {{2, one}}), "truncated");
    expect_error(handmade(s, "null", {{1, byte_buffer{2, 2}}}), "bytes left after its objects");
}

TEST(avro_hostile, lying_counts_and_lengths_inside_values) {
    const char* arr = R"({"type":"array","items":"long"})";
    byte_buffer huge;
    put_varint(huge, int64_t{1} << 50);
    expect_error(handmade(arr, "null", {{1, huge}}), "claims");
    const char* nulls = R"({"type":"array","items":"null"})";
    expect_error(handmade(nulls, "null", {{1, huge}}), "zero-size");
    const char* str = R"("string")";
    byte_buffer len;
    put_varint(len, 1000);
    expect_error(handmade(str, "null", {{1, len}}), "exceeds");
    byte_buffer neg;
    put_varint(neg, -3);
    expect_error(handmade(str, "null", {{1, neg}}), "negative string length");
    const char* un = R"(["null","int"])";
    expect_error(handmade(un, "null", {{1, byte_buffer{6}}}), "union branch 3");
    const char* b = R"("boolean")";
    expect_error(handmade(b, "null", {{1, byte_buffer{7}}}), "boolean byte 7");
    byte_buffer long_varint(11, 0xff);
    expect_error(handmade(R"("long")", "null", {{1, long_varint}}), "varint");
}

TEST(avro_hostile, deep_nesting) {
    // Schema nesting is capped when parsing the header.
    std::string deep;
    for (int i = 0; i < 200; ++i) deep += R"({"type":"array","items":)";
    deep += "\"long\"" + std::string(200, '}');
    expect_error(handmade(deep, "null", {}), "nested deeper");
    // Recursive types are finite in the schema but values can nest without bound: capped too.
    const char* list = R"({"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]})";
    byte_buffer chain(5000, 2);  // branch 1 (node) again and again
    chain.push_back(0);
    expect_error(handmade(list, "null", {{1, chain}}), "nested deeper");
}

TEST(avro_hostile, codecs) {
    const char* s = R"("bytes")";
    expect_error(handmade(s, "deflate", {{1, byte_buffer{1, 2, 3, 4, 5}}}), "deflate");
    expect_error(handmade(s, "zstandard", {{1, byte_buffer{1, 2, 3, 4, 5}}}), "zstd");
    expect_error(handmade(s, "snappy", {{1, byte_buffer{1, 2, 3, 4, 5}}}), "snappy");
    auto unknown = container_reader::open(handmade(s, "lzma", {}), "hostile.avro");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code(), errc::unsupported);
    EXPECT_NE(unknown.error().message().find("lzma"), std::string::npos);

    // A decompression bomb is refused at the limit instead of allocated.
    byte_buffer zeros(8 << 20, 0), bomb;
    for (codec c : {codec::deflate, codec::zstd, codec::snappy}) {
        bomb.clear();
        ASSERT_TRUE(compress(c, zeros, bomb));
        reader_options o;
        o.max_block_bytes = 1 << 20;
        expect_error(handmade(s, codec_name(c), {{1, bomb}}), "limit", o);
    }
    // A snappy block whose checksum does not match its content.
    bomb.clear();
    byte_buffer payload = {4, 'a', 'b', 'c', 'd'};
    ASSERT_TRUE(compress(codec::snappy, payload, bomb));
    bomb.back() ^= 0xff;
    expect_error(handmade(s, "snappy", {{1, bomb}}), "checksum");
}

TEST(avro_hostile, bit_flips_never_crash) {
    auto f = valid_file(codec::deflate, 20);
    test_data::sample_gen g(3);
    for (int i = 0; i < 3000; ++i) {
        auto m = f;
        for (int k = 0; k < 3; ++k) m[g.below(m.size())] ^= static_cast<uint8_t>(1u << g.below(8));
        auto r = container_reader::open(m, "hostile.avro");
        if (!r) continue;
        datum d;
        while (true) {
            auto n = r->next(d);
            if (!n || !*n) break;
        }
    }
}
