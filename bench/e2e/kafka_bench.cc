// floe-bench-kafka: a librdkafka producer and consumer against any Kafka-protocol broker.
// Produces N generated records (testkit datagen values of a chosen size, keys from 100k ids),
// measuring records/s, MB/s and per-record produce latency (enqueue -> delivery report), then
// consumes them back from the beginning and measures fetch records/s. Each phase also prints
// the CPU seconds this client spent in it (user + system, every thread: getrusage).
//
//   floe-bench-kafka --brokers 127.0.0.1:9092 --topic t --records 1000000 --value-size 100
//                    --acks 1 --partitions 4 [--idempotent] [--rate R]
//                    [--no-consume | --no-produce]
// (--rate: enqueue at most R records/s, so batches have the size R x linger.ms gives them)
#include "common/kafka_client.h"
#include "testkit/datagen.h"

#include <librdkafka/rdkafka.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
    std::string brokers = "127.0.0.1:9092";
    std::string topic = "bench";
    size_t records = 1'000'000;
    size_t value_size = 100;
    std::string acks = "1";
    int partitions = 1;
    bool consume = true;
    bool produce = true;
    bool idempotent = false;
    double rate = 0; ///< records/s the producer is paced at; 0: as fast as it can
};

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "floe-bench-kafka: %s\n", msg.c_str());
    std::exit(1);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) die("missing value for " + a);
            return argv[++i];
        };
        if (a == "--brokers") o.brokers = next();
        else if (a == "--topic") o.topic = next();
        else if (a == "--records") o.records = std::stoul(next());
        else if (a == "--value-size") o.value_size = std::stoul(next());
        else if (a == "--acks") o.acks = next();
        else if (a == "--partitions") o.partitions = std::stoi(next());
        else if (a == "--no-consume") o.consume = false;
        else if (a == "--no-produce") o.produce = false;
        else if (a == "--idempotent") o.idempotent = true;
        else if (a == "--rate") o.rate = std::stod(next());
        else die("unknown option " + a);
    }
    return o;
}

rd_kafka_conf_t* base_conf(const options& o) {
    std::string why;
    auto* conf = floe::bench::kafka_conf(o.brokers, why);
    if (!conf) die(why);
    return conf;
}

void create_topic(const options& o) {
    if (auto why = floe::bench::create_topic(o.brokers, o.topic, o.partitions, {}, /*exists_ok=*/true); !why.empty())
        die(why);
}

struct produce_state {
    std::vector<clock_type::time_point> enqueued;
    std::vector<double> latency_us;
    size_t delivered = 0, failed = 0;
    std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    auto* st = static_cast<produce_state*>(opaque);
    auto idx = reinterpret_cast<uintptr_t>(m->_private);
    if (m->err) {
        if (st->failed++ == 0) st->first_error = rd_kafka_err2str(m->err);
        return;
    }
    st->latency_us.push_back(
        std::chrono::duration<double, std::micro>(clock_type::now() - st->enqueued[idx]).count());
    ++st->delivered;
}

/// CPU seconds this process has used so far (user + system, all threads).
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto tv = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return tv(u.ru_utime) + tv(u.ru_stime);
}

std::string fmt_rate(double rate) {
    char b[64];
    std::snprintf(b, sizeof b, " paced at %.0f/s", rate);
    return b;
}

double percentile(std::vector<double>& v, double p) {
    if (v.empty()) return 0;
    size_t k = std::min(v.size() - 1, static_cast<size_t>(p * double(v.size())));
    std::nth_element(v.begin(), v.begin() + long(k), v.end());
    return v[k];
}

