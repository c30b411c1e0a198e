#include "http/ingest_routes.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace floe::http {

void add_ingest_routes(server& s, const ingest::ingest_engine& engine) {
    s.route("GET", "/v1/ingest", [&engine](const request&) {
        auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
        nlohmann::json sources = nlohmann::json::array();
        for (auto& src : engine.status()) {
            nlohmann::json parts = nlohmann::json::array();
            for (auto& p : src.partitions) {
                auto lr = ingest::lag_records(p);
                auto ls = ingest::lag_seconds(p, now);
                parts.push_back({
                    {"source_topic", p.source_topic},
                    {"topic", p.local_topic},
                    {"partition", p.partition},
                    {"state", lr < 0 ? "unknown" : lr == 0 ? "caught_up" : "behind"},
                    {"source_position", p.source_end >= 0 ? nlohmann::json(p.source_end) : nlohmann::json()},
                    {"local_position", p.local_end},
                    {"committed_position", p.offloaded},
                    {"lag_records", lr >= 0 ? nlohmann::json(lr) : nlohmann::json()},
                    {"lag_seconds", ls >= 0 ? nlohmann::json(ls) : nlohmann::json()},
                    {"records", p.records},
                });
            }
            sources.push_back({
                {"name", src.name},
                {"type", src.type},
                {"state", src.state},
                {"last_error", src.last_error.empty() ? nlohmann::json() : nlohmann::json(src.last_error)},
                {"last_error_ms", src.last_error_ms > 0 ? nlohmann::json(src.last_error_ms) : nlohmann::json()},
                {"errors", src.errors},
                {"paused", src.paused},
                {"pauses", src.pauses},
                {"local_bytes", src.local_bytes},
                {"max_local_bytes", src.max_local_bytes},
                {"partitions", std::move(parts)},
            });
        }
        nlohmann::json out{{"sources", std::move(sources)}};
        return response::json(200, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
}

} // namespace floe::http
