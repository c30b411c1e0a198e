#pragma once

#include "kafka/acl.h"
#include "kafka/broker.h"
#include "kafka/fetch_sessions.h"
#include "kafka/groups.h"
#include "kafka/messages.h"
#include "kafka/protocol.h"
#include "kafka/record_batch.h"
#include "kafka/users.h"
#include "log/local_tier.h"

#include <asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>

namespace floe::kafka {

class txn_coordinator;
class cluster_view;

/// Hands out producer ids that stay unique across restarts (and, for a cluster, across the
/// brokers). `open` gives the embedded allocator: blocks of ids are reserved by persisting the
/// next block start (<dir>/producer_ids, replaced atomically) before use. Thread-safe.
class producer_id_allocator {
public:
    static result<std::unique_ptr<producer_id_allocator>> open(const std::filesystem::path& dir);
    virtual ~producer_id_allocator() = default;
    virtual result<int64_t> next() = 0;
};

/// Record bytes of a Fetch answer sent straight from a segment file: they belong at byte
/// `at` of the connection's output buffer (between what precedes and what follows).
struct file_splice {
    size_t at = 0;
    log::file_slice slice;
};

/// Who is on the other end of a connection, and through which listener.
struct connection_info {
    std::string client_host;
    /// The listener's advertised address (Metadata, FindCoordinator and DescribeCluster name
    /// the listener the client connected to); empty / -1: the broker's default.
    std::string advertised_host;
    int32_t advertised_port = -1;
    /// The listener's name (its security protocol, e.g. "PLAINTEXT"), to name the same
    /// listener of the other brokers of a cluster.
    std::string listener = "PLAINTEXT";
    /// Kafka's principal: "User:<name>" after SASL, "User:<subject DN>" for a TLS client
    /// certificate, "User:ANONYMOUS" otherwise.
    std::string principal = "User:ANONYMOUS";
};

/// Serves decoded requests against the log, the group coordinator and the producer id
/// allocator. One instance per broker, shared by every connection; each call runs on the
/// calling connection's strand and may suspend (acks=all, long-poll Fetch, JoinGroup/SyncGroup
/// waits) without blocking other connections. Thread-safe: state lives in the thread-safe
/// local tier, group_coordinator and producer_id_allocator.
class request_handler {
public:
    request_handler(const broker_options& opts, std::string advertised_host,
                    int32_t advertised_port, log::local_tier& logs, group_coordinator& groups,
                    producer_id_allocator& pids);

    /// Handles one request whose header is decoded; `body` is the rest of the frame (mutable:
    /// Produce patches record batches in place before appending them). Appends the response
    /// frame to `out` (nothing for acks=0 Produce). Fetch record bytes are not copied when
    /// `splices` is given: they are listed there for the connection to sendfile. Returns false
    /// when the connection must be closed (malformed request).
    asio::awaitable<bool> handle(const connection_info& conn, const request_header& h,
                                 std::span<uint8_t> body, byte_buffer& out,
                                 std::vector<file_splice>* splices = nullptr);

    /// The SASL user store, for DescribeUserScramCredentials / AlterUserScramCredentials
    /// (must outlive the handler).
    void set_user_store(user_store* users) noexcept { _users = users; }
    /// The authorizer every API asks (must outlive the handler); null: everything is allowed.
    void set_authorizer(authorizer* auth) noexcept { _auth = auth; }
    /// The transaction coordinator (must outlive the handler); without one, the transaction
    /// APIs answer COORDINATOR_NOT_AVAILABLE.
    void set_txn_coordinator(txn_coordinator* txns) noexcept { _txns = txns; }
    /// Who leads partitions and coordinates groups (must outlive the handler); null: this
    /// broker alone.
    void set_cluster(const cluster_view* cluster) noexcept { _cluster = cluster; }

