#pragma once
// Confluent's schema registry REST API as data: one table of routes (method, path pattern,
// handler) over a `registry`, transport-free (request in, status and JSON out), so the http
// module binds it to a listener and tests drive it directly. Responses use Confluent's content
// type and error body {"error_code": N, "message": "..."}.

#include "schema/registry.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace floe::schema {

struct rest_request {
    std::string method;
    /// The path as sent, still percent-encoded ("/subjects/a%2Fb/versions"): each segment is
    /// decoded after splitting, so a subject name may hold '/'.
    std::string raw_path;
    std::multimap<std::string, std::string> query;
    std::string body;
};

struct rest_response {
    int status = 200;
    std::string body;
    std::string content_type = std::string(content_type_v1);
    /// The route pattern that answered ("/subjects/{subject}/versions"), "unknown" when none:
    /// the label for per-endpoint request counts.
    std::string endpoint = "unknown";

    static constexpr std::string_view content_type_v1 = "application/vnd.schemaregistry.v1+json";
};

/// {"error_code": code, "message": message} with `status`.
rest_response error_response(int status, int code, std::string_view message);

class rest_api {
public:
    explicit rest_api(registry& r);
    ~rest_api();
    rest_api(const rest_api&) = delete;
    rest_api& operator=(const rest_api&) = delete;
    rest_response handle(const rest_request& req) const;
    /// Every route pattern, "METHOD /pattern" (documentation, metrics pre-registration).
    std::vector<std::string> routes() const;

private:
    struct route;
    registry& _r;
    std::vector<route> _routes;
};

} // namespace floe::schema
