// Writes the same generated rows with Floe's Parquet writer and with DuckDB (node
// @duckdb/node-api, `SET threads=1`, `COPY t TO ... (FORMAT parquet, COMPRESSION c)` from an
// in-memory table loaded, untimed, from an uncompressed file Floe wrote), then prints rows/s,
// MB/s and file sizes for both and the ratios. Single-threaded on both sides.
//
// Floe's input is laid out, untimed, as the storage worker hands rows to the writer: views into
// contiguous record bytes (a decoded batch), header views in one array. Timed: opening the
// writer, appending every row, closing the file. Both sides write files that do not exist yet,
// as floe serve does (data files have unique names): on ext4, truncating or renaming over an
// existing file makes close() or rename() start writing it back (auto_da_alloc).
//
// usage: parquet_vs_duckdb [--rows N] [--dir DIR] [--value-sizes 100,1024] [--codecs zstd,snappy]
//        [--no-duckdb] [--level N] [--row-group-rows N] [--page-size BYTES]

#include "format/parquet/tests/message_rows.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

using namespace floe;
using namespace floe::parquet;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        out.push_back(item);
    return out;
}

uint64_t payload_bytes(const std::vector<message_record>& rows) {
    // The row data as a reader would hand it over: string/binary bytes plus 8 bytes per long,
    // 4 per int.
    uint64_t n = 0;
    for (auto& r : rows) {
        n += r.stream_key.size() + r.message_id.size() + 8 * 4 + 4 + 8;
        if (r.key) n += r.key->size();
        if (r.value) n += r.value->size();
        if (r.headers)
            for (auto& h : *r.headers)
                n += h.key.size() + (h.value ? h.value->size() : 0);
    }
    return n;
}

/// The rows' bytes packed back to back in one buffer, as in a decoded record batch, with
/// message_row views into it.
struct packed_rows {
    std::string bytes;
    std::vector<message_header_view> headers;
    std::vector<message_row> rows;
};

packed_rows pack(const std::vector<message_record>& in) {
    packed_rows p;
    size_t total = 0, n_headers = 0;
    for (auto& r : in) {
        total += r.stream_key.size() + r.message_id.size() + (r.key ? r.key->size() : 0) +
                 (r.value ? r.value->size() : 0);
        if (r.headers)
            for (auto& h : *r.headers) {
                total += h.key.size() + (h.value ? h.value->size() : 0);
                ++n_headers;
            }
    }
    p.bytes.reserve(total);
    p.headers.reserve(n_headers);
    p.rows.reserve(in.size());
    // Views are made after all bytes are in place (the buffer does not move: reserved).
    auto put = [&](std::string_view s) {
        size_t at = p.bytes.size();
        p.bytes.append(s);
        return std::string_view(p.bytes.data() + at, s.size());
    };
    for (auto& r : in) {
        message_row v;
        v.stream_key = put(r.stream_key);
        v.segment_id = r.segment_id;
        v.message_id = put(r.message_id);
        v.message_ts = r.message_ts;
        v.kafka_timestamp = r.kafka_timestamp;
        if (r.key) v.key = put(*r.key);
        if (r.value) v.value = put(*r.value);
        if (r.headers) {
            size_t first = p.headers.size();
            for (auto& h : *r.headers) {
                message_header_view hv;
                hv.key = put(h.key);
                if (h.value) hv.value = put(*h.value);
                p.headers.push_back(hv);
            }
            v.headers = std::span<const message_header_view>(p.headers.data() + first,
                                                             r.headers->size());
        }
        v.partition = r.partition;
        v.offset = r.offset;
        p.rows.push_back(v);
    }
    return p;
}

result<file_summary> write_packed(const std::string& path, const packed_rows& rows,
                                  writer_options o) {
    auto sink = FLOE_TRY(open_file_sink(path));
    auto w = FLOE_TRY(message_writer::open(std::move(sink), std::move(o)));
    for (auto& r : rows.rows)
        FLOE_TRY(w.append(r));
    return w.close();
}

struct result_row {
    double seconds = 0;
    double cpu_seconds = 0;
    uint64_t size = 0;
};

double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

