#pragma once

// The small HTTP client under every AWS call that is not S3's own (credential endpoints, STS,
// Glue, KMS, SigV4-signed REST catalogs): one libcurl request, its status and body. No
// retries here; callers decide what may be repeated.

#include "base/result.h"

#include <chrono>
#include <string>
#include <vector>

namespace floe::aws {

/// libcurl's global initialisation, once per process (every curl user calls it first).
void init_curl_once();

struct http_reply {
    long status = 0;
    std::string body;
    /// Response headers, names in lower case (values trimmed).
    std::vector<std::pair<std::string, std::string>> headers;
};

/// One request. `headers` are "Name: value" lines. A transport failure (refused, reset,
/// unresolved, timed out) is errc::unavailable naming the method and URL; any HTTP status is
/// an answer.
result<http_reply> http_call(const std::string& method, const std::string& url,
                             const std::vector<std::string>& headers, const std::string& body,
                             std::chrono::milliseconds timeout,
                             std::chrono::milliseconds connect_timeout);

} // namespace floe::aws
