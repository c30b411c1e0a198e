#include "iceberg/glue_catalog.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace floe::iceberg {
namespace {

constexpr const char* metadata_key = "metadata_location";
constexpr const char* previous_key = "previous_metadata_location";

bool is_iceberg(const aws::glue_table& t) {
    auto it = t.parameters.find("table_type");
    if (it == t.parameters.end()) return false;
    std::string v = it->second;
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return v == "ICEBERG";
}

result<std::string> current_location(const table_ident& t, const aws::glue_table& g) {
    if (!is_iceberg(g))
        return fail(errc::invalid_argument,
                    "Glue table {}.{} is not an Iceberg table (its table_type parameter is '{}')",
                    t.ns, t.name, g.parameters.contains("table_type") ? g.parameters.at("table_type") : "");
    auto it = g.parameters.find(metadata_key);
    if (it == g.parameters.end() || it->second.empty())
        return fail(errc::corrupt, "Glue table {}.{} has no metadata_location parameter", t.ns, t.name);
    return it->second;
}

} // namespace

std::string table_location_of(const std::string& metadata_location) {
    auto pos = metadata_location.rfind("/metadata/");
    if (pos == std::string::npos) return metadata_location;
    return metadata_location.substr(0, pos);
}

nlohmann::json glue_catalog::table_input(const table_ident& t, const std::string& metadata_location,
                                         const std::string& previous,
                                         const aws::glue_table* current) {
    nlohmann::json params = nlohmann::json::object();
    if (current)
        for (auto& [k, v] : current->parameters) params[k] = v;
    params["table_type"] = "ICEBERG";
    params[metadata_key] = metadata_location;
    if (previous.empty())
        params.erase(previous_key);
    else
        params[previous_key] = previous;
    nlohmann::json sd = nlohmann::json::object();
    if (current && current->raw.contains("StorageDescriptor")
        && current->raw["StorageDescriptor"].is_object())
        sd = current->raw["StorageDescriptor"];
    sd["Location"] = table_location_of(metadata_location);
    nlohmann::json in{{"Name", t.name},
                      {"TableType", "EXTERNAL_TABLE"},
                      {"Parameters", params},
                      {"StorageDescriptor", sd}};
    if (current && current->raw.contains("Description")) in["Description"] = current->raw["Description"];
    return in;
}

result<void> glue_catalog::create_namespace_if_missing(const std::string& ns) {
    return _glue->create_database(ns);
}

result<bool> glue_catalog::namespace_exists(const std::string& ns) {
    return _glue->database_exists(ns);
}

result<std::vector<std::string>> glue_catalog::list_namespaces() {
    auto dbs = FLOE_TRY(_glue->list_databases());
    std::sort(dbs.begin(), dbs.end());
    return dbs;
}

result<std::optional<std::string>> glue_catalog::metadata_location(const table_ident& t) {
    auto g = FLOE_TRY(_glue->get_table(t.ns, t.name));
    if (!g) return std::optional<std::string>();
    return std::optional<std::string>(FLOE_TRY(current_location(t, *g)));
}

result<void> glue_catalog::create_table(const table_ident& t, const std::string& location) {
    auto created = _glue->create_table(t.ns, table_input(t, location, "", nullptr));
    if (created || created.error().code() == errc::already_exists) return created;
    // The answer was lost: the table is ours if it points at our metadata.
    auto g = _glue->get_table(t.ns, t.name);
    if (g && *g && (*g)->parameters[metadata_key] == location) return {};
    return created;
}

result<void> glue_catalog::swap(const table_ident& t, const std::string& expected,
                                const std::string& new_location) {
    auto g = FLOE_TRY(_glue->get_table(t.ns, t.name));
    if (!g) return fail(errc::not_found, "Glue table {}.{} does not exist", t.ns, t.name);
    auto now = FLOE_TRY(current_location(t, *g));
    if (now != expected)
        return fail(errc::conflict, "Glue table {}.{} moved on from {} to {} (concurrent commit)",
                    t.ns, t.name, expected, now);
    auto updated = _glue->update_table(t.ns, table_input(t, new_location, expected, &*g), g->version_id);
    if (updated || updated.error().code() == errc::conflict) return updated;
    if (updated.error().code() != errc::unavailable) return updated;
    // Outcome unknown: look.
    auto again = _glue->get_table(t.ns, t.name);
    if (!again || !*again) return updated;
    auto at = (*again)->parameters[metadata_key];
    if (at == new_location) return {};
    if (at != expected)
        return fail(errc::conflict, "Glue table {}.{} moved on from {} to {} (concurrent commit)",
                    t.ns, t.name, expected, at);
    // Still at the base: fence the lost update out (same VersionId, nothing changed), so it
    // cannot be applied later behind the caller's back.
    auto fence = _glue->update_table(t.ns, table_input(t, expected, g->parameters[previous_key], &*g),
                                     g->version_id);
    if (fence) {
        spdlog::warn("Glue table {}.{}: UpdateTable to {} got no answer ({}); it did not land and "
                     "can no longer land",
                     t.ns, t.name, new_location, updated.error().message());
        return fail(errc::unavailable, "Glue UpdateTable {}.{} was not applied: {}", t.ns, t.name,
                    updated.error().message());
    }
    auto last = _glue->get_table(t.ns, t.name);
    if (last && *last && (*last)->parameters[metadata_key] == new_location) return {};
    return updated;
}

result<std::vector<std::string>> glue_catalog::list_tables(const std::string& ns) {
    auto tables = FLOE_TRY(_glue->list_tables(ns));
    std::vector<std::string> out;
    for (auto& g : tables)
        if (is_iceberg(g)) out.push_back(g.name);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace floe::iceberg
