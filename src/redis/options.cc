#include "redis/client.h"

#include <algorithm>
#include <charconv>

namespace floe::redis {

std::string node_address::to_string() const {
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

result<std::string> percent_decode(std::string_view s, std::string_view setting, std::string_view uri) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0)
            return fail(errc::invalid_argument, "{}: bad percent escape in the credentials of '{}'", setting, uri);
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

struct parsed_uri {
    node_address addr;
    bool has_credentials = false;
    std::string user, password;
    bool has_db = false;
    int db = 0;
};

// Hides the password when a URI is quoted in an error.
std::string redact(std::string_view uri) {
    auto scheme_end = uri.find("://");
    auto at = uri.rfind('@');
    if (scheme_end == std::string_view::npos || at == std::string_view::npos || at < scheme_end) return std::string(uri);
    auto userinfo = uri.substr(scheme_end + 3, at - scheme_end - 3);
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) return std::string(uri);
    return fmt::format("{}{}:***{}", uri.substr(0, scheme_end + 3), userinfo.substr(0, colon), uri.substr(at));
}

result<parsed_uri> parse_one(std::string_view raw, std::string_view setting) {
    std::string shown = redact(raw);
    std::string_view uri = raw;
    constexpr std::string_view scheme = "redis://";
    if (uri.starts_with("rediss://"))
        return fail(errc::invalid_argument, "{}: '{}': TLS (rediss://) is not supported", setting, shown);
    if (!uri.starts_with(scheme))
        return fail(errc::invalid_argument, "{}: '{}' does not start with redis://", setting, shown);
    uri.remove_prefix(scheme.size());
    parsed_uri out;
    // userinfo: everything before the last '@' (a password may contain '@' only escaped, but
    // taking the last one is the forgiving reading).
    if (auto at = uri.rfind('@'); at != std::string_view::npos) {
        auto userinfo = uri.substr(0, at);
        uri.remove_prefix(at + 1);
        auto colon = userinfo.find(':');
        if (colon == std::string_view::npos)
            return fail(errc::invalid_argument, "{}: '{}': credentials must be user:password or :password", setting,
                        shown);
        out.has_credentials = true;
        out.user = FLOE_TRY(percent_decode(userinfo.substr(0, colon), setting, shown));
        out.password = FLOE_TRY(percent_decode(userinfo.substr(colon + 1), setting, shown));
        if (out.password.empty())
            return fail(errc::invalid_argument, "{}: '{}': empty password", setting, shown);
    }
    std::string_view hostport = uri;
    if (auto slash = uri.find('/'); slash != std::string_view::npos) {
        hostport = uri.substr(0, slash);
        auto db = uri.substr(slash + 1);
        if (!db.empty()) {
            int v = -1;
            auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), v);
            if (ec != std::errc() || p != db.data() + db.size() || v < 0)
                return fail(errc::invalid_argument, "{}: '{}': database '{}' is not a non-negative integer", setting,
                            shown, db);
            out.has_db = true;
            out.db = v;
        }
    }
    std::string_view host = hostport, port;
    if (hostport.starts_with('[')) {
        auto close = hostport.find(']');
        if (close == std::string_view::npos)
            return fail(errc::invalid_argument, "{}: '{}': unclosed '[' in the host", setting, shown);
        host = hostport.substr(1, close - 1);
        auto rest = hostport.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':')
                return fail(errc::invalid_argument, "{}: '{}': expected ':port' after ']'", setting, shown);
            port = rest.substr(1);
        }
    } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
        host = hostport.substr(0, colon);
        port = hostport.substr(colon + 1);
    }
    if (host.empty()) return fail(errc::invalid_argument, "{}: '{}' has no host", setting, shown);
    out.addr.host = std::string(host);
    if (!port.empty()) {
        int v = 0;
        auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
        if (ec != std::errc() || p != port.data() + port.size() || v < 1 || v > 65535)
            return fail(errc::invalid_argument, "{}: '{}': port '{}' is not a number in 1..65535", setting, shown,
                        port);
        out.addr.port = static_cast<uint16_t>(v);
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

} // namespace

result<options> parse_uris(std::span<const std::string> uris, std::string_view setting) {
    options opts;
    bool have_credentials = false, have_db = false;
    for (const auto& raw : uris) {
        auto p = FLOE_TRY(parse_one(raw, setting));
        if (p.has_credentials) {
            if (have_credentials && (p.user != opts.user || p.password != opts.password))
                return fail(errc::invalid_argument, "{}: the URIs name different credentials", setting);
            have_credentials = true;
            opts.user = p.user;
            opts.password = p.password;
        }
        if (p.has_db) {
            if (have_db && p.db != opts.db)
                return fail(errc::invalid_argument, "{}: the URIs name different databases", setting);
            have_db = true;
            opts.db = p.db;
        }
        if (std::find(opts.seeds.begin(), opts.seeds.end(), p.addr) == opts.seeds.end()) opts.seeds.push_back(p.addr);
    }
    if (opts.seeds.empty()) return fail(errc::invalid_argument, "{}: no redis:// URI given", setting);
    return opts;
}

result<options> parse_uris(std::string_view uris, std::string_view setting) {
    std::vector<std::string> parts;
    while (true) {
        auto comma = uris.find(',');
        auto part = trim(uris.substr(0, comma));
        if (!part.empty()) parts.emplace_back(part);
        else if (comma != std::string_view::npos || !parts.empty())
            return fail(errc::invalid_argument, "{}: empty URI in the list", setting);
        if (comma == std::string_view::npos) break;
        uris.remove_prefix(comma + 1);
    }
    return parse_uris(std::span<const std::string>(parts), setting);
}

} // namespace floe::redis
