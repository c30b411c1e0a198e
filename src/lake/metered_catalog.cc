#include "lake/metered_catalog.h"

#include "base/metrics.h"

#include <chrono>

namespace floe::lake {
namespace {

struct catalog_metrics {
    metrics::family<metrics::counter>& requests;
    metrics::family<metrics::counter>& errors;
    metrics::family<metrics::histogram>& duration;
    static catalog_metrics& get() {
        auto& r = metrics::registry::instance();
        static catalog_metrics m{
            r.counter_family("floe_catalog_requests_total", "Iceberg catalog calls, by operation.", {"operation"}),
            r.counter_family("floe_catalog_errors_total",
                             "Iceberg catalog calls that failed (unreachable, refused, corrupt), by operation; "
                             "lost compare-and-swaps are counted as commit conflicts instead.",
                             {"operation"}),
            r.histogram_family("floe_catalog_request_duration_seconds", "Iceberg catalog call latency, by operation.",
                               {"operation"}),
        };
        return m;
    }
};

/// Runs `call`, counting it under `op`; conflicts and already-exists answers are outcomes of
/// the protocol, not failures.
template <typename F>
auto metered(const char* op, F&& call) {
    auto& m = catalog_metrics::get();
    auto t0 = std::chrono::steady_clock::now();
    auto r = call();
    m.requests.with({op}).inc();
    m.duration.with({op}).observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r && r.error().code() != errc::conflict && r.error().code() != errc::already_exists)
        m.errors.with({op}).inc();
    return r;
}

} // namespace

result<void> metered_catalog::create_namespace_if_missing(const std::string& ns) {
    return metered("create_namespace", [&] { return _inner->create_namespace_if_missing(ns); });
}
result<bool> metered_catalog::namespace_exists(const std::string& ns) {
    return metered("namespace_exists", [&] { return _inner->namespace_exists(ns); });
}
result<std::optional<std::string>> metered_catalog::metadata_location(const iceberg::table_ident& t) {
    return metered("load_table", [&] { return _inner->metadata_location(t); });
}
result<void> metered_catalog::create_table(const iceberg::table_ident& t, const std::string& metadata_location) {
    return metered("create_table", [&] { return _inner->create_table(t, metadata_location); });
}
result<void> metered_catalog::swap(const iceberg::table_ident& t, const std::string& expected,
                                   const std::string& new_location) {
    return metered("swap", [&] { return _inner->swap(t, expected, new_location); });
}
result<std::vector<std::string>> metered_catalog::list_tables(const std::string& ns) {
    return metered("list_tables", [&] { return _inner->list_tables(ns); });
}
result<std::vector<std::string>> metered_catalog::list_namespaces() {
    return metered("list_namespaces", [&] { return _inner->list_namespaces(); });
}
result<std::string> metered_catalog::commit_next(const iceberg::table_ident& t, const std::string& expected,
                                                 const std::string& next_json) {
    return metered(expected.empty() ? "create_table" : "swap",
                   [&] { return _inner->commit_next(t, expected, next_json); });
}

result<iceberg::server_commit> metered_catalog::commit_change(const iceberg::table_ident& t, const std::string& expected,
                                                             const iceberg::commit_base& base,
                                                             iceberg::table_metadata& next,
                                                             iceberg::snapshot_json_cache& texts) {
    return metered("swap", [&] { return _inner->commit_change(t, expected, base, next, texts); });
}

} // namespace floe::lake
