#pragma once

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace floe::kafka {

/// SCRAM mechanisms Floe serves (RFC 5802 with the hashes of RFC 7677 and Kafka's KIP-84).
/// The wire numbers are Kafka's (DescribeUserScramCredentials / AlterUserScramCredentials).
enum class scram_mechanism : int8_t { sha256 = 1, sha512 = 2 };
std::string_view to_string(scram_mechanism m) noexcept;
/// "SCRAM-SHA-256" / "SCRAM-SHA-512"; nullopt otherwise.
std::optional<scram_mechanism> parse_scram_mechanism(std::string_view name) noexcept;

/// What a server stores for one user and mechanism: only derived keys, never the password.
struct scram_credential {
    std::string salt;        ///< raw bytes
    int32_t iterations = 0;
    std::string stored_key;  ///< H(HMAC(SaltedPassword, "Client Key"))
    std::string server_key;  ///< HMAC(SaltedPassword, "Server Key")
};

/// Kafka's bounds on SCRAM iterations (4096 at least; 16384 at most).
inline constexpr int32_t scram_min_iterations = 4096;
inline constexpr int32_t scram_max_iterations = 16384;

/// Derives the stored credential from a password (PBKDF2-HMAC over `salt`, `iterations` times).
scram_credential scram_derive(scram_mechanism m, std::string_view password, std::string_view salt,
                              int32_t iterations);
/// The same from an already salted password (what AlterUserScramCredentials carries).
scram_credential scram_from_salted(scram_mechanism m, std::string_view salted_password, std::string_view salt,
                                   int32_t iterations);
/// The salted password itself (PBKDF2), for clients of the mechanism (tests, tools).
std::string scram_salted_password(scram_mechanism m, std::string_view password, std::string_view salt,
                                  int32_t iterations);
/// A random salt of `n` bytes from OpenSSL's generator.
std::string scram_random_salt(size_t n = 32);
/// Whether `password` matches `cred` (constant-time comparison of the derived StoredKey).
bool scram_check_password(scram_mechanism m, const scram_credential& cred, std::string_view password);

std::string base64_encode(std::string_view raw);
/// Strict standard base64 with padding; nullopt on anything else.
std::optional<std::string> base64_decode(std::string_view text);

/// The client-first message of SCRAM, parsed (no channel binding, no extensions).
struct scram_client_first {
    std::string gs2_header;  ///< "n,," or "y,," (or with a=authzid)
    std::string bare;        ///< client-first-message-bare, as sent
    std::string username;    ///< with =2C and =3D decoded
    std::string nonce;
};
result<scram_client_first> parse_scram_client_first(std::string_view msg);

/// The client-final message: channel binding, nonce and proof (decoded), and the message
/// without its proof (part of the AuthMessage).
struct scram_client_final {
    std::string channel_binding; ///< decoded c= attribute
    std::string nonce;
    std::string proof;
    std::string without_proof;
};
result<scram_client_final> parse_scram_client_final(std::string_view msg);

/// A PLAIN message (RFC 4616): authzid NUL authcid NUL passwd.
struct plain_message {
    std::string authzid, username, password;
};
result<plain_message> parse_plain(std::string_view msg);

/// The server side of one SCRAM exchange: client-first in, server-first out; client-final in,
/// server-final out. Not thread-safe; one per connection attempt.
class scram_server {
public:
    /// Looks up a user's credential for this mechanism (nullopt: unknown user).
    using lookup_fn = std::function<std::optional<scram_credential>(const std::string& user)>;
    /// `server_nonce` fixed for tests; empty: 24 random bytes, base64.
    scram_server(scram_mechanism m, lookup_fn lookup, std::string server_nonce = {});

    /// The server-first message, or errc::not_found (unknown user) / errc::invalid_argument
    /// (malformed message).
    result<std::string> first(std::string_view client_first);
    /// The server-final message ("v=..."), or errc::invalid_argument (wrong proof, malformed
    /// message, nonce or channel-binding mismatch).
    result<std::string> final(std::string_view client_final);

    const std::string& username() const noexcept { return _user; }

private:
    scram_mechanism _m;
    lookup_fn _lookup;
    std::string _server_nonce;
    std::string _user, _gs2, _client_first_bare, _server_first, _client_nonce, _nonce;
    std::optional<scram_credential> _cred;
};

} // namespace floe::kafka
