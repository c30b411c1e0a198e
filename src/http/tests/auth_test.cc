#include "http/auth.h"
#include "http/server.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
    token_guard g(file, {"/healthz"});
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

} // namespace
} // namespace floe::http
