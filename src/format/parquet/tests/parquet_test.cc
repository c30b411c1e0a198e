#include "format/parquet/bloom_filter.h"
#include "format/parquet/compression.h"
#include "format/parquet/encoding.h"
#include "format/parquet/metadata.h"
#include "format/parquet/reader.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/tests/typed_rows.h"
#include "format/parquet/thrift.h"
#include "format/parquet/writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <random>

using namespace floe;
using namespace floe::parquet;
namespace pqt = floe::parquet::testing;

namespace {

std::vector<message_record> read_all(bytes_view file, std::vector<size_t> proj = {}) {
    auto r = message_reader::open(make_memory_source(file, "mem.parquet"), std::move(proj));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
    std::vector<message_record> out;
    while (true) {
        auto more = r->next_row_group(out);
        EXPECT_TRUE(more.has_value()) << (more ? "" : more.error().to_string());
        if (!more || !*more) break;
    }
    return out;
}

byte_buffer write_mem(const std::vector<message_record>& rows, writer_options opts = {},
                      file_summary* summary = nullptr) {
    byte_buffer buf;
    auto s = pqt::write_rows(make_memory_sink(buf, "mem.parquet"), rows, opts);
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
    if (summary && s) *summary = *s;
    return buf;
}

} // namespace

// ---------------------------------------------------------------- thrift

TEST(thrift, round_trips_nested_structs_lists_and_big_field_deltas) {
    byte_buffer out;
    thrift::writer w(out);
    w.field_i32(1, -5);
    w.field_i64(2, INT64_MIN);
    w.field_bool(3, true);
    w.field_string(20, "far"); // delta > 15: long form header
    w.begin_list_field(21, thrift::ttype::i32, 20);
    for (int i = 0; i < 20; ++i)
        w.elem_i32(i * 1000);
    w.begin_struct_field(22);
    w.field_bool(1, false);
    w.end_struct();
    w.end();
    thrift::reader r(out);
    ASSERT_TRUE(r.begin_struct());
    auto h = *r.next_field();
    EXPECT_EQ(h.id, 1);
    EXPECT_EQ(*r.read_i32(), -5);
    h = *r.next_field();
    EXPECT_EQ(h.id, 2);
    EXPECT_EQ(*r.read_i64(), INT64_MIN);
    h = *r.next_field();
    EXPECT_EQ(h.id, 3);
    EXPECT_TRUE(thrift::field_bool_value(h));
    h = *r.next_field();
    EXPECT_EQ(h.id, 20);
    EXPECT_EQ(*r.read_string(), "far");
    h = *r.next_field();
    EXPECT_EQ(h.id, 21);
    auto lh = *r.read_list_header();
    EXPECT_EQ(lh.size, 20u);
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(*r.read_i32(), i * 1000);
    h = *r.next_field();
    EXPECT_EQ(h.id, 22);
    EXPECT_TRUE(r.skip(h.type));
    EXPECT_EQ(r.next_field()->type, thrift::ttype::stop);
}

TEST(thrift, refuses_deep_nesting_and_lying_lengths) {
    // 1000 nested struct fields
    byte_buffer deep;
    for (int i = 0; i < 1000; ++i)
        deep.push_back(0x1C); // field 1, struct
    auto m = decode_file_metadata(deep);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message().find("nesting"), std::string::npos) << m.error().message();

    byte_buffer lying = {0x18, 0xFF, 0xFF, 0xFF, 0x0F, 'a'}; // field 1 binary of 4G bytes
    auto r = decode_file_metadata(lying);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::corrupt);

    byte_buffer big_list = {0x29, 0xFC, 0xFF, 0xFF, 0xFF, 0x0F}; // field 2 list of 4G structs
    EXPECT_FALSE(decode_file_metadata(big_list));
}

// ---------------------------------------------------------------- encodings

TEST(encoding, rle_hybrid_round_trips_runs_and_literals) {
    std::mt19937 rng(1);
    for (int width : {1, 2, 3, 8, 13, 20, 32}) {
        std::vector<uint32_t> v;
        uint32_t mask = width == 32 ? ~0u : ((1u << width) - 1);
        for (int i = 0; i < 5000; ++i) {
            if (rng() % 3 == 0) {
                uint32_t x = rng() & mask;
                int n = static_cast<int>(rng() % 40);
                for (int k = 0; k < n; ++k)
                    v.push_back(x);
            } else
                v.push_back(rng() & mask);
        }
        byte_buffer out;
        rle_encoder e(out, width);
        size_t i = 0;
        for (; i < v.size() / 2; ++i)
            e.put(v[i]);
        e.put_run(v[i], 1);
        for (++i; i < v.size(); ++i)
            e.put(v[i]);
        e.finish();
        std::vector<uint32_t> back(v.size());
        rle_decoder d(out, width);
        ASSERT_TRUE(d.get(back.data(), back.size())) << width;
        EXPECT_EQ(back, v) << width;
    }
}

TEST(encoding, rle_put_run_matches_puts) {
    byte_buffer a, b;
    rle_encoder ea(a, 2), eb(b, 2);
    std::vector<std::pair<uint32_t, uint64_t>> runs = {{1, 3}, {0, 100},   {2, 1},
                                                       {1, 9}, {3, 70000}, {0, 5}};
    for (auto [v, n] : runs) {
        ea.put_run(v, n);
        for (uint64_t k = 0; k < n; ++k)
            eb.put(v);
    }
    ea.finish();
    eb.finish();
    EXPECT_EQ(a, b);
}

TEST(encoding, rle_hybrid_block_encoder_matches_rle_encoder) {
    // encode_rle_hybrid (dictionary indices, a page at once) must give rle_encoder's bytes:
    // runs that start inside a group, runs of exactly 8, 63-group literal runs, short tails.
    std::mt19937_64 rng(5);
    for (int trial = 0; trial < 4000; ++trial) {
        int width = 1 + trial % 20;
        size_t n = rng() % (trial % 8 == 0 ? 2000 : 90);
        uint64_t card = trial % 5 == 0 ? 1 : (trial % 5 == 1 ? 2 : 1 + rng() % 100);
        card = std::min<uint64_t>(card, uint64_t{1} << width);
        std::vector<uint32_t> v;
        while (v.size() < n) {
            auto x = static_cast<uint32_t>(rng() % card);
            size_t run = trial % 3 == 0 ? 1 : 1 + rng() % (trial % 3 == 1 ? 20 : 9);
            for (size_t k = 0; k < run && v.size() < n; ++k)
                v.push_back(x);
        }
        byte_buffer a{0x5A}, b{0x5A}; // appends after existing bytes
        rle_encoder e(a, width);
        for (uint32_t x : v)
            e.put(x);
        e.finish();
        encode_rle_hybrid(v.data(), v.size(), width, b);
        ASSERT_EQ(a, b) << "trial " << trial << " width " << width << " n " << n;
        std::vector<uint32_t> back(v.size());
        rle_decoder d(bytes_view(b).subspan(1), width);
        ASSERT_TRUE(d.get(back.data(), back.size()));
        ASSERT_EQ(back, v);
    }
}

