#include "aws/glue.h"

namespace floe::aws {
namespace {

glue_table parse_table(const nlohmann::json& t) {
    glue_table out;
    out.name = t.value("Name", "");
    if (t.contains("VersionId") && t["VersionId"].is_string())
        out.version_id = t["VersionId"].get<std::string>();
    if (t.contains("Parameters") && t["Parameters"].is_object())
        for (auto& [k, v] : t["Parameters"].items())
            if (v.is_string()) out.parameters[k] = v.get<std::string>();
    if (t.contains("StorageDescriptor") && t["StorageDescriptor"].is_object())
        out.location = t["StorageDescriptor"].value("Location", "");
    out.raw = t;
    return out;
}

result<nlohmann::json> parse_body(std::string_view action, const service_reply& r) {
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(errc::unavailable, "Glue {}: the answer is not a JSON object", action);
    return j;
}

} // namespace

glue_client::glue_client(service_options opts, std::string catalog_id)
    : _client((opts.service = "glue", std::move(opts))), _catalog_id(std::move(catalog_id)) {}

nlohmann::json glue_client::request(nlohmann::json body) const {
    if (!_catalog_id.empty()) body["CatalogId"] = _catalog_id;
    return body;
}

result<bool> glue_client::database_exists(const std::string& db) {
    auto r = FLOE_TRY(_client.json_call("AWSGlue.GetDatabase", request({{"Name", db}})));
    if (r.ok()) return true;
    if (r.code == "EntityNotFoundException") return false;
    return std::unexpected(reply_error(fmt::format("Glue GetDatabase {}", db), r));
}

result<void> glue_client::create_database(const std::string& db) {
    auto r = FLOE_TRY(_client.json_call("AWSGlue.CreateDatabase",
                                        request({{"DatabaseInput", {{"Name", db}}}})));
    if (r.ok() || r.code == "AlreadyExistsException") return {};
    return std::unexpected(reply_error(fmt::format("Glue CreateDatabase {}", db), r));
}

result<std::vector<std::string>> glue_client::list_databases() {
    std::vector<std::string> out;
    std::string token;
    for (int page = 0; page < 10'000; ++page) {
        auto body = request(nlohmann::json::object());
        if (!token.empty()) body["NextToken"] = token;
        auto r = FLOE_TRY(_client.json_call("AWSGlue.GetDatabases", body));
        if (!r.ok()) return std::unexpected(reply_error("Glue GetDatabases", r));
        auto j = FLOE_TRY(parse_body("GetDatabases", r));
        if (j.contains("DatabaseList") && j["DatabaseList"].is_array())
            for (auto& d : j["DatabaseList"])
                if (d.is_object() && d.contains("Name") && d["Name"].is_string())
                    out.push_back(d["Name"].get<std::string>());
        token = j.contains("NextToken") && j["NextToken"].is_string()
                    ? j["NextToken"].get<std::string>()
                    : "";
        if (token.empty()) return out;
    }
    return fail(errc::unavailable, "Glue GetDatabases: more than 10000 pages");
}

result<std::optional<glue_table>> glue_client::get_table(const std::string& db,
                                                         const std::string& name) {
    auto r = FLOE_TRY(_client.json_call("AWSGlue.GetTable",
                                        request({{"DatabaseName", db}, {"Name", name}})));
    if (r.code == "EntityNotFoundException") return std::optional<glue_table>();
    if (!r.ok()) return std::unexpected(reply_error(fmt::format("Glue GetTable {}.{}", db, name), r));
    auto j = FLOE_TRY(parse_body("GetTable", r));
    if (!j.contains("Table") || !j["Table"].is_object())
        return fail(errc::unavailable, "Glue GetTable {}.{}: no Table in the answer", db, name);
    return std::optional<glue_table>(parse_table(j["Table"]));
}

result<void> glue_client::create_table(const std::string& db, const nlohmann::json& table_input) {
    auto name = table_input.value("Name", "");
    auto r = FLOE_TRY_CTX(
        _client.json_call("AWSGlue.CreateTable",
                          request({{"DatabaseName", db}, {"TableInput", table_input}}), false),
        "Glue CreateTable {}.{}", db, name);
    if (r.ok()) return {};
    if (r.code == "AlreadyExistsException")
        return fail(errc::already_exists, "Glue table {}.{} already exists", db, name);
    return std::unexpected(reply_error(fmt::format("Glue CreateTable {}.{}", db, name), r));
}

result<void> glue_client::update_table(const std::string& db, const nlohmann::json& table_input,
                                       const std::string& version_id) {
    auto name = table_input.value("Name", "");
    auto body = request({{"DatabaseName", db}, {"TableInput", table_input}, {"SkipArchive", true}});
    if (!version_id.empty()) body["VersionId"] = version_id;
    auto r = FLOE_TRY_CTX(_client.json_call("AWSGlue.UpdateTable", body, false),
                          "Glue UpdateTable {}.{}", db, name);
    if (r.ok()) return {};
    if (r.code == "ConcurrentModificationException")
        return fail(errc::conflict, "Glue UpdateTable {}.{}: {} (another writer updated it)", db,
                    name, r.message);
    auto e = reply_error(fmt::format("Glue UpdateTable {}.{}", db, name), r);
    // A 5xx after the call was sent may have been applied: not a refusal.
    return std::unexpected(std::move(e));
}

result<std::vector<glue_table>> glue_client::list_tables(const std::string& db) {
    std::vector<glue_table> out;
    std::string token;
    for (int page = 0; page < 10'000; ++page) {
        auto body = request({{"DatabaseName", db}});
        if (!token.empty()) body["NextToken"] = token;
        auto r = FLOE_TRY(_client.json_call("AWSGlue.GetTables", body));
        if (!r.ok()) return std::unexpected(reply_error(fmt::format("Glue GetTables {}", db), r));
        auto j = FLOE_TRY(parse_body("GetTables", r));
        if (j.contains("TableList") && j["TableList"].is_array())
            for (auto& t : j["TableList"])
                if (t.is_object()) out.push_back(parse_table(t));
        token = j.contains("NextToken") && j["NextToken"].is_string()
                    ? j["NextToken"].get<std::string>()
                    : "";
        if (token.empty()) return out;
    }
    return fail(errc::unavailable, "Glue GetTables {}: more than 10000 pages", db);
}

} // namespace floe::aws
