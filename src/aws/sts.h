#pragma once

// STS AssumeRole on top of another credentials provider (static keys or the chain): the role's
// session credentials are what every AWS call signs with (S3, Glue, KMS, SigV4 REST catalogs).
// They are fetched when first needed and again before they expire.

#include "aws/client.h"
#include "aws/credentials.h"

#include <chrono>
#include <memory>
#include <string>

namespace floe::aws {

struct assume_role_options {
    std::string role_arn;
    std::string external_id;            ///< sent as ExternalId when not empty
    std::string session_name = "floe";  ///< RoleSessionName (2-64 of [\w+=,.@-])
    std::chrono::seconds duration{3600}; ///< DurationSeconds (AWS: 900 up to the role's maximum)
    std::string region = "us-east-1";   ///< of the STS endpoint (signing)
    /// "http(s)://host[:port]"; empty: https://sts.<region>.amazonaws.com.
    std::string endpoint;
    std::chrono::milliseconds http_timeout{10'000};
};

/// The refresh margin: session credentials are fetched again this long before they expire
/// (five minutes, or a quarter of the session for sessions shorter than 20 minutes).
std::chrono::seconds assume_role_refresh_margin(std::chrono::seconds duration);

/// A provider that assumes `opts.role_arn` with the keys `base` provides. Thread-safe: one
/// caller refreshes while the others wait. While STS cannot be reached, session credentials
/// that have not expired yet keep being used (with a warning).
std::shared_ptr<credentials_provider>
make_assume_role_provider(std::shared_ptr<credentials_provider> base, assume_role_options opts);

} // namespace floe::aws
