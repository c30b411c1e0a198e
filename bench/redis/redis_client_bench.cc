// floe-bench-redis-client: records/s of 100-byte records appended to one Redis stream, in the
// same run and on the same redis-server (started here on loopback, persistence off):
//   peer      raw hiredis, pipelined XADD (the peer the issue's produce target is measured
//             against; same as bench/e2e's floe-bench-redis-xadd)
//   pipeline  floe_redis client::pipeline, the same XADDs
//   fcall     floe_redis client::fcall, one Redis function call per batch that takes the next
//             offsets and adds one entry per record with offset, key, value and timestamp
//             fields (the shape a produce through the Redis tier takes)
//   fcall-id  the same function with explicit entry ids (<ms>-<offset>) instead of '*'
//   blob      one function call per batch adding ONE entry holding the whole batch (what
//             per-record entries cost, by comparison; not readable record by record)
//   threads   `pipeline` from 2 threads on 2 streams (2 partitions)
//   read      XRANGE of the per-record entries, 1000 per call: raw hiredis (peer, the better of
//             a run before and one after) against client::command
//
//   floe-bench-redis-client [--records 1000000] [--value-size 100] [--batch 1000] [--runs 3]
#include "redis/client.h"
#include "redis/testing/server.h"
#include "testkit/datagen.h"

#include <hiredis/hiredis.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace floe;
namespace fs = std::filesystem;

