#include "log/topic_config.h"

#include "base/partition_spec_text.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <climits>
#include <cmath>

namespace floe::log {

namespace {

// Kafka's topic configs (3.7): names, types, defaults as text, Kafka's bounds. `honoured`
// false: accepted, validated, persisted and reported, but without effect in Floe (the README
// lists them and why).
constexpr int64_t i32max = INT32_MAX;
constexpr topic_config_key keys[] = {
    {"cleanup.policy", config_type::list, "delete",
     "delete, compact, or both (comma-separated): retention deletes old segments, the log "
     "cleaner keeps the latest record per key."},
    {"compression.type", config_type::string, "producer",
     "Batches are kept as the producer compressed them."},
    {"delete.retention.ms", config_type::long_, "86400000",
     "How long tombstones are kept on compacted topics once cleaned.", 0, INT64_MAX},
    {"file.delete.delay.ms", config_type::long_, "60000",
     "Delay before a deleted segment file is removed.", 0, INT64_MAX, false},
    {"flush.messages", config_type::long_, "9223372036854775807",
     "fsync after this many messages.", 1, INT64_MAX},
    {"flush.ms", config_type::long_, "9223372036854775807", "fsync after this many ms.", 0,
     INT64_MAX},
    {"follower.replication.throttled.replicas", config_type::list, "",
     "Replicas throttled on followers (single replica: no effect).", 0, 0, false},
    {"index.interval.bytes", config_type::int_, "4096", "Bytes between offset index entries.", 0,
     i32max},
    {"leader.replication.throttled.replicas", config_type::list, "",
     "Replicas throttled on the leader (single replica: no effect).", 0, 0, false},
    {"local.retention.bytes", config_type::long_, "-2",
     "Local bytes kept when tiering is on; -2 = retention.bytes.", -2, INT64_MAX},
    {"local.retention.ms", config_type::long_, "-2",
     "Local time kept when tiering is on; -2 = retention.ms.", -2, INT64_MAX},
    {"max.compaction.lag.ms", config_type::long_, "9223372036854775807",
     "Longest a record stays uncompacted on a compacted topic.", 1, INT64_MAX},
    {"max.message.bytes", config_type::int_, "1048588", "Largest record batch accepted.", 0,
     i32max},
    {"message.downconversion.enable", config_type::boolean, "true",
     "Down-conversion for old fetch versions (Floe serves v2 batches only).", 0, 0, false},
    {"message.format.version", config_type::string, "3.0-IV1",
     "Ignored by Kafka 3.x brokers too: batches are always v2.", 0, 0, false},
    {"message.timestamp.after.max.ms", config_type::long_, "9223372036854775807",
     "Largest allowed lead of a record timestamp over the broker clock.", 0, INT64_MAX, false},
    {"message.timestamp.before.max.ms", config_type::long_, "9223372036854775807",
     "Largest allowed lag of a record timestamp behind the broker clock.", 0, INT64_MAX, false},
    {"message.timestamp.difference.max.ms", config_type::long_, "9223372036854775807",
     "Deprecated in Kafka 3.6 for the before/after pair.", 0, INT64_MAX, false},
    {"message.timestamp.type", config_type::string, "CreateTime", "CreateTime or LogAppendTime."},
    {"min.cleanable.dirty.ratio", config_type::double_, "0.5",
     "Dirty share of a compacted log that triggers cleaning.", 0, 1},
    {"min.compaction.lag.ms", config_type::long_, "0",
     "Shortest a record stays uncompacted on a compacted topic.", 0, INT64_MAX},
    {"min.insync.replicas", config_type::int_, "1",
     "Replicas that must acknowledge acks=all (one replica always does).", 1, i32max, false},
    {"preallocate", config_type::boolean, "false", "Preallocate segment files.", 0, 0, false},
    {"remote.storage.enable", config_type::boolean, "false", "Offload sealed segments to Iceberg."},
    {"retention.bytes", config_type::long_, "-1", "Bytes kept per partition; -1 = unlimited.", -1,
     INT64_MAX},
    {"retention.ms", config_type::long_, "604800000", "Time data is kept; -1 = forever.", -1,
     INT64_MAX},
    {"segment.bytes", config_type::int_, "1073741824", "Segment file size before a roll.", 14,
     i32max},
    {"segment.index.bytes", config_type::int_, "10485760",
     "Offset index size limit (Floe's sparse indexes are sized by content).", 4, i32max, false},
    {"segment.jitter.ms", config_type::long_, "0", "Random jitter subtracted from segment.ms.", 0,
     INT64_MAX, false},
    {"segment.ms", config_type::long_, "604800000", "Segment age before a roll.", 1, INT64_MAX},
    {"unclean.leader.election.enable", config_type::boolean, "false",
     "Single replica: there is never another leader to elect.", 0, 0, false},
    // Floe's own: how the Iceberg table holds the topic's values (typed tables).
    {"floe.iceberg.mode", config_type::string, "raw",
     "raw (bytes only), schema-id (Confluent wire format) or latest-schema (the subject's "
     "latest schema): values also become typed Iceberg columns."},
    {"floe.iceberg.value-subject", config_type::string, "",
     "Registry subject of the values for latest-schema; empty: <topic>-value."},
    {"floe.iceberg.protobuf-message", config_type::string, "",
     "Protobuf message (full name) that values hold, for latest-schema; empty: the first."},
    {"floe.iceberg.key-mode", config_type::string, "raw",
     "raw (bytes only), schema-id or latest-schema: keys also become typed Iceberg columns "
     "(key_data), as floe.iceberg.mode does for values."},
    {"floe.iceberg.key-subject", config_type::string, "",
     "Registry subject of the keys for key-mode latest-schema; empty: <topic>-key."},
    {"floe.iceberg.partition-spec", config_type::string, "identity(stream_key)",
     "Iceberg partition spec of the topic's table: transforms over Floe's columns, e.g. "
     "day(message_ts), bucket[16](key); a change on a live table is partition evolution."},
    // Floe's own: Parquet Modular Encryption of the topic's data files.
    {"floe.iceberg.encryption", config_type::string, "none",
     "none, uniform (every column and the footer) or columns (floe.iceberg.encryption.columns); "
     "needs floe.encryption.provider on the broker."},
    {"floe.iceberg.encryption.columns", config_type::list, "",
     "Columns encrypted with floe.iceberg.encryption=columns (comma list); name:key-id gives a "
     "column its own key (a keyring id or a KMS key), else it takes the file's key."},
    {"floe.iceberg.encryption.footer", config_type::string, "encrypted",
     "encrypted, or plaintext (signed: readers without keys read the columns in clear)."},
    {"floe.iceberg.encryption.algorithm", config_type::string, "AES_GCM_V1",
     "AES_GCM_V1 or AES_GCM_CTR_V1."},
    {"floe.iceberg.encryption.aad-prefix", config_type::string, "none",
     "none, stored or supplied: bind each file to its table with the table's identifier "
     "(namespace.table) as AAD prefix, kept in the file or supplied by readers."},
};

// floe.iceberg.partition-spec: the syntax, and each term's column among Floe's columns with a
// transform its type takes (the lake checks again against the table's schema). Returns the
// canonical text.
result<std::string> check_partition_spec(std::string_view v) {
    static constexpr std::string_view columns[] = {"stream_key", "segment_id", "message_id", "message_ts",
                                                   "kafka_timestamp", "key", "value", "partition", "offset"};
    auto terms = parse_partition_spec_text(v);
    if (!terms) return fail(errc::invalid_argument, "config floe.iceberg.partition-spec: {}", terms.error().message());
    for (auto& t : *terms) {
        bool known = false;
        for (auto k : columns) known = known || k == t.source;
        if (!known)
            return fail(errc::invalid_argument,
                        "config floe.iceberg.partition-spec: term '{}': '{}' is not one of Floe's columns (stream_key, "
                        "segment_id, message_id, message_ts, kafka_timestamp, key, value, partition, offset); typed "
                        "fields cannot be partition sources yet",
                        t.text, t.source);
        const bool time = t.transform == "year" || t.transform == "month" || t.transform == "day" || t.transform == "hour";
        if (time && t.source != "message_ts" && t.source != "kafka_timestamp")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.partition-spec: term '{}': {} applies to message_ts or kafka_timestamp "
                        "(milliseconds since the epoch), not {}",
                        t.text, t.transform, t.source);
    }
    return partition_spec_text(*terms);
}

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

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(uint8_t(a[i])) != std::tolower(uint8_t(b[i]))) return false;
    return true;
}

