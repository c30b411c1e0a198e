// Page index (ColumnIndex + OffsetIndex): what the writer stores, page reads through it, and
// the lookups that use it (find_by_key, read_offset_range) against the whole-row-group path.
#include "format/parquet/encoding.h"
#include "format/parquet/metadata.h"
#include "format/parquet/reader.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace floe;
using namespace floe::parquet;
namespace pqt = floe::parquet::testing;
namespace mc = floe::parquet::message_col;

namespace {

byte_buffer write_mem(const std::vector<message_record>& rows, writer_options opts = {}) {
    byte_buffer buf;
    auto s = pqt::write_rows(make_memory_sink(buf, "mem.parquet"), rows, opts);
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
    return buf;
}

reader_options with_index(bool on) {
    reader_options o;
    o.use_page_index = on;
    return o;
}

/// Generated rows with keys drawn from a small set (so keys repeat across row groups and
/// pages), some null keys, 0-3 headers per row.
std::vector<message_record> lookup_rows(size_t n, uint64_t seed) {
    auto rows = pqt::generate_rows(n, {.seed = seed, .value_size = 120});
    for (size_t i = 0; i < rows.size(); ++i) {
        if (i % 37 == 5)
            rows[i].key.reset();
        else
            rows[i].key = fmt::format("key-{:05}", (i * 7919) % 1500);
    }
    return rows;
}

writer_options small_pages() {
    writer_options o;
    o.row_group_size = 256 << 10;
    o.page_size = 8 << 10;
    o.page_row_limit = 300;
    o.codec = compression_codec::snappy;
    return o;
}

int64_t le64(const std::string& s) {
    int64_t v = 0;
    std::memcpy(&v, s.data(), 8);
    return v;
}

} // namespace

TEST(encoding, encode_levels_round_trips_runs_and_literals) {
    std::mt19937_64 rng(7);
    for (int width = 1; width <= 3; ++width) {
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<uint8_t> lv;
            size_t n = rng() % 3000;
            uint8_t max = static_cast<uint8_t>((1u << width) - 1);
            while (lv.size() < n) {
                uint8_t v = static_cast<uint8_t>(rng() % (max + 1u));
                size_t run = trial % 3 == 0 ? 1 + rng() % 3 : 1 + rng() % 40;
                for (size_t k = 0; k < run && lv.size() < n; ++k)
                    lv.push_back(v);
            }
            byte_buffer enc;
            encode_levels(lv.data(), lv.size(), width, enc);
            std::vector<uint32_t> back(lv.size());
            rle_decoder dec(enc, width);
            ASSERT_TRUE(dec.get(back.data(), back.size())) << width << " " << trial;
            for (size_t i = 0; i < lv.size(); ++i)
                ASSERT_EQ(back[i], lv[i]) << "width " << width << " at " << i;
        }
    }
    // All-equal pages take a few bytes: one RLE run.
    std::vector<uint8_t> same(20000, 1);
    byte_buffer enc;
    encode_levels(same.data(), same.size(), 1, enc);
    EXPECT_LE(enc.size(), 4u);
}

TEST(page_index, thrift_round_trip) {
    column_index ci;
    ci.null_pages = {false, true, false};
    ci.min_values = {"a", "", "c"};
    ci.max_values = {"b", "", "d"};
    ci.order = boundary_order::ascending;
    ci.null_counts = {0, 10, 2};
    byte_buffer b;
    encode(ci, b);
    auto back = decode_column_index(b);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(back->null_pages, ci.null_pages);
    EXPECT_EQ(back->min_values, ci.min_values);
    EXPECT_EQ(back->max_values, ci.max_values);
    EXPECT_EQ(back->order, ci.order);
    EXPECT_EQ(back->null_counts, ci.null_counts);

    offset_index oi;
    oi.page_locations = {{4, 100, 0}, {104, 50, 20}, {154, 70, 41}};
    b.clear();
    encode(oi, b);
    auto ob = decode_offset_index(b);
    ASSERT_TRUE(ob) << ob.error().to_string();
    ASSERT_EQ(ob->page_locations.size(), 3u);
    EXPECT_EQ(ob->page_locations[2].offset, 154);
    EXPECT_EQ(ob->page_locations[2].compressed_page_size, 70);
    EXPECT_EQ(ob->page_locations[2].first_row_index, 41);

    // Inconsistent lists and rows going backwards are refused.
    ci.max_values.pop_back();
    b.clear();
    encode(ci, b);
    EXPECT_FALSE(decode_column_index(b));
    oi.page_locations[2].first_row_index = 5;
    b.clear();
    encode(oi, b);
    EXPECT_FALSE(decode_offset_index(b));
}

