// The aws-kms key provider against a real moto server started by kms_env.py.
#include "aws/credentials.h"
#include "crypto/kms_key_provider.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

using namespace floe;
using namespace floe::crypto;

namespace {

std::string env(const char* n) {
    const char* v = std::getenv(n);
    return v ? v : "";
}

aws::service_options service(std::string endpoint = env("KMSTEST_ENDPOINT")) {
    aws::service_options o;
    o.region = env("KMSTEST_REGION");
    o.endpoint = std::move(endpoint);
    o.credentials =
        std::make_shared<aws::static_credentials>(aws::credentials{"testing", "testing", ""});
    o.max_attempts = 3;
    o.retry_base = std::chrono::milliseconds(10);
    o.request_timeout = std::chrono::milliseconds(5'000);
    return o;
}

std::shared_ptr<kms_key_provider> provider(std::string key_id = env("KMSTEST_KEY_ID"),
                                           int bits = 256, size_t cache = 1000) {
    return std::make_shared<kms_key_provider>(service(), std::move(key_id), bits, cache);
}

// A loopback port nothing listens on.
int closed_port() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

} // namespace

TEST(KmsProvider, EnvironmentIsSet) {
    ASSERT_FALSE(env("KMSTEST_ENDPOINT").empty()) << "run through kms_env.py";
}

TEST(KmsProvider, AColumnKeyComesFromTheNamedKmsKey) {
    auto p = provider();
    auto dk = p->data_key_under("orders", env("KMSTEST_OTHER_KEY_ARN"));
    ASSERT_TRUE(dk) << dk.error();
    EXPECT_EQ(dk->key_id, env("KMSTEST_OTHER_KEY_ARN"));
    auto info = parse_key_metadata(dk->key_metadata);
    ASSERT_TRUE(info) << info.error();
    EXPECT_EQ(info->key_id, env("KMSTEST_OTHER_KEY_ARN"));
    // Another process (no cache) unwraps it through KMS.
    auto back = provider()->key_for(dk->key_metadata);
    ASSERT_TRUE(back) << back.error();
    EXPECT_TRUE(*back == dk->key);
    auto gone = p->data_key_under("orders", "alias/no-such-key");
    ASSERT_FALSE(gone);
    EXPECT_NE(gone.error().message().find("alias/no-such-key"), std::string::npos) << gone.error();
}

TEST(KmsProvider, GenerateThenDecryptRoundTrip) {
    auto writer = provider();
    auto dk = writer->data_key_for_new_file("orders");
    ASSERT_TRUE(dk) << dk.error();
    EXPECT_EQ(dk->key.size(), 32u);
    EXPECT_EQ(dk->key_id, env("KMSTEST_KEY_ARN"));
    auto info = parse_key_metadata(dk->key_metadata);
    ASSERT_TRUE(info) << info.error();
    EXPECT_EQ(info->provider, "aws-kms");
    EXPECT_EQ(info->key_id, env("KMSTEST_KEY_ARN"));
    EXPECT_FALSE(info->wrapped_key.empty());
    // The key itself is nowhere in key_metadata.
    std::string meta(as_chars(dk->key_metadata));
    EXPECT_EQ(meta.find(std::string(as_chars(dk->key.bytes()))), std::string::npos);

    // Another process (an empty cache) unwraps it with Decrypt.
    auto reader = provider();
    auto k = reader->key_for(dk->key_metadata);
    ASSERT_TRUE(k) << k.error();
    EXPECT_TRUE(*k == dk->key);
    EXPECT_EQ(reader->client().decrypt_calls(), 1u);
    EXPECT_EQ(reader->client().generate_calls(), 0u);
}

TEST(KmsProvider, Aes128AndAliasRecordTheKeyArn) {
    auto p = provider(env("KMSTEST_ALIAS"), 128);
    auto a = p->data_key_for_new_file("t");
    auto b = p->data_key_for_new_file("t");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->key.size(), 16u);
    EXPECT_EQ(a->key_id, env("KMSTEST_KEY_ARN")); // the alias resolved: files name the key
    EXPECT_FALSE(a->key == b->key);               // a fresh data key per file
    EXPECT_NE(a->key_metadata, b->key_metadata);
    auto back = provider()->key_for(b->key_metadata);
    ASSERT_TRUE(back) << back.error();
    EXPECT_TRUE(*back == b->key);
}

