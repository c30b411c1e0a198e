#pragma once

// The key provider of the settings (floe.encryption.*), for `floe serve` and tools: nullptr
// when no provider is configured. Errors name the setting (a keyring file others can read,
// bad JSON, a wrong key length; an aws-kms provider without a key id).

#include "base/result.h"
#include "config/settings.h"
#include "crypto/key_provider.h"

#include <memory>

namespace floe::app {

/// floe.encryption.* as crypto::key_provider_options: the KMS region is
/// floe.encryption.kms.region, else the S3 default region (default_aws_region); the endpoint
/// floe.encryption.kms.endpoint, else AWS_ENDPOINT_URL_KMS, else KMS's own; credentials the
/// ones every AWS call uses (make_aws_credentials).
crypto::key_provider_options key_provider_options_from(const config::settings& s);

/// Opens the configured provider (reads and checks the keyring; no KMS request), or nullptr.
result<std::shared_ptr<crypto::key_provider>> open_key_provider(const config::settings& s);

} // namespace floe::app