TEST(page_index, written_for_every_chunk_and_matches_the_pages) {
    auto rows = lookup_rows(6000, 3);
    auto buf = write_mem(rows, small_pages());
    auto r = file_reader::open(make_memory_source(buf, "idx.parquet"));
    ASSERT_TRUE(r) << r.error().to_string();
    auto& f = **r;
    ASSERT_GE(f.num_row_groups(), 2u);
    int64_t rg_first = 0;
    size_t multi_page_headers = 0;
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg) {
        int64_t nrows = f.row_group_rows(rg);
        for (size_t c = 0; c < mc::count; ++c) {
            const auto& desc = f.file_schema().columns()[c];
            auto oi = f.chunk_offset_index(rg, c);
            auto ci = f.chunk_column_index(rg, c);
            ASSERT_TRUE(oi && *oi && ci && *ci) << rg << " " << c;
            const auto& locs = (*oi)->page_locations;
            const auto& idx = **ci;
            ASSERT_EQ(idx.null_pages.size(), locs.size());
            ASSERT_EQ(idx.null_counts.size(), locs.size());
            if (c == mc::header_key && locs.size() > 1) ++multi_page_headers;
            auto whole = f.read_column(rg, c);
            ASSERT_TRUE(whole);
            size_t entry = 0, value = 0;
            for (size_t p = 0; p < locs.size(); ++p) {
                auto d = f.read_pages(rg, c, p, p);
                ASSERT_TRUE(d) << d.error().to_string();
                EXPECT_EQ(d->first_row, locs[p].first_row_index);
                // Rows of the page: entries starting a row (repetition level 0).
                int64_t page_rows = desc.max_rep == 0 ? d->num_entries
                                                      : std::count(d->rep.begin(), d->rep.end(), 0);
                int64_t next = p + 1 < locs.size() ? locs[p + 1].first_row_index : nrows;
                EXPECT_EQ(page_rows, next - locs[p].first_row_index) << rg << " " << c << " " << p;
                // Null count, null page, bounds against the decoded page.
                int64_t nulls = desc.max_def == 0
                                    ? 0
                                    : std::count_if(d->def.begin(), d->def.end(),
                                                    [&](uint8_t x) { return x < desc.max_def; });
                EXPECT_EQ(idx.null_counts[p], nulls);
                size_t present = static_cast<size_t>(d->num_entries - nulls);
                EXPECT_EQ(idx.null_pages[p], present == 0);
                if (present > 0) {
                    if (desc.type == physical_type::int64) {
                        auto [mn, mx] = std::minmax_element(d->i64.begin(), d->i64.end());
                        EXPECT_EQ(le64(idx.min_values[p]), *mn);
                        EXPECT_EQ(le64(idx.max_values[p]), *mx);
                    } else if (desc.type == physical_type::byte_array) {
                        auto [mn, mx] = std::minmax_element(d->bytes.begin(), d->bytes.end());
                        EXPECT_TRUE(mn->starts_with(idx.min_values[p]));
                        EXPECT_GE(std::string_view(idx.max_values[p]), *mx);
                        EXPECT_LE(idx.min_values[p].size(), 64u);
                    }
                } else {
                    EXPECT_TRUE(idx.min_values[p].empty() && idx.max_values[p].empty());
                }
                // The same entries as the whole chunk at the same place.
                for (int64_t e = 0; e < d->num_entries; ++e, ++entry) {
                    if (desc.max_def > 0) {
                        ASSERT_EQ(d->def[e], whole->def[entry]);
                    }
                    if (desc.max_rep > 0) {
                        ASSERT_EQ(d->rep[e], whole->rep[entry]);
                    }
                }
                for (size_t v = 0; v < d->bytes.size(); ++v, ++value)
                    ASSERT_EQ(d->bytes[v], whole->bytes[value]);
                for (size_t v = 0; v < d->i64.size(); ++v, ++value)
                    ASSERT_EQ(d->i64[v], whole->i64[value]);
                for (size_t v = 0; v < d->i32.size(); ++v, ++value)
                    ASSERT_EQ(d->i32[v], whole->i32[value]);
            }
            EXPECT_EQ(static_cast<int64_t>(entry), whole->num_entries);
            // Several pages at once: the same entries as one page at a time.
            if (locs.size() >= 3) {
                auto d = f.read_pages(rg, c, 1, locs.size() - 1);
                ASSERT_TRUE(d);
                EXPECT_EQ(d->first_row, locs[1].first_row_index);
            }
            if (c == mc::offset) {
                EXPECT_EQ(idx.order, boundary_order::ascending);
                EXPECT_EQ(le64(idx.min_values[0]), rows[static_cast<size_t>(rg_first)].offset);
            }
            if (c == mc::stream_key) {
                EXPECT_EQ(idx.order, boundary_order::ascending);
            }
        }
        rg_first += nrows;
    }
    EXPECT_GT(multi_page_headers, 0u);
    // Out-of-range page numbers are refused.
    EXPECT_FALSE(f.read_pages(0, mc::offset, 2, 1));
    EXPECT_FALSE(f.read_pages(0, mc::offset, 0, 100000));
}

