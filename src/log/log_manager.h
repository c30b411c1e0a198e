#pragma once

#include "base/clock.h"
#include "base/result.h"
#include "base/uuid.h"
#include "log/local_tier.h"
#include "log/partition_log.h"
#include "log/topic_config.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::log {

struct log_manager_options {
    std::filesystem::path data_dir;       ///< floe.data-dir; the log lives in <data_dir>/log
    config_map topic_defaults;            ///< floe.topic-defaults.* (Kafka names, as text)
    int32_t default_partitions = 1;       ///< num.partitions for auto-created topics
    bool auto_create_topics = true;       ///< auto.create.topics.enable
    /// Background fsync of every partition with unflushed data this often (log.flush.interval.ms);
    /// 0 = only on demand (acks=all, flush.messages/flush.ms topic settings, close).
    int64_t flush_interval_ms = 0;
    /// How often housekeeping applies retention and segment.ms rolls.
    int64_t housekeeping_interval_ms = 30'000;
    /// Threads serving fsync requests: fsyncs of different partitions overlap (the filesystem
    /// journal merges them); all waiters of one partition share each of its fsyncs.
    int flusher_threads = 4;
    /// The log cleaner (compacted topics): a background pass over every compacted partition
    /// this often (log.cleaner.backoff.ms); 0 = no cleaner thread (run_cleaner() on demand).
    int64_t cleaner_interval_ms = 15'000;
    /// Cleaner I/O budget, bytes read + written per second (log.cleaner.io.max.bytes.per.second);
    /// 0 = unthrottled.
    uint64_t cleaner_io_max_bytes_per_second = 0;
    /// What the broker can do for topics' tables (a key provider for encrypted ones): a create,
    /// an alter or new dynamic defaults asking for more is refused (check_topic_capabilities).
    topic_capabilities capabilities;
    clock_source* clock = nullptr;        ///< nullptr = system clock
    /// Start the flusher, housekeeping and cleaner threads. Tests may turn them off and call
    /// run_housekeeping() themselves; when_durable then fsyncs inline.
    bool background_threads = true;
};

/// Owns every partition log under <data_dir>/log and the topic metadata store
/// (<data_dir>/log/topics.json, replaced atomically: write temp, fsync, rename, fsync dir).
///
/// Layout: <data_dir>/log/<partition_dir_name>/ per partition; a directory not
/// matching a live topic (e.g. left by a crash during delete) is removed on open.
///
/// Threads: thread-safe. `_mu` (shared) guards the topic map; metadata changes take it
/// exclusively and also serialise store writes. Partition handles are shared_ptr so a caller
/// may keep using one across a concurrent delete (appends then fail with shutting_down).
/// Flusher threads run group commits; the housekeeping thread runs retention and time-based
/// rolls.
/// Implements local_tier. Its overrides are not marked `override` (none are: clang warns when
/// only some are), as in partition_log; a signature that drifts from the interface leaves the
/// class abstract, which open() would not compile.
class log_manager : public local_tier {
public:
    /// Loads the topic store and opens (recovers) every partition. Start-up errors are values.
    static result<std::unique_ptr<log_manager>> open(log_manager_options opts);
    ~log_manager();

    // validate_topic_name and topic_collision_key: inherited from local_tier.
    /// A partition's directory name under <data_dir>/log: "<topic>-<partition>.<topic id hex>",
    /// or for names that would pass `max_file_name_bytes`, the topic's first characters and a
    /// '~' in place of the full name (the id keeps it unique).
    static std::string partition_dir_name(std::string_view topic, int32_t partition, const uuid& topic_id);
    /// NAME_MAX of the file systems a data directory lives on (ext4, xfs, btrfs, tmpfs).
    static constexpr size_t max_file_name_bytes = 255;

    /// Creates a topic (CreateTopics, auto-create). `partitions` <= 0 means default_partitions.
    /// errc::already_exists when the name, or a live topic's collision key equals this one's
    /// (the message names that topic; tell the two apart by topic(name)),
    /// errc::invalid_argument (name, partitions, config).
    /// With `validate_only` nothing is written (CreateTopics validateOnly).
    /// A non-empty `mirror_of` creates a mirror topic (see topic_info::mirror_of).
    result<topic_info> create_topic(std::string_view name, int32_t partitions,
                                    const config_map& overrides = {},
                                    bool validate_only = false, std::string_view mirror_of = {},
                                    int16_t replication_factor = 1);
    /// Removes the topic from the store (durably) and then its data. errc::not_found.
    result<void> delete_topic(std::string_view name);
    /// Grows a topic to `total` partitions. errc::invalid_argument if not larger.
    result<topic_info> create_partitions(std::string_view name, int32_t total);

    /// AlterConfigs: replaces all overrides of the topic.
    result<topic_info> alter_topic_config(std::string_view name, const config_map& overrides,
                                          bool validate_only = false);
    /// IncrementalAlterConfigs: applies the ops in order (append/subtract on list keys).
    result<topic_info> incremental_alter_topic_config(std::string_view name,
                                                      std::span<const config_op> ops,
                                                      bool validate_only = false);

    std::optional<topic_info> topic(std::string_view name) const;
    std::optional<topic_info> topic(const uuid& id) const;
    std::vector<topic_info> topics() const;

    /// A partition's log, nullptr if the topic or partition does not exist.
    std::shared_ptr<partition_log> partition(std::string_view topic, int32_t partition) const;
    std::shared_ptr<partition_log> partition(const uuid& topic_id, int32_t partition) const;
    std::shared_ptr<partition_log> partition(const topic_partition& tp) const {
        return partition(tp.topic, tp.partition);
    }
    /// <data_dir>/log.
    std::filesystem::path log_dir() const;

    /// Applies retention and segment.ms rolls to every partition now. Returns segments deleted.
    result<size_t> run_housekeeping();
    /// One cleaner pass over every compacted partition now (log/cleaner.h). Returns how many
    /// partitions were cleaned; a failing partition is logged and skipped.
    result<size_t> run_cleaner();
    /// fsyncs every partition.
    result<void> flush_all();
    /// Stops threads, flushes and closes every partition (SIGTERM path). Idempotent.
    result<void> close();

    const log_manager_options& options() const noexcept;
    /// floe.topic-defaults.* as configured at start-up (STATIC_BROKER_CONFIG).
    const config_map& topic_defaults() const noexcept;
    /// Broker-level topic defaults changed at run time (AlterConfigs on the broker resource;
    /// DYNAMIC_DEFAULT_BROKER_CONFIG): they override topic_defaults(), topic overrides override
    /// them. Persisted in topics.json.
    config_map dynamic_topic_defaults() const;
    /// Replaces the dynamic defaults (Kafka topic config names) and re-resolves every topic.
    /// Fails like resolve_topic_config, changing nothing, if any value is invalid.
    result<void> set_dynamic_topic_defaults(const config_map& defaults, bool validate_only = false);

    struct impl;

protected:
    std::shared_ptr<local_partition> find_partition(std::string_view topic, int32_t partition) const;
    std::shared_ptr<local_partition> find_partition(const uuid& topic_id, int32_t partition) const;

private:
    explicit log_manager(std::unique_ptr<impl> i);
    std::unique_ptr<impl> _impl;
};

} // namespace floe::log
