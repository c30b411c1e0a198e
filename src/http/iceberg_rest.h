#pragma once

// The Iceberg REST catalog that Floe serves at /iceberg (the Apache Iceberg REST OpenAPI
// specification): config, namespaces, tables (list, load, exists, create) and table commits
// with requirement checks, on top of whichever catalog Floe itself uses. A commit that would
// drop or move back floe.committed-positions on the main branch is refused: external engines
// may compact, expire or set properties, never break Floe's exactly-once offload.

#include "http/access.h"
#include "http/server.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/metadata.h"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace floe::http {

struct iceberg_rest_options {
    std::string warehouse;  ///< where new tables go by default: <warehouse>/<ns>/<name>
    std::string mount = "/iceberg";
    std::string topics_namespace = "floe"; ///< floe.namespace: where the topics' tables are
};

/// The topic whose table `ns`.`table` is (its name with '.', '-', ':' as '_', in the topics'
/// namespace), or a topic named exactly `table` there (a topic name given for its table); nullopt
/// when the table belongs to no topic.
using table_topic_resolver = std::function<std::optional<std::string>(const std::string& ns, const std::string& table)>;

class iceberg_rest {
public:
    iceberg_rest(std::shared_ptr<iceberg::catalog> cat, std::shared_ptr<iceberg::file_io> io,
                 iceberg_rest_options opts);

    /// Registers GET, POST and DELETE under <mount>/ (HEAD is served by the GET route).
    void add_routes(server& s);
    response handle(const request& r);

    /// Topic ACLs on every route (set by `floe serve` before the server starts; without it
    /// everything is allowed). A topic's table follows its topic's ACLs: DESCRIBE to see it
    /// (listed, HEAD, metrics reports), READ to load it (metadata and data file locations),
    /// ALTER to commit to it. Other tables and namespaces are the cluster's: DESCRIBE on the
    /// CLUSTER to see and load them, CREATE on the CLUSTER to create namespaces and tables, ALTER
    /// on the CLUSTER to commit to them. The topics' namespace itself is visible to everyone. A
    /// refusal is a 403 ForbiddenException in the spec's error model, logged and counted.
    void set_access(access_control ac, table_topic_resolver topic_of) {
        _access = std::move(ac);
        _topic_of = std::move(topic_of);
    }

private:
    response create(const request& r, const std::string& ns, const nlohmann::json& body);
    response commit(const request& r, const iceberg::table_ident& t, const nlohmann::json& body);
    /// The ACL resource of table `t`: its topic, or the cluster when it belongs to no topic.
    std::pair<acl_type, std::string> resource_of(const iceberg::table_ident& t) const;
    /// nullopt when `r` may do `topic_op` on `t`'s topic (`cluster_op` on the cluster when `t`
    /// belongs to no topic); else the 403 to answer (the refusal logged and counted). `quiet`:
    /// a filter (a listing leaves the table out), nothing reported.
    std::optional<response> denied(const request& r, const iceberg::table_ident& t, acl_op topic_op,
                                   acl_op cluster_op, bool quiet = false) const;
    std::optional<response> denied_on_cluster(const request& r, acl_op op, bool quiet = false) const;
    /// Namespace `ns`: the topics' one is visible to everyone, others need DESCRIBE on the cluster.
    std::optional<response> denied_namespace(const request& r, const std::string& ns, bool quiet = false) const;
    /// 404 for a missing table, with a hint when `t.name` is a topic name whose table is named
    /// otherwise ("orders.created" -> "orders_created").
    response no_such_table(const iceberg::table_ident& t) const;

    access_control _access;
    table_topic_resolver _topic_of;

    std::shared_ptr<iceberg::catalog> _cat;
    std::shared_ptr<iceberg::file_io> _io;
    iceberg_rest_options _opts;
};

/// What a commit request (CommitTableRequest JSON) makes of `base`: requirements checked
/// (a failure is errc::conflict), updates applied, the floe.committed-positions guard. Pure;
/// the server's commit runs it on each attempt, and http_request_fuzz on hostile input.
result<iceberg::table_metadata> apply_commit(iceberg::table_metadata base, std::string_view body, int64_t now_ms);

/// The spec's error model: {"error":{"message":...,"type":...,"code":N}}.
response iceberg_error(int status, std::string_view type, std::string_view message);
/// 403 ForbiddenException naming the principal, the operation and the resource.
response iceberg_forbidden(const request& r, acl_op op, acl_type type, std::string_view name);

} // namespace floe::http
