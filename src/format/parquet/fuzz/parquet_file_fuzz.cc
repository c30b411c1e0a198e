// Fuzz target: a whole Parquet file from untrusted bytes. Opens it (footer, schema), reads every
// column chunk of every row group (page headers, decompression, levels, values), probes the
// statistics, bloom filters and page indexes (ColumnIndex, OffsetIndex, page reads through
// them), and assembles Floe message rows and lookups (find_by_key, read_offset_range, with and
// without the page index) when the schema fits. Nothing may crash, hang, leak or allocate
// without bound; errors are fine.
#include "format/parquet/reader.h"

#include <cstddef>
#include <cstdint>

using namespace floe::parquet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reader_options opts;
    opts.max_footer_size = 1u << 20;
    opts.max_page_size = 4u << 20;
    opts.max_page_values = 1u << 20;
    opts.max_chunk_values = 1u << 21;
    floe::bytes_view in(data, size);
    auto r = file_reader::open(make_memory_source(in, "fuzz.parquet"), opts);
    if (!r) return 0;
    auto& f = **r;
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg) {
        for (size_t c = 0; c < f.file_schema().columns().size(); ++c) {
            (void)f.read_column(rg, c);
            (void)f.stats_may_contain(rg, c, std::string_view("id-0000042"));
            (void)f.stats_may_contain(rg, c, int64_t{42});
            (void)f.bloom_may_contain(rg, c, "id-0000042");
            // Page index reads and page reads through it.
            (void)f.chunk_column_index(rg, c);
            (void)f.read_dictionary(rg, c);
            (void)f.fully_dictionary_encoded(rg, c);
            auto oi = f.chunk_offset_index(rg, c);
            if (oi && *oi) {
                size_t n = (*oi)->page_locations.size();
                for (size_t p = 0; p < n && p < 64; ++p)
                    (void)f.read_pages(rg, c, p, p);
                if (n > 0) {
                    (void)f.read_pages(rg, c, 0, n - 1);
                    std::vector<int64_t> rows;
                    (void)f.find_value_in_pages(rg, c, 0, n - 1, "id-0000042", rows);
                }
            }
        }
    }
    auto m = message_reader::open(make_memory_source(in, "fuzz.parquet"), {}, opts);
    if (m) {
        std::vector<message_record> rows;
        for (int i = 0; i < 64; ++i) {
            auto more = m->next_row_group(rows);
            if (!more || !*more) break;
        }
        (void)m->find_by_key("id-0000042");
        rows.clear();
        (void)m->read_offset_range(42, 3, rows);
    }
    // The same lookups without the page index (whole row groups).
    opts.use_page_index = false;
    auto w = message_reader::open(make_memory_source(in, "fuzz.parquet"), {}, opts);
    if (w) {
        (void)w->find_by_key("id-0000042");
        std::vector<message_record> rows;
        (void)w->read_offset_range(42, 3, rows);
    }
    return 0;
}
