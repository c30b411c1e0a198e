#pragma once
// The local tier on Redis Streams (floe.local.type=redis): a log::local_tier whose partitions
// live in Redis, one stream entry per record, so several brokers can share one hot tier and any
// Redis client can read a topic (XRANGE). See README.md for the keys and the guarantees.

#include "base/result.h"
#include "log/local_tier.h"
#include "redis/client.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

namespace floe::redis_tier {

/// Version of the `floe_tier` function library (functions.lua): the build derives it from the
/// code, so a changed library replaces the one loaded in Redis at start-up.
std::string_view library_version() noexcept;

struct options {
    redis::options redis;          ///< floe.local.redis.uri (+ timeouts, pool size)
    std::string ns = "floe";       ///< key prefix (floe.namespace)
    /// acks=all waits (WAIT) until this many replicas have the append (floe.local.redis.min-replicas);
    /// 0: acknowledged once the Redis master has it.
    int min_replicas = 0;
    std::chrono::milliseconds wait_timeout{5000};
    log::config_map topic_defaults;   ///< floe.topic-defaults.*
    int32_t default_partitions = 1;    ///< num.partitions
    std::filesystem::path log_dir;     ///< reported by DescribeLogDirs (no data is kept there)
    /// How often the topics version other brokers bump is checked (topics they create, delete
    /// or alter show up within this; a lookup that misses re-reads at once).
    std::chrono::milliseconds topic_refresh_interval{500};
    /// What the broker can do for topics' tables: creates and alters asking for more are
    /// refused (log::check_topic_capabilities).
    log::topic_capabilities capabilities;
};

/// "{<ns>:<topic>:<partition>}": the hash tag every key of a partition carries (one slot).
std::string partition_tag(std::string_view ns, std::string_view topic, int32_t partition);
/// The key of the storage worker's lease on a partition (a redis::lease_manager hash in the
/// partition's slot): the tier's marker and trim functions, given an epoch, run only while it is
/// this lease's current epoch (log::offload_fence). Never deleted, so epochs only grow.
std::string offload_lease_key(std::string_view ns, std::string_view topic, int32_t partition);

/// Connects, loads (version-checked) the function library and returns the tier. Start-up
/// errors name the setting when they come from one (e.g. floe.local.redis.uri).
result<std::unique_ptr<log::local_tier>> open(options o);
/// The same over a client the caller already has (shared with other users of Redis).
result<std::unique_ptr<log::local_tier>> open(std::shared_ptr<redis::client> c, options o);

} // namespace floe::redis_tier
