// Parquet Modular Encryption: files written by Apache Arrow and parquet-mr (the shared
// fixtures) read by Floe's reader; Floe's encrypted files read back in every mode; the errors
// for missing and wrong keys, truncation, a flipped byte in any module and modules swapped
// between files or row groups.
#include "format/parquet/encryption.h"
#include "format/parquet/reader.h"
#include "format/parquet/tests/message_rows.h"
#include "format/parquet/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
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
                         std::optional<std::string> aad = std::nullopt,
                         bool require_footer_signature = true) {
    reader_options o;
    o.decryption =
        decryption_config{keys_of(std::move(keys)), std::move(aad), require_footer_signature};
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
    if (!fc.encrypted_footer) {
        EXPECT_TRUE((*r)->encryption().footer_signature_verified);
    }
    EXPECT_EQ((*r)->encryption().algorithm, fc.file.find("_ctr") != std::string::npos
                                                ? cipher_algorithm::aes_gcm_ctr_v1
                                                : cipher_algorithm::aes_gcm_v1);
    check_fixture_rows(**r);
}

INSTANTIATE_TEST_SUITE_P(
    arrow_and_parquet_mr, pme_fixtures,
    ::testing::Values(
        fixture_case{"uniform_encryption.parquet.encrypted"},
        fixture_case{"encrypt_columns_and_footer.parquet.encrypted"},
        fixture_case{"encrypt_columns_and_footer_aad.parquet.encrypted"},
        fixture_case{"encrypt_columns_and_footer_aad.parquet.encrypted", "tester"},
        fixture_case{"encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", "tester"},
        fixture_case{"encrypt_columns_and_footer_ctr.parquet.encrypted"},
        fixture_case{"encrypt_columns_plaintext_footer.parquet.encrypted", std::nullopt, false},
        fixture_case{"aes256/uniform_encryption.parquet.encrypted"},
        fixture_case{"aes256/encrypt_columns_and_footer.parquet.encrypted"},
        fixture_case{"aes256/encrypt_columns_and_footer_ctr.parquet.encrypted"},
        fixture_case{"aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
                     "tester"},
        fixture_case{"aes256/encrypt_columns_plaintext_footer.parquet.encrypted", std::nullopt,
                     false}));

