// floe-bench-fetch: librdkafka consumer throughput by fetch size. For each size in --fetch-mib
// a fresh consumer (max.partition.fetch.bytes = fetch.max.bytes = size) reads the first
// --records records of --topic from the beginning, checking that every partition's offsets come
// in order with none missing. Sizes take turns over --rounds rounds (so a busy moment of the
// machine does not land on one size only); each prints its median records/s beside the
// client's own account of its fetches: partition fetches (one per partition per Fetch request)
// and how often librdkafka paused fetching because its pre-fetch queue was at
// queued.min.messages / queued.max.messages.kbytes (each pause lasts about a second in
// librdkafka 2.0: a Fetch answer holding that much alone used to cause one per answer).
//
//   floe-bench-fetch --brokers 127.0.0.1:9092 --topic t --records 2000000 --partitions 1
//                    --fetch-mib 1,4,16,64 [--rounds 3] [--label text] [--verbose] [-X key=value ...]
//
// The topic must already hold the records (bench/fetch/run.sh produces them with
// floe-bench-kafka --no-consume).
#include "common/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
    std::string brokers = "127.0.0.1:9092";
    std::string topic = "bench";
    size_t records = 2'000'000;
    int partitions = 1;
    std::vector<size_t> fetch_mib{1, 4, 16, 64};
    int rounds = 3;
    std::string label; ///< printed on every line (e.g. which client settings)
    bool verbose = false; ///< print librdkafka's pause lines as they come
    std::vector<std::pair<std::string, std::string>> extra; ///< -X key=value, applied last
};

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "floe-bench-fetch: %s\n", msg.c_str());
    std::exit(1);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) die("missing value for " + a);
            return argv[++i];
        };
        if (a == "--brokers") o.brokers = next();
        else if (a == "--topic") o.topic = next();
        else if (a == "--records") o.records = std::stoul(next());
        else if (a == "--partitions") o.partitions = std::stoi(next());
        else if (a == "--rounds") o.rounds = std::stoi(next());
        else if (a == "--label") o.label = next();
        else if (a == "--verbose") o.verbose = true;
        else if (a == "--fetch-mib") {
            o.fetch_mib.clear();
            std::string list = next();
            for (size_t p = 0; p < list.size();) {
                size_t c = list.find(',', p);
                if (c == std::string::npos) c = list.size();
                o.fetch_mib.push_back(std::stoul(list.substr(p, c - p)));
                p = c + 1;
            }
        } else if (a == "-X") {
            auto kv = next();
            auto eq = kv.find('=');
            if (eq == std::string::npos) die("-X wants key=value, got " + kv);
            o.extra.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        } else die("unknown option " + a);
    }
    if (o.partitions < 1 || o.rounds < 1 || o.fetch_mib.empty())
        die("need --partitions >= 1, --rounds >= 1 and a --fetch-mib list");
    return o;
}

/// What librdkafka's fetch debug log says about one run (its log callback runs on its threads).
struct fetch_log {
    std::atomic<size_t> requests{0}; ///< "Fetch topic ... at offset": one per partition per request
    std::atomic<size_t> pauses{0};   ///< "not fetchable: queued.min.messages / .kbytes exceeded"
    bool verbose = false;
};

void on_log(const rd_kafka_t* rk, int level, const char*, const char* buf) {
    auto* fl = static_cast<fetch_log*>(rd_kafka_opaque(rk));
    if (std::strstr(buf, "Fetch topic ")) fl->requests.fetch_add(1, std::memory_order_relaxed);
    else if (std::strstr(buf, "not fetchable: queued.")) {
        fl->pauses.fetch_add(1, std::memory_order_relaxed);
        if (fl->verbose) std::fprintf(stderr, "librdkafka: %s\n", buf);
    }
    else if (level <= 3) std::fprintf(stderr, "librdkafka: %s\n", buf);
}

struct run_result {
    double records_per_s = 0, mb_per_s = 0;
    size_t requests = 0, pauses = 0;
};

run_result consume(const options& o, size_t mib) {
    std::string why;
    auto* conf = floe::bench::kafka_conf(o.brokers, why);
    if (!conf) die(why);
    char err[512];
    auto set = [&](const std::string& k, const std::string& v) {
        if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
            die(k + ": " + err);
    };
    size_t bytes = mib << 20;
    set("group.id", "bench-fetch-" + o.topic);
    set("enable.auto.commit", "false");
    set("max.partition.fetch.bytes", std::to_string(bytes));
    set("fetch.max.bytes", std::to_string(bytes));
    // librdkafka wants room for the protocol framing around fetch.max.bytes.
    set("receive.message.max.bytes", std::to_string(bytes + (1 << 20)));
    set("debug", "fetch");
    set("log_level", "7");
    for (auto& [k, v] : o.extra) set(k, v);
    fetch_log fl;
    fl.verbose = o.verbose;
    rd_kafka_conf_set_opaque(conf, &fl);
    rd_kafka_conf_set_log_cb(conf, on_log);
    // Each partition's records must arrive in offset order, none missing, none twice.
    std::vector<int64_t> next(size_t(o.partitions), 0);
    size_t payload = 0;
    auto r = floe::bench::consume_from_beginning(
        conf, o.topic, o.partitions, o.records,
        [&](const rd_kafka_message_t& m) -> std::string {
            if (m.partition < 0 || m.partition >= o.partitions)
                return "record from unexpected partition " + std::to_string(m.partition);
            auto& want = next[size_t(m.partition)];
            if (m.offset != want)
                return "partition " + std::to_string(m.partition) + ": offset " + std::to_string(m.offset) +
                       " where " + std::to_string(want) + " was expected";
            ++want;
            payload += m.len + m.key_len;
            return {};
        },
        why);
    if (!why.empty()) die(why);
    size_t got = r.records;
    double secs = std::chrono::duration<double>(r.finished - r.first_record).count();
    return {double(got) / secs, double(payload) / secs / 1e6, fl.requests.load(), fl.pauses.load()};
}

} // namespace

int main(int argc, char** argv) {
    auto o = parse(argc, argv);
    std::vector<std::vector<run_result>> runs(o.fetch_mib.size());
    for (int r = 0; r < o.rounds; ++r)
        for (size_t i = 0; i < o.fetch_mib.size(); ++i) runs[i].push_back(consume(o, o.fetch_mib[i]));
    std::vector<double> median(runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
        auto& rs = runs[i];
        std::sort(rs.begin(), rs.end(), [](auto& a, auto& b) { return a.records_per_s < b.records_per_s; });
        auto& m = rs[rs.size() / 2];
        median[i] = m.records_per_s;
        size_t pauses = 0;
        for (auto& x : rs) pauses += x.pauses;
        std::printf("fetch %2zu MiB%s partitions=%d records=%zu: %8.0f records/s, %5.1f MB/s (median of %d; "
                    "min %.0f, max %.0f), %zu partition fetches (%.0f records each), %zu client pauses in all\n",
                    o.fetch_mib[i], o.label.empty() ? "" : (" " + o.label).c_str(), o.partitions, o.records,
                    m.records_per_s, m.mb_per_s, o.rounds, rs.front().records_per_s, rs.back().records_per_s,
                    m.requests, m.requests ? double(o.records) / double(m.requests) : 0.0, pauses);
    }
    // The peer: the same consumer at the first size in the list.
    for (size_t i = 1; i < median.size(); ++i)
        std::printf("ratio fetch %2zu MiB / %zu MiB%s: %.2fx\n", o.fetch_mib[i], o.fetch_mib[0],
                    o.label.empty() ? "" : (" " + o.label).c_str(), median[i] / median[0]);
    return 0;
}