TEST(encoding, delta_binary_packed_round_trips_extremes) {
    std::vector<int64_t> v = {0, INT64_MAX, INT64_MIN, -1, 1, 5, 5, 5};
    for (int i = 0; i < 1000; ++i)
        v.push_back(1'767'225'600'000 + i * 3);
    for (int i = 0; i < 300; ++i)
        v.push_back(static_cast<int64_t>(std::mt19937_64(i)()));
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{129}, v.size()}) {
        byte_buffer out;
        delta_binary_encode(v.data(), n, out);
        std::vector<int64_t> back;
        auto used = delta_binary_decode<int64_t>(out, n, back);
        ASSERT_TRUE(used) << used.error().to_string();
        EXPECT_EQ(*used, out.size());
        EXPECT_EQ(back, std::vector<int64_t>(v.begin(), v.begin() + static_cast<long>(n)));
    }
    std::vector<int32_t> w = {INT32_MIN, INT32_MAX, 0, INT32_MIN, 7};
    byte_buffer out;
    delta_binary_encode(w.data(), w.size(), out);
    std::vector<int32_t> back;
    ASSERT_TRUE(delta_binary_decode<int32_t>(out, w.size(), back));
    EXPECT_EQ(back, w);
}

// ---------------------------------------------------------------- bloom filter

TEST(bloom_filter, finds_every_inserted_value_and_rejects_most_others_after_folding) {
    bloom_filter f(bloom_filter::optimal_bytes(100000, 0.01));
    for (int i = 0; i < 5000; ++i)
        f.insert(bloom_filter::hash(fmt::format("key-{}", i)));
    size_t before = f.num_bytes();
    f.fold_to_fpp(0.01);
    EXPECT_LT(f.num_bytes(), before);
    for (int i = 0; i < 5000; ++i)
        EXPECT_TRUE(f.may_contain(bloom_filter::hash(fmt::format("key-{}", i))));
    int fp = 0;
    for (int i = 0; i < 10000; ++i)
        fp += f.may_contain(bloom_filter::hash(fmt::format("other-{}", i)));
    EXPECT_LT(fp, 300);
}

TEST(bloom_filter, uses_xxh64_seed_zero) {
    // XXH64("", 0) from the xxHash reference.
    EXPECT_EQ(bloom_filter::hash(std::string_view("")), 0xEF46DB3751D8E999ull);
}

// ---------------------------------------------------------------- statistics helpers

TEST(stats, truncation_keeps_bounds_valid) {
    bool exact;
    EXPECT_EQ(truncate_min("abcdef", 3, false, exact), "abc");
    EXPECT_FALSE(exact);
    EXPECT_EQ(*truncate_max("abcdef", 3, false, exact), "abd");
    EXPECT_EQ(*truncate_max(std::string("ab\xff\xff", 4), 3, false, exact), "ac");
    EXPECT_FALSE(truncate_max(std::string("\xff\xff\xff\xff", 4), 2, false, exact).has_value());
    EXPECT_EQ(*truncate_max("ab", 3, false, exact), "ab");
    EXPECT_TRUE(exact);
    // UTF-8: cut on a character boundary; the max's last character is incremented.
    EXPECT_EQ(truncate_min("aé", 2, true, exact), "a");
    EXPECT_EQ(*truncate_max("aéz", 2, true, exact), "b");
    EXPECT_EQ(*truncate_max("éé", 3, true, exact), "ê");
}

// ---------------------------------------------------------------- writer + reader

TEST(parquet_file, round_trips_edge_rows_with_every_codec) {
    auto rows = pqt::edge_rows(100);
    auto more = pqt::generate_rows(2000, {.seed = 5});
    for (auto& r : more) {
        r.offset += 200;
        rows.push_back(r);
    }
    for (auto codec :
         {compression_codec::uncompressed, compression_codec::snappy, compression_codec::gzip,
          compression_codec::lz4_raw, compression_codec::zstd}) {
        writer_options o;
        o.codec = codec;
        o.row_group_size = 64 << 10;
        o.page_size = 8 << 10;
        o.page_crc = true;
        file_summary s;
        auto buf = write_mem(rows, o, &s);
        EXPECT_GT(s.split_offsets.size(), 2u) << to_string(codec);
        EXPECT_EQ(s.row_count, static_cast<int64_t>(rows.size()));
        EXPECT_EQ(s.file_size, buf.size());
        EXPECT_EQ(read_all(buf), rows) << to_string(codec);
        // Binary keys are found through statistics and bloom filters too.
        auto r = message_reader::open(make_memory_source(buf));
        ASSERT_TRUE(r);
        for (std::string k : {std::string("\0\0a\0", 4), std::string("\xff\xfe\xfd"),
                              std::string("\x80"), std::string("ключ-🔑"), std::string("")}) {
            auto hits = r->find_by_key(k);
            ASSERT_TRUE(hits);
            EXPECT_EQ(hits->size(), 1u) << to_string(codec);
        }
    }
}

TEST(parquet_file, summary_has_counts_sizes_bounds_and_field_ids) {
    auto rows = pqt::generate_rows(5000, {.seed = 9}, "orders", 2, 100, 90);
    file_summary s;
    write_mem(rows, {}, &s);
    ASSERT_EQ(s.columns.size(), message_col::count);
    auto& off = s.columns[message_col::offset];
    EXPECT_EQ(off.field_id, 10);
    EXPECT_EQ(off.num_values, 5000);
    EXPECT_EQ(off.null_count, 0);
    int64_t lo, hi;
    std::memcpy(&lo, off.min_value->data(), 8);
    std::memcpy(&hi, off.max_value->data(), 8);
    EXPECT_EQ(lo, 100);
    EXPECT_EQ(hi, 5099);
    auto& key = s.columns[message_col::key];
    int64_t null_keys = 0;
    for (auto& r : rows)
        null_keys += !r.key;
    EXPECT_EQ(key.null_count, null_keys);
    EXPECT_GT(key.compressed_size, 0);
    EXPECT_EQ(s.columns[message_col::header_value].field_id, 13);
    EXPECT_TRUE(s.columns[message_col::header_value].repeated);
    EXPECT_EQ(*s.columns[message_col::stream_key].min_value, "orders-2");
    EXPECT_EQ(s.split_offsets, std::vector<int64_t>{4});
}