TEST(KmsProvider, CacheCountsRequestsPerFiles) {
    constexpr int files = 100;
    auto writer = provider();
    std::vector<data_key> keys;
    for (int i = 0; i < files; ++i) {
        auto dk = writer->data_key_for_new_file("t");
        ASSERT_TRUE(dk) << dk.error();
        keys.push_back(std::move(*dk));
    }
    // Reading back what this process wrote: no Decrypt at all.
    for (auto& dk : keys)
        ASSERT_TRUE(writer->key_for(dk.key_metadata));
    EXPECT_EQ(writer->client().generate_calls(), uint64_t(files));
    EXPECT_EQ(writer->client().decrypt_calls(), 0u);

    // A fresh reader: one Decrypt per file, then none for three more passes.
    auto reader = provider();
    for (int pass = 0; pass < 4; ++pass)
        for (auto& dk : keys) {
            auto k = reader->key_for(dk.key_metadata);
            ASSERT_TRUE(k) << k.error();
            ASSERT_TRUE(*k == dk.key);
        }
    EXPECT_EQ(reader->client().decrypt_calls(), uint64_t(files));
    EXPECT_EQ(reader->cache_hits(), uint64_t(3 * files));

    // A cache smaller than the working set stays bounded (and misses, in LRU order).
    auto small = provider(env("KMSTEST_KEY_ID"), 256, 10);
    for (int pass = 0; pass < 2; ++pass)
        for (auto& dk : keys)
            ASSERT_TRUE(small->key_for(dk.key_metadata));
    EXPECT_EQ(small->cached_keys(), 10u);
    EXPECT_EQ(small->client().decrypt_calls(), uint64_t(2 * files));
    std::printf("KMS requests for %d files: %llu GenerateDataKey + %llu Decrypt by the writer; "
                "%llu Decrypt for 4 reads of each by a fresh reader\n",
                files, (unsigned long long)writer->client().generate_calls(),
                (unsigned long long)writer->client().decrypt_calls(),
                (unsigned long long)reader->client().decrypt_calls());
}

TEST(KmsProvider, UnknownKeyIdIsNotFoundNamingIt) {
    std::string missing =
        "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000";
    auto p = provider(missing);
    auto dk = p->data_key_for_new_file("orders");
    ASSERT_FALSE(dk);
    EXPECT_EQ(dk.error().code(), errc::not_found) << dk.error();
    EXPECT_FALSE(dk.error().retryable());
    EXPECT_NE(dk.error().message().find("GenerateDataKey"), std::string::npos) << dk.error();
    EXPECT_NE(dk.error().message().find(missing), std::string::npos) << dk.error();
    EXPECT_NE(dk.error().message().find("orders"), std::string::npos) << dk.error();
    EXPECT_EQ(p->client().generate_calls(), 1u); // not retried
}

TEST(KmsProvider, TamperedOrForeignWrappedKeyRefused) {
    auto dk = provider()->data_key_for_new_file("t");
    ASSERT_TRUE(dk);
    auto info = *parse_key_metadata(dk->key_metadata);
    auto flipped = info;
    flipped.wrapped_key[flipped.wrapped_key.size() / 2] ^= 0x01;
    auto r = provider()->key_for(encode_key_metadata(flipped));
    ASSERT_FALSE(r);
    EXPECT_FALSE(r.error().retryable()) << r.error();
    EXPECT_NE(r.error().message().find("Decrypt"), std::string::npos) << r.error();
    EXPECT_NE(r.error().message().find(info.key_id), std::string::npos) << r.error();

    // The blob of one key presented as another key's: KMS answers, and the answer is an error.
    auto foreign = info;
    foreign.key_id = env("KMSTEST_OTHER_KEY_ARN");
    auto f = provider()->key_for(encode_key_metadata(foreign));
    // AWS answers IncorrectKeyException; moto 5.2.1 AccessDeniedException. Either way no key.
    ASSERT_FALSE(f);
    EXPECT_NE(f.error().message().find("Decrypt"), std::string::npos) << f.error();
    EXPECT_NE(f.error().message().find(foreign.key_id), std::string::npos) << f.error();

    // key_metadata of the keyring provider is not ours.
    auto k = provider()->key_for(encode_key_metadata({1, "keyring", "k1", {}}));
    ASSERT_FALSE(k);
    EXPECT_EQ(k.error().code(), errc::corrupt);
}

