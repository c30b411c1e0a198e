// Lookup latency of floe's HTTP API, by offset and by key, in the hot tier (local log, in-memory
// key index) and the cold tier (Iceberg table), with redis-server GET of the same keys as the
// hot peer. Loads the data through Kafka (librdkafka), waits until the cold topic has moved to
// Iceberg and left the local tier, then times one request at a time over a keep-alive
// connection, checking every answer.
//
//   floe-bench-lookups --brokers 127.0.0.1:9092 --http 127.0.0.1:8080 [--cold-records 10000000]
//       [--hot-records 1000000] [--requests 10000] [--redis-port 6379] [--keys-out FILE]
//
// bench/lookups/run.sh starts floe and redis-server and adds DuckDB over the same Parquet files.

#include "common/kafka_client.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "floe-bench-lookups: %s\n", why.c_str());
    std::exit(1);
}

struct options {
    std::string brokers = "127.0.0.1:9092";
    std::string http = "127.0.0.1:8080";
    size_t cold_records = 10'000'000;
    size_t hot_records = 1'000'000;
    size_t requests = 10'000;
    int redis_port = 0;
    std::string keys_out;
    int wait_seconds = 900;
    std::string only; ///< "hot" or "cold": run only those series
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--brokers") o.brokers = next();
        else if (a == "--http") o.http = next();
        else if (a == "--cold-records") o.cold_records = std::stoul(next());
        else if (a == "--hot-records") o.hot_records = std::stoul(next());
        else if (a == "--requests") o.requests = std::stoul(next());
        else if (a == "--redis-port") o.redis_port = std::stoi(next());
        else if (a == "--keys-out") o.keys_out = next();
        else if (a == "--wait-seconds") o.wait_seconds = std::stoi(next());
        else if (a == "--only") o.only = next();
        else die("unknown argument " + a);
    }
    return o;
}

// Record i of a topic: a unique key (a bijective mix of i, so neighbouring records have
// unrelated keys, as entity ids do) and a 100-byte JSON-like value.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
std::string key_of(const std::string& topic, size_t i) { return fmt::format("{}-{:016x}", topic, mix(i)); }
std::string value_of(size_t i) {
    auto v = fmt::format(R"({{"id":{},"status":"active","score":{},"region":"eu-{}","pad":")", i, mix(i) % 100000,
                         i % 7);
    while (v.size() < 98) v += char('a' + (v.size() % 26));
    return v + "\"}";
}

// ---- Kafka: topic creation with configs, and loading -------------------------------------

rd_kafka_conf_t* base_conf(const options& o) {
    std::string why;
    auto* conf = floe::bench::kafka_conf(o.brokers, why);
    if (!conf) die(why);
    return conf;
}

void create_topic(const options& o, const std::string& topic,
                  const std::vector<std::pair<std::string, std::string>>& configs) {
    if (auto why = floe::bench::create_topic(o.brokers, topic, 1, configs, /*exists_ok=*/false); !why.empty())
        die(why);
}

void produce(const options& o, const std::string& topic, size_t n) {
    char err[512];
    auto* conf = base_conf(o);
    for (auto [k, v] : {std::pair{"enable.idempotence", "true"}, {"linger.ms", "20"}, {"batch.size", "1000000"},
                        {"queue.buffering.max.messages", "1000000"}, {"compression.codec", "lz4"}})
        if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die(err);
    size_t failed = 0;
    rd_kafka_conf_set_opaque(conf, &failed);
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
        if (m->err) ++*static_cast<size_t*>(opaque);
    });
    auto* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) die(err);
    auto t0 = clock_type::now();
    auto last = t0;
    for (size_t i = 0; i < n; ++i) {
        auto k = key_of(topic, i);
        auto v = value_of(i);
        for (;;) {
            auto e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                                       RD_KAFKA_V_KEY(k.data(), k.size()), RD_KAFKA_V_VALUE(v.data(), v.size()),
                                       RD_KAFKA_V_HEADER("source", "bench", 5), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                       RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die(fmt::format("produce: {}", rd_kafka_err2str(e)));
            rd_kafka_poll(rk, 10);
        }
        if ((i & 0xffff) == 0) {
            rd_kafka_poll(rk, 0);
            if (clock_type::now() - last > std::chrono::seconds(5)) {
                last = clock_type::now();
                std::fprintf(stderr, "  %s: %zu of %zu records sent\n", topic.c_str(), i, n);
            }
        }
    }
    while (rd_kafka_flush(rk, 1000) == RD_KAFKA_RESP_ERR__TIMED_OUT) {
    }
    if (failed) die(fmt::format("{} records of {} were not acknowledged", failed, topic));
    double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::fprintf(stderr, "  %s: %zu records loaded in %.1f s\n", topic.c_str(), n, s);
    rd_kafka_destroy(rk);
}

// ---- HTTP/1.1 keep-alive client ------------------------------------------------------------

