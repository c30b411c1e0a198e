// Micro benchmarks of the local tier (src/log): append throughput with ~100-byte records
// batched as clients send them (librdkafka fills batches of hundreds to thousands of records),
// beside the named peer measured in the same run: a bare pwrite() append of the same bytes to a
// file, the most any segment log can do on this disk. Also acks=all (append + fsync, with and
// without group commit across producers) and the fetch path (read + pread of whole batches).
#include "log/log_manager.h"
#include "log/partition_log.h"
#include "log/testing/batch_builder.h"
#include "testkit/datagen.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <condition_variable>
#include <fcntl.h>
#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace floe;
using namespace floe::log;
namespace fs = std::filesystem;

namespace {

fs::path bench_dir() {
    auto p = fs::temp_directory_path() / fmt::format("floe-log-bench-{}", ::getpid());
    fs::create_directories(p);
    return p;
}

// One client-style batch of `n` datagen records with ~100-byte values.
byte_buffer client_batch(size_t n, uint64_t seed) {
    testkit::datagen g({.seed = seed, .value_size = 100});
    std::vector<testing::test_record> rs;
    rs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto r = g.next();
        testing::test_record t;
        t.key = r.key;
        t.value = r.value;
        t.timestamp_ms = r.timestamp_ms;
        for (auto& h : r.headers) t.headers.emplace_back(h.key, h.value);
        rs.push_back(std::move(t));
    }
    byte_buffer b;
    testing::append_batch(b, rs);
    return b;
}

std::shared_ptr<partition_log> fresh_log(const fs::path& dir, topic_config cfg = {}) {
    fs::remove_all(dir);
    partition_log_options o;
    o.dir = dir;
    o.tp = {"bench", 0};
    o.config = cfg;
    return *partition_log::open(o);
}

void report(benchmark::State& st, size_t records_per_iter, size_t bytes_per_iter) {
    st.counters["records/s"] = benchmark::Counter(double(st.iterations() * records_per_iter),
                                                  benchmark::Counter::kIsRate);
    st.SetBytesProcessed(int64_t(st.iterations() * bytes_per_iter));
}

// acks=1: append only (data in the page cache, as Kafka acknowledges acks=1).
void log_append(benchmark::State& st) {
    size_t n = size_t(st.range(0));
    auto dir = bench_dir() / "append";
    topic_config cfg;
    cfg.segment_bytes = 256 << 20;
    auto l = fresh_log(dir, cfg); // no flusher: sealing a rolled segment (fsync) runs inline
    auto batch = client_batch(n, 1);
    append_options ao{.crc_checked = st.range(1) != 0};
    for (auto _ : st) {
        auto r = l->append(batch, ao);
        if (!r || r->status != append_status::ok) st.SkipWithError("append failed");
    }
    report(st, n, batch.size());
    l->close();
    fs::remove_all(dir);
}
// Second argument 1: the caller (the kafka module) already checked the CRC.
BENCHMARK(log_append)->Args({100, 0})->Args({1000, 0})->Args({1000, 1})->MinTime(1.0)->UseRealTime();

