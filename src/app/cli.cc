#include "app/cli.h"

#include "app/maintain.h"
#include "app/serve.h"
#include "app/tables.h"
#include "app/cluster_lake.h"
#include "app/dlq.h"
#include "app/schemas.h"
#include "app/users.h"
#include "config/redact.h"
#include "base/log.h"
#include "config/settings.h"
#include "base/suggest.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>

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
                    "YAML settings file (default: ./floe.yaml when it exists)")
        ->type_name("PATH");
    cmd->add_option("--set", o.sets, "Override a setting: --set key=value (repeatable)")
        ->type_name("KEY=VALUE")
        ->allow_extra_args(false)
        ->take_all();
}

std::string usage_help() {
    return "\nSettings on the command line:\n"
           "  floe [--config PATH] [--set key=value]... COMMAND [--config PATH] [--set "
           "key=value]...\n"
           "  --config and --set are accepted before or after the command name; repeat --set for\n"
           "  several settings (later ones win). For example:\n"
           "    floe serve --set floe.kafka.listen=127.0.0.1:19092 --set floe.data-dir=/tmp/floe\n"
           "    floe --config my-floe.yaml config\n"
           "  `floe COMMAND --help` shows a command's own options.\n";
}

std::string settings_help() {
    std::string out = "\nSettings (floe.yaml, FLOE_* environment variables, or --set key=value):\n";
    for (auto& d : config::registry::instance().all()) {
        std::string dflt =
            d.default_text.empty()
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
std::optional<config::settings> load_settings(const command_line& cl) {
    config::load_options lo;
    if (!cl.config_path.empty()) lo.config_path = cl.config_path;
    lo.overrides = cl.sets;
    size_t n = 0;
    while (environ && environ[n])
        ++n;
    lo.environment = std::span<char* const>(environ, n);
    auto s = config::load(lo);
    if (!s) {
        std::fprintf(stderr, "floe: invalid settings: %s\n", s.error().message().c_str());
        std::fprintf(stderr,
                     "floe: fix the setting named above; `floe --help` lists every setting\n");
        return std::nullopt;
    }
    return std::move(*s);
}

void print_config(const config::settings& s) {
    size_t width = 0;
    for (auto& e : s.entries())
        width = std::max(width, e.def->name.size());
    for (auto& e : s.entries()) {
        std::string value;
        if (!e.text)
            value = "(unset)";
        else if (e.def->secret || e.def->name.ends_with(".password") || e.def->name.ends_with("secret-access-key"))
            value = "********";
        else if (e.def->type == config::setting_type::size)
            value = config::format_size(std::stoll(*e.text));
        else if (e.def->type == config::setting_type::duration)
            value = config::format_duration(std::chrono::milliseconds(std::stoll(*e.text)));
        else
            value = config::redact_uri(*e.text); // a catalog or source URI's password
        std::printf("%-*s = %-40s # %s\n", static_cast<int>(width), e.def->name.c_str(),
                    value.c_str(), e.source.describe().c_str());
    }
}

constexpr std::string_view commands[] = {"serve", "config", "tables", "cluster", "maintain", "users", "acls", "schemas", "dlq", "restore", "version"};

/// The first word that is neither an option nor an option's value: what CLI11 takes as the
/// subcommand. Empty when there is none.
std::string first_positional(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--") return i + 1 < argc ? argv[i + 1] : "";
        if (a.starts_with("-")) {
            bool takes_value =
                a == "--config" || a == "--set" || a == "--log-format" || a == "--log-level";
            if (takes_value) ++i;
            continue;
        }
        return std::string(a);
    }
    return {};
}

} // namespace

std::optional<std::string> nearest_command(std::string_view typed,
                                           std::span<const std::string_view> known) {
    if (typed.empty()) return std::nullopt;
    std::optional<std::string> best;
    size_t best_d = SIZE_MAX;
    for (auto k : known) {
        size_t d = k.starts_with(typed) && typed.size() >= 2 ? 0 : edit_distance(typed, k);
        if (d <= 2 && d < typed.size() && d < best_d) {
            best = std::string(k);
            best_d = d;
        }
    }
    return best;
}

