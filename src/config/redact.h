#pragma once

#include <string>
#include <string_view>

namespace floe::config {

/// `uri` with its password hidden, for logs, `floe config` and error messages:
/// "postgresql://floe:s3cret@db:5432/cat" -> "postgresql://floe:****@db:5432/cat", and a libpq
/// key/value string's "password=s3cret" -> "password=****". Anything else is returned as is.
inline std::string redact_uri(std::string_view uri) {
    std::string out(uri);
    if (auto scheme = out.find("://"); scheme != std::string::npos) {
        auto auth_start = scheme + 3;
        auto auth_end = out.find_first_of("/?#", auth_start);
        auto at = out.rfind('@', auth_end == std::string::npos ? std::string::npos : auth_end);
        if (at != std::string::npos && at >= auth_start) {
            auto colon = out.find(':', auth_start);
            if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "****");
        }
    }
    // key=value forms (libpq conninfo, query parameters): password=..., up to a space or '&'.
    for (std::string_view key : {"password=", "PASSWORD="}) {
        for (size_t pos = out.find(key); pos != std::string::npos; pos = out.find(key, pos + 1)) {
            auto v = pos + key.size();
            auto end = out.find_first_of(" &", v);
            if (end == std::string::npos) end = out.size();
            out.replace(v, end - v, "****");
        }
    }
    return out;
}

} // namespace floe::config
