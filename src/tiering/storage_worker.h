#pragma once

#include "base/clock.h"
#include "base/result.h"
#include "lake/table_writer.h"
#include "log/local_tier.h"
#include "tiering/lease.h"
#include "tiering/partition_leases.h"
#include "tiering/table_maintainer.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace floe::tiering {

struct worker_options {
    std::chrono::milliseconds tick_interval{10'000};
    size_t parallelism = 2;               ///< partitions offloaded at once
    size_t max_decompressed_batch = 64u << 20;
    size_t read_chunk_bytes = 8u << 20;   ///< bytes read from a segment at a time
    std::chrono::milliseconds max_backoff{60'000};
    std::chrono::milliseconds remote_retention_interval{60'000};
    clock_source* clock = nullptr;        ///< nullptr: the system clock
    /// Scheduled table maintenance (nullptr: none); each tiered topic's table is maintained
    /// every `maintenance_interval`, the first time one interval after the worker starts.
    table_maintainer* maintainer = nullptr;
    std::chrono::milliseconds maintenance_interval{3'600'000};
};

/// What one tick did.
struct tick_report {
    bool leader = false;      ///< held the global lease (or, with partition leases, at least one)
    size_t partitions = 0;    ///< tiered partitions seen
    size_t leased = 0;        ///< with partition leases: partitions worked on under a lease
    size_t leases_lost = 0;   ///< with partition leases: work stopped because a renewal failed
    size_t segments_offloaded = 0;
    int64_t rows_committed = 0;
    size_t failures = 0;
    size_t local_segments_deleted = 0;
    size_t remote_files_expired = 0;
    size_t tables_maintained = 0;
};

/// Health as the admin plane shows it.
struct worker_health {
    bool ok = true;
    std::string message;
};

/// Drains sealed segments of tiered topics (remote.storage.enable=true) into their Iceberg
/// tables, exactly once, and applies retention to both tiers.
///
/// Exactly once: the table's committed positions are the truth. Before offloading a segment the
/// worker reads them; a segment whose rows are all committed (a crash between commit and
/// marking) is only marked; rows below the committed position are dropped by the lake writer.
/// The partition's offloaded-up-to marker moves only after a commit succeeded, and local
/// retention deletes nothing above it.
///
/// Who may work: either one global `lease` (the embedded log: one broker per data dir, which
/// does everything while it holds it), or `partition_leases` (a local tier shared by several
/// brokers): each partition's offload, rolls and local retention run only under that
/// partition's lease, whose fencing epoch goes with every marker move and trim; the table-wide
/// work of a topic (remote retention, maintenance) runs on the holder of its partition 0. A
/// broker takes and keeps the leases it owns (rendezvous over the live brokers; a dead broker
/// leaves the live set before its leases expire, so its partitions move to their new owners
/// within the lease duration); a lease it does not own it takes only when it has stayed free for
/// a grace period (half the lease duration, at least two ticks: an owner that does not work its
/// partitions), and gives it back after the pass. Work renews its lease as it goes (every
/// third of the duration) and stops at once when a renewal fails.
///
/// Threads: one scheduler thread runs ticks every tick_interval (or on wake()); each tick
/// offloads up to `parallelism` partitions at once on short-lived threads. A failing partition
/// is retried with exponential backoff; it never blocks produce or fetch (the worker only reads
/// sealed segments and sets markers). tick() may also be called directly (tests).
class storage_worker {
public:
    storage_worker(log::local_tier& logs, lake::lake& lake, std::unique_ptr<lease> lease,
                   worker_options opts);
    storage_worker(log::local_tier& logs, lake::lake& lake, std::unique_ptr<partition_leases> leases,
                   worker_options opts);
    ~storage_worker();

    void start();
    void stop();
    /// Runs one pass now on the calling thread.
    tick_report tick();
    /// Makes the scheduler thread run its next pass now instead of at the end of the interval
    /// (e.g. an ingest threshold sealed a segment). Cheap; any thread.
    void wake();
    worker_health health() const;

private:
    struct partition_state {
        int failures = 0;
        std::chrono::steady_clock::time_point next_attempt{};
        std::string last_error;
        /// The table's committed position for this partition, as last read or committed by this
        /// worker: local retention deletes nothing at or above it (nullopt: not known yet).
        std::optional<int64_t> lake_covers;
        /// The marker was found ahead of the table (logged once until that changes).
        bool marker_ahead_reported = false;
        /// Offsets the marker says were offloaded that are in neither tier ("" when none).
        std::string hole;
    };
    struct partition_result {
        size_t segments = 0;
        int64_t rows = 0;
        bool failed = false;
        bool leased = false;      ///< worked under a partition lease
        bool lease_lost = false;  ///< stopped because the lease could not be renewed
        size_t local_deleted = 0;
    };
    class lease_keeper;
    /// One partition's pass: its lease (partition leases), roll by time, offload, local retention.
    partition_result work_partition(const log::topic_info& topic, std::shared_ptr<log::local_partition> p);
    partition_result offload_partition(const log::topic_info& topic, log::local_partition& p, lease_keeper& keeper);
    result<partition_result> offload_partition_once(const log::topic_info& topic, log::local_partition& p,
                                                    lease_keeper& keeper);
    void run();

    log::local_tier& _logs;
    lake::lake& _lake;
    std::unique_ptr<lease> _lease;               ///< global lease (or nullptr)
    std::unique_ptr<partition_leases> _leases;   ///< per-partition leases (or nullptr)
    worker_options _opts;
    clock_source& _clock;

    mutable std::mutex _mu;
    std::map<std::string, partition_state> _state; ///< by stream key
    std::map<std::string, std::chrono::steady_clock::time_point> _last_remote_retention;
    std::map<std::string, std::chrono::steady_clock::time_point> _last_maintenance;
    std::chrono::steady_clock::time_point _started = std::chrono::steady_clock::now();
    std::string _last_error;
    bool _leader = false;
    /// Partition leases held now, by stream key (kept between ticks for the partitions this
    /// broker owns).
    std::map<std::string, partition_lease> _held;
    /// Partitions this broker does not own, by stream key: since when their lease was seen free.
    /// Taken only after a grace period, so a live owner takes its own first.
    std::map<std::string, std::chrono::steady_clock::time_point> _free_since;

    std::mutex _run_mu;
    std::condition_variable _cv;
    bool _stopping = false;
    bool _woken = false;
    std::thread _thread;
};

/// "<topic>-<partition>": the stream key of a Kafka partition in the table.
std::string stream_key_for(std::string_view topic, int32_t partition);

/// The topic's floe.iceberg.* configs as the lake's append takes them.
lake::value_decoding value_decoding_of(const log::topic_info& topic);
/// How the topic's table is encrypted: its floe.iceberg.encryption* configs.
lake::table_encryption table_encryption_of(const log::topic_info& topic);

} // namespace floe::tiering