TEST(parquet_file, projection_reads_only_asked_columns) {
    auto rows = pqt::generate_rows(300, {.seed = 2});
    auto buf = write_mem(rows);
    auto back = read_all(buf, {message_col::offset, message_col::header_key});
    ASSERT_EQ(back.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(back[i].offset, rows[i].offset);
        EXPECT_EQ(back[i].headers, rows[i].headers);
        EXPECT_FALSE(back[i].value.has_value());
        EXPECT_TRUE(back[i].stream_key.empty());
    }
}

TEST(parquet_file, key_lookup_skips_row_groups_by_stats_and_bloom) {
    // Keys "k-<group>-<i>": row groups hold disjoint sorted key ranges, and within a range a
    // missing key can only be rejected by the bloom filter.
    std::vector<message_record> rows;
    for (int g = 0; g < 8; ++g)
        for (int i = 0; i < 500; ++i) {
            message_record r;
            r.stream_key = "s-0";
            r.message_id = fmt::format("{}", g * 500 + i);
            r.offset = g * 500 + i;
            r.key = fmt::format("k-{}-{:04}", g, i * 2);
            r.value = std::string(200, static_cast<char>('a' + i % 26));
            rows.push_back(r);
        }
    writer_options o;
    o.row_group_size = 32 << 10;
    file_summary s;
    auto buf = write_mem(rows, o, &s);
    ASSERT_GE(s.split_offsets.size(), 8u);
    auto r = message_reader::open(make_memory_source(buf, "lookup.parquet"));
    ASSERT_TRUE(r);
    lookup_stats st;
    auto hits = r->find_by_key("k-3-0420", &st);
    ASSERT_TRUE(hits);
    ASSERT_EQ(hits->size(), 1u);
    EXPECT_EQ((*hits)[0].offset, 3 * 500 + 210);
    EXPECT_GE(st.skipped_by_stats, s.split_offsets.size() - 2);
    EXPECT_LE(st.read, 2u);
    // odd numbers are absent: inside the range of a row group, so the bloom filter decides
    size_t bloom_skips = 0;
    for (int i = 1; i < 400; i += 2) {
        auto none = r->find_by_key(fmt::format("k-5-{:04}", i), &st);
        ASSERT_TRUE(none);
        EXPECT_TRUE(none->empty());
        bloom_skips += st.skipped_by_bloom;
    }
    EXPECT_GE(bloom_skips, 150u);
}

TEST(parquet_file, errors_name_the_file_and_the_problem) {
    auto rows = pqt::generate_rows(50, {.seed = 4});
    auto good = write_mem(rows);
    auto open = [](const byte_buffer& b) {
        return file_reader::open(make_memory_source(b, "bad.parquet"));
    };
    {
        auto b = good;
        b[0] = 'X';
        auto r = open(b);
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message().find("bad.parquet"), std::string::npos);
        EXPECT_NE(r.error().message().find("magic"), std::string::npos) << r.error().message();
    }
    {
        byte_buffer b(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
        auto r = open(b);
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message().find("bad.parquet"), std::string::npos)
            << r.error().message();
    }
    {
        auto b = good;
        uint32_t lie = 0x7FFFFFF0;
        std::memcpy(b.data() + b.size() - 8, &lie, 4);
        auto r = open(b);
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message().find("footer length"), std::string::npos)
            << r.error().message();
    }
    {
        byte_buffer tiny = {'P', 'A', 'R', '1'};
        auto r = open(tiny);
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message().find("too small"), std::string::npos) << r.error().message();
    }
    {
        // corrupt a data page body: the CRC (or the decoder) must catch it, naming the column
        writer_options o;
        o.page_crc = true;
        auto b = write_mem(rows, o);
        auto fr = open(b);
        ASSERT_TRUE(fr);
        auto& m = *(*fr)->metadata().row_groups[0].columns[message_col::value].meta_data;
        b[static_cast<size_t>(m.dictionary_page_offset.value_or(m.data_page_offset)
                              + m.total_compressed_size - 3)] ^= 0x55;
        auto fr2 = open(b);
        ASSERT_TRUE(fr2);
        auto col = (*fr2)->read_column(0, message_col::value);
        ASSERT_FALSE(col);
        EXPECT_NE(col.error().message().find("bad.parquet: row group 0 column value"),
                  std::string::npos)
            << col.error().message();
    }
}

TEST(parquet_file, rejects_rows_missing_a_column_and_rolls_at_target_size) {
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), message_schema());
    ASSERT_TRUE(w);
    (*w)->column(0).add_bytes("s");
    ASSERT_TRUE((*w)->end_row());
    auto s = (*w)->close();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), errc::invalid_argument);

    writer_options o;
    o.target_file_size = 100 << 10;
    byte_buffer b2;
    auto mw = message_writer::open(make_memory_sink(b2), o);
    ASSERT_TRUE(mw);
    auto rows = pqt::generate_rows(5000, {.seed = 8});
    std::vector<message_header_view> scratch;
    size_t n = 0;
    for (auto& r : rows) {
        ASSERT_TRUE(mw->append(pqt::view_of(r, scratch)));
        ++n;
        if (mw->file().should_roll()) break;
    }
    EXPECT_LT(n, rows.size());
    auto sum = mw->close();
    ASSERT_TRUE(sum);
    EXPECT_EQ(sum->row_count, static_cast<int64_t>(n));
}

TEST(parquet_file, writes_and_reads_local_files) {
    auto path = (std::filesystem::temp_directory_path() / "floe_parquet_unit.parquet").string();
    auto rows = pqt::generate_rows(100, {.seed = 6});
    auto s = pqt::write_rows(*open_file_sink(path), rows, {});
    ASSERT_TRUE(s);
    EXPECT_EQ(std::filesystem::file_size(path), s->file_size);
    auto r = message_reader::open(*open_file_source(path));
    ASSERT_TRUE(r);
    std::vector<message_record> back;
    while (*r->next_row_group(back)) {
    }
    EXPECT_EQ(back, rows);
    std::filesystem::remove(path);
    auto missing = file_reader::open_file(path);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message().find(path), std::string::npos);
}

