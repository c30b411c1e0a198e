// sasl_session: KIP-368 sessions (lifetime told to v1+ clients, re-authentication on the same
// connection with the same mechanism and principal, expiry), over PLAIN so each exchange is
// one SaslAuthenticate round.
#include "kafka/sasl.h"
#include "kafka/scram.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace floe::kafka {
namespace {

using namespace std::chrono_literals;

class SaslSession : public ::testing::Test {
protected:
    void SetUp() override {
        dir = std::filesystem::temp_directory_path() / ("floe-sasl-test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        users = std::make_unique<user_store>(dir);
        for (auto [name, pw] : {std::pair{"alice", "alice-pw"}, std::pair{"bob", "bob-pw"}})
            ASSERT_TRUE(users->upsert(name, scram_mechanism::sha512,
                                      scram_derive(scram_mechanism::sha512, pw, scram_random_salt(), 4096)));
    }
    void TearDown() override { std::filesystem::remove_all(dir); }

    struct answer {
        sasl_session::outcome outcome;
        int16_t error = -1;
        int64_t lifetime = -1; ///< SaslAuthenticate v1+ only
    };
    static request_header header(api_key k, int16_t v) {
        request_header h;
        h.api_key = int16_t(k);
        h.api_version = v;
        h.correlation_id = 7;
        h.supported = true;
        return h;
    }
    /// Skips the size prefix and correlation id of the answer in `out`.
    static kreader body_of(const byte_buffer& out) {
        return kreader(bytes_view(out.data() + 8, out.size() - 8), false);
    }
    answer handshake(sasl_session& s, int16_t v, std::string_view mech) {
        byte_buffer body, out;
        kwriter(body, false).str(mech);
        answer a{s.handle(header(api_key::sasl_handshake, v), bytes_view(body.data(), body.size()), out)};
        auto r = body_of(out);
        a.error = *r.i16();
        return a;
    }
    answer plain(sasl_session& s, int16_t v, std::string_view user, std::string_view pw) {
        std::string msg(1, '\0'); // authzid (empty), user, password
        msg.append(user);
        msg.push_back('\0');
        msg.append(pw);
        byte_buffer body, out;
        kwriter(body, false).bytes(bytes_view(reinterpret_cast<const uint8_t*>(msg.data()), msg.size()));
        answer a{s.handle(header(api_key::sasl_authenticate, v), bytes_view(body.data(), body.size()), out)};
        auto r = body_of(out);
        a.error = *r.i16();
        EXPECT_TRUE(r.nstr());
        EXPECT_TRUE(r.bytes());
        if (v >= 1) a.lifetime = *r.i64();
        return a;
    }
    /// Handshake plus authentication, both expected to pass.
    void login(sasl_session& s, int16_t v, std::string_view user, std::string_view pw) {
        auto h = handshake(s, 1, "PLAIN");
        ASSERT_EQ(h.outcome, sasl_session::outcome::ok);
        ASSERT_EQ(h.error, 0);
        auto a = plain(s, v, user, pw);
        ASSERT_EQ(a.outcome, sasl_session::outcome::ok);
        ASSERT_EQ(a.error, 0);
    }

    std::filesystem::path dir;
    std::unique_ptr<user_store> users;
    std::vector<std::string> mechanisms{"SCRAM-SHA-512", "PLAIN"};
};

TEST_F(SaslSession, LifetimeIsToldToV1ClientsAndTheSessionExpires) {
    sasl_session s(users.get(), mechanisms, "/127.0.0.1:1", 2000ms);
    ASSERT_EQ(handshake(s, 1, "PLAIN").error, 0);
    auto before = std::chrono::steady_clock::now();
    auto a = plain(s, 1, "alice", "alice-pw");
    EXPECT_EQ(a.error, 0);
    EXPECT_EQ(a.lifetime, 2000);
    EXPECT_TRUE(s.authenticated());
    EXPECT_EQ(s.principal(), "User:alice");
    EXPECT_FALSE(s.expired(before + 1900ms));
    EXPECT_TRUE(s.expired(std::chrono::steady_clock::now() + 2001ms));
}

TEST_F(SaslSession, WithoutAMaximumSessionsNeverEnd) {
    sasl_session s(users.get(), mechanisms, "/127.0.0.1:1");
    ASSERT_EQ(handshake(s, 1, "PLAIN").error, 0);
    auto a = plain(s, 1, "alice", "alice-pw");
    EXPECT_EQ(a.lifetime, 0);
    EXPECT_FALSE(s.expired(std::chrono::steady_clock::now() + 24h * 365));
}

TEST_F(SaslSession, ReauthenticationKeepsThePrincipalAndRenewsTheSession) {
    sasl_session s(users.get(), mechanisms, "/127.0.0.1:1", 2000ms);
    login(s, 1, "alice", "alice-pw");
    auto later = std::chrono::steady_clock::now() + 2500ms;
    ASSERT_TRUE(s.expired(later));
    // During the exchange the connection keeps its principal.
    auto h = handshake(s, 1, "PLAIN");
    EXPECT_EQ(h.outcome, sasl_session::outcome::ok);
    EXPECT_EQ(h.error, 0);
    EXPECT_TRUE(s.authenticated());
    EXPECT_EQ(s.principal(), "User:alice");
    auto a = plain(s, 1, "alice", "alice-pw");
    EXPECT_EQ(a.outcome, sasl_session::outcome::ok);
    EXPECT_EQ(a.error, 0);
    EXPECT_EQ(a.lifetime, 2000);
    EXPECT_EQ(s.principal(), "User:alice");
    EXPECT_FALSE(s.expired(std::chrono::steady_clock::now() + 1900ms));
}

TEST_F(SaslSession, ReauthenticationAsAnotherUserOrWithARemovedCredentialEndsTheSession) {
    // alice re-authenticates as bob; then alice, removed meanwhile, as herself: both refused.
    for (bool removed : {false, true}) {
        sasl_session s(users.get(), mechanisms, "/127.0.0.1:1", 2000ms);
        login(s, 1, "alice", "alice-pw");
        if (removed) {
            ASSERT_TRUE(users->remove("alice", std::nullopt));
        }
        ASSERT_EQ(handshake(s, 1, "PLAIN").error, 0);
        auto a = removed ? plain(s, 1, "alice", "alice-pw") : plain(s, 1, "bob", "bob-pw");
        EXPECT_EQ(a.outcome, sasl_session::outcome::refused) << removed;
        EXPECT_EQ(a.error, int16_t(kerr::sasl_authentication_failed)) << removed;
        EXPECT_FALSE(s.authenticated()) << removed;
    }
}

TEST_F(SaslSession, ReauthenticationWithAnotherMechanismIsRefused) {
    sasl_session s(users.get(), mechanisms, "/127.0.0.1:1", 2000ms);
    login(s, 1, "alice", "alice-pw");
    auto h = handshake(s, 1, "SCRAM-SHA-512");
    EXPECT_EQ(h.outcome, sasl_session::outcome::refused);
    EXPECT_EQ(h.error, int16_t(kerr::unsupported_sasl_mechanism));
}

TEST_F(SaslSession, AV0ClientCannotReauthenticateButItsSessionEnds) {
    sasl_session s(users.get(), mechanisms, "/127.0.0.1:1", 2000ms);
    login(s, 0, "alice", "alice-pw");
    auto h = handshake(s, 1, "PLAIN");
    EXPECT_EQ(h.outcome, sasl_session::outcome::refused);
    EXPECT_EQ(h.error, int16_t(kerr::illegal_sasl_state));
    EXPECT_TRUE(s.expired(std::chrono::steady_clock::now() + 2001ms));
}

} // namespace
} // namespace floe::kafka
