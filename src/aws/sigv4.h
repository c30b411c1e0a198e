#pragma once

// AWS Signature Version 4 for every AWS request (S3, STS, Glue, KMS, SigV4-signed REST
// catalogs): the canonical request, the string to sign and the Authorization header, on
// OpenSSL's SHA-256 and HMAC-SHA256. Pure functions, so they
// are checked against AWS's published examples; no I/O, thread-safe.

#include "base/bytes.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace floe::aws {

/// Credentials to sign with. Never logged: format it only through `redacted()`.
struct credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token; ///< empty for long-term keys
};

/// One request as it is signed. `path` is the URI path as sent (already encoded by
/// `uri_encode(..., false)`); query parameters are raw (unencoded) and are sorted and encoded
/// by the signer; header names in any case, values as sent.
struct sigv4_request {
    std::string method;
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string
        payload_sha256; ///< hex SHA-256 of the body (also sent as x-amz-content-sha256 for S3)
};

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(bytes_view data);
std::string sha256_hex(std::string_view data);
/// Base64 of MD5 (Content-MD5 for requests S3 requires it on, e.g. multi-object delete).
std::string md5_base64(bytes_view data);

/// RFC 3986 encoding as SigV4 wants it: unreserved characters kept, everything else %XX in
/// upper case; '/' kept when `keep_slash` (object key paths).
std::string uri_encode(std::string_view s, bool keep_slash);
/// The encoded, sorted query string both signed and sent ("a=1&b=&c=x%2Fy").
std::string canonical_query(const std::vector<std::pair<std::string, std::string>>& query);

/// The canonical request (exposed for tests and for debugging SignatureDoesNotMatch).
std::string sigv4_canonical_request(const sigv4_request& req);
/// The Authorization header value. `amz_date` is "YYYYMMDDTHHMMSSZ" (the x-amz-date header,
/// which the caller includes in `req.headers`).
std::string sigv4_authorization(const sigv4_request& req, const credentials& creds,
                                std::string_view region, std::string_view service,
                                std::string_view amz_date);
/// "YYYYMMDDTHHMMSSZ" for a Unix time in seconds.
std::string amz_date(int64_t unix_seconds);

/// The headers that sign a request to a service other than S3 (a SigV4 REST catalog:
/// execute-api, glue, s3tables): x-amz-date, x-amz-content-sha256, x-amz-security-token (with
/// a session) and authorization, for `url` ("http(s)://host[:port]/path?query", path and query
/// as sent). The canonical URI is the path encoded once more, as SigV4 wants for every service
/// but S3; the signed headers are host, the x-amz-* ones and `extra` (name, value: sent too).
std::vector<std::pair<std::string, std::string>>
sigv4_sign(std::string_view method, std::string_view url, std::string_view body,
           const credentials& creds, std::string_view region, std::string_view service,
           int64_t unix_seconds,
           const std::vector<std::pair<std::string, std::string>>& extra = {});

} // namespace floe::aws
