#include "app/acls.h"

#include "kafka/acl.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace floe::app {

bool acls_command::parsed() const { return !action.empty() || (acls && acls->parsed()); }

void acls_command::settle() {
    if (acls && acls->parsed())
        action = add && add->parsed() ? "add" : remove && remove->parsed() ? "remove" : "list";
    acls = add = remove = list = nullptr;
}

namespace {

void add_resource_options(CLI::App* c, acls_command& cmd, bool filter) {
    c->add_option("--topic", cmd.topics, "Topic name (or prefix; '*' for every topic)");
    c->add_option("--group", cmd.groups, "Consumer group id (or prefix; '*' for every group)");
    c->add_flag("--cluster", cmd.cluster, "The cluster resource");
    c->add_option("--transactional-id", cmd.transactional_ids, "Transactional id (or prefix; '*' for every one)");
    c->add_option("--resource-pattern-type", cmd.pattern,
                  filter ? "any, match, literal or prefixed (default: any)" : "literal or prefixed (default: literal)")
        ->check(filter ? CLI::IsMember({"any", "match", "literal", "prefixed"}, CLI::ignore_case)
                       : CLI::IsMember({"literal", "prefixed"}, CLI::ignore_case));
}

void add_binding_options(CLI::App* c, acls_command& cmd) {
    c->add_option("--allow", cmd.allow, "Principal allowed (User:alice, User:* for everyone)");
    c->add_option("--deny", cmd.deny, "Principal denied (a DENY wins over any ALLOW)");
    c->add_option("--operation", cmd.operations,
                  "ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, "
                  "ALTER_CONFIGS, IDEMPOTENT_WRITE (repeatable; default ALL)");
    c->add_option("--host", cmd.host, "Client address the ACL applies to (default: * for any)");
}

struct resource_ref {
    kafka::acl_resource type;
    std::string name;
};

std::vector<resource_ref> resources_of(const acls_command& cmd) {
    std::vector<resource_ref> out;
    for (auto& t : cmd.topics) out.push_back({kafka::acl_resource::topic, t});
    for (auto& g : cmd.groups) out.push_back({kafka::acl_resource::group, g});
    for (auto& x : cmd.transactional_ids) out.push_back({kafka::acl_resource::transactional_id, x});
    if (cmd.cluster) out.push_back({kafka::acl_resource::cluster, std::string(kafka::k_cluster_resource_name)});
    return out;
}

int print_error(std::string_view msg, int code) {
    std::fprintf(stderr, "floe: %.*s\n", int(msg.size()), msg.data());
    return code;
}

} // namespace

void add_acls_command(CLI::App& app, acls_command& cmd, const std::function<void(CLI::App*)>& add_settings) {
    cmd.acls = app.add_subcommand("acls", "Manage Kafka ACLs (principal, resource, operation, allow/deny, host)");
    cmd.acls->require_subcommand(1);
    cmd.add = cmd.acls->add_subcommand("add", "Add ACLs: every --allow/--deny principal × --operation × resource");
    add_binding_options(cmd.add, cmd);
    add_resource_options(cmd.add, cmd, false);
    add_settings(cmd.add);
    cmd.remove = cmd.acls->add_subcommand(
        "remove", "Remove the ACLs given as for add; without --allow/--deny, every ACL of the resources "
                  "(of the --operation ones when given)");
    add_binding_options(cmd.remove, cmd);
    add_resource_options(cmd.remove, cmd, false);
    add_settings(cmd.remove);
    cmd.list = cmd.acls->add_subcommand("list", "List ACLs (all, or those of the resources and --principal given)");
    add_resource_options(cmd.list, cmd, true);
    cmd.list->add_option("--principal", cmd.principal, "Only the ACLs of this principal");
    add_settings(cmd.list);
}

