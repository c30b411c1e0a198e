#pragma once
// The schema registry's REST API (schema::rest_api) on an HTTP listener of its own
// (floe.schema-registry.listen): every request of any method goes to the resource model, which
// answers Confluent's content type and error bodies; the server's own errors (413, 431, ...)
// and the bearer-token guard's 401/429 are rewritten into the same {"error_code", "message"}
// form. Each request is counted in floe_schema_registry_requests_total{endpoint,status} by
// route pattern ("GET /subjects/{subject}/versions"), never by raw path.

#include "http/server.h"
#include "schema/rest_api.h"

namespace floe::http {

/// The error body the registry's listener uses for the server's own errors.
response schema_registry_error(int status, std::string_view message);

/// Routes every method and path of `s` to `api`. `guard` (optional) runs first, as on the
/// admin plane; its refusals are answered in Confluent's error form.
void add_schema_registry_routes(server& s, schema::rest_api& api, guard g = nullptr);

} // namespace floe::http