TEST(KmsProvider, UnreachableEndpointIsRetriableNamingKeyAndOperation) {
    auto ep = fmt::format("http://127.0.0.1:{}", closed_port());
    kms_key_provider p(service(ep), env("KMSTEST_KEY_ID"), 256, 10);
    auto dk = p.data_key_for_new_file("orders");
    ASSERT_FALSE(dk);
    EXPECT_EQ(dk.error().code(), errc::unavailable) << dk.error();
    EXPECT_TRUE(dk.error().retryable());
    EXPECT_NE(dk.error().message().find("GenerateDataKey"), std::string::npos) << dk.error();
    EXPECT_NE(dk.error().message().find(env("KMSTEST_KEY_ID")), std::string::npos) << dk.error();
    EXPECT_NE(dk.error().message().find("after 3 attempt"), std::string::npos) << dk.error();

    auto meta = encode_key_metadata({1, "aws-kms", env("KMSTEST_KEY_ARN"), {1, 2, 3, 4}});
    auto k = p.key_for(meta);
    ASSERT_FALSE(k);
    EXPECT_TRUE(k.error().retryable());
    EXPECT_NE(k.error().message().find("Decrypt"), std::string::npos) << k.error();
    EXPECT_NE(k.error().message().find(env("KMSTEST_KEY_ARN")), std::string::npos) << k.error();
    EXPECT_FALSE(p.check());
}

TEST(KmsProvider, CheckForReadiness) {
    auto p = provider();
    ASSERT_TRUE(p->check());
    EXPECT_EQ(p->client().generate_calls(), 1u);
    ASSERT_TRUE(p->check()); // within a minute of a good call: no request
    EXPECT_EQ(p->client().generate_calls(), 1u);
}

// A topic config naming a column key is checked when it is set: a usable key (by id, ARN or
// alias) passes and is remembered; an unknown, disabled, pending-deletion or signing key is
// refused for good (not retryable), naming the key; an unreachable KMS is "cannot tell now"
// after one attempt.
TEST(KmsProvider, CheckKeyTellsWhichKeysAConfigMayName) {
    auto p = provider();
    for (auto id : {env("KMSTEST_KEY_ID"), env("KMSTEST_OTHER_KEY_ARN"), env("KMSTEST_ALIAS")})
        EXPECT_TRUE(p->check_key(id)) << id << ": " << p->check_key(id).error();
    const auto probes = p->probe_client().generate_calls();
    EXPECT_EQ(probes, 3u);
    EXPECT_TRUE(p->check_key(env("KMSTEST_ALIAS")));
    EXPECT_EQ(p->probe_client().generate_calls(), probes); // remembered
    EXPECT_EQ(p->client().generate_calls(), 0u);           // the offload's client is not used

    struct bad {
        std::string id;
        const char* why;
    };
    for (auto& [id, why] : {bad{"arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000", ""},
                            bad{env("KMSTEST_DISABLED_KEY_ARN"), "Disabled"},
                            bad{env("KMSTEST_PENDING_KEY_ARN"), "PendingDeletion"},
                            bad{env("KMSTEST_SIGNING_KEY_ARN"), "SIGN_VERIFY"}}) {
        auto r = p->check_key(id);
        ASSERT_FALSE(r) << id;
        EXPECT_FALSE(r.error().retryable()) << r.error();
        EXPECT_NE(r.error().message().find(id), std::string::npos) << r.error();
        EXPECT_NE(r.error().message().find(why), std::string::npos) << r.error();
    }

    auto ep = fmt::format("http://127.0.0.1:{}", closed_port());
    kms_key_provider down(service(ep), env("KMSTEST_KEY_ID"), 256, 10);
    auto r = down.check_key(env("KMSTEST_KEY_ID"));
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().retryable()) << r.error();
    EXPECT_EQ(r.error().message().find("after 3 attempt"), std::string::npos) << r.error(); // one attempt
}
