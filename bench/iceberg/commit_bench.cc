// Commits N appends of one small data file each and prints commits/s and how the time of one
// commit grows with table history (per bucket of 100 commits). The metadata of the last version
// is cached and each snapshot's JSON kept, so the CPU cost per commit stays flat; what still
// grows with history is the size of the metadata file written (and fsynced) per commit, which is
// shown apart as the wall time spent in storage writes.
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <sys/resource.h>

using namespace floe;
using namespace floe::iceberg;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// local_file_io, timing the calls that write (temp file, write, fsync, rename, fsync of the
/// directory; copy = hard link, rename, fsync of the directory): the wall-clock part of a commit
/// that is storage, not CPU.
class timed_file_io final : public file_io {
public:
    double write_ms = 0;
    int64_t write_bytes = 0;
    result<byte_buffer> read(std::string_view uri) override { return _io.read(uri); }
    result<void> write(std::string_view uri, bytes_view data) override {
        auto t = now_ms();
        auto r = _io.write(uri, data);
        write_ms += now_ms() - t;
        write_bytes += static_cast<int64_t>(data.size());
        return r;
    }
    result<void> create_new(std::string_view uri, bytes_view data) override {
        auto t = now_ms();
        auto r = _io.create_new(uri, data);
        write_ms += now_ms() - t;
        write_bytes += static_cast<int64_t>(data.size());
        return r;
    }
    result<void> copy(std::string_view from, std::string_view to) override {
        auto t = now_ms();
        auto r = _io.copy(from, to);
        write_ms += now_ms() - t;
        return r;
    }
    result<bool> exists(std::string_view uri) override { return _io.exists(uri); }
    result<void> remove(std::string_view uri) override { return _io.remove(uri); }
    result<std::vector<std::string>> list(std::string_view prefix) override {
        return _io.list(prefix);
    }

private:
    local_file_io _io;
};

struct cpu_times {
    double user_ms = 0, sys_ms = 0;
};

cpu_times cpu_now() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto ms = [](const timeval& tv) { return tv.tv_sec * 1e3 + tv.tv_usec / 1e3; };
    return {ms(ru.ru_utime), ms(ru.ru_stime)};
}

struct bucket_stats {
    // Per commit. The kernel splits a process's CPU time into user and system by sampling
    // ticks, so over short spans only their sum is exact.
    double wall_ms = 0, cpu_ms = 0, user_ms = 0, sys_ms = 0, io_ms = 0, io_kb = 0;
};

struct run_stats {
    double seconds = 0;
    std::vector<bucket_stats> buckets;
    size_t list_entries = 0;
    size_t metadata_bytes = 0;
    size_t metadata_files = 0;
    double parse_ms = 0, cached_load_ms = 0;
};

result<run_stats> run(const std::filesystem::path& dir, int commits, bool merge,
                      const std::map<std::string, std::string>& properties) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto cat = FLOE_TRY(open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe"));
    timed_file_io io;
    table_ident t{"floe", "bench"};
    auto location = file_uri((dir / "warehouse/floe/bench").string());
    FLOE_TRY(create_table_if_missing(*cat, io, t, location, properties));
    commit_options o;
    if (!merge) o.merge_min_count = SIZE_MAX;
    run_stats st;
    constexpr int bucket = 100;
    auto start = now_ms();
    auto bucket_start = start;
    auto cpu_start = cpu_now();
    double io_start = 0, io_bytes_start = 0;
    for (int i = 0; i < commits; ++i) {
        append_request req;
        data_file f;
        f.file_path = fmt::format("{}/data/stream_key=bench-0/segment-{}-{}.parquet", location, i,
                                  uuid::random().to_string());
        f.partition = {avro::datum::string("bench-0")};
        f.record_count = 1000;
        f.file_size_in_bytes = 65536;
        for (int id = 1; id <= 10; ++id) {
            f.column_sizes[id] = 4096;
            f.value_counts[id] = 1000;
            f.null_value_counts[id] = 0;
        }
        f.lower_bounds = {{field_ids::offset, serialize_long(i * 1000)}};
        f.upper_bounds = {{field_ids::offset, serialize_long(i * 1000 + 999)}};
        f.split_offsets = std::vector<int64_t>{4};
        req.files.push_back(std::move(f));
        FLOE_TRY(append_files(*cat, io, t, std::move(req), o));
        if ((i + 1) % bucket == 0) {
            auto now = now_ms();
            auto cpu = cpu_now();
            double user = (cpu.user_ms - cpu_start.user_ms) / bucket;
            double sys = (cpu.sys_ms - cpu_start.sys_ms) / bucket;
            st.buckets.push_back({(now - bucket_start) / bucket, user + sys, user, sys,
                                  (io.write_ms - io_start) / bucket,
                                  (double(io.write_bytes) - io_bytes_start) / 1024 / bucket});
            bucket_start = now;
            cpu_start = cpu;
            io_start = io.write_ms;
            io_bytes_start = double(io.write_bytes);
        }
    }
    st.seconds = (now_ms() - start) / 1000;
    // What a writer pays when another writer moved the table on: read and parse the whole file.
    auto parse_start = now_ms();
    constexpr int loads = 5;
    for (int i = 0; i < loads; ++i)
        FLOE_TRY(load_table(*cat, io, t, nullptr));
    st.parse_ms = (now_ms() - parse_start) / loads;
    auto cached_start = now_ms();
    for (int i = 0; i < loads; ++i)
        FLOE_TRY(load_table(*cat, io, t));
    st.cached_load_ms = (now_ms() - cached_start) / loads;
    auto loaded = FLOE_TRY(load_table(*cat, io, t, nullptr)); // parsed from the file, not the cache
    auto& m = loaded.metadata;
    st.metadata_bytes = FLOE_TRY(io.read(loaded.metadata_location)).size();
    for (auto& uri : FLOE_TRY(io.list(location + "/metadata/")))
        st.metadata_files += uri.ends_with(".metadata.json");
    auto list = FLOE_TRY(
        read_manifest_list(FLOE_TRY(io.read(m.current_snapshot()->manifest_list)), "list"));
    st.list_entries = list.size();
    auto live = FLOE_TRY(live_files(io, m));
    if (live.size() != static_cast<size_t>(commits)
        || m.snapshots.size() != static_cast<size_t>(commits))
        return fail(errc::internal, "{} live files, {} snapshots after {} commits", live.size(),
                    m.snapshots.size(), commits);
    std::filesystem::remove_all(dir);
    return st;
}

