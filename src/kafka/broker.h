#pragma once

#include "base/result.h"
#include "log/topic_config.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace floe::log {
class local_tier;
class remote_tier;
}

namespace floe::kafka {

class authorizer;
class cluster_view;
class offset_store;
class group_coordinator;
struct broker_endpoint;
class producer_id_allocator;

/// One bound listener as clients are told it: its name (the security protocol) and address.
struct advertised_listener {
    std::string name;
    std::string host;
    int32_t port = 0;
};

/// Kafka's security protocols, which are also Floe's listener names.
enum class security_protocol { plaintext, ssl, sasl_plaintext, sasl_ssl };
std::string_view to_string(security_protocol p) noexcept;
inline bool uses_tls(security_protocol p) noexcept {
    return p == security_protocol::ssl || p == security_protocol::sasl_ssl;
}
inline bool uses_sasl(security_protocol p) noexcept {
    return p == security_protocol::sasl_plaintext || p == security_protocol::sasl_ssl;
}

/// One Kafka listener: what it binds and what Metadata tells the clients connected to it.
struct listener_config {
    security_protocol protocol = security_protocol::plaintext;
    std::string host = "127.0.0.1";
    uint16_t port = 9092;          ///< 0: any free port
    std::string advertised_host;   ///< empty: the bound host (loopback for a wildcard)
    int32_t advertised_port = 0;   ///< 0: the bound port
};

/// Parses Kafka's listener list, "PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093": names
/// are the four security protocols, each at most once; hosts may be bracketed IPv6.
result<std::vector<listener_config>> parse_listeners(std::string_view text);
/// Applies an advertised-listener list in the same form to `listeners`, matching by name
/// (every name must be one of the listeners).
result<void> apply_advertised_listeners(std::vector<listener_config>& listeners, std::string_view text);

/// TLS settings [floe.tls.*]; needed when a listener uses SSL or SASL_SSL.
struct tls_options {
    enum class client_auth { none, requested, required };
    std::string cert_file;  ///< PEM certificate chain
    std::string key_file;   ///< PEM private key
    std::string ca_file;    ///< PEM CAs trusted for client certificates
    client_auth auth = client_auth::none;
};

/// What the `floe` binary hands the Kafka broker. Only the first six fields come from user
/// settings (DESIGN.md names in brackets); the rest have working defaults.
struct broker_options {
    std::string listen = "127.0.0.1:9092";     ///< host:port to bind [floe.kafka.listen]; port 0 = any
    std::string advertised;                    ///< host:port clients are told; empty = listen
                                               ///< (with the bound port) [floe.kafka.advertised-listener]
    /// [floe.kafka.listeners, floe.kafka.advertised-listeners]; when empty, one PLAINTEXT
    /// listener from `listen` and `advertised`.
    std::vector<listener_config> listeners;
    tls_options tls;                           ///< [floe.tls.*]
    /// Offered on SASL listeners, in preference order [floe.sasl.mechanisms]. Users live in
    /// <data_dir>/security/users.json (see kafka/users.h).
    std::vector<std::string> sasl_mechanisms = {"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"};
    /// Longest SASL session before the client must re-authenticate (KIP-368); 0: sessions never
    /// end [floe.sasl.connections-max-reauth, Kafka's connections.max.reauth.ms].
    int64_t sasl_max_reauth_ms = 0;
    /// Principals allowed everything ("User:admin") [floe.security.super-users]. ACLs live in
    /// <data_dir>/security/acls.json (see kafka/acl.h).
    std::vector<std::string> super_users;
    std::filesystem::path data_dir = "./floe-data"; ///< [floe.data-dir]; log in <dir>/log, group
                                                    ///< offsets and producer ids in <dir>/kafka
    bool auto_create_topics = true;            ///< [floe.auto-create-topics]
    int32_t default_partitions = 1;            ///< [floe.default-partitions]
    std::map<std::string, std::string> topic_defaults; ///< [floe.topic-defaults.*], Kafka names
    /// What the broker can do for topics' tables (a key provider: [floe.encryption.provider]);
    /// CreateTopics/AlterConfigs asking for more are refused by the local log.
    log::topic_capabilities topic_capabilities;

