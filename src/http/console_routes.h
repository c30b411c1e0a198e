#pragma once

#include "http/server.h"

namespace floe::http {

struct console_options {
    /// floe.http.console.export: the console offers NDJSON/CSV downloads of search results
    /// (and /v1/topics/{topic}/search answers format=ndjson|csv); false: 403.
    bool export_enabled = true;
    /// floe.http.tokens-file is set: the console asks for a bearer token.
    bool tokens = false;
};

/// The web console (floe.http.console.enabled): its embedded assets under /console/, answered
/// with an ETag (content hash; If-None-Match gives 304), gzip when the client accepts it,
/// `Cache-Control: no-cache` (revalidated each load, so a new binary is picked up at once) and
/// a strict Content-Security-Policy (only this origin's scripts, styles and connections; no
/// inline script or style, no frames). GET /console redirects to /console/, which is index.html.
/// The assets are static and hold no data: `floe serve` lets them go without a bearer token;
/// the console reads only the public /v1 endpoints, with the user's token, under their ACLs.
/// GET /v1/console/settings: what the console may offer ({"export":bool,"read_only":true}).
void add_console_routes(server& s, console_options opts);

/// The console's headers: CSP and the rest (exposed for the tests).
inline constexpr std::string_view console_csp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// The answer for one console request (path, Accept-Encoding, If-None-Match), without a server.
response console_asset_response(const request& r);

} // namespace floe::http
