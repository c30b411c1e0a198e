#pragma once

#include "base/result.h"
#include "config/settings.h"
#include "log/local_tier.h"

#include <atomic>
#include <cstdint>
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
    std::string type;              ///< "kafka"
    std::string state;             ///< starting, running, error, stopped
    std::string last_error;        ///< empty when none since the last success
    int64_t last_error_ms = 0;
    int64_t errors = 0;            ///< errors seen since start (each distinct message once in a row)
    std::vector<partition_status> partitions;
};

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

/// A Kafka source: one librdkafka consumer on its own thread, partitions assigned manually
/// (no group rebalance) at the mirror's log end, records appended to the mirror topic
/// `<topic-prefix><source topic>` with mirror_append at their source offsets. The consumer
/// group (`group-id`, default `floe-ingest-<name>`) only receives the durable mirror position
/// as informational commits.
///
/// Threads: start() spawns the consumer thread; status() is safe from any thread; stop() joins.
class kafka_source {
public:
    kafka_source(config::settings::ingest_source cfg, log::local_tier& logs);
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
    std::unique_ptr<impl> _impl;
};

} // namespace floe::ingest