int run_acls_command(const acls_command& cmd, const config::settings& s) {
    auto dir = std::filesystem::absolute(s.get_string("floe.data-dir")) / "security";
    kafka::acl_store store(dir);
    auto resources = resources_of(cmd);

    if (cmd.action == "list") {
        kafka::acl_pattern pattern = kafka::acl_pattern::any;
        if (!cmd.pattern.empty()) pattern = *kafka::parse_acl_pattern(cmd.pattern);
        std::vector<kafka::acl_filter> filters;
        for (auto& r : resources) {
            kafka::acl_filter f;
            f.resource_type = r.type;
            f.resource_name = r.name;
            f.pattern = pattern;
            filters.push_back(std::move(f));
        }
        if (filters.empty()) filters.emplace_back().pattern = pattern;
        if (!cmd.principal.empty())
            for (auto& f : filters) f.principal = cmd.principal;
        auto acls = store.list();
        if (!acls) return print_error(acls.error().message(), 1);
        for (auto& b : *acls)
            if (std::ranges::any_of(filters, [&](auto& f) { return f.matches(b); }))
                std::printf("%s\n", kafka::describe_acl(b).c_str());
        return 0;
    }

    if (resources.empty())
        return print_error("name a resource: --topic, --group, --cluster or --transactional-id", 2);
    auto pattern = cmd.pattern.empty() ? kafka::acl_pattern::literal : *kafka::parse_acl_pattern(cmd.pattern);
    std::vector<kafka::acl_operation> ops;
    for (auto& o : cmd.operations) {
        auto op = kafka::parse_acl_operation(o);
        if (!op || *op == kafka::acl_operation::any || *op == kafka::acl_operation::unknown)
            return print_error(fmt::format("unknown --operation '{}'", o), 2);
        ops.push_back(*op);
    }
    std::vector<kafka::acl_binding> bindings;
    auto add_for = [&](const std::vector<std::string>& principals, kafka::acl_permission perm) {
        for (auto& p : principals)
            for (auto& r : resources)
                for (auto op : ops.empty() ? std::vector{kafka::acl_operation::all} : ops)
                    bindings.push_back({r.type, r.name, pattern, p, cmd.host, op, perm});
    };
    add_for(cmd.allow, kafka::acl_permission::allow);
    add_for(cmd.deny, kafka::acl_permission::deny);
    for (auto& b : bindings)
        if (auto ok = kafka::validate_acl(b); !ok) return print_error(ok.error().message(), 2);

    if (cmd.action == "add") {
        if (bindings.empty()) return print_error("name a principal with --allow or --deny", 2);
        auto r = store.update([&](kafka::acl_store::acl_set& acls) -> result<void> {
            for (auto& b : bindings) acls.insert(b);
            return {};
        });
        if (!r) return print_error(r.error().message(), 1);
        for (auto& b : bindings) std::printf("added: %s\n", kafka::describe_acl(b).c_str());
        return 0;
    }

    // remove
    std::vector<kafka::acl_binding> removed;
    auto r = store.update([&](kafka::acl_store::acl_set& acls) -> result<void> {
        removed.clear();
        for (auto it = acls.begin(); it != acls.end();) {
            bool hit;
            if (!bindings.empty()) {
                hit = std::ranges::find(bindings, *it) != bindings.end();
            } else {
                hit = std::ranges::any_of(resources, [&](auto& res) {
                    return it->resource_type == res.type && it->resource_name == res.name && it->pattern == pattern &&
                           (ops.empty() || std::ranges::find(ops, it->operation) != ops.end());
                });
            }
            if (hit) {
                removed.push_back(*it);
                it = acls.erase(it);
            } else {
                ++it;
            }
        }
        if (removed.empty()) return fail(errc::not_found, "no matching ACL");
        return {};
    });
    if (!r) return print_error(r.error().message(), r.error().code() == errc::not_found ? 3 : 1);
    for (auto& b : removed) std::printf("removed: %s\n", kafka::describe_acl(b).c_str());
    return 0;
}

} // namespace floe::app
