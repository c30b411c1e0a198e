#include "http/auth.h"

#include "base/metrics.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace floe::http {

namespace {
metrics::family<metrics::counter>& auth_failures() {
    static auto& c = metrics::registry::instance().counter_family(
        "floe_http_authentication_failures_total", "HTTP requests refused for a missing or unknown bearer token.");
    return c;
}
metrics::family<metrics::counter>& auth_slowed() {
    static auto& c = metrics::registry::instance().counter_family(
        "floe_http_authentication_slowed_total",
        "HTTP authentication failures answered late because their address failed before (guessing slowed down).");
    return c;
}
} // namespace

std::string token_digest(std::string_view token) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(token.data(), token.size(), md, &n, EVP_sha256(), nullptr);
    std::string hex = "sha256:";
    for (unsigned i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
    return hex;
}

result<std::map<std::string, std::string>> parse_tokens_file(std::string_view text) {
    std::map<std::string, std::string> out;
    size_t line_no = 0;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        std::string principal, digest, extra;
        if (!(words >> principal)) continue;
        if (!(words >> digest) || (words >> extra))
            return fail(errc::corrupt, "line {}: expected '<principal> sha256:<hex>'", line_no);
        if (principal.find(':') == std::string::npos)
            return fail(errc::corrupt, "line {}: principal '{}' is not Type:name", line_no, principal);
        std::transform(digest.begin(), digest.end(), digest.begin(), [](unsigned char c) { return std::tolower(c); });
        if (!digest.starts_with("sha256:") || digest.size() != 7 + 64 ||
            !std::all_of(digest.begin() + 7, digest.end(), [](char c) { return std::isxdigit(uint8_t(c)); }))
            return fail(errc::corrupt, "line {}: the token must be given as sha256:<64 hex digits>", line_no);
        out[digest] = principal;
    }
    return out;
}

token_guard::token_guard(std::filesystem::path file, std::vector<std::string> open_paths,
                         auth_backoff::options backoff)
    : _file(std::move(file)), _open(std::move(open_paths)), _backoff(backoff) {}

result<void> token_guard::refresh_locked() {
    struct stat st {};
    if (::stat(_file.c_str(), &st) != 0) return fail(errc::io_error, "{}: {}", _file.string(), std::strerror(errno));
    auto id = fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (id == _seen) return {};
    std::ifstream f(_file);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f) return fail(errc::io_error, "cannot read {}", _file.string());
    auto parsed = parse_tokens_file(ss.str());
    if (!parsed) return fail(std::move(parsed).error().with_context("{}", _file.string()));
    _principal_of = std::move(*parsed);
    _seen = std::move(id);
    return {};
}

result<void> token_guard::load() {
    std::lock_guard lk(_mu);
    return refresh_locked();
}

std::optional<response> token_guard::operator()(request& r) {
    if (std::ranges::find(_open, r.path) != _open.end()) {
        r.principal = "User:ANONYMOUS";
        return std::nullopt;
    }
    // A request without credentials is answered 401 at once and not held against its address
    // (clients commonly try without first); a wrong token or scheme is a failed authentication,
    // answered later and later per address. Only failures wait: a valid token is checked and
    // served at once, so one guessing client behind a shared address locks nobody else out.
    auto refuse = [&](std::string_view why, bool failed_attempt = true) {
        spdlog::warn("http authentication from {} for {} failed: {}", r.client_host, r.path, why);
        auth_failures().with({}).inc();
        auto resp = response::error(401, why);
        resp.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"floe\"");
        if (failed_attempt) {
            resp.delay = _backoff.failed(r.client_host);
            if (resp.delay.count() > 0) auth_slowed().with({}).inc();
        }
        return resp;
    };
    auto it = r.headers.find("authorization");
    if (it == r.headers.end()) return refuse("a bearer token is required (Authorization: Bearer <token>)", false);
    std::string_view v = it->second;
    if (v.size() < 7 || !std::equal(v.begin(), v.begin() + 7, "bearer ", [](char a, char b) {
            return std::tolower(uint8_t(a)) == b;
        }))
        return refuse("only Bearer authorization is accepted");
    auto digest = token_digest(v.substr(7));
    std::optional<std::string> principal;
    {
        std::lock_guard lk(_mu);
        if (auto ok = refresh_locked(); !ok)
            spdlog::error("http tokens: {}; keeping the tokens read before", ok.error());
        if (auto p = _principal_of.find(digest); p != _principal_of.end()) principal = p->second;
    }
    if (!principal) return refuse("unknown bearer token");
    r.principal = std::move(*principal);
    return std::nullopt;
}

} // namespace floe::http