// The peer: the same bytes appended with bare pwrite() to one file, no CRC, no index.
void peer_raw_pwrite(benchmark::State& st) {
    size_t n = size_t(st.range(0));
    auto dir = bench_dir() / "raw";
    fs::remove_all(dir);
    fs::create_directories(dir);
    int fd = ::open((dir / "raw.log").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    auto batch = client_batch(n, 1);
    uint64_t pos = 0;
    for (auto _ : st) {
        if (pos > (256u << 20)) { // roll like the log does, so page cache use is comparable
            ::ftruncate(fd, 0);
            pos = 0;
        }
        if (::pwrite(fd, batch.data(), batch.size(), off_t(pos)) != ssize_t(batch.size()))
            st.SkipWithError("pwrite failed");
        pos += batch.size();
    }
    report(st, n, batch.size());
    ::close(fd);
    fs::remove_all(dir);
}
BENCHMARK(peer_raw_pwrite)->Arg(100)->Arg(1000)->MinTime(1.0)->UseRealTime();

// CPU cost the log adds per batch before writing: header parse + CRC-32C check.
void batch_validate(benchmark::State& st) {
    auto batch = client_batch(size_t(st.range(0)), 1);
    for (auto _ : st) benchmark::DoNotOptimize(validate_batch(batch));
    report(st, size_t(st.range(0)), batch.size());
}
BENCHMARK(batch_validate)->Arg(1000);

// acks=all, one producer: append then wait for the fsync of that batch.
void log_append_fsync_each(benchmark::State& st) {
    size_t n = size_t(st.range(0));
    auto dir = bench_dir() / "fsync";
    auto l = fresh_log(dir);
    auto batch = client_batch(n, 1);
    for (auto _ : st) {
        auto r = l->append(batch);
        bool ok = false;
        l->when_durable(r->last_offset, [&](result<void> d) { ok = bool(d); });
        if (!ok) st.SkipWithError("not durable");
    }
    report(st, n, batch.size());
    l->close();
    fs::remove_all(dir);
}
BENCHMARK(log_append_fsync_each)->Arg(1000)->MinTime(1.0)->UseRealTime();

// acks=all, 4 producers on 4 partitions sharing the log_manager's group-commit flusher: each
// producer appends and waits for its batch to be durable before sending the next.
void log_append_group_commit(benchmark::State& st) {
    size_t n = size_t(st.range(0));
    constexpr int producers = 4;
    auto root = bench_dir() / "group";
    fs::remove_all(root);
    log_manager_options o;
    o.data_dir = root;
    auto m = std::move(*log_manager::open(o));
    (void)m->create_topic("g", producers);
    auto batch = client_batch(n, 1);
    std::atomic<int64_t> total{0};
    for (auto _ : st) {
        std::vector<std::thread> ts;
        for (int p = 0; p < producers; ++p)
            ts.emplace_back([&, p] {
                auto part = m->partition("g", p);
                auto b = batch;
                for (int i = 0; i < 50; ++i) {
                    auto r = part->append(b);
                    std::mutex mu;
                    std::condition_variable cv;
                    bool done = false;
                    part->when_durable(r->last_offset, [&](result<void>) {
                        std::lock_guard g(mu);
                        done = true;
                        cv.notify_one();
                    });
                    std::unique_lock l(mu);
                    cv.wait(l, [&] { return done; });
                    total += int64_t(n);
                }
            });
        for (auto& t : ts) t.join();
    }
    st.counters["records/s"] = benchmark::Counter(double(total.load()), benchmark::Counter::kIsRate);
    m->close();
    fs::remove_all(root);
}
BENCHMARK(log_append_group_commit)->Arg(1000)->Iterations(3)->UseRealTime();

// Fetch path: read 1 MiB of whole batches from an offset and pread them into a buffer.
void log_read(benchmark::State& st) {
    auto dir = bench_dir() / "read";
    topic_config cfg;
    cfg.segment_bytes = 512 << 20;
    auto l = fresh_log(dir, cfg);
    auto batch = client_batch(1000, 1);
    for (int i = 0; i < 400; ++i) (void)l->append(batch); // ~400k records
    int64_t end = l->log_end_offset()();
    byte_buffer buf;
    buf.reserve(2 << 20);
    int64_t at = 0;
    size_t records = 0, bytes = 0;
    for (auto _ : st) {
        auto r = l->read(kafka_offset(at), {.max_bytes = 1 << 20});
        buf.clear();
        (void)r->copy_to(buf);
        at = r->slices.back().last_offset() + 1;
        records += size_t(r->slices.back().last_offset() - r->slices.front().first_offset() + 1);
        bytes += buf.size();
        if (at >= end) at = 0;
    }
    st.counters["records/s"] = benchmark::Counter(double(records), benchmark::Counter::kIsRate);
    st.SetBytesProcessed(int64_t(bytes));
    l->close();
    fs::remove_all(dir);
}
BENCHMARK(log_read)->MinTime(1.0)->UseRealTime();

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::error_code ec;
    fs::remove_all(bench_dir(), ec);
    return 0;
}
