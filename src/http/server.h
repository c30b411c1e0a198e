#pragma once

#include "base/result.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace floe::http {

struct request {
    std::string method;                          ///< "GET"
    std::string target;                          ///< "/v1/topics?limit=5"
    std::string path;                            ///< "/v1/topics" (percent-decoded)
    std::multimap<std::string, std::string> query; ///< decoded query parameters
    std::map<std::string, std::string> headers;  ///< names lower-cased
    std::string body;
    std::string client_host; ///< the peer's address ("127.0.0.1")
    /// Who sent it, as a guard established ("User:alice"); empty when no guard applied.
    std::string principal;

    std::optional<std::string> param(const std::string& name) const;
};

struct response {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    /// Sent no sooner than this after the request was handled (a failed authentication's
    /// backoff); the connection waits on a timer, no thread is held.
    std::chrono::milliseconds delay{0};
    /// A streamed answer (Server-Sent Events): after the head, with chunked transfer encoding
    /// and no Content-Length, the connection calls `stream` on its I/O thread and writes each
    /// chunk it returns as soon as it has it, until it returns nullopt (the end). An empty
    /// chunk asks for a pause of `stream_pause` before the next call (nothing new yet). Each
    /// call must do bounded work; the stream is dropped (with what it captured) when the
    /// client goes away, found at the next write. `body` is not sent.
    std::function<std::optional<std::string>()> stream;
    std::chrono::milliseconds stream_pause{250};

    static response json(int status, std::string body);
    /// {"error": {"status": N, "message": "..."}}
    static response error(int status, std::string_view message);
};

/// Handlers run on the server's I/O threads: they must not block for long.
using handler = std::function<response(const request&)>;
/// Runs before routing (authentication): returns the answer to send instead (401, 403), or
/// nothing to go on; may set request::principal. Must be thread-safe.
using guard = std::function<std::optional<response>(request&)>;

/// TLS of the HTTP plane: PEM certificate chain and key (TLS 1.2 at least).
struct tls_files {
    std::string cert_file;
    std::string key_file;
};

struct server_options {
    std::string host = "127.0.0.1";
    uint16_t port = 8080; ///< 0: any free port (see server::port())
    size_t threads = 1;
    size_t max_header_bytes = 16 * 1024;
    size_t max_body_bytes = 1024 * 1024;
    std::chrono::milliseconds idle_timeout{30'000};
    std::optional<tls_files> tls; ///< set: HTTPS only (a plaintext request is refused)
    /// The body of the errors the server itself answers (400, 404, 405, 413, 431, 500); unset:
    /// response::error. The schema registry's listener answers Confluent's error body instead.
    std::function<response(int status, std::string_view message)> error_body;
};

/// A small HTTP/1.1 server (keep-alive, Content-Length bodies, no chunked uploads) for the admin
/// plane. Owns its io_context and threads; routes are fixed before start(). A slow or broken
/// client only holds its own connection: reads are bounded in size and time.
class server {
public:
    explicit server(server_options opts);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// Exact path match for a method; the longest matching prefix route wins otherwise.
    void route(std::string method, std::string path, handler h);
    void route_prefix(std::string method, std::string prefix, handler h);
    /// Guards every request whose path starts with `prefix` ("" for all); the longest prefix
    /// wins, so a route added later under a guarded prefix (e.g. /iceberg) is guarded too.
    void guard_prefix(std::string prefix, guard g);

    /// Binds and starts serving; fails with errc::already_exists when the address is taken,
    /// errc::unavailable when it cannot be bound otherwise.
    result<void> start();
    /// The bound port (after start).
    uint16_t port() const noexcept { return _port; }
    /// Stops accepting, closes connections, joins threads. Idempotent.
    void stop();
    /// Re-reads the TLS certificate and key (SIGHUP): new connections use them, open ones keep
    /// theirs. On failure the old ones stay. No-op without TLS.
    result<void> reload_tls();

    /// The guard, then the route, of `r`.
    response dispatch(request r) const;

private:
    struct impl;
    std::unique_ptr<impl> _impl;
    server_options _opts;
    struct route_entry {
        std::string method, path;
        bool prefix;
        handler h;
    };
    std::vector<route_entry> _routes;
    std::vector<std::pair<std::string, guard>> _guards;
    uint16_t _port = 0;
};

/// Parses the request line and headers (everything before the blank line; the server has
/// bounded its size). Fuzzed by http_request_fuzz.
/// More headers than max_request_headers is errc::out_of_range (answered 431).
inline constexpr size_t max_request_headers = 100;
result<request> parse_request_head(std::string_view head);

/// Parses "a=1&b=x%20y" into decoded pairs; '+' means space.
std::multimap<std::string, std::string> parse_query(std::string_view q);
std::string percent_decode(std::string_view s);
std::string_view status_text(int status);

} // namespace floe::http