TEST(pme_fixture, bloom_filters_decrypt_and_answer) {
    auto r = file_reader::open_file(
        fixtures + "/encrypt_columns_and_footer_bloom_filter.parquet.encrypted",
        with_keys(keys128));
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
            if ((*r)->metadata()
                    .row_groups[0]
                    .columns[&c - &(*r)->file_schema().columns()[0]]
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
    auto path = fixtures + "/encrypt_columns_plaintext_footer.parquet.encrypted";
    auto r = file_reader::open_file(path, with_keys(keys));
    ASSERT_FALSE(r.has_value()); // the signature is required by default
    EXPECT_NE(r.error().message().find("signature cannot be checked"), std::string::npos);
    r = file_reader::open_file(path, with_keys(keys, std::nullopt, false));
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
    r = open("encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
             with_keys(keys128));
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

// ------------------------------------------------------------------ Floe's files

const std::string kfooter(32, 'F');
const std::string kkey = "0123456789abcdef"; // 128-bit
const std::string kvalue(24, 'V');           // 192-bit
const std::map<std::string, std::string> floe_keys = {
    {"footer-v1", kfooter}, {"key-v1", kkey}, {"value-v1", kvalue}};

encryption_config uniform(cipher_algorithm a = cipher_algorithm::aes_gcm_v1) {
    encryption_config c;
    c.algorithm = a;
    c.footer_key = kfooter;
    c.footer_key_metadata = "footer-v1";
    return c;
}

encryption_config by_column(bool encrypted_footer) {
    auto c = uniform();
    c.encrypted_footer = encrypted_footer;
    c.column_keys["key"] = {kkey, "key-v1"};
    c.column_keys["value"] = {kvalue, "value-v1"};
    return c;
}

writer_options small_pages(std::optional<encryption_config> enc, size_t rg_rows = 400) {
    writer_options o;
    o.row_group_rows = rg_rows;
    o.page_row_limit = 64;
    o.encryption = std::move(enc);
    return o;
}

std::vector<message_record> sample_rows(size_t n, uint64_t seed = 7) {
    return pqt::generate_rows(n, {.seed = seed, .value_size = 60, .distinct_keys = 300});
}

byte_buffer write_mem(const std::vector<message_record>& rows, writer_options o) {
    byte_buffer buf;
    auto s = pqt::write_rows(make_memory_sink(buf, "enc.parquet"), rows, std::move(o));
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
    return buf;
}

result<std::vector<message_record>> read_all(bytes_view file, reader_options o,
                                             std::vector<size_t> proj = {}) {
    auto r = FLOE_TRY(message_reader::open(make_memory_source(file, "enc.parquet"), proj, o));
    std::vector<message_record> out;
    while (FLOE_TRY(r.next_row_group(out))) {
    }
    return out;
}

struct mode_case {
    std::string name;
    encryption_config cfg;
    std::optional<std::string> reader_aad;
};

std::vector<mode_case> modes() {
    std::vector<mode_case> m;
    m.push_back({"uniform_gcm", uniform(), std::nullopt});
    m.push_back({"uniform_ctr", uniform(cipher_algorithm::aes_gcm_ctr_v1), std::nullopt});
    m.push_back({"columns_encrypted_footer", by_column(true), std::nullopt});
    m.push_back({"columns_plaintext_footer", by_column(false), std::nullopt});
    auto up = uniform();
    up.encrypted_footer = false;
    m.push_back({"uniform_plaintext_footer", up, std::nullopt});
    auto a = uniform();
    a.aad_prefix = "orders/part-00001";
    m.push_back({"aad_prefix_stored", a, std::nullopt});
    a.store_aad_prefix = false;
    m.push_back({"aad_prefix_supplied", a, "orders/part-00001"});
    auto k16 = uniform();
    k16.footer_key = kkey;
    m.push_back({"key_128", k16, std::nullopt});
    return m;
}

TEST(pme_floe, every_mode_round_trips_and_lookups_match_the_plaintext_file) {
    auto rows = sample_rows(1500);
    auto plain = write_mem(rows, small_pages(std::nullopt));
    auto pr = message_reader::open(make_memory_source(plain, "plain.parquet"));
    ASSERT_TRUE(pr.has_value());
    for (auto& mc_ : modes()) {
        SCOPED_TRACE(mc_.name);
        auto keys = floe_keys;
        if (mc_.name == "key_128") keys["footer-v1"] = kkey;
        auto buf = write_mem(rows, small_pages(mc_.cfg));
        EXPECT_EQ(std::memcmp(buf.data(), mc_.cfg.encrypted_footer ? "PARE" : "PAR1", 4), 0);
        auto got = read_all(buf, with_keys(keys, mc_.reader_aad));
        ASSERT_TRUE(got.has_value()) << got.error().to_string();
        ASSERT_EQ(got->size(), rows.size());
        EXPECT_TRUE(*got == rows);
        // Lookups use the (encrypted) page index, dictionaries and bloom filters.
        auto er = message_reader::open(make_memory_source(buf, "enc.parquet"), {},
                                       with_keys(keys, mc_.reader_aad));
        ASSERT_TRUE(er.has_value()) << er.error().to_string();
        for (size_t i = 0; i < rows.size(); i += 97) {
            if (!rows[i].key) continue;
            lookup_stats es, ps;
            auto a = er->find_by_key(*rows[i].key, &es);
            auto b = pr->find_by_key(*rows[i].key, &ps);
            ASSERT_TRUE(a.has_value()) << a.error().to_string();
            ASSERT_TRUE(b.has_value());
            EXPECT_TRUE(*a == *b) << *rows[i].key;
            EXPECT_EQ(es.skipped_by_bloom, ps.skipped_by_bloom);
            EXPECT_EQ(es.pages_read, ps.pages_read);
        }
        EXPECT_TRUE(er->find_by_key("no-such-key").has_value());
        std::vector<message_record> a, b;
        ASSERT_TRUE(er->read_offset_range(700, 50, a).has_value());
        ASSERT_TRUE(pr->read_offset_range(700, 50, b).has_value());
        EXPECT_TRUE(a == b);
        EXPECT_EQ(a.size(), 50u);
    }
}

TEST(pme_floe, plaintext_footer_file_reads_its_plaintext_columns_without_keys) {
    auto rows = sample_rows(300);
    auto buf = write_mem(rows, small_pages(by_column(false)));
    // Without keys: the plaintext columns, as a legacy reader would.
    std::vector<size_t> proj = {mc::stream_key, mc::offset, mc::message_id, mc::header_key};
    auto got = read_all(buf, {}, proj);
    ASSERT_TRUE(got.has_value()) << got.error().to_string();
    ASSERT_EQ(got->size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ((*got)[i].offset, rows[i].offset);
        EXPECT_EQ((*got)[i].message_id, rows[i].message_id);
        EXPECT_EQ((*got)[i].headers, rows[i].headers);
        EXPECT_FALSE((*got)[i].key.has_value());
    }
    // The encrypted columns name themselves and the missing keys.
    auto bad = read_all(buf, {}, {mc::offset, mc::value});
    ASSERT_FALSE(bad.has_value());
    EXPECT_NE(bad.error().message().find("column value"), std::string::npos)
        << bad.error().to_string();
    // Statistics of encrypted columns are not in the plaintext footer.
    auto r = file_reader::open(make_memory_source(buf));
    ASSERT_TRUE(r.has_value());
    const auto& cc = (*r)->metadata().row_groups[0].columns[mc::key];
    ASSERT_TRUE(cc.meta_data.has_value());
    EXPECT_FALSE(cc.meta_data->stats.has_value());
    EXPECT_TRUE(cc.encrypted_column_metadata.has_value());
    EXPECT_FALSE((*r)->encryption().footer_signature_verified);
    EXPECT_TRUE((*r)->metadata().row_groups[0].columns[mc::offset].meta_data->stats.has_value());
    // Only the column keys: all columns, the signature unchecked.
    auto only_columns = floe_keys;
    only_columns.erase("footer-v1");
    EXPECT_FALSE(read_all(buf, with_keys(only_columns)).has_value()); // signature required
    got = read_all(buf, with_keys(only_columns, std::nullopt, false));
    ASSERT_TRUE(got.has_value()) << got.error().to_string();
    EXPECT_TRUE(*got == rows);
    {
        // Without the footer key, a changed byte of a column's encrypted metadata is caught
        // when that metadata is decrypted.
        auto r0 = file_reader::open(make_memory_source(buf));
        ASSERT_TRUE(r0.has_value());
        const auto& em =
            *(*r0)->metadata().row_groups[0].columns[mc::value].encrypted_column_metadata;
        auto emb = as_bytes(std::string_view(em));
        auto it = std::search(buf.begin(), buf.end(), emb.begin(), emb.end());
        ASSERT_NE(it, buf.end());
        auto copy = buf;
        copy[static_cast<size_t>(it - buf.begin()) + em.size() / 2] ^= 1;
        auto t = file_reader::open(make_memory_source(copy),
                                   with_keys(only_columns, std::nullopt, false));
        ASSERT_FALSE(t.has_value());
        EXPECT_NE(t.error().message().find("column value: column metadata cannot be decrypted"),
                  std::string::npos)
            << t.error().to_string();
    }
    // With the footer key the signature is checked, and a changed footer byte is caught.
    r = file_reader::open(make_memory_source(buf), with_keys(floe_keys));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    EXPECT_TRUE((*r)->encryption().footer_signature_verified);
    uint32_t flen;
    std::memcpy(&flen, buf.data() + buf.size() - 8, 4);
    size_t footer_at = buf.size() - 8 - flen;
    size_t changed = 0;
    for (size_t at = footer_at; at < buf.size() - 8; at += 7) {
        auto copy = buf;
        copy[at] ^= 0x20;
        auto t = file_reader::open(make_memory_source(copy), with_keys(floe_keys));
        if (!t) {
            ++changed;
            continue;
        }
        ADD_FAILURE() << "footer byte " << at - footer_at << " of " << flen << " changed unnoticed";
    }
    EXPECT_GT(changed, 10u);
}

TEST(pme_floe, writer_refuses_bad_configs) {
    byte_buffer buf;
    auto c = uniform();
    c.footer_key = "short";
    auto w = message_writer::open(make_memory_sink(buf), small_pages(c));
    ASSERT_FALSE(w.has_value());
    EXPECT_NE(w.error().message().find("footer key"), std::string::npos);
    c = by_column(true);
    c.column_keys["vaule"] = {kkey, "x"};
    w = message_writer::open(make_memory_sink(buf), small_pages(c));
    ASSERT_FALSE(w.has_value());
    EXPECT_NE(w.error().message().find("vaule"), std::string::npos);
    c = by_column(true);
    c.column_keys["key"].key = std::string(20, 'x');
    w = message_writer::open(make_memory_sink(buf), small_pages(c));
    ASSERT_FALSE(w.has_value());
    EXPECT_NE(w.error().message().find("column key"), std::string::npos);
}

/// Opens and reads every module of a file: footer, every chunk, page indexes, bloom filters.
result<void> read_everything(bytes_view file, reader_options o) {
    auto r = FLOE_TRY(file_reader::open(make_memory_source(file, "t.parquet"), o));
    for (size_t rg = 0; rg < r->num_row_groups(); ++rg)
        for (size_t col = 0; col < r->file_schema().columns().size(); ++col) {
            FLOE_TRY(r->read_column(rg, col));
            auto oi = FLOE_TRY(r->chunk_offset_index(rg, col));
            FLOE_TRY(r->chunk_column_index(rg, col));
            if (oi) FLOE_TRY(r->read_pages(rg, col, 0, oi->page_locations.size() - 1));
            FLOE_TRY(r->read_dictionary(rg, col));
            FLOE_TRY(r->bloom_may_contain(rg, col, "k"));
        }
    return {};
}

TEST(pme_floe, every_flipped_byte_and_every_truncation_is_an_error) {
    auto rows = pqt::generate_rows(24, {.seed = 3, .value_size = 16, .distinct_keys = 30});
    for (auto& mc_ : modes()) {
        if (mc_.cfg.algorithm == cipher_algorithm::aes_gcm_ctr_v1) continue; // CTR pages: no tag
        // Plaintext columns are not authenticated: only files where every module is GCM.
        if (!mc_.cfg.column_keys.empty()) continue;
        if (mc_.name == "key_128") continue;
        SCOPED_TRACE(mc_.name);
        auto o8 = small_pages(mc_.cfg, 24);
        o8.page_row_limit = 8;
        auto buf = write_mem(rows, o8);
        // Every byte of the uniform file; every 3rd of the others (same layout, other AADs).
        size_t step = mc_.name == "uniform_gcm" ? 1 : 7;
        auto o = with_keys(floe_keys, mc_.reader_aad);
        ASSERT_TRUE(read_everything(buf, o).has_value());
        std::set<std::string> kinds;
        size_t errors = 0;
        for (size_t at = 0; at < buf.size(); at += step) {
            auto copy = buf;
            copy[at] ^= 0x01;
            auto r = read_everything(copy, o);
            if (r) {
                ADD_FAILURE() << "flipped byte " << at << " of " << buf.size() << " unnoticed";
                continue;
            }
            ++errors;
            for (int t = 0; t <= 9; ++t) {
                auto k = std::string(to_string(static_cast<module_type>(t)));
                if (r.error().message().find(k) != std::string::npos) kinds.insert(k);
            }
        }
        EXPECT_EQ(errors, (buf.size() + step - 1) / step);
        if (mc_.name == "uniform_gcm") {
            // The errors name every kind of module (column metadata modules exist only with
            // column keys: see the plaintext footer test).
            for (int t = 0; t <= 9; ++t) {
                if (t != 1) {
                    EXPECT_TRUE(kinds.contains(std::string(to_string(module_type(t))))) << t;
                }
            }
        }
        // Truncations: every 5th length, and every one near the end (footer, lengths, magic).
        for (size_t len = 0; len < buf.size(); len += len + 64 < buf.size() ? 5 : 1) {
            bytes_view cut(buf.data(), len);
            EXPECT_FALSE(read_everything(cut, o).has_value()) << "truncated to " << len;
        }
    }
}

TEST(pme_floe, wrong_keys_and_prefixes_name_what_failed) {
    auto rows = sample_rows(100);
    auto buf = write_mem(rows, small_pages(by_column(true)));
    auto wrong = floe_keys;
    wrong["footer-v1"] = std::string(32, 'G');
    auto r = read_everything(buf, with_keys(wrong));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("footer cannot be decrypted"), std::string::npos)
        << r.error().to_string();
    wrong = floe_keys;
    wrong["value-v1"] = std::string(24, 'W');
    r = read_everything(buf, with_keys(wrong));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("column value: column metadata cannot be decrypted"),
              std::string::npos)
        << r.error().to_string();
    r = read_everything(buf, {});
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("no decryption keys"), std::string::npos);
    auto missing = floe_keys;
    missing.erase("key-v1");
    auto got = read_all(buf, with_keys(missing), {mc::offset, mc::value});
    ASSERT_TRUE(got.has_value()) << got.error().to_string();
    got = read_all(buf, with_keys(missing), {mc::offset, mc::key});
    ASSERT_FALSE(got.has_value());
    EXPECT_NE(got.error().message().find("key-v1"), std::string::npos) << got.error().to_string();
    // A prefix the writer did not store must be supplied, and be the right one.
    auto cfg = uniform();
    cfg.aad_prefix = "orders/part-1";
    cfg.store_aad_prefix = false;
    buf = write_mem(rows, small_pages(cfg));
    r = read_everything(buf, with_keys(floe_keys));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("AAD prefix"), std::string::npos);
    r = read_everything(buf, with_keys(floe_keys, "orders/part-2"));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("footer cannot be decrypted"), std::string::npos);
    EXPECT_TRUE(read_everything(buf, with_keys(floe_keys, "orders/part-1")).has_value());
}