command_line parse_command_line(int argc, const char* const* argv) {
    command_line out;
    // CLI11 would only say "not expected"; a typo of a subcommand gets the nearest one named.
    if (auto word = first_positional(argc, argv);
        !word.empty()
        && std::find(std::begin(commands), std::end(commands), word) == std::end(commands)) {
        if (auto near = nearest_command(word, commands))
            std::fprintf(stderr, "floe: unknown command '%s'; did you mean '%s'?\n", word.c_str(),
                         near->c_str());
        else
            std::fprintf(stderr, "floe: unknown command '%s'; commands: %s (see floe --help)\n",
                         word.c_str(), fmt::format("{}", fmt::join(commands, ", ")).c_str());
        out.exit_code = 2;
        return out;
    }

    CLI::App app{"Floe: a Kafka-compatible streaming log whose history lands in Apache Iceberg "
                 "tables",
                 "floe"};
    app.require_subcommand(1);
    std::string log_format, log_level;
    app.add_option("--log-format", log_format, "Log format: text or json (floe.log.format)")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_option("--log-level", log_level, "Log level (floe.log.level)");
    // Also accepted before the subcommand name: users type `floe --set k=v serve`.
    settings_options global_opts, serve_opts, config_opts;
    add_settings_options(&app, global_opts);

    auto* serve_cmd = app.add_subcommand("serve", "Run the broker, storage worker and admin plane");
    add_settings_options(serve_cmd, serve_opts);
    auto* config_cmd =
        app.add_subcommand("config", "Print the effective settings and their sources");
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
    std::string files_name;
    bool files_sql = false;
    auto* files_cmd = tables_cmd->add_subcommand(
        "files", "List the data files of a table's current snapshot (what a query must read: no file that "
                 "compaction replaced, no orphan), one path a line, for read_parquet");
    files_cmd->add_option("name", files_name, "A topic, or <namespace>.<table>")->required();
    files_cmd->add_flag("--sql", files_sql,
                        "Print one DuckDB expression instead: read_parquet(['<path>', ...], union_by_name=true), as in "
                        "SELECT count(*) FROM $(floe tables files orders --sql)");
    bool files_keys = false;
    files_cmd->add_flag("--keys", files_keys,
                        "Encrypted tables: print the DuckDB statements that register the keys of the table's files "
                        "(PRAGMA add_parquet_key('<key id>', '<base64 key>'), from the keyring of "
                        "floe.encryption.*), for whoever may read the table");
    add_settings_options(files_cmd, tables_opts);
    // floe dlq replay --topic T: the dead letters of a typed topic decoded again.
    settings_options dlq_opts;
    auto* dlq_cmd = app.add_subcommand("dlq", "Dead-letter tables of typed topics");
    dlq_cmd->require_subcommand(1);
    std::string dlq_topic, dlq_url, dlq_token_file;
    auto* dlq_replay_cmd = dlq_cmd->add_subcommand(
        "replay", "Decode a typed topic's dead letters again (after a fix: a new schema version, a registered id) "
                  "and move those that decode now into its table, exactly once (a client of the running server)");
    dlq_replay_cmd->add_option("--topic", dlq_topic, "The typed topic")->required();
    dlq_replay_cmd->add_option("--url", dlq_url, "Admin plane URL (default: http://<floe.http.listen>)");
    dlq_replay_cmd->add_option("--token-file", dlq_token_file,
                               "File whose first line is a bearer token (when floe.http.tokens-file is set)");
    add_settings_options(dlq_replay_cmd, dlq_opts);
    // floe cluster lake show|set: the lake the brokers of a cluster on Redis share.
    settings_options cluster_opts;
    bool lake_force = false;
    auto* cluster_cmd = app.add_subcommand("cluster", "The cluster of brokers sharing the Redis tier");
    cluster_cmd->require_subcommand(1);
    auto* lake_cmd = cluster_cmd->add_subcommand(
        "lake", "The catalog and warehouse every broker of the cluster must use (recorded in Redis by the first)");
    lake_cmd->require_subcommand(1);
    auto* lake_show_cmd = lake_cmd->add_subcommand("show", "Print the cluster's recorded lake");
    add_settings_options(lake_show_cmd, cluster_opts);
    auto* lake_set_cmd = lake_cmd->add_subcommand(
        "set", "Record this configuration's catalog and warehouse as the cluster's lake (stop every broker first)");
    lake_set_cmd->add_flag("--force", lake_force, "Record it even while brokers are live");
    add_settings_options(lake_set_cmd, cluster_opts);
    settings_options maintain_opts;
    maintain_request maintain_req;
    std::string maintain_table, maintain_older;
    auto* maintain_cmd = app.add_subcommand(
        "maintain", "Table maintenance on demand: compact small files, merge manifests, expire snapshots, delete "
                    "orphan files (refused while a live floe serve on the same data directory holds the storage "
                    "lease)");
    maintain_cmd->add_option("--table", maintain_table, "A topic or <namespace>.<table> (default: every table)");
    maintain_cmd->add_flag("--dry-run", maintain_req.dry_run, "Print the plan, change nothing");
    bool maintain_reencrypt = false;
    maintain_cmd->add_flag("--reencrypt", maintain_reencrypt,
                           "Rewrite data files not encrypted with the table's current key (after a key rotation, or "
                           "encryption turned on or off); alone, or after the actions given");
    maintain_cmd->add_option("--older-than", maintain_older,
                             "Snapshot age for expire and safety margin for orphans (e.g. 1h, 3d)");
    maintain_cmd
        ->add_option("actions", maintain_req.actions, "compact, manifests, expire, orphans (default: all, in that order)")
        ->check(CLI::IsMember({"compact", "manifests", "expire", "orphans"}));
    add_settings_options(maintain_cmd, maintain_opts);

    // floe restore --table T --to nats://...|kafka://...: the backup half (src/app/restore.h).
    settings_options restore_opts;
    restore_request restore_req;
    int64_t restore_from_off = -1, restore_to_off = -1;
    std::string restore_from_ts, restore_to_ts;
    auto* restore_cmd = app.add_subcommand(
        "restore", "Replay a table's rows in order into a JetStream stream or a Kafka topic (subjects, keys, headers, "
                   "timestamps kept); idempotent: a run cut short and run again adds nothing twice");
    restore_cmd->add_option("--table", restore_req.table, "A topic, or <namespace>.<table>")->required();
    auto* rfo = restore_cmd->add_option("--from-offset", restore_from_off, "First offset replayed (inclusive)")
                    ->check(CLI::NonNegativeNumber);
    auto* rfts = restore_cmd->add_option("--from-ts", restore_from_ts,
                                         "First message time replayed (inclusive): epoch ms or ISO-8601 UTC");
    rfo->excludes(rfts);
    auto* rto = restore_cmd->add_option("--to-offset", restore_to_off, "Last offset replayed (inclusive)")
                    ->check(CLI::NonNegativeNumber);
    auto* rtts = restore_cmd->add_option("--to-ts", restore_to_ts,
                                         "Last message time replayed (inclusive): epoch ms or ISO-8601 UTC");
    rto->excludes(rtts);
    restore_cmd->add_option("--to", restore_req.to, "nats://host:port (with --stream) or kafka://host:port (with --topic)")
        ->required();
    restore_cmd->add_option("--stream", restore_req.stream, "The JetStream stream to publish to (it must exist)");
    restore_cmd->add_option("--topic", restore_req.topic, "The Kafka topic to produce to (it must exist)");
    restore_cmd->add_option("--max-rate", restore_req.max_rate, "Messages per second at most (default: no limit)")
        ->check(CLI::PositiveNumber);
    add_settings_options(restore_cmd, restore_opts);

    settings_options users_opts;
    users_command users;
    add_users_command(app, users, [&](CLI::App* c) { add_settings_options(c, users_opts); });
    settings_options acls_opts;
    acls_command acls;
    add_acls_command(app, acls, [&](CLI::App* c) { add_settings_options(c, acls_opts); });
    settings_options schemas_opts;
    schemas_command schemas;
    add_schemas_command(app, schemas, [&](CLI::App* c) { add_settings_options(c, schemas_opts); });

    // `floe --help` lists every setting; a command's --help only its own options (CLI11 copies
    // the parent's footer into each subcommand when it is made, hence set here, after them).
    app.footer(usage_help() + settings_help());
    std::function<void(CLI::App*)> short_footers = [&](CLI::App* cmd) {
        for (auto* sub : cmd->get_subcommands([](CLI::App*) { return true; })) {
            sub->footer("\nSettings: --config PATH and --set key=value (repeatable), before or after the command "
                        "name, and FLOE_* environment variables.\n`floe --help` lists every setting with its type, "
                        "default and environment variable; `floe config` shows the values in force.\n");
            short_footers(sub);
        }
    };
    short_footers(&app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        out.exit_code = app.exit(e) == 0 ? 0 : 2;
        return out;
    }
    auto& opts = serve_cmd->parsed()      ? serve_opts
                 : adopt_cmd->parsed() || files_cmd->parsed() ? tables_opts
                 : lake_show_cmd->parsed() || lake_set_cmd->parsed() ? cluster_opts
                 : dlq_replay_cmd->parsed() ? dlq_opts
                 : maintain_cmd->parsed() ? maintain_opts
                 : restore_cmd->parsed()  ? restore_opts
                 : users.parsed()         ? users_opts
                 : acls.parsed()          ? acls_opts
                 : schemas.parsed()       ? schemas_opts
                                          : config_opts;
    if (!global_opts.config_path.empty() && !opts.config_path.empty()
        && global_opts.config_path != opts.config_path) {
        std::fprintf(stderr, "floe: --config given twice (%s and %s); give one\n",
                     global_opts.config_path.c_str(), opts.config_path.c_str());
        out.exit_code = 2;
        return out;
    }
    out.command = serve_cmd->parsed()    ? "serve"
                  : config_cmd->parsed() ? "config"
                  : adopt_cmd->parsed()  ? "tables adopt"
                  : files_cmd->parsed()  ? "tables files"
                  : lake_show_cmd->parsed() ? "cluster lake show"
                  : lake_set_cmd->parsed()  ? "cluster lake set"
                  : dlq_replay_cmd->parsed() ? "dlq replay"
                  : maintain_cmd->parsed() ? "maintain"
                  : restore_cmd->parsed()  ? "restore"
                  : users.parsed()       ? "users"
                  : acls.parsed()        ? "acls"
                  : schemas.parsed()     ? "schemas"
                                         : "version";
    (void)version_cmd;
    out.args = std::move(adopt_names);
    if (files_cmd->parsed()) {
        out.args = {files_name};
        out.sql = files_sql;
        out.keys = files_keys;
    }
    if (dlq_replay_cmd->parsed()) out.args = {dlq_topic, dlq_url, dlq_token_file};
    out.force = lake_force;
    if (!maintain_table.empty()) maintain_req.table = maintain_table;
    if (!maintain_older.empty()) maintain_req.older_than = maintain_older;
    if (maintain_reencrypt) maintain_req.actions.push_back("reencrypt");
    out.maintain = std::move(maintain_req);
    if (restore_from_off >= 0) restore_req.from_offset = restore_from_off;
    if (restore_to_off >= 0) restore_req.to_offset = restore_to_off;
    if (!restore_from_ts.empty()) restore_req.from_ts = restore_from_ts;
    if (!restore_to_ts.empty()) restore_req.to_ts = restore_to_ts;
    out.restore = std::move(restore_req);
    users.settle();
    out.users = std::move(users);
    acls.settle();
    out.acls = std::move(acls);
    schemas.settle();
    out.schemas = std::move(schemas);
    out.config_path = opts.config_path.empty() ? global_opts.config_path : opts.config_path;
    if (!log_format.empty()) out.sets.push_back("floe.log.format=" + log_format);
    if (!log_level.empty()) out.sets.push_back("floe.log.level=" + log_level);
    out.sets.insert(out.sets.end(), global_opts.sets.begin(), global_opts.sets.end());
    out.sets.insert(out.sets.end(), opts.sets.begin(), opts.sets.end());
    return out;
}

