// Produce and fetch through the Redis Streams local tier beside their peers, redis-server's own
// pipelined XADD and XRANGE of the same records, measured in the same run against the same
// redis-server (started here on loopback, persistence off). 1 partition, one thread.
//
//   peer XADD    raw hiredis, `batch` XADDs pipelined per round trip, fields offset, timestamp,
//                key, value (the records a produce through the tier stores), id '*'
//   produce      log::local_partition::append of produce requests of `batch` records (one
//                FCALL floe_tier_append each), requests built before the clock starts
//   peer XRANGE  raw hiredis `XRANGE <stream> <from> + COUNT n` over the tier's own stream
//                (the same entries), every field looked at, n = what the tier reads per round trip
//   fetch        log::local_partition::read of every record in 1 MiB answers (v2 batches rebuilt
//                from the entries); every record is checked afterwards (offset, key, value)
//
// Each run starts a fresh redis-server. Besides records/s it prints the CPU time per record of
// this process (the client) and of redis-server, from getrusage and /proc/<pid>/stat, so runs
// on a loaded machine can still be read.
//
// usage: bench_redis_tier [records=200000] [batch=500] [--runs N] [--only produce|fetch]
//                         [--no-peers] [--fetch-passes N]
// (--no-peers: the tier alone; --fetch-passes: N untimed reads of everything first; both for
// profiling one side with perf)

#include "log/batch_builder.h"
#include "log/record_batch_header.h"
#include "log/records.h"
#include "log/testing/batch_builder.h"
#include "redis/testing/server.h"
#include "redis_tier/redis_tier.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace floe;
using clk = std::chrono::steady_clock;

namespace {

double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double self_cpu() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double proc_cpu(pid_t pid) {
    std::ifstream f(fmt::format("/proc/{}/stat", pid));
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto close = s.rfind(')');
    if (close == std::string::npos) return 0;
    // Fields after the command: state is field 3; utime and stime are fields 14 and 15.
    std::vector<std::string> fields;
    size_t at = close + 2;
    while (at < s.size() && fields.size() < 13) {
        auto sp = s.find(' ', at);
        fields.push_back(s.substr(at, sp - at));
        at = sp == std::string::npos ? s.size() : sp + 1;
    }
    if (fields.size() < 13) return 0;
    return double(std::atoll(fields[11].c_str()) + std::atoll(fields[12].c_str())) / double(::sysconf(_SC_CLK_TCK));
}

/// Wall time and CPU (client, server) of one phase.
struct phase {
    double wall = 0, client_cpu = 0, server_cpu = 0;
};

struct meter {
    pid_t server;
    clk::time_point t;
    double c, s;
    explicit meter(pid_t p) : server(p), t(clk::now()), c(self_cpu()), s(proc_cpu(p)) {}
    phase done() const { return {secs(t, clk::now()), self_cpu() - c, proc_cpu(server) - s}; }
};

[[noreturn]] void die(std::string_view what) {
    fmt::print(stderr, "bench_redis_tier: {}\n", what);
    std::exit(1);
}

redisContext* raw_connect(uint16_t port) {
    timeval tv{30, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) die("cannot connect with hiredis");
    return c;
}

struct rec {
    std::string offset, ts, key;
};

/// Peer: raw hiredis, `batch` XADDs pipelined per round trip.
phase peer_xadd(uint16_t port, pid_t pid, const std::vector<rec>& recs, const std::string& value, size_t batch) {
    redisContext* c = raw_connect(port);
    const std::string stream = "{peer}:stream";
    meter m(pid);
    for (size_t i = 0; i < recs.size(); i += batch) {
        size_t n = std::min(batch, recs.size() - i);
        for (size_t k = 0; k < n; ++k) {
            auto& r = recs[i + k];
            const char* argv[] = {"XADD", stream.data(), "*", "offset", r.offset.data(), "timestamp", r.ts.data(),
                                  "key", r.key.data(), "value", value.data()};
            size_t lens[] = {4, stream.size(), 1, 6, r.offset.size(), 9, r.ts.size(), 3, r.key.size(), 5, value.size()};
            redisAppendCommandArgv(c, 11, argv, lens);
        }
        for (size_t k = 0; k < n; ++k) {
            void* reply = nullptr;
            if (redisGetReply(c, &reply) != REDIS_OK) die(fmt::format("peer XADD: {}", c->errstr));
            if (static_cast<redisReply*>(reply)->type == REDIS_REPLY_ERROR)
                die(fmt::format("peer XADD: {}", static_cast<redisReply*>(reply)->str));
            freeReplyObject(reply);
        }
    }
    auto p = m.done();
    redisFree(c);
    return p;
}

/// Peer: raw hiredis XRANGE of `stream`, `count` entries per round trip, every field looked at.
phase peer_xrange(uint16_t port, pid_t pid, const std::string& stream, size_t records, size_t count) {
    redisContext* c = raw_connect(port);
    meter m(pid);
    std::string from = "-", cnt = std::to_string(count);
    size_t got = 0, bytes = 0;
    while (got < records) {
        const char* argv[] = {"XRANGE", stream.data(), from.data(), "+", "COUNT", cnt.data()};
        size_t lens[] = {6, stream.size(), from.size(), 1, 5, cnt.size()};
        auto* r = static_cast<redisReply*>(redisCommandArgv(c, 6, argv, lens));
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) die("peer XRANGE failed");
        for (size_t i = 0; i < r->elements; ++i) {
            auto* e = r->element[i];
            auto* f = e->element[1];
            for (size_t k = 0; k < f->elements; ++k) bytes += f->element[k]->len;
        }
        auto* last = r->element[r->elements - 1]->element[0];
        from.assign(1, '(');
        from.append(last->str, last->len);
        got += r->elements;
        freeReplyObject(r);
    }
    auto p = m.done();
    if (bytes == 0) die("peer XRANGE read nothing");
    redisFree(c);
    return p;
}