TEST(parquet_file, generic_schema_with_plain_integers_and_no_dictionary) {
    schema_node root =
        group_node("m", std::nullopt, repetition::required,
                   {leaf_node("a", 1, repetition::optional, physical_type::int32),
                    leaf_node("b", 2, repetition::required, physical_type::byte_array)});
    root.children[0].enc = value_encoding::plain;
    root.children[1].enc = value_encoding::plain;
    auto sch = schema::make(root);
    ASSERT_TRUE(sch);
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), *sch);
    ASSERT_TRUE(w);
    for (int i = 0; i < 100; ++i) {
        if (i % 3)
            (*w)->column(0).add_i32(i * 7);
        else
            (*w)->column(0).add_null(0);
        (*w)->column(1).add_bytes(fmt::format("b{}", i % 5));
        ASSERT_TRUE((*w)->end_row());
    }
    ASSERT_TRUE((*w)->close());
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r);
    auto& m = *(*r)->metadata().row_groups[0].columns[1].meta_data;
    EXPECT_FALSE(m.dictionary_page_offset.has_value());
    auto a = (*r)->read_column(0, 0);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->i32.size(), 66u);
    EXPECT_EQ(a->i32[0], 7);
    auto b = (*r)->read_column(0, 1);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->bytes[7], "b2");
}

TEST(stats, byte_array_page_bounds_with_shared_prefixes_and_short_values) {
    // Page and chunk min/max of byte arrays against a brute-force scan, PLAIN and dictionary:
    // values that tie on their first 8 bytes, prefixes of each other, zero and 0xFF bytes.
    std::vector<std::string> pool = {"",
                                     std::string(1, '\0'),
                                     std::string(2, '\0'),
                                     "abcdefg",
                                     std::string("abcdefg\0", 8),
                                     "abcdefgh",
                                     std::string("abcdefgh\0", 9),
                                     "abcdefghi",
                                     "abcdefgg\xff",
                                     "abcdefgi",
                                     "orders-0/10",
                                     "orders-0/9",
                                     "orders-0/100",
                                     "\xff\xff\xff\xff\xff\xff\xff\xff",
                                     "\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                                     "\xff",
                                     "a",
                                     "b"};
    std::mt19937_64 rng(11);
    for (auto enc : {value_encoding::plain, value_encoding::auto_}) {
        schema_node root =
            group_node("m", std::nullopt, repetition::required,
                       {leaf_node("b", 1, repetition::required, physical_type::byte_array)});
        root.children[0].enc = enc;
        auto sch = schema::make(root);
        ASSERT_TRUE(sch);
        writer_options o;
        o.page_row_limit = 37;
        o.stats_truncate_length = 4096; // exact bounds
        o.codec = compression_codec::uncompressed;
        std::vector<std::string> vals;
        for (int i = 0; i < 3000; ++i) {
            std::string v = pool[rng() % pool.size()];
            if (rng() % 2) // a random tail: ties on the first 8 bytes are decided later
                for (size_t k = rng() % 12; k > 0; --k)
                    v.push_back(static_cast<char>(rng() % 3 == 0 ? 0xFF : rng() % 4));
            vals.push_back(std::move(v));
        }
        byte_buffer buf;
        auto w = file_writer::open(make_memory_sink(buf), *sch, o);
        ASSERT_TRUE(w);
        for (auto& v : vals) {
            (*w)->column(0).add_bytes(v);
            ASSERT_TRUE((*w)->end_row());
        }
        ASSERT_TRUE((*w)->close());
        auto r = file_reader::open(make_memory_source(buf));
        ASSERT_TRUE(r);
        auto oi = (*r)->chunk_offset_index(0, 0);
        auto ci = (*r)->chunk_column_index(0, 0);
        ASSERT_TRUE(oi && *oi && ci && *ci);
        const auto& locs = (*oi)->page_locations;
        ASSERT_GT(locs.size(), 50u);
        for (size_t p = 0; p < locs.size(); ++p) {
            auto first = static_cast<size_t>(locs[p].first_row_index);
            size_t end = p + 1 < locs.size() ? static_cast<size_t>(locs[p + 1].first_row_index)
                                             : vals.size();
            auto [mn, mx] = std::minmax_element(vals.begin() + static_cast<ptrdiff_t>(first),
                                                vals.begin() + static_cast<ptrdiff_t>(end));
            EXPECT_EQ((*ci)->min_values[p], *mn) << "page " << p;
            EXPECT_EQ((*ci)->max_values[p], *mx) << "page " << p;
        }
        auto& st = *(*r)->metadata().row_groups[0].columns[0].meta_data->stats;
        auto [mn, mx] = std::minmax_element(vals.begin(), vals.end());
        EXPECT_EQ(st.min_value, *mn);
        EXPECT_EQ(st.max_value, *mx);
    }
}

// ---------------------------------------------------------------- typed columns (issue 29)

namespace {

std::string f32_bytes(float v) {
    return std::string(reinterpret_cast<const char*>(&v), 4);
}
std::string f64_bytes(double v) {
    return std::string(reinterpret_cast<const char*>(&v), 8);
}

} // namespace

TEST(parquet_typed, flat_boolean_float_double_fixed_round_trip) {
    auto opt = repetition::optional, req = repetition::required;
    schema_node root = group_node("t", std::nullopt, req,
                                  {leaf_node("b", 1, opt, physical_type::boolean),
                                   leaf_node("f", 2, req, physical_type::float_),
                                   leaf_node("d", 3, opt, physical_type::double_),
                                   fixed_node("x", 4, req, 3)});
    auto sch = schema::make(root);
    ASSERT_TRUE(sch) << sch.error().to_string();
    byte_buffer buf;
    writer_options o;
    o.page_row_limit = 7; // several pages
    auto w = file_writer::open(make_memory_sink(buf), *sch, o);
    ASSERT_TRUE(w);
    for (int i = 0; i < 50; ++i) {
        if (i % 5 == 0)
            (*w)->column(0).add_null(0);
        else
            (*w)->column(0).add_bool(i % 3 == 0);
        (*w)->column(1).add_f32(static_cast<float>(i) * 0.5f - 3);
        if (i % 4 == 1)
            (*w)->column(2).add_null(0);
        else
            (*w)->column(2).add_f64(i * 1e10);
        (*w)->column(3).add_fixed(std::string{char(i), char(255 - i), 'z'});
        ASSERT_TRUE((*w)->end_row());
    }
    auto sum = (*w)->close();
    ASSERT_TRUE(sum) << sum.error().to_string();
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r) << r.error().to_string();
    auto b = (*r)->read_column(0, 0);
    auto f = (*r)->read_column(0, 1);
    auto d = (*r)->read_column(0, 2);
    auto x = (*r)->read_column(0, 3);
    ASSERT_TRUE(b && f && d && x);
    ASSERT_EQ(b->bools.size(), 40u);
    ASSERT_EQ(f->f32.size(), 50u);
    ASSERT_EQ(d->f64.size(), 37u);
    ASSERT_EQ(x->bytes.size(), 50u);
    size_t bi = 0, di = 0;
    for (int i = 0; i < 50; ++i) {
        if (i % 5) {
            EXPECT_EQ(b->bools[bi++], i % 3 == 0) << i;
        }
        EXPECT_EQ(f->f32[static_cast<size_t>(i)], static_cast<float>(i) * 0.5f - 3);
        if (i % 4 != 1) {
            EXPECT_EQ(d->f64[di++], i * 1e10);
        }
        EXPECT_EQ(x->bytes[static_cast<size_t>(i)], (std::string{char(i), char(255 - i), 'z'}));
    }
    // Bounds as plain bytes.
    auto& cs = sum->columns;
    EXPECT_EQ(cs[0].min_value, std::string(1, '\0'));
    EXPECT_EQ(cs[0].max_value, std::string(1, '\1'));
    EXPECT_EQ(cs[0].null_count, 10);
    EXPECT_EQ(cs[1].min_value, f32_bytes(-3));
    EXPECT_EQ(cs[1].max_value, f32_bytes(21.5f));
    EXPECT_EQ(cs[2].min_value, f64_bytes(-0.0)); // the min is 0 (i = 0): written as -0.0
    EXPECT_EQ(cs[3].min_value, (std::string{char(0), char(255), 'z'}));
    EXPECT_EQ(cs[3].max_value, (std::string{char(49), char(206), 'z'}));
    // Schema read back.
    auto& cols = (*r)->file_schema().columns();
    EXPECT_EQ(cols[3].type, physical_type::fixed_len_byte_array);
    EXPECT_EQ(cols[3].type_length, 3);
}

