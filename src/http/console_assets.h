#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace floe::http {

/// One file of the web console, embedded in the binary at build time
/// (cmake/embed_console.cmake, from src/http/console): immutable, static storage.
struct console_asset {
    std::string_view path;         ///< "/console/app.js"
    std::string_view content_type; ///< "text/javascript; charset=utf-8"
    std::string_view etag;         ///< "\"<16 hex digits of the content's SHA-256>\""
    std::string_view raw;          ///< the file as written
    std::string_view gzip;         ///< gzip -9n of it
};

std::span<const console_asset> console_assets();
/// The assets' size gzipped, together (the build fails above 250 KB).
size_t console_assets_gzip_bytes();

} // namespace floe::http
