// Encrypted tables (issue 30): the lake writes Parquet Modular Encryption files with keys from a
// real keyring provider, records the key in each data file entry, and its reader decrypts;
// a missing or wrong key fails naming the file and the key id.

#include "crypto/keyring.h"
#include "format/parquet/reader.h"
#include "iceberg/bounds.h"
#include "lake/iceberg_lake.h"
#include "lake/tests/test_lake.h"
#include "lake/table_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace floe::lake {
namespace {

namespace fs = std::filesystem;

crypto::secret_key key_of(uint8_t fill, size_t n = 32) { return crypto::secret_key(std::vector<uint8_t>(n, fill)); }

std::shared_ptr<crypto::keyring_provider> ring(std::string current,
                                               std::vector<std::pair<std::string, crypto::secret_key>> keys) {
    crypto::keyring k;
    k.current = std::move(current);
    for (auto& [id, key] : keys) k.keys.emplace(id, std::move(key));
    return std::make_shared<crypto::keyring_provider>(std::move(k));
}

class EncryptedLakeTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = testing::fresh_test_dir("floe-enc-lake-test");
        _lake = make_lake();
    }
    void TearDown() override { fs::remove_all(_dir); }

    std::unique_ptr<iceberg_lake> make_lake() {
        lake_options o;
        o.parquet.row_group_rows = 64;
        return testing::open_test_lake(_dir, o);
    }

    result<commit_result> append_range(iceberg_lake& l, int64_t from, int64_t to) {
        auto t = FLOE_TRY(l.table_for_topic("secrets"));
        auto app = FLOE_TRY(t->begin_append());
        std::vector<parquet::message_header_view> headers{{"h", std::string_view("hv")}};
        for (int64_t o = from; o < to; ++o) {
            auto id = std::to_string(o);
            auto key = fmt::format("key-{}", o % 7);
            auto value = fmt::format("secret value {}", o);
            parquet::message_row row;
            row.stream_key = "secrets-0";
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = 1000 + o;
            row.kafka_timestamp = 1000 + o;
            row.key = key;
            row.value = value;
            row.headers = std::span<const parquet::message_header_view>(headers);
            row.partition = 0;
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        return app->commit({{"secrets-0", to}});
    }

    result<void> set(iceberg_lake& l, const table_encryption& e) {
        auto t = FLOE_TRY(l.table_for_topic("secrets"));
        return t->set_encryption(e);
    }

    std::vector<iceberg::data_file> live(iceberg_lake& l) {
        auto files = current_data_files(l.catalog(), l.io(), {"floe", "secrets"});
        EXPECT_TRUE(files) << files.error();
        return files ? files->files : std::vector<iceberg::data_file>{};
    }

    // The rows of the table's only (or first) file, read by the lake's own reader.
    void read_first_file(std::vector<parquet::message_record>& rows) {
        table_reader reader(*_lake, "secrets");
        auto all = reader.files();
        ASSERT_TRUE(all) << all.error();
        auto r = reader.read_file(all->at(0));
        ASSERT_TRUE(r) << r.error();
        rows = std::move(*r);
    }

    std::string file_bytes(const std::string& uri) {
        std::ifstream in(*iceberg::local_path(uri), std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }

    fs::path _dir;
    std::unique_ptr<iceberg_lake> _lake;
};

table_encryption uniform() {
    table_encryption e;
    e.how = table_encryption::mode::uniform;
    return e;
}

TEST_F(EncryptedLakeTest, PropertiesRoundTrip) {
    table_encryption e;
    e.how = table_encryption::mode::columns;
    e.columns = {"key", "value", "headers"};
    e.encrypted_footer = false;
    e.ctr = true;
    std::map<std::string, std::string> props{{"floe.topic", "t"}};
    EXPECT_TRUE(encryption_to_properties(e, props));
    EXPECT_EQ(props["floe.encryption.columns"], "key,value,headers");
    EXPECT_FALSE(encryption_to_properties(e, props)); // unchanged
    auto back = encryption_from_properties(props);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(*back, e);
    EXPECT_TRUE(encryption_to_properties(table_encryption{}, props));
    EXPECT_EQ(props.size(), 1u);
    props["floe.encryption"] = "rot13";
    EXPECT_FALSE(encryption_from_properties(props));
}

// A column's own key may be a KMS key ARN, which has colons of its own.
TEST(EncryptedColumn, SplitsAtTheFirstColon) {
    auto arn = split_encrypted_column("value:arn:aws:kms:us-east-1:123456789012:key/1234abcd");
    EXPECT_EQ(arn.name, "value");
    EXPECT_EQ(arn.key_id, "arn:aws:kms:us-east-1:123456789012:key/1234abcd");
    auto plain = split_encrypted_column("data.ssn");
    EXPECT_EQ(plain.name, "data.ssn");
    EXPECT_TRUE(plain.key_id.empty());
    EXPECT_EQ(split_encrypted_column("value:alias/pii").key_id, "alias/pii");
}

TEST_F(EncryptedLakeTest, UniformFilesAreEncryptedAndReadBack) {
    _lake->set_key_provider(ring("k1", {{"k1", key_of(1)}}));
    ASSERT_TRUE(set(*_lake, uniform()));
    auto r = append_range(*_lake, 0, 200);
    ASSERT_TRUE(r) << r.error();
    auto files = live(*_lake);
    ASSERT_EQ(files.size(), 1u);
    auto& df = files[0];
    // The file is a PARE file: no plaintext value anywhere in it.
    auto bytes = file_bytes(df.file_path);
    EXPECT_EQ(bytes.substr(0, 4), "PARE");
    EXPECT_EQ(bytes.find("secret value"), std::string::npos);
    // The manifest names the key, and keeps no bounds of the payload columns.
    ASSERT_TRUE(df.key_metadata);
    EXPECT_EQ(key_label(*df.key_metadata), "key 'k1' of the keyring");
    EXPECT_FALSE(df.lower_bounds.contains(iceberg::field_ids::key));
    EXPECT_FALSE(df.lower_bounds.contains(iceberg::field_ids::value));
    EXPECT_TRUE(df.lower_bounds.contains(iceberg::field_ids::offset));
    // Without keys the file does not open; through the lake it reads every row.
    auto plain = parquet::file_reader::open_file(*iceberg::local_path(df.file_path));
    EXPECT_FALSE(plain);
    table_reader reader(*_lake, "secrets");
    auto planned = reader.files_for_offsets("secrets-0", 0, 200);
    ASSERT_TRUE(planned) << planned.error();
    ASSERT_EQ(planned->size(), 1u);
    auto rows = reader.read_file(planned->front());
    ASSERT_TRUE(rows) << rows.error();
    ASSERT_EQ(rows->size(), 200u);
    for (int64_t i = 0; i < 200; ++i) {
        EXPECT_EQ((*rows)[i].offset, i);
        EXPECT_EQ((*rows)[i].value, fmt::format("secret value {}", i));
        ASSERT_TRUE((*rows)[i].headers);
        EXPECT_EQ((*rows)[i].headers->at(0).value, "hv");
    }
    // Lookups by key and by offset through the page-reading paths.
    byte_buffer storage;
    auto mr = reader.open_file(planned->front(), storage);
    ASSERT_TRUE(mr) << mr.error();
    auto found = mr->find_by_key("key-3");
    ASSERT_TRUE(found) << found.error();
    EXPECT_EQ(found->size(), 29u); // offsets 3, 10, ..., 199
    std::vector<parquet::message_record> range;
    auto n = mr->read_offset_range(150, 10, range);
    ASSERT_TRUE(n) << n.error();
    ASSERT_EQ(*n, 10u);
    EXPECT_EQ(range.front().offset, 150);
}

TEST_F(EncryptedLakeTest, MissingOrWrongKeyNamesTheFileAndTheKey) {
    _lake->set_key_provider(ring("k1", {{"k1", key_of(1)}}));
    ASSERT_TRUE(set(*_lake, uniform()));
    ASSERT_TRUE(append_range(*_lake, 0, 50));
    auto uri = live(*_lake).at(0).file_path;

    struct reader_case {
        std::string what;
        std::shared_ptr<crypto::key_provider> keys;
        std::string expect;
    };
    std::vector<reader_case> cases{
        {"key id not in the keyring", ring("k2", {{"k2", key_of(2)}}), "'k1'"},
        {"same id, other bytes", ring("k1", {{"k1", key_of(9)}}), "'k1'"},
        {"no key provider", nullptr, "floe.encryption.provider"},
    };
    for (auto& c : cases) {
        auto other = make_lake();
        other->set_key_provider(c.keys);
        table_reader reader(*other, "secrets");
        auto planned = reader.files_for_offsets("secrets-0", 0, 50);
        ASSERT_TRUE(planned) << planned.error();
        auto rows = reader.read_file(planned->at(0));
        ASSERT_FALSE(rows) << c.what;
        auto msg = rows.error().message();
        EXPECT_NE(msg.find(uri), std::string::npos) << c.what << ": " << msg;
        EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
        EXPECT_NE(msg.find("k1"), std::string::npos) << c.what << ": " << msg;
    }
}

TEST_F(EncryptedLakeTest, ColumnModeWithPlaintextFooterLeavesOffsetsReadable) {
    _lake->set_key_provider(ring("k1", {{"k1", key_of(3, 16)}}));
    table_encryption e;
    e.how = table_encryption::mode::columns;
    e.columns = {"value", "headers"};
    e.encrypted_footer = false;
    e.ctr = true;
    ASSERT_TRUE(set(*_lake, e));
    ASSERT_TRUE(append_range(*_lake, 0, 100));
    auto df = live(*_lake).at(0);
    auto bytes = file_bytes(df.file_path);
    EXPECT_EQ(bytes.substr(0, 4), "PAR1");
    EXPECT_EQ(bytes.find("secret value"), std::string::npos);
    EXPECT_TRUE(df.lower_bounds.contains(iceberg::field_ids::key)); // not encrypted: bounds kept
    EXPECT_FALSE(df.lower_bounds.contains(iceberg::field_ids::value));
    // Someone without keys reads offsets, not values.
    parquet::reader_options no_sig;
    parquet::decryption_config dc;
    dc.retriever = [](std::string_view) -> result<std::string> { return fail(errc::not_found, "no keys here"); };
    dc.require_footer_signature = false;
    no_sig.decryption = dc;
    auto r = parquet::file_reader::open_file(*iceberg::local_path(df.file_path), no_sig);
    ASSERT_TRUE(r) << r.error();
    EXPECT_TRUE((*r)->check_readable(0, parquet::message_col::offset));
    EXPECT_FALSE((*r)->check_readable(0, parquet::message_col::value));
    auto offsets = (*r)->read_column(0, parquet::message_col::offset);
    ASSERT_TRUE(offsets) << offsets.error();
    EXPECT_EQ(offsets->i64.front(), 0);
    // The lake reads everything.
    std::vector<parquet::message_record> rows;
    read_first_file(rows);
    ASSERT_EQ(rows.size(), 100u);
    EXPECT_EQ(rows.back().value, "secret value 99");
}

TEST_F(EncryptedLakeTest, RotationAndRewritesUseTheCurrentKey) {
    _lake->set_key_provider(ring("k1", {{"k1", key_of(1)}}));
    ASSERT_TRUE(set(*_lake, uniform()));
    ASSERT_TRUE(append_range(*_lake, 0, 30));
    // Rotation: k2 becomes current, k1 stays for the old file.
    _lake->set_key_provider(ring("k2", {{"k1", key_of(1)}, {"k2", key_of(2)}}));
    ASSERT_TRUE(append_range(*_lake, 30, 60));
    std::map<std::string, std::string> key_of_file;
    std::vector<std::string> uris;
    for (auto& f : live(*_lake)) {
        key_of_file[f.file_path] = key_label(f.key_metadata.value_or(""));
        uris.push_back(f.file_path);
    }
    ASSERT_EQ(uris.size(), 2u);
    std::set<std::string> labels;
    for (auto& [u, l] : key_of_file) labels.insert(l);
    EXPECT_EQ(labels, (std::set<std::string>{"key 'k1' of the keyring", "key 'k2' of the keyring"}));

    // A rewrite (compaction) of both files writes one file, encrypted with the current key.
    table_reader reader(*_lake, "secrets");
    auto t = _lake->table_for_topic("secrets");
    auto rw = (*t)->begin_rewrite(uris);
    ASSERT_TRUE(rw) << rw.error();
    std::vector<parquet::message_header_view> headers;
    auto planned = reader.files_for_offsets("secrets-0", 0, 60);
    ASSERT_TRUE(planned) << planned.error();
    ASSERT_EQ(planned->size(), 2u);
    for (auto& f : *planned) {
        auto rows = reader.read_file(f);
        ASSERT_TRUE(rows) << rows.error();
        for (auto& r : *rows) ASSERT_TRUE((*rw)->add(row_of(r, headers)));
    }
    ASSERT_TRUE((*rw)->commit({}));
    auto after = live(*_lake);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(key_label(after[0].key_metadata.value_or("")), "key 'k2' of the keyring");
    EXPECT_EQ(file_bytes(after[0].file_path).substr(0, 4), "PARE");
    std::vector<parquet::message_record> rows; // through a new reader: the rewrite's file
    read_first_file(rows);
    EXPECT_EQ(rows.size(), 60u);
}

TEST_F(EncryptedLakeTest, AnEncryptedTableIsNeverWrittenInPlaintext) {
    ASSERT_TRUE(set(*_lake, uniform())); // no key provider
    auto r = append_range(*_lake, 0, 10);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("floe.encryption.provider"), std::string::npos) << r.error();
    EXPECT_TRUE(live(*_lake).empty());
    // Columns that name nothing in the file are refused too.
    _lake->set_key_provider(ring("k1", {{"k1", key_of(1)}}));
    table_encryption e;
    e.how = table_encryption::mode::columns;
    e.columns = {"no_such_column"};
    ASSERT_TRUE(set(*_lake, e));
    r = append_range(*_lake, 0, 10);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("no_such_column"), std::string::npos) << r.error();
}

} // namespace
} // namespace floe::lake

