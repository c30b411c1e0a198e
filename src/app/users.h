#pragma once

#include "config/settings.h"

#include <functional>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace floe::app {

/// `floe users add NAME [--mechanism M] [--password-file F] [--force]` (refuses, exit 3, to
/// replace credentials the user already has without --force), `floe users remove NAME
/// [--mechanism M]`, `floe users list`: the SASL user store in <floe.data-dir>/security, used
/// the same whether or not a server runs (a running broker sees changes at the next
/// authentication).
struct users_command {
    CLI::App* users = nullptr;
    CLI::App* add = nullptr;
    CLI::App* remove = nullptr;
    CLI::App* list = nullptr;
    std::string name;
    std::string mechanism;
    std::string password_file;
    int iterations = 8192;
    bool force = false; ///< `add --force`: replace an existing user's credentials
    /// "add", "remove" or "list" once parsed (kept after the CLI::App is gone); empty: not given.
    std::string action;
    bool parsed() const;
    /// Records which subcommand was parsed in `action` and forgets the CLI::App pointers, so the
    /// command outlives the parser.
    void settle();
};

/// Declares the subcommands on `app`; `add_settings` adds --config/--set to each.
void add_users_command(CLI::App& app, users_command& cmd,
                       const std::function<void(CLI::App*)>& add_settings);
/// Runs the parsed subcommand; returns the exit code.
int run_users_command(const users_command& cmd, const config::settings& s);

} // namespace floe::app
