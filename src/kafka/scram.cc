#include "kafka/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace floe::kafka {

namespace {

const EVP_MD* digest(scram_mechanism m) { return m == scram_mechanism::sha256 ? EVP_sha256() : EVP_sha512(); }
size_t digest_size(scram_mechanism m) { return m == scram_mechanism::sha256 ? 32 : 64; }

std::string hmac(scram_mechanism m, std::string_view key, std::string_view data) {
    std::string out(EVP_MAX_MD_SIZE, '\0');
    unsigned len = 0;
    HMAC(digest(m), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         reinterpret_cast<unsigned char*>(out.data()), &len);
    out.resize(len);
    return out;
}

std::string hash(scram_mechanism m, std::string_view data) {
    std::string out(EVP_MAX_MD_SIZE, '\0');
    unsigned len = 0;
    EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &len, digest(m), nullptr);
    out.resize(len);
    return out;
}

bool equal_ct(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

/// Decodes a SCRAM saslname (",": "=2C", "=": "=3D"); nullopt for any other "=".
std::optional<std::string> decode_saslname(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '=') {
            out += s[i];
            continue;
        }
        auto esc = s.substr(i + 1, 2);
        if (esc == "2C") out += ',';
        else if (esc == "3D") out += '=';
        else return std::nullopt;
        i += 2;
    }
    return out;
}

/// Splits on ',' into "x=value" attributes; fails on anything else.
result<std::vector<std::pair<char, std::string_view>>> attributes(std::string_view s) {
    std::vector<std::pair<char, std::string_view>> out;
    while (true) {
        auto comma = s.find(',');
        auto a = s.substr(0, comma);
        if (a.size() < 2 || a[1] != '=') return fail(errc::invalid_argument, "malformed SCRAM attribute");
        out.emplace_back(a[0], a.substr(2));
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

} // namespace

std::string_view to_string(scram_mechanism m) noexcept {
    return m == scram_mechanism::sha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

std::optional<scram_mechanism> parse_scram_mechanism(std::string_view name) noexcept {
    if (name == "SCRAM-SHA-256") return scram_mechanism::sha256;
    if (name == "SCRAM-SHA-512") return scram_mechanism::sha512;
    return std::nullopt;
}

std::string scram_salted_password(scram_mechanism m, std::string_view password, std::string_view salt,
                                  int32_t iterations) {
    std::string out(digest_size(m), '\0');
    PKCS5_PBKDF2_HMAC(password.data(), int(password.size()), reinterpret_cast<const unsigned char*>(salt.data()),
                      int(salt.size()), iterations, digest(m), int(out.size()),
                      reinterpret_cast<unsigned char*>(out.data()));
    return out;
}

scram_credential scram_from_salted(scram_mechanism m, std::string_view salted, std::string_view salt,
                                   int32_t iterations) {
    scram_credential c;
    c.salt = std::string(salt);
    c.iterations = iterations;
    c.stored_key = hash(m, hmac(m, salted, "Client Key"));
    c.server_key = hmac(m, salted, "Server Key");
    return c;
}

scram_credential scram_derive(scram_mechanism m, std::string_view password, std::string_view salt,
                              int32_t iterations) {
    return scram_from_salted(m, scram_salted_password(m, password, salt, iterations), salt, iterations);
}

std::string scram_random_salt(size_t n) {
    std::string s(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(s.data()), int(n)) != 1)
        throw std::runtime_error("OpenSSL RAND_bytes failed");
    return s;
}

bool scram_check_password(scram_mechanism m, const scram_credential& cred, std::string_view password) {
    auto salted = scram_salted_password(m, password, cred.salt, cred.iterations);
    return equal_ct(hash(m, hmac(m, salted, "Client Key")), cred.stored_key);
}

std::string base64_encode(std::string_view raw) {
    std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(raw.data()), int(raw.size()));
    out.resize(size_t(n));
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                  c == '/' || (c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text.back() == '='));
        if (!ok) return std::nullopt;
    }
    std::string out(text.size() / 4 * 3 + 1, '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()), int(text.size()));
    if (n < 0) return std::nullopt;
    size_t pad = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
    out.resize(size_t(n) - pad);
    return out;
}

result<scram_client_first> parse_scram_client_first(std::string_view msg) {
    scram_client_first f;
    // gs2-header: cbind-flag "," [authzid] ","
    if (msg.starts_with("p="))
        return fail(errc::invalid_argument, "SCRAM channel binding is not supported");
    if (!msg.starts_with("n,") && !msg.starts_with("y,"))
        return fail(errc::invalid_argument, "malformed SCRAM client-first message");
    auto second = msg.find(',', 2);
    if (second == std::string_view::npos) return fail(errc::invalid_argument, "malformed SCRAM gs2 header");
    auto authz = msg.substr(2, second - 2);
    if (!authz.empty() && !authz.starts_with("a="))
        return fail(errc::invalid_argument, "malformed SCRAM authorization identity");
    f.gs2_header = std::string(msg.substr(0, second + 1));
    f.bare = std::string(msg.substr(second + 1));
    auto attrs = FLOE_TRY(attributes(f.bare));
    if (attrs.size() < 2 || attrs[0].first != 'n' || attrs[1].first != 'r')
        return fail(errc::invalid_argument, "SCRAM client-first message needs n= then r=");
    auto user = decode_saslname(attrs[0].second);
    if (!user || user->empty()) return fail(errc::invalid_argument, "malformed SCRAM username");
    if (!authz.empty()) {
        auto a = decode_saslname(authz.substr(2));
        if (!a || *a != *user)
            return fail(errc::invalid_argument, "SCRAM authorization identity must be the username");
    }
    if (attrs[1].second.empty()) return fail(errc::invalid_argument, "empty SCRAM client nonce");
    for (char c : attrs[1].second)
        if (c < 0x21 || c > 0x7e || c == ',') return fail(errc::invalid_argument, "bad SCRAM client nonce");
    f.username = std::move(*user);
    f.nonce = std::string(attrs[1].second);
    return f;
}

