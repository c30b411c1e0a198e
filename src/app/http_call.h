#pragma once

// A blocking HTTP request from a CLI command to a running `floe serve` (the schema registry's
// API, the admin plane's /v1): libcurl, a bearer token when given, one message on stderr when
// the server cannot be reached.

#include <optional>
#include <string>

namespace floe::app {

struct http_answer {
    long status = 0;
    std::string body;
};

struct http_call_options {
    std::string content_type = "application/json";
    std::string token;          ///< bearer token; empty: none
    long timeout_seconds = 30;
    std::string what = "floe serve"; ///< named in the "cannot reach" message
};

/// One request; nullopt (message printed) when the server cannot be reached.
std::optional<http_answer> http_call(const std::string& url, const std::string& method, const std::string& body,
                                     const http_call_options& o);

/// The first line of a token file (a trailing CR dropped); nullopt (message printed) when it
/// cannot be read.
std::optional<std::string> read_token_file(const std::string& path);

} // namespace floe::app
