#include "app/schemas.h"

#include "app/http_call.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace floe::app {

using json = nlohmann::json;

bool schemas_command::parsed() const { return !action.empty() || (schemas && schemas->parsed()); }

void schemas_command::settle() {
    if (schemas && schemas->parsed())
        action = list && list->parsed()   ? "list"
                 : show && show->parsed() ? "show"
                 : reg && reg->parsed()   ? "register"
                                          : "check";
    schemas = list = show = reg = check = nullptr;
}

void add_schemas_command(CLI::App& app, schemas_command& cmd, const std::function<void(CLI::App*)>& add_settings) {
    cmd.schemas = app.add_subcommand("schemas", "Schema registry: list subjects, show, register and check schemas "
                                                "(a client of the running server's registry API)");
    cmd.schemas->require_subcommand(1);
    auto common = [&](CLI::App* c) {
        c->add_option("--url", cmd.url, "Registry URL (default: http://<floe.schema-registry.listen>)");
        c->add_option("--token-file", cmd.token_file,
                      "File whose first line is a bearer token (when floe.http.tokens-file is set)");
        add_settings(c);
    };
    auto schema_opts = [&](CLI::App* c) {
        c->add_option("subject", cmd.subject, "Subject")->required();
        c->add_option("--file", cmd.file, "File holding the schema text")->required();
        c->add_option("--type", cmd.type, "AVRO, PROTOBUF or JSON")->check(CLI::IsMember({"AVRO", "PROTOBUF", "JSON"}));
        c->add_option("--reference", cmd.references, "A schema reference NAME=SUBJECT:VERSION (repeatable)");
    };
    cmd.list = cmd.schemas->add_subcommand("list", "List subjects and their versions");
    cmd.list->add_flag("--deleted", cmd.deleted, "Include soft-deleted subjects and versions");
    common(cmd.list);
    cmd.show = cmd.schemas->add_subcommand("show", "Show a subject's version (default latest) with its schema");
    cmd.show->add_option("subject", cmd.subject, "Subject")->required();
    cmd.show->add_option("--version", cmd.version, "Version number or latest");
    common(cmd.show);
    cmd.reg = cmd.schemas->add_subcommand("register", "Register the schema in --file under SUBJECT; prints its id");
    schema_opts(cmd.reg);
    common(cmd.reg);
    cmd.check = cmd.schemas->add_subcommand(
        "check", "Check the schema in --file against SUBJECT (--version, default: what its level names); exit 3 "
                 "when incompatible");
    schema_opts(cmd.check);
    cmd.check->add_option("--version", cmd.version, "Version number or latest");
    common(cmd.check);
}

namespace {

std::string escape_segment(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += char(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

http_call_options g_call{"application/vnd.schemaregistry.v1+json", "", 30, "the schema registry"};

std::optional<http_answer> call(const std::string& url, const std::string& method, const std::string& body) {
    return http_call(url, method, body, g_call);
}

int refused(const http_answer& a) {
    auto j = json::parse(a.body, nullptr, false);
    if (j.is_object() && j.contains("error_code"))
        std::fprintf(stderr, "floe: the registry refused (HTTP %ld, error_code %s): %s\n", a.status,
                     j["error_code"].dump().c_str(), j.value("message", std::string()).c_str());
    else
        std::fprintf(stderr, "floe: the registry answered HTTP %ld: %s\n", a.status, a.body.c_str());
    return 3;
}

} // namespace

int run_schemas_command(const schemas_command& cmd, const config::settings& s) {
    std::string base = cmd.url;
    if (base.empty()) {
        auto a = s.get_address("floe.schema-registry.listen");
        base = fmt::format("{}://{}:{}", s.get_bool("floe.http.tls.enabled") ? "https" : "http", a.host, a.port);
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (!cmd.token_file.empty()) {
        auto t = read_token_file(cmd.token_file);
        if (!t) return 2;
        g_call.token = *t;
    }
    auto subject = escape_segment(cmd.subject);
    std::string q_deleted = cmd.deleted ? "?deleted=true" : "";
    if (cmd.action == "list") {
        auto a = call(base + "/subjects" + q_deleted, "GET", "");
        if (!a) return 1;
        if (a->status != 200) return refused(*a);
        auto subjects = json::parse(a->body, nullptr, false);
        for (auto& sj : subjects) {
            auto name = sj.get<std::string>();
            auto v = call(base + "/subjects/" + escape_segment(name) + "/versions" + q_deleted, "GET", "");
            if (!v) return 1;
            std::printf("%s\tversions %s\n", name.c_str(), v->status == 200 ? v->body.c_str() : "?");
        }
        return 0;
    }
    if (cmd.action == "show") {
        auto v = cmd.version.empty() ? "latest" : cmd.version;
        auto a = call(base + "/subjects/" + subject + "/versions/" + escape_segment(v), "GET", "");
        if (!a) return 1;
        if (a->status != 200) return refused(*a);
        auto j = json::parse(a->body, nullptr, false);
        std::printf("subject %s version %s id %s type %s\n", j.value("subject", std::string()).c_str(),
                    j["version"].dump().c_str(), j["id"].dump().c_str(), j.value("schemaType", std::string("AVRO")).c_str());
        if (j.contains("references")) std::printf("references %s\n", j["references"].dump().c_str());
        std::printf("%s\n", j.value("schema", std::string()).c_str());
        return 0;
    }
    // register / check: the schema from --file.
    std::ifstream f(cmd.file, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "floe: cannot read --file %s\n", cmd.file.c_str());
        return 2;
    }
    std::stringstream text;
    text << f.rdbuf();
    json body{{"schema", text.str()}};
    if (cmd.type != "AVRO") body["schemaType"] = cmd.type;
    if (!cmd.references.empty()) {
        body["references"] = json::array();
        for (auto& r : cmd.references) {
            auto eq = r.find('='), colon = r.rfind(':');
            if (eq == std::string::npos || colon == std::string::npos || colon < eq) {
                std::fprintf(stderr, "floe: --reference %s: expected NAME=SUBJECT:VERSION\n", r.c_str());
                return 2;
            }
            int v = std::atoi(r.substr(colon + 1).c_str());
            body["references"].push_back({{"name", r.substr(0, eq)}, {"subject", r.substr(eq + 1, colon - eq - 1)},
                                          {"version", v}});
        }
    }
    if (cmd.action == "register") {
        auto a = call(base + "/subjects/" + subject + "/versions", "POST", body.dump());
        if (!a) return 1;
        if (a->status != 200) return refused(*a);
        std::printf("%s\n", a->body.c_str());
        return 0;
    }
    auto url = fmt::format("{}/compatibility/subjects/{}/versions{}{}?verbose=true", base, subject,
                           cmd.version.empty() ? "" : "/", escape_segment(cmd.version));
    auto a = call(url, "POST", body.dump());
    if (!a) return 1;
    if (a->status != 200) return refused(*a);
    auto j = json::parse(a->body, nullptr, false);
    bool ok = j.value("is_compatible", false);
    std::printf("%s\n", ok ? "compatible" : "incompatible");
    if (j.contains("messages"))
        for (auto& m : j["messages"]) std::printf("  %s\n", m.get<std::string>().c_str());
    return ok ? 0 : 3;
}

} // namespace floe::app
