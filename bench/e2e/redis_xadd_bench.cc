// floe-bench-redis-xadd: the peer for produce benchmarks. Pushes the same generated records
// into a redis-server stream with pipelined XADD (key, value as fields, as a Redis-Streams hot
// tier stores them), measuring records/s, MB/s and per-record latency (each record's latency
// is the round trip of the pipeline it travelled in).
//
//   floe-bench-redis-xadd --port 6379 --records 1000000 --value-size 100 --pipeline 1000
#include "testkit/datagen.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    int port = 6379;
    size_t records = 1'000'000, value_size = 100, pipeline = 1000;
    std::string stream = "bench";
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--port") port = std::stoi(v);
        else if (a == "--records") records = std::stoul(v);
        else if (a == "--value-size") value_size = std::stoul(v);
        else if (a == "--pipeline") pipeline = std::stoul(v);
        else if (a == "--stream") stream = v;
        else {
            std::fprintf(stderr, "floe-bench-redis-xadd: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    floe::testkit::datagen gen({.seed = 11, .value_size = value_size, .null_key_ratio = 0,
                                .tombstone_ratio = 0});
    std::vector<floe::testkit::gen_record> recs;
    recs.reserve(records);
    size_t payload = 0;
    for (size_t i = 0; i < records; ++i) {
        recs.push_back(gen.next());
        payload += recs.back().key->size() + recs.back().value->size();
    }
    timeval tv{30, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        std::fprintf(stderr, "floe-bench-redis-xadd: cannot connect to redis on port %d\n", port);
        return 1;
    }
    std::vector<double> latency_us;
    latency_us.reserve(records);
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < records; i += pipeline) {
        size_t n = std::min(pipeline, records - i);
        auto b0 = std::chrono::steady_clock::now();
        for (size_t k = 0; k < n; ++k) {
            auto& r = recs[i + k];
            const char* argv2[] = {"XADD", stream.c_str(), "*", "key", r.key->data(), "value", r.value->data()};
            size_t lens[] = {4, stream.size(), 1, 3, r.key->size(), 5, r.value->size()};
            redisAppendCommandArgv(c, 7, argv2, lens);
        }
        for (size_t k = 0; k < n; ++k) {
            void* reply = nullptr;
            if (redisGetReply(c, &reply) != REDIS_OK) {
                std::fprintf(stderr, "floe-bench-redis-xadd: %s\n", c->errstr);
                return 1;
            }
            freeReplyObject(reply);
        }
        double rtt = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - b0).count();
        latency_us.insert(latency_us.end(), n, rtt);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto pct = [&](double p) {
        size_t k = std::min(latency_us.size() - 1, size_t(p * double(latency_us.size())));
        std::nth_element(latency_us.begin(), latency_us.begin() + long(k), latency_us.end());
        return latency_us[k];
    };
    std::printf("redis XADD pipeline=%zu records=%zu value=%zuB: %.0f records/s, %.1f MB/s, "
                "latency p50 %.0f us, p99 %.0f us\n",
                pipeline, records, value_size, double(records) / secs, double(payload) / secs / 1e6,
                pct(0.5), pct(0.99));
    redisFree(c);
    return 0;
}
