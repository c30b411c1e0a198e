#include "app/cli.h"

#include "app/serve.h"
#include "app/tables.h"
#include "app/users.h"
#include "base/log.h"
#include "config/settings.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

extern char** environ;

namespace floe::app {
namespace {

/// Options every subcommand that reads settings takes.
struct settings_options {
    std::string config_path;
    std::vector<std::string> sets;
};

void add_settings_options(CLI::App* cmd, settings_options& o) {
    cmd->add_option("--config", o.config_path,
                    "YAML settings file (default: ./floe.yaml when it exists)");
    cmd->add_option("--set", o.sets, "Override a setting: --set key=value (repeatable)")
        ->allow_extra_args(false)
        ->take_all();
}

std::string settings_help() {
    std::string out = "\nSettings (floe.yaml, FLOE_* environment variables, or --set key=value):\n";
    for (auto& d : config::registry::instance().all()) {
        std::string dflt = d.default_text.empty()
                               ? (d.derived_from.empty() ? "unset" : "derived from " + d.derived_from)
                               : d.default_text;
        std::string extra;
        if (!d.choices.empty()) extra = fmt::format(" one of: {}.", fmt::join(d.choices, ", "));
        out += fmt::format("  {}  <{}>  default {}\n      {}.{}  env {}\n", d.name,
                           config::to_string(d.type), dflt, d.description, extra, d.env_name());
    }
    out += "\nSizes: 128MB (10^6), 1GiB (2^30), bare numbers are bytes. Durations: 500ms, 10s, 1m, "
           "2h, 7d.\n";
    return out;
}

/// Loads settings from every source; prints the error and returns nullopt on failure.
std::optional<config::settings> load_settings(const settings_options& o,
                                              const std::vector<std::string>& global_sets) {
    config::load_options lo;
    if (!o.config_path.empty()) lo.config_path = o.config_path;
    lo.overrides = global_sets;
    lo.overrides.insert(lo.overrides.end(), o.sets.begin(), o.sets.end());
    size_t n = 0;
    while (environ && environ[n]) ++n;
    lo.environment = std::span<char* const>(environ, n);
    auto s = config::load(lo);
    if (!s) {
        std::fprintf(stderr, "floe: invalid settings: %s\n", s.error().message().c_str());
        std::fprintf(stderr, "floe: fix the setting named above; `floe --help` lists every setting\n");
        return std::nullopt;
    }
    return std::move(*s);
}

void print_config(const config::settings& s) {
    size_t width = 0;
    for (auto& e : s.entries()) width = std::max(width, e.def->name.size());
    for (auto& e : s.entries()) {
        std::string value;
        if (!e.text) value = "(unset)";
        else if (e.def->secret) value = "********";
        else if (e.def->type == config::setting_type::size)
            value = config::format_size(std::stoll(*e.text));
        else if (e.def->type == config::setting_type::duration)
            value = config::format_duration(std::chrono::milliseconds(std::stoll(*e.text)));
        else value = *e.text;
        std::printf("%-*s = %-40s # %s\n", static_cast<int>(width), e.def->name.c_str(),
                    value.c_str(), e.source.describe().c_str());
    }
}

} // namespace

int run_cli(int argc, char** argv) {
    CLI::App app{"Floe: a Kafka-compatible streaming log whose history lands in Apache Iceberg "
                 "tables",
                 "floe"};
    app.require_subcommand(1);
    app.footer(settings_help());
    std::string log_format, log_level;
    app.add_option("--log-format", log_format, "Log format: text or json (floe.log.format)")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_option("--log-level", log_level, "Log level (floe.log.level)");

    settings_options serve_opts, config_opts;
    auto* serve_cmd = app.add_subcommand("serve", "Run the broker, storage worker and admin plane");
    add_settings_options(serve_cmd, serve_opts);
    auto* config_cmd = app.add_subcommand("config", "Print the effective settings and their sources");
    add_settings_options(config_cmd, config_opts);
    auto* version_cmd = app.add_subcommand("version", "Print the version");
    settings_options tables_opts;
    std::vector<std::string> adopt_names;
    auto* tables_cmd = app.add_subcommand("tables", "Manage the Iceberg tables of the warehouse");
    tables_cmd->require_subcommand(1);
    auto* adopt_cmd = tables_cmd->add_subcommand(
        "adopt", "Make the configured catalog the owner of tables whose location holds metadata it does not "
                 "know (another catalog wrote it); stop every other writer first");
    adopt_cmd->add_option("names", adopt_names, "Topics, or <namespace>.<table> names")->required();
    add_settings_options(adopt_cmd, tables_opts);

    settings_options users_opts;
    users_command users;
    add_users_command(app, users, [&](CLI::App* c) { add_settings_options(c, users_opts); });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    std::vector<std::string> global_sets;
    if (!log_format.empty()) global_sets.push_back("floe.log.format=" + log_format);
    if (!log_level.empty()) global_sets.push_back("floe.log.level=" + log_level);

    if (version_cmd->parsed()) {
        std::printf("floe %s\n", FLOE_VERSION);
        return 0;
    }
    auto& opts = serve_cmd->parsed()   ? serve_opts
                 : adopt_cmd->parsed() ? tables_opts
                 : users.parsed()      ? users_opts
                                       : config_opts;
    auto s = load_settings(opts, global_sets);
    if (!s) return 2;
    if (config_cmd->parsed()) {
        print_config(*s);
        return 0;
    }
    if (adopt_cmd->parsed()) return adopt_tables(*s, adopt_names);
    if (users.parsed()) return run_users_command(users, *s);
    auto fmt_ = parse_log_format(s->get_string("floe.log.format"));
    auto lvl = parse_log_level(s->get_string("floe.log.level"));
    init_logging(*fmt_, *lvl);
    return serve(*s);
}

} // namespace floe::app
