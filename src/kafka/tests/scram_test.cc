#include "kafka/scram.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace floe::kafka {
namespace {

// RFC 7677 section 3: user "user", password "pencil", the exchange as published.
constexpr std::string_view rfc_salt_b64 = "W22ZaJ0SNY7soEsUEjb6gQ==";
constexpr std::string_view rfc_client_first = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view rfc_server_nonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr std::string_view rfc_server_first =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view rfc_client_final =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view rfc_server_final = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

scram_credential rfc_credential() {
    return scram_derive(scram_mechanism::sha256, "pencil", *base64_decode(rfc_salt_b64), 4096);
}

TEST(Scram, DerivedKeysOfRfc7677) {
    auto c = rfc_credential();
    EXPECT_EQ(base64_encode(c.stored_key), "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=");
    EXPECT_EQ(base64_encode(c.server_key), "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=");
}

TEST(Scram, ServerFollowsRfc7677Exchange) {
    auto cred = rfc_credential();
    scram_server s(scram_mechanism::sha256,
                   [&](const std::string& u) -> std::optional<scram_credential> {
                       if (u == "user") return cred;
                       return std::nullopt;
                   },
                   std::string(rfc_server_nonce));
    auto first = s.first(rfc_client_first);
    ASSERT_TRUE(first) << first.error();
    EXPECT_EQ(*first, rfc_server_first);
    auto fin = s.final(rfc_client_final);
    ASSERT_TRUE(fin) << fin.error();
    EXPECT_EQ(*fin, rfc_server_final);
    EXPECT_EQ(s.username(), "user");
    // The exchange is over: a replay of the final message is refused.
    EXPECT_FALSE(s.final(rfc_client_final));
}

TEST(Scram, WrongProofUnknownUserAndTamperingAreRefused) {
    auto cred = rfc_credential();
    auto lookup = [&](const std::string& u) -> std::optional<scram_credential> {
        if (u == "user") return cred;
        return std::nullopt;
    };
    {
        scram_server s(scram_mechanism::sha256, lookup, std::string(rfc_server_nonce));
        ASSERT_TRUE(s.first(rfc_client_first));
        std::string bad(rfc_client_final);
        bad[bad.size() - 5] = bad[bad.size() - 5] == 'A' ? 'B' : 'A'; // another proof
        auto r = s.final(bad);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), errc::invalid_argument);
    }
    {
        scram_server s(scram_mechanism::sha256, lookup, std::string(rfc_server_nonce));
        auto r = s.first("n,,n=nobody,r=abc");
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), errc::not_found);
    }
    {
        // The right proof for another server nonce does not pass.
        scram_server s(scram_mechanism::sha256, lookup, "other-nonce");
        ASSERT_TRUE(s.first(rfc_client_first));
        EXPECT_FALSE(s.final(rfc_client_final));
    }
    {
        scram_server s(scram_mechanism::sha256, lookup, std::string(rfc_server_nonce));
        EXPECT_FALSE(s.first("p=tls-unique,,n=user,r=abc")); // channel binding
        EXPECT_FALSE(s.first("n,,r=abc,n=user"));            // order
        EXPECT_FALSE(s.first("n,,n=us=er,r=abc"));           // bad escape
        EXPECT_FALSE(s.first(""));
    }
}

std::string hmac256(std::string_view key, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         out, &len);
    return std::string(reinterpret_cast<char*>(out), len);
}

/// A SCRAM-SHA-256 client-final message for password "pencil" over `server_first`, with
/// `nonce` as its r= value (the proof computed over exactly that message).
std::string client_final(const std::string& client_first_bare, const std::string& server_first,
                         const std::string& nonce) {
    auto salted = scram_salted_password(scram_mechanism::sha256, "pencil", *base64_decode(rfc_salt_b64), 4096);
    auto client_key = hmac256(salted, "Client Key");
    unsigned char stored[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(client_key.data(), client_key.size(), stored, &n, EVP_sha256(), nullptr);
    std::string without_proof = "c=biws,r=" + nonce;
    auto sig = hmac256(std::string_view(reinterpret_cast<char*>(stored), n),
                       client_first_bare + "," + server_first + "," + without_proof);
    std::string proof(client_key.size(), '\0');
    for (size_t i = 0; i < proof.size(); ++i) proof[i] = char(client_key[i] ^ sig[i]);
    return without_proof + ",p=" + base64_encode(proof);
}

TEST(Scram, AcceptsLibrdkafkaRepeatedClientNonceOnly) {
    // librdkafka < 2.6.1 sends r=<client nonce><server's r value>, with a proof over that
    // message: accepted; any other nonce is refused even with a valid proof over it.
    auto cred = rfc_credential();
    auto lookup = [&](const std::string&) -> std::optional<scram_credential> { return cred; };
    const std::string bare = "n=user,r=rOprNGfwEbeRWgbNEkqO", sf(rfc_server_first);
    const std::string full = "rOprNGfwEbeRWgbNEkqO" + std::string(rfc_server_nonce);
    EXPECT_EQ(client_final(bare, sf, full), rfc_client_final); // the helper matches the RFC
    for (auto [nonce, ok] : {std::pair{full, true}, {"rOprNGfwEbeRWgbNEkqO" + full, true}, {full + "X", false},
                             {std::string("rOprNGfwEbeRWgbNEkqO"), false}, {"X" + full, false}}) {
        scram_server s(scram_mechanism::sha256, lookup, std::string(rfc_server_nonce));
        ASSERT_TRUE(s.first(rfc_client_first));
        EXPECT_EQ(bool(s.final(client_final(bare, sf, nonce))), ok) << nonce;
    }
}

TEST(Scram, Sha512RoundTripAndPasswordCheck) {
    auto salt = scram_random_salt();
    auto cred = scram_derive(scram_mechanism::sha512, "s3cret", salt, 4096);
    EXPECT_EQ(cred.stored_key.size(), 64u);
    EXPECT_TRUE(scram_check_password(scram_mechanism::sha512, cred, "s3cret"));
    EXPECT_FALSE(scram_check_password(scram_mechanism::sha512, cred, "s3cret!"));
    // From the salted password (AlterUserScramCredentials) the same keys come out.
    auto salted = scram_salted_password(scram_mechanism::sha512, "s3cret", salt, 4096);
    auto c2 = scram_from_salted(scram_mechanism::sha512, salted, salt, 4096);
    EXPECT_EQ(c2.stored_key, cred.stored_key);
    EXPECT_EQ(c2.server_key, cred.server_key);
}

TEST(Scram, Base64AndPlain) {
    EXPECT_EQ(base64_encode("biws"), "Yml3cw==");
    EXPECT_EQ(base64_decode("biws"), std::optional<std::string>("n,,"));
    EXPECT_EQ(base64_decode(""), std::optional<std::string>(""));
    EXPECT_FALSE(base64_decode("biw"));
    EXPECT_FALSE(base64_decode("b=ws"));
    EXPECT_FALSE(base64_decode("bi*s"));
    auto p = parse_plain(std::string_view("\0alice\0pw", 9));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->username, "alice");
    EXPECT_EQ(p->password, "pw");
    EXPECT_FALSE(parse_plain(std::string_view("alice\0pw", 8)));
    EXPECT_FALSE(parse_plain(std::string_view("bob\0alice\0pw", 12)));
}

} // namespace
} // namespace floe::kafka
