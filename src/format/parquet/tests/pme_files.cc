// Writes encrypted Parquet files in every mode for the checks that are not Floe's reader:
// tests/parquet/pme_check.py (an independent decryptor from the spec, Python `cryptography`)
// and tests/js/parquet/encrypted_duckdb.mjs (DuckDB). Besides the files: manifest.json (per
// file: keys by key_metadata as hex, AAD prefix to supply, what the checker must find) and,
// for the flat uniform file, the rows as Floe's own reader returns them (flat_rows.json).
//
// usage: pme_files OUT_DIR

#include "format/parquet/reader.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/writer.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace floe;
using namespace floe::parquet;
using nlohmann::json;

namespace {

std::string hex(std::string_view s) {
    static const char* d = "0123456789abcdef";
    std::string o;
    for (unsigned char c : s) {
        o.push_back(d[c >> 4]);
        o.push_back(d[c & 15]);
    }
    return o;
}

const std::string footer_key = "floe-footer-key-0123456789abcdef"; // 32 bytes
const std::string key_col = "floe-key-col-k16";                    // 16 bytes
const std::string value_col = "floe-value-column-key-24";          // 24 bytes

json keys_json() {
    return {{"footer", hex(footer_key)}, {"col-key", hex(key_col)}, {"col-value", hex(value_col)}};
}

int die(const error& e) {
    std::fprintf(stderr, "pme_files: %s\n", e.to_string().c_str());
    return 1;
}

/// DuckDB's profile: flat columns, one footer key, encrypted footer, AES_GCM_V1.
result<void> write_flat(const std::string& dir, json& manifest) {
    std::vector<schema_node> cols;
    cols.push_back(leaf_node("id", 1, repetition::required, physical_type::int64));
    cols.push_back(leaf_node("name", 2, repetition::optional, physical_type::byte_array,
                             logical_type::string));
    // No bloom filter: DuckDB 1.5 fails the tag of any column that has one (README).
    cols.push_back(leaf_node("score", 3, repetition::optional, physical_type::double_));
    cols.push_back(leaf_node("flag", 4, repetition::required, physical_type::boolean));
    cols.push_back(
        leaf_node("day", 5, repetition::required, physical_type::int32, logical_type::date));
    cols.push_back(leaf_node("city", 6, repetition::required, physical_type::byte_array,
                             logical_type::string)); // dictionary-encoded
    auto s = FLOE_TRY(schema::make(group_node("flat", std::nullopt, repetition::required, cols)));
    writer_options o;
    o.row_group_rows = 1000;
    o.page_row_limit = 300;
    // DuckDB 1.5 puts page ordinal 0 in the AAD of every data page: one page per chunk.
    o.single_page_chunks = true;
    // `name` (unique) outgrows this dictionary limit a few hundred rows into each chunk, which
    // then goes PLAIN; `city` keeps its dictionary: DuckDB reads both kinds of chunk.
    o.dictionary_size_limit = 4096;
    encryption_config e;
    e.footer_key = footer_key;
    e.footer_key_metadata = "footer";
    o.encryption = e;
    std::string path = dir + "/flat_uniform.parquet";
    auto w = FLOE_TRY(file_writer::open(FLOE_TRY(open_file_sink(path)), s, o));
    static const char* cities[] = {"Lisboa", "Porto", "Faro", "Braga", "Évora"};
    for (int64_t i = 0; i < 2500; ++i) {
        w->column(0).add_i64(i * 7 - 1000);
        if (i % 5 == 3)
            w->column(1).add_null(0);
        else
            w->column(1).add_bytes(fmt::format("name-{}-{}", i, std::string(i % 13, 'x')));
        if (i % 11 == 0)
            w->column(2).add_null(0);
        else
            w->column(2).add_f64(static_cast<double>(i) / 8.0);
        w->column(3).add_bool(i % 3 == 0);
        w->column(4).add_i32(static_cast<int32_t>(20000 + i % 400));
        w->column(5).add_bytes(cities[i % 5]);
        FLOE_TRY(w->end_row());
    }
    FLOE_TRY(w->close());
    // The rows as Floe's reader decrypts them: DuckDB must return the same.
    reader_options ro;
    ro.decryption = decryption_config{[](std::string_view meta) -> result<std::string> {
                                          if (meta != "footer")
                                              return fail(errc::not_found, "no key");
                                          return footer_key;
                                      },
                                      std::nullopt};
    auto r = FLOE_TRY(file_reader::open_file(path, ro));
    json rows = json::array();
    for (size_t rg = 0; rg < r->num_row_groups(); ++rg) {
        std::vector<column_data> c;
        for (size_t col = 0; col < 6; ++col)
            c.push_back(FLOE_TRY(r->read_column(rg, col)));
        size_t ni = 0, si = 0;
        for (int64_t i = 0; i < r->row_group_rows(rg); ++i) {
            json row;
            row["id"] = std::to_string(c[0].i64[i]);
            row["name"] = c[1].def[i] ? json(std::string(c[1].bytes[ni++])) : json(nullptr);
            row["score"] = c[2].def[i] ? json(c[2].f64[si++]) : json(nullptr);
            row["flag"] = c[3].bools[i] != 0;
            row["day"] = c[4].i32[i];
            row["city"] = std::string(c[5].bytes[i]);
            rows.push_back(row);
        }
    }
    std::ofstream(dir + "/flat_rows.json") << rows.dump();
    manifest.push_back({{"file", "flat_uniform.parquet"},
                        {"keys", keys_json()},
                        {"expect",
                         {{"footer", "encrypted"},
                          {"algorithm", "AES_GCM_V1"},
                          {"rows", 2500},
                          {"aad_file_unique_len", 8}}},
                        {"encrypted_columns", {"id", "name", "score", "flag", "day", "city"}},
                        {"plaintext_columns", json::array()},
                        {"modules", {"0", "2", "3", "4", "5", "6", "7"}}});
    return {};
}

result<void> write_message(const std::string& dir, const std::string& name, encryption_config e,
                           std::optional<std::string> supply_aad, json& manifest) {
    auto rows = testing::generate_rows(3000, {.seed = 11, .value_size = 80, .distinct_keys = 500});
    writer_options o;
    o.row_group_rows = 1200;
    o.page_row_limit = 400;
    o.encryption = e;
    std::string path = dir + "/" + name + ".parquet";
    FLOE_TRY(testing::write_rows(FLOE_TRY(open_file_sink(path)), rows, o));
    json enc = json::array(), plain = json::array();
    for (auto& c : message_schema().columns()) {
        bool is_enc = e.column_keys.empty() || e.column_keys.contains(c.dotted_path());
        (is_enc ? enc : plain).push_back(c.dotted_path());
    }
    json expect = {{"footer", e.encrypted_footer ? "encrypted" : "plaintext"},
                   {"algorithm",
                    e.algorithm == cipher_algorithm::aes_gcm_v1 ? "AES_GCM_V1" : "AES_GCM_CTR_V1"},
                   {"rows", rows.size()},
                   {"aad_prefix_stored", !e.aad_prefix.empty() && e.store_aad_prefix},
                   {"supply_aad_prefix", !e.aad_prefix.empty() && !e.store_aad_prefix},
                   {"aad_file_unique_len", 8}};
    if (!e.encrypted_footer) expect["signature"] = "verified";
    json modules = {"2", "3", "4", "5", "6", "7", "8", "9"};
    if (e.encrypted_footer) modules.push_back("0");
    if (!e.column_keys.empty() || !e.encrypted_footer) modules.push_back("1");
    json m = {{"file", name + ".parquet"}, {"keys", keys_json()},        {"expect", expect},
              {"encrypted_columns", enc},  {"plaintext_columns", plain}, {"modules", modules}};
    if (supply_aad) m["aad_prefix"] = *supply_aad;
    manifest.push_back(m);
    return {};
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: pme_files OUT_DIR\n");
        return 2;
    }
    std::string dir = argv[1];
    std::filesystem::create_directories(dir);
    json manifest = json::array();
    if (auto r = write_flat(dir, manifest); !r) return die(r.error());
    encryption_config u;
    u.footer_key = footer_key;
    u.footer_key_metadata = "footer";
    auto cols = u;
    cols.column_keys["key"] = {key_col, "col-key"};
    cols.column_keys["value"] = {value_col, "col-value"};
    auto cols_plain = cols;
    cols_plain.encrypted_footer = false;
    auto uniform_plain = u;
    uniform_plain.encrypted_footer = false;
    auto ctr = u;
    ctr.algorithm = cipher_algorithm::aes_gcm_ctr_v1;
    auto ctr_cols = cols_plain;
    ctr_cols.algorithm = cipher_algorithm::aes_gcm_ctr_v1;
    auto aad = cols;
    aad.aad_prefix = "orders/part-00042";
    auto aad_supplied = u;
    aad_supplied.aad_prefix = "orders/part-00043";
    aad_supplied.store_aad_prefix = false;
    struct m {
        const char* name;
        encryption_config cfg;
        std::optional<std::string> supply;
    };
    for (auto& [name, cfg, supply] :
         std::vector<m>{{"message_uniform", u, std::nullopt},
                        {"message_columns_encrypted_footer", cols, std::nullopt},
                        {"message_columns_plaintext_footer", cols_plain, std::nullopt},
                        {"message_uniform_plaintext_footer", uniform_plain, std::nullopt},
                        {"message_uniform_ctr", ctr, std::nullopt},
                        {"message_columns_plaintext_footer_ctr", ctr_cols, std::nullopt},
                        {"message_aad_prefix_stored", aad, std::nullopt},
                        {"message_aad_prefix_supplied", aad_supplied, "orders/part-00043"}})
        if (auto r = write_message(dir, name, cfg, supply, manifest); !r) return die(r.error());
    std::ofstream(dir + "/manifest.json") << manifest.dump(1);
    return 0;
}