result<bool> parse_bool(std::string_view key, std::string_view v) {
    if (iequals(v, "true")) return true;
    if (iequals(v, "false")) return false;
    return fail(errc::invalid_argument, "config {}: '{}' is not a boolean", key, v);
}

result<double> parse_double(std::string_view key, std::string_view v, double lo, double hi) {
    double out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty() || !std::isfinite(out))
        return fail(errc::invalid_argument, "config {}: '{}' is not a number", key, v);
    if (out < lo || out > hi)
        return fail(errc::invalid_argument, "config {}: {} outside [{}, {}]", key, v, lo, hi);
    return out;
}

// Kafka's throttled-replicas validator: empty, "*", or "partition:broker" pairs.
result<void> check_throttled_replicas(std::string_view key, std::string_view v) {
    if (v.empty() || v == "*") return {};
    size_t at = 0;
    while (at <= v.size()) {
        size_t c = std::min(v.find(',', at), v.size());
        auto item = v.substr(at, c - at);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        auto colon = item.find(':');
        auto digits = [](std::string_view d) {
            return !d.empty() && std::all_of(d.begin(), d.end(), [](char x) { return x >= '0' && x <= '9'; });
        };
        if (colon == std::string_view::npos || !digits(item.substr(0, colon))
            || !digits(item.substr(colon + 1)))
            return fail(errc::invalid_argument,
                        "config {}: '{}' must be '*' or a list of partition:broker pairs", key, v);
        at = c + 1;
    }
    return {};
}

