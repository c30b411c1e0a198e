// Floe's REST catalog client against a loopback stand-in server: what it sends (bearer token,
// extra headers, the vended-credentials header, the prefix from /v1/config) and what it makes
// of the answers (vended S3 credentials, the spec's error model in error messages).
#include "base/uuid.h"
#include "http/iceberg_rest.h"
#include "http/server.h"
#include "iceberg/metadata_cache.h"
#include "iceberg/rest_catalog.h"
#include "iceberg/table.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
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

// The REST client against Floe's own REST server (over a SQLite catalog, on loopback): what a
// commit sends and caches, loadTable's ETag and 304, and commits that race.
class rest_roundtrip : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = std::filesystem::temp_directory_path() / fmt::format("floe-rest-roundtrip-{}", uuid::random().to_string());
        std::filesystem::create_directories(_dir);
        _warehouse = iceberg::file_uri((_dir / "wh").string());
        auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "cat.db").string(), "floe");
        ASSERT_TRUE(cat) << cat.error().message();
        _rest = std::make_unique<http::iceberg_rest>(std::shared_ptr<iceberg::catalog>(std::move(*cat)), _io,
                                                     http::iceberg_rest_options{.warehouse = _warehouse});
        // The server's answers are recorded on their way out (GET and POST of tables).
        auto h = [this](const http::request& r) {
            auto resp = _rest->handle(r);
            std::lock_guard g(_mu);
            if (r.path.find("/tables/") != std::string::npos) _statuses.push_back(fmt::format("{} {}", r.method, resp.status));
            return resp;
        };
        _srv.route_prefix("GET", "/iceberg/", h);
        _srv.route_prefix("POST", "/iceberg/", h);
        ASSERT_TRUE(_srv.start());
    }
    void TearDown() override {
        _srv.stop();
        std::error_code ec;
        std::filesystem::remove_all(_dir, ec);
    }
    std::unique_ptr<iceberg::rest_catalog> client() {
        iceberg::rest_catalog_options o;
        o.uri = fmt::format("http://127.0.0.1:{}/iceberg", _srv.port());
        auto c = iceberg::rest_catalog::open(o);
        EXPECT_TRUE(c) << c.error().message();
        return c ? std::move(*c) : nullptr;
    }
    iceberg::data_file file(int i) {
        iceberg::data_file f;
        f.file_path = fmt::format("{}/floe/t/data/f-{}.parquet", _warehouse, i);
        f.partition = {avro::datum::string("s-0")};
        f.record_count = 10;
        f.file_size_in_bytes = 1000;
        return f;
    }
    result<iceberg::commit_result> append(iceberg::catalog& cat, int i) {
        iceberg::append_request req;
        req.files.push_back(file(i));
        return iceberg::append_files(cat, *_io, _t, std::move(req));
    }
    std::vector<std::string> statuses() {
        std::lock_guard g(_mu);
        return std::exchange(_statuses, {});
    }
    /// The bytes of the file the catalog points at, as the server wrote them.
    std::string current_file(iceberg::catalog& cat) {
        auto loc = cat.metadata_location(_t);
        EXPECT_TRUE(loc && *loc);
        auto bytes = _io->read(**loc);
        EXPECT_TRUE(bytes);
        return bytes ? std::string(as_chars(*bytes)) : std::string();
    }

    std::filesystem::path _dir;
    std::string _warehouse;
    std::shared_ptr<iceberg::local_file_io> _io = std::make_shared<iceberg::local_file_io>();
    std::unique_ptr<http::iceberg_rest> _rest;
    http::server _srv{{.host = "127.0.0.1", .port = 0, .threads = 2}};
    std::mutex _mu;
    std::vector<std::string> _statuses;
    iceberg::table_ident _t{"floe", "t"};
};

