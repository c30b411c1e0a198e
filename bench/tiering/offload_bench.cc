// floe-bench-offload: offload throughput of the storage worker and tiered-fetch throughput.
// Builds a local log partition with N generated records (testkit datagen, 100-byte values by
// default, batches of 500 as a producer would send), seals it into segments of 1M records,
// then times one storage-worker pass that commits them into an Iceberg table on file:// (zstd
// Parquet), and a full read back through the tiered read path (rows -> record batches).
// Prints records/s beside Korvet's published offload figures (32,000 msg/s for one stream).
// With --compact, segments of --segment-records records make one small file each, and the
// table is then compacted (one thread: read + rewrite) and its rows/s printed beside offload's.
// With --s3 the warehouse is s3://$S3TEST_BUCKET/bench-<pid> on the S3 server that
// tests/s3/moto_env.py started (run.sh runs both); it then also prints this process's CPU per
// record (the S3 server's own time is not ours) and the S3 requests by API per million records.
// With --encryption uniform|columns the topic's table is encrypted (Parquet Modular Encryption,
// a 256-bit keyring key): uniform is every column and the footer (AES_GCM_V1, DuckDB's profile:
// one page per chunk, no bloom filter); columns is key, value and headers with a plaintext
// signed footer (AES_GCM_V1); uniform-ctr is uniform with AES_GCM_CTR_V1 (not DuckDB's profile:
// pages, page index and bloom filter as plaintext files have). Run once per mode.
//   floe-bench-offload [--records 1000000] [--value-size 100] [--segment-records 1000000]
//                      [--compact] [--dir /tmp/x] [--s3] [--encryption none|uniform|uniform-ctr|columns]
#include "base/metrics.h"
#include "crypto/keyring.h"
#include "iceberg/s3_file_io.h"
#include "lake/iceberg_lake.h"
#include "log/batch_builder.h"
#include "log/log_manager.h"
#include "maintenance/compact.h"
#include "testkit/datagen.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <sys/resource.h>

using namespace floe;
namespace fs = std::filesystem;

namespace {

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string env_or_empty(const char* n) {
    const char* v = std::getenv(n);
    return v ? v : "";
}

} // namespace

