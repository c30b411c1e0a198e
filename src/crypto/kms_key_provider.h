#pragma once

// The aws-kms key provider: envelope encryption. Each new file gets a fresh data key from KMS
// GenerateDataKey under floe.encryption.kms.key-id; the wrapped key (CiphertextBlob) and the
// KMS key ARN go into the file's key_metadata; a reader unwraps it with KMS Decrypt. Unwrapped
// keys are cached by key_metadata (bounded LRU), and a new file's key is cached when made, so
// reading back what this process wrote costs no Decrypt.

#include "aws/kms.h"
#include "base/lru_cache.h"
#include "crypto/key_provider.h"

#include <map>
#include <mutex>

namespace floe::crypto {

/// Thread-safe: the cache is under a mutex, KMS calls are made outside it (two readers missing
/// the same key at once may both call Decrypt; the cache keeps one answer).
class kms_key_provider final : public key_provider {
public:
    /// `key_id`: what GenerateDataKey is asked for (key id, key ARN, alias/<name>, alias ARN);
    /// files record the key ARN KMS answers, so moving an alias to a new key is a rotation and
    /// old files keep decrypting with their own key.
    kms_key_provider(aws::service_options service, std::string key_id, int data_key_bits,
                     size_t cache_entries);

    result<data_key> data_key_for_new_file(std::string_view table) override;
    result<data_key> data_key_under(std::string_view table, std::string_view key_id) override;
    result<secret_key> key_for(bytes_view key_metadata) override;
    std::string_view kind() const noexcept override { return "aws-kms"; }
    std::string describe() const override;
    /// Down for 5 s after a KMS call failed retryably (an outage: unreachable, throttled, timed
    /// out) with no success since; else OK when a KMS call succeeded in the last minute and
    /// after any such failure; else one GenerateDataKey (key dropped) decides.
    result<void> check() override;
    /// kms_client::probe_key of `key_id` (DescribeKey, then one GenerateDataKey) through a client
    /// that tries each once with a 3 s deadline, so a config change waits seconds at most; a
    /// usable key is remembered for 10 minutes.
    result<void> check_key(std::string_view key_id) override;

    /// Calls made to KMS (tests and figures) and cache hits.
    const aws::kms_client& client() const noexcept { return _kms; }
    const aws::kms_client& probe_client() const noexcept { return _probe; }
    uint64_t cache_hits() const;
    size_t cached_keys() const;

private:
    void remember(const std::vector<uint8_t>& key_metadata, const secret_key& key);
    void mark_ok();
    /// Notes a failed KMS call; a retryable one makes check() report the outage.
    void mark_failed(const error& e);

    aws::kms_client _kms;
    aws::kms_client _probe; ///< check_key's: one attempt, short deadline
    std::string _key_id;
    int _bits;
    mutable std::mutex _mu;
    lru_cache<std::string, secret_key> _cache; ///< key_metadata bytes -> unwrapped key
    uint64_t _hits = 0;
    std::chrono::steady_clock::time_point _last_ok{};
    std::chrono::steady_clock::time_point _last_outage{}; ///< latest retryable failure
    std::string _outage;                                  ///< its message
    std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> _usable; ///< check_key's answers
};

} // namespace floe::crypto
