// Parquet Modular Encryption: files written by Apache Arrow and parquet-mr (the shared
// fixtures) read by Floe's reader; Floe's encrypted files read back in every mode; the errors
// for missing and wrong keys, truncation, a flipped byte in any module and modules swapped
// between files or row groups.
#include "format/parquet/encryption.h"
#include "format/parquet/reader.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

using namespace floe;
using namespace floe::parquet;
namespace pqt = floe::parquet::testing;
namespace mc = floe::parquet::message_col;

namespace {

const std::string fixtures = FLOE_PME_FIXTURES;

key_retriever keys_of(std::map<std::string, std::string> keys) {
    return [keys = std::move(keys)](std::string_view meta) -> result<std::string> {
        auto it = keys.find(std::string(meta));
        if (it == keys.end()) return fail(errc::not_found, "unknown key '{}'", meta);
        return it->second;
    };
}

reader_options with_keys(std::map<std::string, std::string> keys,
                         std::optional<std::string> aad = std::nullopt) {
    reader_options o;
    o.decryption = decryption_config{keys_of(std::move(keys)), std::move(aad)};
    return o;
}

// ------------------------------------------------------------------ fixtures

const std::map<std::string, std::string> keys128 = {
    {"kf", "0123456789012345"}, {"kc1", "1234567890123450"}, {"kc2", "1234567890123451"}};

std::map<std::string, std::string> keys256() {
    std::map<std::string, std::string> k = {{"kf", "01234567890123456789012345678901"}};
    for (int i = 1; i <= 8; ++i)
        k[fmt::format("kc{}", i)] = fmt::format("123456789012345678901234567890{}", 11 + i);
    return k;
}

size_t column_of(const file_reader& r, std::string_view top) {
    const auto& cols = r.file_schema().columns();
    for (size_t i = 0; i < cols.size(); ++i)
        if (cols[i].path.front() == top) return i;
    ADD_FAILURE() << "no column " << top;
    return 0;
}

/// Reads every column of a fixture file and checks each value against the README's rows.
void check_fixture_rows(file_reader& r, bool skip_encrypted = false,
                        std::set<std::string> encrypted = {}) {
    ASSERT_EQ(r.num_row_groups(), 1u);
    const int64_t n = r.row_group_rows(0);
    ASSERT_EQ(n, 50);
    auto read = [&](std::string_view top) -> std::optional<column_data> {
        if (skip_encrypted && encrypted.contains(std::string(top))) {
            auto bad = r.read_column(0, column_of(r, top));
            EXPECT_FALSE(bad.has_value()) << top << " read without its key";
            if (!bad) {
                EXPECT_NE(bad.error().message().find(std::string(top)), std::string::npos);
            }
            return std::nullopt;
        }
        auto c = r.read_column(0, column_of(r, top));
        EXPECT_TRUE(c.has_value()) << top << ": " << (c ? "" : c.error().to_string());
        if (!c) return std::nullopt;
        return std::move(*c);
    };
    if (auto c = read("boolean_field")) {
        ASSERT_EQ(c->bools.size(), 50u);
        for (int i = 0; i < 50; ++i)
            EXPECT_EQ(c->bools[i], i % 2 == 0) << i;
    }
    if (auto c = read("int32_field")) {
        ASSERT_EQ(c->i32.size(), 50u);
        for (int i = 0; i < 50; ++i)
            EXPECT_EQ(c->i32[i], i);
    }
    if (auto c = read("int64_field")) {
        ASSERT_EQ(c->i64.size(), 100u);
        for (int i = 0; i < 100; ++i)
            EXPECT_EQ(c->i64[i], int64_t(i) * 1000000000000);
        ASSERT_EQ(c->rep.size(), 100u);
        for (int i = 0; i < 100; ++i)
            EXPECT_EQ(c->rep[i], i % 2) << i;
    }
    if (auto c = read("int96_field")) {
        ASSERT_EQ(c->bytes.size(), 50u);
        for (int i = 0; i < 50; ++i) {
            ASSERT_EQ(c->bytes[i].size(), 12u);
            int32_t v[3];
            std::memcpy(v, c->bytes[i].data(), 12);
            EXPECT_EQ(v[0], i);
            EXPECT_EQ(v[1], i + 1);
            EXPECT_EQ(v[2], i + 2);
        }
    }
    if (auto c = read("float_field")) {
        ASSERT_EQ(c->f32.size(), 50u);
        for (int i = 0; i < 50; ++i)
            EXPECT_EQ(c->f32[i], static_cast<float>(i) * 1.1f) << i;
    }
    if (auto c = read("double_field")) {
        ASSERT_EQ(c->f64.size(), 50u);
        for (int i = 0; i < 50; ++i)
            EXPECT_DOUBLE_EQ(c->f64[i], i * 1.1111111) << i;
    }
    if (auto c = read("ba_field")) {
        ASSERT_EQ(c->def.size(), 50u);
        ASSERT_EQ(c->bytes.size(), 25u);
        for (int i = 0; i < 50; ++i) {
            EXPECT_EQ(c->def[i], i % 2 == 0 ? 1 : 0) << i;
            if (i % 2 == 0) {
                EXPECT_EQ(c->bytes[i / 2], fmt::format("parquet{:03}", i));
            }
        }
    }
    if (auto c = read("flba_field")) {
        ASSERT_EQ(c->bytes.size(), 50u);
        for (int i = 0; i < 50; ++i)
            EXPECT_EQ(c->bytes[i], std::string(10, static_cast<char>(i))) << i;
    }
    // The page indexes decrypt and agree with the chunks.
    for (size_t col = 0; col < r.file_schema().columns().size(); ++col) {
        if (skip_encrypted && encrypted.contains(r.file_schema().columns()[col].path.front()))
            continue;
        auto oi = r.chunk_offset_index(0, col);
        ASSERT_TRUE(oi.has_value()) << oi.error().to_string();
        auto ci = r.chunk_column_index(0, col);
        ASSERT_TRUE(ci.has_value()) << ci.error().to_string();
        if (*oi) {
            auto pages = r.read_pages(0, col, 0, (*oi)->page_locations.size() - 1);
            ASSERT_TRUE(pages.has_value()) << pages.error().to_string();
        }
    }
}

struct fixture_case {
    std::string file;
    std::optional<std::string> aad;
    bool encrypted_footer = true;
};

class pme_fixtures : public ::testing::TestWithParam<fixture_case> {};

TEST_P(pme_fixtures, reads_every_value_with_the_keys) {
    const auto& fc = GetParam();
    bool aes256 = fc.file.starts_with("aes256/");
    auto path = fixtures + "/" + fc.file;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    auto r = file_reader::open_file(path, with_keys(aes256 ? keys256() : keys128, fc.aad));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    EXPECT_TRUE((*r)->encryption().encrypted);
    EXPECT_EQ((*r)->encryption().encrypted_footer, fc.encrypted_footer);
    if (!fc.encrypted_footer) EXPECT_TRUE((*r)->encryption().footer_signature_verified);
    EXPECT_EQ((*r)->encryption().algorithm, fc.file.find("_ctr") != std::string::npos
                                                ? cipher_algorithm::aes_gcm_ctr_v1
                                                : cipher_algorithm::aes_gcm_v1);
    check_fixture_rows(**r);
}

INSTANTIATE_TEST_SUITE_P(
    arrow_and_parquet_mr, pme_fixtures,
    ::testing::Values(fixture_case{"uniform_encryption.parquet.encrypted"},
                      fixture_case{"encrypt_columns_and_footer.parquet.encrypted"},
                      fixture_case{"encrypt_columns_and_footer_aad.parquet.encrypted"},
                      fixture_case{"encrypt_columns_and_footer_aad.parquet.encrypted", "tester"},
                      fixture_case{"encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
                                   "tester"},
                      fixture_case{"encrypt_columns_and_footer_ctr.parquet.encrypted"},
                      fixture_case{"encrypt_columns_plaintext_footer.parquet.encrypted",
                                   std::nullopt, false},
                      fixture_case{"aes256/uniform_encryption.parquet.encrypted"},
                      fixture_case{"aes256/encrypt_columns_and_footer.parquet.encrypted"},
                      fixture_case{"aes256/encrypt_columns_and_footer_ctr.parquet.encrypted"},
                      fixture_case{"aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
                                   "tester"},
                      fixture_case{"aes256/encrypt_columns_plaintext_footer.parquet.encrypted",
                                   std::nullopt, false}));

TEST(pme_fixture, bloom_filters_decrypt_and_answer) {
    auto r = file_reader::open_file(
        fixtures + "/encrypt_columns_and_footer_bloom_filter.parquet.encrypted", with_keys(keys128));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    auto& f = **r;
    ASSERT_EQ(f.metadata().num_rows, 2000);
    size_t blooms = 0, read = 0;
    for (size_t rg = 0; rg < f.num_row_groups(); ++rg)
        for (size_t col = 0; col < f.file_schema().columns().size(); ++col) {
            auto data = f.read_column(rg, col);
            ASSERT_TRUE(data.has_value()) << data.error().to_string();
            ++read;
            const auto& m = *f.metadata().row_groups[rg].columns[col].meta_data;
            if (!m.bloom_filter_offset) continue;
            ++blooms;
            // Every value present must be a bloom hit (no false negatives through decryption).
            std::vector<std::string> present;
            const auto& d = f.file_schema().columns()[col];
            for (auto v : data->i32)
                present.emplace_back(reinterpret_cast<const char*>(&v), 4);
            for (auto v : data->i64)
                present.emplace_back(reinterpret_cast<const char*>(&v), 8);
            for (auto v : data->f32)
                present.emplace_back(reinterpret_cast<const char*>(&v), 4);
            for (auto v : data->f64)
                present.emplace_back(reinterpret_cast<const char*>(&v), 8);
            for (auto v : data->bytes)
                present.emplace_back(v);
            ASSERT_FALSE(present.empty()) << d.dotted_path();
            for (auto& v : present) {
                auto hit = f.bloom_may_contain(rg, col, v);
                ASSERT_TRUE(hit.has_value()) << hit.error().to_string();
                EXPECT_TRUE(*hit) << d.dotted_path();
            }
        }
    EXPECT_GT(blooms, 0u);
    EXPECT_EQ(read, f.num_row_groups() * f.file_schema().columns().size());
}

TEST(pme_fixture, plaintext_footer_without_keys_reads_plaintext_columns) {
    for (std::string file : {"encrypt_columns_plaintext_footer.parquet.encrypted",
                             "aes256/encrypt_columns_plaintext_footer.parquet.encrypted"}) {
        SCOPED_TRACE(file);
        auto r = file_reader::open_file(fixtures + "/" + file);
        ASSERT_TRUE(r.has_value()) << r.error().to_string();
        EXPECT_FALSE((*r)->encryption().footer_signature_verified);
        std::set<std::string> enc;
        for (auto& c : (*r)->file_schema().columns())
            if ((*r)->metadata().row_groups[0].columns[&c - &(*r)->file_schema().columns()[0]]
                    .crypto_metadata)
                enc.insert(c.path.front());
        EXPECT_TRUE(enc.contains("double_field"));
        EXPECT_TRUE(enc.contains("float_field"));
        check_fixture_rows(**r, true, enc);
    }
}

TEST(pme_fixture, plaintext_footer_with_only_the_column_keys) {
    // Column keys but no footer key: the signature stays unchecked, every column reads.
    auto keys = keys128;
    keys.erase("kf");
    auto r = file_reader::open_file(fixtures + "/encrypt_columns_plaintext_footer.parquet.encrypted",
                                    with_keys(keys));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    EXPECT_FALSE((*r)->encryption().footer_signature_verified);
    check_fixture_rows(**r);
}

TEST(pme_fixture, errors_name_what_failed) {
    auto open = [](std::string file, reader_options o) {
        return file_reader::open_file(fixtures + "/" + file, std::move(o));
    };
    auto msg = [](const auto& r) { return r ? std::string("(opened)") : r.error().to_string(); };
    // No keys at all.
    auto r = open("uniform_encryption.parquet.encrypted", {});
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("encrypted"), std::string::npos) << msg(r);
    // A wrong footer key.
    auto bad = keys128;
    bad["kf"] = "0123456789012346";
    r = open("uniform_encryption.parquet.encrypted", with_keys(bad));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("footer cannot be decrypted"), std::string::npos) << msg(r);
    // An unknown key.
    r = open("uniform_encryption.parquet.encrypted", with_keys({{"other", "0123456789012345"}}));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("'kf'"), std::string::npos) << msg(r);
    // A wrong column key: its metadata does not decrypt.
    bad = keys128;
    bad["kc1"] = "0000000000000000";
    r = open("encrypt_columns_and_footer.parquet.encrypted", with_keys(bad));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("double_field"), std::string::npos) << msg(r);
    // A missing column key: the other columns read, that one names its key's error.
    auto partial = keys128;
    partial.erase("kc1");
    r = open("encrypt_columns_and_footer.parquet.encrypted", with_keys(partial));
    ASSERT_TRUE(r.has_value()) << msg(r);
    auto c = (*r)->read_column(0, column_of(**r, "double_field"));
    ASSERT_FALSE(c.has_value());
    EXPECT_NE(c.error().message().find("kc1"), std::string::npos) << c.error().to_string();
    EXPECT_TRUE((*r)->read_column(0, column_of(**r, "float_field")).has_value());
    // The AAD prefix: required and missing, or wrong.
    r = open("encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", with_keys(keys128));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("AAD prefix"), std::string::npos) << msg(r);
    r = open("encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
             with_keys(keys128, "tester2"));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("footer cannot be decrypted"), std::string::npos) << msg(r);
    r = open("encrypt_columns_and_footer_aad.parquet.encrypted", with_keys(keys128, "other"));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("differs"), std::string::npos) << msg(r);
    // A wrong footer key on a signed plaintext footer.
    bad = keys128;
    bad["kf"] = "0123456789012346";
    r = open("encrypt_columns_plaintext_footer.parquet.encrypted", with_keys(bad));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(msg(r).find("signature"), std::string::npos) << msg(r);
}

} // namespace
