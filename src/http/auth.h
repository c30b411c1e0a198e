#pragma once

#include "base/auth_backoff.h"
#include "http/server.h"

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace floe::http {

/// Bearer-token authentication of the HTTP plane, installed as a server guard on every path
/// ([floe.http.tokens-file]). The tokens file holds one token a line as
/// `<principal> sha256:<hex of SHA-256(token)>` ('#' starts a comment), so the file never holds
/// a usable secret; it is re-read when it changes (inode, size, mtime). Paths in `open_paths`
/// (exact, e.g. /metrics, /healthz, /readyz) need no token and run as User:ANONYMOUS. A
/// missing or unknown token is answered 401 with `WWW-Authenticate: Bearer` and the server's
/// JSON error, logged with the client address (never the token) and counted.
///
/// Guessing is slowed down as SASL logins are: the 401 for a wrong token or scheme is answered
/// late (`response::delay`), `backoff.first` after an address's first failure, doubling per
/// further failure up to `backoff.max` (a request without credentials is not held against it).
/// A valid token is never delayed or refused, whatever its address did before, and does not
/// clear the address's count either: clients behind one proxy or NAT share an address, and one
/// of them succeeding must neither be locked out by another's failures nor reset them.
/// Thread-safe.
class token_guard {
public:
    token_guard(std::filesystem::path file, std::vector<std::string> open_paths,
                auth_backoff::options backoff = {});
    /// Checks the file can be read and parsed (start-up).
    result<void> load();
    std::optional<response> operator()(request& r);

private:
    result<void> refresh_locked();
    std::filesystem::path _file;
    std::vector<std::string> _open;
    std::mutex _mu;
    std::map<std::string, std::string> _principal_of; ///< hex SHA-256 -> principal
    std::string _seen;
    auth_backoff _backoff;
};

/// "sha256:<hex>" of `token` (what a tokens-file line holds).
std::string token_digest(std::string_view token);
/// Parses a tokens file (exposed for tests): hex digest -> principal.
result<std::map<std::string, std::string>> parse_tokens_file(std::string_view text);

} // namespace floe::http