void print(const std::string& name, int commits, const run_stats& st) {
    fmt::print("{:<44} {:8.1f} commits/s  manifest list at the end: {} entries\n", name,
               commits / st.seconds, st.list_entries);
    fmt::print(
        "  last metadata file: {:.1f} KiB; {} metadata files in metadata/; load_table of it: "
        "{:.2f} ms read+parse, {:.2f} ms from the cache (a copy)\n",
        st.metadata_bytes / 1024.0, st.metadata_files, st.parse_ms, st.cached_load_ms);
    auto row = [&](const char* label, auto field) {
        std::string s;
        for (auto& b : st.buckets)
            s += fmt::format(" {:6.2f}", b.*field);
        fmt::print("  {:<30}{}\n", label, s);
    };
    row("wall ms per commit:", &bucket_stats::wall_ms);
    row("  of which storage writes:", &bucket_stats::io_ms);
    row("CPU ms per commit:", &bucket_stats::cpu_ms);
    row("  user (tick-sampled split):", &bucket_stats::user_ms);
    row("  system:", &bucket_stats::sys_ms);
    row("KiB written per commit:", &bucket_stats::io_kb);
    if (st.buckets.size() >= 2) {
        auto& a = st.buckets.front();
        auto& b = st.buckets.back();
        fmt::print("  last/first bucket: wall {:.2f}x, CPU {:.2f}x\n", b.wall_ms / a.wall_ms,
                   b.cpu_ms / a.cpu_ms);
    }
}

} // namespace

int main(int argc, char** argv) {
    int commits = 1000;
    std::string only;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--commits") == 0) commits = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--only") == 0)
            only = argv[i + 1]; // merge | no-merge | delete-old
    }
    auto dir = std::filesystem::temp_directory_path()
               / ("floe-iceberg-bench-" + uuid::random().to_string());
    fmt::print("iceberg commits: {} appends of one data file each, SQLite catalog, file:// "
               "warehouse in {}\n",
               commits, std::filesystem::temp_directory_path().string());
    fmt::print("per bucket of 100 commits; storage writes = wall time in file_io write/create_new "
               "(temp file, fsync, rename, directory fsync)\n");
    struct variant {
        const char* key;
        const char* name;
        bool merge;
        std::map<std::string, std::string> properties;
    };
    const variant variants[] = {
        {"merge", "floe (merge manifests, default)", true, {}},
        {"delete-old",
         "floe, write.metadata.delete-after-commit",
         true,
         {{"write.metadata.delete-after-commit.enabled", "true"}}},
        {"no-merge", "no merging (list grows)", false, {}},
    };
    for (auto& v : variants) {
        if (!only.empty() && only != v.key) continue;
        auto st = run(dir, commits, v.merge, v.properties);
        if (!st) {
            fmt::print(stderr, "benchmark failed: {}\n", st.error());
            return 1;
        }
        print(v.name, commits, *st);
    }
    return 0;
}
