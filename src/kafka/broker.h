#pragma once

#include "base/result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace floe::log {
class log_manager;
class remote_tier;
}

namespace floe::kafka {

/// What the `floe` binary hands the Kafka broker. Only the first six fields come from user
/// settings (DESIGN.md names in brackets); the rest have working defaults.
struct broker_options {
    std::string listen = "127.0.0.1:9092";     ///< host:port to bind [floe.kafka.listen]; port 0 = any
    std::string advertised;                    ///< host:port clients are told; empty = listen
                                               ///< (with the bound port) [floe.kafka.advertised-listener]
    std::filesystem::path data_dir = "./floe-data"; ///< [floe.data-dir]; log in <dir>/log, group
                                                    ///< offsets and producer ids in <dir>/kafka
    bool auto_create_topics = true;            ///< [floe.auto-create-topics]
    int32_t default_partitions = 1;            ///< [floe.default-partitions]
    std::map<std::string, std::string> topic_defaults; ///< [floe.topic-defaults.*], Kafka names

    size_t io_threads = 0;                     ///< 0 = hardware concurrency (at least 2)
    size_t max_request_bytes = 100u << 20;     ///< socket.request.max.bytes
    /// Caps on one Fetch answer, whatever the client asks [floe.kafka.fetch-max-bytes,
    /// floe.kafka.fetch-max-records]: whole batches, the first always sent (KIP-74).
    size_t fetch_max_bytes = 16u << 20;
    size_t fetch_max_records = 32768;
    int32_t node_id = 0;
    std::string cluster_id = "floe";
    int64_t flush_interval_ms = 0;             ///< log.flush.interval.ms (0: acks=all and close only)
    int64_t group_initial_rebalance_delay_ms = 300;
    /// The remote tier: Fetch and ListOffsets below the local log start of a tiered topic are
    /// served from it (KIP-405). nullptr: only the local tier. Must outlive the broker.
    log::remote_tier* remote = nullptr;
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

    /// The port actually bound (useful with port 0). Valid after start().
    uint16_t port() const noexcept;
    /// The local tier the broker serves (valid between start and stop), for the storage worker
    /// and the HTTP plane.
    log::log_manager* logs() noexcept;

    struct impl;

private:
    std::unique_ptr<impl> _impl;
};

} // namespace floe::kafka
