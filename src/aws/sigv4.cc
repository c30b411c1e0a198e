#include "aws/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <iterator>

#include <fmt/format.h>

namespace floe::aws {
namespace {

using digest = std::array<unsigned char, 32>;

std::string hex(const unsigned char* p, size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(n * 2, '\0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 0xf];
    }
    return out;
}

digest hmac(std::string_view key, std::string_view data) {
    digest out{};
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
    return out;
}

std::string_view as_view(const digest& d) {
    return {reinterpret_cast<const char*>(d.data()), d.size()};
}

std::string trim(std::string_view v) {
    // Header values are trimmed and inner runs of spaces folded to one (SigV4 canonical headers).
    std::string out;
    bool space = false;
    for (char c : v) {
        if (c == ' ' || c == '\t') {
            space = !out.empty();
            continue;
        }
        if (space) out.push_back(' ');
        space = false;
        out.push_back(c);
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Sorted (name, trimmed value) pairs, names lower case.
std::vector<std::pair<std::string, std::string>> canonical_headers(const sigv4_request& req) {
    std::vector<std::pair<std::string, std::string>> h;
    h.reserve(req.headers.size());
    for (auto& [k, v] : req.headers)
        h.emplace_back(lower(k), trim(v));
    std::sort(h.begin(), h.end());
    return h;
}

std::string signed_header_list(const std::vector<std::pair<std::string, std::string>>& h) {
    std::string out;
    for (auto& [k, v] : h) {
        if (!out.empty()) out.push_back(';');
        out += k;
    }
    return out;
}

} // namespace

std::string sha256_hex(bytes_view data) {
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
    return hex(d, sizeof d);
}

std::string sha256_hex(std::string_view data) {
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
    return hex(d, sizeof d);
}

std::string md5_base64(bytes_view data) {
    unsigned char d[16];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), d, &len, EVP_md5(), nullptr);
    std::string out(32, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), d, static_cast<int>(len));
    out.resize(static_cast<size_t>(n));
    return out;
}

std::string uri_encode(std::string_view s, bool keep_slash) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~'
            || (keep_slash && c == '/')) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(digits[c >> 4]);
            out.push_back(digits[c & 0xf]);
        }
    }
    return out;
}

std::string canonical_query(const std::vector<std::pair<std::string, std::string>>& query) {
    std::vector<std::pair<std::string, std::string>> q;
    q.reserve(query.size());
    for (auto& [k, v] : query)
        q.emplace_back(uri_encode(k, false), uri_encode(v, false));
    std::sort(q.begin(), q.end());
    std::string out;
    for (auto& [k, v] : q) {
        if (!out.empty()) out.push_back('&');
        out += k;
        out.push_back('=');
        out += v;
    }
    return out;
}

std::string sigv4_canonical_request(const sigv4_request& req) {
    auto h = canonical_headers(req);
    auto out = fmt::format("{}\n{}\n{}\n", req.method, req.path.empty() ? "/" : req.path,
                           canonical_query(req.query));
    for (auto& [k, v] : h)
        fmt::format_to(std::back_inserter(out), "{}:{}\n", k, v);
    fmt::format_to(std::back_inserter(out), "\n{}\n{}", signed_header_list(h), req.payload_sha256);
    return out;
}

std::string sigv4_authorization(const sigv4_request& req, const credentials& creds,
                                std::string_view region, std::string_view service,
                                std::string_view amz_date) {
    auto day = amz_date.substr(0, 8);
    auto scope = fmt::format("{}/{}/{}/aws4_request", day, region, service);
    auto to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope,
                               sha256_hex(std::string_view(sigv4_canonical_request(req))));
    auto k = hmac("AWS4" + creds.secret_access_key, day);
    k = hmac(as_view(k), region);
    k = hmac(as_view(k), service);
    k = hmac(as_view(k), "aws4_request");
    auto sig = hmac(as_view(k), to_sign);
    return fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}",
                       creds.access_key_id, scope, signed_header_list(canonical_headers(req)),
                       hex(sig.data(), sig.size()));
}

std::string amz_date(int64_t unix_seconds) {
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[20];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out.push_back(static_cast<char>(hi * 16 + lo));
                i += 2;
                continue;
            }
        }
        out.push_back(s[i]);
    }
    return out;
}

} // namespace

std::vector<std::pair<std::string, std::string>>
sigv4_sign(std::string_view method, std::string_view url, std::string_view body,
           const credentials& creds, std::string_view region, std::string_view service,
           int64_t unix_seconds, const std::vector<std::pair<std::string, std::string>>& extra) {
    auto rest = url;
    if (auto sep = rest.find("://"); sep != std::string_view::npos) rest.remove_prefix(sep + 3);
    auto slash = rest.find_first_of("/?");
    auto host = rest.substr(0, slash);
    std::string_view path = "/", query;
    if (slash != std::string_view::npos) {
        auto tail = rest.substr(slash);
        auto q = tail.find('?');
        path = tail.substr(0, q);
        if (path.empty()) path = "/";
        if (q != std::string_view::npos) query = tail.substr(q + 1);
    }
    sigv4_request sr;
    sr.method = std::string(method);
    sr.path = uri_encode(path, true);
    while (!query.empty()) {
        auto amp = query.find('&');
        auto part = query.substr(0, amp);
        auto eq = part.find('=');
        sr.query.emplace_back(percent_decode(part.substr(0, eq)),
                              eq == std::string_view::npos ? std::string()
                                                           : percent_decode(part.substr(eq + 1)));
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
    sr.payload_sha256 = sha256_hex(body);
    auto date = amz_date(unix_seconds);
    std::vector<std::pair<std::string, std::string>> out{{"x-amz-date", date},
                                                         {"x-amz-content-sha256", sr.payload_sha256}};
    if (!creds.session_token.empty()) out.emplace_back("x-amz-security-token", creds.session_token);
    sr.headers = out;
    sr.headers.emplace_back("host", std::string(host));
    for (auto& h : extra)
        sr.headers.push_back(h);
    out.emplace_back("authorization", sigv4_authorization(sr, creds, region, service, date));
    return out;
}

} // namespace floe::aws