namespace {

namespace tq = floe::parquet::testing;

struct typed_file {
    byte_buffer buf;
    file_summary summary;
    std::vector<tq::column_entries> written;
};

typed_file write_typed(const schema& sch, const std::vector<tq::tval>& rows, writer_options o) {
    typed_file f;
    auto w = file_writer::open(make_memory_sink(f.buf, "typed.parquet"), sch, o);
    EXPECT_TRUE(w) << w.error().to_string();
    if (!w) return f;
    tq::shredder sh(**w, sch);
    for (auto& r : rows) {
        auto ok = sh.write_row(r);
        EXPECT_TRUE(ok) << ok.error().to_string();
        if (!ok) return f;
    }
    auto s = (*w)->close();
    EXPECT_TRUE(s) << s.error().to_string();
    if (s) f.summary = *s;
    f.written = sh.log();
    return f;
}

/// Every column's entries over all row groups, as the reader decodes them.
std::vector<tq::column_entries> read_entries(file_reader& r) {
    auto& cols = r.file_schema().columns();
    std::vector<tq::column_entries> out(cols.size());
    for (size_t rg = 0; rg < r.num_row_groups(); ++rg)
        for (size_t c = 0; c < cols.size(); ++c) {
            auto d = r.read_column(rg, c);
            EXPECT_TRUE(d) << d.error().to_string();
            if (!d) continue;
            auto e = tq::entries_of(cols[c], *d);
            out[c].def.insert(out[c].def.end(), e.def.begin(), e.def.end());
            out[c].rep.insert(out[c].rep.end(), e.rep.begin(), e.rep.end());
            out[c].values.insert(out[c].values.end(), e.values.begin(), e.values.end());
        }
    return out;
}

schema one_leaf_schema(schema_node leaf) {
    auto s = schema::make(group_node("t", std::nullopt, repetition::required, {std::move(leaf)}));
    EXPECT_TRUE(s) << s.error().to_string();
    return *s;
}

} // namespace