namespace floe::lake {
namespace {

TEST_F(EncryptedLakeTest, AColumnWithItsOwnKeyIsReadOnlyByHoldersOfThatKey) {
    auto both = ring("k2", {{"pii", key_of(9)}, {"k2", key_of(2)}});
    auto only_k2 = ring("k2", {{"k2", key_of(2)}});
    _lake->set_key_provider(both);
    table_encryption e;
    e.how = table_encryption::mode::columns;
    e.columns = {"value:pii", "headers"};
    e.encrypted_footer = false;
    ASSERT_TRUE(set(*_lake, e));
    ASSERT_TRUE(append_range(*_lake, 0, 50));
    auto df = live(*_lake).at(0);
    EXPECT_EQ(key_label(df.key_metadata.value_or("")), "key 'k2' of the keyring"); // the file's key
    EXPECT_EQ(file_bytes(df.file_path).find("secret value"), std::string::npos);

    // A reader holding the file's key only: offsets and headers, never the value.
    std::vector<std::string> asked;
    parquet::reader_options o;
    parquet::decryption_config dc;
    dc.retriever = [&](std::string_view m) -> result<std::string> {
        asked.push_back(key_label(m));
        auto k = FLOE_TRY(only_k2->key_for(bytes_view(reinterpret_cast<const uint8_t*>(m.data()), m.size())));
        auto b = k.bytes();
        return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    };
    o.decryption = dc;
    auto r = parquet::file_reader::open_file(*iceberg::local_path(df.file_path), o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_TRUE((*r)->check_readable(0, parquet::message_col::offset));
    EXPECT_TRUE((*r)->check_readable(0, parquet::message_col::header_value));
    EXPECT_FALSE((*r)->check_readable(0, parquet::message_col::value));
    EXPECT_NE(std::find(asked.begin(), asked.end(), "key 'pii' of the keyring"), asked.end());
    auto hv = (*r)->read_column(0, parquet::message_col::header_value);
    ASSERT_TRUE(hv) << hv.error();

    // The lake holding both keys reads every column.
    std::vector<parquet::message_record> rows;
    read_first_file(rows);
    ASSERT_EQ(rows.size(), 50u);
    EXPECT_EQ(rows.back().value, "secret value 49");

    // Without the column's key nothing is written, and the error names the key and the column.
    _lake->set_key_provider(only_k2);
    auto w = append_range(*_lake, 50, 60);
    ASSERT_FALSE(w);
    EXPECT_NE(w.error().message().find("'pii'"), std::string::npos) << w.error();
    EXPECT_NE(w.error().message().find("column value"), std::string::npos) << w.error();
    EXPECT_EQ(live(*_lake).size(), 1u);
}

} // namespace
} // namespace floe::lake

namespace floe::lake {
namespace {

// The AAD prefix binds a file to its table ("floe.secrets"): stored in the file, or supplied by
// readers; files written before the setting still read; a file read as another table's fails.
TEST_F(EncryptedLakeTest, TheAadPrefixBindsEachFileToItsTable) {
    auto keys = ring("k1", {{"k1", key_of(4)}});
    _lake->set_key_provider(keys);
    ASSERT_TRUE(set(*_lake, uniform()));
    ASSERT_TRUE(append_range(*_lake, 0, 10)); // no prefix yet
    for (auto how : {table_encryption::aad::stored, table_encryption::aad::supplied}) {
        auto e = uniform();
        e.aad_prefix = how;
        ASSERT_TRUE(set(*_lake, e));
        int64_t from = how == table_encryption::aad::stored ? 10 : 20;
        ASSERT_TRUE(append_range(*_lake, from, from + 10));
    }
    auto files = live(*_lake);
    ASSERT_EQ(files.size(), 3u);
    // Floe's reader reads all three tables' files, old and new.
    table_reader reader(*_lake, "secrets");
    auto planned = reader.files_for_offsets("secrets-0", 0, 30);
    ASSERT_TRUE(planned) << planned.error();
    ASSERT_EQ(planned->size(), 3u);
    int64_t rows = 0;
    for (auto& f : *planned) {
        EXPECT_EQ(f.aad_prefix, "floe.secrets");
        auto r = reader.read_file(f);
        ASSERT_TRUE(r) << r.error();
        rows += int64_t(r->size());
    }
    EXPECT_EQ(rows, 30);
    // Each file as another table's: the prefixed ones fail, the stored one saying so.
    int refused = 0, mismatch = 0;
    for (auto f : *planned) {
        f.aad_prefix = "floe.other";
        auto r = reader.read_file(f);
        if (!r) {
            ++refused;
            if (r.error().message().find("differs from the one the file stores") != std::string::npos) ++mismatch;
        }
    }
    EXPECT_EQ(refused, 2);
    EXPECT_EQ(mismatch, 1);
    // A reader that supplies nothing reads the stored-prefix file, not the supplied-prefix one.
    parquet::reader_options o = _lake->reader_options_for("");
    int plain_ok = 0;
    for (auto& f : *planned) {
        auto r = parquet::file_reader::open_file(*iceberg::local_path(f.uri), o);
        if (!r) {
            EXPECT_NE(r.error().message().find("must supply"), std::string::npos) << r.error();
        } else if ((*r)->check_readable(0, parquet::message_col::value)) {
            ++plain_ok;
        }
    }
    EXPECT_EQ(plain_ok, 2);
    // The table records the setting.
    auto t = iceberg::load_table(_lake->catalog(), _lake->io(), {"floe", "secrets"});
    ASSERT_TRUE(t) << t.error();
    EXPECT_EQ(t->metadata.properties.at("floe.encryption.aad-prefix"), "supplied");
}

} // namespace
} // namespace floe::lake
