#pragma once

#include "base/result.h"
#include "config/settings.h"
#include "log/local_tier.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace floe::ingest {

/// One mirrored partition as /v1/ingest and metrics see it.
struct partition_status {
    std::string source_topic;
    std::string local_topic;
    int32_t partition = 0;
    int64_t source_end = -1;       ///< the source's high watermark, last seen (-1: unknown)
    int64_t local_end = 0;         ///< the mirror's log end: the resume point
    int64_t offloaded = 0;         ///< the mirror's offloaded-up-to marker (Iceberg committed)
    int64_t last_record_ts = -1;   ///< timestamp of the last record mirrored (ms)
    int64_t records = 0;           ///< mirrored by this process
};

/// Records the mirror is behind the source (source_end - local_end, at least 0); -1 when the
/// source's end is not known yet.
int64_t lag_records(const partition_status& p) noexcept;
/// Seconds the mirror is behind: 0 when caught up, else the age at `now_ms` of the last record
/// mirrored (by its timestamp); -1 when behind with nothing mirrored yet by this process.
double lag_seconds(const partition_status& p, int64_t now_ms) noexcept;

struct source_status {
    std::string name;
    std::string type;              ///< "kafka" or "jetstream"
    std::string state;             ///< starting, running, paused, error, stopped
    std::string last_error;        ///< empty when none since the last success
    int64_t last_error_ms = 0;
    int64_t errors = 0;            ///< errors seen since start (each distinct message once in a row)
    bool paused = false;           ///< consumption paused: local bytes above the budget
    int64_t pauses = 0;            ///< times consumption paused since start
    int64_t local_bytes = 0;       ///< bytes of the mirror's local segments not yet in Iceberg
    int64_t max_local_bytes = 0;   ///< the budget (floe.ingest.sources.<name>.max-local-bytes)
    std::vector<partition_status> partitions;
};

/// What the app gives the sources besides the log: how to reach the lake without depending on
/// it (DESIGN.md: ingest sits below tiering and lake).
struct ingest_hooks {
    /// A mirror segment was sealed by an ingest threshold: offload it soon (wakes the storage
    /// worker). May be empty.
    std::function<void()> sealed;
    /// The table's committed position (next offset not in the table) for a mirror partition:
    /// where a new owner of a Kafka source partition starts. May be empty (then: unknown).
    std::function<result<int64_t>(const std::string& topic, int32_t partition)> lake_position;
};

/// Default of floe.ingest.sources.<name>.max-local-bytes.
inline constexpr int64_t default_max_local_bytes = 1ll << 30;
/// The budget of a source's settings (validated by config: a positive size).
int64_t max_local_bytes_of(const config::settings::ingest_source& cfg);

/// Bytes of a mirror partition's local segments not yet offloaded (segments ending above the
/// offloaded-up-to marker); 0 when the topic does not go to the lake (remote.storage.enable
/// false: local retention bounds it, not the budget).
int64_t unoffloaded_bytes(const log::local_partition& p);

/// Fills each partition's local side (log end, offloaded marker) from the mirror's log: what
/// every source's status() adds to the source-side figures it keeps itself.
void fill_local_positions(const log::local_tier& logs, source_status& st);

/// Which source topics a `topics` setting selects: a comma list of exact names, or one regular
/// expression (ECMAScript) when it starts with '^'. Topics starting with "__" (internal) are
/// never selected by a regex.
class topic_selector {
public:
    static result<topic_selector> parse(std::string_view spec);
    bool matches(std::string_view topic) const;

private:
    std::vector<std::string> _names;
    std::shared_ptr<const std::regex> _re; ///< null for a list
};

/// A Kafka source: one librdkafka consumer on its own thread, a member of the source's consumer
/// group (`group-id`, default `floe-ingest-<name>`) subscribed to the selected topics, so several
/// Floe instances split the partitions. Each owned partition is appended to the mirror topic
/// `<topic-prefix><source topic>` with mirror_append at its source offsets, starting at the
/// mirror's log end or the table's committed position when higher (hooks.lake_position). The
/// group only receives progress as informational commits. Above `max-local-bytes` not yet in
/// Iceberg, the partitions are paused.
///
/// Threads: start() spawns the consumer thread; status() is safe from any thread; stop() joins.
class kafka_source {
public:
    kafka_source(config::settings::ingest_source cfg, log::local_tier& logs, ingest_hooks hooks = {});
    ~kafka_source();
    kafka_source(const kafka_source&) = delete;
    kafka_source& operator=(const kafka_source&) = delete;

    /// Checks the settings (topic selector, librdkafka properties) and starts the thread.
    /// Errors name the setting.
    result<void> start();
    void stop();
    /// The source's state; local and offloaded positions read from the log at the call.
    source_status status() const;
    const std::string& name() const noexcept { return _cfg.name; }

    struct impl;

private:
    config::settings::ingest_source _cfg;
    log::local_tier& _logs;
    ingest_hooks _hooks;
    std::unique_ptr<impl> _impl;
};

} // namespace floe::ingest
