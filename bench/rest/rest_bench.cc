// Iceberg REST catalog figures: appends of one small data file each committed (a) straight
// to the SQLite catalog and (b) through Floe's REST client to Floe's own REST server (an
// http::server with iceberg_rest over another SQLite catalog, on loopback, as `floe serve` runs
// it), commits/s of each measured in the same run; then loadTable latency (p50/p99) from the
// server as the REST client sees it, in full and conditional (If-None-Match, answered 304).
// usage: iceberg_rest_bench [COMMITS] [LOADS]
#include "base/uuid.h"
#include "http/iceberg_rest.h"
#include "http/server.h"
#include "iceberg/bounds.h"
#include "iceberg/rest_catalog.h"
#include "iceberg/table.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sys/resource.h>

using namespace floe;
using namespace floe::iceberg;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

data_file small_file(const std::string& location, int i) {
    data_file f;
    f.file_path = fmt::format("{}/data/stream_key=bench-0/segment-{}-{}.parquet", location, i, uuid::random().to_string());
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
    return f;
}

double cpu_ms() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto ms = [](const timeval& tv) { return tv.tv_sec * 1e3 + tv.tv_usec / 1e3; };
    return ms(ru.ru_utime) + ms(ru.ru_stime);
}

struct rate {
    double commits_per_s = 0;
    double cpu_ms_per_commit = 0;  ///< the whole process: client and (in-process) server
};

/// Commits/s of `commits` appends to `t` through `cat`.
result<rate> appends(catalog& cat, file_io& io, const table_ident& t, const std::string& location, int commits) {
    FLOE_TRY(create_table_if_missing(cat, io, t, location));
    auto start = now_ms();
    auto cpu = cpu_ms();
    for (int i = 0; i < commits; ++i) {
        append_request req;
        req.files.push_back(small_file(location, i));
        FLOE_TRY(append_files(cat, io, t, std::move(req)));
    }
    return rate{commits / ((now_ms() - start) / 1000), (cpu_ms() - cpu) / commits};
}

} // namespace

int main(int argc, char** argv) {
    int commits = argc > 1 ? std::atoi(argv[1]) : 500;
    int loads = argc > 2 ? std::atoi(argv[2]) : 2000;
    auto dir = std::filesystem::temp_directory_path() / fmt::format("floe-rest-bench-{}", uuid::random().to_string());
    std::filesystem::create_directories(dir);
    auto io = std::make_shared<local_file_io>();
    auto warehouse = file_uri((dir / "warehouse").string());

    // (a) the SQLite catalog directly.
    auto direct = open_sql_catalog("sqlite://" + (dir / "direct.db").string(), "floe");
    if (!direct) return std::fprintf(stderr, "%s\n", direct.error().message().c_str()), 1;
    auto sql_rate = appends(**direct, *io, {"floe", "direct"}, warehouse + "/floe/direct", commits);
    if (!sql_rate) return std::fprintf(stderr, "%s\n", sql_rate.error().message().c_str()), 1;

    // (b) the REST client to Floe's REST server over its own SQLite catalog.
    auto served = open_sql_catalog("sqlite://" + (dir / "served.db").string(), "floe");
    if (!served) return std::fprintf(stderr, "%s\n", served.error().message().c_str()), 1;
    http::server srv({.host = "127.0.0.1", .port = 0, .threads = 4});
    http::iceberg_rest rest(std::shared_ptr<catalog>(std::move(*served)), io, {.warehouse = warehouse});
    rest.add_routes(srv);
    if (auto r = srv.start(); !r) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
    rest_catalog_options ro;
    ro.uri = fmt::format("http://127.0.0.1:{}/iceberg", srv.port());
    auto client = rest_catalog::open(ro);
    if (!client) return std::fprintf(stderr, "%s\n", client.error().message().c_str()), 1;
    auto rest_rate = appends(**client, *io, {"floe", "via_rest"}, warehouse + "/floe/via_rest", commits);
    if (!rest_rate) return std::fprintf(stderr, "%s\n", rest_rate.error().message().c_str()), 1;

    // loadTable latency on the table with `commits` snapshots: in full (a client that sends no
    // If-None-Match), and conditional (the client's default: 304 while the table is unchanged).
    struct latency {
        double p50 = 0, p99 = 0, max = 0, cpu_ms = 0;
    };
    auto measure = [&](catalog& cat) -> std::optional<latency> {
        auto load_cpu = cpu_ms();
        std::vector<double> ms;
        ms.reserve(static_cast<size_t>(loads));
        for (int i = 0; i < loads; ++i) {
            auto t0 = now_ms();
            auto loc = cat.metadata_location({"floe", "via_rest"});
            if (!loc || !*loc) return std::nullopt;
            ms.push_back(now_ms() - t0);
        }
        latency l;
        l.cpu_ms = (cpu_ms() - load_cpu) / loads;
        std::sort(ms.begin(), ms.end());
        auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * static_cast<double>(ms.size())))]; };
        l.p50 = pct(0.50);
        l.p99 = pct(0.99);
        l.max = ms.back();
        return l;
    };
    auto full_opts = ro;
    full_opts.conditional_loads = false;
    auto full_client = rest_catalog::open(full_opts);
    if (!full_client) return std::fprintf(stderr, "%s\n", full_client.error().message().c_str()), 1;
    auto full = measure(**full_client);
    auto conditional = measure(**client);
    if (!full || !conditional) return std::fprintf(stderr, "loadTable failed\n"), 1;
    auto meta_bytes = std::filesystem::file_size(
        std::string(*(*client)->metadata_location({"floe", "via_rest"}).value()).substr(std::string("file://").size()));
    std::printf("appends of one small file, %d commits each:\n", commits);
    std::printf("  SQLite catalog directly          %8.1f commits/s  %6.2f CPU ms/commit\n", sql_rate->commits_per_s,
                sql_rate->cpu_ms_per_commit);
    std::printf("  REST client -> Floe REST server  %8.1f commits/s  %6.2f CPU ms/commit (client + server)  "
                "(%.2fx the direct rate, %.2fx its CPU)\n",
                rest_rate->commits_per_s, rest_rate->cpu_ms_per_commit,
                rest_rate->commits_per_s / sql_rate->commits_per_s,
                rest_rate->cpu_ms_per_commit / sql_rate->cpu_ms_per_commit);
    std::printf("loadTable from Floe's REST server (%d snapshots, metadata %zu bytes), %d requests each:\n", commits,
                static_cast<size_t>(meta_bytes), loads);
    for (auto& [name, l] : {std::pair{"in full    ", *full}, std::pair{"conditional", *conditional}})
        std::printf("  %s  p50 %.3f ms   p99 %.3f ms   max %.3f ms   %.2f CPU ms/request (client + server)\n", name,
                    l.p50, l.p99, l.max, l.cpu_ms);
    srv.stop();
    std::filesystem::remove_all(dir);
    return 0;
}