struct run_result {
    phase peer_add, produce, peer_read, fetch;
};

run_result one_run(size_t records, size_t batch, const std::vector<rec>& recs, const std::string& value,
                   const std::vector<byte_buffer>& reqs, bool do_produce_peer, bool do_fetch, bool do_read_peer,
                   int fetch_passes) {
    char tmpl[] = "/tmp/floe-bench-redis-XXXXXX";
    std::filesystem::path dir = ::mkdtemp(tmpl);
    auto server = redis::fixture::server::start(dir);
    if (!server) die(fmt::format("redis-server: {}", server.error().message()));
    run_result out;
    if (do_produce_peer) out.peer_add = peer_xadd(server->port(), server->pid(), recs, value, batch);

    auto ro = redis::parse_uris(server->uri());
    auto client = redis::client::connect(*ro);
    if (!client) die(fmt::format("connect: {}", client.error().message()));
    redis_tier::options o;
    o.redis = *ro;
    o.ns = "bench";
    auto tier = redis_tier::open(std::shared_ptr<redis::client>(std::move(*client)), o);
    if (!tier) die(fmt::format("tier: {}", tier.error().message()));
    if (auto c = (*tier)->create_topic("bench", 1); !c) die(fmt::format("topic: {}", c.error().message()));
    auto p = (*tier)->partition("bench", 0);

    {
        auto copies = reqs; // append patches offsets in place
        meter m(server->pid());
        for (auto& b : copies) {
            auto r = p->append(std::span<uint8_t>(b.data(), b.size()), {.crc_checked = true});
            if (!r) die(fmt::format("append: {}", r.error().message()));
            if (r->status != log::append_status::ok) die(fmt::format("append refused: {}", r->message));
        }
        out.produce = m.done();
    }

    // Extra fetch passes first (not timed): for profiling the read path with perf.
    for (int pass = 0; pass < fetch_passes; ++pass)
        for (int64_t next = 0; next < int64_t(records);) {
            auto rd = p->read(kafka_offset(next), {.max_bytes = 1 << 20});
            if (!rd || rd->slices.empty()) die("read");
            next = rd->slices.back().last_offset() + 1;
        }
    if (do_fetch) {
        // What the tier reads per round trip for a 1 MiB answer of these records.
        if (do_read_peer)
            out.peer_read = peer_xrange(server->port(), server->pid(), "{bench:bench:0}:stream", records, 8000);
        std::vector<log::file_slice> got;
        meter m(server->pid());
        int64_t next = 0;
        while (next < int64_t(records)) {
            auto rd = p->read(kafka_offset(next), {.max_bytes = 1 << 20});
            if (!rd) die(fmt::format("read at {}: {}", next, rd.error().message()));
            if (rd->slices.empty()) die(fmt::format("read at {}: nothing", next));
            next = rd->slices.back().last_offset() + 1;
            for (auto& s : rd->slices) got.push_back(std::move(s));
        }
        out.fetch = m.done();
        // Every record back, in order, with its key and value.
        int64_t expect = 0;
        std::vector<log::header_view> hs;
        for (auto& s : got) {
            byte_buffer b;
            if (!s.copy_to(b)) die("copy_to");
            auto walked = log::for_each_batch(bytes_view(b), true, [&](const log::record_batch_header& h, bytes_view bb) {
                auto ok = log::for_each_record_body(h, bb.subspan(log::batch_layout::header_size),
                                                    [&](int32_t, bytes_view body) -> result<void> {
                    auto v = FLOE_TRY(log::decode_record(h, body, hs));
                    if (v.offset != expect || !v.key || *v.key != recs[size_t(expect)].key || !v.value || *v.value != value)
                        return fail(errc::corrupt, "record {} differs", expect);
                    ++expect;
                    return {};
                });
                if (!ok) die(ok.error().message());
                return true;
            });
            if (!walked) die(walked.error().message());
        }
        if (expect != int64_t(records)) die(fmt::format("fetched {} records of {}", expect, records));
    }
    (void)(*tier)->close();
    server->stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return out;
}

