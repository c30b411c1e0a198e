// floe-bench-maintenance: what table maintenance buys, measured against the table before it.
//  1. Small files: --files appends of --rows-per-file rows each through the lake's writer (the
//     offload path: Parquet file + Iceberg commit per append), then compaction of them (one
//     thread: read + rewrite); prints both rates, and writes the file lists before and after
//     (<dir>/small.json, <dir>/compacted.json) for DuckDB (duckdb_query.mjs) to query.
//  2. Scan planning at --commits commits: the table that many appends of one data file each
//     leave without manifest merging at commit (one manifest per append; older snapshots
//     expired), built directly (see planning()); scan planning (metadata -> manifest list ->
//     manifests -> live files, as table_reader does) timed before and after rewrite_manifests.
//   floe-bench-maintenance [--dir D] [--files 2000] [--rows-per-file 500] [--commits 10000]
#include "base/clock.h"
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"
#include "lake/iceberg_lake.h"
#include "maintenance/compact.h"
#include "iceberg/manifest.h"
#include "maintenance/manifests.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace floe;
namespace fs = std::filesystem;

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void die(const error& e) {
    std::fprintf(stderr, "floe-bench-maintenance: %s\n", e.to_string().c_str());
    std::exit(1);
}

template <class T>
T ok(result<T> r) {
    if (!r) die(r.error());
    return std::move(*r);
}
void ok(result<void> r) {
    if (!r) die(r.error());
}

void write_list(iceberg::file_io& io, const iceberg::table_metadata& m, const fs::path& out) {
    auto live = ok(iceberg::live_files(io, m));
    std::ofstream f(out);
    f << "{\"files\":[";
    for (size_t i = 0; i < live.size(); ++i)
        f << (i ? "," : "") << "{\"path\":\"" << ok(iceberg::local_path(live[i].file.file_path)) << "\",\"size\":"
          << live[i].file.file_size_in_bytes << "}";
    f << "]}\n";
}

