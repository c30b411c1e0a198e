#pragma once

// Where AWS signing keys come from. The chain as the AWS SDKs walk it, for when no static keys
// are set: environment, web identity (STS AssumeRoleWithWebIdentity: EKS IRSA), shared files
// (~/.aws/credentials and config, AWS_PROFILE), ECS container credentials, EC2 instance
// metadata (IMDSv2). Temporary credentials are cached and refreshed five minutes before they
// expire. Keys are never logged.

#include "aws/sigv4.h"
#include "base/result.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace floe::aws {

/// Where signing keys come from (static settings, the environment, STS, instance metadata).
/// Implementations are thread-safe and cache temporary credentials until shortly before they
/// expire.
class credentials_provider {
public:
    virtual ~credentials_provider() = default;
    virtual result<credentials> get() = 0;
    /// "static settings", "environment", ...: for /readyz and errors (never the keys).
    virtual std::string source() const = 0;
};

/// Keys given in the settings.
class static_credentials final : public credentials_provider {
public:
    explicit static_credentials(credentials c) : _c(std::move(c)) {}
    result<credentials> get() override { return _c; }
    std::string source() const override { return "static settings"; }

private:
    credentials _c;
};

/// Where the chain reads its inputs: the process environment and clock by default; tests pass
/// their own.
struct credential_chain_options {
    std::function<std::optional<std::string>(const std::string&)> getenv; ///< default ::getenv
    std::string region; ///< for the STS endpoint; empty: us-east-1
    std::chrono::milliseconds http_timeout{5'000};
    /// The settings that hold static keys ("floe.storage.remote.s3.access-key-id and
    /// secret-access-key"), named first when no credentials are found.
    std::string settings_hint;
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
    credentials creds;
    int64_t expires_at = 0;
};
/// Parses an ISO-8601 UTC time ("2026-12-01T16:00:00Z", fractions allowed) to unix seconds.
result<int64_t> parse_iso8601(std::string_view s);

} // namespace floe::aws
