#pragma once

#include "http/access.h"
#include "http/server.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace floe::log {
class local_tier;
}
namespace floe::lake {
class iceberg_lake;
}
namespace floe::tiering {
class remote_reader;
class table_maintainer;
}

namespace floe::http {

struct lookup_options {
    size_t default_limit = 100;
    size_t max_limit = 1000;            ///< larger ?limit values are capped to this
    size_t max_response_bytes = 8u << 20; ///< stop adding records past this body size
    size_t batch_cache_bytes = 64u << 20; ///< decoded local batches kept for lookups of a few records
    size_t max_scan_records = 1'000'000;  ///< records a time lookup may read to order them (else 400)
    /// Where /v1/topics gets each table's state (files, snapshots, last maintenance runs);
    /// nullptr (maintenance disabled): "state" is null.
    tiering::table_maintainer* maintainer = nullptr;
    /// Bounded search (/v1/topics/{topic}/search): records one request may read (its `budget`
    /// is capped to this), how many searches one client address may run at once (429 beyond),
    /// and whether format=ndjson|csv is answered (floe.http.console.export; else 403).
    size_t default_search_budget = 10'000;
    size_t max_search_budget = 200'000;
    size_t max_searches_per_client = 2;
    bool export_enabled = true;
};

/// A consumer group as the group coordinator knows it, for GET /v1/groups (`floe serve` reads it
/// from the Kafka coordinator and the committed offsets; the http module does not depend on kafka).
struct group_info {
    std::string id;
    std::string kind; ///< "classic" (JoinGroup) or "consumer" (KIP-848); "" when only offsets are known
    std::string state;
    std::string protocol_type;
    struct member {
        std::string member_id, client_id, client_host;
        std::optional<std::string> instance_id;
        /// KIP-848 members: the member epoch and the partitions it owns now (classic members:
        /// nullopt; their assignment is the client's own bytes).
        std::optional<int32_t> member_epoch;
        std::optional<std::vector<std::pair<std::string, std::vector<int32_t>>>> assignment;
    };
    std::vector<member> members;
    struct committed_offset {
        std::string topic;
        int32_t partition = 0;
        int64_t offset = 0;
    };
    std::vector<committed_offset> committed;
};
using groups_source = std::function<result<std::vector<group_info>>()>;

/// The /v1 lookup API over both tiers:
///   GET /v1/topics   (each topic's partitions, and its table with the table's state)
///   GET /v1/topics/{topic}/partitions/{p}/records?offset=O&limit=N
///   GET /v1/topics/{topic}/records?key=K[&all=true]
///   GET /v1/topics/{topic}/records?from-ts=T1&to-ts=T2[&limit=N][&after=CURSOR]
///   GET /v1/topics/{topic}/table/files
/// Time lookups answer in (timestamp, partition, offset) order across partitions, with "next":
/// a cursor for `after=` when `limit` (or the response size) cut the answer, else null.
/// Keys, values and header values are UTF-8 strings when valid, else base64 (`encoding=base64`
/// forces base64), each with its "*_encoding". Enumerated parameters (`all`, `encoding`) reject
/// other values with a 400 listing the accepted ones. Errors are JSON with 400/404/500.
/// Every request is counted in floe_http_requests_total{endpoint} by its route pattern.
/// The hot tier is searched by key through an in-memory index (key -> offsets per partition),
/// caught up incrementally from the log on each lookup; the remote tier through the manifests'
/// bounds, row-group statistics and bloom filters. Thread-safe.
class lookup_service {
public:
    lookup_service(log::local_tier& logs, lake::iceberg_lake* lake, tiering::remote_reader* remote,
                   lookup_options opts = {});
    ~lookup_service();
    void add_routes(server& s);
    /// The Kafka ACLs for request::principal from request::client_host (set by `floe serve`);
    /// unset: everything is allowed. Everything under /v1/topics/{topic}/ (records, the table's
    /// files) needs READ on the topic (else 403, the refusal logged and counted); /v1/topics
    /// lists the topics the principal may describe.
    void set_access(access_control a) { _access = std::move(a); }
    /// Where GET /v1/groups reads the groups; unset: the route answers 404.
    void set_groups(groups_source g) { _groups = std::move(g); }

    response topics(const request& r);
    response replay_dead_letters(const std::string& topic);
    response records_by_offset(const request& r, const std::string& topic, int32_t partition);
    response records_by_key(const request& r, const std::string& topic);
    response records_by_time(const request& r, const std::string& topic);
    /// GET /v1/topics/{topic}/table/files: the data files of the table's current snapshot (what
    /// a query must read for the table as it is now: no file compaction replaced, no orphan).
    response table_files(const request& r, const std::string& topic);
    /// GET /v1/topics/{topic}/search: a bounded scan across both tiers with a server-side filter
    /// (http/search_filter.h), a budget of records read and a cursor to go on (see README).
    response search(const request& r, const std::string& topic);
    /// GET /v1/groups: each group's state and members, and per committed partition the offset,
    /// the lag in records (high watermark minus the offset, the offset clamped at the log start)
    /// and in seconds (now minus the timestamp of the record at the committed offset; 0 when
    /// caught up).
    response groups(const request& r);
    /// GET /v1/topics/{topic}/configs: the topic's settings with where each came from.
    response configs(const request& r, const std::string& topic);

    struct impl;

private:
    /// The "state" of a topic's table in /v1/topics (JSON).
    std::string table_state_json(const std::string& topic);
    std::unique_ptr<impl> _impl;
    access_control _access;
    groups_source _groups;
};

} // namespace floe::http
