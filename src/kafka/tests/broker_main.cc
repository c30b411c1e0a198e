// floe-kafka-testbroker: runs the Kafka broker alone, for integration tests, until `floe serve`
// wires it. Usage:
//   floe-kafka-testbroker --listen 127.0.0.1:PORT --data-dir DIR [--partitions N]
//       [--no-auto-create] [--set topic.config=value]... [--flush-interval-ms N]
// Prints "listening <port>" on stdout once serving; stops cleanly on SIGTERM/SIGINT.
// Exit codes: 0 clean stop, 2 bad arguments, 3 start failed (e.g. port in use).
#include "base/log.h"
#include "kafka/broker.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include <pthread.h>

int main(int argc, char** argv) {
    floe::kafka::broker_options o;
    o.listen = "127.0.0.1:0";
    std::string level = "info";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--listen") o.listen = need();
        else if (a == "--advertised") o.advertised = need();
        else if (a == "--data-dir") o.data_dir = need();
        else if (a == "--partitions") o.default_partitions = std::stoi(need());
        else if (a == "--no-auto-create") o.auto_create_topics = false;
        else if (a == "--flush-interval-ms") o.flush_interval_ms = std::stoll(need());
        else if (a == "--max-request-bytes") o.max_request_bytes = std::stoull(need());
        else if (a == "--io-threads") o.io_threads = std::stoull(need());
        else if (a == "--log-level") level = need();
        else if (a == "--set") {
            auto kv = need();
            auto eq = kv.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "--set wants key=value\n");
                return 2;
            }
            o.topic_defaults[kv.substr(0, eq)] = kv.substr(eq + 1);
        } else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    auto lvl = floe::parse_log_level(level);
    floe::init_logging(floe::log_format::text, lvl ? *lvl : spdlog::level::info);

    // Block the stop signals in every thread; the main thread waits for them.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    floe::kafka::broker b(o);
    if (auto s = b.start(); !s) {
        std::fprintf(stderr, "start failed: %s\n", s.error().to_string().c_str());
        return 3;
    }
    std::printf("listening %u\n", unsigned(b.port()));
    std::fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    b.stop();
    return 0;
}