/// The header and page modules of data page `p` of a chunk: [offset, size) in the file.
// DuckDB's layout (one data page per chunk): a byte-array chunk keeps its dictionary while it
// pays and otherwise turns PLAIN, mid-chunk, with the values, levels and bounds of the rows
// already added; plaintext and encrypted files alike.
TEST(pme_floe, single_page_chunks_go_plain_when_the_dictionary_does_not_pay) {
    auto rows = sample_rows(5000);
    for (size_t i = 0; i < rows.size(); ++i) {
        // Each value twice: the dictionary pays on size, but outgrows the limit below after
        // about 250 entries of a chunk. message_id is unique: dropped at the 1,024th value.
        if (i % 17 == 5)
            rows[i].value.reset();
        else
            rows[i].value = fmt::format("{:060}", i / 2);
    }
    const size_t rg_rows = 2048; // 2048, 2048, 904: the last message_id chunk stays a dictionary
    for (bool encrypted : {false, true}) {
        SCOPED_TRACE(encrypted ? "uniform" : "plaintext");
        auto o = small_pages(encrypted ? std::optional(uniform()) : std::nullopt, rg_rows);
        o.single_page_chunks = true;
        o.dictionary_size_limit = 16u << 10;
        auto buf = write_mem(rows, o);
        auto ro = encrypted ? with_keys(floe_keys) : reader_options{};
        auto got = read_all(buf, ro);
        ASSERT_TRUE(got.has_value()) << got.error().to_string();
        ASSERT_EQ(got->size(), rows.size());
        EXPECT_TRUE(*got == rows);
        auto r = file_reader::open(make_memory_source(buf), ro);
        ASSERT_TRUE(r.has_value()) << r.error().to_string();
        ASSERT_EQ((*r)->num_row_groups(), 3u);
        for (size_t rg = 0; rg < 3; ++rg) {
            SCOPED_TRACE(rg);
            size_t first = rg * rg_rows, end = std::min(rows.size(), first + rg_rows);
            for (size_t col = 0; col < (*r)->file_schema().columns().size(); ++col) {
                auto oi = (*r)->chunk_offset_index(rg, col);
                ASSERT_TRUE(oi.has_value() && *oi) << col;
                EXPECT_EQ((*oi)->page_locations.size(), 1u) << col;
            }
            auto meta = [&](size_t col) -> const column_metadata& {
                return *(*r)->metadata().row_groups[rg].columns[col].meta_data;
            };
            auto plain_only = [&](size_t col) {
                const auto& m = meta(col);
                EXPECT_FALSE(m.dictionary_page_offset.has_value()) << col;
                ASSERT_EQ(m.encoding_stats.size(), 1u) << col;
                EXPECT_EQ(m.encoding_stats[0].type, page_type::data_page);
                EXPECT_EQ(m.encoding_stats[0].enc, encoding::plain);
                EXPECT_EQ(m.encoding_stats[0].count, 1);
            };
            auto with_dictionary = [&](size_t col) {
                const auto& m = meta(col);
                EXPECT_TRUE(m.dictionary_page_offset.has_value()) << col;
                ASSERT_EQ(m.encoding_stats.size(), 2u) << col;
                EXPECT_EQ(m.encoding_stats[1].enc, encoding::rle_dictionary);
                EXPECT_EQ(m.encoding_stats[1].count, 1);
            };
            plain_only(mc::value);
            with_dictionary(mc::stream_key);
            if (rg < 2)
                plain_only(mc::message_id);
            else
                with_dictionary(mc::message_id);
            // Chunk bounds: those of the rows, whether the dictionary was dropped or kept.
            std::optional<std::string> vmin, vmax, imin, imax;
            int64_t vnulls = 0;
            for (size_t i = first; i < end; ++i) {
                if (!rows[i].value) {
                    ++vnulls;
                } else {
                    if (!vmin || *rows[i].value < *vmin) vmin = *rows[i].value;
                    if (!vmax || *vmax < *rows[i].value) vmax = *rows[i].value;
                }
                if (!imin || rows[i].message_id < *imin) imin = rows[i].message_id;
                if (!imax || *imax < rows[i].message_id) imax = rows[i].message_id;
            }
            const auto& vs = *meta(mc::value).stats;
            EXPECT_EQ(vs.min_value, vmin);
            EXPECT_EQ(vs.max_value, vmax);
            EXPECT_EQ(vs.null_count, vnulls);
            EXPECT_EQ(meta(mc::message_id).stats->min_value, imin);
            EXPECT_EQ(meta(mc::message_id).stats->max_value, imax);
        }
    }
}

