// request_handler's admin APIs (CreatePartitions, DeleteRecords, OffsetDelete, DescribeLogDirs,
// ElectLeaders, DescribeProducers) and the topic/broker config views behind DescribeConfigs and
// AlterConfigs. Same threading as handlers.cc: any io thread, state in the thread-safe
// local_tier / group_coordinator / offset_store.

#include "kafka/handlers.h"
#include "kafka/messages_admin.h"
#include "log/remote_tier.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <sys/statvfs.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

namespace floe::kafka {

namespace {

// Kafka ConfigSource values.
constexpr int8_t k_source_topic = 1;           // DYNAMIC_TOPIC_CONFIG
constexpr int8_t k_source_dynamic_broker = 2;  // DYNAMIC_BROKER_CONFIG
constexpr int8_t k_source_dynamic_default = 3; // DYNAMIC_DEFAULT_BROKER_CONFIG
constexpr int8_t k_source_static_broker = 4;   // STATIC_BROKER_CONFIG
constexpr int8_t k_source_default = 5;         // DEFAULT_CONFIG

constexpr int32_t k_max_partitions = 100000; // as log::log_manager::create_topic

int8_t kafka_config_type(log::config_type t) {
    switch (t) {
    case log::config_type::boolean:
        return 1;
    case log::config_type::string:
        return 2;
    case log::config_type::int_:
        return 3;
    case log::config_type::long_:
        return 5;
    case log::config_type::double_:
        return 6;
    case log::config_type::list:
        return 7;
    }
    return 0;
}

/// Kafka's broker-level synonym of each topic config (the broker setting that is the topic's
/// default). On a single broker these are the dynamic broker configs AlterConfigs may change.
struct broker_synonym {
    std::string_view broker;
    std::string_view topic;
};
constexpr broker_synonym k_synonyms[] = {
    {"log.cleanup.policy", "cleanup.policy"},
    {"compression.type", "compression.type"},
    {"log.cleaner.delete.retention.ms", "delete.retention.ms"},
    {"log.segment.delete.delay.ms", "file.delete.delay.ms"},
    {"log.flush.interval.messages", "flush.messages"},
    {"log.flush.interval.ms", "flush.ms"},
    {"log.index.interval.bytes", "index.interval.bytes"},
    {"log.local.retention.bytes", "local.retention.bytes"},
    {"log.local.retention.ms", "local.retention.ms"},
    {"log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms"},
    {"message.max.bytes", "max.message.bytes"},
    {"log.message.downconversion.enable", "message.downconversion.enable"},
    {"log.message.format.version", "message.format.version"},
    {"log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms"},
    {"log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms"},
    {"log.message.timestamp.difference.max.ms", "message.timestamp.difference.max.ms"},
    {"log.message.timestamp.type", "message.timestamp.type"},
    {"log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio"},
    {"log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms"},
    {"min.insync.replicas", "min.insync.replicas"},
    {"log.preallocate", "preallocate"},
    {"log.retention.bytes", "retention.bytes"},
    {"log.retention.ms", "retention.ms"},
    {"log.segment.bytes", "segment.bytes"},
    {"log.index.size.max.bytes", "segment.index.bytes"},
    {"log.roll.jitter.ms", "segment.jitter.ms"},
    {"log.roll.ms", "segment.ms"},
    {"unclean.leader.election.enable", "unclean.leader.election.enable"},
};

/// Kafka's dynamic broker configs (update mode per-broker or cluster-wide) that are not topic
/// defaults. Floe has no use for them (its thread pools, TLS and SASL are set in floe.yaml), but
/// tools and scripts set them on any Kafka broker: AlterConfigs stores them (under
/// log::broker_only_config_prefix, beside the dynamic topic defaults) and DescribeConfigs reports
/// them, without effect. Password types are stored and never described in clear.
struct kafka_broker_config {
    std::string_view name;
    int8_t type; ///< ConfigType: 1 boolean, 2 string, 3 int, 4 short, 5 long, 6 double, 7 list, 9 password
    std::optional<std::string_view> default_value;
};
constexpr kafka_broker_config k_kafka_broker_configs[] = {
    {"background.threads", 3, "10"},
    {"num.io.threads", 3, "8"},
    {"num.network.threads", 3, "3"},
    {"num.replica.fetchers", 3, "1"},
    {"num.recovery.threads.per.data.dir", 3, "2"},
    {"log.cleaner.threads", 3, "1"},
    {"log.cleaner.backoff.ms", 5, "15000"},
    {"log.cleaner.dedupe.buffer.size", 5, "134217728"},
    {"log.cleaner.io.buffer.load.factor", 6, "0.9"},
    {"log.cleaner.io.buffer.size", 3, "524288"},
    {"log.cleaner.io.max.bytes.per.second", 6, "1.7976931348623157E308"},
    {"max.connections", 3, "2147483647"},
    {"max.connections.per.ip", 3, "2147483647"},
    {"max.connections.per.ip.overrides", 2, ""},
    {"max.connection.creation.rate", 3, "2147483647"},
    {"metric.reporters", 7, ""},
    {"leader.replication.throttled.rate", 5, "9223372036854775807"},
    {"follower.replication.throttled.rate", 5, "9223372036854775807"},
    {"replica.alter.log.dirs.io.max.bytes.per.second", 5, "9223372036854775807"},
    {"producer.id.expiration.ms", 3, "86400000"},
    {"transaction.partition.verification.enable", 1, "true"},
    {"remote.log.manager.copy.max.bytes.per.second", 5, "9223372036854775807"},
    {"remote.log.manager.fetch.max.bytes.per.second", 5, "9223372036854775807"},
    {"remote.log.index.file.cache.total.size.bytes", 5, "1073741824"},
    {"sasl.enabled.mechanisms", 7, "GSSAPI"},
    {"sasl.jaas.config", 9, std::nullopt},
    {"sasl.kerberos.kinit.cmd", 2, "/usr/bin/kinit"},
    {"sasl.kerberos.min.time.before.relogin", 5, "60000"},
    {"sasl.kerberos.principal.to.local.rules", 7, "DEFAULT"},
    {"sasl.kerberos.service.name", 2, std::nullopt},
    {"sasl.kerberos.ticket.renew.jitter", 6, "0.05"},
    {"sasl.kerberos.ticket.renew.window.factor", 6, "0.8"},
    {"sasl.login.refresh.buffer.seconds", 4, "300"},
    {"sasl.login.refresh.min.period.seconds", 4, "60"},
    {"sasl.login.refresh.window.factor", 6, "0.8"},
    {"sasl.login.refresh.window.jitter", 6, "0.05"},
    {"ssl.cipher.suites", 7, ""},
    {"ssl.client.auth", 2, "none"},
    {"ssl.enabled.protocols", 7, "TLSv1.2,TLSv1.3"},
    {"ssl.endpoint.identification.algorithm", 2, "https"},
    {"ssl.engine.factory.class", 2, std::nullopt},
    {"ssl.key.password", 9, std::nullopt},
    {"ssl.keymanager.algorithm", 2, "SunX509"},
    {"ssl.keystore.certificate.chain", 9, std::nullopt},
    {"ssl.keystore.key", 9, std::nullopt},
    {"ssl.keystore.location", 2, std::nullopt},
    {"ssl.keystore.password", 9, std::nullopt},
    {"ssl.keystore.type", 2, "JKS"},
    {"ssl.protocol", 2, "TLSv1.3"},
    {"ssl.secure.random.implementation", 2, std::nullopt},
    {"ssl.trustmanager.algorithm", 2, "PKIX"},
    {"ssl.truststore.certificates", 9, std::nullopt},
    {"ssl.truststore.location", 2, std::nullopt},
    {"ssl.truststore.password", 9, std::nullopt},
    {"ssl.truststore.type", 2, "JKS"},
};

const kafka_broker_config* kafka_broker_config_of(std::string_view name) {
    for (auto& c : k_kafka_broker_configs)
        if (c.name == name) return &c;
    return nullptr;
}

/// A value of a Kafka broker config checked by its type, as Kafka's ConfigDef parses it.
result<void> check_kafka_broker_value(const kafka_broker_config& c, std::string_view v) {
    auto bad = [&](std::string_view what) {
        return fail(errc::invalid_argument, "broker config {}: '{}' is not {}", c.name, v, what);
    };
    switch (c.type) {
    case 1:
        if (v != "true" && v != "false") return bad("true or false");
        break;
    case 3:
    case 4:
    case 5: {
        int64_t x = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || p != v.data() + v.size()) return bad("an integer");
        if (c.type == 3 && (x < INT32_MIN || x > INT32_MAX)) return bad("an int");
        if (c.type == 4 && (x < INT16_MIN || x > INT16_MAX)) return bad("a short");
        break;
    }
    case 6: {
        std::string t(v);
        char* end = nullptr;
        (void)std::strtod(t.c_str(), &end);
        if (t.empty() || end != t.c_str() + t.size()) return bad("a number");
        break;
    }
    default:
        break;
    }
    return {};
}

const broker_synonym* synonym_of_topic(std::string_view topic_key) {
    for (auto& s : k_synonyms)
        if (s.topic == topic_key) return &s;
    return nullptr;
}
const broker_synonym* synonym_of_broker(std::string_view broker_key) {
    for (auto& s : k_synonyms)
        if (s.broker == broker_key) return &s;
    return nullptr;
}

bool wanted(const std::vector<std::string_view>* keys, std::string_view name) {
    return !keys || std::find(keys->begin(), keys->end(), name) != keys->end();
}

/// The topic default of `key` and where it comes from: dynamic broker default, static
/// (floe.topic-defaults.*) or Kafka's default.
struct default_value {
    std::string value;
    int8_t source = k_source_default;
};
default_value topic_default(const log::topic_config_key& k, const log::config_map& dyn,
                            const log::config_map& stat, int8_t dynamic_source) {
    if (auto it = dyn.find(k.name); it != dyn.end()) return {it->second, dynamic_source};
    if (auto it = stat.find(k.name); it != stat.end()) return {it->second, k_source_static_broker};
    return {std::string(k.default_value), k_source_default};
}

/// Topics a consumer group's members subscribe to (ConsumerProtocolSubscription: int16
/// version, then an array of topic names; the rest is not needed).
std::set<std::string> subscribed_topics(const describe_groups_response::group& g) {
    std::set<std::string> out;
    if (g.protocol_type != "consumer") return out;
    for (auto& m : g.members) {
        kreader r(m.metadata, false);
        if (!r.i16()) continue;
        auto n = r.array_len(2);
        if (!n) continue;
        for (int32_t i = 0; i < *n; ++i) {
            auto t = r.str();
            if (!t) break;
            out.emplace(*t);
        }
    }
    return out;
}

template<typename Resp>
void respond_admin(byte_buffer& out, const request_header& h, const Resp& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}

#define DECODE_ADMIN_OR_CLOSE(var, fn)                                                             \
    kreader _rd(body, h.flexible);                                                                 \
    auto _dec = fn(_rd, h.api_version);                                                            \
    if (!_dec) {                                                                                   \
        spdlog::debug("malformed {} v{}: {}", api_name(h.api_key), h.api_version, _dec.error());   \
        return false;                                                                              \
    }                                                                                              \
    auto& var = *_dec;

} // namespace

