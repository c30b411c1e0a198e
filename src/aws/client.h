#pragma once

// A signed client for one AWS service endpoint (STS, Glue, KMS, ...): SigV4 with the
// provider's credentials, the JSON 1.1 protocol (X-Amz-Target) and the query protocol (form
// POST, XML answer), retries with backoff for calls that may be repeated. S3 has its own
// client (s3.h): its addressing, streaming and error bodies differ.

#include "aws/credentials.h"
#include "aws/http.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace floe::aws {

struct service_options {
    std::string service;  ///< the SigV4 signing name: "sts", "glue", "kms"
    std::string region = "us-east-1";
    /// "http(s)://host[:port]"; empty: https://<service>.<region>.amazonaws.com.
    std::string endpoint;
    std::shared_ptr<credentials_provider> credentials;
    std::chrono::milliseconds request_timeout{30'000};
    std::chrono::milliseconds connect_timeout{5'000};
    int max_attempts = 4; ///< for repeatable calls, counting the first
    std::chrono::milliseconds retry_base{100};
    std::chrono::milliseconds retry_cap{3'000};
};

/// What the service answered (transport failures are errors, every HTTP status is an answer).
struct service_reply {
    long status = 0;
    std::string body;
    /// The AWS error code of a failed call ("EntityNotFoundException", "AccessDenied"), from
    /// the JSON `__type` (namespace prefix cut) or the XML <Code>; empty on success.
    std::string code;
    std::string message; ///< the service's error message, if any
    bool ok() const { return status >= 200 && status < 300; }
};

/// A request before signing. `path` is sent as given (already encoded); `query` raw.
struct service_request {
    std::string method = "POST";
    std::string path = "/";
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers; ///< besides host and x-amz-*
    std::string body;
    /// May be sent again after a transport error or a 5xx/throttling answer (reads, and writes
    /// whose repetition cannot change the outcome).
    bool repeatable = true;
};

/// Thread-safe; no background thread. Errors name the service, the action and what to check;
/// secrets never appear in them.
class service_client {
public:
    explicit service_client(service_options opts);

    /// Signs and sends; retries a repeatable request on transport errors, 5xx, 429 and
    /// throttling codes. A non-repeatable request is sent once: a transport error is
    /// errc::unavailable ("outcome unknown"), and the caller finds out what happened.
    result<service_reply> send(const service_request& req);
    /// The JSON 1.1 protocol: POST / with X-Amz-Target `target` ("AWSGlue.GetTable").
    result<service_reply> json_call(const std::string& target, const nlohmann::json& body,
                                    bool repeatable = true);
    /// The query protocol: POST / with `Action`, `Version` and `params` form-encoded.
    result<service_reply> query_call(const std::string& action, const std::string& version,
                                     const std::vector<std::pair<std::string, std::string>>& params,
                                     bool repeatable = true);

    const service_options& options() const noexcept { return _opts; }
    /// "glue at https://glue.eu-west-1.amazonaws.com": for messages.
    std::string describe() const;

private:
    service_options _opts;
    std::string _scheme, _host; // of the endpoint; _host keeps a port
};

/// The error a failed reply becomes: names the action, the status, the AWS code and message,
/// and a hint for the usual causes (credentials, permissions, region). errc::not_found for 404
/// and *NotFound* codes, errc::unavailable for 5xx/throttling, errc::invalid_argument else.
error reply_error(std::string_view action, const service_reply& r);

/// The first <tag>...</tag> of an XML body, entities decoded (STS, S3 errors).
std::optional<std::string> xml_text(std::string_view body, std::string_view tag);

} // namespace floe::aws