class http_client {
public:
    explicit http_client(const std::string& hostport) {
        auto colon = hostport.rfind(':');
        _host = hostport.substr(0, colon);
        _port = std::stoi(hostport.substr(colon + 1));
        connect();
    }
    ~http_client() {
        if (_fd >= 0) ::close(_fd);
    }
    struct reply {
        int status = 0;
        std::string body;
    };
    reply get(const std::string& path) {
        auto req = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", path, _host);
        if (::send(_fd, req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size())) die("send failed");
        // Headers, then Content-Length bytes of body.
        size_t hdr_end;
        while ((hdr_end = _buf.find("\r\n\r\n")) == std::string::npos) fill();
        reply r;
        r.status = std::atoi(_buf.c_str() + 9);
        auto cl = _buf.find("Content-Length: ");
        if (cl == std::string::npos || cl > hdr_end) die("reply without Content-Length");
        size_t len = std::stoul(_buf.substr(cl + 16));
        while (_buf.size() < hdr_end + 4 + len) fill();
        r.body = _buf.substr(hdr_end + 4, len);
        _buf.erase(0, hdr_end + 4 + len);
        return r;
    }

private:
    void connect() {
        _fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(uint16_t(_port));
        ::inet_pton(AF_INET, _host.c_str(), &a.sin_addr);
        if (::connect(_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("cannot connect to " + _host);
        int one = 1;
        ::setsockopt(_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    void fill() {
        char tmp[65536];
        auto n = ::recv(_fd, tmp, sizeof tmp, 0);
        if (n <= 0) die("connection closed by floe");
        _buf.append(tmp, size_t(n));
    }
    std::string _host;
    int _port = 0;
    int _fd = -1;
    std::string _buf;
};

struct part_state {
    int64_t local_start = 0, log_end = 0, offloaded = 0;
};
std::optional<part_state> partition_state(http_client& c, const std::string& topic) {
    auto r = c.get("/v1/topics");
    if (r.status != 200) die(fmt::format("/v1/topics answered {}: {}", r.status, r.body));
    auto j = nlohmann::json::parse(r.body);
    for (auto& t : j["topics"])
        if (t["name"] == topic) {
            auto& p = t["partitions"][0];
            return part_state{p["local_start"], p["log_end"], p["offloaded_up_to"]};
        }
    return std::nullopt;
}

// ---- measurement -------------------------------------------------------------------------

struct series {
    std::string name;
    std::vector<double> ms;
    std::string target;
};
double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}
void print(const series& s) {
    std::printf("%-44s %7zu %9.3f %9.3f %9.3f %9.3f  %s\n", s.name.c_str(), s.ms.size(), pct(s.ms, 0.5), pct(s.ms, 0.9),
                pct(s.ms, 0.99), s.ms.empty() ? 0.0 : *std::max_element(s.ms.begin(), s.ms.end()), s.target.c_str());
    std::fflush(stdout);
}

template <typename F>
series timed(std::string name, std::string target, size_t n, F&& one) {
    series s{std::move(name), {}, std::move(target)};
    s.ms.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto t0 = clock_type::now();
        one(i);
        s.ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    auto o = parse(argc, argv);
    const std::string cold = "lookup-cold", hot = "lookup-hot";
    http_client http(o.http);

    if (!partition_state(http, cold)) {
        std::fprintf(stderr, "loading %zu cold and %zu hot records\n", o.cold_records, o.hot_records);
        // Cold: tiered, segments rolled every 2 s, local copies dropped once offloaded.
        create_topic(o, cold, {{"remote.storage.enable", "true"}, {"segment.ms", "2000"},
                               {"local.retention.ms", "1000"}});
        create_topic(o, hot, {{"remote.storage.enable", "false"}});
        produce(o, cold, o.cold_records);
        produce(o, hot, o.hot_records);
    }
    // Wait (bounded, with progress) until the cold records are in Iceberg and out of the local tier.
    auto t0 = clock_type::now();
    auto last = t0;
    for (;;) {
        auto st = *partition_state(http, cold);
        if (st.offloaded >= int64_t(o.cold_records) && st.local_start >= int64_t(o.cold_records)) break;
        if (clock_type::now() - t0 > std::chrono::seconds(o.wait_seconds))
            die(fmt::format("the cold topic did not move to Iceberg within {} s (offloaded up to {}, local start {})",
                            o.wait_seconds, st.offloaded, st.local_start));
        if (clock_type::now() - last > std::chrono::seconds(5)) {
            last = clock_type::now();
            std::fprintf(stderr, "  waiting for offload: offloaded up to %ld of %zu, local start %ld\n",
                         long(st.offloaded), o.cold_records, long(st.local_start));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::fprintf(stderr, "cold topic in Iceberg after %.1f s of waiting\n",
                 std::chrono::duration<double>(clock_type::now() - t0).count());

    std::mt19937_64 rng(7);
    auto sample = [&](size_t n) {
        std::vector<size_t> v(o.requests);
        for (auto& x : v) x = rng() % n;
        return v;
    };
    auto cold_offsets = sample(o.cold_records), cold_keys = sample(o.cold_records);
    auto hot_offsets = sample(o.hot_records), hot_keys = sample(o.hot_records);
    if (!o.keys_out.empty()) {
        std::ofstream f(o.keys_out);
        for (auto i : cold_keys) f << key_of(cold, i) << '\n';
    }
    size_t bad = 0;
    auto expect = [&](const http_client::reply& r, int status, const std::string& needle, const std::string& what) {
        if (r.status == status && r.body.find(needle) != std::string::npos) return;
        if (bad++ < 5) std::fprintf(stderr, "unexpected answer to %s: %d %.300s\n", what.c_str(), r.status, r.body.c_str());
    };
    auto by_offset = [&](const std::string& topic, size_t i) {
        auto path = fmt::format("/v1/topics/{}/partitions/0/records?offset={}&limit=1", topic, i);
        expect(http.get(path), 200, fmt::format("\"offset\":{},", i), path);
    };
    auto by_key = [&](const std::string& topic, size_t i) {
        auto k = key_of(topic, i);
        auto path = fmt::format("/v1/topics/{}/records?key={}", topic, k);
        expect(http.get(path), 200, fmt::format("\"offset\":{},", i), path);
    };

    // The first requests pay one-time costs (the hot key index is built from the local log, the
    // table's metadata and manifests are loaded): reported apart from the series.
    auto once = [&](const char* what, auto&& fn) {
        auto t = clock_type::now();
        fn();
        std::fprintf(stderr, "first %s: %.1f ms\n", what,
                     std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
    };
    once("hot key lookup (builds the key index of 1 partition)", [&] { by_key(hot, 0); });
    once("cold key lookup (loads table metadata and manifests)", [&] { by_key(cold, 0); });

    std::printf("# %zu requests per line, one at a time over one keep-alive HTTP/1.1 connection; latency in ms\n",
                o.requests);
    std::printf("# cold table: %zu rows (topic %s, 1 partition, all offloaded and gone from the local tier)\n",
                o.cold_records, cold.c_str());
    std::printf("%-44s %7s %9s %9s %9s %9s  %s\n", "lookup", "n", "p50", "p90", "p99", "max", "target");
    bool run_hot = o.only != "cold", run_cold = o.only != "hot";
    if (run_hot) {
        print(timed("by offset, hot (local log)", "p99 < 1", o.requests,
                    [&](size_t i) { by_offset(hot, hot_offsets[i]); }));
        print(timed("by key, hot (in-memory key index)", "p99 < 1", o.requests,
                    [&](size_t i) { by_key(hot, hot_keys[i]); }));
    }
    if (run_cold) {
        print(timed("by offset, cold (Iceberg)", "", o.requests, [&](size_t i) { by_offset(cold, cold_offsets[i]); }));
        print(timed("by key, cold (Iceberg)", "p99 < 20", o.requests, [&](size_t i) { by_key(cold, cold_keys[i]); }));
    }
    if (run_cold) print(timed("by key, cold, key absent (Iceberg)", "", std::min<size_t>(o.requests, 2000), [&](size_t i) {
        // Keys shaped like the table's (so key bounds cannot rule them out) that were never written.
        auto path = fmt::format("/v1/topics/{}/records?key={}", cold, key_of(cold, o.cold_records + i));
        expect(http.get(path), 404, "no record with key", path);
    }));
    if (o.redis_port && run_hot) {
        // Peer: redis-server holding the same hot key -> value pairs, GET one at a time.
        auto* rc = redisConnect("127.0.0.1", o.redis_port);
        if (!rc || rc->err) die("cannot connect to redis-server");
        for (size_t i = 0; i < o.hot_records; ++i) {
            auto k = key_of(hot, i), v = value_of(i);
            redisAppendCommand(rc, "SET %b %b", k.data(), k.size(), v.data(), v.size());
            if ((i + 1) % 1000 == 0 || i + 1 == o.hot_records)
                for (size_t j = 0; j < (i % 1000) + 1; ++j) {
                    void* rep = nullptr;
                    if (redisGetReply(rc, &rep) != REDIS_OK) die("redis SET failed");
                    freeReplyObject(rep);
                }
        }
        print(timed("peer: redis-server GET, same hot keys", "", o.requests, [&](size_t i) {
            auto k = key_of(hot, hot_keys[i]);
            auto* rep = static_cast<redisReply*>(redisCommand(rc, "GET %b", k.data(), k.size()));
            if (!rep || rep->type != REDIS_REPLY_STRING) die("redis GET failed");
            freeReplyObject(rep);
        }));
        redisFree(rc);
    }
    if (bad) die(fmt::format("{} answers were wrong", bad));
    return 0;
}