bool request_handler::dispatch_admin(const connection_info& c, const request_header& h, bytes_view b, byte_buffer& out) {
    switch (api_key(h.api_key)) {
    case api_key::create_partitions:
        return create_partitions(c, h, b, out);
    case api_key::delete_records:
        return delete_records(c, h, b, out);
    case api_key::offset_delete:
        return offset_delete(c, h, b, out);
    case api_key::describe_log_dirs:
        return describe_log_dirs(c, h, b, out);
    case api_key::elect_leaders:
        return elect_leaders(c, h, b, out);
    case api_key::describe_producers:
        return describe_producers(c, h, b, out);
    default:
        return false;
    }
}

// ---------------- CreatePartitions ----------------

bool request_handler::create_partitions(const connection_info& c, const request_header& h, bytes_view body,
                                        byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_create_partitions);
    create_partitions_response resp;
    std::map<std::string_view, int> seen;
    for (auto& t : req.topics)
        ++seen[t.name];
    for (auto& t : req.topics) {
        auto& rr = resp.results.emplace_back();
        rr.name = std::string(t.name);
        auto error = [&](kerr code, std::string msg) {
            rr.error_code = int16_t(code);
            rr.error_message = std::move(msg);
        };
        if (seen[t.name] > 1) {
            error(kerr::invalid_request, fmt::format("topic {} appears more than once", t.name));
            continue;
        }
        if (!allowed(c, acl_operation::alter, acl_resource::topic, t.name)) {
            error(kerr::topic_authorization_failed, "Topic authorization failed.");
            continue;
        }
        auto info = _logs.topic(t.name);
        if (!info) {
            error(kerr::unknown_topic_or_partition, fmt::format("topic {} does not exist", t.name));
            continue;
        }
        if (t.count == info->partitions) {
            error(kerr::invalid_partitions,
                  fmt::format("topic {} already has {} partitions", t.name, info->partitions));
            continue;
        }
        if (t.count < info->partitions) {
            error(kerr::invalid_partitions,
                  fmt::format("topic {} has {} partitions, more than the requested {}; partitions "
                              "cannot be removed",
                              t.name, info->partitions, t.count));
            continue;
        }
        if (t.count > k_max_partitions) {
            error(kerr::invalid_partitions,
                  fmt::format("{} partitions is more than Floe allows ({})", t.count,
                              k_max_partitions));
            continue;
        }
        if (t.has_assignments && t.assignment_count != t.count - info->partitions) {
            error(kerr::invalid_replica_assignment,
                  fmt::format("{} assignments for {} new partitions", t.assignment_count,
                              t.count - info->partitions));
            continue;
        }
        if (req.validate_only) continue;
        auto grown = _logs.create_partitions(t.name, t.count);
        if (!grown) {
            error(grown.error().code() == errc::not_found ? kerr::unknown_topic_or_partition
                  : grown.error().code() == errc::invalid_argument ? kerr::invalid_partitions
                                                                   : kerr::kafka_storage_error,
                  grown.error().message());
            continue;
        }
        spdlog::info("topic {}: {} -> {} partitions", t.name, info->partitions, grown->partitions);
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- DeleteRecords ----------------

bool request_handler::delete_records(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_delete_records);
    delete_records_response resp;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = std::string(t.name);
        auto info = _logs.topic(t.name);
        const bool may_delete = allowed(c, acl_operation::remove, acl_resource::topic, t.name);
        for (auto& p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p.index;
            if (!may_delete) {
                rp.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            auto plog = info ? _logs.partition(t.name, p.index) : nullptr;
            if (!plog) {
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
                continue;
            }
            auto hw = plog->offsets().high_watermark();
            int64_t target = p.offset == -1 ? hw : p.offset;
            if (target < 0 || target > hw) {
                rp.error_code = int16_t(kerr::offset_out_of_range);
                continue;
            }
            auto moved = plog->delete_records_before(kafka_offset(target));
            if (!moved) {
                rp.error_code = moved.error().code() == errc::out_of_range
                                    ? int16_t(kerr::offset_out_of_range)
                                    : int16_t(kerr::kafka_storage_error);
                spdlog::warn("DeleteRecords {}-{} at {}: {}", t.name, p.index, target,
                             moved.error().message());
                continue;
            }
            // The low watermark is the partition's log start across tiers: the remote start (the
            // remote tier hides what lies below the new floor) when older data lives there.
            rp.low_watermark = (*moved)();
            if (_opts.remote && info->config.remote_storage_enable)
                if (auto rs = earliest_remote(info->name, p.index))
                    rp.low_watermark = std::min(rp.low_watermark, *rs);
            rp.low_watermark = std::max(rp.low_watermark, plog->records_start()());
        }
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- OffsetDelete ----------------

bool request_handler::offset_delete(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_offset_delete);
    offset_delete_response resp;
    if (!allowed(c, acl_operation::remove, acl_resource::group, req.group_id)) {
        resp.error_code = int16_t(kerr::group_authorization_failed);
        respond_admin(out, h, resp);
        return true;
    }
    if (!coordinates(req.group_id)) {
        resp.error_code = int16_t(kerr::not_coordinator);
        respond_admin(out, h, resp);
        return true;
    }
    auto g = _groups.describe(req.group_id);
    bool live = g.error_code == 0 && g.state != "Dead" && g.state != "Empty";
    if (!live && !_groups.offsets().has_group(req.group_id)) {
        resp.error_code = int16_t(kerr::group_id_not_found);
        respond_admin(out, h, resp);
        return true;
    }
    if (live && !g.protocol_type.empty() && g.protocol_type != "consumer") {
        resp.error_code = int16_t(kerr::non_empty_group);
        respond_admin(out, h, resp);
        return true;
    }
    auto subscribed = live ? subscribed_topics(g) : std::set<std::string>{};
    std::vector<offset_store::key> doomed;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = std::string(t.name);
        const bool may_read = allowed(c, acl_operation::read, acl_resource::topic, t.name);
        for (auto p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p;
            if (!may_read)
                rp.error_code = int16_t(kerr::topic_authorization_failed);
            else if (!_logs.partition(t.name, p))
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
            else if (subscribed.contains(rt.name))
                rp.error_code = int16_t(kerr::group_subscribed_to_topic);
            else
                doomed.push_back({rt.name, p});
        }
    }
    if (auto d = _groups.offsets().delete_offsets(req.group_id, doomed); !d) {
        spdlog::error("OffsetDelete for group {}: {}", req.group_id, d.error().message());
        for (auto& t : resp.topics)
            for (auto& p : t.partitions)
                if (p.error_code == 0) p.error_code = int16_t(kerr::coordinator_not_available);
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- DescribeLogDirs ----------------

bool request_handler::describe_log_dirs(const connection_info& c, const request_header& h, bytes_view body,
                                        byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_describe_log_dirs);
    describe_log_dirs_response resp;
    if (!allowed_on_cluster(c, acl_operation::describe)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed); // v3+; older: no directories
        respond_admin(out, h, resp);
        return true;
    }
    auto& dir = resp.results.emplace_back();
    auto root = _logs.log_dir();
    std::error_code ec;
    auto abs = std::filesystem::absolute(root, ec);
    dir.path = (ec ? root : abs).string();
    if (struct statvfs st; ::statvfs(root.c_str(), &st) == 0) {
        dir.total_bytes = int64_t(st.f_blocks) * int64_t(st.f_frsize);
        dir.usable_bytes = int64_t(st.f_bavail) * int64_t(st.f_frsize);
    }
    auto describe = [&](const std::string& name, std::span<const int32_t> parts) {
        describe_log_dirs_response::topic rt;
        rt.name = name;
        for (auto p : parts) {
            auto plog = _logs.partition(name, p);
            if (!plog) continue; // Kafka leaves out partitions it does not host
            int64_t size = 0;
            for (auto& s : plog->segments())
                size += int64_t(s.size_bytes);
            rt.partitions.push_back({p, size, 0, false});
        }
        if (!rt.partitions.empty()) dir.topics.push_back(std::move(rt));
    };
    if (req.all_topics) {
        for (auto& t : _logs.topics()) {
            std::vector<int32_t> parts(size_t(t.partitions));
            for (int32_t i = 0; i < t.partitions; ++i)
                parts[size_t(i)] = i;
            describe(t.name, parts);
        }
    } else {
        for (auto& t : req.topics)
            describe(std::string(t.name), t.partitions);
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- ElectLeaders ----------------

bool request_handler::elect_leaders(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_elect_leaders);
    elect_leaders_response resp;
    if (!allowed_on_cluster(c, acl_operation::alter)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed);
        respond_admin(out, h, resp);
        return true;
    }
    if (req.election_type != 0 && req.election_type != 1) {
        resp.error_code = int16_t(kerr::invalid_request);
        respond_admin(out, h, resp);
        return true;
    }
    // One replica per partition: its leader is always the preferred (and only) replica, so no
    // election is ever needed. With a null partition list Kafka answers only for partitions
    // where an election happened: none.
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = std::string(t.name);
        for (auto p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p;
            if (!_logs.partition(t.name, p)) {
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
                rp.error_message = fmt::format("{}-{} does not exist", t.name, p);
            } else {
                rp.error_code = int16_t(kerr::election_not_needed);
                rp.error_message = "single replica: the leader is already the preferred replica";
            }
        }
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- DescribeProducers ----------------

bool request_handler::describe_producers(const connection_info& c, const request_header& h, bytes_view body,
                                         byte_buffer& out) {
    DECODE_ADMIN_OR_CLOSE(req, decode_describe_producers);
    describe_producers_response resp;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = std::string(t.name);
        const bool may_read = allowed(c, acl_operation::read, acl_resource::topic, t.name);
        for (auto p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p;
            if (!may_read) {
                rp.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            auto plog = _logs.partition(t.name, p);
            if (!plog) {
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
                continue;
            }
            auto open_txns = plog->open_transactions(); // producer id -> first offset
            for (auto& st : plog->producers()) {
                auto txn = open_txns.find(st.producer_id);
                rp.producers.push_back({st.producer_id, st.epoch, st.last_seq(), st.last_timestamp(), -1,
                                        txn == open_txns.end() ? -1 : txn->second});
            }
        }
    }
    respond_admin(out, h, resp);
    return true;
}

// ---------------- Configs ----------------

std::vector<config_entry_out> request_handler::describe_topic_configs(
    const log::topic_info& t, const std::vector<std::string_view>* keys, bool docs, bool synonyms) {
    std::vector<config_entry_out> out;
    const auto& stat = _logs.topic_defaults();
    const auto dyn = _logs.dynamic_topic_defaults();
    for (auto& k : log::topic_config_keys()) {
        if (!wanted(keys, k.name)) continue;
        config_entry_out e;
        e.name = std::string(k.name);
        e.value = log::topic_config_value(t.config, k.name);
        auto def = topic_default(k, dyn, stat, k_source_dynamic_default);
        auto ov = t.overrides.find(k.name);
        e.source = ov != t.overrides.end() ? k_source_topic : def.source;
        e.is_default = e.source == k_source_default;
        e.config_type = kafka_config_type(k.type);
        if (docs) e.documentation = std::string(k.doc);
        if (synonyms) {
            // Kafka's order: the topic override, then the broker settings it would fall back to.
            if (ov != t.overrides.end()) e.synonyms.push_back({e.name, ov->second, k_source_topic});
            auto* syn = synonym_of_topic(k.name);
            std::string bname(syn ? syn->broker : k.name);
            if (auto it = dyn.find(k.name); it != dyn.end())
                e.synonyms.push_back({bname, it->second, k_source_dynamic_default});
            if (auto it = stat.find(k.name); it != stat.end())
                e.synonyms.push_back({bname, it->second, k_source_static_broker});
            e.synonyms.push_back({bname, std::string(k.default_value), k_source_default});
        }
        out.push_back(std::move(e));
    }
    return out;
}

void request_handler::describe_broker_configs(const describe_configs_request::resource& r,
                                              bool docs, bool synonyms,
                                              describe_configs_response::result_entry& rr) {
    if (!r.name.empty() && r.name != std::to_string(_opts.node_id)) {
        rr.error_code = int16_t(kerr::invalid_request);
        rr.error_message = fmt::format("broker {} is not this broker ({})", r.name, _opts.node_id);
        return;
    }
    const std::vector<std::string_view>* keys = r.all_keys ? nullptr : &r.keys;
    // Per-broker and cluster-wide dynamic settings are one set on a single broker; it is
    // reported as the kind the client asked about.
    const int8_t dyn_source = r.name.empty() ? k_source_dynamic_default : k_source_dynamic_broker;
    const auto& stat = _logs.topic_defaults();
    const auto dyn = _logs.dynamic_topic_defaults();
    // Read-only settings (fixed at start-up, from floe.yaml).
    auto fixed = [&](std::string_view name, std::string value, int8_t type) {
        if (!wanted(keys, name)) return;
        config_entry_out e;
        e.name = std::string(name);
        e.value = std::move(value);
        e.read_only = true;
        e.source = k_source_static_broker;
        e.is_default = false;
        e.config_type = type;
        if (synonyms) e.synonyms.push_back({e.name, e.value, k_source_static_broker});
        rr.configs.push_back(std::move(e));
    };
    auto node = std::to_string(_opts.node_id);
    auto listener = fmt::format("PLAINTEXT://{}", _opts.listen);
    fixed("broker.id", node, 3);
    fixed("node.id", node, 3);
    fixed("listeners", listener, 7);
    fixed("advertised.listeners", fmt::format("PLAINTEXT://{}:{}", _host, _port), 7);
    fixed("log.dirs", _logs.log_dir().string(), 2);
    fixed("num.partitions", std::to_string(_opts.default_partitions), 3);
    fixed("auto.create.topics.enable", _opts.auto_create_topics ? "true" : "false", 1);
    fixed("default.replication.factor", "1", 3);
    fixed("offsets.topic.replication.factor", "1", 4);
    fixed("transaction.state.log.replication.factor", "1", 4);
    fixed("socket.request.max.bytes", std::to_string(_opts.max_request_bytes), 3);
    fixed("remote.log.storage.system.enable", _opts.remote ? "true" : "false", 1);
    // Topic defaults under their broker names: dynamic (AlterConfigs may change them).
    for (auto& s : k_synonyms) {
        if (!wanted(keys, s.broker)) continue;
        auto* k = log::find_topic_config_key(s.topic);
        if (!k) continue;
        auto def = topic_default(*k, dyn, stat, dyn_source);
        config_entry_out e;
        e.name = std::string(s.broker);
        e.value = def.value;
        e.source = def.source;
        e.is_default = def.source == k_source_default;
        e.config_type = kafka_config_type(k->type);
        if (docs) e.documentation = std::string(k->doc);
        if (synonyms) {
            if (auto it = dyn.find(k->name); it != dyn.end())
                e.synonyms.push_back({e.name, it->second, dyn_source});
            if (auto it = stat.find(k->name); it != stat.end())
                e.synonyms.push_back({e.name, it->second, k_source_static_broker});
            e.synonyms.push_back({e.name, std::string(k->default_value), k_source_default});
        }
        rr.configs.push_back(std::move(e));
    }
    // Kafka's other dynamic broker configs: stored, without effect on Floe.
    for (auto& c : k_kafka_broker_configs) {
        if (!wanted(keys, c.name)) continue;
        config_entry_out e;
        e.name = std::string(c.name);
        e.config_type = c.type == 4 ? 3 : c.type;
        e.is_sensitive = c.type == 9;
        auto it = dyn.find(fmt::format("{}{}", log::broker_only_config_prefix, c.name));
        if (it != dyn.end()) {
            e.source = dyn_source;
            e.is_default = false;
            if (!e.is_sensitive) e.value = it->second;
        } else if (c.default_value && !e.is_sensitive) {
            e.value = std::string(*c.default_value);
        }
        if (docs) e.documentation = "Kafka broker config, stored for tools; no effect on Floe (see floe.yaml).";
        if (synonyms && it != dyn.end()) e.synonyms.push_back({e.name, e.value, dyn_source});
        rr.configs.push_back(std::move(e));
    }
}

void request_handler::alter_broker_configs(const alter_configs_request::resource& r,
                                           bool incremental, bool validate_only,
                                           alter_configs_response::resource& rr) {
    auto error = [&](kerr code, std::string msg) {
        rr.error_code = int16_t(code);
        rr.error_message = std::move(msg);
    };
    if (!r.name.empty() && r.name != std::to_string(_opts.node_id)) {
        error(kerr::invalid_request,
              fmt::format("broker {} is not this broker ({})", r.name, _opts.node_id));
        return;
    }
    // AlterConfigs replaces the whole dynamic set; IncrementalAlterConfigs edits it.
    log::config_map next = incremental ? _logs.dynamic_topic_defaults() : log::config_map{};
    for (auto& c : r.configs) {
        auto* syn = synonym_of_broker(c.name);
        if (auto* kc = syn ? nullptr : kafka_broker_config_of(c.name)) {
            auto key = fmt::format("{}{}", log::broker_only_config_prefix, c.name);
            const bool list = kc->type == 7;
            if (incremental && (c.op == 1 || !c.value)) { // DELETE
                next.erase(key);
                continue;
            }
            if (!incremental && !c.value) {
                next.erase(key);
                continue;
            }
            if (incremental && (c.op == 2 || c.op == 3) && !list) {
                error(kerr::invalid_config,
                      fmt::format("broker config {} is not a list: APPEND/SUBTRACT do not apply", c.name));
                return;
            }
            if (incremental && c.op > 3) {
                error(kerr::invalid_request, fmt::format("unknown config operation {}", c.op));
                return;
            }
            std::string value(*c.value);
            if (incremental && (c.op == 2 || c.op == 3)) { // APPEND / SUBTRACT on a list
                std::vector<std::string> items;
                auto cur = next.find(key);
                std::string_view base = cur != next.end() ? std::string_view(cur->second)
                                                          : kc->default_value.value_or("");
                auto split = [](std::string_view v, std::vector<std::string>& into) {
                    size_t at = 0;
                    while (at < v.size()) {
                        size_t e = std::min(v.find(',', at), v.size());
                        if (e > at) into.emplace_back(v.substr(at, e - at));
                        at = e + 1;
                    }
                };
                split(base, items);
                std::vector<std::string> change;
                split(value, change);
                for (auto& x : change) {
                    auto f = std::find(items.begin(), items.end(), x);
                    if (c.op == 2 && f == items.end()) items.push_back(x);
                    if (c.op == 3 && f != items.end()) items.erase(f);
                }
                value = fmt::format("{}", fmt::join(items, ","));
            }
            if (auto ok = check_kafka_broker_value(*kc, value); !ok) {
                error(kerr::invalid_config, ok.error().message());
                return;
            }
            next[key] = std::move(value);
            continue;
        }
        if (!syn) {
            static constexpr std::string_view read_only[] = {
                "broker.id",
                "node.id",
                "listeners",
                "advertised.listeners",
                "log.dirs",
                "num.partitions",
                "auto.create.topics.enable",
                "default.replication.factor",
                "offsets.topic.replication.factor",
                "transaction.state.log.replication.factor",
                "socket.request.max.bytes",
                "remote.log.storage.system.enable"};
            bool ro = std::find(std::begin(read_only), std::end(read_only), c.name)
                      != std::end(read_only);
            error(
                kerr::invalid_config,
                ro ? fmt::format(
                    "broker config {} cannot be changed at run time (set it in floe.yaml)", c.name)
                   : fmt::format("unknown or read-only broker config '{}'", c.name));
            return;
        }
        auto key = std::string(syn->topic);
        if (incremental && c.op == 1) { // DELETE: back to the static / Kafka default
            next.erase(key);
            continue;
        }
        if (incremental && (c.op == 2 || c.op == 3)) {
            error(kerr::invalid_config,
                  fmt::format("broker config {} is not a list: APPEND/SUBTRACT do not apply",
                              c.name));
            return;
        }
        if (incremental && c.op != 0) {
            error(kerr::invalid_request, fmt::format("unknown config operation {}", c.op));
            return;
        }
        if (!c.value) { // a null value in AlterConfigs: remove
            next.erase(key);
            continue;
        }
        if (auto ok = log::validate_topic_config(key, *c.value); !ok) {
            error(kerr::invalid_config, fmt::format("{}: {}", c.name, ok.error().message()));
            return;
        }
        next[key] = std::string(*c.value);
    }
    if (auto s = _logs.set_dynamic_topic_defaults(next, validate_only); !s) {
        error(s.error().code() == errc::io_error ? kerr::kafka_storage_error : kerr::invalid_config,
              s.error().message());
        return;
    }
    if (!validate_only) spdlog::info("dynamic broker configs: {} set", next.size());
}

} // namespace floe::kafka
