// Floe's snappy compressor, judged by the snappy library's decoder: every output must be a
// valid snappy stream that decodes to the input, on edge sizes (block boundaries, the short-
// literal fast path), incompressible, highly repetitive and event-like data.
#include "format/parquet/snappy_compress.h"
#include "format/parquet/tests/message_rows.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <snappy.h>

#include <random>
#include <string>
#include <vector>

using namespace floe::parquet;

namespace {

struct element_counts {
    size_t literals = 0, copy1 = 0, copy2 = 0, copy4 = 0;
};

/// Walks the elements of a snappy stream (format_description: a varint length, then tagged
/// literals and copies) without decoding them; fails the test on a malformed stream.
element_counts walk(const std::string& s) {
    element_counts c;
    size_t i = 0;
    while (i < s.size() && (static_cast<uint8_t>(s[i]) & 0x80))
        ++i;
    ++i;
    while (i < s.size()) {
        uint8_t tag = static_cast<uint8_t>(s[i++]);
        switch (tag & 3) {
        case 0: {
            size_t m = tag >> 2;
            if (m >= 60) {
                size_t bytes = m - 59;
                m = 0;
                for (size_t b = 0; b < bytes; ++b)
                    m |= static_cast<size_t>(static_cast<uint8_t>(s[i + b])) << (8 * b);
                i += bytes;
            }
            i += m + 1;
            ++c.literals;
            break;
        }
        case 1: i += 1; ++c.copy1; break;
        case 2: i += 2; ++c.copy2; break;
        default: i += 4; ++c.copy4; break;
        }
    }
    EXPECT_EQ(i, s.size()) << "stream ends inside an element";
    return c;
}

std::string compress(snappy_compressor& z, const std::string& in) {
    std::string out(snappy_compressor::max_compressed_size(in.size()), '\0');
    size_t n = z.compress(reinterpret_cast<const uint8_t*>(in.data()), in.size(),
                          reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_LE(n, out.size());
    out.resize(n);
    return out;
}

/// Compresses `in`, checks the snappy library accepts and restores it, returns the stream.
std::string round_trip(snappy_compressor& z, const std::string& in) {
    std::string c = compress(z, in);
    EXPECT_TRUE(snappy::IsValidCompressedBuffer(c.data(), c.size())) << in.size() << " bytes";
    std::string back;
    EXPECT_TRUE(snappy::Uncompress(c.data(), c.size(), &back)) << in.size() << " bytes";
    EXPECT_TRUE(back == in) << "round trip of " << in.size() << " bytes differs";
    auto e = walk(c);
    EXPECT_EQ(e.copy4, 0u) << "offsets stay within 64 KiB blocks";
    return c;
}

std::string random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, '\0');
    for (auto& ch : s)
        ch = static_cast<char>(rng());
    return s;
}

/// Event-like page bytes: generated JSON values, each behind a 4-byte length (PLAIN).
std::string event_page(size_t value_size, size_t bytes) {
    floe::testkit::datagen g({.seed = 7, .value_size = value_size});
    return floe::parquet::testing::plain_value_page(g, bytes);
}

size_t library_size(const std::string& in) {
    std::string out;
    snappy::Compress(in.data(), in.size(), &out);
    return out.size();
}

} // namespace

TEST(snappy_compress, every_short_length) {
    snappy_compressor z;
    std::string text = "the quick brown fox jumps over the lazy dog; the quick brown fox again";
    for (size_t n = 0; n <= 300; ++n) {
        round_trip(z, std::string(n, 'a'));
        round_trip(z, random_bytes(n, n));
        std::string t;
        while (t.size() < n)
            t += text;
        t.resize(n);
        round_trip(z, t);
    }
}

TEST(snappy_compress, block_boundaries) {
    snappy_compressor z;
    for (size_t n : {65535, 65536, 65537, 65536 + 15, 65536 + 16, 131072, 131072 + 7, 200001}) {
        round_trip(z, event_page(100, n).substr(0, n));
        round_trip(z, std::string(n, '\0'));
        round_trip(z, random_bytes(n, n));
    }
}

TEST(snappy_compress, offsets_around_the_copy_forms) {
    snappy_compressor z;
    // A random chunk repeated at distances that straddle the limits of the 1-byte-offset (2048)
    // and 2-byte-offset (65536) copy forms and of a 64 KiB block, random filler between.
    for (size_t gap : {0, 1, 3, 4, 11, 12, 1800, 1847, 1848, 1849, 1900, 60000, 65100, 65136,
                       65137, 65530}) {
        std::string chunk = random_bytes(200, gap);
        std::string s = chunk + random_bytes(gap, gap + 1) + chunk + random_bytes(40, 3) + chunk;
        std::string c = round_trip(z, s);
        if (gap + 400 <= 65536) {
            EXPECT_LT(c.size() + 150, s.size()) << "gap " << gap;
        }
    }
}

TEST(snappy_compress, long_runs_are_split_into_64_byte_copies) {
    snappy_compressor z;
    for (size_t n : {64, 67, 68, 69, 127, 128, 1000, 1 << 20}) {
        std::string s = fmt::format("x{}z", std::string(n, 'y'));
        std::string c = round_trip(z, s);
        auto e = walk(c);
        EXPECT_GE(e.copy1 + e.copy2, (n - 20) / 64) << n;
    }
    std::string zeros(4 << 20, '\0');
    EXPECT_LT(round_trip(z, zeros).size(), zeros.size() / 20);
}

TEST(snappy_compress, incompressible_input_grows_by_tags_only) {
    snappy_compressor z;
    std::string s = random_bytes(1 << 20, 99);
    std::string c = round_trip(z, s);
    // One literal per 64 KiB block (3-byte tag) and the 3-byte length preamble.
    EXPECT_LE(c.size(), s.size() + 16 * 3 + 3);
}

TEST(snappy_compress, event_data_ratio_close_to_the_library) {
    snappy_compressor z;
    for (size_t value_size : {100, 1024}) {
        std::string page = event_page(value_size, 1 << 20);
        std::string c = round_trip(z, page);
        size_t lib = library_size(page);
        // Faster than the library's compressor for a few percent of size; a larger loss means
        // the match finder broke.
        EXPECT_LT(static_cast<double>(c.size()), 1.06 * static_cast<double>(lib))
            << value_size << " B values: " << c.size() << " vs library " << lib;
        EXPECT_LT(c.size(), page.size() * 7 / 10) << value_size;
        auto e = walk(c);
        EXPECT_GT(e.copy1, 0u) << "short near copies use the 2-byte form";
    }
}

TEST(snappy_compress, reused_across_inputs) {
    // The table is reset per block: a compressor used on one input must not leak positions
    // into the next (which would produce offsets pointing outside it).
    snappy_compressor z;
    std::string a = event_page(1024, 300000);
    std::string b = event_page(100, 5000);
    for (int i = 0; i < 3; ++i) {
        round_trip(z, a);
        round_trip(z, b);
        round_trip(z, a.substr(0, 70000));
    }
}
