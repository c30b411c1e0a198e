// Fuzz target: an encrypted Parquet file from untrusted bytes, read with the keys its seeds were
// written with (fuzz/pme_fuzz_keys.h): file crypto metadata, module lengths, the encrypted or
// signed footer, column metadata modules, every page header and page, page indexes, bloom
// filters, message rows and lookups. Then again without keys (plaintext-footer files: the
// plaintext columns) and with the column keys only. Nothing may crash, hang, leak or allocate
// without bound; errors are fine, wrong data is not possible past a GCM tag.
#include "format/parquet/fuzz/pme_fuzz_keys.h"
#include "format/parquet/reader.h"

#include <cstddef>
#include <cstdint>

using namespace floe::parquet;

namespace {
void read_all(floe::bytes_view in, reader_options opts) {
    auto r = file_reader::open(make_memory_source(in, "fuzz.parquet"), opts);
    if (!r) return;
    auto& f = **r;
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg)
        for (size_t c = 0; c < f.file_schema().columns().size(); ++c) {
            (void)f.read_column(rg, c);
            (void)f.stats_may_contain(rg, c, std::string_view("id-0000042"));
            (void)f.bloom_may_contain(rg, c, "id-0000042");
            (void)f.chunk_column_index(rg, c);
            (void)f.read_dictionary(rg, c);
            auto oi = f.chunk_offset_index(rg, c);
            if (oi && *oi && !(*oi)->page_locations.empty()) {
                size_t n = (*oi)->page_locations.size();
                (void)f.read_pages(rg, c, n - 1, n - 1);
                std::vector<int64_t> rows;
                (void)f.find_value_in_pages(rg, c, 0, n - 1, "id-0000042", rows);
            }
        }
    auto m = message_reader::open(make_memory_source(in, "fuzz.parquet"), {}, opts);
    if (m) {
        std::vector<message_record> rows;
        for (int i = 0; i < 16; ++i) {
            auto more = m->next_row_group(rows);
            if (!more || !*more) break;
        }
        (void)m->find_by_key("id-0000042");
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reader_options opts;
    opts.max_footer_size = 1u << 20;
    opts.max_page_size = 4u << 20;
    opts.max_page_values = 1u << 20;
    opts.max_chunk_values = 1u << 21;
    floe::bytes_view in(data, size);
    // The first byte picks the AAD prefix (some seeds store none): the rest is the file.
    if (size < 1) return 0;
    bool supply = data[0] & 1;
    in = in.subspan(1);
    opts.decryption = decryption_config{
        fuzz_keys::retrieve, supply ? std::optional(fuzz_keys::aad_prefix) : std::nullopt};
    read_all(in, opts);
    // Column keys only, the footer signature unchecked.
    opts.decryption->retriever = [](std::string_view meta) -> floe::result<std::string> {
        if (meta == "footer") return floe::fail(floe::errc::not_found, "withheld");
        return fuzz_keys::retrieve(meta);
    };
    opts.decryption->require_footer_signature = false;
    read_all(in, opts);
    opts.decryption.reset();
    read_all(in, opts);
    return 0;
}
