#pragma once

// The Iceberg REST catalog as a client (floe.storage.remote.catalog.type=rest): libcurl for
// HTTP, the spec's requests and error model. The server writes the metadata files: a commit
// sends requirements (assert-table-uuid, assert-ref-snapshot-id on main) and updates
// (add-snapshot, set-snapshot-ref, remove-snapshots, set/remove-properties) computed from the
// base version and the next one that table.cc built (catalog::commit_next).

#include "iceberg/catalog.h"
#include "aws/credentials.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace floe::iceberg {

struct rest_catalog_options {
    std::string uri;        ///< base URI; requests go to <uri>/v1/...
    std::string warehouse;  ///< asked for at /v1/config (optional)
    std::string prefix;     ///< empty: from /v1/config overrides/defaults, else none
    std::string token;      ///< static bearer token
    std::string credential; ///< OAuth2 client credentials "id:secret" (or just "secret")
    std::string oauth2_server_uri;  ///< default <uri>/v1/oauth/tokens
    std::string scope = "catalog";
    std::map<std::string, std::string> headers;  ///< sent with every request
    /// Set: every request is signed with AWS SigV4 (these credentials, `sigv4_service` in
    /// `sigv4_region`) instead of carrying a bearer token (Glue's and S3 Tables' REST endpoints).
    std::shared_ptr<aws::credentials_provider> sigv4_credentials;
    std::string sigv4_service = "execute-api";
    std::string sigv4_region = "us-east-1";
    /// The configured `prefix` wins over the one /v1/config's overrides name (Nessie: the ref).
    bool prefix_wins = false;
    std::chrono::milliseconds request_timeout{30'000};
    std::chrono::milliseconds connect_timeout{5'000};
    int max_attempts = 4;  ///< reads and unknown-outcome checks, with backoff
    std::chrono::milliseconds retry_base{100};
    /// Called with the S3 credentials a loadTable response vends (its `config` or
    /// `storage-credentials`), for the S3 file_io.
    std::function<void(const aws::credentials&)> on_vended_credentials;
};

/// Thread-safe. Errors name the request and the server's error.type and message.
class rest_catalog final : public catalog {
public:
    /// Reads /v1/config (applying its defaults and overrides: prefix, warehouse) and, with
    /// OAuth2 credentials, gets the first token: a catalog that cannot be reached or refuses the
    /// credentials fails here.
    static result<std::unique_ptr<rest_catalog>> open(rest_catalog_options opts);
    ~rest_catalog() override;

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    result<void> swap(const table_ident& t, const std::string& expected, const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;
    bool server_side_commit() const override { return true; }
    result<std::string> commit_next(const table_ident& t, const std::string& expected,
                                    const std::string& next_json) override;

    struct http_response {
        long status = 0;
        std::string body;
    };

private:
    explicit rest_catalog(rest_catalog_options opts);
    /// One request with the auth and extra headers; a transport failure (timeout, refused
    /// connection) is errc::unavailable. A 401 gets a fresh OAuth2 token and one more try.
    result<http_response> send(const std::string& method, const std::string& path, const std::string& body,
                               bool vend = false);
    /// send() retried with backoff on transport errors, 5xx and 429 (for requests that may be repeated).
    result<http_response> send_idempotent(const std::string& method, const std::string& path, bool vend = false);
    result<std::string> bearer();
    result<void> refresh_token_locked();
    std::string table_path(const table_ident& t) const;
    std::string ns_path(const std::string& ns) const;
    /// Remembers a loaded table (location and metadata text) and hands vended credentials on.
    void remember(const table_ident& t, const std::string& response_body, std::string* location_out);

    rest_catalog_options _opts;
    std::string _prefix_path;  ///< "/v1" or "/v1/<prefix>"
    std::mutex _mu;            ///< guards the token, the handle pool and the loaded tables
    std::string _token;
    std::chrono::steady_clock::time_point _refresh_at{};
    bool _oauth = false;
    std::vector<void*> _idle;  ///< idle curl easy handles (each keeps its connections)
    /// The table as last loaded: "ns\x1fname" -> metadata location and its metadata (parsed
    /// once; the base a commit diffs against).
    std::map<std::string, std::pair<std::string, std::shared_ptr<const nlohmann::json>>> _loaded;
};

/// Opens the REST catalog from a URI and the rest of the options.
result<std::unique_ptr<catalog>> open_rest_catalog(rest_catalog_options opts);

} // namespace floe::iceberg
