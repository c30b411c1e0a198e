#include "app/users.h"

#include "kafka/scram.h"
#include "kafka/users.h"

#include <CLI/CLI.hpp>

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace floe::app {

bool users_command::parsed() const { return !action.empty() || (users && users->parsed()); }

void users_command::settle() {
    if (users && users->parsed())
        action = add && add->parsed() ? "add" : remove && remove->parsed() ? "remove" : "list";
    users = add = remove = list = nullptr;
}

void add_users_command(CLI::App& app, users_command& cmd, const std::function<void(CLI::App*)>& add_settings) {
    cmd.users = app.add_subcommand("users", "Manage SASL users (SCRAM credentials; PLAIN checks against them)");
    cmd.users->require_subcommand(1);
    cmd.add = cmd.users->add_subcommand(
        "add", "Add a user: SCRAM-SHA-512 and SCRAM-SHA-256 credentials, or the one --mechanism names; the "
               "password comes from --password-file or standard input. Changing an existing user's password "
               "needs --force");
    cmd.add->add_option("name", cmd.name, "User name")->required();
    cmd.add->add_option("--mechanism", cmd.mechanism, "SCRAM-SHA-512 or SCRAM-SHA-256 (default: both)")
        ->check(CLI::IsMember({"SCRAM-SHA-512", "SCRAM-SHA-256"}));
    cmd.add->add_option("--password-file", cmd.password_file,
                        "File whose first line is the password (default: read it from standard input)");
    cmd.add->add_option("--iterations", cmd.iterations, "SCRAM iterations")
        ->check(CLI::Range(kafka::scram_min_iterations, kafka::scram_max_iterations));
    cmd.add->add_flag("--force", cmd.force, "Replace the credentials of a user that exists (a new password)");
    add_settings(cmd.add);
    cmd.remove = cmd.users->add_subcommand("remove", "Remove a user (or only its --mechanism credential)");
    cmd.remove->add_option("name", cmd.name, "User name")->required();
    cmd.remove->add_option("--mechanism", cmd.mechanism, "SCRAM-SHA-512 or SCRAM-SHA-256 (default: the user)")
        ->check(CLI::IsMember({"SCRAM-SHA-512", "SCRAM-SHA-256"}));
    add_settings(cmd.remove);
    cmd.list = cmd.users->add_subcommand("list", "List users and their mechanisms (never a secret)");
    add_settings(cmd.list);
}

namespace {

/// The first line of `in` without its line end; nullopt when there is none.
std::optional<std::string> first_line(std::istream& in) {
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

std::optional<std::string> read_password(const std::string& file) {
    if (!file.empty()) {
        std::ifstream f(file);
        if (!f) {
            std::fprintf(stderr, "floe: cannot read --password-file %s\n", file.c_str());
            return std::nullopt;
        }
        return first_line(f);
    }
    bool tty = ::isatty(STDIN_FILENO);
    termios old{};
    if (tty) {
        std::fprintf(stderr, "Password: ");
        ::tcgetattr(STDIN_FILENO, &old);
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    }
    auto p = first_line(std::cin);
    if (tty) {
        ::tcsetattr(STDIN_FILENO, TCSANOW, &old);
        std::fprintf(stderr, "\n");
    }
    return p;
}

} // namespace

int run_users_command(const users_command& cmd, const config::settings& s) {
    auto dir = std::filesystem::absolute(s.get_string("floe.data-dir")) / "security";
    kafka::user_store store(dir);
    if (cmd.action == "list") {
        auto users = store.list();
        if (!users) {
            std::fprintf(stderr, "floe: %s\n", users.error().message().c_str());
            return 1;
        }
        for (auto& u : *users) {
            std::string mechs;
            for (auto& [m, it] : u.iterations)
                mechs += fmt::format("{}{} (iterations {})", mechs.empty() ? "" : ", ", kafka::to_string(m), it);
            std::printf("%s\t%s\n", u.name.c_str(), mechs.c_str());
        }
        return 0;
    }
    std::optional<kafka::scram_mechanism> only;
    if (!cmd.mechanism.empty()) only = kafka::parse_scram_mechanism(cmd.mechanism);
    if (cmd.action == "remove") {
        if (auto r = store.remove(cmd.name, only); !r) {
            std::fprintf(stderr, "floe: %s\n", r.error().message().c_str());
            return r.error().code() == errc::not_found ? 3 : 1;
        }
        std::printf("user %s: %s removed\n", cmd.name.c_str(),
                    only ? std::string(kafka::to_string(*only)).c_str() : "all credentials");
        return 0;
    }
    // add
    if (cmd.name.empty() || cmd.name.find_first_of(std::string_view("\0", 1)) != std::string::npos) {
        std::fprintf(stderr, "floe: the user name must not be empty\n");
        return 2;
    }
    auto password = read_password(cmd.password_file);
    if (!password || password->empty()) {
        std::fprintf(stderr, "floe: no password given (first line of --password-file or standard input)\n");
        return 2;
    }
    std::vector<kafka::scram_mechanism> mechs;
    if (only) mechs.push_back(*only);
    else mechs = {kafka::scram_mechanism::sha512, kafka::scram_mechanism::sha256};
    auto r = store.update([&](kafka::user_store::users_map& users) -> result<void> {
        // Checked under the store's lock, so two `users add` of one name cannot both pass it.
        if (auto u = users.find(cmd.name); u != users.end() && !cmd.force)
            for (auto m : mechs)
                if (u->second.contains(m))
                    return fail(errc::already_exists,
                                "user {} exists (with {}); `floe users add {} --force` replaces its password, "
                                "`floe users list` shows the users",
                                cmd.name, kafka::to_string(m), cmd.name);
        for (auto m : mechs)
            users[cmd.name][m] = kafka::scram_derive(m, *password, kafka::scram_random_salt(), cmd.iterations);
        return {};
    });
    if (!r) {
        std::fprintf(stderr, "floe: %s\n", r.error().message().c_str());
        return r.error().code() == errc::already_exists ? 3 : 1;
    }
    std::string names;
    for (auto m : mechs) names += fmt::format("{}{}", names.empty() ? "" : ", ", kafka::to_string(m));
    std::printf("user %s: %s credentials stored in %s\n", cmd.name.c_str(), names.c_str(),
                store.path().string().c_str());
    return 0;
}

} // namespace floe::app
