// Parquet Modular Encryption cost: Floe's message table written and read back (every column,
// message_reader) plaintext and encrypted in the same run: uniform AES_GCM_V1, uniform
// AES_GCM_CTR_V1, column keys on `key` and `value` (AES_GCM_V1, plaintext footer), and uniform
// AES_GCM_V1 in DuckDB's profile (one data page per column chunk, row groups of 131,072 rows:
// the layout the lake writes for `uniform` tables). In memory (no disk), default writer
// options otherwise (zstd, 1 MiB pages), one thread; each mode is run --repeat times and the
// best run is kept. Prints MB/s of file bytes and rows/s, and each mode's rows/s as a share of
// the plaintext one (a file of another size would make a share of MB/s unfair).
//
// usage: parquet_encryption_bench [--rows N] [--repeat N] [--value-size N]

#include "format/parquet/tests/message_rows.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace floe;
using namespace floe::parquet;

namespace {

struct mode {
    const char* name;
    std::optional<encryption_config> cfg;
    bool duckdb_profile = false;
};

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

int main(int argc, char** argv) {
    size_t rows_n = 400000, repeat = 5, value_size = 100;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        size_t v = std::stoull(argv[i + 1]);
        if (a == "--rows")
            rows_n = v;
        else if (a == "--repeat")
            repeat = v;
        else if (a == "--value-size")
            value_size = v;
    }
    auto rows = testing::generate_rows(rows_n, {.seed = 42, .value_size = value_size});
    encryption_config u;
    u.footer_key = std::string(32, 'F');
    u.footer_key_metadata = "footer";
    auto ctr = u;
    ctr.algorithm = cipher_algorithm::aes_gcm_ctr_v1;
    auto cols = u;
    cols.encrypted_footer = false;
    cols.column_keys["key"] = {std::string(32, 'K'), "key"};
    cols.column_keys["value"] = {std::string(32, 'V'), "value"};
    std::vector<mode> modes = {{"plaintext", std::nullopt},
                               {"uniform AES_GCM_V1", u},
                               {"uniform AES_GCM_CTR_V1", ctr},
                               {"columns key+value GCM", cols},
                               {"uniform GCM, DuckDB", u, true}};
    reader_options ro;
    ro.decryption = decryption_config{[](std::string_view meta) -> result<std::string> {
                                          if (meta == "footer") return std::string(32, 'F');
                                          if (meta == "key") return std::string(32, 'K');
                                          if (meta == "value") return std::string(32, 'V');
                                          return fail(errc::not_found, "no key");
                                      },
                                      std::nullopt};
    std::printf("parquet encryption: %zu rows (%zu B values), zstd, best of %zu, in memory\n",
                rows_n, value_size, repeat);
    std::printf("%-24s %10s %12s %12s %8s %12s %12s %8s\n", "mode", "file MB", "write MB/s",
                "write rows/s", "vs plain", "read MB/s", "read rows/s", "vs plain");
    double base_w = 0, base_r = 0;
    for (auto& m : modes) {
        double best_w = 1e9, best_r = 1e9;
        size_t size = 0;
        for (size_t r = 0; r < repeat; ++r) {
            writer_options o;
            o.encryption = m.cfg;
            if (m.duckdb_profile) {
                o.single_page_chunks = true;
                o.row_group_rows = 131072;
            }
            byte_buffer buf;
            buf.reserve(rows_n * (value_size + 120));
            double t0 = now();
            auto s = testing::write_rows(make_memory_sink(buf, "bench.parquet"), rows, o);
            double t1 = now();
            if (!s) {
                std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
                return 1;
            }
            size = buf.size();
            best_w = std::min(best_w, t1 - t0);
            auto rd = message_reader::open(make_memory_source(buf, "bench.parquet"), {}, ro);
            if (!rd) {
                std::fprintf(stderr, "%s\n", rd.error().to_string().c_str());
                return 1;
            }
            std::vector<message_record> out;
            out.reserve(rows_n);
            double t2 = now();
            for (;;) {
                auto more = rd->next_row_group(out);
                if (!more) {
                    std::fprintf(stderr, "%s\n", more.error().to_string().c_str());
                    return 1;
                }
                if (!*more) break;
            }
            double t3 = now();
            if (out.size() != rows_n) return 1;
            best_r = std::min(best_r, t3 - t2);
        }
        double mb = static_cast<double>(size) / 1e6;
        double wr = mb / best_w, rr = mb / best_r;
        if (!m.cfg) base_w = best_w, base_r = best_r;
        std::printf("%-24s %10.1f %12.1f %12.0f %7.0f%% %12.1f %12.0f %7.0f%%\n", m.name, mb, wr,
                    static_cast<double>(rows_n) / best_w, 100 * base_w / best_w, rr,
                    static_cast<double>(rows_n) / best_r, 100 * base_r / best_r);
    }
    return 0;
}