    size_t io_threads = 0;                     ///< 0 = hardware concurrency (at least 2)
    size_t max_request_bytes = 100u << 20;     ///< socket.request.max.bytes
    /// Caps on one Fetch answer, whatever the client asks [floe.kafka.fetch-max-bytes,
    /// floe.kafka.fetch-max-records]: whole batches, the first always sent (KIP-74).
    size_t fetch_max_bytes = 16u << 20;
    size_t fetch_max_records = 32768;
    int32_t node_id = 0;
    std::string cluster_id = "floe";
    int64_t flush_interval_ms = 0;             ///< log.flush.interval.ms (0: acks=all and close only)
    int64_t cleaner_interval_ms = 15'000;      ///< log.cleaner.backoff.ms (0: no cleaner thread)
    uint64_t cleaner_io_max_bytes_per_second = 0; ///< log.cleaner.io.max.bytes.per.second (0: unthrottled)
    int64_t group_initial_rebalance_delay_ms = 300;
    /// KIP-848 consumer groups: Kafka's group.consumer.session.timeout.ms and
    /// group.consumer.heartbeat.interval.ms.
    int64_t group_consumer_session_timeout_ms = 45000;
    int64_t group_consumer_heartbeat_interval_ms = 5000;
    /// The remote tier: Fetch and ListOffsets below the local log start of a tiered topic are
    /// served from it (KIP-405). nullptr: only the local tier. Must outlive the broker.
    log::remote_tier* remote = nullptr;
    /// Opens the local tier at start(): nullptr means the embedded log under <data_dir>/log
    /// (log::log_manager with the settings above). The app sets it for other backends.
    std::function<result<std::unique_ptr<log::local_tier>>()> open_local_tier;
    /// Opens the committed group offsets and the producer id allocator at start(); nullptr:
    /// the embedded ones under <data_dir>/kafka. The app sets them when several brokers share
    /// them (floe.local.type=redis).
    std::function<result<std::unique_ptr<offset_store>>()> open_offset_store;
    std::function<result<std::unique_ptr<producer_id_allocator>>()> open_producer_ids;
    /// Joins a cluster of brokers once the listeners are bound (given with their advertised
    /// addresses) and returns the view Metadata, FindCoordinator and the group APIs answer
    /// from; destroyed (leaving the cluster) at stop(). nullptr: this broker alone (`node_id`).
    std::function<result<std::unique_ptr<cluster_view>>(const std::vector<advertised_listener>&)> join_cluster;
};

/// A single-node Kafka-protocol broker on the embedded local tier.
///
/// Lifetime: construct, start() once (opens and recovers the log, binds, starts the io
/// threads), stop() once (closes the listener and connections, then flushes and closes every
/// segment); the destructor calls stop(). start() errors are values (bad address, port in use
/// as errc::already_exists, unreadable data dir). start() sets SIGPIPE to ignored for the process (Fetch answers use
/// sendfile, which cannot suppress it per call). Thread-safe: start/stop from one controlling thread; everything else
/// runs on the broker's own io threads.
class broker {
public:
    explicit broker(broker_options opts);
    ~broker();
    broker(const broker&) = delete;
    broker& operator=(const broker&) = delete;

    result<void> start();
    void stop();

    /// The port actually bound by the first listener (useful with port 0). Valid after start().
    uint16_t port() const noexcept;
    /// The port bound by listener `i` (in the order of broker_options::listeners).
    uint16_t port(size_t i) const noexcept;
    /// The local tier the broker serves (valid between start and stop), for the storage worker
    /// and the HTTP plane.
    log::local_tier* logs() noexcept;
    /// Re-reads floe.tls.* (SIGHUP): new TLS connections use the new certificate, key and CAs;
    /// open ones are kept. On error nothing changes. No-op without a TLS listener.
    result<void> reload_tls();
    /// The authorizer of every Kafka API (valid between start and stop), for the HTTP plane.
    authorizer* acl_authorizer() noexcept;
    /// The group coordinator and its committed offsets (valid between start and stop), for the
    /// HTTP plane's read-only /v1/groups.
    group_coordinator* groups() noexcept;
    /// The live brokers as Metadata lists them to clients of the first listener (this one
    /// included; only this one without a cluster). Empty before start. Any thread.
    std::vector<broker_endpoint> cluster_brokers() const;
    /// This broker's id (the one the cluster chose when it joined one).
    int32_t node_id() const noexcept;

    struct impl;

private:
    std::unique_ptr<impl> _impl;
};

} // namespace floe::kafka
