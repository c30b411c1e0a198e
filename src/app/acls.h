#pragma once

#include "config/settings.h"

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace floe::app {

/// `floe acls add|remove|list`: the ACLs in <floe.data-dir>/security/acls.json, the same store
/// CreateAcls / DescribeAcls / DeleteAcls use, whether or not a server runs (a running broker
/// sees changes within 100 ms). Options follow Kafka's kafka-acls:
///   floe acls add --allow User:alice --operation WRITE --topic orders
///   floe acls add --deny User:bob --operation ALL --topic tmp- --resource-pattern-type prefixed
///   floe acls remove --allow User:alice --operation WRITE --topic orders
///   floe acls remove --topic orders            (every ACL of that resource)
///   floe acls list [--topic T | --group G | --cluster | --transactional-id X] [--principal P]
struct acls_command {
    CLI::App* acls = nullptr;
    CLI::App* add = nullptr;
    CLI::App* remove = nullptr;
    CLI::App* list = nullptr;
    std::vector<std::string> allow, deny, operations, topics, groups, transactional_ids;
    bool cluster = false;
    std::string pattern; ///< --resource-pattern-type; empty: literal (add/remove), any (list)
    std::string host = "*";
    std::string principal; ///< list's filter
    /// "add", "remove" or "list" once parsed; empty: not given.
    std::string action;
    bool parsed() const;
    /// Records the parsed subcommand in `action` and forgets the CLI::App pointers.
    void settle();
};

/// Declares the subcommands on `app`; `add_settings` adds --config/--set to each.
void add_acls_command(CLI::App& app, acls_command& cmd, const std::function<void(CLI::App*)>& add_settings);
/// Runs the parsed subcommand; returns the exit code (0 ok, 1 store failure, 2 bad usage,
/// 3 nothing to remove).
int run_acls_command(const acls_command& cmd, const config::settings& s);

} // namespace floe::app
