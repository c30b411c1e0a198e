// Against a real PostgreSQL (started by pg_catalog_test.sh): the SQL catalog's CAS, two
// concurrent writers (threads, own connections) committing 50 appends each, and the plain SQL
// lookup PyIceberg/JDBC do. Exits non-zero on the first failed check.
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"

#include <libpq-fe.h>

#include <atomic>
#include <set>
#include <thread>

using namespace floe;
using namespace floe::iceberg;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fmt::print(stderr, "FAIL {}: ", #cond);                                              \
            fmt::print(stderr, __VA_ARGS__);                                                     \
            fmt::print(stderr, "\n");                                                            \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    std::string uri = argv[1], wh = argv[2];
    local_file_io io;
    auto cat = open_sql_catalog(uri, "floe");
    CHECK(cat.has_value(), "{}", cat ? "" : cat.error().to_string());
    table_ident t{"floe", "pg_orders"};
    auto location = file_uri(wh + "/floe/pg_orders");
    auto created = create_table_if_missing(**cat, io, t, location);
    CHECK(created.has_value(), "{}", created ? "" : created.error().to_string());
    auto stale = (*cat)->swap(t, "file:///not/current.json", "file:///x.json");
    CHECK(!stale && stale.error().code() == errc::conflict, "stale swap must conflict");

    constexpr int per_writer = 50;
    std::atomic<int> failures{0};
    auto writer = [&](int w) {
        auto c = open_sql_catalog(uri, "floe");
        if (!c) {
            ++failures;
            return;
        }
        for (int i = 0; i < per_writer; ++i) {
            append_request r;
            data_file f;
            f.file_path = fmt::format("{}/data/stream_key=s-{}/segment-{}-{}.parquet", location, w, i,
                                      uuid::random().to_string());
            f.partition = {avro::datum::string(fmt::format("s-{}", w))};
            f.record_count = 7;
            f.file_size_in_bytes = 700;
            r.files.push_back(std::move(f));
            if (auto res = append_files(**c, io, t, std::move(r)); !res) {
                fmt::print(stderr, "commit failed: {}\n", res.error());
                ++failures;
            }
        }
    };
    std::thread a(writer, 0), b(writer, 1);
    a.join();
    b.join();
    CHECK(failures == 0, "{} commits failed", failures.load());

    auto loaded = load_table(**cat, io, t);
    CHECK(loaded.has_value(), "{}", loaded ? "" : loaded.error().to_string());
    auto& m = loaded->metadata;
    CHECK(m.snapshots.size() == 2 * per_writer, "{} snapshots", m.snapshots.size());
    CHECK(m.last_sequence_number == 2 * per_writer, "last-sequence-number {}", m.last_sequence_number);
    int64_t seq = INT64_MAX;
    size_t chain = 0;
    for (auto* s = m.current_snapshot(); s; s = s->parent_snapshot_id ? m.find_snapshot(*s->parent_snapshot_id) : nullptr) {
        CHECK(s->sequence_number < seq, "sequence numbers must strictly decrease down the chain");
        seq = s->sequence_number;
        ++chain;
    }
    CHECK(chain == 2 * per_writer, "chain of {} snapshots", chain);
    auto live = live_files(io, m);
    CHECK(live.has_value(), "{}", live ? "" : live.error().to_string());
    std::set<std::string> paths;
    for (auto& e : *live) paths.insert(e.file.file_path);
    CHECK(paths.size() == 2 * per_writer && live->size() == paths.size(), "{} live files", live->size());

    // The lookup PyIceberg's SqlCatalog and Iceberg's JdbcCatalog run.
    PGconn* pg = PQconnectdb(uri.c_str());
    PGresult* r = PQexec(pg, "SELECT metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables "
                             "WHERE catalog_name = 'floe' AND table_namespace = 'floe' AND table_name = 'pg_orders'");
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "catalog row");
    CHECK(loaded->metadata_location == PQgetvalue(r, 0, 0), "metadata_location");
    CHECK(std::string(PQgetvalue(r, 0, 2)) == "TABLE", "iceberg_type");
    PQclear(r);
    PQfinish(pg);
    fmt::print("ok: postgres catalog, {} concurrent commits, {} live files\n", 2 * per_writer, live->size());
    return 0;
}
