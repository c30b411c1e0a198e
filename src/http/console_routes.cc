#include "http/console_routes.h"

#include "http/admin.h"
#include "http/console_assets.h"

#include <fmt/format.h>

namespace floe::http {
namespace {

bool accepts_gzip(const request& r) {
    auto it = r.headers.find("accept-encoding");
    if (it == r.headers.end()) return false;
    // "gzip", "gzip;q=0.8", "deflate, gzip": a listed gzip not weighted q=0.
    std::string_view v = it->second;
    for (size_t pos = 0; pos < v.size();) {
        auto end = v.find(',', pos);
        auto item = v.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        if (item.starts_with("gzip") || item.starts_with("*")) {
            auto q = item.find("q=");
            return q == std::string_view::npos || item.substr(q + 2).find_first_not_of("0.") != std::string_view::npos;
        }
        if (end == std::string_view::npos) break;
        pos = end + 1;
    }
    return false;
}

void security_headers(response& out) {
    out.headers.emplace_back("Content-Security-Policy", std::string(console_csp));
    out.headers.emplace_back("X-Content-Type-Options", "nosniff");
    out.headers.emplace_back("Referrer-Policy", "no-referrer");
    out.headers.emplace_back("X-Frame-Options", "DENY");
}

} // namespace

response console_asset_response(const request& r) {
    std::string_view path = r.path;
    if (path == "/console/") path = "/console/index.html";
    for (auto& a : console_assets()) {
        if (a.path != path) continue;
        response out;
        security_headers(out);
        out.headers.emplace_back("ETag", std::string(a.etag));
        out.headers.emplace_back("Cache-Control", "no-cache");
        out.headers.emplace_back("Vary", "Accept-Encoding");
        if (auto inm = r.headers.find("if-none-match"); inm != r.headers.end() && inm->second.find(a.etag) != std::string::npos) {
            out.status = 304;
            out.content_type = std::string(a.content_type);
            return out;
        }
        out.content_type = std::string(a.content_type);
        if (accepts_gzip(r)) {
            out.headers.emplace_back("Content-Encoding", "gzip");
            out.body = std::string(a.gzip);
        } else {
            out.body = std::string(a.raw);
        }
        return out;
    }
    auto out = response::error(404, fmt::format("no console file {}", r.path));
    security_headers(out);
    return out;
}

void add_console_routes(server& s, console_options opts) {
    s.route("GET", "/console", [](const request&) {
        response out;
        out.status = 301;
        out.content_type = "text/plain";
        out.headers.emplace_back("Location", "/console/");
        return out;
    });
    s.route_prefix("GET", "/console/", [](const request& r) {
        count_request("/console/");
        return console_asset_response(r);
    });
    s.route("GET", "/v1/console/settings", [opts](const request&) {
        count_request("/v1/console/settings");
        return response::json(200, fmt::format(R"({{"export":{},"read_only":true,"tokens":{}}})", opts.export_enabled,
                                               opts.tokens));
    });
}

} // namespace floe::http
