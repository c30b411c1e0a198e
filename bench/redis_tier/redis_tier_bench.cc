// Produce through the Redis local tier (one FCALL per produce request of `batch` records, as a
// Kafka producer's batch arrives) beside the peer: redis-server's own XADD of the same records
// (same fields: offset, timestamp, key, 100-byte value), pipelined `batch` commands per round
// trip, on the same redis-server in the same run. Then fetch: every record read back through the
// tier (batches rebuilt from the entries). 1 partition, one producer thread.
//
// usage: bench_redis_tier [records=200000] [batch=500]

#include "log/batch_builder.h"
#include "log/testing/batch_builder.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

using namespace floe;
using clk = std::chrono::steady_clock;

namespace {
double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}

int main(int argc, char** argv) {
    const size_t records = argc > 1 ? size_t(std::atoll(argv[1])) : 200000;
    const size_t batch = argc > 2 ? size_t(std::atoll(argv[2])) : 500;
    char tmpl[] = "/tmp/floe-bench-redis-XXXXXX";
    std::filesystem::path dir = ::mkdtemp(tmpl);
    auto server = redis::fixture::server::start(dir);
    if (!server) {
        fmt::print(stderr, "redis-server: {}\n", server.error().message());
        return 1;
    }
    auto ro = redis::parse_uris(server->uri());
    auto client = redis::client::connect(*ro);
    if (!client) {
        fmt::print(stderr, "connect: {}\n", client.error().message());
        return 1;
    }
    std::string value(100, 'v');

    // Peer: pipelined XADD of the same records.
    auto t0 = clk::now();
    for (size_t at = 0; at < records; at += batch) {
        std::vector<std::vector<std::string>> cmds;
        for (size_t i = at; i < std::min(records, at + batch); ++i)
            cmds.push_back({"XADD", "{peer}:stream", "*", "offset", std::to_string(i), "timestamp", "1700000000000", "key",
                            fmt::format("k{}", i), "value", value});
        auto r = (*client)->pipeline("{peer}:stream", cmds);
        if (!r) {
            fmt::print(stderr, "XADD: {}\n", r.error().message());
            return 1;
        }
    }
    double peer = double(records) / secs(t0, clk::now());

    // Floe: produce requests of `batch` records through the tier.
    redis_tier::options o;
    o.redis = *ro;
    o.ns = "bench";
    auto tier = redis_tier::open(std::shared_ptr<redis::client>(std::move(*client)), o);
    if (!tier) {
        fmt::print(stderr, "tier: {}\n", tier.error().message());
        return 1;
    }
    if (auto c = (*tier)->create_topic("bench", 1); !c) {
        fmt::print(stderr, "topic: {}\n", c.error().message());
        return 1;
    }
    auto p = (*tier)->partition("bench", 0);
    std::vector<byte_buffer> reqs;
    for (size_t at = 0; at < records; at += batch) {
        std::vector<log::testing::test_record> rs;
        for (size_t i = at; i < std::min(records, at + batch); ++i) {
            log::testing::test_record r;
            r.key = fmt::format("k{}", i);
            r.value = value;
            r.timestamp_ms = 1700000000000;
            rs.push_back(std::move(r));
        }
        byte_buffer b;
        log::testing::append_batch(b, rs);
        reqs.push_back(std::move(b));
    }
    auto t1 = clk::now();
    for (auto& b : reqs) {
        auto r = p->append(std::span<uint8_t>(b.data(), b.size()), {.crc_checked = true});
        if (!r || r->status != log::append_status::ok) {
            fmt::print(stderr, "append failed\n");
            return 1;
        }
    }
    double floe = double(records) / secs(t1, clk::now());

    // Fetch: every record, 1 MiB answers.
    auto t2 = clk::now();
    int64_t next = 0, got = 0;
    while (next < int64_t(records)) {
        auto rd = p->read(kafka_offset(next), {.max_bytes = 1 << 20});
        if (!rd || rd->slices.empty()) {
            fmt::print(stderr, "read failed at {}\n", next);
            return 1;
        }
        auto& last = rd->slices.back();
        got += last.last_offset() - next + 1;
        next = last.last_offset() + 1;
    }
    double fetch = double(got) / secs(t2, clk::now());

    fmt::print("records={} batch={} value=100B partition=1\n", records, batch);
    fmt::print("redis-server pipelined XADD (peer): {:>10.0f} rec/s\n", peer);
    fmt::print("floe produce via redis tier:        {:>10.0f} rec/s ({:.2f}x peer)\n", floe, floe / peer);
    fmt::print("floe fetch via redis tier:          {:>10.0f} rec/s\n", fetch);
    (void)(*tier)->close();
    std::error_code ec;
    server->stop();
    std::filesystem::remove_all(dir, ec);
    return 0;
}
