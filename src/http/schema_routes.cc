#include "http/schema_routes.h"

#include "base/metrics.h"

#include <nlohmann/json.hpp>

namespace floe::http {

namespace {

metrics::family<metrics::counter>& requests() {
    static auto& f = metrics::registry::instance().counter_family(
        "floe_schema_registry_requests_total", "Schema registry requests by route pattern and HTTP status.",
        {"endpoint", "status"});
    return f;
}

response from_rest(const schema::rest_response& r) {
    response out;
    out.status = r.status;
    out.content_type = r.content_type;
    out.body = r.body;
    return out;
}

// Confluent's error codes for statuses the resource model never produced itself.
response rewrite_error(response r) {
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    std::string message = "error";
    if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message") &&
        j["error"]["message"].is_string())
        message = j["error"]["message"].get<std::string>();
    auto rewritten = schema_registry_error(r.status, message);
    rewritten.headers = std::move(r.headers);
    return rewritten;
}

} // namespace

response schema_registry_error(int status, std::string_view message) {
    auto r = from_rest(schema::error_response(status, status, message));
    requests().with({"unanswered", std::to_string(status)}).inc();
    return r;
}

void add_schema_registry_routes(server& s, schema::rest_api& api, guard g) {
    if (g)
        s.guard_prefix("", [g = std::move(g)](request& r) -> std::optional<response> {
            auto refused = g(r);
            if (!refused) return std::nullopt;
            requests().with({"refused", std::to_string(refused->status)}).inc();
            return rewrite_error(std::move(*refused));
        });
    auto handle = [&api](const request& r) {
        schema::rest_request q{r.method, r.target.substr(0, r.target.find('?')), r.query, r.body};
        auto out = api.handle(q);
        requests().with({r.method + " " + out.endpoint, std::to_string(out.status)}).inc();
        return from_rest(out);
    };
    for (auto m : {"GET", "POST", "PUT", "DELETE"}) s.route_prefix(m, "/", handle);
}

} // namespace floe::http