int main(int argc, char** argv) {
    size_t rows_n = 1'000'000;
    std::string dir = "/tmp/floe-parquet-bench";
    std::vector<std::string> sizes = {"100", "1024"};
    std::vector<std::string> codecs = {"zstd", "snappy"};
    bool duck = true;
    int level = 0; // codec default
    // floe serve's floe.storage.remote.iceberg.row-group-rows default (DuckDB cuts at 122,880).
    uint64_t row_group_rows = 131072;
    size_t page_size = writer_options{}.page_size;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--rows")
            rows_n = std::stoul(next());
        else if (a == "--dir")
            dir = next();
        else if (a == "--value-sizes")
            sizes = split(next());
        else if (a == "--codecs")
            codecs = split(next());
        else if (a == "--no-duckdb")
            duck = false;
        else if (a == "--level")
            level = std::stoi(next());
        else if (a == "--row-group-rows")
            row_group_rows = std::stoull(next());
        else if (a == "--page-size")
            page_size = std::stoull(next());
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    std::filesystem::create_directories(dir);
    std::printf("# Parquet write: Floe vs DuckDB, %zu rows, one thread each\n", rows_n);
    std::printf(
        "# MB/s = row payload (keys, values, headers, strings, 8 B per long, 4 per int) / time\n");
    std::printf("# rows/s from wall time and (cpu) from process CPU time, which other load on the "
                "machine disturbs less\n");
    std::printf("%-6s %-7s %11s %11s %8s %11s | %11s %11s %8s %11s | %7s %7s %7s\n", "value",
                "codec", "floe rows/s", "(cpu)", "MB/s", "bytes", "duck rows/s", "(cpu)", "MB/s",
                "bytes", "speed", "(cpu)", "size");
    for (auto& vs : sizes) {
        size_t value_size = std::stoul(vs);
        auto rows = testing::generate_rows(rows_n, {.seed = 42, .value_size = value_size});
        double mb = static_cast<double>(payload_bytes(rows)) / 1e6;
        auto packed = pack(rows);
        // Uncompressed copy for DuckDB to load (untimed).
        std::string raw = fmt::format("{}/input-{}.parquet", dir, vs);
        {
            writer_options o;
            o.codec = compression_codec::uncompressed;
            auto s = write_packed(raw, packed, o);
            if (!s) {
                std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
                return 1;
            }
        }
        std::map<std::string, result_row> floe_res, duck_res;
        for (auto& c : codecs) {
            writer_options o;
            o.codec = *parse_codec(c);
            o.compression_level = level;
            o.row_group_rows = row_group_rows;
            o.page_size = page_size;
            std::string path = fmt::format("{}/floe-{}-{}.parquet", dir, vs, c);
            std::filesystem::remove(path);
            double c0 = cpu_now();
            auto t0 = std::chrono::steady_clock::now();
            auto s = write_packed(path, packed, o);
            auto t1 = std::chrono::steady_clock::now();
            double c1 = cpu_now();
            if (!s) {
                std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
                return 1;
            }
            floe_res[c] = {std::chrono::duration<double>(t1 - t0).count(), c1 - c0, s->file_size};
        }
        if (duck) {
            std::string cmd = fmt::format("node {} {} {} {} {}", FLOE_DUCKDB_SCRIPT, raw, dir, vs,
                                          fmt::join(codecs, ","));
            FILE* p = popen(cmd.c_str(), "r");
            if (!p) {
                std::fprintf(stderr, "cannot run %s\n", cmd.c_str());
                return 1;
            }
            char line[512];
            while (std::fgets(line, sizeof line, p)) {
                char codec[32];
                double secs, cpu;
                unsigned long long bytes;
                if (std::sscanf(line, "duckdb %31s %lf %lf %llu", codec, &secs, &cpu, &bytes) == 4)
                    duck_res[codec] = {secs, cpu, bytes};
                else
                    std::fputs(line, stderr);
            }
            if (pclose(p) != 0) {
                std::fprintf(stderr, "DuckDB run failed: %s\n", cmd.c_str());
                return 1;
            }
        }
        for (auto& c : codecs) {
            auto f = floe_res[c];
            double frs = static_cast<double>(rows_n) / f.seconds;
            double fcpu = static_cast<double>(rows_n) / f.cpu_seconds;
            if (duck && duck_res.count(c)) {
                auto d = duck_res[c];
                double drs = static_cast<double>(rows_n) / d.seconds;
                double dcpu = static_cast<double>(rows_n) / d.cpu_seconds;
                std::printf("%-6s %-7s %11.0f %11.0f %8.1f %11llu | %11.0f %11.0f %8.1f %11llu | "
                            "%6.2fx %6.2fx %6.3fx\n",
                            vs.c_str(), c.c_str(), frs, fcpu, mb / f.seconds,
                            static_cast<unsigned long long>(f.size), drs, dcpu, mb / d.seconds,
                            static_cast<unsigned long long>(d.size), frs / drs, fcpu / dcpu,
                            static_cast<double>(f.size) / static_cast<double>(d.size));
            } else {
                std::printf("%-6s %-7s %11.0f %11.0f %8.1f %11llu |\n", vs.c_str(), c.c_str(), frs,
                            fcpu, mb / f.seconds, static_cast<unsigned long long>(f.size));
            }
        }
        std::fflush(stdout);
    }
    std::printf("# speed = Floe rows/s / DuckDB rows/s (target >= 2); size = Floe bytes / DuckDB "
                "bytes (target <= 1.10)\n");
    std::printf("# Floe zstd level: %s; row groups cut at %llu rows (floe serve's default; 0: by size only)\n",
                level == 0 ? "default (1)" : std::to_string(level).c_str(),
                static_cast<unsigned long long>(row_group_rows));
    return 0;
}