int run_cli(int argc, char** argv) {
    auto cl = parse_command_line(argc, argv);
    if (cl.exit_code) return *cl.exit_code;
    if (cl.command == "version") {
        std::printf("floe %s\n", FLOE_VERSION);
        return 0;
    }
    auto s = load_settings(cl);
    if (!s) return 2;
    if (cl.command == "config") {
        print_config(*s);
        return 0;
    }
    if (cl.command == "tables adopt") return adopt_tables(*s, cl.args);
    if (cl.command == "tables files") return list_table_files(*s, cl.args.at(0), cl.sql, cl.keys);
    if (cl.command == "dlq replay") return run_dlq_replay(*s, cl.args.at(0), cl.args.at(1), cl.args.at(2));
    if (cl.command == "cluster lake show") return run_cluster_lake_command(*s, "show", false);
    if (cl.command == "cluster lake set") return run_cluster_lake_command(*s, "set", cl.force);
    if (cl.command == "maintain") {
        auto fmt_ = parse_log_format(s->get_string("floe.log.format"));
        auto lvl = parse_log_level(s->get_string("floe.log.level"));
        init_logging(*fmt_, *lvl);
        return maintain(*s, cl.maintain);
    }
    if (cl.command == "restore") return run_restore(*s, cl.restore);
    if (cl.command == "users") return run_users_command(cl.users, *s);
    if (cl.command == "acls") return run_acls_command(cl.acls, *s);
    if (cl.command == "schemas") return run_schemas_command(cl.schemas, *s);
    auto fmt_ = parse_log_format(s->get_string("floe.log.format"));
    auto lvl = parse_log_level(s->get_string("floe.log.level"));
    init_logging(*fmt_, *lvl);
    return serve(*s);
}

} // namespace floe::app
