#include "kafka/sasl.h"

#include "base/metrics.h"
#include "kafka/messages_security.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>

namespace floe::kafka {

namespace {

struct sasl_metrics {
    metrics::family<metrics::counter>& failures;
    metrics::family<metrics::counter>& successes;
    metrics::family<metrics::counter>& reauthentications;
    static sasl_metrics& get() {
        auto& r = metrics::registry::instance();
        static sasl_metrics m{r.counter_family("floe_kafka_sasl_authentication_failures_total",
                                               "Failed SASL authentications (wrong password, unknown user, bad "
                                               "exchange), by mechanism.",
                                               {"mechanism"}),
                              r.counter_family("floe_kafka_sasl_authentications_total",
                                               "Successful SASL authentications, by mechanism.", {"mechanism"}),
                              r.counter_family("floe_kafka_sasl_reauthentications_total",
                                               "Successful SASL re-authentications on an authenticated "
                                               "connection (KIP-368), by mechanism.",
                                               {"mechanism"})};
        return m;
    }
};

void answer(const request_header& h, byte_buffer& out, const sasl_authenticate_response& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}

} // namespace

result<std::vector<std::string>> parse_sasl_mechanisms(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto comma = text.find(',');
        auto m = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
        while (!m.empty() && m.back() == ' ') m.remove_suffix(1);
        if (m.empty()) continue;
        if (std::ranges::find(k_sasl_mechanisms, m) == std::end(k_sasl_mechanisms))
            return fail(errc::invalid_argument, "unknown SASL mechanism '{}' (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN)", m);
        if (std::ranges::find(out, m) != out.end())
            return fail(errc::invalid_argument, "SASL mechanism '{}' given twice", m);
        out.emplace_back(m);
    }
    if (out.empty()) return fail(errc::invalid_argument, "no SASL mechanism given");
    return out;
}

sasl_session::sasl_session(user_store* users, const std::vector<std::string>& mechanisms, std::string client_host,
                           std::chrono::milliseconds max_reauth)
    : _users(users), _mechanisms(mechanisms), _client_host(std::move(client_host)), _max_reauth(max_reauth) {}

sasl_session::outcome sasl_session::handle(const request_header& h, bytes_view body, byte_buffer& out) {
    kreader r(body, h.flexible);
    if (h.api_key == int16_t(api_key::sasl_handshake)) {
        auto q = decode_sasl_handshake(r, h.api_version);
        if (!q) return outcome::malformed;
        sasl_handshake_response resp;
        resp.mechanisms = _users ? _mechanisms : std::vector<std::string>{};
        outcome o = outcome::ok;
        const bool reauth = _users && _state == state::done && _supports_reauth && h.api_version >= 1;
        if (reauth && q->mechanism != _mechanism) {
            // Kafka refuses another mechanism for a re-authentication, and so do we.
            resp.error_code = int16_t(kerr::unsupported_sasl_mechanism);
            spdlog::warn("kafka SASL: client {} ({}) asked to re-authenticate with '{}'; its session uses '{}'",
                         _client_host, principal(), q->mechanism, _mechanism);
            o = outcome::refused;
        } else if (reauth) {
            _state = state::authenticate;
            _reauthenticating = true;
            _raw = false;
        } else if (!_users || _state != state::handshake) {
            resp.error_code = int16_t(kerr::illegal_sasl_state);
            o = outcome::refused;
        } else if (std::ranges::find(_mechanisms, q->mechanism) == _mechanisms.end()) {
            resp.error_code = int16_t(kerr::unsupported_sasl_mechanism);
            spdlog::warn("kafka SASL: client {} asked for mechanism '{}', not enabled (floe.sasl.mechanisms)",
                         _client_host, q->mechanism);
        } else {
            _mechanism = std::string(q->mechanism);
            _state = state::authenticate;
            _raw = h.api_version == 0;
        }
        size_t start = begin_response(out, h);
        kwriter w(out, false);
        encode(w, h.api_version, resp);
        finish_response(out, start);
        return o;
    }
    if (!_users || _state != state::authenticate) {
        auto q = decode_sasl_authenticate(r, h.api_version);
        if (!q) return outcome::malformed;
        sasl_authenticate_response resp;
        resp.error_code = int16_t(kerr::illegal_sasl_state);
        resp.error_message = _users ? "SaslAuthenticate outside of a SASL exchange (send SaslHandshake first)"
                                    : "this listener does not use SASL";
        answer(h, out, resp);
        return outcome::refused;
    }
    return authenticate(h, body, out);
}