TEST(parquet_typed, schema_helpers_and_footer_round_trip_every_logical_type) {
    auto sch = schema::make(tq::typed_schema_node());
    ASSERT_TRUE(sch) << sch.error().to_string();
    auto& cols = sch->columns();
    ASSERT_EQ(cols.size(), 25u);
    // decimal_node picks the physical type by precision.
    EXPECT_EQ(cols[4].type, physical_type::int32);
    EXPECT_EQ(cols[5].type, physical_type::int64);
    EXPECT_EQ(cols[6].type, physical_type::fixed_len_byte_array);
    EXPECT_EQ(cols[6].type_length, 16);
    EXPECT_EQ(decimal_fixed_length(19), 9);
    EXPECT_EQ(decimal_fixed_length(38), 16);
    EXPECT_EQ(decimal_fixed_length(39), 17);
    // map_node: attrs.key_value.{key,value}, key required, ids kept, levels.
    EXPECT_EQ(cols[21].dotted_path(), "attrs.key_value.key");
    EXPECT_EQ(cols[21].field_id, 27);
    EXPECT_EQ(cols[21].max_def, 2);
    EXPECT_EQ(cols[21].max_rep, 1);
    EXPECT_EQ(cols[24].dotted_path(), "attrs.key_value.value.on");
    EXPECT_EQ(cols[24].max_def, 3);
    EXPECT_EQ(cols[20].dotted_path(), "rec.items.list.element.tags.list.element");
    EXPECT_EQ(cols[20].max_def, 6);
    EXPECT_EQ(cols[20].max_rep, 2);

    // Through the footer's thrift and back.
    file_metadata m;
    m.schema = sch->to_elements();
    byte_buffer b;
    encode(m, b);
    auto back = decode_file_metadata(b);
    ASSERT_TRUE(back) << back.error().to_string();
    // Legacy ConvertedType and DECIMAL scale/precision are written beside the LogicalType.
    auto el = [&](std::string_view name) -> const schema_element& {
        for (auto& e : back->schema)
            if (e.name == name) return e;
        ADD_FAILURE() << name;
        return back->schema[0];
    };
    EXPECT_EQ(el("dec38").converted, static_cast<int32_t>(converted_type::decimal));
    EXPECT_EQ(el("dec38").scale, 10);
    EXPECT_EQ(el("dec38").precision, 38);
    EXPECT_EQ(el("dec38").type_length, 16);
    EXPECT_EQ(el("dec18").logical_precision, 18);
    EXPECT_EQ(el("dec18").logical_scale, 4);
    EXPECT_EQ(el("day").converted, static_cast<int32_t>(converted_type::date));
    EXPECT_EQ(el("tod").converted, static_cast<int32_t>(converted_type::time_micros));
    EXPECT_FALSE(el("tod").logical_utc);
    EXPECT_EQ(el("ts").converted, static_cast<int32_t>(converted_type::timestamp_micros));
    EXPECT_FALSE(el("ts").logical_utc);
    EXPECT_TRUE(el("tstz").logical_utc);
    EXPECT_EQ(el("uid").logical, logical_type::uuid);
    EXPECT_FALSE(el("uid").converted.has_value());
    EXPECT_EQ(el("kind").converted, static_cast<int32_t>(converted_type::enum_));
    EXPECT_EQ(el("doc").converted, static_cast<int32_t>(converted_type::json));
    EXPECT_EQ(el("attrs").converted, static_cast<int32_t>(converted_type::map));
    EXPECT_EQ(el("attrs").logical, logical_type::map);
    EXPECT_EQ(el("key_value").repetition_type, repetition::repeated);

    auto rs = schema::from_elements(back->schema);
    ASSERT_TRUE(rs) << rs.error().to_string();
    ASSERT_EQ(rs->columns().size(), cols.size());
    for (size_t i = 0; i < cols.size(); ++i) {
        auto& a = cols[i];
        auto& c = rs->columns()[i];
        EXPECT_EQ(c.dotted_path(), a.dotted_path());
        EXPECT_EQ(c.type, a.type) << a.dotted_path();
        EXPECT_EQ(c.type_length, a.type_length) << a.dotted_path();
        EXPECT_EQ(c.logical, a.logical) << a.dotted_path();
        EXPECT_EQ(c.precision, a.precision) << a.dotted_path();
        EXPECT_EQ(c.scale, a.scale) << a.dotted_path();
        EXPECT_EQ(c.utc, a.utc) << a.dotted_path();
        EXPECT_EQ(c.field_id, a.field_id) << a.dotted_path();
        EXPECT_EQ(c.max_def, a.max_def) << a.dotted_path();
        EXPECT_EQ(c.max_rep, a.max_rep) << a.dotted_path();
    }
    // Groups keep their logical types too.
    EXPECT_EQ(rs->root().children[18].logical, logical_type::map);
    EXPECT_EQ(rs->root().children[17].children[1].logical, logical_type::list);

    // Only the legacy ConvertedType (older writers): read as the same logical types.
    auto legacy = back->schema;
    for (auto& e : legacy)
        if (e.logical != logical_type::map && e.logical != logical_type::list) e.logical = logical_type::none;
    auto ls = schema::from_elements(legacy);
    ASSERT_TRUE(ls) << ls.error().to_string();
    EXPECT_EQ(ls->columns()[6].logical, logical_type::decimal);
    EXPECT_EQ(ls->columns()[6].precision, 38);
    EXPECT_EQ(ls->columns()[6].scale, 10);
    EXPECT_EQ(ls->columns()[9].logical, logical_type::timestamp_micros);
    EXPECT_TRUE(ls->columns()[9].utc); // legacy TIMESTAMP_MICROS means UTC-adjusted
    EXPECT_EQ(ls->columns()[12].logical, logical_type::enum_);

    // Mismatches are refused.
    using pt = physical_type;
    auto bad = [](schema_node leaf) {
        return !schema::make(group_node("t", std::nullopt, repetition::required, {std::move(leaf)}));
    };
    EXPECT_TRUE(bad(leaf_node("x", 1, repetition::required, pt::int64, logical_type::date)));
    EXPECT_TRUE(bad(fixed_node("x", 1, repetition::required, 8, logical_type::uuid)));
    EXPECT_TRUE(bad(fixed_node("x", 1, repetition::required, 0)));
    EXPECT_TRUE(bad(decimal_node("x", 1, repetition::required, 0, 0)));
    EXPECT_TRUE(bad(decimal_node("x", 1, repetition::required, 5, 6)));
    auto small = fixed_node("x", 1, repetition::required, 4, logical_type::decimal);
    small.precision = 10; // 4 bytes hold 9 digits
    EXPECT_TRUE(bad(small));
}

TEST(parquet_typed, nested_rows_of_every_type_round_trip) {
    auto sch = schema::make(tq::typed_schema_node());
    ASSERT_TRUE(sch);
    auto rows = tq::typed_rows(700);
    for (auto codec : {compression_codec::uncompressed, compression_codec::zstd}) {
        writer_options o;
        o.codec = codec;
        o.page_row_limit = 20;
        o.row_group_rows = 256;
        o.page_crc = true;
        auto f = write_typed(*sch, rows, o);
        ASSERT_EQ(f.summary.row_count, 700);
        ASSERT_GE(f.summary.metadata.row_groups.size(), 3u);
        auto r = file_reader::open(make_memory_source(f.buf, "typed.parquet"));
        ASSERT_TRUE(r) << r.error().to_string();
        auto got = read_entries(**r);
        ASSERT_EQ(got.size(), f.written.size());
        for (size_t c = 0; c < got.size(); ++c) {
            auto& d = sch->columns()[c];
            EXPECT_EQ(got[c].def, f.written[c].def) << d.dotted_path();
            EXPECT_EQ(got[c].rep, f.written[c].rep) << d.dotted_path();
            EXPECT_EQ(got[c].values, f.written[c].values) << d.dotted_path();
            // The summary counts what was written.
            auto& cs = f.summary.columns[c];
            EXPECT_EQ(cs.num_values, static_cast<int64_t>(f.written[c].def.size())) << d.dotted_path();
            int64_t nulls = 0;
            for (auto v : f.written[c].def)
                nulls += v != d.max_def;
            EXPECT_EQ(cs.null_count, nulls) << d.dotted_path();
            EXPECT_EQ(cs.type, d.type);
        }
        // Empty lists, null lists and null maps are there: some entries of the deepest column
        // sit at each level below the maximum.
        std::set<int16_t> defs(f.written[20].def.begin(), f.written[20].def.end());
        EXPECT_EQ(defs.size(), 7u); // 0..6
        std::set<int16_t> map_defs(f.written[24].def.begin(), f.written[24].def.end());
        EXPECT_EQ(map_defs.size(), 4u); // null map, empty map, null value, value
    }
}

