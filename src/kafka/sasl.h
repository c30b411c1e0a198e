#pragma once

#include "kafka/protocol.h"
#include "kafka/users.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace floe::kafka {

/// The SASL mechanisms Floe can offer.
inline constexpr std::string_view k_sasl_mechanisms[] = {"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"};
/// Parses floe.sasl.mechanisms ("SCRAM-SHA-512,PLAIN"): known names, at least one, no repeats.
result<std::vector<std::string>> parse_sasl_mechanisms(std::string_view text);

/// One connection's SASL exchange: SaslHandshake (v1) names the mechanism, then
/// SaslAuthenticate rounds carry its messages (one for PLAIN, two for SCRAM). On a listener
/// without SASL both APIs answer ILLEGAL_SASL_STATE. Not thread-safe: one per connection.
///
/// Sessions that expire (KIP-368): with `max_reauth` above zero
/// (floe.sasl.connections-max-reauth, Kafka's connections.max.reauth.ms) every authentication
/// starts a session of that length, told to clients that authenticate with SaslAuthenticate v1+
/// (`session_lifetime_ms`). Such a client re-authenticates on the same connection (SaslHandshake
/// v1+ with the same mechanism, then SaslAuthenticate) while its requests keep the principal it
/// has; the new principal must be the same one. A session that ends without re-authentication
/// (any client, as Kafka does: a client that cannot re-authenticate reconnects) is `expired`,
/// and the connection is closed at its next request. A user whose credential was deleted or
/// changed so loses access within one session.
class sasl_session {
public:
    /// `users` null: the listener does not use SASL. `max_reauth` zero: sessions never expire.
    sasl_session(user_store* users, const std::vector<std::string>& mechanisms, std::string client_host,
                 std::chrono::milliseconds max_reauth = std::chrono::milliseconds(0));

    enum class outcome {
        ok,      ///< answered; carry on
        refused, ///< answered with an error; the connection is closed after the answer is sent
        malformed,
    };
    /// Handles a SaslHandshake or SaslAuthenticate request, appending its answer to `out`.
    outcome handle(const request_header& h, bytes_view body, byte_buffer& out);

    /// Handles one frame of a SaslHandshake v0 exchange: a raw SASL token (no request header),
    /// answered by a raw token; a failure answers nothing (the connection is closed).
    outcome handle_raw_token(bytes_view token, byte_buffer& out);
    /// After a SaslHandshake v0, the next frames are raw tokens until authenticated.
    bool expects_raw_token() const noexcept { return _raw && _state == state::authenticate; }

    /// A principal is established (also while it re-authenticates).
    bool authenticated() const noexcept { return !_principal_user.empty(); }
    /// "User:<name>" once authenticated.
    std::string principal() const { return "User:" + _principal_user; }
    /// The session has ended without re-authentication: requests other than SaslHandshake and
    /// SaslAuthenticate must close the connection.
    bool expired(std::chrono::steady_clock::time_point now) const noexcept {
        return _expires_at && now >= *_expires_at;
    }
    std::chrono::milliseconds max_reauth() const noexcept { return _max_reauth; }

private:
    enum class state { handshake, authenticate, done };
    /// One authentication step over `msg`: the server's answer, or nullopt (refused, logged).
    std::optional<std::string> step(std::string_view msg);
    outcome authenticate(const request_header& h, bytes_view body, byte_buffer& out);
    void log_failure(std::string_view user, std::string_view why);
    /// `_user` authenticated: checks a re-authentication keeps the principal, starts the session.
    bool finish();
    user_store* _users;
    const std::vector<std::string>& _mechanisms;
    std::string _client_host;
    state _state = state::handshake;
    std::string _mechanism;
    bool _raw = false; ///< SaslHandshake v0
    std::unique_ptr<scram_server> _scram;
    std::string _user;           ///< the user of the exchange in progress
    std::string _principal_user; ///< the authenticated user (empty: none yet)
    std::chrono::milliseconds _max_reauth;
    std::optional<std::chrono::steady_clock::time_point> _expires_at;
    bool _supports_reauth = false; ///< authenticated with SaslAuthenticate v1+
    bool _reauthenticating = false;
};

} // namespace floe::kafka
