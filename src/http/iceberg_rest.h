#pragma once

// The Iceberg REST catalog that Floe serves at /iceberg (the Apache Iceberg REST OpenAPI
// specification): config, namespaces, tables (list, load, exists, create) and table commits
// with requirement checks, on top of whichever catalog Floe itself uses. A commit that would
// drop or move back floe.committed-positions on the main branch is refused: external engines
// may compact, expire or set properties, never break Floe's exactly-once offload.
//
// loadTable answers carry an ETag (of the metadata location: a location names one content) and
// If-None-Match is answered 304 without a body (not over the filesystem catalog, whose v<N>
// names come back when a table is dropped and created again). The answer's text of each table's current
// version is kept (loadTable serialises a version once; a commit answers with the text of the
// file it wrote), and the parsed versions live in this server's own metadata_cache.

#include "http/access.h"
#include "http/server.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/metadata.h"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace floe::iceberg {
class metadata_cache;
}

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
    ~iceberg_rest();

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
    /// loadTable: 304 when `r`'s If-None-Match names the current version, else its answer.
    response load(const request& r, const iceberg::table_ident& t);
    /// The answer text of `t` at `location` if kept; nullptr otherwise.
    std::shared_ptr<const std::string> kept_answer(const iceberg::table_ident& t, const std::string& location) const;
    void keep_answer(const iceberg::table_ident& t, const std::string& location,
                     std::shared_ptr<const std::string> body);

    access_control _access;
    table_topic_resolver _topic_of;

    std::shared_ptr<iceberg::catalog> _cat;
    std::shared_ptr<iceberg::file_io> _io;
    iceberg_rest_options _opts;
    /// Parsed versions for loads and commits: this server's own, so the commits of a client in
    /// the same process (which caches its own versions) never take the server's entries.
    std::unique_ptr<iceberg::metadata_cache> _cache;
    mutable std::mutex _answers_mu;
    /// "ns\x1fname" -> the location and the loadTable/commit answer text of the version last
    /// served (at most 256 tables; any one is dropped when full).
    std::map<std::string, std::pair<std::string, std::shared_ptr<const std::string>>> _answers;
};

/// The ETag of a table's answer at `metadata_location` (quoted, as HTTP wants it).
std::string iceberg_etag(std::string_view metadata_location);

/// What a commit request (CommitTableRequest JSON) makes of `base`: requirements checked
/// (a failure is errc::conflict), updates applied, the floe.committed-positions guard. Pure;
/// the server's commit runs it on each attempt, and http_request_fuzz on hostile input.
result<iceberg::table_metadata> apply_commit(iceberg::table_metadata base, std::string_view body, int64_t now_ms);

/// The spec's error model: {"error":{"message":...,"type":...,"code":N}}.
response iceberg_error(int status, std::string_view type, std::string_view message);
/// 403 ForbiddenException naming the principal, the operation and the resource.
response iceberg_forbidden(const request& r, acl_op op, acl_type type, std::string_view name);

} // namespace floe::http
