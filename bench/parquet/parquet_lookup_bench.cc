// Lookups in one Parquet file of Floe's message table: find_by_key for present and absent
// keys and read_offset_range(limit 1) at random offsets, with the page index (only the pages
// needed) and without it (whole row groups, the path before the page index), in the same
// run. Prints p50/p99/mean latency and what was read.
//
// The file: --rows generated records (testkit datagen, 100 B values, keys "id-NNNNNNN" drawn
// from 10M ids so nearly unique), default writer options (zstd, 128 MiB row groups, 1 MiB
// pages), on local disk; reads go through pread (the OS page cache is warm after writing).
//
// usage: parquet_lookup_bench [--rows N] [--lookups N] [--old-lookups N] [--dir DIR]
//        [--reopen]   (also time lookups that open a new reader each time: footer + indexes)
//        [--row-group-mb N]   (writer row_group_size; default: the writer's default)

#include "format/parquet/tests/message_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

using namespace floe;
using namespace floe::parquet;

namespace {

struct figures {
    std::vector<double> us;
    size_t rows = 0;
    lookup_stats st; // summed
};

double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

void print(const char* what, const char* path, const figures& f) {
    double sum = 0;
    for (double x : f.us)
        sum += x;
    size_t n = f.us.size();
    double mean = n ? sum / static_cast<double>(n) : 0;
    auto per = [&](size_t x) { return n ? static_cast<double>(x) / static_cast<double>(n) : 0; };
    std::printf("%-22s %-24s %7zu %10.1f %10.1f %10.1f %8.2f %8.2f %8.2f %8.2f\n", what, path, n,
                pct(f.us, 0.5) / 1000, pct(f.us, 0.99) / 1000, mean / 1000, per(f.rows),
                per(f.st.read), per(f.st.pages_read),
                per(f.st.skipped_by_bloom + f.st.skipped_by_stats + f.st.skipped_by_dictionary
                    + f.st.skipped_by_page_index));
}

template<typename F> figures run(size_t n, F&& one) {
    figures f;
    f.us.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        lookup_stats st;
        size_t rows = one(i, st);
        auto t1 = std::chrono::steady_clock::now();
        f.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        f.rows += rows;
        f.st += st;
    }
    return f;
}

[[noreturn]] void die(const error& e) {
    std::fprintf(stderr, "%s\n", e.to_string().c_str());
    std::exit(1);
}

} // namespace

int main(int argc, char** argv) {
    size_t rows_n = 2'000'000, lookups = 10'000, old_lookups = 40;
    std::string dir = "/tmp/floe-parquet-lookup";
    bool reopen = false;
    writer_options wo;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : "0"; };
        if (a == "--rows")
            rows_n = std::stoul(next());
        else if (a == "--lookups")
            lookups = std::stoul(next());
        else if (a == "--old-lookups")
            old_lookups = std::stoul(next());
        else if (a == "--dir")
            dir = next();
        else if (a == "--reopen")
            reopen = true;
        else if (a == "--row-group-mb")
            wo.row_group_size = std::stoull(next()) << 20;
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    std::filesystem::create_directories(dir);
    std::string path = dir + "/lookup.parquet";
    auto rows =
        testing::generate_rows(rows_n, {.seed = 7, .value_size = 100, .distinct_keys = 10'000'000});
    auto summary = testing::write_rows(*open_file_sink(path), rows, wo);
    if (!summary) die(summary.error());
    std::printf("# %zu rows, %zu row groups (row_group_size %llu MiB), %.1f MB (zstd), page "
                "index: %s\n",
                rows_n, summary->split_offsets.size(),
                static_cast<unsigned long long>(wo.row_group_size >> 20),
                static_cast<double>(summary->file_size) / 1e6,
                summary->metadata.row_groups[0].columns[0].offset_index_offset ? "yes" : "no");

    // Keys and offsets to look up (deterministic).
    std::vector<std::string> present, absent;
    std::vector<int64_t> offsets;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    auto rnd = [&]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    while (present.size() < lookups) {
        auto& r = rows[rnd() % rows.size()];
        if (r.key) present.push_back(*r.key);
    }
    for (size_t i = 0; i < lookups; ++i) {
        // Inside the key range (same prefix), absent from the file: bloom filters decide.
        absent.push_back(fmt::format("id-{:07}x", rnd() % 10'000'000));
        offsets.push_back(static_cast<int64_t>(rnd() % rows_n));
    }
    std::vector<message_record>().swap(rows);

    auto open = [&](bool index) {
        reader_options o;
        o.use_page_index = index;
        auto r = message_reader::open(*open_file_source(path), {}, o);
        if (!r) die(r.error());
        return std::move(*r);
    };
    std::printf("# latency in ms; per lookup: rows found, row groups read, pages read (page index),"
                " row groups skipped\n");
    std::printf("%-22s %-24s %7s %10s %10s %10s %8s %8s %8s %8s\n", "lookup", "path", "n", "p50",
                "p99", "mean", "rows", "rg read", "pages", "skipped");
    struct mode {
        const char* name;
        bool index;
        size_t n;
    };
    for (auto m : {mode{"page index", true, lookups},
                   mode{"whole row groups", false, std::min(old_lookups, lookups)}}) {
        auto r = open(m.index);
        auto key_lookup = [&](const std::vector<std::string>& keys) {
            return [&](size_t i, lookup_stats& st) -> size_t {
                auto hits = r.find_by_key(keys[i], &st);
                if (!hits) die(hits.error());
                return hits->size();
            };
        };
        print("find_by_key present", m.name, run(m.n, key_lookup(present)));
        print("find_by_key absent", m.name, run(m.n, key_lookup(absent)));
        std::vector<message_record> out;
        print("read_offset_range(1)", m.name, run(m.n, [&](size_t i, lookup_stats& st) -> size_t {
                  out.clear();
                  auto n = r.read_offset_range(offsets[i], 1, out, &st);
                  if (!n) die(n.error());
                  if (*n != 1 || out[0].offset != offsets[i]) {
                      std::fprintf(stderr, "offset %lld: got %zu rows\n",
                                   static_cast<long long>(offsets[i]), *n);
                      std::exit(1);
                  }
                  return *n;
              }));
        std::fflush(stdout);
    }
    if (reopen) {
        // A new reader per lookup: footer, schema and the page indexes of the chunks touched
        // are read and decoded each time.
        size_t n = std::min<size_t>(lookups, 2000);
        print("find_by_key present", "page index, reopen", run(n, [&](size_t i, lookup_stats& st) {
                  auto r = open(true);
                  auto hits = r.find_by_key(present[i], &st);
                  if (!hits) die(hits.error());
                  return hits->size();
              }));
        print("read_offset_range(1)", "page index, reopen",
              run(n, [&](size_t i, lookup_stats& st) -> size_t {
                  auto r = open(true);
                  std::vector<message_record> out;
                  auto got = r.read_offset_range(offsets[i], 1, out, &st);
                  if (!got) die(got.error());
                  return *got;
              }));
    }
    return 0;
}
