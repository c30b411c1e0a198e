#pragma once
// The console's read-only cluster and security endpoints (issue 34): /v1/cluster (brokers, and
// on the Redis tier the registry's heartbeat leases, the partitions' leaders and storage-worker
// leases, the groups' coordinators), /v1/security/users (SCRAM user names and mechanisms, never
// a credential) and /v1/security/acls. Wired in src/app because they read the kafka, redis and
// tiering modules, which the http module does not depend on.

#include "http/access.h"
#include "http/server.h"

#include <filesystem>
#include <string>
#include <vector>

namespace floe::kafka {
class broker;
class acl_store;
} // namespace floe::kafka
namespace floe::redis {
class client;
class broker_registry;
} // namespace floe::redis

namespace floe::app {

/// What the routes read. Everything must outlive the HTTP server's threads.
struct cluster_routes_deps {
    kafka::broker* broker = nullptr;
    kafka::acl_store* acls = nullptr;     ///< the broker's ACL store
    std::vector<std::string> super_users; ///< floe.security.super-users
    bool strict_acls = false;             ///< no ACL = no access (as the HTTP plane asks them)
    std::filesystem::path security_dir;   ///< holds users.json (the broker's user store)
    std::filesystem::path file_lease;     ///< the embedded tier's storage-worker lease file
    redis::client* redis = nullptr;       ///< the Redis tier (nullptr: the embedded tier)
    std::string redis_ns;                 ///< its key prefix
    const redis::broker_registry* registry = nullptr; ///< the cluster's live brokers (Redis tier)
};

/// At most this many partitions are listed with their leases by /v1/cluster (one Redis read
/// each, on an HTTP thread); beyond, the answer says `"partitions_truncated":true`.
inline constexpr size_t cluster_max_partitions = 1000;

/// GET /v1/cluster, /v1/security/users, /v1/security/acls: each needs DESCRIBE on the CLUSTER
/// resource (403 otherwise), as /v1/brokers does.
void add_cluster_routes(http::server& s, const http::access_control& access,
                        cluster_routes_deps deps);

} // namespace floe::app