void run_produce(const options& o) {
    // Generate first, so the timed loop measures the client and broker, not the generator.
    floe::testkit::datagen gen({.seed = 11, .value_size = o.value_size, .null_key_ratio = 0,
                                .tombstone_ratio = 0});
    std::vector<floe::testkit::gen_record> recs;
    recs.reserve(o.records);
    size_t payload = 0;
    for (size_t i = 0; i < o.records; ++i) {
        recs.push_back(gen.next());
        payload += recs.back().key->size() + recs.back().value->size();
    }

    char err[512];
    produce_state st;
    st.enqueued.resize(o.records);
    st.latency_us.reserve(o.records);
    auto* conf = base_conf(o);
    auto set = [&](const char* k, const char* v) {
        if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die(err);
    };
    set("acks", o.acks == "all" ? "all" : o.acks.c_str());
    set("linger.ms", "5");
    set("batch.size", "1000000");
    set("queue.buffering.max.messages", "2000000");
    set("queue.buffering.max.kbytes", "2097151");
    set("enable.idempotence", o.idempotent ? "true" : "false");
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, &st);
    auto* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) die(err);

    auto t0 = clock_type::now();
    const double cpu0 = cpu_seconds();
    // Records the pace allows by now (--rate).
    const auto due = [&] {
        return std::chrono::duration<double>(clock_type::now() - t0).count() * o.rate;
    };
    for (size_t i = 0; i < o.records; ++i) {
        auto& r = recs[i];
        if (o.rate > 0)
            while (due() < double(i))
                rd_kafka_poll(rk, 1);
        st.enqueued[i] = clock_type::now();
        for (;;) {
            auto e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(o.topic.c_str()),
                RD_KAFKA_V_KEY(r.key->data(), r.key->size()),
                RD_KAFKA_V_VALUE(const_cast<char*>(r.value->data()), r.value->size()),
                RD_KAFKA_V_PARTITION(static_cast<int32_t>(i % size_t(o.partitions))),
                RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(uintptr_t(i))), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(rk, 1);
                continue;
            }
            if (e) die(std::string("produce: ") + rd_kafka_err2str(e));
            break;
        }
        if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
    }
    while (rd_kafka_outq_len(rk) > 0) {
        rd_kafka_poll(rk, 10);
        if (clock_type::now() - t0 > std::chrono::minutes(5)) die("produce did not finish in 5 minutes");
    }
    double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
    rd_kafka_destroy(rk);
    const double cpu = cpu_seconds() - cpu0;
    if (st.failed) die("deliveries failed: " + std::to_string(st.failed) + " (" + st.first_error + ")");
    double p50 = percentile(st.latency_us, 0.5), p99 = percentile(st.latency_us, 0.99);
    std::printf(
        "produce  acks=%-3s partitions=%d records=%zu value=%zuB%s%s: %.0f records/s, %.1f MB/s, "
        "latency p50 %.0f us, p99 %.0f us, client cpu %.2f s\n",
        o.acks.c_str(), o.partitions, st.delivered, o.value_size, o.idempotent ? " idempotent" : "",
        o.rate > 0 ? fmt_rate(o.rate).c_str() : "", double(st.delivered) / secs,
        double(payload) / secs / 1e6, p50, p99, cpu);
}

void run_consume(const options& o) {
    char err[512];
    auto* cconf = base_conf(o);
    auto cset = [&](const char* k, const char* v) {
        if (rd_kafka_conf_set(cconf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die(err);
    };
    cset("group.id", ("bench-" + o.topic).c_str());
    cset("auto.offset.reset", "earliest");
    cset("enable.auto.commit", "false");
    cset("fetch.max.bytes", "52428800");
    cset("max.partition.fetch.bytes", "10485760");
    size_t bytes = 0;
    std::string why;
    const double cpu0 = cpu_seconds();
    // Steady-state fetch rate: timed from the first record (connection set-up, metadata and
    // the first fetch round trip are reported apart).
    auto r = floe::bench::consume_from_beginning(
        cconf, o.topic, o.partitions, o.records,
        [&](const rd_kafka_message_t& m) -> std::string {
            bytes += m.len + m.key_len;
            return {};
        },
        why);
    if (!why.empty()) die(why);
    size_t got = r.records;
    auto start = r.started, c0 = r.first_record;
    double csecs = std::chrono::duration<double>(r.finished - c0).count();
    const double cpu = cpu_seconds() - cpu0;
    std::printf("fetch    partitions=%d records=%zu: %.0f records/s, %.1f MB/s "
                "(first record after %.0f ms), client cpu %.2f s\n",
                o.partitions, got, double(got) / csecs, double(bytes) / csecs / 1e6,
                std::chrono::duration<double, std::milli>(c0 - start).count(), cpu);
}

} // namespace

int main(int argc, char** argv) {
    auto o = parse(argc, argv);
    if (o.produce) {
        create_topic(o);
        run_produce(o);
    }
    if (o.consume) run_consume(o);
    return 0;
}
