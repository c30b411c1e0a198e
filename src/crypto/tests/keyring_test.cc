#include "base/base64.h"
#include "crypto/key_provider.h"
#include "crypto/keyring.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace floe;
using namespace floe::crypto;

namespace {

std::string key_b64(size_t n, uint8_t fill) {
    std::vector<uint8_t> k(n, fill);
    return base64_encode(k);
}

class KeyringFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir = std::filesystem::temp_directory_path()
              / fmt::format("floe-keyring-{}-{}", ::getpid(),
                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        path = (dir / "keys.json").string();
    }
    void TearDown() override { std::filesystem::remove_all(dir); }
    void write(const std::string& text, mode_t mode = 0600) {
        std::filesystem::remove(path);
        std::ofstream(path) << text;
        ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    }
    std::filesystem::path dir;
    std::string path;
};

std::string two_keys(std::string_view current) {
    return fmt::format(R"({{"current": "{}", "keys": {{"k1": "{}", "k2": "{}"}}}})", current,
                       key_b64(16, 0x11), key_b64(32, 0x22));
}

} // namespace

TEST_F(KeyringFile, OwnerOnlyModesAreAccepted) {
    for (mode_t m : {0600, 0400}) {
        write(two_keys("k2"), m);
        auto p = keyring_provider::open(path);
        ASSERT_TRUE(p) << p.error();
        EXPECT_EQ((*p)->current_id(), "k2");
        EXPECT_EQ((*p)->kind(), "keyring");
    }
}

TEST_F(KeyringFile, GroupOrOtherBitsStopStartNamingSettingAndMode) {
    for (mode_t m : {0644, 0640, 0604, 0660, 0601}) {
        write(two_keys("k2"), m);
        auto p = make_key_provider({.provider = "keyring", .keyring_file = path});
        ASSERT_FALSE(p) << fmt::format("{:o}", m);
        EXPECT_EQ(p.error().code(), errc::invalid_argument);
        auto& msg = p.error().message();
        EXPECT_NE(msg.find("floe.encryption.keyring-file"), std::string::npos) << msg;
        EXPECT_NE(msg.find(fmt::format("mode {:04o}", m)), std::string::npos) << msg;
        EXPECT_NE(msg.find("chmod 600"), std::string::npos) << msg;
    }
}

TEST_F(KeyringFile, MissingFileOrDirectoryNamed) {
    auto p = keyring_provider::open(path);
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message().find(path), std::string::npos);
    ::chmod(dir.c_str(), 0700);
    auto d = keyring_provider::open(dir.string());
    ASSERT_FALSE(d);
    EXPECT_NE(d.error().message().find("not a regular file"), std::string::npos) << d.error();
    auto unset = make_key_provider({.provider = "keyring"});
    ASSERT_FALSE(unset);
    EXPECT_NE(unset.error().message().find("floe.encryption.keyring-file is not set"),
              std::string::npos);
}

TEST(Keyring, BadJsonNamesThePositionNotTheText) {
    auto secret = key_b64(32, 0x5A);
    auto r = parse_keyring(
        fmt::format(R"({{"current": "k1", "keys": {{"k1": "{}" oops}}}})", secret), "kr");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_NE(r.error().message().find("not valid JSON (at byte"), std::string::npos) << r.error();
    EXPECT_EQ(r.error().message().find(secret.substr(0, 10)), std::string::npos) << r.error();
    for (auto* text :
         {"[]", R"({"keys": {}})", R"({"current": "a"})", R"({"current": 1, "keys": {"a": "x"}})",
          R"({"current": "a", "keys": {"a": "AAAAAAAAAAAAAAAAAAAAAA=="}, "extra": 1})"}) {
        auto e = parse_keyring(text, "kr");
        EXPECT_FALSE(e) << text;
    }
}

TEST(Keyring, BadBase64AndWrongLengthsRefusedNamingTheId) {
    auto bad = parse_keyring(R"({"current": "k1", "keys": {"k1": "not base64!"}})", "kr");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("key 'k1' is not valid base64"), std::string::npos)
        << bad.error();
    auto unpadded =
        parse_keyring(R"({"current": "k1", "keys": {"k1": "AAAAAAAAAAAAAAAAAAAAAA"}})", "kr");
    EXPECT_FALSE(unpadded);
    for (size_t n : {0, 8, 15, 17, 24, 31, 33, 64}) {
        auto r = parse_keyring(
            fmt::format(R"({{"current": "k1", "keys": {{"k1": "{}"}}}})", key_b64(n, 1)), "kr");
        ASSERT_FALSE(r) << n;
        EXPECT_NE(r.error().message().find(fmt::format("key 'k1' is {} bits", n * 8)),
                  std::string::npos)
            << r.error();
    }
    for (size_t n : {16, 32})
        EXPECT_TRUE(parse_keyring(
            fmt::format(R"({{"current": "k1", "keys": {{"k1": "{}"}}}})", key_b64(n, 1)), "kr"));
    auto cur = parse_keyring(two_keys("k3"), "kr");
    ASSERT_FALSE(cur);
    EXPECT_NE(cur.error().message().find("current key 'k3' is not among the keys"),
              std::string::npos);
}

TEST(Keyring, KeyMetadataNamesTheIdNeverTheKey) {
    keyring_provider p(*parse_keyring(two_keys("k2"), "kr"));
    auto dk = p.data_key_for_new_file("orders");
    ASSERT_TRUE(dk) << dk.error();
    EXPECT_EQ(dk->key_id, "k2");
    EXPECT_EQ(dk->key.size(), 32u);
    EXPECT_EQ(dk->key.bytes()[0], 0x22);
    std::vector<uint8_t> expect{1, 'K', 0, 2, 'k', '2'};
    EXPECT_EQ(dk->key_metadata, expect);
    auto info = parse_key_metadata(dk->key_metadata);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->provider, "keyring");
    EXPECT_EQ(info->key_id, "k2");
    auto back = p.key_for(dk->key_metadata);
    ASSERT_TRUE(back) << back.error();
    EXPECT_TRUE(*back == dk->key);
}

