// Writes the seed corpora of the Parquet fuzz targets (small files Floe writes with every codec,
// and the raw thrift/encoded pieces of them). Run by hand when the formats change:
//   parquet_fuzz_seeds src/format/parquet/fuzz/corpus
#include "format/parquet/encoding.h"
#include "format/parquet/fuzz/pme_fuzz_keys.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/tests/typed_rows.h"

#include <filesystem>
#include <fstream>

using namespace floe;
using namespace floe::parquet;

namespace {
void save(const std::filesystem::path& p, bytes_view b) {
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
}
} // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    std::filesystem::path root(argv[1]);
    auto file_dir = root / "parquet_file_fuzz", dec_dir = root / "parquet_decode_fuzz";
    std::filesystem::create_directories(file_dir);
    std::filesystem::create_directories(dec_dir);
    auto rows = testing::generate_rows(6, {.seed = 1, .value_size = 40});
    auto edge = testing::edge_rows(10);
    rows.push_back(edge[0]);
    rows.push_back(edge[4]);
    int n = 0;
    for (auto codec :
         {compression_codec::uncompressed, compression_codec::snappy, compression_codec::zstd,
          compression_codec::gzip, compression_codec::lz4_raw}) {
        writer_options o;
        o.codec = codec;
        o.page_crc = n % 2 == 0;
        o.row_group_size = 1; // a row group per 256 rows at most; here one
        byte_buffer buf;
        auto s = testing::write_rows(make_memory_sink(buf), rows, o);
        if (!s) return 1;
        save(file_dir / fmt::format("file-{}", to_string(codec)), buf);
        // footer and first page header for the decoder target
        uint32_t len;
        std::memcpy(&len, buf.data() + buf.size() - 8, 4);
        byte_buffer footer{0};
        footer.insert(footer.end(), buf.end() - 8 - len, buf.end() - 8);
        save(dec_dir / fmt::format("footer-{}", n), footer);
        byte_buffer page{1};
        page.insert(page.end(), buf.begin() + 4,
                    buf.begin() + std::min<long>(static_cast<long>(buf.size()), 64));
        save(dec_dir / fmt::format("page-{}", n), page);
        ++n;
    }
    {
        // Several pages per column chunk (page index with many locations, headers split).
        writer_options o;
        o.codec = compression_codec::snappy;
        o.page_row_limit = 2;
        byte_buffer buf;
        auto s = testing::write_rows(make_memory_sink(buf), rows, o);
        if (!s) return 1;
        save(file_dir / "file-pages", buf);
    }
    {
        // Every physical and logical type, nested (booleans, floats, fixed, decimals, maps).
        auto sch = schema::make(testing::typed_schema_node());
        if (!sch) return 1;
        writer_options o;
        o.codec = compression_codec::uncompressed;
        o.page_row_limit = 8;
        byte_buffer buf;
        auto w = file_writer::open(make_memory_sink(buf), *sch, o);
        if (!w) return 1;
        testing::shredder sh(**w, *sch);
        for (auto& r : testing::typed_rows(24))
            if (!sh.write_row(r)) return 1;
        if (!(*w)->close()) return 1;
        save(file_dir / "file-typed", buf);
    }
    {
        // Encrypted files (parquet_decrypt_fuzz): a leading byte, odd when the AAD prefix must
        // be supplied, then the file; every mode, small pages, two row groups.
        auto enc_dir = root / "parquet_decrypt_fuzz";
        std::filesystem::create_directories(enc_dir);
        encryption_config u;
        u.footer_key = fuzz_keys::footer;
        u.footer_key_metadata = "footer";
        auto cols = u;
        cols.column_keys["key"] = {fuzz_keys::key_col, "col-key"};
        cols.column_keys["value"] = {fuzz_keys::value_col, "col-value"};
        auto plain_footer = cols;
        plain_footer.encrypted_footer = false;
        auto ctr = u;
        ctr.algorithm = cipher_algorithm::aes_gcm_ctr_v1;
        auto aad = u;
        aad.aad_prefix = fuzz_keys::aad_prefix;
        aad.store_aad_prefix = false;
        struct seed {
            const char* name;
            encryption_config cfg;
        };
        for (auto& [name, cfg] : std::vector<seed>{{"uniform", u},
                                                   {"columns", cols},
                                                   {"plaintext-footer", plain_footer},
                                                   {"ctr", ctr},
                                                   {"aad-supplied", aad}}) {
            writer_options o;
            o.codec = compression_codec::snappy;
            o.page_row_limit = 3;
            o.row_group_rows = 16; // checked every 16 rows: one group here
            o.encryption = cfg;
            byte_buffer buf{static_cast<uint8_t>(cfg.store_aad_prefix ? 0 : 1)};
            auto s = testing::write_rows(make_memory_sink(buf), rows, o);
            if (!s) return 1;
            save(enc_dir / fmt::format("file-{}", name), buf);
        }
    }
    byte_buffer rle{3 | (3 << 3)};
    rle_encoder e(rle, 3);
    for (uint32_t i = 0; i < 100; ++i)
        e.put(i % 3 == 0 ? 5 : i % 8);
    e.finish();
    save(dec_dir / "rle", rle);
    byte_buffer delta{4};
    std::vector<int64_t> v = {5, 7, 9, INT64_MAX, -3, 0, 1, 2, 3};
    delta_binary_encode(v.data(), v.size(), delta);
    save(dec_dir / "delta", delta);
    return 0;
}
