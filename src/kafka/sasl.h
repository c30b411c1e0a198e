#pragma once

#include "kafka/protocol.h"
#include "kafka/users.h"

#include <memory>
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
class sasl_session {
public:
    /// `users` null: the listener does not use SASL.
    sasl_session(user_store* users, const std::vector<std::string>& mechanisms, std::string client_host);

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

    bool authenticated() const noexcept { return _state == state::done; }
    /// "User:<name>" once authenticated.
    std::string principal() const { return "User:" + _user; }

private:
    enum class state { handshake, authenticate, done };
    /// One authentication step over `msg`: the server's answer, or nullopt (refused, logged).
    std::optional<std::string> step(std::string_view msg);
    outcome authenticate(const request_header& h, bytes_view body, byte_buffer& out);
    void log_failure(std::string_view user, std::string_view why);
    user_store* _users;
    const std::vector<std::string>& _mechanisms;
    std::string _client_host;
    state _state = state::handshake;
    std::string _mechanism;
    bool _raw = false; ///< SaslHandshake v0
    std::unique_ptr<scram_server> _scram;
    std::string _user;
};

} // namespace floe::kafka