result<scram_client_final> parse_scram_client_final(std::string_view msg) {
    scram_client_final f;
    auto p = msg.rfind(",p=");
    if (p == std::string_view::npos) return fail(errc::invalid_argument, "SCRAM client-final message has no proof");
    f.without_proof = std::string(msg.substr(0, p));
    auto attrs = FLOE_TRY(attributes(msg));
    if (attrs.size() < 3 || attrs[0].first != 'c' || attrs[1].first != 'r' || attrs.back().first != 'p')
        return fail(errc::invalid_argument, "SCRAM client-final message needs c=, r=, ..., p=");
    auto cb = base64_decode(attrs[0].second);
    auto proof = base64_decode(attrs.back().second);
    if (!cb || !proof) return fail(errc::invalid_argument, "bad base64 in SCRAM client-final message");
    f.channel_binding = std::move(*cb);
    f.nonce = std::string(attrs[1].second);
    f.proof = std::move(*proof);
    return f;
}

result<plain_message> parse_plain(std::string_view msg) {
    auto a = msg.find('\0');
    if (a == std::string_view::npos) return fail(errc::invalid_argument, "malformed PLAIN message");
    auto b = msg.find('\0', a + 1);
    if (b == std::string_view::npos || msg.find('\0', b + 1) != std::string_view::npos)
        return fail(errc::invalid_argument, "malformed PLAIN message");
    plain_message m{std::string(msg.substr(0, a)), std::string(msg.substr(a + 1, b - a - 1)),
                    std::string(msg.substr(b + 1))};
    if (m.username.empty()) return fail(errc::invalid_argument, "PLAIN message without a username");
    if (!m.authzid.empty() && m.authzid != m.username)
        return fail(errc::invalid_argument, "PLAIN authorization identity must be the username");
    return m;
}

scram_server::scram_server(scram_mechanism m, lookup_fn lookup, std::string server_nonce)
    : _m(m), _lookup(std::move(lookup)), _server_nonce(std::move(server_nonce)) {
    if (_server_nonce.empty()) {
        // Letters and digits only: some clients split attributes at '=' too.
        static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for (unsigned char c : scram_random_salt(32)) _server_nonce += alphabet[c % alphabet.size()];
    }
}

result<std::string> scram_server::first(std::string_view client_first) {
    if (!_server_first.empty()) return fail(errc::invalid_argument, "SCRAM client-first message sent twice");
    auto f = FLOE_TRY(parse_scram_client_first(client_first));
    _user = f.username;
    _cred = _lookup(f.username);
    if (!_cred) return fail(errc::not_found, "unknown user");
    _gs2 = f.gs2_header;
    _client_first_bare = f.bare;
    _client_nonce = f.nonce;
    _nonce = f.nonce + _server_nonce;
    _server_first = "r=" + _nonce + ",s=" + base64_encode(_cred->salt) + ",i=" + std::to_string(_cred->iterations);
    return _server_first;
}

result<std::string> scram_server::final(std::string_view client_final) {
    if (_server_first.empty() || !_cred) return fail(errc::invalid_argument, "SCRAM client-final message out of order");
    auto f = FLOE_TRY(parse_scram_client_final(client_final));
    if (f.channel_binding != _gs2) return fail(errc::invalid_argument, "SCRAM channel binding mismatch");
    // librdkafka before 2.6.1 repeats its own nonce in front of the server's (its issue 4895;
    // Kafka 3.8.1 accepts it too). The proof still covers the server-first message with the
    // fresh server nonce, so accepting exactly that form keeps replay protection.
    if (f.nonce != _nonce && f.nonce != _client_nonce + _nonce)
        return fail(errc::invalid_argument, "SCRAM nonce mismatch");
    if (f.proof.size() != digest_size(_m)) return fail(errc::invalid_argument, "bad SCRAM proof size");
    auto auth_message = _client_first_bare + "," + _server_first + "," + f.without_proof;
    auto signature = hmac(_m, _cred->stored_key, auth_message);
    std::string client_key(f.proof.size(), '\0');
    for (size_t i = 0; i < client_key.size(); ++i) client_key[i] = char(f.proof[i] ^ signature[i]);
    if (!equal_ct(hash(_m, client_key), _cred->stored_key)) return fail(errc::invalid_argument, "wrong password");
    auto server_signature = hmac(_m, _cred->server_key, auth_message);
    _server_first.clear(); // one exchange only
    _cred.reset();
    return "v=" + base64_encode(server_signature);
}

} // namespace floe::kafka
