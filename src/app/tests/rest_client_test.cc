// Floe's REST catalog client against a loopback stand-in server: what it sends (bearer token,
// extra headers, the vended-credentials header, the prefix from /v1/config) and what it makes
// of the answers (vended S3 credentials, the spec's error model in error messages).
#include "http/server.h"
#include "iceberg/rest_catalog.h"

#include <gtest/gtest.h>

#include <mutex>

namespace floe {
namespace {

struct seen_request {
    std::string method, path;
    std::map<std::string, std::string> headers;
};

class rest_client : public ::testing::Test {
protected:
    void SetUp() override {
        _srv.route("GET", "/cat/v1/config", [this](const http::request& r) {
            record(r);
            return http::response::json(200, R"({"defaults":{"prefix":"d"},"overrides":{"prefix":"wh1"}})");
        });
        _srv.route_prefix("GET", "/cat/v1/wh1/namespaces/", [this](const http::request& r) {
            record(r);
            if (r.path.ends_with("/tables/missing"))
                return http::response::json(
                    404, R"({"error":{"message":"Table does not exist: floe.missing","type":"NoSuchTableException","code":404}})");
            return http::response::json(
                200, R"({"metadata-location":"s3://b/t/metadata/00001-a.metadata.json",)"
                     R"("metadata":{"format-version":2,"table-uuid":"u","location":"s3://b/t"},)"
                     R"("config":{"s3.access-key-id":"CFGKEY","s3.secret-access-key":"cfgsecret"},)"
                     R"("storage-credentials":[{"prefix":"s3://b/","config":{"s3.access-key-id":"VENDED",)"
                     R"("s3.secret-access-key":"vsecret","s3.session-token":"vtoken"}}]})");
        });
        _srv.route_prefix("POST", "/cat/v1/wh1/namespaces/", [this](const http::request& r) {
            record(r);
            return http::response::json(
                409, R"({"error":{"message":"Requirement failed: branch main has changed","type":"CommitFailedException","code":409}})");
        });
        ASSERT_TRUE(_srv.start());
    }
    void record(const http::request& r) {
        std::lock_guard g(_mu);
        _seen.push_back({r.method, r.path, r.headers});
    }
    iceberg::rest_catalog_options options() {
        iceberg::rest_catalog_options o;
        o.uri = fmt::format("http://127.0.0.1:{}/cat", _srv.port());
        o.token = "tok123";
        o.headers = {{"X-Extra", "yes"}};
        o.on_vended_credentials = [this](const aws::credentials& c) { _vended = c; };
        return o;
    }

    http::server _srv{{.host = "127.0.0.1", .port = 0}};
    std::mutex _mu;
    std::vector<seen_request> _seen;
    std::optional<aws::credentials> _vended;
};

TEST_F(rest_client, sends_auth_headers_prefix_and_takes_vended_credentials) {
    auto cat = iceberg::rest_catalog::open(options());
    ASSERT_TRUE(cat) << cat.error().message();
    auto loc = (*cat)->metadata_location({"floe", "t"});
    ASSERT_TRUE(loc) << loc.error().message();
    EXPECT_EQ(**loc, "s3://b/t/metadata/00001-a.metadata.json");
    ASSERT_TRUE(_vended);
    // storage-credentials come before the table config.
    EXPECT_EQ(_vended->access_key_id, "VENDED");
    EXPECT_EQ(_vended->secret_access_key, "vsecret");
    EXPECT_EQ(_vended->session_token, "vtoken");
    std::lock_guard g(_mu);
    ASSERT_EQ(_seen.size(), 2u);
    EXPECT_EQ(_seen[1].path, "/cat/v1/wh1/namespaces/floe/tables/t");  // the override's prefix
    for (auto& s : _seen) {
        EXPECT_EQ(s.headers["authorization"], "Bearer tok123");
        EXPECT_EQ(s.headers["x-extra"], "yes");
    }
    EXPECT_EQ(_seen[1].headers["x-iceberg-access-delegation"], "vended-credentials");
}

TEST_F(rest_client, missing_table_and_errors_carry_the_type_and_message) {
    auto cat = iceberg::rest_catalog::open(options());
    ASSERT_TRUE(cat);
    auto missing = (*cat)->metadata_location({"floe", "missing"});
    ASSERT_TRUE(missing);
    EXPECT_FALSE(*missing);
    // A commit answered 409: a conflict naming the error type and message.
    ASSERT_TRUE((*cat)->metadata_location({"floe", "t"}));
    auto r = (*cat)->commit_next({"floe", "t"}, "s3://b/t/metadata/00001-a.metadata.json",
                                 R"({"format-version":2,"table-uuid":"u","location":"s3://b/t","properties":{"a":"b"}})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::conflict);
    EXPECT_NE(r.error().message().find("409 CommitFailedException: Requirement failed: branch main has changed"),
              std::string::npos)
        << r.error().message();
}

TEST_F(rest_client, unreachable_catalog_fails_at_open) {
    auto o = options();
    o.uri = "http://127.0.0.1:1/nothing";
    o.max_attempts = 1;
    auto cat = iceberg::rest_catalog::open(o);
    ASSERT_FALSE(cat);
    EXPECT_EQ(cat.error().code(), errc::unavailable);
}

} // namespace
} // namespace floe