struct stat3 {
    double min, median, max;
};
stat3 stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2], v.back()};
}

} // namespace

int main(int argc, char** argv) {
    size_t records = 200000, batch = 500, runs = 1;
    std::string only;
    bool no_peers = false; // for profiling the tier alone
    int fetch_passes = 0;  // untimed reads of everything before the timed one (profiling)
    std::vector<std::string> pos;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = size_t(std::atoll(argv[++i]));
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--no-peers") no_peers = true;
        else if (a == "--fetch-passes" && i + 1 < argc) fetch_passes = std::atoi(argv[++i]);
        else if (a.starts_with("--")) die(fmt::format("unknown option {}", a));
        else pos.push_back(a);
    }
    if (pos.size() > 0) records = size_t(std::atoll(pos[0].c_str()));
    if (pos.size() > 1) batch = size_t(std::atoll(pos[1].c_str()));
    if (records == 0 || batch == 0 || runs == 0) die("records, batch and runs must be > 0");
    if (!only.empty() && only != "produce" && only != "fetch") die("--only takes produce or fetch");

    const std::string value(100, 'v');
    const int64_t ts = 1700000000000;
    std::vector<rec> recs(records);
    for (size_t i = 0; i < records; ++i) recs[i] = {std::to_string(i), std::to_string(ts), fmt::format("k{}", i)};
    std::vector<byte_buffer> reqs;
    for (size_t at = 0; at < records; at += batch) {
        std::vector<log::testing::test_record> rs;
        for (size_t i = at; i < std::min(records, at + batch); ++i) {
            log::testing::test_record r;
            r.key = recs[i].key;
            r.value = value;
            r.timestamp_ms = ts;
            rs.push_back(std::move(r));
        }
        byte_buffer b;
        log::testing::append_batch(b, rs);
        reqs.push_back(std::move(b));
    }

    fmt::print("records={} batch={} value=100B partition=1 runs={}\n", records, batch, runs);
    fmt::print("{:>3} | {:>10} {:>10} {:>6} | {:>10} {:>10} {:>6} | cpu us/rec client+server: xadd produce xrange fetch\n",
               "run", "peer XADD", "produce", "ratio", "peer XRNG", "fetch", "ratio");
    std::vector<double> peer_add, produce, ratio_p, peer_read, fetch, ratio_f;
    const double n = double(records);
    for (size_t r = 0; r < runs; ++r) {
        auto res = one_run(records, batch, recs, value, reqs, only != "fetch" && !no_peers, only != "produce", !no_peers,
                           fetch_passes);
        auto us = [&](const phase& p) { return fmt::format("{:.2f}+{:.2f}", p.client_cpu / n * 1e6, p.server_cpu / n * 1e6); };
        double pa = res.peer_add.wall > 0 ? n / res.peer_add.wall : 0, pr = n / res.produce.wall;
        double xr = res.peer_read.wall > 0 ? n / res.peer_read.wall : 0;
        double fe = res.fetch.wall > 0 ? n / res.fetch.wall : 0;
        fmt::print("{:>3} | {:>10.0f} {:>10.0f} {:>5.2f}x | {:>10.0f} {:>10.0f} {:>5.2f}x | {} {} {} {}\n", r + 1, pa, pr,
                   pa > 0 ? pr / pa : 0, xr, fe, xr > 0 ? fe / xr : 0, us(res.peer_add), us(res.produce),
                   us(res.peer_read), us(res.fetch));
        peer_add.push_back(pa);
        produce.push_back(pr);
        ratio_p.push_back(pa > 0 ? pr / pa : 0);
        peer_read.push_back(xr);
        fetch.push_back(fe);
        ratio_f.push_back(xr > 0 ? fe / xr : 0);
    }
    auto line = [](std::string_view what, const std::vector<double>& v, bool ratio) {
        auto s = stats(v);
        if (ratio) fmt::print("{:<34} min {:.2f}x  median {:.2f}x  max {:.2f}x\n", what, s.min, s.median, s.max);
        else fmt::print("{:<34} min {:>9.0f}  median {:>9.0f}  max {:>9.0f} rec/s\n", what, s.min, s.median, s.max);
    };
    if (only != "fetch") {
        line("redis-server pipelined XADD (peer)", peer_add, false);
        line("floe produce via redis tier", produce, false);
        line("produce / peer XADD", ratio_p, true);
    }
    if (only != "produce") {
        line("redis-server XRANGE (peer)", peer_read, false);
        line("floe fetch via redis tier", fetch, false);
        line("fetch / peer XRANGE", ratio_f, true);
    }
    return 0;
}