TEST_F(rest_roundtrip, commits_cache_exactly_the_servers_version_and_loads_are_answered_304) {
    auto c = client();
    ASSERT_TRUE(c);
    ASSERT_TRUE(iceberg::create_table_if_missing(*c, *_io, _t, _warehouse + "/floe/t"));
    for (int i = 0; i < 4; ++i) {
        statuses();
        auto r = append(*c, i);
        ASSERT_TRUE(r) << r.error().message();
        // One conditional load answered "not modified" (the client knew the version it or the
        // create wrote), then the commit.
        if (i > 0) {
            EXPECT_EQ(statuses(), (std::vector<std::string>{"GET 304", "POST 200"}));
        }
        // What the client cached under the new location is the file the server wrote, byte for byte.
        auto cached = iceberg::metadata_cache::global().get(r->metadata_location);
        ASSERT_TRUE(cached) << "commit " << i << " was not cached";
        EXPECT_EQ(iceberg::to_json_text(*cached), current_file(*c)) << "commit " << i;
    }
    // The file written by the server holds every commit, in order.
    auto m = iceberg::parse_metadata(current_file(*c));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->snapshots.size(), 4u);
    EXPECT_EQ(m->last_sequence_number, 4);
    auto live = iceberg::live_files(*_io, *m);
    ASSERT_TRUE(live) << live.error().message();
    EXPECT_EQ(live->size(), 4u);
}

TEST_F(rest_roundtrip, etag_names_the_version_and_a_stale_one_gets_the_metadata) {
    auto c = client();
    ASSERT_TRUE(c);
    ASSERT_TRUE(iceberg::create_table_if_missing(*c, *_io, _t, _warehouse + "/floe/t"));
    auto first = c->metadata_location(_t);
    ASSERT_TRUE(first && *first);
    http::request get;
    get.method = "GET";
    get.target = get.path = "/iceberg/v1/namespaces/floe/tables/t";
    auto full = _rest->handle(get);
    ASSERT_EQ(full.status, 200);
    ASSERT_EQ(full.headers.size(), 1u);
    EXPECT_EQ(full.headers[0].first, "ETag");
    const auto etag = full.headers[0].second;
    EXPECT_EQ(etag, http::iceberg_etag(**first));
    get.headers["if-none-match"] = etag;
    auto same = _rest->handle(get);
    EXPECT_EQ(same.status, 304);
    EXPECT_TRUE(same.body.empty());
    ASSERT_TRUE(append(*c, 0));
    auto moved = _rest->handle(get);  // the same If-None-Match: the table moved on
    ASSERT_EQ(moved.status, 200);
    EXPECT_NE(moved.headers.at(0).second, etag);
    auto j = nlohmann::json::parse(moved.body);
    EXPECT_EQ(j["metadata"]["snapshots"].size(), 1u);
    get.headers["if-none-match"] = "\"0123\"";
    EXPECT_EQ(_rest->handle(get).status, 200);
}

TEST_F(rest_roundtrip, a_client_behind_another_reloads_and_both_commits_land) {
    auto a = client(), b = client();
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(iceberg::create_table_if_missing(*a, *_io, _t, _warehouse + "/floe/t"));
    ASSERT_TRUE(append(*a, 0));
    ASSERT_TRUE(append(*b, 1));  // b never saw a's version: loaded in full
    ASSERT_TRUE(append(*a, 2));  // a's ETag is stale now: loaded in full again
    statuses();
    // Two threads of the two clients committing at once: conflicts retried from fresh metadata.
    std::thread ta([&] {
        for (int i = 10; i < 20; ++i) EXPECT_TRUE(append(*a, i));
    });
    std::thread tb([&] {
        for (int i = 20; i < 30; ++i) EXPECT_TRUE(append(*b, i));
    });
    ta.join();
    tb.join();
    auto m = iceberg::parse_metadata(current_file(*a));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->snapshots.size(), 23u);
    auto live = iceberg::live_files(*_io, *m);
    ASSERT_TRUE(live) << live.error().message();
    EXPECT_EQ(live->size(), 23u);
    // Each client's cache, where it holds the current version, holds the server's bytes.
    if (auto cached = iceberg::metadata_cache::global().get(*a->metadata_location(_t).value())) {
        EXPECT_EQ(iceberg::to_json_text(*cached), current_file(*a));
    }
}

} // namespace
} // namespace floe
