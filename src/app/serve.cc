#include "app/serve.h"

#include "http/admin.h"
#include "http/server.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <unistd.h>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace floe::app {
namespace {

/// A started component and how to stop it; stopped in reverse start order.
struct running_component {
    std::string name;
    std::function<void()> stop;
};

/// Blocks SIGINT/SIGTERM in this thread (and the threads it starts, which inherit the mask)
/// so that sigwait below is the only place they are handled.
sigset_t block_stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    return set;
}

} // namespace

int serve(const config::settings& s) {
    namespace fs = std::filesystem;
    auto stop_signals = block_stop_signals();

    auto data_dir = fs::absolute(s.get_string("floe.data-dir")).lexically_normal();
    std::error_code ec;
    fs::create_directories(data_dir, ec);
    if (ec) {
        spdlog::error("cannot create data directory {}: {}; check floe.data-dir and its permissions",
                      data_dir.string(), ec.message());
        return 1;
    }

    spdlog::info("floe {} starting", FLOE_VERSION);
    spdlog::info("data directory: {}", data_dir.string());
    spdlog::info("catalog: {} at {}", s.get_string("floe.storage.remote.catalog.type"),
                 s.get_string("floe.storage.remote.catalog.uri"));
    spdlog::info("warehouse: {} (namespace '{}')", s.get_string("floe.storage.remote.path"),
                 s.get_string("floe.namespace"));

    std::vector<running_component> running;
    http::health_registry health;
    health.add("data-dir", [data_dir] {
        if (::access(data_dir.c_str(), W_OK) != 0)
            return http::component_health{http::health_status::down,
                                          fmt::format("{} is not writable", data_dir.string())};
        return http::component_health{http::health_status::up, data_dir.string()};
    });
    // Components start here in dependency order as they land: local log, catalog, Kafka
    // listener, storage worker; the admin plane starts last so /readyz sees all of them.
    spdlog::info("kafka listener: {} (advertised as {})", s.get_string("floe.kafka.listen"),
                 s.get_string("floe.kafka.advertised-listener"));

    auto http_addr = s.get_address("floe.http.listen");
    http::server admin({.host = http_addr.host, .port = http_addr.port});
    http::add_admin_routes(admin, health);
    if (auto r = admin.start(); !r) {
        spdlog::error("{}; set floe.http.listen to a free address", r.error().message());
        return 1;
    }
    running.push_back({"http admin plane", [&admin] { admin.stop(); }});
    spdlog::info("http admin plane listening on {}:{} (/metrics, /healthz, /readyz)", http_addr.host,
                 admin.port());
    spdlog::info("floe is up; stop it with Ctrl-C or SIGTERM");

    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("received {}, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    for (auto it = running.rbegin(); it != running.rend(); ++it) {
        spdlog::info("stopping {}", it->name);
        it->stop();
    }
    spdlog::info("floe stopped cleanly");
    return 0;
}

} // namespace floe::app
