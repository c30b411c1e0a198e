#pragma once
// librdkafka helpers shared by the benchmark clients (bench/e2e, bench/lookups): a base client
// configuration and topic creation with per-topic configs. Failures come back as a message for
// the caller to report; nothing here exits.

#include <librdkafka/rdkafka.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace floe::bench {

/// A client configuration for `brokers` that logs errors only; nullptr with `why` set when a
/// setting is refused.
inline rd_kafka_conf_t* kafka_conf(const std::string& brokers, std::string& why) {
    char err[512];
    auto* conf = rd_kafka_conf_new();
    for (auto [k, v] : {std::pair<const char*, const char*>{"bootstrap.servers", brokers.c_str()}, {"log_level", "3"}})
        if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
            why = std::string("config ") + k + ": " + err;
            rd_kafka_conf_destroy(conf);
            return nullptr;
        }
    // Extra client settings from $FLOE_BENCH_RDKAFKA ("key=value;key=value"), e.g. to run a
    // benchmark over SASL_SSL: security.protocol=SASL_SSL;sasl.mechanisms=SCRAM-SHA-512;...
    if (const char* extra = std::getenv("FLOE_BENCH_RDKAFKA")) {
        std::string rest = extra;
        while (!rest.empty()) {
            auto semi = rest.find(';');
            auto kv = rest.substr(0, semi);
            rest = semi == std::string::npos ? std::string() : rest.substr(semi + 1);
            auto eq = kv.find('=');
            if (eq == std::string::npos) continue;
            auto k = kv.substr(0, eq), v = kv.substr(eq + 1);
            if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
                why = "FLOE_BENCH_RDKAFKA " + k + ": " + err;
                rd_kafka_conf_destroy(conf);
                return nullptr;
            }
        }
    }
    return conf;
}

/// Creates `topic` with `partitions` and `configs` through the admin API; "" on success (and,
/// with `exists_ok`, when it already exists), else why not.
inline std::string create_topic(const std::string& brokers, const std::string& topic, int partitions,
                                const std::vector<std::pair<std::string, std::string>>& configs, bool exists_ok) {
    std::string why;
    auto* conf = kafka_conf(brokers, why);
    if (!conf) return why;
    char err[512];
    auto* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) return err;
    auto* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
    if (!nt) {
        rd_kafka_destroy(rk);
        return err;
    }
    for (auto& [k, v] : configs) rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str());
    auto* q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
    if (auto* ev = rd_kafka_queue_poll(q, 15000)) {
        size_t n = 0;
        const auto** topics = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        for (size_t i = 0; i < n && why.empty(); ++i) {
            auto e = rd_kafka_topic_result_error(topics[i]);
            if (e && !(exists_ok && e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS))
                why = "CreateTopics " + topic + ": " + rd_kafka_err2str(e);
        }
        rd_kafka_event_destroy(ev);
    } else {
        why = "CreateTopics " + topic + " timed out";
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_destroy(rk);
    return why;
}

} // namespace floe::bench