namespace {

struct rec {
    std::string key, value, ts;
};

using clk = std::chrono::steady_clock;

double secs_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

double run_peer(uint16_t port, const std::vector<rec>& recs, size_t batch) {
    timeval tv{30, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        std::fprintf(stderr, "cannot connect to redis on port %u\n", unsigned(port));
        std::exit(1);
    }
    const std::string stream = "peer";
    auto t0 = clk::now();
    for (size_t i = 0; i < recs.size(); i += batch) {
        size_t n = std::min(batch, recs.size() - i);
        for (size_t k = 0; k < n; ++k) {
            auto& r = recs[i + k];
            const char* argv[] = {"XADD", stream.c_str(), "*", "key", r.key.data(), "value", r.value.data()};
            size_t lens[] = {4, stream.size(), 1, 3, r.key.size(), 5, r.value.size()};
            redisAppendCommandArgv(c, 7, argv, lens);
        }
        for (size_t k = 0; k < n; ++k) {
            void* reply = nullptr;
            if (redisGetReply(c, &reply) != REDIS_OK) {
                std::fprintf(stderr, "peer: %s\n", c->errstr);
                std::exit(1);
            }
            freeReplyObject(reply);
        }
    }
    double s = secs_since(t0);
    redisFree(c);
    return double(recs.size()) / s;
}

double run_pipeline(redis::client& c, const std::vector<rec>& recs, size_t begin, size_t end, size_t batch,
                    const std::string& stream) {
    std::vector<std::vector<std::string_view>> cmds;
    auto t0 = clk::now();
    for (size_t i = begin; i < end; i += batch) {
        size_t n = std::min(batch, end - i);
        cmds.clear();
        for (size_t k = 0; k < n; ++k) {
            auto& r = recs[i + k];
            cmds.push_back({"XADD", stream, "*", "key", r.key, "value", r.value});
        }
        auto out = c.pipeline(stream, cmds);
        if (!out) {
            std::fprintf(stderr, "pipeline: %s\n", out.error().to_string().c_str());
            std::exit(1);
        }
    }
    return double(end - begin) / secs_since(t0);
}

// One call per batch: ARGV = ts, then key, value per record. Offsets come from a counter key
// in the stream's slot; every entry carries offset, key, value and ts fields.
constexpr std::string_view bench_lua = R"LUA(
redis.register_function('floe_bench_append', function(keys, args)
  local n = (#args - 1) / 2
  local base = redis.call('INCRBY', keys[2], n) - n
  local ts = args[1]
  for i = 0, n - 1 do
    redis.call('XADD', keys[1], '*', 'offset', base + i, 'key', args[2 + 2 * i], 'value', args[3 + 2 * i], 'ts', ts)
  end
  return base
end)
redis.register_function('floe_bench_append_ids', function(keys, args)
  local n = (#args - 1) / 2
  local base = redis.call('INCRBY', keys[2], n) - n
  local ts = args[1]
  local t = redis.call('TIME')
  local ms = t[1] * 1000 + math.floor(t[2] / 1000)
  local last = redis.call('GET', keys[3])
  if last and tonumber(last) > ms then ms = tonumber(last) end
  redis.call('SET', keys[3], ms)
  for i = 0, n - 1 do
    redis.call('XADD', keys[1], ms .. '-' .. (base + i), 'offset', base + i, 'key', args[2 + 2 * i], 'value', args[3 + 2 * i], 'ts', ts)
  end
  return base
end)
redis.register_function('floe_bench_append_blob', function(keys, args)
  local n = tonumber(args[2])
  local base = redis.call('INCRBY', keys[2], n) - n
  redis.call('XADD', keys[1], '*', 'base', base, 'count', n, 'batch', args[1])
  return base
end)
)LUA";

double run_fcall(redis::client& c, const std::vector<rec>& recs, size_t batch, std::string_view function) {
    const std::string stream = "{bench.0}.log", counter = "{bench.0}.next", last_ms = "{bench.0}.ms";
    std::vector<std::string_view> args;
    auto t0 = clk::now();
    int64_t expect = 0;
    for (size_t i = 0; i < recs.size(); i += batch) {
        size_t n = std::min(batch, recs.size() - i);
        args.clear();
        args.push_back(recs[i].ts);
        for (size_t k = 0; k < n; ++k) {
            args.push_back(recs[i + k].key);
            args.push_back(recs[i + k].value);
        }
        std::string_view keys[] = {stream, counter, last_ms};
        auto out = c.fcall(function, keys, args);
        if (!out || out->integer() != expect) {
            std::fprintf(stderr, "fcall: %s\n", out ? out->debug_string().c_str() : out.error().to_string().c_str());
            std::exit(1);
        }
        expect += int64_t(n);
    }
    return double(recs.size()) / secs_since(t0);
}

// The batch as one blob: key and value lengths + bytes, concatenated (as a Kafka batch would be).
double run_blob(redis::client& c, const std::vector<rec>& recs, size_t batch) {
    const std::string stream = "{bench.0}.log", counter = "{bench.0}.next";
    std::string blob;
    auto t0 = clk::now();
    for (size_t i = 0; i < recs.size(); i += batch) {
        size_t n = std::min(batch, recs.size() - i);
        blob.clear();
        for (size_t k = 0; k < n; ++k) {
            auto& r = recs[i + k];
            blob += fmt::format("{}:{}{}:{}", r.key.size(), r.key, r.value.size(), r.value);
        }
        auto count = std::to_string(n);
        std::string_view keys[] = {stream, counter};
        std::string_view args[] = {blob, count};
        auto out = c.fcall("floe_bench_append_blob", keys, args);
        if (!out) {
            std::fprintf(stderr, "blob: %s\n", out.error().to_string().c_str());
            std::exit(1);
        }
    }
    return double(recs.size()) / secs_since(t0);
}

// Reads the whole stream back with XRANGE, `batch` entries per call: raw hiredis (peer) or the
// client. Returns records/s; checks the count.
double run_read_peer(uint16_t port, const std::string& stream, size_t expect, size_t batch) {
    timeval tv{30, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    std::string from = "-", count = std::to_string(batch);
    size_t got = 0;
    auto t0 = clk::now();
    while (true) {
        const char* argv[] = {"XRANGE", stream.c_str(), from.c_str(), "+", "COUNT", count.c_str()};
        size_t lens[] = {6, stream.size(), from.size(), 1, 5, count.size()};
        auto* r = static_cast<redisReply*>(redisCommandArgv(c, 6, argv, lens));
        if (!r || r->type != REDIS_REPLY_ARRAY) {
            std::fprintf(stderr, "read peer failed\n");
            std::exit(1);
        }
        size_t n = r->elements;
        got += n;
        if (n > 0) {
            from.assign(1, '(');
            from.append(r->element[n - 1]->element[0]->str, r->element[n - 1]->element[0]->len);
        }
        freeReplyObject(r);
        if (n < batch) break;
    }
    double s = secs_since(t0);
    redisFree(c);
    if (got != expect) {
        std::fprintf(stderr, "read peer: %zu of %zu entries\n", got, expect);
        std::exit(1);
    }
    return double(got) / s;
}

double run_read_client(redis::client& c, const std::string& stream, size_t expect, size_t batch) {
    std::string from = "-", count = std::to_string(batch);
    size_t got = 0;
    auto t0 = clk::now();
    while (true) {
        auto r = c.command({"XRANGE", stream, from, "+", "COUNT", count});
        if (!r || !r->is_array()) {
            std::fprintf(stderr, "read client failed\n");
            std::exit(1);
        }
        size_t n = r->size();
        got += n;
        if (n > 0) {
            from.assign(1, '(');
            from.append((*r)[n - 1][0].str());
        }
        if (n < batch) break;
    }
    double s = secs_since(t0);
    if (got != expect) {
        std::fprintf(stderr, "read client: %zu of %zu entries\n", got, expect);
        std::exit(1);
    }
    return double(got) / s;
}

} // namespace

int main(int argc, char** argv) {
    size_t records = 1'000'000, value_size = 100, batch = 1000, runs = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--records") records = std::stoul(v);
        else if (a == "--value-size") value_size = std::stoul(v);
        else if (a == "--batch") batch = std::stoul(v);
        else if (a == "--runs") runs = std::stoul(v);
        else {
            std::fprintf(stderr, "floe-bench-redis-client: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    testkit::datagen gen({.seed = 11, .value_size = value_size, .null_key_ratio = 0, .tombstone_ratio = 0});
    std::vector<rec> recs;
    recs.reserve(records);
    for (size_t i = 0; i < records; ++i) {
        auto g = gen.next();
        recs.push_back({*g.key, *g.value, std::to_string(g.timestamp_ms)});
    }
    auto dir = fs::temp_directory_path() / fmt::format("floe-bench-redis-{}", ::getpid());
    auto srv = redis::fixture::server::start(dir);
    if (!srv) {
        std::fprintf(stderr, "%s\n", srv.error().to_string().c_str());
        return 1;
    }
    auto opts = redis::parse_uris(srv->uri());
    opts->command_timeout = std::chrono::seconds(30);
    auto c = redis::client::connect(*opts);
    if (!c || !(*c)->load_library("floe_bench", bench_lua, "2")) {
        std::fprintf(stderr, "cannot connect or load the bench library\n");
        return 1;
    }
    auto flush = [&] { (void)(*c)->command({"FLUSHALL"}); };
    std::printf("records=%zu value=%zuB batch=%zu, client and redis-server %s on the same %u-core machine\n",
                records, value_size, batch, (*srv->raw({"INFO", "server"})).str().find("redis_version:7") != std::string::npos ? "7" : "",
                std::thread::hardware_concurrency());
    for (size_t run = 0; run < runs; ++run) {
        flush();
        double peer = run_peer(srv->port(), recs, batch);
        flush();
        double pipe = run_pipeline(**c, recs, 0, recs.size(), batch, "{bench.0}.log");
        flush();
        double fc = run_fcall(**c, recs, batch, "floe_bench_append");
        // Read back the per-record entries (offset, key, value, ts fields).
        // Peer before and after the client; the better of its two runs counts.
        double read_peer = run_read_peer(srv->port(), "{bench.0}.log", recs.size(), batch);
        double read_client = run_read_client(**c, "{bench.0}.log", recs.size(), batch);
        read_peer = std::max(read_peer, run_read_peer(srv->port(), "{bench.0}.log", recs.size(), batch));
        flush();
        double fc_ids = run_fcall(**c, recs, batch, "floe_bench_append_ids");
        flush();
        double blob = run_blob(**c, recs, batch);
        flush();
        double two = 0;
        {
            auto t0 = clk::now();
            std::thread t([&] { run_pipeline(**c, recs, 0, recs.size() / 2, batch, "{bench.1}.log"); });
            run_pipeline(**c, recs, recs.size() / 2, recs.size(), batch, "{bench.2}.log");
            t.join();
            two = double(recs.size()) / secs_since(t0);
        }
        flush();
        std::printf("run %zu: peer redis XADD (raw hiredis) %.0f records/s | floe_redis pipeline XADD %.0f records/s "
                    "(%.2fx) | FCALL per-record entries %.0f records/s (%.2fx) | FCALL per-record entries, explicit "
                    "ids %.0f records/s (%.2fx) | FCALL one entry per batch %.0f records/s (%.2fx) | pipeline, 2 "
                    "threads/2 streams %.0f records/s (%.2fx)\n",
                    run + 1, peer, pipe, pipe / peer, fc, fc / peer, fc_ids, fc_ids / peer, blob, blob / peer, two,
                    two / peer);
        std::printf("run %zu: read XRANGE COUNT %zu: peer raw hiredis %.0f records/s | floe_redis %.0f records/s "
                    "(%.2fx)\n",
                    run + 1, batch, read_peer, read_client, read_client / read_peer);
        std::fflush(stdout);
    }
    srv->stop();
    fs::remove_all(dir);
    return 0;
}
