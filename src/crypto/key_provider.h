#pragma once

// Where Parquet encryption keys come from. The lake asks a key_provider for a data key when it
// writes a new file and stores the key_metadata it gets in the Parquet file and in the Iceberg
// data file entry; a reader hands that key_metadata back and gets the key. Keys never come
// from a setting in clear: a keyring file (crypto/keyring.h) or AWS KMS envelope encryption
// (crypto/kms_key_provider.h). This header depends on base only, so any module may take a
// key_provider without knowing which one it is.

#include "base/bytes.h"
#include "base/result.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace floe::aws {
class credentials_provider;
}

namespace floe::crypto {

/// Key bytes (16 or 32: AES-128 or AES-256). Wiped when destroyed; never logged or formatted.
class secret_key {
public:
    secret_key() = default;
    explicit secret_key(std::vector<uint8_t> bytes) : _bytes(std::move(bytes)) {}
    secret_key(const secret_key&) = default;
    secret_key& operator=(const secret_key&);
    secret_key(secret_key&& o) noexcept : _bytes(std::move(o._bytes)) { o._bytes.clear(); }
    secret_key& operator=(secret_key&& o) noexcept;
    ~secret_key();

    bytes_view bytes() const noexcept { return _bytes; }
    size_t size() const noexcept { return _bytes.size(); }
    int bits() const noexcept { return int(_bytes.size() * 8); }
    bool operator==(const secret_key& o) const noexcept { return _bytes == o._bytes; }

private:
    void wipe() noexcept;
    std::vector<uint8_t> _bytes;
};

/// The key of one new file and how to find it again.
struct data_key {
    secret_key key;
    /// Stored in the Parquet file (FileCryptoMetaData / ColumnCryptoMetaData key_metadata) and
    /// in the Iceberg data file entry's key_metadata; never holds the key in clear (see
    /// key_metadata_info). At most a few hundred bytes.
    std::vector<uint8_t> key_metadata;
    /// What names the key in messages and in `floe tables` output: the keyring id ("k2") or
    /// the KMS key ARN.
    std::string key_id;
};

/// What key_metadata says, readable without any key: for error messages ("file X: key 'k1'
/// unknown") and for tools listing which key encrypted which file.
struct key_metadata_info {
    uint8_t version = 1;
    std::string provider;             ///< "keyring" or "aws-kms"
    std::string key_id;               ///< keyring id, or the KMS key ARN
    std::vector<uint8_t> wrapped_key; ///< aws-kms: the CiphertextBlob; keyring: empty
};

/// key_metadata layout, version 1 (big-endian lengths):
///   u8 version (1) | u8 provider ('K' keyring, 'M' aws-kms) | u16 id length | id (UTF-8)
///   | aws-kms only: u16 blob length | CiphertextBlob
/// errc::corrupt for anything else (another version, a length past the end, trailing bytes).
result<key_metadata_info> parse_key_metadata(bytes_view key_metadata);
std::vector<uint8_t> encode_key_metadata(const key_metadata_info& info);

/// Where a table's keys come from. Implementations are thread-safe: the storage worker's
/// threads, Fetch and HTTP readers call them concurrently. Errors name the key id:
/// - errc::not_found: the key id is not in the keyring, or KMS does not know the key (permanent
///   until the key comes back: a reader reports the file and the key id);
/// - errc::unavailable / errc::timeout (retryable()): KMS unreachable, throttling, a disabled
///   key; the offload retries with backoff and shows it in /readyz;
/// - errc::invalid_argument: KMS refuses the wrapped key (another key's blob, tampered);
/// - errc::corrupt: key_metadata that is not ours, or from another provider kind.
class key_provider {
public:
    virtual ~key_provider() = default;

    /// A data key for a new file of `table` (the Iceberg table name; for messages and logs).
    /// keyring: the current key itself; aws-kms: a fresh data key per call.
    virtual result<data_key> data_key_for_new_file(std::string_view table) = 0;
    /// A data key under the named master key instead of the current one, for a column with its
    /// own key (floe.iceberg.encryption.columns `value:<key-id>`): keyring: the key `key_id`
    /// itself (errc::not_found when the keyring lacks it); aws-kms: a fresh data key of the KMS
    /// key `key_id` (id, ARN or alias).
    virtual result<data_key> data_key_under(std::string_view table, std::string_view key_id) = 0;
    /// The key of a file written with `key_metadata`.
    virtual result<secret_key> key_for(bytes_view key_metadata) = 0;

    /// "keyring" or "aws-kms".
    virtual std::string_view kind() const noexcept = 0;
    /// "keyring /etc/floe/keys.json (current k2, 2 keys)": for start-up logs and /readyz.
    virtual std::string describe() const = 0;
    /// Whether keys can be had now (the keyring is loaded; KMS answers): for /readyz. May make
    /// a request (aws-kms: a GenerateDataKey of the configured key, its key thrown away).
    virtual result<void> check() = 0;
    /// Whether a topic config may name `key_id` for a column's own key
    /// (floe.iceberg.encryption.columns `value:<key-id>`): checked when the config is set, so a
    /// typo is refused then rather than found by the offload. errc::not_found or
    /// errc::invalid_argument (the key is unknown, disabled, pending deletion, or Floe may not
    /// use it): refuse, naming the key. A retryable error (KMS unreachable) means "cannot tell
    /// now". keyring: whether the keyring holds the id; aws-kms: DescribeKey and one GenerateDataKey
    /// (the key wiped), answers cached for a while. May block for a few seconds: call it outside
    /// locks.
    virtual result<void> check_key(std::string_view key_id) = 0;
};

/// What `floe.encryption.*` says, in plain values (the config module is not a dependency).
struct key_provider_options {
    std::string provider;     ///< floe.encryption.provider: "keyring" or "aws-kms"
    std::string keyring_file; ///< floe.encryption.keyring-file
    // aws-kms:
    std::string kms_key_id; ///< floe.encryption.kms.key-id (id, ARN, alias/..., alias ARN)
    std::string kms_region; ///< resolved region (floe.encryption.kms.region, else the S3 one)
    std::string
        kms_endpoint; ///< floe.encryption.kms.endpoint; empty: https://kms.<region>.amazonaws.com
    int kms_data_key_bits = 256;       ///< floe.encryption.kms.data-key-spec: AES_256 or AES_128
    size_t kms_cache_entries = 10'000; ///< floe.encryption.kms.cache-size: unwrapped keys kept
    int kms_max_attempts = 5;
    std::chrono::milliseconds kms_request_timeout{10'000};
    std::chrono::milliseconds kms_retry_base{100};
    std::shared_ptr<aws::credentials_provider> credentials; ///< the chain S3 uses
};

/// The configured provider; fails naming the setting (a keyring file readable by others, bad
/// JSON, a key of the wrong length; an empty KMS key id). Makes no KMS request.
result<std::shared_ptr<key_provider>> make_key_provider(const key_provider_options& opts);

} // namespace floe::crypto