TEST(page_index, find_by_key_matches_the_whole_row_group_path) {
    auto rows = lookup_rows(6000, 11);
    for (bool index_written : {true, false}) {
        auto o = small_pages();
        o.page_index = index_written;
        auto buf = write_mem(rows, o);
        for (std::vector<size_t> proj :
             {std::vector<size_t>{}, std::vector<size_t>{mc::offset, mc::header_key},
              std::vector<size_t>{mc::value, mc::partition}}) {
            auto fast =
                message_reader::open(make_memory_source(buf, "k.parquet"), proj, with_index(true));
            auto slow =
                message_reader::open(make_memory_source(buf, "k.parquet"), proj, with_index(false));
            ASSERT_TRUE(fast && slow);
            size_t pages = 0;
            for (int k = 0; k < 1500; k += 53) {
                std::string key = fmt::format("key-{:05}", k);
                lookup_stats fs, ss;
                auto a = fast->find_by_key(key, &fs);
                auto b = slow->find_by_key(key, &ss);
                ASSERT_TRUE(a && b) << (a ? b.error().to_string() : a.error().to_string());
                ASSERT_FALSE(a->empty()) << key;
                ASSERT_EQ(*a, *b) << key;
                for (auto& r : *a)
                    EXPECT_EQ(r.key, key);
                pages += fs.pages_read;
            }
            for (std::string key : {"key-0", "key-99999", "zzz", "key-00001x", ""}) {
                auto a = fast->find_by_key(key);
                auto b = slow->find_by_key(key);
                ASSERT_TRUE(a && b);
                EXPECT_TRUE(a->empty() && b->empty()) << key;
            }
            if (index_written)
                EXPECT_GT(pages, 0u);
            else
                EXPECT_EQ(pages, 0u); // no index: whole chunks
        }
    }
}

