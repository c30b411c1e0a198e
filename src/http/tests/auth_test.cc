#include "http/auth.h"
#include "http/server.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace floe::http {
namespace {

request get(std::string path, std::string token = {}) {
    request r;
    r.method = "GET";
    r.path = std::move(path);
    r.client_host = "127.0.0.1";
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    return r;
}

TEST(HttpAuth, GuardsByLongestPrefixBeforeRouting) {
    server s({});
    s.route("GET", "/v1/x", [](const request& r) { return response::json(200, r.principal); });
    s.route("GET", "/open", [](const request& r) { return response::json(200, r.principal); });
    s.route_prefix("GET", "/iceberg/", [](const request& r) { return response::json(200, r.principal); });
    s.guard_prefix("", [](request& r) -> std::optional<response> {
        r.principal = "User:ANONYMOUS";
        return std::nullopt;
    });
    s.guard_prefix("/v1", [](request&) -> std::optional<response> { return response::error(401, "no"); });
    EXPECT_EQ(s.dispatch(get("/v1/x")).status, 401);
    EXPECT_EQ(s.dispatch(get("/open")).body, "User:ANONYMOUS");
    // A route added later under an unguarded prefix still passes the catch-all guard.
    EXPECT_EQ(s.dispatch(get("/iceberg/v1/config")).body, "User:ANONYMOUS");
    EXPECT_EQ(s.dispatch(get("/v1/missing")).status, 401); // refused before a 404 could tell
}

TEST(HttpAuth, BearerTokensStoredAsDigests) {
    auto dir = std::filesystem::temp_directory_path() / ("floe-http-auth-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto file = dir / "tokens";
    std::ofstream(file) << "# comment\nUser:alice " << token_digest("t-alice") << "  # trailing\n\n";
    token_guard g(file, {"/healthz"}, {.first = std::chrono::milliseconds(0), .max = std::chrono::milliseconds(0)});
    ASSERT_TRUE(g.load());
    auto r = get("/v1/topics", "t-alice");
    EXPECT_FALSE(g(r));
    EXPECT_EQ(r.principal, "User:alice");
    auto wrong = get("/v1/topics", "t-bob");
    auto refused = g(wrong);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 401);
    EXPECT_NE(refused->body.find("\"status\":401"), std::string::npos);
    EXPECT_EQ(refused->body.find("t-bob"), std::string::npos); // the token is never echoed
    auto none = get("/v1/topics");
    EXPECT_EQ(g(none)->headers.at(0).first, "WWW-Authenticate");
    auto open = get("/healthz");
    EXPECT_FALSE(g(open));
    EXPECT_EQ(open.principal, "User:ANONYMOUS");
    // The file is re-read when it changes: bob's token now works, alice's no longer.
    std::ofstream(file) << "User:bob " << token_digest("t-bob") << " and more\n";
    EXPECT_FALSE(parse_tokens_file("User:bob sha256:00 extra"));
    std::ofstream(file) << "User:bob " << token_digest("t-bob") << "\n";
    auto bob = get("/v1/topics", "t-bob");
    EXPECT_FALSE(g(bob));
    EXPECT_EQ(bob.principal, "User:bob");
    auto alice = get("/v1/topics", "t-alice");
    EXPECT_TRUE(g(alice));
    EXPECT_FALSE(parse_tokens_file("alice sha256:" + std::string(64, 'a')));   // no Type:
    EXPECT_FALSE(parse_tokens_file("User:alice plaintext-token"));              // not a digest
    std::filesystem::remove_all(dir);
}

TEST(HttpAuth, GuessingIsAnsweredLaterAndLaterButAValidTokenNeverWaits) {
    auto dir = std::filesystem::temp_directory_path() / ("floe-http-slow-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto file = dir / "tokens";
    std::ofstream(file) << "User:alice " << token_digest("t-alice") << "\n";
    using std::chrono::milliseconds;
    token_guard g(file, {}, {.first = milliseconds(500), .max = milliseconds(4000)});
    ASSERT_TRUE(g.load());
    auto none = get("/v1/topics");
    auto no_token = g(none);
    EXPECT_EQ(no_token->status, 401);
    EXPECT_EQ(no_token->delay, milliseconds(0)); // no credentials: not held against the address
    // Wrong tokens from one address: each 401 is answered later, doubling up to the maximum.
    std::vector<milliseconds> delays;
    for (int i = 0; i < 5; ++i) {
        auto wrong = get("/v1/topics", "guess-" + std::to_string(i));
        auto refused = g(wrong);
        ASSERT_TRUE(refused);
        EXPECT_EQ(refused->status, 401);
        delays.push_back(refused->delay);
    }
    EXPECT_EQ(delays, (std::vector<milliseconds>{milliseconds(500), milliseconds(1000), milliseconds(2000),
                                                  milliseconds(4000), milliseconds(4000)}));
    auto scheme = get("/v1/topics");
    scheme.headers["authorization"] = "Basic YWxpY2U6eA==";
    EXPECT_EQ(g(scheme)->delay, milliseconds(4000)); // a wrong scheme is a failure too
    // The right token from the same address, right after: served at once, not delayed.
    auto ok = get("/v1/topics", "t-alice");
    EXPECT_FALSE(g(ok));
    EXPECT_EQ(ok.principal, "User:alice");
    // ... and it does not reset the address: the next guess still waits the longest.
    auto guess = get("/v1/topics", "guess-after");
    EXPECT_EQ(g(guess)->delay, milliseconds(4000));
    // Another address starts at the first delay.
    auto other = get("/v1/topics", "guess-other");
    other.client_host = "127.0.0.2";
    EXPECT_EQ(g(other)->delay, milliseconds(500));
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace floe::http
