// Log cleaner throughput (issue 14): one compaction pass over a compacted partition of
// FLOE_CLEANER_BENCH_MIB (default 1024) MiB of sealed segments, in bytes of log read per second,
// beside two peers measured in the same run on the same files: the log's own sequential read
// (read() + pread of every batch, as a consumer from offset 0) and a plain copy of the segment
// files (read + write + fdatasync, what `cp` and a sync do). Records: ~100-byte values over
// 100,000 keys, 200 records per batch (uncompressed, then lz4), so a pass removes most records
// and re-encodes nearly every batch. Run: build/bench/bench_cleaner (bench/run calls it).
#include "log/batch_builder.h"
#include "log/cleaner.h"
#include "log/fs_util.h"
#include "log/partition_log.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <string>
#include <time.h>
#include <unistd.h>

using namespace floe;
using namespace floe::log;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace {

double secs_since(steady::time_point t) {
    return std::chrono::duration<double>(steady::now() - t).count();
}

// CPU seconds of the process (all threads: the cleaner's map pass has a reader thread): the
// machine may be shared, so rates per CPU second are printed beside the wall-clock ones.
double thread_cpu() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

struct timer {
    steady::time_point wall = steady::now();
    double cpu = thread_cpu();
};

struct result_row {
    const char* name;
    uint64_t bytes;
    double secs;
    double cpu_secs;
};

result_row row(const char* name, uint64_t bytes, const timer& t) {
    return {name, bytes, secs_since(t.wall), thread_cpu() - t.cpu};
}

void print(const result_row& r, const result_row* peer = nullptr) {
    double rate = double(r.bytes) / r.secs;
    std::printf("%-46s %7.1f MiB  wall %6.2f s %7.1f MiB/s  cpu %6.2f s %7.1f MiB/cpu-s", r.name,
                double(r.bytes) / 1048576.0, r.secs, rate / 1048576.0, r.cpu_secs,
                double(r.bytes) / r.cpu_secs / 1048576.0);
    if (peer) std::printf("  (%.2fx of the copy's wall rate)", rate / (double(peer->bytes) / peer->secs));
    std::printf("\n");
}

int run(compression_codec codec, const char* codec_name, uint64_t target) {
    auto dir = fs::temp_directory_path() / fmt::format("floe-cleaner-bench-{}", ::getpid());
    fs::remove_all(dir);
    topic_config cfg;
    cfg.cleanup_policy = "compact";
    cfg.segment_bytes = 128 << 20;
    cfg.min_cleanable_dirty_ratio = 0;
    partition_log_options o;
    o.dir = dir;
    o.tp = {"bench", 0};
    o.config = cfg;
    auto lr = partition_log::open(o);
    if (!lr) {
        std::fprintf(stderr, "open: %s\n", lr.error().message().c_str());
        return 1;
    }
    auto log = *lr;
    std::mt19937_64 rng(42);
    std::string value(100, 'v');
    batch_builder b;
    byte_buffer batch;
    uint64_t written = 0;
    int64_t offset = 0;
    while (written < target) {
        b.begin(0, codec);
        for (int i = 0; i < 200; ++i) {
            auto key = fmt::format("key-{:06}", rng() % 100'000);
            for (size_t j = 0; j < 8; ++j) value[j] = char('a' + (rng() % 26));
            b.add(i, 1'700'000'000'000 + offset, key, value);
            ++offset;
        }
        batch.clear();
        if (!b.finish(batch)) return 1;
        auto a = log->append(batch);
        if (!a || a->status != append_status::ok) return 1;
        written += batch.size();
    }
    if (!log->roll()) return 1;
    uint64_t sealed = 0;
    for (auto& s : log->sealed_segments()) sealed += s.size_bytes;
    std::printf("\n%s: %.1f MiB in %zu sealed segments, %lld records, 100,000 keys\n", codec_name,
                double(sealed) / 1048576.0, log->sealed_segments().size(), (long long)offset);

    // Peer 1: the log's sequential read, as a consumer from offset 0.
    timer t;
    uint64_t read_bytes = 0;
    {
        byte_buffer buf;
        int64_t at = 0;
        while (at < log->log_end_offset()()) {
            auto r = log->read(kafka_offset(at), {.max_bytes = 8 << 20});
            if (!r || r->slices.empty()) break;
            buf.clear();
            if (!r->copy_to(buf)) return 1;
            read_bytes += buf.size();
            at = r->slices.back().last_offset() + 1;
        }
    }
    auto seq = row("peer: log sequential read (read + pread)", read_bytes, t);

    // Peer 2: copying the segment files (read + write + fdatasync), as cp + sync.
    t = timer{};
    uint64_t copied = 0;
    {
        std::vector<uint8_t> buf(8 << 20);
        for (auto& s : log->sealed_segments()) {
            int in = ::open(s.path.c_str(), O_RDONLY);
            auto to = dir / "copy.tmp";
            int out = ::open(to.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
            if (in < 0 || out < 0) return 1;
            for (;;) {
                auto n = ::read(in, buf.data(), buf.size());
                if (n <= 0) break;
                if (::write(out, buf.data(), size_t(n)) != n) return 1;
                copied += uint64_t(n);
            }
            ::fdatasync(out);
            ::close(in);
            ::close(out);
            fs::remove(to);
        }
    }
    auto cp = row("peer: copy of the segment files + fdatasync", copied, t);

    // The cleaner: one pass over everything sealed.
    log_cleaner cleaner({});
    t = timer{};
    auto st = cleaner.clean(*log);
    if (!st || !st->cleaned) {
        std::fprintf(stderr, "cleaner: %s\n", st ? st->skipped.c_str() : st.error().message().c_str());
        return 1;
    }
    // The figure: bytes of log compacted per second (the pass reads them twice: key map, rewrite).
    auto cl = row("log cleaner pass (log bytes cleaned)", sealed, t);
    print(seq);
    print(cp);
    print(cl, &cp);
    std::printf("cleaner: %llu of %llu records removed, %.1f MiB read, %.1f MiB written, "
                "%zu segments rewritten\n",
                (unsigned long long)st->records_removed, (unsigned long long)st->records_read,
                double(st->bytes_read) / 1048576.0, double(st->bytes_written) / 1048576.0,
                st->segments_rewritten);
    log->close();
    fs::remove_all(dir);
    return 0;
}

} // namespace

int main() {
    uint64_t mib = 1024;
    if (auto* e = std::getenv("FLOE_CLEANER_BENCH_MIB")) mib = std::strtoull(e, nullptr, 10);
    spdlog::set_level(spdlog::level::warn);
    std::printf("# log cleaner throughput, %llu MiB compacted log (temp dir %s)\n",
                (unsigned long long)mib, fs::temp_directory_path().c_str());
    // FLOE_CLEANER_BENCH_CODEC=none|lz4 runs one of the two (while iterating on one).
    std::string only = std::getenv("FLOE_CLEANER_BENCH_CODEC") ? std::getenv("FLOE_CLEANER_BENCH_CODEC") : "";
    if (only.empty() || only == "none")
        if (int rc = run(compression_codec::none, "uncompressed", mib << 20)) return rc;
    if (only.empty() || only == "lz4") return run(compression_codec::lz4, "lz4", mib << 20);
    return 0;
}