std::pair<size_t, size_t> page_span(bytes_view file, size_t rg, size_t col, size_t p) {
    auto r = file_reader::open(make_memory_source(file), with_keys(floe_keys));
    EXPECT_TRUE(r.has_value());
    auto oi = (*r)->chunk_offset_index(rg, col);
    EXPECT_TRUE(oi.has_value() && *oi);
    auto& loc = (*oi)->page_locations.at(p);
    return {static_cast<size_t>(loc.offset), static_cast<size_t>(loc.compressed_page_size)};
}

TEST(pme_floe, modules_moved_between_files_or_places_are_refused) {
    auto rows = sample_rows(400);
    auto o = small_pages(uniform(), 200);
    o.codec = compression_codec::uncompressed; // equal sizes in both files
    auto a = write_mem(rows, o);
    auto b = write_mem(rows, o); // same key and rows, another file (unique id, nonces)
    ASSERT_EQ(a.size(), b.size());
    ASSERT_NE(a, b);
    auto keys = with_keys(floe_keys);
    ASSERT_TRUE(read_everything(a, keys).has_value());
    // A page (header and body modules) replayed from the other file.
    auto [off, len] = page_span(a, 1, mc::offset, 1);
    ASSERT_EQ(page_span(b, 1, mc::offset, 1), std::make_pair(off, len));
    auto swapped = a;
    std::memcpy(swapped.data() + off, b.data() + off, len);
    auto r = read_everything(swapped, keys);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("row group 1 column offset: data page header"),
              std::string::npos)
        << r.error().to_string();
    // Only the body module: the header decrypts, the page does not.
    uint32_t hmod;
    std::memcpy(&hmod, a.data() + off, 4);
    swapped = a;
    std::memcpy(swapped.data() + off + 4 + hmod, b.data() + off + 4 + hmod, len - 4 - hmod);
    r = read_everything(swapped, keys);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("data page at"), std::string::npos) << r.error().to_string();
    EXPECT_NE(r.error().message().find("cannot be decrypted"), std::string::npos);
    // Two pages of one chunk swapped in place (the page ordinal is in the AAD): `partition`
    // pages are all alike, so their modules have one size.
    auto p0 = page_span(a, 0, mc::partition, 0), p1 = page_span(a, 0, mc::partition, 1);
    ASSERT_EQ(p0.second, p1.second);
    swapped = a;
    std::memcpy(swapped.data() + p0.first, a.data() + p1.first, p0.second);
    std::memcpy(swapped.data() + p1.first, a.data() + p0.first, p0.second);
    r = read_everything(swapped, keys);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("column partition: data page header"), std::string::npos)
        << r.error().to_string();
    // The same page of two row groups (the row group ordinal is in the AAD).
    auto q0 = page_span(a, 0, mc::partition, 0), q1 = page_span(a, 1, mc::partition, 0);
    ASSERT_EQ(q0.second, q1.second);
    swapped = a;
    std::memcpy(swapped.data() + q1.first, a.data() + q0.first, q0.second);
    r = read_everything(swapped, keys);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("row group 1 column partition: data page header"),
              std::string::npos)
        << r.error().to_string();
}

} // namespace