TEST(page_index, find_by_key_reads_few_pages_and_checks_the_dictionary) {
    // Keys from a small set: the key chunk stays dictionary-encoded. A key inside the
    // min/max range that the bloom filter lets through is rejected by the dictionary alone.
    std::vector<message_record> rows = pqt::generate_rows(4000, {.seed = 5});
    for (size_t i = 0; i < rows.size(); ++i)
        rows[i].key = fmt::format("k{:03}", (i % 200) * 2);
    auto buf = write_mem(rows, small_pages());
    auto r = message_reader::open(make_memory_source(buf, "d.parquet"));
    ASSERT_TRUE(r);
    auto& f = r->file();
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg)
        ASSERT_TRUE(f.fully_dictionary_encoded(rg, mc::key));
    size_t dict_skips = 0, tried = 0;
    for (int i = 1; i < 400 && dict_skips < 3; i += 2) {
        std::string key = fmt::format("k{:03}", i);
        bool passes_bloom = false;
        for (size_t rg = 0; rg < f.num_row_groups(); ++rg)
            passes_bloom = passes_bloom || *f.bloom_may_contain(rg, mc::key, key);
        if (!passes_bloom) continue;
        ++tried;
        lookup_stats st;
        auto hits = r->find_by_key(key, &st);
        ASSERT_TRUE(hits);
        EXPECT_TRUE(hits->empty());
        EXPECT_EQ(st.read, 0u);
        dict_skips += st.skipped_by_dictionary;
    }
    if (tried > 0) {
        EXPECT_GT(dict_skips, 0u);
    }
    // A present key: in every row group, but only the pages holding it are read for the other
    // columns.
    lookup_stats st;
    auto hits = r->find_by_key("k010", &st);
    ASSERT_TRUE(hits);
    EXPECT_EQ(hits->size(), 20u);
    size_t total_pages = 0;
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg)
        for (size_t c = 0; c < mc::count; ++c)
            total_pages += (*f.chunk_offset_index(rg, c))->page_locations.size();
    EXPECT_LT(st.pages_read, total_pages);
    auto slow = message_reader::open(make_memory_source(buf, "d.parquet"), {}, with_index(false));
    ASSERT_TRUE(slow);
    EXPECT_EQ(*hits, *slow->find_by_key("k010"));
}

TEST(page_index, read_offset_range_matches_a_scan) {
    auto rows = lookup_rows(5000, 21);
    for (auto& r : rows)
        r.offset = 1000 + r.offset * 3; // gaps: from_offset can fall between rows
    for (bool index_written : {true, false}) {
        auto o = small_pages();
        o.page_index = index_written;
        auto buf = write_mem(rows, o);
        for (bool use : {true, false}) {
            auto r =
                message_reader::open(make_memory_source(buf, "o.parquet"), {}, with_index(use));
            ASSERT_TRUE(r);
            std::mt19937_64 rng(1);
            for (int t = 0; t < 60; ++t) {
                int64_t from = 900 + static_cast<int64_t>(rng() % 15300);
                size_t limit = t % 3 == 0 ? 1 : (t % 3 == 1 ? 7 : 700);
                std::vector<message_record> got;
                lookup_stats st;
                auto n = r->read_offset_range(from, limit, got, &st);
                ASSERT_TRUE(n) << n.error().to_string();
                std::vector<message_record> want;
                for (auto& x : rows)
                    if (x.offset >= from && want.size() < limit) want.push_back(x);
                ASSERT_EQ(*n, want.size());
                ASSERT_EQ(got, want) << "from " << from << " limit " << limit;
                if (use && index_written && limit == 1 && !want.empty()) {
                    EXPECT_LE(st.pages_read, 2u * mc::count); // a page or two per column
                }
            }
            std::vector<message_record> none;
            EXPECT_EQ(*r->read_offset_range(100000, 10, none), 0u);
            EXPECT_TRUE(none.empty());
        }
    }
}

TEST(page_index, projection_is_kept_and_offset_added) {
    auto rows = lookup_rows(2000, 8);
    auto buf = write_mem(rows, small_pages());
    auto r = message_reader::open(make_memory_source(buf, "p.parquet"), {mc::value});
    ASSERT_TRUE(r);
    std::vector<message_record> got;
    ASSERT_EQ(*r->read_offset_range(rows[1234].offset, 3, got), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(got[i].offset, rows[1234 + i].offset);
        EXPECT_EQ(got[i].value, rows[1234 + i].value);
        EXPECT_FALSE(got[i].key.has_value());
        EXPECT_TRUE(got[i].stream_key.empty());
    }
}

