#include "log/topic_config.h"

#include <charconv>
#include <climits>

namespace floe::log {

namespace {

// Kafka's names, types and defaults (as text). flush.*/index.interval.bytes are Kafka topic
// configs too; the rest of Kafka's topic configs are not accepted (unknown key).
constexpr topic_config_key keys[] = {
    {"cleanup.policy", config_type::list, "delete", "Only 'delete' is supported."},
    {"compression.type", config_type::string, "producer",
     "Batches are kept as the producer compressed them."},
    {"flush.messages", config_type::long_, "9223372036854775807",
     "fsync after this many messages."},
    {"flush.ms", config_type::long_, "9223372036854775807", "fsync after this many ms."},
    {"index.interval.bytes", config_type::int_, "4096", "Bytes between offset index entries."},
    {"local.retention.bytes", config_type::long_, "-2",
     "Local bytes kept when tiering is on; -2 = retention.bytes."},
    {"local.retention.ms", config_type::long_, "-2",
     "Local time kept when tiering is on; -2 = retention.ms."},
    {"max.message.bytes", config_type::int_, "1048588", "Largest record batch accepted."},
    {"message.timestamp.type", config_type::string, "CreateTime", "CreateTime or LogAppendTime."},
    {"remote.storage.enable", config_type::boolean, "false", "Offload sealed segments to Iceberg."},
    {"retention.bytes", config_type::long_, "-1", "Bytes kept per partition; -1 = unlimited."},
    {"retention.ms", config_type::long_, "604800000", "Time data is kept; -1 = forever."},
    {"segment.bytes", config_type::int_, "1073741824", "Segment file size before a roll."},
    {"segment.ms", config_type::long_, "604800000", "Segment age before a roll."},
};

result<int64_t> parse_long(std::string_view key, std::string_view v) {
    int64_t out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
        return fail(errc::invalid_argument, "config {}: '{}' is not an integer", key, v);
    return out;
}

result<int64_t> parse_ranged(std::string_view key, std::string_view v, int64_t lo, int64_t hi) {
    auto n = FLOE_TRY(parse_long(key, v));
    if (n < lo || n > hi)
        return fail(errc::invalid_argument, "config {}: {} outside [{}, {}]", key, n, lo, hi);
    return n;
}

result<bool> parse_bool(std::string_view key, std::string_view v) {
    if (v == "true" || v == "TRUE" || v == "True") return true;
    if (v == "false" || v == "FALSE" || v == "False") return false;
    return fail(errc::invalid_argument, "config {}: '{}' is not a boolean", key, v);
}

// Applies one validated key/value to `cfg`.
result<void> apply(topic_config& cfg, std::string_view key, std::string_view v) {
    if (key == "segment.bytes") cfg.segment_bytes = FLOE_TRY(parse_ranged(key, v, 14, INT32_MAX));
    else if (key == "segment.ms") cfg.segment_ms = FLOE_TRY(parse_ranged(key, v, 1, INT64_MAX));
    else if (key == "retention.ms") cfg.retention_ms = FLOE_TRY(parse_ranged(key, v, -1, INT64_MAX));
    else if (key == "retention.bytes")
        cfg.retention_bytes = FLOE_TRY(parse_ranged(key, v, -1, INT64_MAX));
    else if (key == "local.retention.ms")
        cfg.local_retention_ms = FLOE_TRY(parse_ranged(key, v, -2, INT64_MAX));
    else if (key == "local.retention.bytes")
        cfg.local_retention_bytes = FLOE_TRY(parse_ranged(key, v, -2, INT64_MAX));
    else if (key == "remote.storage.enable") cfg.remote_storage_enable = FLOE_TRY(parse_bool(key, v));
    else if (key == "max.message.bytes")
        cfg.max_message_bytes = int32_t(FLOE_TRY(parse_ranged(key, v, 0, INT32_MAX)));
    else if (key == "flush.messages") cfg.flush_messages = FLOE_TRY(parse_ranged(key, v, 1, INT64_MAX));
    else if (key == "flush.ms") cfg.flush_ms = FLOE_TRY(parse_ranged(key, v, 0, INT64_MAX));
    else if (key == "index.interval.bytes")
        cfg.index_interval_bytes = int32_t(FLOE_TRY(parse_ranged(key, v, 0, INT32_MAX)));
    else if (key == "cleanup.policy") {
        if (v == "compact" || v == "compact,delete" || v == "delete,compact")
            return fail(errc::unsupported, "config cleanup.policy: '{}' not supported (only delete)",
                        v);
        if (v != "delete")
            return fail(errc::invalid_argument, "config cleanup.policy: invalid value '{}'", v);
        cfg.cleanup_policy = std::string(v);
    } else if (key == "message.timestamp.type") {
        if (v == "CreateTime") cfg.message_timestamp_type = timestamp_type::create_time;
        else if (v == "LogAppendTime") cfg.message_timestamp_type = timestamp_type::log_append_time;
        else
            return fail(errc::invalid_argument,
                        "config message.timestamp.type: '{}' is not CreateTime or LogAppendTime", v);
    } else if (key == "compression.type") {
        static constexpr std::string_view ok[] = {"producer", "uncompressed", "gzip", "snappy",
                                                  "lz4",      "zstd"};
        bool found = false;
        for (auto o : ok) found |= (o == v);
        if (!found) return fail(errc::invalid_argument, "config compression.type: invalid '{}'", v);
        cfg.compression_type = std::string(v);
    } else {
        return fail(errc::invalid_argument, "unknown topic config '{}'", key);
    }
    return {};
}

} // namespace

int64_t topic_config::effective_local_retention_ms() const noexcept {
    if (!remote_storage_enable || local_retention_ms == -2) return retention_ms;
    return local_retention_ms;
}
int64_t topic_config::effective_local_retention_bytes() const noexcept {
    if (!remote_storage_enable || local_retention_bytes == -2) return retention_bytes;
    return local_retention_bytes;
}

std::span<const topic_config_key> topic_config_keys() noexcept { return keys; }

const topic_config_key* find_topic_config_key(std::string_view name) noexcept {
    for (auto& k : keys)
        if (k.name == name) return &k;
    return nullptr;
}

result<void> validate_topic_config(std::string_view key, std::string_view value) {
    topic_config scratch;
    return apply(scratch, key, value);
}

result<topic_config> resolve_topic_config(const config_map& base, const config_map& overrides) {
    topic_config cfg;
    for (auto& [k, v] : base) FLOE_TRY(apply(cfg, k, v));
    for (auto& [k, v] : overrides) FLOE_TRY(apply(cfg, k, v));
    return cfg;
}

std::optional<std::string> topic_config_value(const topic_config& c, std::string_view key) {
    auto n = [](int64_t v) { return std::to_string(v); };
    if (key == "segment.bytes") return n(c.segment_bytes);
    if (key == "segment.ms") return n(c.segment_ms);
    if (key == "retention.ms") return n(c.retention_ms);
    if (key == "retention.bytes") return n(c.retention_bytes);
    if (key == "local.retention.ms") return n(c.local_retention_ms);
    if (key == "local.retention.bytes") return n(c.local_retention_bytes);
    if (key == "remote.storage.enable") return std::string(c.remote_storage_enable ? "true" : "false");
    if (key == "max.message.bytes") return n(c.max_message_bytes);
    if (key == "flush.messages") return n(c.flush_messages);
    if (key == "flush.ms") return n(c.flush_ms);
    if (key == "index.interval.bytes") return n(c.index_interval_bytes);
    if (key == "cleanup.policy") return c.cleanup_policy;
    if (key == "compression.type") return c.compression_type;
    if (key == "message.timestamp.type")
        return std::string(c.message_timestamp_type == timestamp_type::log_append_time
                               ? "LogAppendTime"
                               : "CreateTime");
    return std::nullopt;
}

} // namespace floe::log
