#pragma once

// The AWS credential chain as the AWS SDKs walk it, for s3_file_io when no static keys are
// set: environment, web identity (STS AssumeRoleWithWebIdentity: EKS IRSA), shared files
// (~/.aws/credentials and config, AWS_PROFILE), ECS container credentials, EC2 instance
// metadata (IMDSv2). Temporary credentials are cached and refreshed five minutes before they
// expire. Keys are never logged.

#include "iceberg/s3_file_io.h"

#include <functional>
#include <map>
#include <optional>

namespace floe::iceberg {

/// Where the chain reads its inputs: the process environment and clock by default; tests pass
/// their own.
struct credential_chain_options {
    std::function<std::optional<std::string>(const std::string&)> getenv; ///< default ::getenv
    std::string region; ///< for the STS endpoint; empty: us-east-1
    std::chrono::milliseconds http_timeout{5'000};
};

/// The chain: the first link that is configured (its variables set, its profile present)
/// provides every credential from then on; instance metadata is the last resort. Fails naming
/// every link it tried when none is configured.
std::shared_ptr<credentials_provider>
make_default_credential_chain(credential_chain_options opts = {});

/// The region from AWS_REGION, else AWS_DEFAULT_REGION, else the profile's `region`, else "".
std::string region_from_environment(const credential_chain_options& opts = {});

/// A parsed INI file (~/.aws/credentials, ~/.aws/config): section -> key -> value.
using ini_sections = std::map<std::string, std::map<std::string, std::string>>;
ini_sections parse_ini(std::string_view text);

/// Temporary credentials and when they expire (unix seconds; 0: never).
struct expiring_credentials {
    aws_credentials creds;
    int64_t expires_at = 0;
};
/// Parses an ISO-8601 UTC time ("2026-12-01T16:00:00Z", fractions allowed) to unix seconds.
result<int64_t> parse_iso8601(std::string_view s);

} // namespace floe::iceberg
