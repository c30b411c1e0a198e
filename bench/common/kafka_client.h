#pragma once
// librdkafka helpers shared by the benchmark clients (bench/e2e, bench/lookups): a base client
// configuration and topic creation with per-topic configs. Failures come back as a message for
// the caller to report; nothing here exits.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdlib>
#include <functional>
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

/// What `consume_from_beginning` saw: records handed to the callback, the time the first one
/// arrived and the time the last one did (steady clock).
struct consume_result {
    size_t records = 0;
    std::chrono::steady_clock::time_point started, first_record, finished;
};

/// Creates a consumer from `conf` (taken), assigns partitions 0..partitions-1 of `topic` from the
/// beginning and hands every record to `on_record` (a non-empty return stops with that message)
/// until `records` arrived, consuming in batches as kcat and Java consumers do, so the rate
/// measures the broker's fetch path, not per-call client overhead. Gives up after five minutes.
/// "" in `why` on success.
inline consume_result consume_from_beginning(rd_kafka_conf_t* conf, const std::string& topic, int partitions,
                                             size_t records,
                                             const std::function<std::string(const rd_kafka_message_t&)>& on_record,
                                             std::string& why) {
    consume_result r;
    char err[512];
    auto* ck = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!ck) {
        why = err;
        return r;
    }
    rd_kafka_poll_set_consumer(ck);
    auto* parts = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; ++p)
        rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    if (auto e = rd_kafka_assign(ck, parts)) why = std::string("assign: ") + rd_kafka_err2str(e);
    rd_kafka_topic_partition_list_destroy(parts);
    r.started = r.first_record = std::chrono::steady_clock::now();
    auto* queue = rd_kafka_queue_get_consumer(ck);
    std::vector<rd_kafka_message_t*> msgs(10000);
    while (why.empty() && r.records < records) {
        auto n = rd_kafka_consume_batch_queue(queue, 100, msgs.data(), msgs.size());
        if (n <= 0) {
            if (std::chrono::steady_clock::now() - r.started > std::chrono::minutes(5))
                why = "consume did not finish in 5 minutes";
            continue;
        }
        for (ssize_t i = 0; i < n; ++i) {
            auto* m = msgs[size_t(i)];
            if (!why.empty()) {
            } else if (!m->err) {
                if (r.records++ == 0) r.first_record = std::chrono::steady_clock::now();
                why = on_record(*m);
            } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                why = std::string("consume: ") + rd_kafka_message_errstr(m);
            }
            rd_kafka_message_destroy(m);
        }
    }
    r.finished = std::chrono::steady_clock::now();
    rd_kafka_queue_destroy(queue);
    rd_kafka_consumer_close(ck);
    rd_kafka_destroy(ck);
    return r;
}

} // namespace floe::bench
