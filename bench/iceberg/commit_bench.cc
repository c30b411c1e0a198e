// Commits N appends of one small data file each and prints commits/s and how the time of one
// commit grows with table history (per bucket of 100 commits). With manifest merging the
// manifest list stays short, so the per-commit cost must stay flat apart from the metadata JSON
// itself (which grows with the snapshot list until snapshots are expired).
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"

#include <chrono>
#include <ctime>
#include <cstring>
#include <filesystem>

using namespace floe;
using namespace floe::iceberg;

namespace {

struct run_stats {
    double seconds = 0;
    std::vector<double> bucket_ms;      // mean wall time of a commit, per bucket
    std::vector<double> bucket_cpu_ms;  // mean CPU time of a commit, per bucket (no I/O waits)
    size_t list_entries = 0;
};

result<run_stats> run(const std::filesystem::path& dir, int commits, bool merge) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto cat = FLOE_TRY(open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe"));
    local_file_io io;
    table_ident t{"floe", "bench"};
    auto location = file_uri((dir / "warehouse/floe/bench").string());
    FLOE_TRY(create_table_if_missing(*cat, io, t, location));
    commit_options o;
    if (!merge) o.merge_min_count = SIZE_MAX;
    run_stats st;
    auto start = std::chrono::steady_clock::now();
    auto bucket_start = start;
    auto cpu_start = std::clock();
    constexpr int bucket = 100;
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
            auto now = std::chrono::steady_clock::now();
            st.bucket_ms.push_back(std::chrono::duration<double, std::milli>(now - bucket_start).count() / bucket);
            bucket_start = now;
            auto cpu = std::clock();
            st.bucket_cpu_ms.push_back(1000.0 * double(cpu - cpu_start) / CLOCKS_PER_SEC / bucket);
            cpu_start = cpu;
        }
    }
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto m = FLOE_TRY(load_table(*cat, io, t)).metadata;
    auto list = FLOE_TRY(read_manifest_list(FLOE_TRY(io.read(m.current_snapshot()->manifest_list)), "list"));
    st.list_entries = list.size();
    auto live = FLOE_TRY(live_files(io, m));
    if (live.size() != static_cast<size_t>(commits))
        return fail(errc::internal, "{} live files after {} commits", live.size(), commits);
    std::filesystem::remove_all(dir);
    return st;
}

} // namespace

int main(int argc, char** argv) {
    int commits = 1000;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--commits") == 0) commits = std::atoi(argv[i + 1]);
    auto dir = std::filesystem::temp_directory_path() / ("floe-iceberg-bench-" + uuid::random().to_string());
    fmt::print("iceberg commits: {} appends of one data file each, SQLite catalog, file:// warehouse in {}\n",
               commits, std::filesystem::temp_directory_path().string());
    for (bool merge : {true, false}) {
        auto st = run(dir, commits, merge);
        if (!st) {
            fmt::print(stderr, "benchmark failed: {}\n", st.error());
            return 1;
        }
        fmt::print("{:<32} {:8.1f} commits/s  manifest list at the end: {} entries\n",
                   merge ? "floe (merge manifests, default)" : "no merging (list grows)",
                   commits / st->seconds, st->list_entries);
        std::string wall, cpu;
        for (auto ms : st->bucket_ms) wall += fmt::format(" {:.2f}", ms);
        for (auto ms : st->bucket_cpu_ms) cpu += fmt::format(" {:.2f}", ms);
        fmt::print("  wall ms per commit, per 100 commits:{}\n", wall);
        fmt::print("  CPU  ms per commit, per 100 commits:{}\n", cpu);
        if (st->bucket_ms.size() >= 2)
            fmt::print("  last/first bucket: wall {:.2f}x, CPU {:.2f}x\n", st->bucket_ms.back() / st->bucket_ms.front(),
                       st->bucket_cpu_ms.back() / st->bucket_cpu_ms.front());
    }
    return 0;
}
