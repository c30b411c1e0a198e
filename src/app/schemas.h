#pragma once

#include "config/settings.h"

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace floe::app {

/// `floe schemas list [--deleted]`, `floe schemas show SUBJECT [--version V]`,
/// `floe schemas register SUBJECT --file F [--type AVRO|PROTOBUF|JSON] [--reference
/// NAME=SUBJECT:VERSION ...]`, `floe schemas check SUBJECT --file F [--version V] [--type T]
/// [--reference ...]`: a client of the schema registry's REST API on the running server
/// (`--url`, default http://<floe.schema-registry.listen>; https when floe.http.tls.enabled,
/// a bearer token from --token-file). Exit codes: 0 ok (check: compatible),
/// 1 the registry cannot be reached, 2 bad usage, 3 the registry refused (check: incompatible),
/// with its error_code and message printed.
struct schemas_command {
    CLI::App* schemas = nullptr;
    CLI::App* list = nullptr;
    CLI::App* show = nullptr;
    CLI::App* reg = nullptr;
    CLI::App* check = nullptr;
    std::string action;
    std::string subject;
    std::string file;
    std::string type = "AVRO";
    std::string version;
    std::string url;
    std::string token_file;
    std::vector<std::string> references;
    bool deleted = false;
    bool parsed() const;
    void settle();
};

void add_schemas_command(CLI::App& app, schemas_command& cmd, const std::function<void(CLI::App*)>& add_settings);
int run_schemas_command(const schemas_command& cmd, const config::settings& s);

} // namespace floe::app
