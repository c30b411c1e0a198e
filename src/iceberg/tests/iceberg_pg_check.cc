// Against a real PostgreSQL (started by pg_catalog_test.sh): the SQL catalog's CAS, two
// concurrent writers committing 100 appends each to one table, once as threads (own
// connections) and once as separate processes, and the plain SQL lookup PyIceberg/JDBC do.
// After each run: all 200 snapshots on the main branch with strictly increasing sequence
// numbers, every data file and row there exactly once. Exits non-zero on the first failed check.
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"

#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace floe;
using namespace floe::iceberg;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fmt::print(stderr, "FAIL {}: ", #cond);                                                \
            fmt::print(stderr, __VA_ARGS__);                                                       \
            fmt::print(stderr, "\n");                                                              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

namespace {

constexpr int per_writer = 100; // issue #4: two writers x 100 commits
constexpr int64_t rows_per_file = 7;

// One writer's commits through its own connection; returns the number of failed commits.
int write_commits(const std::string& uri, const table_ident& t, const std::string& location,
                  int w) {
    local_file_io io;
    auto c = open_sql_catalog(uri, "floe");
    if (!c) {
        fmt::print(stderr, "connect: {}\n", c.error());
        return per_writer;
    }
    int failures = 0;
    for (int i = 0; i < per_writer; ++i) {
        append_request r;
        data_file f;
        f.file_path = fmt::format("{}/data/stream_key=s-{}/segment-{}-{}.parquet", location, w, i,
                                  uuid::random().to_string());
        f.partition = {avro::datum::string(fmt::format("s-{}", w))};
        f.record_count = rows_per_file;
        f.file_size_in_bytes = 700;
        f.lower_bounds = {{field_ids::offset, serialize_long(i * rows_per_file)}};
        f.upper_bounds = {
            {field_ids::offset, serialize_long(i * rows_per_file + rows_per_file - 1)}};
        r.files.push_back(std::move(f));
        if (auto res = append_files(**c, io, t, std::move(r)); !res) {
            fmt::print(stderr, "writer {} commit {} failed: {}\n", w, i, res.error());
            ++failures;
        }
    }
    return failures;
}

int check_table(catalog& cat, const table_ident& t) {
    local_file_io io;
    auto loaded = load_table(cat, io, t, nullptr); // the committed file, not a cached copy
    CHECK(loaded.has_value(), "{}", loaded ? "" : loaded.error().to_string());
    auto& m = loaded->metadata;
    CHECK(m.snapshots.size() == 2 * per_writer, "{} snapshots", m.snapshots.size());
    CHECK(m.last_sequence_number == 2 * per_writer, "last-sequence-number {}",
          m.last_sequence_number);
    int64_t seq = INT64_MAX;
    size_t chain = 0;
    for (auto* s = m.current_snapshot(); s;
         s = s->parent_snapshot_id ? m.find_snapshot(*s->parent_snapshot_id) : nullptr) {
        CHECK(s->sequence_number < seq, "sequence numbers must strictly decrease down the chain");
        seq = s->sequence_number;
        ++chain;
    }
    CHECK(chain == 2 * per_writer, "chain of {} snapshots", chain);
    auto live = live_files(io, m);
    CHECK(live.has_value(), "{}", live ? "" : live.error().to_string());
    std::set<std::string> paths;
    int64_t rows = 0;
    for (auto& e : *live) {
        paths.insert(e.file.file_path);
        rows += e.file.record_count;
        auto* added_by = e.snapshot_id ? m.find_snapshot(*e.snapshot_id) : nullptr;
        CHECK(added_by && e.sequence_number == added_by->sequence_number,
              "entry sequence number of {}", e.file.file_path);
    }
    CHECK(paths.size() == 2 * per_writer && live->size() == paths.size(), "{} live files",
          live->size());
    CHECK(rows == 2 * per_writer * rows_per_file, "{} rows", rows);
    CHECK(m.current_snapshot()->summary.at("total-records") == std::to_string(rows),
          "total-records");
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    std::string uri = argv[1], wh = argv[2];
    local_file_io io;
    auto cat = open_sql_catalog(uri, "floe");
    CHECK(cat.has_value(), "{}", cat ? "" : cat.error().to_string());

    // Threads: two writers in this process, each with its own connection.
    table_ident t{"floe", "pg_orders"};
    auto location = file_uri(wh + "/floe/pg_orders");
    auto created = create_table_if_missing(**cat, io, t, location);
    CHECK(created.has_value(), "{}", created ? "" : created.error().to_string());
    auto stale = (*cat)->swap(t, "file:///not/current.json", "file:///x.json");
    CHECK(!stale && stale.error().code() == errc::conflict, "stale swap must conflict");
    auto start = std::chrono::steady_clock::now();
    std::atomic<int> failures{0};
    std::thread a([&] { failures += write_commits(uri, t, location, 0); });
    std::thread b([&] { failures += write_commits(uri, t, location, 1); });
    a.join();
    b.join();
    CHECK(failures == 0, "{} commits failed", failures.load());
    if (int rc = check_table(**cat, t)) return rc;
    auto threads_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Processes: two forked writers, each with its own connection and metadata cache.
    table_ident tp{"floe", "pg_orders_proc"};
    auto location_p = file_uri(wh + "/floe/pg_orders_proc");
    created = create_table_if_missing(**cat, io, tp, location_p);
    CHECK(created.has_value(), "{}", created ? "" : created.error().to_string());
    start = std::chrono::steady_clock::now();
    std::vector<pid_t> kids;
    for (int w = 0; w < 2; ++w) {
        pid_t pid = fork();
        CHECK(pid >= 0, "fork");
        if (pid == 0) _exit(write_commits(uri, tp, location_p, w) == 0 ? 0 : 1);
        kids.push_back(pid);
    }
    for (auto pid : kids) {
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer process status {}", status);
    }
    if (int rc = check_table(**cat, tp)) return rc;
    auto procs_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // The lookup PyIceberg's SqlCatalog and Iceberg's JdbcCatalog run.
    auto loaded = load_table(**cat, io, t);
    CHECK(loaded.has_value(), "{}", loaded ? "" : loaded.error().to_string());
    PGconn* pg = PQconnectdb(uri.c_str());
    PGresult* r = PQexec(
        pg,
        "SELECT metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables "
        "WHERE catalog_name = 'floe' AND table_namespace = 'floe' AND table_name = 'pg_orders'");
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "catalog row");
    CHECK(loaded->metadata_location == PQgetvalue(r, 0, 0), "metadata_location");
    CHECK(std::string(PQgetvalue(r, 0, 2)) == "TABLE", "iceberg_type");
    PQclear(r);
    PQfinish(pg);
    fmt::print("ok: postgres catalog, 2 x {} concurrent commits as threads ({:.1f} s) and as "
               "processes ({:.1f} s)\n",
               per_writer, threads_s, procs_s);
    return 0;
}
