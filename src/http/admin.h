#pragma once

#include "http/server.h"

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace floe::http {

enum class health_status { up, starting, down };
std::string_view to_string(health_status s);

struct component_health {
    health_status status = health_status::up;
    std::string message;
};

/// Components report their health through a check function that the admin plane calls on each
/// /readyz request (from an HTTP thread: checks must be quick and thread-safe).
class health_registry {
public:
    void add(std::string component, std::function<component_health()> check);
    struct report {
        bool ready;
        std::string json; ///< {"status":"ready"|"not ready","components":{name:{status,message}}}
    };
    report check() const;

private:
    mutable std::mutex _mu;
    std::vector<std::pair<std::string, std::function<component_health()>>> _checks;
};

/// Routes every admin endpoint that does not need a topic: GET /metrics (Prometheus text, the
/// process-wide metrics registry plus process stats), /healthz (liveness: the process answers),
/// /readyz (503 unless every component is up).
void add_admin_routes(server& s, const health_registry& health);

/// Counts one request in floe_http_requests_total{endpoint}. `endpoint` is a route pattern
/// ("/v1/topics/{topic}/records"), never a raw path, so topic names do not multiply the series.
void count_request(std::string_view endpoint);

} // namespace floe::http
