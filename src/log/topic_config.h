#pragma once

#include "base/result.h"

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::log {

enum class timestamp_type : uint8_t { create_time, log_append_time };

/// The effective (typed) configuration of one topic: broker defaults overlaid with the topic's
/// overrides. Field defaults are Kafka's. A plain value, copied freely.
struct topic_config {
    int64_t segment_bytes = 1ll << 30;                  ///< segment.bytes
    int64_t segment_ms = 7ll * 24 * 3600 * 1000;        ///< segment.ms
    int64_t retention_ms = 7ll * 24 * 3600 * 1000;      ///< retention.ms, -1 = forever
    int64_t retention_bytes = -1;                       ///< retention.bytes, -1 = unlimited
    bool remote_storage_enable = false;                 ///< remote.storage.enable
    int64_t local_retention_ms = -2;                    ///< local.retention.ms, -2 = retention.ms
    int64_t local_retention_bytes = -2;                 ///< local.retention.bytes, -2 = retention.bytes
    std::string cleanup_policy = "delete";              ///< cleanup.policy: delete, compact or both
    int64_t delete_retention_ms = 86400000;             ///< delete.retention.ms (tombstones kept)
    double min_cleanable_dirty_ratio = 0.5;             ///< min.cleanable.dirty.ratio
    int64_t min_compaction_lag_ms = 0;                  ///< min.compaction.lag.ms
    int64_t max_compaction_lag_ms = INT64_MAX;          ///< max.compaction.lag.ms
    timestamp_type message_timestamp_type = timestamp_type::create_time; ///< message.timestamp.type
    int32_t max_message_bytes = 1048588;                ///< max.message.bytes (one batch)
    std::string compression_type = "producer";          ///< compression.type (kept as received)
    int64_t flush_messages = INT64_MAX;                 ///< flush.messages
    int64_t flush_ms = INT64_MAX;                       ///< flush.ms
    int32_t index_interval_bytes = 4096;                ///< index.interval.bytes
    // Typed tables (Floe's own keys, named as Redpanda names its redpanda.* ones):
    std::string iceberg_mode = "raw";                   ///< floe.iceberg.mode: raw, schema-id, latest-schema
    std::string iceberg_value_subject;                  ///< floe.iceberg.value-subject ("": <topic>-value)
    std::string iceberg_protobuf_message;               ///< floe.iceberg.protobuf-message
    std::string iceberg_key_mode = "raw";               ///< floe.iceberg.key-mode: raw, schema-id, latest-schema
    std::string iceberg_key_subject;                    ///< floe.iceberg.key-subject ("": <topic>-key)
    /// floe.iceberg.partition-spec: Iceberg transforms over Floe's columns, canonical text
    /// ("identity(stream_key)", "day(message_ts), bucket[16](key)"); a change is partition evolution.
    std::string iceberg_partition_spec = "identity(stream_key)";
    // Parquet Modular Encryption of the topic's table (the lake encrypts; keys come from the
    // broker's floe.encryption.provider):
    std::string iceberg_encryption = "none";            ///< floe.iceberg.encryption: none, uniform, columns
    std::string iceberg_encryption_columns;             ///< floe.iceberg.encryption.columns (normalised comma list)
    std::string iceberg_encryption_footer = "encrypted"; ///< floe.iceberg.encryption.footer: encrypted, plaintext
    std::string iceberg_encryption_aad_prefix = "none"; ///< floe.iceberg.encryption.aad-prefix: none, stored, supplied
    std::string iceberg_encryption_algorithm = "AES_GCM_V1"; ///< floe.iceberg.encryption.algorithm (or AES_GCM_CTR_V1)
    /// Configs Floe accepts, validates and reports but does not act on (see the README's list),
    /// as their normalised text, keyed by name; a key absent here has its Kafka default.
    std::map<std::string, std::string, std::less<>> stored;

    /// The retention that applies to local segments: local.* when tiering is on (-2 meaning
    /// "same as retention.*"), else retention.*.
    int64_t effective_local_retention_ms() const noexcept;
    int64_t effective_local_retention_bytes() const noexcept;
    /// cleanup.policy holds "compact": the log cleaner keeps the latest record per key.
    bool compacted() const noexcept;
    /// cleanup.policy holds "delete": retention.ms / retention.bytes delete old segments.
    bool deletes() const noexcept;
    /// When the active segment rolls by age: segment.ms, or for compacted topics the smaller of
    /// it and max.compaction.lag.ms (a record cannot stay uncompacted longer than that while
    /// it sits in the active segment, which is never cleaned).
    int64_t effective_roll_ms() const noexcept;
    /// floe.iceberg.mode or floe.iceberg.key-mode is not raw: offloaded values (`data`) or keys
    /// (`key_data`) are decoded into typed columns, and the table has a dead-letter table.
    bool typed() const noexcept { return iceberg_mode != "raw" || iceberg_key_mode != "raw"; }
    /// floe.iceberg.encryption is not none: the table's data files are encrypted.
    bool encrypted() const noexcept { return iceberg_encryption != "none"; }
    /// floe.iceberg.encryption.columns as a list (empty unless set).
    std::vector<std::string> encrypted_columns() const;
    /// The subject whose schemas decode values: floe.iceberg.value-subject or <topic>-value.
    std::string value_subject(std::string_view topic) const;
    /// The subject whose schemas decode keys: floe.iceberg.key-subject or <topic>-key.
    std::string key_subject(std::string_view topic) const;
};

/// What this broker can do for a topic's table, beyond what the config itself says: checked by
/// the local tier when a topic is created or its config (or the broker's dynamic topic
/// defaults) altered, so CreateTopics/AlterConfigs refuse what the lake could not honour. Set
/// by the app from the broker settings.
struct topic_capabilities {
    bool key_provider = false; ///< floe.encryption.provider is set
    /// The lake writes encrypted data files (`floe serve` sets it: the lake encrypts with the
    /// key provider's keys). False refuses a topic asking for encryption rather than let it be
    /// offloaded in plaintext.
    bool lake_encrypts = false;
    /// Whether a column's own key (floe.iceberg.encryption.columns `value:<key-id>`) may be
    /// named: the key provider's check_key (`floe serve` sets it). Unset: not checked. It may
    /// make a KMS request: check_config_keys calls it outside every lock.
    std::function<result<void>(std::string_view key_id)> check_key;
};

/// The key ids that a floe.iceberg.encryption.columns value names (`key,value:pii` -> pii),
/// each once, in order.
std::vector<std::string> encryption_column_key_ids(std::string_view columns);

/// Checks the keys that the topic config `key`=`value` names with caps.check_key, when the
/// config is set (CreateTopics, AlterConfigs, start-up), so a mistyped key id is refused then
/// instead of being found by the offload. errc::invalid_argument naming the config, the key
/// and why; a key provider that cannot tell now (a KMS outage: a retryable error) lets the
/// value through with a warning, and the offload names the key if it really is wrong. Only
/// floe.iceberg.encryption.columns names keys; every other config passes.
result<void> check_config_keys(std::string_view key, std::string_view value, const topic_capabilities& caps);

/// errc::invalid_argument when `cfg` asks for what `caps` lacks (floe.iceberg.encryption
/// other than none without a key provider, or while the lake cannot encrypt), naming the config
/// and what is missing.
result<void> check_topic_capabilities(const topic_config& cfg, const topic_capabilities& caps);

/// How a config value is typed, for DescribeConfigs (Kafka's ConfigType).
enum class config_type : uint8_t { boolean, string, int_, long_, list, double_ };

/// One known topic config key: name, type, Kafka default as text, a one-line doc, bounds for
/// numbers (Kafka's validators), and whether Floe acts on it (`honoured`) or only stores it.
struct topic_config_key {
    std::string_view name;
    config_type type;
    std::string_view default_value;
    std::string_view doc;
    int64_t min = INT64_MIN;
    int64_t max = INT64_MAX;
    bool honoured = true;
};

/// Every topic config Kafka 3.7 defines, in a stable order (DescribeConfigs lists these).
std::span<const topic_config_key> topic_config_keys() noexcept;
const topic_config_key* find_topic_config_key(std::string_view name) noexcept;

/// Config overrides as text, keyed by Kafka config name (what CreateTopics/AlterConfigs carry and
/// what the topic store persists).
using config_map = std::map<std::string, std::string, std::less<>>;

/// Validates one key/value pair: known key, parses as its type, within bounds (e.g.
/// segment.bytes >= 14, cleanup.policy a non-empty list of delete and compact,
/// message.timestamp.type in {CreateTime, LogAppendTime}). errc::invalid_argument naming the key.
result<void> validate_topic_config(std::string_view key, std::string_view value);

/// Dynamic broker configs that are not topic defaults (Kafka's thread pools, quotas, SASL and
/// SSL settings AlterConfigs may change on a BROKER resource) are kept in the same stored map as
/// the dynamic topic defaults, under this prefix; resolving a topic's config skips them.
inline constexpr std::string_view broker_only_config_prefix = "broker/";

/// Builds the effective config: `base` (broker defaults, possibly empty) overlaid with
/// `overrides`. Fails like validate_topic_config on the first bad entry.
result<topic_config> resolve_topic_config(const config_map& base, const config_map& overrides);

/// Text form of the effective value of `key` in `cfg` (for DescribeConfigs), nullopt if unknown.
std::optional<std::string> topic_config_value(const topic_config& cfg, std::string_view key);

} // namespace floe::log