int main(int argc, char** argv) {
    size_t records = 1'000'000, value_size = 100;
    bool s3 = false;
    uint64_t row_group_rows = 131072;
    size_t segment_records = 1'000'000;
    bool compact = false;
    std::string encryption = "none";
    fs::path dir = fs::temp_directory_path() / fmt::format("floe-bench-offload-{}", ::getpid());
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--s3") s3 = true;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--s3") {
            --i;
            continue;
        }
        if (a == "--records") records = std::stoul(argv[i + 1]);
        else if (a == "--value-size") value_size = std::stoul(argv[i + 1]);
        else if (a == "--row-group-rows") row_group_rows = std::stoull(argv[i + 1]);
        else if (a == "--dir") dir = argv[i + 1];
        else if (a == "--encryption") encryption = argv[i + 1];
        else if (a == "--segment-records") segment_records = std::max<size_t>(500, std::stoul(argv[i + 1]) / 500 * 500);
    }
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--compact") compact = true;
    fs::remove_all(dir);
    spdlog::set_level(spdlog::level::warn);
    log::log_manager_options lo;
    lo.data_dir = dir;
    lo.background_threads = false;
    lo.capabilities = {.key_provider = true, .lake_encrypts = true};
    auto logs = log::log_manager::open(lo);
    if (!logs) {
        std::fprintf(stderr, "%s\n", logs.error().to_string().c_str());
        return 1;
    }
    // retention.ms=-1: the generated timestamps start in January 2026 and must not expire.
    log::config_map topic_configs{{"remote.storage.enable", "true"}, {"segment.bytes", "1073741824"}, {"retention.ms", "-1"}};
    if (encryption == "uniform") topic_configs["floe.iceberg.encryption"] = "uniform";
    else if (encryption == "uniform-ctr") { // not DuckDB's profile: pages, page index and bloom filter kept
        topic_configs["floe.iceberg.encryption"] = "uniform";
        topic_configs["floe.iceberg.encryption.algorithm"] = "AES_GCM_CTR_V1";
    } else if (encryption == "columns") {
        topic_configs["floe.iceberg.encryption"] = "columns";
        topic_configs["floe.iceberg.encryption.columns"] = "key,value,headers";
        topic_configs["floe.iceberg.encryption.footer"] = "plaintext";
    } else if (encryption != "none") {
        std::fprintf(stderr, "--encryption: none, uniform, uniform-ctr or columns\n");
        return 2;
    }
    if (auto ct = (*logs)->create_topic("bench", 1, topic_configs); !ct) {
        std::fprintf(stderr, "%s\n", ct.error().to_string().c_str());
        return 1;
    }
    auto p = (*logs)->partition("bench", 0);
    testkit::datagen gen({.seed = 5, .value_size = value_size});
    log::batch_builder b;
    byte_buffer buf;
    std::vector<log::batch_builder::header> hs;
    size_t payload = 0;
    for (size_t i = 0; i < records;) {
        buf.clear();
        b.begin(0);
        for (size_t k = 0; k < 500 && i < records; ++k, ++i) {
            auto r = gen.next();
            hs.clear();
            for (auto& h : r.headers) hs.push_back({h.key, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt});
            auto opt = [](auto& s) { return s ? std::optional<std::string_view>(*s) : std::nullopt; };
            b.add(int64_t(k), r.timestamp_ms, opt(r.key), opt(r.value), hs);
            payload += (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
        }
        (void)b.finish(buf);
        auto ar = p->append(buf);
        if (!ar || ar->status != log::append_status::ok) {
            std::fprintf(stderr, "append failed\n");
            return 1;
        }
        if (i % segment_records == 0) (void)p->roll();
    }
    (void)p->roll();

    auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    lake::lake_options opts;
    opts.warehouse = "file://" + (dir / "warehouse").string();
    opts.parquet.row_group_rows = row_group_rows; // floe serve's default, floe.storage.remote.iceberg.row-group-rows
    std::shared_ptr<iceberg::file_io> io = std::make_shared<iceberg::local_file_io>();
    if (s3) {
        if (env_or_empty("S3TEST_ENDPOINT").empty()) {
            std::fprintf(stderr, "--s3: run through tests/s3/moto_env.py BUCKET -- floe-bench-offload --s3\n");
            return 2;
        }
        aws::s3_options so;
        so.endpoint = env_or_empty("S3TEST_ENDPOINT");
        so.region = env_or_empty("S3TEST_REGION");
        so.path_style = true;
        so.credentials = std::make_shared<aws::static_credentials>(aws::credentials{
            env_or_empty("S3TEST_ACCESS_KEY_ID"), env_or_empty("S3TEST_SECRET_ACCESS_KEY"), ""});
        io = std::make_shared<iceberg::s3_file_io>(so);
        opts.warehouse = fmt::format("s3://{}/bench-{}", env_or_empty("S3TEST_BUCKET"), ::getpid());
    }
    lake::iceberg_lake lake(std::shared_ptr<iceberg::catalog>(std::move(*cat)), io, opts);
    if (encryption != "none") {
        crypto::keyring ring;
        ring.current = "bench";
        ring.keys.emplace("bench", crypto::secret_key(std::vector<uint8_t>(32, 0x5a)));
        lake.set_key_provider(std::make_shared<crypto::keyring_provider>(std::move(ring)));
    }
    tiering::worker_options wo;
    wo.parallelism = 1;
    tiering::storage_worker w(**logs, lake,
                              std::make_unique<tiering::file_lease>(dir / "lease", "bench", std::chrono::minutes(5),
                                                                    system_clock_source::instance()),
                              wo);
    auto t0 = std::chrono::steady_clock::now();
    auto c0 = cpu_seconds();
    auto rep = w.tick();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = cpu_seconds() - c0;
    auto s3_requests = metrics::registry::instance().render();
    if (rep.rows_committed != int64_t(records)) {
        std::fprintf(stderr, "offloaded %lld of %zu records\n", (long long)rep.rows_committed, records);
        return 1;
    }
    uint64_t parquet_bytes = 0;
    if (!s3)
        for (auto& e : fs::recursive_directory_iterator(dir / "warehouse"))
            if (e.path().extension() == ".parquet") parquet_bytes += e.file_size();
    if (s3) { // bytes sent to S3: the Parquet files plus the (small) metadata and manifests
        auto at = s3_requests.find("floe_s3_bytes_total{direction=\"sent\"} ");
        if (at != std::string::npos)
            parquet_bytes = std::stoull(s3_requests.substr(s3_requests.find(' ', at) + 1));
    }
    std::printf("offload  1 partition to %s, encryption %s, %zu records of %zuB values: %.0f records/s, %.1f MB/s of "
                "payload, %zu segment(s), Parquet %.1f MB (zstd); this process's CPU %.0f ns/record\n",
                s3 ? "s3:// (local S3 server)" : "file://", encryption.c_str(), records, value_size, double(records) / secs,
                double(payload) / secs / 1e6, rep.segments_offloaded, double(parquet_bytes) / 1e6,
                cpu / double(records) * 1e9);
    // S3 requests by API from a /metrics rendering.
    auto requests_by_api = [](const std::string& text) {
        std::map<std::string, double> out;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
            if (line.starts_with("floe_s3_requests_total{")) {
                auto sp = line.rfind(' ');
                out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
            }
        return out;
    };
    auto offload_requests = requests_by_api(s3_requests);
    if (s3)
        for (auto& [name, n] : offload_requests)
            std::printf("s3       offload %s per million records: %.1f\n", name.c_str(), n * 1e6 / double(records));
    std::printf("peer     Korvet (published): 32,000 msg/s one stream, 115,000 msg/s four streams -> %.1fx one stream\n",
                double(records) / secs / 32000.0);

    tiering::remote_reader rr(lake, 256u << 20);
    auto f0 = std::chrono::steady_clock::now();
    int64_t next = 0;
    size_t got = 0, bytes = 0;
    while (next < int64_t(records)) {
        auto r = rr.read("bench", 0, next, int64_t(records), 1u << 20);
        if (!r || r->records == 0) {
            std::fprintf(stderr, "tiered read stopped at %lld: %s\n", (long long)next,
                         r ? "no records" : r.error().to_string().c_str());
            return 1;
        }
        got += r->records;
        bytes += r->batches.size();
        next = r->next_offset;
    }
    double fsecs = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    std::printf("tiered   read back %zu records as record batches: %.0f records/s, %.1f MB/s (cold cache)\n", got,
                double(got) / fsecs, double(bytes) / fsecs / 1e6);
    if (s3)
        for (auto& [name, n] : requests_by_api(metrics::registry::instance().render()))
            if (auto d = n - offload_requests[name]; d > 0)
                std::printf("s3       tiered read %s per million records: %.1f\n", name.c_str(), d * 1e6 / double(records));
    if (compact) {
        maintenance::compact_options co;
        co.target_file_size = static_cast<int64_t>(opts.parquet.target_file_size);
        auto c0 = std::chrono::steady_clock::now();
        auto cr = maintenance::compact(lake, "bench", co);
        double csecs = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
        if (!cr) {
            std::fprintf(stderr, "compaction failed: %s\n", cr.error().to_string().c_str());
            return 1;
        }
        std::printf("compact  %zu small files (%.1f MB) -> %zu file(s) (%.1f MB): %lld rows in %.2f s, %.0f rows/s "
                    "(one thread, read + rewrite) vs offload %.0f records/s above\n",
                    cr->files_rewritten, double(cr->bytes_read) / 1e6, cr->files_written,
                    double(cr->bytes_written) / 1e6, (long long)cr->rows, csecs, double(cr->rows) / csecs,
                    double(records) / secs);
    }
    (void)(*logs)->close();
    fs::remove_all(dir);
    return 0;
}
