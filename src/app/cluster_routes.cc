#include "app/cluster_routes.h"

#include "base/clock.h"
#include "base/log.h"
#include "http/admin.h"
#include "kafka/acl.h"
#include "kafka/broker.h"
#include "kafka/groups.h"
#include "kafka/users.h"
#include "log/local_tier.h"
#include "redis/client.h"
#include "redis/coordination.h"
#include "redis_tier/redis_tier.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <memory>

namespace floe::app {
namespace {

std::string q(std::string_view s) {
    return fmt::format(R"("{}")", json_escape(s));
}

template<class Range, class Fn> std::string join_json(const Range& r, Fn fn) {
    std::string out;
    for (auto& x : r) {
        if (!out.empty()) out += ',';
        out += fn(x);
    }
    return out;
}

http::response forbidden(const http::request& r) {
    return http::response::error(403, fmt::format("{} may not describe the cluster", r.principal));
}

/// The embedded tier's storage-worker lease: the file "<holder> <expiry ms>" (tiering::file_lease).
std::string file_lease_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string holder;
    int64_t expiry = 0;
    if (!in || !(in >> holder >> expiry)) return "null";
    return fmt::format(R"({{"holder":{},"expires_ms":{},"held":{}}})", q(holder), expiry,
                       expiry > system_clock_source::instance().now_ms());
}

/// /v1/cluster on the Redis tier: the live brokers with their registry heartbeat's expiry,
/// per partition the leader and the storage worker's lease, per group its coordinator.
std::string redis_cluster_json(const cluster_routes_deps& d, redis::lease_manager* leases) {
    std::vector<redis::broker_info> live =
        d.registry ? d.registry->cached_live() : std::vector<redis::broker_info>{};
    std::vector<int32_t> ids;
    for (auto& b : live)
        ids.push_back(b.id);
    // As the cluster view decides leaders and coordinators: nobody known yet, this broker alone.
    if (ids.empty()) ids.push_back(d.broker->node_id());
    std::string parts;
    size_t listed = 0;
    bool truncated = false;
    std::string lease_error =
        leases ? "" : "the lease functions could not be loaded at start (see the log)";
    auto* logs = d.broker->logs();
    for (auto& t : logs ? logs->topics() : std::vector<log::topic_info>{}) {
        for (int32_t p = 0; p < t.partitions; ++p) {
            if (listed == cluster_max_partitions) {
                truncated = true;
                break;
            }
            ++listed;
            std::string lease = "null";
            if (leases && lease_error.empty()) {
                if (auto st = leases->get(redis_tier::offload_lease_key(d.redis_ns, t.name, p));
                    st) {
                    if (!st->holder.empty() || st->epoch > 0)
                        lease =
                            fmt::format(R"({{"holder":{},"epoch":{},"expires_ms":{},"held":{}}})",
                                        q(st->holder), st->epoch, st->expires_ms, st->held());
                } else {
                    lease_error =
                        st.error().message(); // Redis unreachable: say so once, stop asking
                }
            }
            if (!parts.empty()) parts += ',';
            parts += fmt::format(
                R"({{"topic":{},"partition":{},"leader":{},"offload_lease":{}}})", q(t.name), p,
                redis::rendezvous_owner(redis::partition_item(t.name, p), ids), lease);
        }
        if (truncated) break;
    }
    std::string groups;
    if (auto* gc = d.broker->groups())
        for (auto& g : gc->list({}).groups) {
            if (!groups.empty()) groups += ',';
            groups += fmt::format(R"({{"group_id":{},"coordinator":{}}})", q(g.group_id),
                                  redis::rendezvous_owner(redis::group_item(g.group_id), ids));
        }
    auto brokers = join_json(live, [&](const redis::broker_info& b) {
        return fmt::format(R"({{"node_id":{},"self":{},"heartbeat_expires_ms":{}}})", b.id,
                           b.id == d.broker->node_id(), b.expires_ms);
    });
    return fmt::format(
        R"({{"tier":"redis","single_broker":false,"node_id":{},"now_ms":{},"registry":[{}],"partitions":[{}],"partitions_truncated":{},"leases_error":{},"groups":[{}]}})",
        d.broker->node_id(), system_clock_source::instance().now_ms(), brokers, parts, truncated,
        lease_error.empty() ? "null" : q(lease_error), groups);
}

} // namespace

void add_cluster_routes(http::server& s, const http::access_control& access,
                        cluster_routes_deps deps) {
    std::shared_ptr<redis::lease_manager> leases;
    if (deps.redis) {
        if (auto m = redis::lease_manager::create(*deps.redis); m)
            leases = std::move(*m);
        else
            spdlog::warn("/v1/cluster: cannot read the partitions' leases: {}",
                         m.error().message());
    }
    auto users = std::make_shared<kafka::user_store>(deps.security_dir);
    auto d = std::make_shared<const cluster_routes_deps>(std::move(deps));

    s.route("GET", "/v1/cluster", [&access, d, leases](const http::request& r) {
        http::count_request("/v1/cluster");
        if (!access.allows(r, http::acl_op::describe, http::acl_type::cluster,
                           http::access_control::cluster_name))
            return forbidden(r);
        if (d->redis) return http::response::json(200, redis_cluster_json(*d, leases.get()));
        // The embedded tier: one broker owns every partition and group; its storage worker's
        // lease is a file in the data directory.
        return http::response::json(
            200,
            fmt::format(
                R"({{"tier":"embedded","single_broker":true,"node_id":{},"now_ms":{},"storage_worker_lease":{}}})",
                d->broker->node_id(), system_clock_source::instance().now_ms(), file_lease_json(d->file_lease)));
    });

    s.route("GET", "/v1/security/users", [&access, users](const http::request& r) {
        http::count_request("/v1/security/users");
        if (!access.allows(r, http::acl_op::describe, http::acl_type::cluster,
                           http::access_control::cluster_name))
            return forbidden(r);
        auto list = users->list();
        if (!list)
            return http::response::error(
                503, fmt::format("cannot read the users: {}", list.error().message()));
        // Names and mechanisms only: salts, keys and iteration counts are not anyone's business.
        auto body = join_json(*list, [](const kafka::user_store::user_entry& u) {
            return fmt::format(
                R"({{"name":{},"mechanisms":[{}]}})", q(u.name),
                join_json(u.iterations, [](auto& m) { return q(kafka::to_string(m.first)); }));
        });
        return http::response::json(200, fmt::format(R"({{"users":[{}]}})", body));
    });

    s.route("GET", "/v1/security/acls", [&access, d](const http::request& r) {
        http::count_request("/v1/security/acls");
        if (!access.allows(r, http::acl_op::describe, http::acl_type::cluster,
                           http::access_control::cluster_name))
            return forbidden(r);
        std::string acls;
        if (d->acls) {
            auto snap = d->acls->snapshot();
            acls = join_json(*snap, [](const kafka::acl_binding& b) {
                return fmt::format(
                    R"({{"principal":{},"host":{},"operation":{},"permission":{},"resource_type":{},"resource_name":{},"pattern":{}}})",
                    q(b.principal), q(b.host), q(kafka::to_string(b.operation)),
                    q(kafka::to_string(b.permission)), q(kafka::to_string(b.resource_type)),
                    q(b.resource_name), q(kafka::to_string(b.pattern)));
            });
        }
        return http::response::json(
            200, fmt::format(R"({{"strict":{},"super_users":[{}],"acls":[{}]}})", d->strict_acls,
                             join_json(d->super_users, [](auto& u) { return q(u); }), acls));
    });
}

} // namespace floe::app
