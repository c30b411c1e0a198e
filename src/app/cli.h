#pragma once

#include "app/acls.h"
#include "app/maintain.h"
#include "app/restore.h"
#include "app/schemas.h"
#include "app/users.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::app {

/// What the command line asks for, before any setting is loaded. `--config` and `--set` are
/// accepted both before and after the subcommand name (`floe --set k=v serve` and
/// `floe serve --set k=v`); those before it apply first, so the later ones win.
struct command_line {
    std::string command;     ///< "serve", "config", "tables adopt", "tables files", "cluster lake show", "cluster lake set", "dlq replay", "maintain", "restore", "users", "acls" or "version"
    std::vector<std::string> args; ///< the subcommand's positional arguments (table names)
    bool sql = false;              ///< `floe tables files --sql`
    bool keys = false;             ///< `floe tables files --keys`
    bool force = false;            ///< `floe cluster lake set --force`
    maintain_request maintain;     ///< `floe maintain`'s options
    users_command users;           ///< `floe users`'s subcommand and options
    acls_command acls;             ///< `floe acls`'s subcommand and options
    schemas_command schemas;       ///< `floe schemas`'s subcommand and options
    restore_request restore;       ///< `floe restore`'s options
    std::string config_path; ///< --config; empty: ./floe.yaml when it exists
    std::vector<std::string>
        sets; ///< "key=value" from --set (and --log-format/--log-level), in order
    std::optional<int> exit_code; ///< set when parsing decided the outcome (--help, bad usage)
};

/// Parses argv; prints help or a usage error itself (and sets exit_code) when it decides the
/// outcome. A mistyped subcommand gets the nearest known one suggested, with exit code 2.
command_line parse_command_line(int argc, const char* const* argv);

/// The subcommand among `known` nearest to `typed`, when it is plausibly a typo of it: at most
/// two single-letter edits away (and fewer than the word's own length), or a prefix of it.
std::optional<std::string> nearest_command(std::string_view typed,
                                           std::span<const std::string_view> known);

/// Runs the `floe` command line; returns the process exit code.
/// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid settings.
int run_cli(int argc, char** argv);

} // namespace floe::app
