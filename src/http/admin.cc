#include "http/admin.h"

#include "base/log.h"
#include "base/metrics.h"

namespace floe::http {

std::string_view to_string(health_status s) {
    switch (s) {
    case health_status::up: return "up";
    case health_status::starting: return "starting";
    case health_status::down: return "down";
    }
    return "?";
}

void health_registry::add(std::string component, std::function<component_health()> check) {
    std::lock_guard g(_mu);
    _checks.emplace_back(std::move(component), std::move(check));
}

health_registry::report health_registry::check() const {
    std::vector<std::pair<std::string, std::function<component_health()>>> checks;
    {
        std::lock_guard g(_mu);
        checks = _checks;
    }
    bool ready = true;
    std::string comps;
    for (auto& [name, fn] : checks) {
        component_health h;
        try {
            h = fn();
        } catch (const std::exception& e) {
            h = {health_status::down, std::string("health check failed: ") + e.what()};
        }
        ready &= h.status == health_status::up;
        if (!comps.empty()) comps += ",";
        comps += fmt::format(R"("{}":{{"status":"{}","message":"{}"}})", json_escape(name),
                             to_string(h.status), json_escape(h.message));
    }
    return {ready, fmt::format(R"({{"status":"{}","components":{{{}}}}})",
                               ready ? "ready" : "not ready", comps)};
}

namespace {
metrics::family<metrics::counter>& requests() {
    static auto& f = metrics::registry::instance().counter_family(
        "floe_http_requests_total", "HTTP admin requests by endpoint (route pattern).", {"endpoint"});
    return f;
}
} // namespace

void count_request(std::string_view endpoint) { requests().with({std::string(endpoint)}).inc(); }

void add_admin_routes(server& s, const health_registry& health) {
    auto& reg = metrics::registry::instance();
    static auto& started = reg.gauge_family("floe_up", "1 while the floe process is serving.");
    started.with({}).set(1);
    static const uint64_t process_collector =
        reg.add_collector([] { return metrics::process_metrics(); });
    (void)process_collector;

    s.route("GET", "/metrics", [](const request&) {
        count_request("/metrics");
        response r;
        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
        r.body = metrics::registry::instance().render();
        return r;
    });
    s.route("GET", "/healthz", [](const request&) {
        count_request("/healthz");
        return response::json(200, R"({"status":"alive"})");
    });
    s.route("GET", "/readyz", [&health](const request&) {
        count_request("/readyz");
        auto rep = health.check();
        return response::json(rep.ready ? 200 : 503, rep.json);
    });
}

} // namespace floe::http
