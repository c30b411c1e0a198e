#pragma once

// The Iceberg REST catalog as a client (floe.storage.remote.catalog.type=rest): libcurl for
// HTTP, the spec's requests and error model. The server writes the metadata files: a commit
// sends requirements (assert-table-uuid, assert-ref-snapshot-id on main) and updates
// (add-snapshot, set-snapshot-ref, remove-snapshots, set/remove-properties) computed from the
// base version and the next one that table.cc built (catalog::commit_change), nothing else.
//
// What a commit costs does not grow with the table's history beyond one serialisation: a
// loadTable carries If-None-Match with the ETag of the version last seen (a 304 answers "still
// that one", no body); the metadata a 200 carries goes into metadata_cache::global() under its
// location, so the commit that follows does not read the file again; and a commit's answer is
// compared byte for byte with this client's own serialisation of the next version (with the
// server's last-updated-ms): when they are equal the client's version is cached as the
// committed one, else the answer is parsed and cached.

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
    /// loadTable with If-None-Match (the ETag of the version last loaded or committed), so an
    /// unchanged table is answered 304 without its metadata.
    bool conditional_loads = true;
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
    result<server_commit> commit_change(const table_ident& t, const std::string& expected, const commit_base& base,
                                        table_metadata& next, snapshot_json_cache& texts) override;

    struct http_response {
        long status = 0;
        std::string body;
        std::string etag;  ///< the ETag header, if any
    };

private:
    explicit rest_catalog(rest_catalog_options opts);
    /// One request with the auth and extra headers; a transport failure (timeout, refused
    /// connection) is errc::unavailable. A 401 gets a fresh OAuth2 token and one more try.
    result<http_response> send(const std::string& method, const std::string& path, const std::string& body,
                               bool vend = false, const std::string& if_none_match = {});
    /// send() retried with backoff on transport errors, 5xx and 429 (for requests that may be repeated).
    result<http_response> send_idempotent(const std::string& method, const std::string& path, bool vend = false,
                                          const std::string& if_none_match = {});
    /// loadTable: the table's metadata location, nullopt when it does not exist. `conditional`:
    /// with If-None-Match when a version of the table is known. `body`: set to the parsed answer
    /// when one came (not on a 304).
    result<std::optional<std::string>> load(const table_ident& t, bool conditional, nlohmann::json* body);
    result<std::string> bearer();
    result<void> refresh_token_locked();
    std::string table_path(const table_ident& t) const;
    std::string ns_path(const std::string& ns) const;
    /// Remembers a loaded or committed table (its location and ETag), puts its metadata into
    /// metadata_cache::global() unless held there (`cache_metadata`), and hands vended
    /// credentials on. `j` is the parsed answer; returns its metadata-location (empty if none).
    std::string remember(const table_ident& t, const nlohmann::json& j, const std::string& etag,
                         bool cache_metadata = true);
    /// POSTs a CommitTableRequest for the version at `expected`. The 200 answer; errc::conflict
    /// on 409; on a 5xx, 408 or no answer the table is reloaded and `landed` (given the current
    /// metadata JSON) decides: the commit is there (an answer with an empty body and
    /// `landed_at` set to the location) or the outcome stays unknown (errc::unavailable).
    result<http_response> post_commit(const table_ident& t, const std::string& expected, const std::string& request,
                                      const std::function<bool(const nlohmann::json&)>& landed,
                                      std::string& landed_at);
    /// The version a commit's answer holds when it is `next` with the server's
    /// last-updated-ms, byte for byte (Floe's own server): then `next` gets that timestamp and
    /// the location is returned; else nullopt and `next` is unchanged.
    std::optional<std::string> same_as_answer(const std::string& body, table_metadata& next,
                                              snapshot_json_cache& texts) const;

    rest_catalog_options _opts;
    std::string _prefix_path;  ///< "/v1" or "/v1/<prefix>"
    std::mutex _mu;            ///< guards the token, the handle pool and the loaded tables
    std::string _token;
    std::chrono::steady_clock::time_point _refresh_at{};
    bool _oauth = false;
    std::vector<void*> _idle;  ///< idle curl easy handles (each keeps its connections)
    struct known_version {
        std::string location;
        std::string etag;  ///< empty: the server sent none
        /// The answer vended storage credentials: loaded in full every time (they expire).
        bool vended = false;
    };
    /// The version of each table last loaded or committed: "ns\x1fname" -> location and ETag.
    std::map<std::string, known_version> _loaded;
};

/// Opens the REST catalog from a URI and the rest of the options.
result<std::unique_ptr<catalog>> open_rest_catalog(rest_catalog_options opts);

} // namespace floe::iceberg