// A Kafka release or inter-broker protocol version: 0.8.0, 2.8, 3.0-IV1, 3.7-IV4.
result<void> check_format_version(std::string_view key, std::string_view v) {
    auto bad = [&] {
        return fail(errc::invalid_argument, "config {}: '{}' is not a Kafka version such as 3.0-IV1",
                    key, v);
    };
    auto iv = v.find("-IV");
    auto ver = v.substr(0, iv);
    if (iv != std::string_view::npos) {
        auto n = v.substr(iv + 3);
        if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return bad();
    }
    int parts = 0;
    size_t at = 0;
    while (at <= ver.size()) {
        size_t d = std::min(ver.find('.', at), ver.size());
        auto n = ver.substr(at, d - at);
        if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return bad();
        ++parts;
        at = d + 1;
    }
    if (parts < 2 || parts > 4) return bad();
    return {};
}

// Validates (and normalises) a config Floe stores without acting on it, by its key's type.
result<std::string> check_stored(const topic_config_key& k, std::string_view v) {
    switch (k.type) {
    case config_type::boolean: return std::string(FLOE_TRY(parse_bool(k.name, v)) ? "true" : "false");
    case config_type::int_:
    case config_type::long_: return std::to_string(FLOE_TRY(parse_ranged(k.name, v, k.min, k.max)));
    case config_type::double_:
        FLOE_TRY(parse_double(k.name, v, double(k.min), double(k.max)));
        return std::string(v);
    case config_type::list: FLOE_TRY(check_throttled_replicas(k.name, v)); return std::string(v);
    case config_type::string:
        if (k.name == "message.format.version") FLOE_TRY(check_format_version(k.name, v));
        return std::string(v);
    }
    return std::string(v);
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
    else if (key == "delete.retention.ms")
        cfg.delete_retention_ms = FLOE_TRY(parse_ranged(key, v, 0, INT64_MAX));
    else if (key == "min.compaction.lag.ms")
        cfg.min_compaction_lag_ms = FLOE_TRY(parse_ranged(key, v, 0, INT64_MAX));
    else if (key == "max.compaction.lag.ms")
        cfg.max_compaction_lag_ms = FLOE_TRY(parse_ranged(key, v, 1, INT64_MAX));
    else if (key == "min.cleanable.dirty.ratio")
        cfg.min_cleanable_dirty_ratio = FLOE_TRY(parse_double(key, v, 0, 1));
    else if (key == "cleanup.policy") {
        // A list (Kafka's ValidList): each item delete or compact, at least one.
        std::string norm;
        bool seen_delete = false, seen_compact = false;
        size_t at = 0;
        while (at <= v.size()) {
            size_t c = std::min(v.find(',', at), v.size());
            auto item = v.substr(at, c - at);
            while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
            while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
            bool* seen = item == "delete" ? &seen_delete : item == "compact" ? &seen_compact : nullptr;
            if (!seen)
                return fail(errc::invalid_argument,
                            "config cleanup.policy: invalid value '{}' (a list of delete and "
                            "compact)",
                            v);
            if (!*seen) {
                if (!norm.empty()) norm += ',';
                norm += item;
                *seen = true;
            }
            at = c + 1;
        }
        cfg.cleanup_policy = std::move(norm);
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
    } else if (key == "floe.iceberg.mode") {
        if (v != "raw" && v != "schema-id" && v != "latest-schema")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.mode: '{}' is not raw, schema-id or latest-schema", v);
        cfg.iceberg_mode = std::string(v);
    } else if (key == "floe.iceberg.value-subject") {
        cfg.iceberg_value_subject = std::string(v);
    } else if (key == "floe.iceberg.protobuf-message") {
        cfg.iceberg_protobuf_message = std::string(v);
    } else if (key == "floe.iceberg.key-mode") {
        if (v != "raw" && v != "schema-id" && v != "latest-schema")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.key-mode: '{}' is not raw, schema-id or latest-schema", v);
        cfg.iceberg_key_mode = std::string(v);
    } else if (key == "floe.iceberg.key-subject") {
        cfg.iceberg_key_subject = std::string(v);
    } else if (key == "floe.iceberg.partition-spec") {
        cfg.iceberg_partition_spec = FLOE_TRY(check_partition_spec(v));
    } else if (key == "floe.iceberg.encryption") {
        if (v != "none" && v != "uniform" && v != "columns")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.encryption: '{}' is not none, uniform or columns", v);
        cfg.iceberg_encryption = std::string(v);
    } else if (key == "floe.iceberg.encryption.columns") {
        // A comma list of column names (top-level, or dotted paths of nested fields).
        std::string norm;
        size_t at = 0;
        while (at <= v.size() && !v.empty()) {
            size_t c = std::min(v.find(',', at), v.size());
            auto item = v.substr(at, c - at);
            while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
            while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
            if (item.empty())
                return fail(errc::invalid_argument,
                            "config floe.iceberg.encryption.columns: '{}' has an empty column name", v);
            // "name:key-id" gives the column its own key. The first ':' splits: column names have
            // none, and a KMS key ARN has several.
            if (auto colon = item.find(':'); colon != std::string_view::npos && (colon == 0 || colon + 1 == item.size()))
                return fail(errc::invalid_argument,
                            "config floe.iceberg.encryption.columns: '{}' needs a column name and a key id on "
                            "either side of ':' (value:pii-key)",
                            item);
            if (!norm.empty()) norm += ',';
            norm += item;
            at = c + 1;
        }
        cfg.iceberg_encryption_columns = std::move(norm);
    } else if (key == "floe.iceberg.encryption.footer") {
        if (v != "encrypted" && v != "plaintext")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.encryption.footer: '{}' is not encrypted or plaintext", v);
        cfg.iceberg_encryption_footer = std::string(v);
    } else if (key == "floe.iceberg.encryption.algorithm") {
        if (v != "AES_GCM_V1" && v != "AES_GCM_CTR_V1")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.encryption.algorithm: '{}' is not AES_GCM_V1 or AES_GCM_CTR_V1", v);
        cfg.iceberg_encryption_algorithm = std::string(v);
    } else if (key == "floe.iceberg.encryption.aad-prefix") {
        if (v != "none" && v != "stored" && v != "supplied")
            return fail(errc::invalid_argument,
                        "config floe.iceberg.encryption.aad-prefix: '{}' is not none, stored or supplied", v);
        cfg.iceberg_encryption_aad_prefix = std::string(v);
    } else if (auto* k = find_topic_config_key(key); k && !k->honoured) {
        auto norm = FLOE_TRY(check_stored(*k, v));
        if (norm == k->default_value) {
            if (auto it = cfg.stored.find(k->name); it != cfg.stored.end()) cfg.stored.erase(it);
        }
        else cfg.stored[std::string(k->name)] = std::move(norm);
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

bool topic_config::compacted() const noexcept {
    return cleanup_policy.find("compact") != std::string::npos;
}
bool topic_config::deletes() const noexcept {
    return cleanup_policy.find("delete") != std::string::npos;
}
std::string topic_config::value_subject(std::string_view topic) const {
    return iceberg_value_subject.empty() ? std::string(topic) + "-value" : iceberg_value_subject;
}
std::string topic_config::key_subject(std::string_view topic) const {
    return iceberg_key_subject.empty() ? std::string(topic) + "-key" : iceberg_key_subject;
}

std::vector<std::string> topic_config::encrypted_columns() const {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < iceberg_encryption_columns.size()) {
        size_t c = std::min(iceberg_encryption_columns.find(',', at), iceberg_encryption_columns.size());
        out.push_back(iceberg_encryption_columns.substr(at, c - at));
        at = c + 1;
    }
    return out;
}

result<void> check_topic_capabilities(const topic_config& cfg, const topic_capabilities& caps) {
    if (cfg.encrypted() && !caps.key_provider)
        return fail(errc::invalid_argument,
                    "config floe.iceberg.encryption={}: this broker has no key provider; set "
                    "floe.encryption.provider (keyring or aws-kms) on the broker first",
                    cfg.iceberg_encryption);
    if (cfg.encrypted() && !caps.lake_encrypts)
        return fail(errc::invalid_argument,
                    "config floe.iceberg.encryption={}: this version of Floe does not encrypt the lake's data files "
                    "yet (the Parquet encryption and the key providers are built, the offload is not wired to "
                    "them); refused rather than offloaded in plaintext",
                    cfg.iceberg_encryption);
    return {};
}

std::vector<std::string> encryption_column_key_ids(std::string_view columns) {
    std::vector<std::string> ids;
    size_t at = 0;
    while (at < columns.size()) {
        size_t c = std::min(columns.find(',', at), columns.size());
        auto item = columns.substr(at, c - at);
        if (auto colon = item.find(':'); colon != std::string_view::npos) {
            auto id = item.substr(colon + 1);
            while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
            while (!id.empty() && id.back() == ' ') id.remove_suffix(1);
            if (!id.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
        }
        at = c + 1;
    }
    return ids;
}

result<void> check_config_keys(std::string_view key, std::string_view value, const topic_capabilities& caps) {
    if (key != "floe.iceberg.encryption.columns" || !caps.check_key) return {};
    for (auto& id : encryption_column_key_ids(value)) {
        auto ok = caps.check_key(id);
        if (ok) continue;
        if (ok.error().retryable()) {
            spdlog::warn("config floe.iceberg.encryption.columns: key '{}' could not be checked now ({}); accepted, "
                         "and the offload names it if it is wrong",
                         id, ok.error().message());
            continue;
        }
        return fail(errc::invalid_argument, "config floe.iceberg.encryption.columns: key '{}' cannot be used: {}", id,
                    ok.error().message());
    }
    return {};
}

int64_t topic_config::effective_roll_ms() const noexcept {
    return compacted() ? std::min(segment_ms, max_compaction_lag_ms) : segment_ms;
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
    for (auto& [k, v] : base)
        if (!std::string_view(k).starts_with(broker_only_config_prefix)) FLOE_TRY(apply(cfg, k, v));
    for (auto& [k, v] : overrides) FLOE_TRY(apply(cfg, k, v));
    if (cfg.iceberg_encryption == "columns" && cfg.iceberg_encryption_columns.empty())
        return fail(errc::invalid_argument,
                    "config floe.iceberg.encryption=columns needs floe.iceberg.encryption.columns (e.g. "
                    "key,value,headers)");
    if (cfg.min_compaction_lag_ms > cfg.max_compaction_lag_ms)
        return fail(errc::invalid_argument,
                    "config min.compaction.lag.ms: {} is greater than max.compaction.lag.ms {}",
                    cfg.min_compaction_lag_ms, cfg.max_compaction_lag_ms);
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
    if (key == "delete.retention.ms") return n(c.delete_retention_ms);
    if (key == "min.compaction.lag.ms") return n(c.min_compaction_lag_ms);
    if (key == "max.compaction.lag.ms") return n(c.max_compaction_lag_ms);
    if (key == "min.cleanable.dirty.ratio") {
        auto t = fmt::format("{}", c.min_cleanable_dirty_ratio);
        return t;
    }
    if (key == "compression.type") return c.compression_type;
    if (key == "floe.iceberg.mode") return c.iceberg_mode;
    if (key == "floe.iceberg.value-subject") return c.iceberg_value_subject;
    if (key == "floe.iceberg.protobuf-message") return c.iceberg_protobuf_message;
    if (key == "floe.iceberg.key-mode") return c.iceberg_key_mode;
    if (key == "floe.iceberg.key-subject") return c.iceberg_key_subject;
    if (key == "floe.iceberg.partition-spec") return c.iceberg_partition_spec;
    if (key == "floe.iceberg.encryption") return c.iceberg_encryption;
    if (key == "floe.iceberg.encryption.columns") return c.iceberg_encryption_columns;
    if (key == "floe.iceberg.encryption.footer") return c.iceberg_encryption_footer;
    if (key == "floe.iceberg.encryption.algorithm") return c.iceberg_encryption_algorithm;
    if (key == "floe.iceberg.encryption.aad-prefix") return c.iceberg_encryption_aad_prefix;

    if (key == "message.timestamp.type")
        return std::string(c.message_timestamp_type == timestamp_type::log_append_time
                               ? "LogAppendTime"
                               : "CreateTime");
    if (auto* k = find_topic_config_key(key); k && !k->honoured) {
        auto it = c.stored.find(key);
        return it != c.stored.end() ? it->second : std::string(k->default_value);
    }
    return std::nullopt;
}

} // namespace floe::log
