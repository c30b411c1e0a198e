#pragma once

// Parquet Modular Encryption (parquet-format Encryption.md): the writer's encryption config,
// the reader's decryption config, and the module cipher both use (AES-GCM / AES-CTR through
// OpenSSL EVP, module AADs, the length | nonce | ciphertext | tag module layout).
//
// Keys are plain bytes (16, 24 or 32); where they come from (a keyring file, a KMS) is the
// caller's business: the writer takes them with the key_metadata to store beside them, the
// reader asks a key_retriever for the key of each key_metadata it meets.
//
// A module_cipher is owned by one writer or reader and used by its thread only.

#include "base/bytes.h"
#include "base/result.h"
#include "format/parquet/metadata.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace floe::parquet {

/// A column's own key and the key_metadata stored with it (so a reader can find the key).
struct column_encryption_key {
    std::string key;
    std::string key_metadata;
};

/// How a file_writer encrypts (writer_options::encryption).
struct encryption_config {
    cipher_algorithm algorithm = cipher_algorithm::aes_gcm_v1;
    std::string footer_key;          ///< 16, 24 or 32 bytes
    std::string footer_key_metadata; ///< stored in the file (empty: not stored)
    /// true: the footer is an encrypted module ("PARE" files). false: a plaintext footer signed
    /// with the footer key ("PAR1" files that legacy readers can read the plaintext columns of).
    bool encrypted_footer = true;
    /// Empty: uniform encryption, every column with the footer key. Otherwise only the columns
    /// listed (dotted leaf path, as column_descriptor::dotted_path()) are encrypted, each with
    /// its key and key_metadata; the others stay plaintext.
    std::map<std::string, column_encryption_key> column_keys;
    /// Optional AAD prefix (the file's identity in its table, e.g. "table/part-00001").
    std::string aad_prefix;
    /// false: the prefix is not stored; readers must supply it (decryption_config::aad_prefix).
    bool store_aad_prefix = true;
};

/// Returns the key for a key_metadata found in a file, or an error (unknown key, KMS down).
using key_retriever = std::function<result<std::string>(std::string_view key_metadata)>;

/// How a file_reader decrypts (reader_options::decryption).
struct decryption_config {
    key_retriever retriever;
    /// The AAD prefix for files written without storing it; when the file stores one too, the
    /// two must be equal.
    std::optional<std::string> aad_prefix;
    /// Plaintext-footer files: the footer signing key must be available and the signature
    /// must verify (a tampered key_metadata cannot turn the check off). false: a footer key the
    /// retriever cannot give leaves the footer unverified (column keys only).
    bool require_footer_signature = true;
    /// true: `aad_prefix` is what a file that uses a prefix must use (stored: equal; not stored:
    /// supplied), and a file written without any prefix reads without one (a table whose files
    /// gained a prefix when its setting changed). false: it is used for every file.
    bool aad_prefix_if_used = false;
};

/// Checks a config before a file is written: key sizes, column paths against the leaves.
result<void> validate(const encryption_config& c);

/// Module types of the AAD suffix (Encryption.md 4.4.2).
enum class module_type : uint8_t {
    footer = 0,
    column_metadata = 1,
    data_page = 2,
    dictionary_page = 3,
    data_page_header = 4,
    dictionary_page_header = 5,
    column_index = 6,
    offset_index = 7,
    bloom_filter_header = 8,
    bloom_filter_bitset = 9,
};
std::string_view to_string(module_type t);

namespace crypto {

constexpr size_t length_bytes = 4, nonce_bytes = 12, tag_bytes = 16;
/// Bytes a GCM module adds to its plaintext: length, nonce and tag.
constexpr size_t gcm_overhead = length_bytes + nonce_bytes + tag_bytes;
/// Bytes a CTR module adds: length and nonce.
constexpr size_t ctr_overhead = length_bytes + nonce_bytes;
/// GCM invocations allowed per key (NIST SP 800-38D 8.3).
constexpr uint64_t max_invocations = uint64_t{1} << 32;

/// The AAD of one module: aad_prefix + file_unique + type (+ row group and column ordinals,
/// + page ordinal for data pages and their headers), ordinals as 2-byte little-endian shorts.
/// The caller checks ordinals fit (< 32768).
std::string module_aad(std::string_view file_aad, module_type t, int rg = -1, int col = -1,
                       int page = -1);

/// AES-GCM or AES-CTR with one key. Encryption appends a whole module (length, nonce,
/// ciphertext, tag) to `out`; decryption takes a whole module and replaces `out` with the
/// plaintext. Fresh random nonces (RAND_bytes) for every module. Not thread-safe.
class module_cipher {
public:
    /// Fails unless the key has 16, 24 or 32 bytes.
    static result<std::unique_ptr<module_cipher>> make(std::string_view key);
    ~module_cipher();
    module_cipher(const module_cipher&) = delete;
    module_cipher& operator=(const module_cipher&) = delete;

    /// Appends a GCM module of `plain` authenticated with `aad`.
    result<void> gcm_encrypt(bytes_view plain, std::string_view aad, byte_buffer& out);
    /// Appends a CTR module of `plain` (pages of AES_GCM_CTR_V1).
    result<void> ctr_encrypt(bytes_view plain, byte_buffer& out);
    /// The nonce and tag of GCM over `plain` (a plaintext footer's 28-byte signature).
    result<void> gcm_sign(bytes_view plain, std::string_view aad, byte_buffer& out);
    /// True when `sig` (nonce | tag) is GCM's tag of `plain` under this key and `aad`.
    result<bool> gcm_verify_signature(bytes_view plain, std::string_view aad, bytes_view sig);

    /// Decrypts the GCM module `module` (length prefix included, exactly its size). Fails with
    /// errc::corrupt when the tag does not verify (wrong key, wrong AAD, changed bytes).
    result<void> gcm_decrypt(bytes_view module, std::string_view aad, byte_buffer& out);
    result<void> ctr_decrypt(bytes_view module, byte_buffer& out);

private:
    explicit module_cipher(std::string_view key);
    std::string _key;
    void* _gcm = nullptr; // EVP_CIPHER_CTX, reused from module to module
    void* _ctr = nullptr;
    uint64_t _invocations = 0;
};

/// The size of the module starting at `in` (its 4-byte length plus 4), checked against the
/// bytes available; errc::corrupt names `what` when it does not fit.
result<size_t> module_size(bytes_view in, size_t min_size, std::string_view what);

/// Random bytes (the file's unique id).
std::string random_bytes(size_t n);

} // namespace crypto

} // namespace floe::parquet