// Part 1: small files, compaction, file lists for DuckDB.
void small_files(const fs::path& dir, int files, int rows_per_file) {
    auto cat = std::shared_ptr<iceberg::catalog>(ok(iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe")));
    auto io = std::make_shared<iceberg::local_file_io>();
    lake::lake_options o;
    o.warehouse = "file://" + (dir / "warehouse").string();
    lake::iceberg_lake lake(cat, io, o);
    auto table = ok(lake.table_for_topic("clicks"));
    std::string value(100, 'v');
    int64_t offset = 0;
    double t0 = now_s();
    for (int f = 0; f < files; ++f) {
        auto app = ok(table->begin_append());
        for (int r = 0; r < rows_per_file; ++r, ++offset) {
            auto id = std::to_string(offset);
            auto key = fmt::format("user-{}", offset % 10000);
            std::memcpy(value.data(), id.data(), std::min(id.size(), value.size()));
            parquet::message_row row;
            row.stream_key = "clicks-0";
            row.segment_id = f;
            row.message_id = id;
            row.message_ts = 1'700'000'000'000 + offset;
            row.kafka_timestamp = row.message_ts;
            row.key = key;
            row.value = value;
            row.partition = 0;
            row.offset = offset;
            ok(app->add(row));
        }
        ok(app->commit({{"clicks-0", offset}}));
    }
    double append_s = now_s() - t0;
    iceberg::table_ident ident{"floe", "clicks"};
    auto before = ok(iceberg::load_table(*cat, *io, ident));
    write_list(*io, before.metadata, dir / "small.json");
    maintenance::compact_options co;
    co.target_file_size = static_cast<int64_t>(o.parquet.target_file_size);
    t0 = now_s();
    auto cr = ok(maintenance::compact(lake, "clicks", co));
    double compact_s = now_s() - t0;
    auto after = ok(iceberg::load_table(*cat, *io, ident));
    write_list(*io, after.metadata, dir / "compacted.json");
    std::printf("appends (offload's write path: Parquet file + commit each): %d files of %d rows: %.0f rows/s (%.2f s)\n",
                files, rows_per_file, double(offset) / append_s, append_s);
    std::printf("compaction (one thread, read + rewrite + commit): %zu files (%.1f MB) -> %zu (%.1f MB): %lld rows "
                "in %.2f s = %.0f rows/s, %.2fx the append rate\n",
                cr.files_rewritten, double(cr.bytes_read) / 1e6, cr.files_written, double(cr.bytes_written) / 1e6,
                static_cast<long long>(cr.rows), compact_s, double(cr.rows) / compact_s,
                (double(cr.rows) / compact_s) / (double(offset) / append_s));
}

// Part 2: scan planning before and after manifest rewrite.
double plan_ms(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t, size_t& files) {
    constexpr int runs = 5;
    double t0 = now_s();
    for (int i = 0; i < runs; ++i) {
        auto loaded = ok(iceberg::load_table(cat, io, t));
        files = ok(iceberg::live_files(io, loaded.metadata)).size();
    }
    return (now_s() - t0) * 1000 / runs;
}

// The table `commits` appends of one data file each leave when manifests are not merged at
// commit and older snapshots are expired: a current snapshot whose manifest list names one
// manifest per append (each with its own added-snapshot id and sequence number). Built directly
// (manifests and list encoded by the iceberg module, written without fsync; one metadata commit)
// instead of through `commits` real commits, which would take minutes on a loaded machine.
void planning(const fs::path& dir, int commits) {
    auto cat = ok(iceberg::open_sql_catalog("sqlite://" + (dir / "plan.db").string(), "floe"));
    iceberg::local_file_io io;
    iceberg::table_ident t{"floe", "plan"};
    auto location = iceberg::file_uri((dir / "warehouse/floe/plan").string());
    auto created = ok(iceberg::create_table_if_missing(*cat, io, t, location, {}));
    const auto* schema = created.metadata.current_schema();
    const auto* spec = created.metadata.default_spec();
    auto meta_dir = dir / "warehouse/floe/plan/metadata";
    fs::create_directories(meta_dir);
    auto put = [](const fs::path& p, const byte_buffer& b) {
        std::ofstream f(p, std::ios::binary);
        f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        if (!f) die(error(errc::io_error, fmt::format("cannot write {}", p.string())));
    };
    double t0 = now_s();
    std::vector<iceberg::manifest_file> manifests;
    manifests.reserve(static_cast<size_t>(commits));
    const int64_t base_id = 1'000'000;
    for (int i = 0; i < commits; ++i) {
        iceberg::manifest_entry e;
        e.file.file_path = fmt::format("{}/data/stream_key=plan-0/segment-{}-{}.parquet", location, i,
                                       uuid::random().to_string());
        e.file.partition = {avro::datum::string("plan-0")};
        e.file.record_count = 1000;
        e.file.file_size_in_bytes = 65536;
        for (int id = 1; id <= 10; ++id) {
            e.file.column_sizes[id] = 4096;
            e.file.value_counts[id] = 1000;
            e.file.null_value_counts[id] = 0;
        }
        e.file.lower_bounds = {{iceberg::field_ids::offset, iceberg::serialize_long(int64_t(i) * 1000)}};
        e.file.upper_bounds = {{iceberg::field_ids::offset, iceberg::serialize_long(int64_t(i) * 1000 + 999)}};
        iceberg::manifest_context ctx{schema, spec, base_id + i, i + 1};
        auto m = ok(iceberg::write_manifest(ctx, {e}));
        auto name = fmt::format("{}-m0.avro", uuid::random().to_string());
        put(meta_dir / name, m.bytes);
        m.entry.manifest_path = fmt::format("{}/metadata/{}", location, name);
        manifests.push_back(std::move(m.entry));
    }
    const int64_t head = base_id + commits - 1;
    auto list = ok(iceberg::write_manifest_list(head, head - 1, commits, manifests));
    auto list_name = fmt::format("snap-{}-1-{}.avro", head, uuid::random().to_string());
    put(meta_dir / list_name, list);
    ok(iceberg::commit_metadata(*cat, io, t, [&](iceberg::table_metadata& m) -> result<bool> {
        iceberg::snapshot s;
        s.snapshot_id = head;
        s.parent_snapshot_id = head - 1; // expired, as the spec allows
        s.sequence_number = commits;
        s.timestamp_ms = system_clock_source::instance().now_ms();
        s.manifest_list = fmt::format("{}/metadata/{}", location, list_name);
        s.summary = {{"operation", "append"}, {"added-data-files", "1"}, {"total-data-files", std::to_string(commits)},
                     {"total-records", std::to_string(int64_t(commits) * 1000)}};
        s.schema_id = m.current_schema_id;
        m.last_sequence_number = commits;
        m.snapshots.push_back(s);
        m.current_snapshot_id = head;
        m.refs["main"] = iceberg::snapshot_ref{head, "branch", {}, {}, {}};
        m.snapshot_log.push_back({s.timestamp_ms, head});
        return true;
    }));
    double build_s = now_s() - t0;
    size_t files_before = 0, files_after = 0;
    double before = plan_ms(*cat, io, t, files_before);
    maintenance::manifest_rewrite_options mo;
    mo.min_count = 2;
    t0 = now_s();
    auto rw = ok(maintenance::rewrite_manifests(*cat, io, t, mo));
    double rewrite_s = now_s() - t0;
    double after = plan_ms(*cat, io, t, files_after);
    std::printf("table of %d one-file appends (one manifest each) built directly in %.1f s\n", commits, build_s);
    std::printf("scan planning (load metadata, manifest list, manifests -> %zu live files): %.1f ms with %zu manifests\n",
                files_before, before, rw.manifests_before);
    std::printf("scan planning after manifest rewrite (%.2f s): %.1f ms with %zu manifest(s) (%zu files): %.1fx faster\n",
                rewrite_s, after, rw.manifests_after, files_after, before / after);
}

} // namespace

int main(int argc, char** argv) {
    fs::path dir = fs::temp_directory_path() / fmt::format("floe-bench-maintenance-{}", ::getpid());
    int files = 2000, rows_per_file = 500, commits = 10000;
    bool keep = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--dir") dir = next();
        else if (a == "--files") files = std::stoi(next());
        else if (a == "--rows-per-file") rows_per_file = std::stoi(next());
        else if (a == "--commits") commits = std::stoi(next());
        else if (a == "--keep") keep = true;
    }
    spdlog::set_level(spdlog::level::warn);
    fs::remove_all(dir);
    fs::create_directories(dir);
    if (files > 0) small_files(dir, files, rows_per_file);
    if (commits > 0) planning(dir, commits);
    if (!keep) fs::remove_all(dir);
    return 0;
}