TEST(parquet_typed, decimal_bounds_order_as_signed_numbers) {
    auto sch = schema::make(tq::typed_schema_node());
    ASSERT_TRUE(sch);
    auto rows = tq::typed_rows(200);
    writer_options o;
    o.page_row_limit = 20;
    auto f = write_typed(*sch, rows, o);
    // Brute force over the rows: min/max by value.
    for (size_t col : {size_t{4}, size_t{5}, size_t{6}}) {
        std::optional<__int128> mn, mx;
        for (auto& row : rows) {
            auto& v = row.items[col];
            if (v.is_null()) continue;
            __int128 x = col == 6 ? tq::decimal_value(v.s) : static_cast<__int128>(v.i);
            if (!mn || x < *mn) mn = x;
            if (!mx || x > *mx) mx = x;
        }
        auto& cs = f.summary.columns[col];
        ASSERT_TRUE(cs.min_value && cs.max_value);
        auto as_value = [&](const std::string& s) -> __int128 {
            if (col == 6) return tq::decimal_value(s);
            if (col == 4) {
                int32_t x;
                std::memcpy(&x, s.data(), 4);
                return x;
            }
            int64_t x;
            std::memcpy(&x, s.data(), 8);
            return x;
        };
        EXPECT_TRUE(as_value(*cs.min_value) == *mn) << col;
        EXPECT_TRUE(as_value(*cs.max_value) == *mx) << col;
        EXPECT_TRUE(*mn < 0 && *mx > 0);
    }
    // The reader prunes by those bounds in the same (signed) order.
    {
        auto rr = file_reader::open(make_memory_source(f.buf, "typed.parquet"));
        ASSERT_TRUE(rr);
        auto max38 = tq::pow10_i128(38) - 1;
        EXPECT_TRUE((*rr)->stats_may_contain(0, 6, tq::decimal_bytes(-5, 16)));
        EXPECT_TRUE((*rr)->stats_may_contain(0, 6, tq::decimal_bytes(-max38, 16)));
        EXPECT_FALSE((*rr)->stats_may_contain(0, 6, tq::decimal_bytes(-max38 - 1, 16)));
        EXPECT_FALSE((*rr)->stats_may_contain(0, 6, tq::decimal_bytes(max38 + 1, 16)));
        EXPECT_TRUE((*rr)->stats_may_contain(0, 6, std::string_view("short"))); // not 16 bytes
        int32_t lo = -1000000000, in = -5;
        EXPECT_FALSE((*rr)->stats_may_contain(0, 4, std::string_view(reinterpret_cast<const char*>(&lo), 4)));
        EXPECT_TRUE((*rr)->stats_may_contain(0, 4, std::string_view(reinterpret_cast<const char*>(&in), 4)));
        EXPECT_TRUE((*rr)->stats_may_contain(0, 4, int64_t{-5}));
        EXPECT_FALSE((*rr)->stats_may_contain(0, 4, int64_t{-1000000000}));
    }
    // dec38's extremes: -(10^38-1) and 10^38-1 (rows 2 and 1), as 16-byte big-endian.
    EXPECT_EQ(*f.summary.columns[6].min_value, tq::decimal_bytes(-(tq::pow10_i128(38) - 1), 16));
    EXPECT_EQ(*f.summary.columns[6].max_value, tq::decimal_bytes(tq::pow10_i128(38) - 1, 16));
    // Page bounds of the ColumnIndex too: each page's min/max against its rows.
    auto r = file_reader::open(make_memory_source(f.buf, "typed.parquet"));
    ASSERT_TRUE(r);
    auto ci = (*r)->chunk_column_index(0, 6);
    auto oi = (*r)->chunk_offset_index(0, 6);
    ASSERT_TRUE(ci && *ci && oi && *oi);
    auto& locs = (*oi)->page_locations;
    ASSERT_EQ(locs.size(), 10u);
    for (size_t p = 0; p < locs.size(); ++p) {
        auto r0 = static_cast<size_t>(locs[p].first_row_index);
        auto r1 = p + 1 < locs.size() ? static_cast<size_t>(locs[p + 1].first_row_index) : rows.size();
        std::optional<__int128> mn, mx;
        for (size_t i = r0; i < r1; ++i) {
            auto& v = rows[i].items[6];
            if (v.is_null()) continue;
            auto x = tq::decimal_value(v.s);
            if (!mn || x < *mn) mn = x;
            if (!mx || x > *mx) mx = x;
        }
        ASSERT_TRUE(mn);
        EXPECT_TRUE(tq::decimal_value((*ci)->min_values[p]) == *mn) << p;
        EXPECT_TRUE(tq::decimal_value((*ci)->max_values[p]) == *mx) << p;
    }
}

TEST(parquet_typed, float_bounds_leave_out_nan_and_write_signed_zeros) {
    for (bool dbl : {false, true}) {
        auto sch = one_leaf_schema(
            leaf_node("x", 1, repetition::optional, dbl ? physical_type::double_ : physical_type::float_));
        writer_options o;
        o.page_row_limit = 4;
        byte_buffer buf;
        auto w = file_writer::open(make_memory_sink(buf), sch, o);
        ASSERT_TRUE(w);
        const double nan = std::nan("");
        // Pages of 4 rows: [NaN 1 -2 null] [0 -0 0 null] [NaN NaN null null] [5 NaN inf -inf]
        std::vector<std::optional<double>> vals = {nan, 1,   -2,      std::nullopt, 0.0, -0.0, 0.0,
                                                   std::nullopt, nan, nan, std::nullopt, std::nullopt,
                                                   5,   nan, HUGE_VAL, -HUGE_VAL};
        for (auto& v : vals) {
            if (!v)
                (*w)->column(0).add_null(0);
            else if (dbl)
                (*w)->column(0).add_f64(*v);
            else
                (*w)->column(0).add_f32(static_cast<float>(*v));
            ASSERT_TRUE((*w)->end_row());
        }
        auto s = (*w)->close();
        ASSERT_TRUE(s) << s.error().to_string();
        auto bytes_of = [&](double v) { return dbl ? f64_bytes(v) : f32_bytes(static_cast<float>(v)); };
        auto& st = *s->metadata.row_groups[0].columns[0].meta_data->stats;
        EXPECT_EQ(st.nan_count, 4);
        EXPECT_EQ(st.null_count, 4);
        EXPECT_EQ(st.min_value, bytes_of(-HUGE_VAL));
        EXPECT_EQ(st.max_value, bytes_of(HUGE_VAL));
        EXPECT_EQ(s->columns[0].min_value, bytes_of(-HUGE_VAL));
        auto r = file_reader::open(make_memory_source(buf));
        ASSERT_TRUE(r);
        // A page of only NaN has no bounds: the chunk has an OffsetIndex but no ColumnIndex.
        auto oi = (*r)->chunk_offset_index(0, 0);
        ASSERT_TRUE(oi && *oi);
        EXPECT_EQ((*oi)->page_locations.size(), 4u);
        auto ci = (*r)->chunk_column_index(0, 0);
        ASSERT_TRUE(ci);
        EXPECT_EQ(*ci, nullptr);
        // Values, NaN included, read back bit for bit.
        auto d = (*r)->read_column(0, 0);
        ASSERT_TRUE(d);
        ASSERT_EQ(d->num_entries, 16);
        size_t vi = 0;
        for (auto& v : vals) {
            if (!v) continue;
            double got = dbl ? d->f64[vi] : d->f32[vi];
            ++vi;
            if (std::isnan(*v))
                EXPECT_TRUE(std::isnan(got));
            else {
                EXPECT_EQ(got, *v);
                EXPECT_EQ(std::signbit(got), std::signbit(*v));
            }
        }
    }
    // Without a NaN-only page: a ColumnIndex with page bounds, zeros signed, NaN counts.
    auto sch = one_leaf_schema(leaf_node("x", 1, repetition::required, physical_type::double_));
    writer_options o;
    o.page_row_limit = 3;
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), sch, o);
    ASSERT_TRUE(w);
    for (double v : {0.0, 0.0, 0.0, -0.0, -0.0, 3.0, std::nan(""), 5.0, 4.0}) {
        (*w)->column(0).add_f64(v);
        ASSERT_TRUE((*w)->end_row());
    }
    auto s = (*w)->close();
    ASSERT_TRUE(s);
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r);
    auto ci = (*r)->chunk_column_index(0, 0);
    ASSERT_TRUE(ci && *ci);
    auto& c = **ci;
    ASSERT_EQ(c.min_values.size(), 3u);
    EXPECT_EQ(c.min_values[0], f64_bytes(-0.0)); // a page of +0.0 only: min -0.0, max +0.0
    EXPECT_EQ(c.max_values[0], f64_bytes(0.0));
    EXPECT_EQ(c.min_values[1], f64_bytes(-0.0));
    EXPECT_EQ(c.max_values[1], f64_bytes(3.0));
    EXPECT_EQ(c.min_values[2], f64_bytes(4.0));
    EXPECT_EQ(c.max_values[2], f64_bytes(5.0));
    EXPECT_EQ(c.nan_counts, (std::vector<int64_t>{0, 0, 1}));
    EXPECT_EQ(c.order, boundary_order::ascending);
    EXPECT_EQ(s->metadata.row_groups[0].columns[0].meta_data->stats->nan_count, 1);
}