void sasl_session::log_failure(std::string_view user, std::string_view why) {
    // The reason goes to the log only (never the password); the client learns no more than
    // that its credentials were refused, whether the user exists or not.
    spdlog::warn("kafka SASL {} authentication of user '{}' from {} failed: {}", _mechanism, user,
                 _client_host.empty() ? "?" : _client_host.substr(1), why);
    sasl_metrics::get().failures.with({_mechanism}).inc();
    _scram.reset();
    _state = state::handshake;
    // A failed re-authentication ends the session too (the connection is closed after the answer).
    _principal_user.clear();
    _reauthenticating = false;
}

bool sasl_session::finish() {
    if (_reauthenticating && _user != _principal_user) {
        log_failure(_user, fmt::format("cannot change principals during re-authentication from User:{} to User:{}",
                                       _principal_user, _user));
        return false;
    }
    auto& m = sasl_metrics::get();
    if (_reauthenticating) {
        m.reauthentications.with({_mechanism}).inc();
        spdlog::debug("kafka SASL: {} from {} re-authenticated with {}", principal(), _client_host, _mechanism);
    } else {
        m.successes.with({_mechanism}).inc();
    }
    _principal_user = _user;
    _reauthenticating = false;
    _state = state::done;
    if (_max_reauth.count() > 0) _expires_at = std::chrono::steady_clock::now() + _max_reauth;
    return true;
}

std::optional<std::string> sasl_session::step(std::string_view msg) {
    if (_mechanism == "PLAIN") {
        auto p = parse_plain(msg);
        if (!p) {
            log_failure("?", p.error().message());
            return std::nullopt;
        }
        if (!_users->check_password(p->username, p->password)) {
            log_failure(p->username, "unknown user or wrong password");
            return std::nullopt;
        }
        _user = p->username;
    } else {
        auto m = *parse_scram_mechanism(_mechanism);
        if (!_scram) {
            _scram = std::make_unique<scram_server>(
                m, [this, m](const std::string& user) { return _users->credential(user, m); });
            auto first = _scram->first(msg);
            if (!first) {
                log_failure(_scram->username().empty() ? "?" : _scram->username(),
                            first.error().code() == errc::not_found
                                ? fmt::format("no {} credential for this user", _mechanism)
                                : first.error().message());
                return std::nullopt;
            }
            return std::move(*first);
        }
        auto fin = _scram->final(msg);
        if (!fin) {
            log_failure(_scram->username(), fin.error().message());
            return std::nullopt;
        }
        _user = _scram->username();
        _scram.reset();
        if (!finish()) return std::nullopt;
        return std::move(*fin);
    }
    if (!finish()) return std::nullopt;
    return std::string();
}

sasl_session::outcome sasl_session::authenticate(const request_header& h, bytes_view body, byte_buffer& out) {
    kreader r(body, h.flexible);
    auto q = decode_sasl_authenticate(r, h.api_version);
    if (!q) return outcome::malformed;
    std::string_view msg(reinterpret_cast<const char*>(q->auth_bytes.data()), q->auth_bytes.size());
    sasl_authenticate_response resp;
    auto reply = step(msg);
    if (!reply) {
        resp.error_code = int16_t(kerr::sasl_authentication_failed);
        resp.error_message =
            fmt::format("Authentication failed: invalid credentials with SASL mechanism {}", _mechanism);
        answer(h, out, resp);
        return outcome::refused;
    }
    resp.auth_bytes = std::move(*reply);
    if (authenticated() && _state == state::done) {
        // v1+ carries the session's lifetime; such a client can re-authenticate (KIP-368).
        _supports_reauth = h.api_version >= 1;
        resp.session_lifetime_ms = _max_reauth.count();
    }
    answer(h, out, resp);
    return outcome::ok;
}

sasl_session::outcome sasl_session::handle_raw_token(bytes_view token, byte_buffer& out) {
    auto reply = step(std::string_view(reinterpret_cast<const char*>(token.data()), token.size()));
    if (!reply) return outcome::refused;
    uint32_t n = std::byteswap(uint32_t(reply->size()));
    auto* p = reinterpret_cast<const uint8_t*>(&n);
    out.insert(out.end(), p, p + 4);
    out.insert(out.end(), reply->begin(), reply->end());
    return outcome::ok;
}

} // namespace floe::kafka
