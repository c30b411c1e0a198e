#pragma once

// AWS KMS, the two calls envelope encryption needs: GenerateDataKey (a fresh data key, in clear
// and wrapped under a KMS key) and Decrypt (unwrap it again), on the JSON 1.1 protocol
// (X-Amz-Target: TrentService.<Action>). Caching and key_metadata are the key provider's
// (crypto/kms_key_provider.h); this is only the service.

#include "aws/client.h"
#include "base/bytes.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace floe::aws {

/// A data key as GenerateDataKey returns it.
struct kms_data_key {
    std::vector<uint8_t> plaintext; ///< 16 or 32 bytes; the caller wipes it when done
    std::vector<uint8_t> wrapped;   ///< CiphertextBlob: what Decrypt takes back
    std::string key_arn;            ///< the KMS key that wrapped it (KeyId of the answer: an ARN)
};

/// Thread-safe (as service_client). Errors name the operation and the KMS key id. Both calls
/// are repeatable (a lost GenerateDataKey answer only wastes a data key), so they are retried
/// with backoff on throttling, 5xx and transport errors (service_options::max_attempts).
/// Error codes: errc::not_found for an unknown or deleted key (NotFoundException), errc::
/// unavailable for an unreachable or throttling service, DependencyTimeout, KMSInternal, a
/// disabled or pending key (KMSInvalidState, Disabled, KeyUnavailable: fixed without a restart)
/// and denied access; errc::invalid_argument for a blob KMS refuses (InvalidCiphertext,
/// IncorrectKey: never worth retrying).
class kms_client {
public:
    explicit kms_client(service_options opts);

    /// GenerateDataKey of `key_id` (a key id, key ARN, alias name or alias ARN) with KeySpec
    /// AES_256 (`bits` 256) or AES_128 (128).
    result<kms_data_key> generate_data_key(const std::string& key_id, int bits);
    /// Decrypt of `wrapped`, asking for `key_id` (KMS refuses a blob of another key). Returns
    /// the plaintext data key.
    result<std::vector<uint8_t>> decrypt(const std::string& key_id, bytes_view wrapped);
    /// Whether `key_id` can wrap data keys for Floe now, for a topic config naming the key:
    /// DescribeKey (the key's state, usage and spec; skipped when Floe may not call it), then
    /// one GenerateDataKey (the permission the offload needs; the key is wiped). Returns the
    /// key ARN. Unlike generate_data_key, a key that is there but unusable is a permanent
    /// answer: errc::not_found (NotFoundException), errc::invalid_argument (DisabledException,
    /// KMSInvalidStateException such as a pending deletion, InvalidKeyUsageException,
    /// AccessDeniedException); only an outage (unreachable, throttled, 5xx) is retryable.
    result<std::string> probe_key(const std::string& key_id, int bits);

    /// Calls made so far (each logical call once, whatever its retries): for tests and figures.
    uint64_t generate_calls() const noexcept { return _generate_calls.load(); }
    uint64_t decrypt_calls() const noexcept { return _decrypt_calls.load(); }
    std::string describe() const { return _client.describe(); }

private:
    result<kms_data_key> generate(const std::string& key_id, int bits, bool probe);

    service_client _client;
    std::atomic<uint64_t> _generate_calls{0}, _decrypt_calls{0};
};

} // namespace floe::aws