TEST(parquet_typed, fixed_bounds_are_unsigned_and_a_wrong_size_fails_the_file) {
    auto sch = one_leaf_schema(fixed_node("x", 1, repetition::optional, 3));
    writer_options o;
    o.page_row_limit = 2;
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), sch, o);
    ASSERT_TRUE(w);
    std::vector<std::string> vals = {std::string("\x80\x00\x01", 3), std::string("\x7f\xff\xff", 3),
                                     std::string("\xff\xff\xff", 3), std::string("\x00\x00\x00", 3)};
    for (auto& v : vals) {
        (*w)->column(0).add_fixed(v);
        ASSERT_TRUE((*w)->end_row());
    }
    auto s = (*w)->close();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->columns[0].min_value, vals[3]);
    EXPECT_EQ(s->columns[0].max_value, vals[2]);
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r);
    auto ci = (*r)->chunk_column_index(0, 0);
    ASSERT_TRUE(ci && *ci);
    EXPECT_EQ((*ci)->min_values[0], vals[1]);
    EXPECT_EQ((*ci)->max_values[0], vals[0]);
    EXPECT_EQ((*ci)->min_values[1], vals[3]);
    EXPECT_EQ((*ci)->max_values[1], vals[2]);
    auto d = (*r)->read_column(0, 0);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->bytes.size(), 4u);
    for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(d->bytes[i], vals[i]);

    // A value of the wrong size: close() reports it, naming the column.
    byte_buffer buf2;
    auto w2 = file_writer::open(make_memory_sink(buf2, "bad.parquet"), sch, o);
    ASSERT_TRUE(w2);
    (*w2)->column(0).add_fixed("abcd");
    ASSERT_TRUE((*w2)->end_row());
    auto bad = (*w2)->close();
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().to_string().find("fixed value of 4 bytes, the type has 3"), std::string::npos)
        << bad.error().to_string();
    EXPECT_NE(bad.error().to_string().find("bad.parquet"), std::string::npos);
}

TEST(parquet_typed, boolean_pages_and_bounds) {
    auto sch = one_leaf_schema(leaf_node("b", 1, repetition::optional, physical_type::boolean));
    writer_options o;
    o.page_row_limit = 10;
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), sch, o);
    ASSERT_TRUE(w);
    // Page 0: all false; page 1: all null; page 2: mixed (19 bits: not a multiple of 8).
    std::vector<std::optional<bool>> vals;
    for (int i = 0; i < 10; ++i)
        vals.push_back(false);
    for (int i = 0; i < 10; ++i)
        vals.push_back(std::nullopt);
    for (int i = 0; i < 10; ++i)
        vals.push_back(i % 3 != 1);
    for (auto& v : vals) {
        if (v)
            (*w)->column(0).add_bool(*v);
        else
            (*w)->column(0).add_null(0);
        ASSERT_TRUE((*w)->end_row());
    }
    auto s = (*w)->close();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->columns[0].min_value, std::string(1, '\0'));
    EXPECT_EQ(s->columns[0].max_value, std::string(1, '\1'));
    EXPECT_EQ(s->columns[0].null_count, 10);
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r);
    auto ci = (*r)->chunk_column_index(0, 0);
    ASSERT_TRUE(ci && *ci);
    EXPECT_EQ((*ci)->null_pages, (std::vector<bool>{false, true, false}));
    EXPECT_EQ((*ci)->min_values[0], std::string(1, '\0'));
    EXPECT_EQ((*ci)->max_values[0], std::string(1, '\0'));
    EXPECT_EQ((*ci)->max_values[2], std::string(1, '\1'));
    auto d = (*r)->read_column(0, 0);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->bools.size(), 20u);
    size_t vi = 0;
    for (auto& v : vals)
        if (v) {
            EXPECT_EQ(d->bools[vi++], *v);
        }
}

TEST(parquet_typed, bloom_filter_on_fixed_and_double_columns) {
    auto uid = fixed_node("uid", 1, repetition::required, 16, logical_type::uuid);
    uid.bloom_filter = true;
    auto sch = one_leaf_schema(uid);
    byte_buffer buf;
    auto w = file_writer::open(make_memory_sink(buf), sch);
    ASSERT_TRUE(w);
    std::mt19937_64 rng(3);
    std::vector<std::string> ids;
    for (int i = 0; i < 500; ++i) {
        std::string u(16, '\0');
        for (auto& c : u)
            c = static_cast<char>(rng());
        ids.push_back(u);
        (*w)->column(0).add_fixed(u);
        ASSERT_TRUE((*w)->end_row());
    }
    ASSERT_TRUE((*w)->close());
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r);
    for (auto& u : ids) {
        auto b = (*r)->bloom_may_contain(0, 0, u);
        ASSERT_TRUE(b);
        EXPECT_TRUE(*b);
    }
    int excluded = 0;
    for (int i = 0; i < 100; ++i) {
        auto b = (*r)->bloom_may_contain(0, 0, fmt::format("absent-uuid-{:04}", i));
        ASSERT_TRUE(b);
        excluded += !*b;
    }
    EXPECT_GE(excluded, 95);
}