TEST(page_index, corrupt_index_is_an_error_naming_the_file) {
    auto rows = lookup_rows(3000, 4);
    auto buf = write_mem(rows, small_pages());
    auto meta = file_reader::open(make_memory_source(buf, "x.parquet"));
    ASSERT_TRUE(meta);
    auto cc = (*meta)->metadata().row_groups[0].columns[mc::key];
    ASSERT_TRUE(cc.offset_index_offset && cc.column_index_offset);
    {
        // Garbage in the key chunk's OffsetIndex.
        auto bad = buf;
        for (int32_t i = 0; i < *cc.offset_index_length; ++i)
            bad[static_cast<size_t>(*cc.offset_index_offset + i)] = 0xEE;
        auto r = message_reader::open(make_memory_source(bad, "corrupt.parquet"));
        ASSERT_TRUE(r);
        auto hits = r->find_by_key(*rows[10].key);
        ASSERT_FALSE(hits);
        EXPECT_NE(hits.error().to_string().find("corrupt.parquet"), std::string::npos)
            << hits.error().to_string();
        EXPECT_NE(hits.error().to_string().find("offset index"), std::string::npos)
            << hits.error().to_string();
        // The whole-row-group path does not read the index.
        auto slow =
            message_reader::open(make_memory_source(bad, "corrupt.parquet"), {}, with_index(false));
        ASSERT_TRUE(slow);
        EXPECT_TRUE(slow->find_by_key(*rows[10].key));
    }
    {
        // A page location moved outside its chunk: a well-formed index that lies.
        offset_index oi = **(*meta)->chunk_offset_index(0, mc::offset);
        oi.page_locations.back().offset = 1;
        byte_buffer enc;
        encode(oi, enc);
        auto ocs = (*meta)->metadata().row_groups[0].columns[mc::offset];
        if (enc.size() <= static_cast<size_t>(*ocs.offset_index_length)) {
            auto bad = buf;
            std::copy(enc.begin(), enc.end(), bad.begin() + *ocs.offset_index_offset);
            auto r = file_reader::open(make_memory_source(bad, "moved.parquet"));
            ASSERT_TRUE(r);
            auto e = (*r)->chunk_offset_index(0, mc::offset);
            ASSERT_FALSE(e);
            EXPECT_NE(e.error().to_string().find("moved.parquet"), std::string::npos);
        }
    }
    {
        // The key chunk's ColumnIndex with null_pages typed as a list of strings.
        auto bad = buf;
        auto& lh = bad[static_cast<size_t>(*cc.column_index_offset) + 1];
        lh = static_cast<uint8_t>((lh & 0xF0) | 0x08);
        auto r = file_reader::open(make_memory_source(bad, "ci.parquet"));
        ASSERT_TRUE(r);
        auto e = (*r)->chunk_column_index(0, mc::key);
        ASSERT_FALSE(e);
        EXPECT_NE(e.error().to_string().find("ci.parquet"), std::string::npos);
    }
}

TEST(page_index, files_without_an_index_have_none) {
    auto rows = lookup_rows(500, 2);
    auto o = small_pages();
    o.page_index = false;
    auto buf = write_mem(rows, o);
    auto r = file_reader::open(make_memory_source(buf, "n.parquet"));
    ASSERT_TRUE(r);
    EXPECT_EQ(*(*r)->chunk_offset_index(0, mc::key), nullptr);
    EXPECT_EQ(*(*r)->chunk_column_index(0, mc::key), nullptr);
    EXPECT_FALSE((*r)->read_pages(0, mc::key, 0, 0));
    // Same data pages as with the index: the index only adds bytes before the footer.
    auto with = write_mem(rows, small_pages());
    EXPECT_GT(with.size(), buf.size());
}