TEST(Keyring, AColumnKeyIsTheNamedKeyNotTheCurrentOne) {
    keyring_provider p(*parse_keyring(two_keys("k2"), "kr"));
    auto dk = p.data_key_under("orders", "k1");
    ASSERT_TRUE(dk) << dk.error();
    EXPECT_EQ(dk->key_id, "k1");
    EXPECT_EQ(dk->key.bytes()[0], 0x11);
    std::vector<uint8_t> expect{1, 'K', 0, 2, 'k', '1'};
    EXPECT_EQ(dk->key_metadata, expect);
    auto missing = p.data_key_under("orders", "pii");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found);
    EXPECT_NE(missing.error().message().find("'pii'"), std::string::npos) << missing.error();
    EXPECT_NE(missing.error().message().find("orders"), std::string::npos) << missing.error();
}

TEST(Keyring, CheckKeyKnowsTheKeyringsIds) {
    keyring_provider p(*parse_keyring(two_keys("k2"), "kr"));
    EXPECT_TRUE(p.check_key("k1"));
    EXPECT_TRUE(p.check_key("k2"));
    auto missing = p.check_key("pii");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found);
    EXPECT_NE(missing.error().message().find("'pii'"), std::string::npos) << missing.error();
}

TEST(Keyring, UnknownIdIsNotFoundNamingIt) {
    keyring_provider p(*parse_keyring(two_keys("k2"), "kr"));
    auto r = p.key_for(encode_key_metadata({1, "keyring", "k9", {}}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::not_found);
    EXPECT_FALSE(r.error().retryable());
    EXPECT_NE(r.error().message().find("key 'k9' is not in the keyring"), std::string::npos)
        << r.error();
    auto kms = p.key_for(encode_key_metadata({1, "aws-kms", "arn:aws:kms:x", {1, 2, 3}}));
    ASSERT_FALSE(kms);
    EXPECT_EQ(kms.error().code(), errc::corrupt);
    EXPECT_NE(kms.error().message().find("arn:aws:kms:x"), std::string::npos);
}

TEST(KeyMetadata, MalformedIsCorrupt) {
    auto good = encode_key_metadata({1, "aws-kms", "arn:k", {9, 8, 7}});
    ASSERT_TRUE(parse_key_metadata(good));
    EXPECT_EQ(parse_key_metadata(good)->wrapped_key, (std::vector<uint8_t>{9, 8, 7}));
    for (size_t n = 0; n < good.size(); ++n) {
        std::vector<uint8_t> cut(good.begin(), good.begin() + long(n));
        auto r = parse_key_metadata(cut);
        ASSERT_FALSE(r) << n;
        EXPECT_EQ(r.error().code(), errc::corrupt);
    }
    auto trailing = good;
    trailing.push_back(0);
    EXPECT_FALSE(parse_key_metadata(trailing));
    auto v2 = good;
    v2[0] = 2;
    auto r = parse_key_metadata(v2);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("version 2"), std::string::npos);
    auto kind = good;
    kind[1] = 'X';
    EXPECT_FALSE(parse_key_metadata(kind));
    EXPECT_FALSE(parse_key_metadata(std::vector<uint8_t>{1, 'K', 0, 0})); // empty id
}

TEST_F(KeyringFile, RotationKeepsOldIdsReadable) {
    write(fmt::format(R"({{"current": "k1", "keys": {{"k1": "{}"}}}})", key_b64(16, 0x11)));
    auto p = keyring_provider::open(path);
    ASSERT_TRUE(p) << p.error();
    auto old_file = (*p)->data_key_for_new_file("t");
    ASSERT_TRUE(old_file);
    EXPECT_EQ(old_file->key_id, "k1");
    EXPECT_EQ(old_file->key.bits(), 128);

    // Rotate: add k2 and make it current.
    write(two_keys("k2"), 0400);
    ASSERT_TRUE((*p)->reload());
    auto new_file = (*p)->data_key_for_new_file("t");
    ASSERT_TRUE(new_file);
    EXPECT_EQ(new_file->key_id, "k2");
    EXPECT_EQ(new_file->key.bits(), 256);
    auto old_key = (*p)->key_for(old_file->key_metadata);
    ASSERT_TRUE(old_key) << old_key.error();
    EXPECT_TRUE(*old_key == old_file->key);

    // A reload that fails (mode opened up) keeps the keyring in use.
    ::chmod(path.c_str(), 0644);
    auto bad = (*p)->reload();
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("mode 0644"), std::string::npos);
    EXPECT_EQ((*p)->current_id(), "k2");

    // Removing k1 makes its files unreadable, named.
    write(fmt::format(R"({{"current": "k2", "keys": {{"k2": "{}"}}}})", key_b64(32, 0x22)));
    ASSERT_TRUE((*p)->reload());
    auto gone = (*p)->key_for(old_file->key_metadata);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), errc::not_found);
    EXPECT_NE(gone.error().message().find("'k1'"), std::string::npos);
    EXPECT_NE((*p)->describe().find("current key 'k2'"), std::string::npos);
}

TEST(KeyProvider, UnknownProviderRefused) {
    auto p = make_key_provider({.provider = "vault"});
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message().find("floe.encryption.provider 'vault'"), std::string::npos);
    auto k = make_key_provider({.provider = "aws-kms"});
    ASSERT_FALSE(k);
    EXPECT_NE(k.error().message().find("floe.encryption.kms.key-id"), std::string::npos);
}