    /// Whether the request may wait a long time (the connection first flushes earlier answers).
    static bool may_wait(const request_header& h, bytes_view body) noexcept;

private:
    using enc = byte_buffer;
    asio::awaitable<bool> dispatch(const connection_info& conn, const request_header& h,
                                   std::span<uint8_t> body, byte_buffer& out,
                                   std::vector<file_splice>* splices);
    asio::awaitable<bool> produce(const connection_info& c, const request_header& h, std::span<uint8_t> body, byte_buffer& out);
    asio::awaitable<bool> fetch(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out,
                                std::vector<file_splice>* splices);
    asio::awaitable<bool> join_group(const connection_info& c, const request_header& h,
                                     bytes_view body, byte_buffer& out);
    asio::awaitable<bool> sync_group(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool metadata(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out);
    bool list_offsets(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool create_topics(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool delete_topics(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_configs(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool alter_configs(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out, bool incremental);
    bool find_coordinator(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out);
    bool heartbeat(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool leave_group(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool offset_commit(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool consumer_group_heartbeat(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool consumer_group_describe(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool offset_fetch(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool list_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool delete_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool init_producer_id(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    // ---- txn_handlers.cc: transactions (KIP-98) ----
    bool init_transactional(const connection_info& c, const request_header& h, std::string_view txn_id, int32_t timeout_ms,
                            int64_t producer_id, int16_t producer_epoch, byte_buffer& out);
    /// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit, DescribeTransactions,
    /// ListTransactions; false for anything else or a malformed request.
    bool dispatch_txn(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    /// Produce: 0 when the partition's records may be appended as far as transactions go
    /// (non-transactional batches without a transactional id, or transactional batches of the
    /// open transaction that added this partition), else the Kafka error.
    int16_t check_transactional_produce(std::optional<std::string_view> txn_id, bytes_view records,
                                        const std::string& topic, int32_t partition);
    // ---- security_handlers.cc ----
    /// Whether the connection's principal may do `op` on the resource (Kafka's authorizer). A
    /// refusal is reported (base/authorization_log.h: logged rate-limited, counted with
    /// source="kafka") unless `quiet`: checks that only filter what an answer lists (Metadata
    /// of all topics, ListGroups) or that another check may still allow, as Kafka's own
    /// authorizer leaves those out of its log.
    bool allowed(const connection_info& c, acl_operation op, acl_resource type, std::string_view name,
                 bool quiet = false) const {
        if (!_auth || _auth->allowed(c.principal, c.client_host, op, type, name)) return true;
        if (!quiet) report_denied(c, op, type, name);
        return false;
    }
    bool allowed_on_cluster(const connection_info& c, acl_operation op, bool quiet = false) const {
        return allowed(c, op, acl_resource::cluster, k_cluster_resource_name, quiet);
    }
    /// Logs and counts a refusal (see allowed).
    static void report_denied(const connection_info& c, acl_operation op, acl_resource type, std::string_view name);
    /// InitProducerId without a transactional id: IDEMPOTENT_WRITE on the cluster, or WRITE on
    /// some topic (Kafka 3's rule); a refusal is reported as IDEMPOTENT_WRITE on the cluster.
    bool may_write_idempotently(const connection_info& c) const {
        if (!_auth || allowed_on_cluster(c, acl_operation::idempotent_write, /*quiet=*/true) ||
            _auth->allowed_on_some(c.principal, c.client_host, acl_operation::write, acl_resource::topic))
            return true;
        report_denied(c, acl_operation::idempotent_write, acl_resource::cluster, k_cluster_resource_name);
        return false;
    }
    /// The authorized-operations bit field of a Metadata / DescribeGroups / DescribeCluster answer.
    int32_t authorized_operations(const connection_info& c, acl_resource type, std::string_view name,
                                  int32_t all_ops) const {
        return _auth ? _auth->authorized_operations(c.principal, c.client_host, type, name) : all_ops;
    }
    bool describe_acls(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool create_acls(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool delete_acls(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_user_scram_credentials(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool alter_user_scram_credentials(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_cluster(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out);

    // ---- admin_handlers.cc: admin APIs and configs ----
    /// APIs not dispatched in handlers.cc (CreatePartitions, DeleteRecords, OffsetDelete,
    /// DescribeLogDirs, ElectLeaders, DescribeProducers); false for anything else.
    bool dispatch_admin(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool create_partitions(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool delete_records(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool offset_delete(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_log_dirs(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool elect_leaders(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    bool describe_producers(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out);
    std::vector<config_entry_out> describe_topic_configs(const log::topic_info& t,
                                                         const std::vector<std::string_view>* keys,
                                                         bool docs, bool synonyms = false);
    void describe_broker_configs(const describe_configs_request::resource& r, bool docs,
                                 bool synonyms, describe_configs_response::result_entry& out);
    void alter_broker_configs(const alter_configs_request::resource& r, bool incremental,
                              bool validate_only, alter_configs_response::resource& out);

    /// The remote tier's first offset of a partition (nullopt when it holds none or is
    /// unreachable: the local tier then answers alone).
    /// With `recent_ok`, a value up to a second old will do (see log::remote_tier::recent_start_offset).
    /// The remote tier's start offset; nullopt when it has none or cannot be asked (then
    /// `*unavailable`, when given, is set: the answer must not fall back to the local start).
    std::optional<int64_t> earliest_remote(const std::string& topic, int32_t partition, bool recent_ok = false,
                                           bool* unavailable = nullptr);
    /// (offset, timestamp) of the first remote record at or after `ts` below `local_start`.
    std::optional<std::pair<int64_t, int64_t>> remote_offset_for_timestamp(const std::string& topic,
                                                                          int32_t partition, int64_t ts,
                                                                          int64_t local_start);
    /// This broker's entry as told to the client of `c` (the address of its listener).
    broker_endpoint self_endpoint(const connection_info& c) const {
        return {_opts.node_id, advertised_host(c), advertised_port(c)};
    }
    /// The brokers Metadata / DescribeCluster list for the client of `c`.
    std::vector<broker_endpoint> cluster_brokers(const connection_info& c) const;
    int32_t partition_leader(std::string_view topic, int32_t partition) const;
    int32_t coordinator_of(std::string_view key, bool txn = false) const;
    /// Whether this broker coordinates the group (else its requests get NOT_COORDINATOR).
    bool coordinates(std::string_view group) const { return coordinator_of(group) == _opts.node_id; }
    /// DescribeGroups and ConsumerGroupDescribe alike: each group id in `ids` is answered
    /// GROUP_AUTHORIZATION_FAILED, NOT_COORDINATOR, or with `describe(id)` (and its authorized
    /// operations when asked). Defined in handlers.cc, its only user.
    template<typename Entry, typename Ids, typename Describe>
    void describe_each_group(const connection_info& c, const Ids& ids, bool include_ops, std::vector<Entry>& into,
                             Describe describe);
    const std::string& advertised_host(const connection_info& c) const noexcept {
        return c.advertised_host.empty() ? _host : c.advertised_host;
    }
    int32_t advertised_port(const connection_info& c) const noexcept {
        return c.advertised_port < 0 ? _port : c.advertised_port;
    }
    const broker_options& _opts;
    user_store* _users = nullptr;
    authorizer* _auth = nullptr;
    txn_coordinator* _txns = nullptr;
    const cluster_view* _cluster = nullptr;
    std::string _host;
    int32_t _port;
    log::local_tier& _logs;
    group_coordinator& _groups;
    producer_id_allocator& _pids;
    fetch_session_cache _sessions; ///< KIP-227 incremental fetch sessions
    /// Bumped on every append, so long-polling fetches re-read only when something changed.
    std::atomic<uint64_t> _appends{0};
};

} // namespace floe::kafka
