#include "app/serve.h"

#include "app/cluster.h"
#include "app/cluster_lake.h"
#include "app/cluster_routes.h"
#include "app/maintain.h"
#include "app/offload_leases.h"
#include "app/schema_store.h"
#include "app/encryption.h"
#include "app/storage.h"
#include "crypto/keyring.h"

#include "base/file_lock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "http/admin.h"
#include "config/redact.h"
#include "http/auth.h"
#include "http/console_routes.h"
#include "http/metric_ring.h"
#include "kafka/groups.h"
#include "http/iceberg_rest.h"
#include "http/ingest_routes.h"
#include "ingest/ingest_engine.h"
#include "http/lookups.h"
#include "http/schema_routes.h"
#include "schema/registry.h"
#include "schema/rest_api.h"
#include "kafka/broker.h"
#include "kafka/acl.h"
#include "kafka/sasl.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "lake/iceberg_lake.h"
#include "lake/metered_catalog.h"
#include "log/local_tier.h"
#include "redis/client.h"
#include "redis_tier/redis_tier.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"
#include "http/server.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ranges>
#include <set>
#include <cstring>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace floe::app {
namespace {

/// A started component and how to stop it; stopped in reverse start order.
struct running_component {
    std::string name;
    std::function<void()> stop;
};

/// Blocks SIGINT/SIGTERM/SIGHUP in this thread (and the threads it starts, which inherit the mask)
/// so that sigwait below is the only place they are handled.
sigset_t block_stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP); // re-read TLS certificates
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    return set;
}

/// The local log is ready while its directory takes writes and has room for them: down when
/// the data directory is not writable or its file system is full (under 1% or 64 MiB free,
/// whichever is smaller), with how much room is left and what it holds.
http::component_health local_log_health(const std::filesystem::path& data_dir, const log::local_tier& logs) {
    if (::access(data_dir.c_str(), W_OK) != 0)
        return {http::health_status::down,
                fmt::format("data directory {} is not writable: {}", data_dir.string(), std::strerror(errno))};
    struct statvfs fs {};
    if (::statvfs(data_dir.c_str(), &fs) != 0)
        return {http::health_status::down, fmt::format("cannot stat {}: {}", data_dir.string(), std::strerror(errno))};
    double total = double(fs.f_blocks) * double(fs.f_frsize), avail = double(fs.f_bavail) * double(fs.f_frsize);
    size_t topics = 0, partitions = 0;
    for (auto& t : logs.topics()) {
        ++topics;
        partitions += size_t(std::max(t.partitions, 0));
    }
    auto what = fmt::format("{}: {} topic(s), {} partition(s), {:.1f} GiB free of {:.1f} GiB", data_dir.string(),
                            topics, partitions, avail / double(1 << 30), total / double(1 << 30));
    if (avail < std::min(total * 0.01, 64.0 * (1 << 20)))
        return {http::health_status::down, fmt::format("disk full: {}; free space or move floe.data-dir", what)};
    return {http::health_status::up, what};
}

/// Creates `dir` when missing and checks that a file can be created in it. A probe file and not
/// access(2): for root, access says yes even where a write fails (read-only file system).
result<void> ensure_writable_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(errc::io_error, "cannot create directory {}: {}", dir.string(), ec.message());
    auto probe = dir / fmt::format(".floe-write-probe-{}", ::getpid());
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(errc::io_error, "directory {} is not writable: {}", dir.string(), std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
    return {};
}

/// The other local paths floe writes at start-up: the SQLite catalog's directory and a file://
/// warehouse. Each failure names the setting to change.
result<void> check_local_paths(const config::settings& s) {
    namespace fs = std::filesystem;
    auto uri = s.get_string("floe.storage.remote.catalog.uri");
    if (s.get_string("floe.storage.remote.catalog.type") == "sql") {
        auto db = iceberg::sqlite_catalog_path(uri);
        if (db && !db->empty() && *db != ":memory:") {
            auto dir = fs::absolute(*db).lexically_normal().parent_path();
            if (auto w = ensure_writable_dir(dir); !w)
                return fail(errc::io_error,
                            "floe.storage.remote.catalog.uri={}: {} (the SQLite catalog's directory); "
                            "set floe.storage.remote.catalog.uri to a path floe can write",
                            uri, w.error().message());
        }
    }
    auto warehouse = s.get_string("floe.storage.remote.path");
    if (warehouse.starts_with("file://")) {
        if (auto w = ensure_writable_dir(fs::absolute(warehouse.substr(7)).lexically_normal()); !w)
            return fail(errc::io_error,
                        "floe.storage.remote.path={}: {} (the warehouse); set floe.storage.remote.path "
                        "to a directory floe can write",
                        warehouse, w.error().message());
    }
    return {};
}

/// One line for a listener whose address is taken: which setting moves it, and the likely cause.
std::string address_in_use(const config::settings& s, std::string_view key, const error& e) {
    return fmt::format("{}={}: address already in use ({}); another floe (or another program) may "
                       "be running there: stop it, or set {} to a free address",
                       key, s.get_string(key), e.message(), key);
}

} // namespace

int serve(const config::settings& s) {
    namespace fs = std::filesystem;
    auto stop_signals = block_stop_signals();

    auto data_dir = fs::absolute(s.get_string("floe.data-dir")).lexically_normal();
    // Where floe writes is checked first, so a directory it cannot write is reported as such
    // and not as whatever component happens to open a file there first.
    if (auto w = ensure_writable_dir(data_dir); !w) {
        spdlog::error("floe.data-dir={}: {}; set floe.data-dir to a directory floe can write",
                      s.get_string("floe.data-dir"), w.error().message());
        return 1;
    }
    if (auto w = check_local_paths(s); !w) {
        spdlog::error("{}", w.error().message());
        return 1;
    }
    // One process per data directory, before anything in it is opened: a second floe on the
    // same directory would append to the same segment files and acknowledge records that a
    // restart then loses. The kernel drops the lock when this process dies (kill -9 too).
    auto dir_lock = file_lock::acquire(data_dir / "floe.lock",
                                       fmt::format("kafka={} http={}", s.get_string("floe.kafka.listen"),
                                                   s.get_string("floe.http.listen")));
    if (!dir_lock) {
        if (dir_lock.error().code() == errc::unavailable) {
            spdlog::error("floe.data-dir {} is in use by another floe: {}; stop it first or choose another "
                          "floe.data-dir", data_dir.string(), dir_lock.error().message());
            return 2;
        }
        spdlog::error("cannot lock floe.data-dir {}: {}; check its permissions", data_dir.string(),
                      dir_lock.error().message());
        return 1;
    }

    spdlog::info("floe {} starting", FLOE_VERSION);
    spdlog::info("data directory: {}", data_dir.string());
    if (s.get_string("floe.storage.remote.catalog.type") == "sql")
        spdlog::info("catalog: sql at {}", config::redact_uri(s.get_string("floe.storage.remote.catalog.uri")));
    else if (auto t = s.get_string("floe.storage.remote.catalog.type"); t == "hive" || t == "nessie" || t == "rest")
        spdlog::info("catalog: {} at {}", t, config::redact_uri(s.get_string("floe.storage.remote.catalog.uri")));
    else if (t == "glue")
        spdlog::info("catalog: glue (table pointers in the Glue Data Catalog, metadata under the warehouse)");
    else // the uri is not used: do not show the derived SQLite default
        spdlog::info("catalog: {} (table metadata under the warehouse)",
                     s.get_string("floe.storage.remote.catalog.type"));
    spdlog::info("warehouse: {} (namespace '{}')", s.get_string("floe.storage.remote.path"),
                 s.get_string("floe.namespace"));

    std::vector<running_component> running;
    http::health_registry health;
    // Components start in dependency order: the remote tier (catalog, warehouse), then the
    // broker (which opens and recovers the local log and serves offsets below it from the
    // remote tier), the storage worker, and last the admin plane, so /readyz sees them all.
    // Topic defaults are checked by Kafka's rules for each config (the settings registry only
    // knows their coarse types): a bad one stops start-up naming the setting.
    for (auto& [k, v] : s.topic_defaults(/*overridden_only=*/true))
        if (auto ok = log::validate_topic_config(k, v); !ok) {
            spdlog::error("invalid value for 'floe.topic-defaults.{}': {}", k,
                          ok.error().message());
            return 2;
        }
    // The key provider of encrypted tables (floe.encryption.*): opened (and a keyring file
    // checked: owner-only, valid keys) before anything starts; an error stops start-up naming
    // the setting. Topics may ask for encryption only when it exists; the lake takes it.
    auto keys = open_key_provider(s);
    if (!keys) {
        spdlog::error("{}", keys.error().message());
        return 2;
    }
    std::shared_ptr<crypto::key_provider> key_provider = std::move(*keys);
    log::topic_capabilities topic_caps;
    topic_caps.key_provider = key_provider != nullptr;
    // The lake writes encrypted data files (Parquet Modular Encryption) with the provider's
    // keys, and every reader (Fetch, lookups, compaction) decrypts with them.
    topic_caps.lake_encrypts = true;
    if (key_provider) {
        spdlog::info("encryption keys: {}", key_provider->describe());
        topic_caps.check_key = [key_provider](std::string_view id) { return key_provider->check_key(id); };
        // A column key the topic defaults name must exist (a KMS that cannot be asked now
        // lets it through with a warning); topics' own configs are checked when they are set.
        for (auto& [k, v] : s.topic_defaults(/*overridden_only=*/true))
            if (auto ok = log::check_config_keys(k, v, topic_caps); !ok) {
                spdlog::error("invalid value for 'floe.topic-defaults.{}': {}", k, ok.error().message());
                return 2;
            }
        health.add("key-provider", [key_provider] {
            auto ok = key_provider->check();
            if (!ok) return http::component_health{http::health_status::down, ok.error().message()};
            return http::component_health{http::health_status::up, key_provider->describe()};
        });
    }
    // The local tier: embedded (segment files) or Redis Streams. Redis settings are checked
    // here, before anything starts, and a bad one stops start-up naming the key.
    std::optional<redis_tier::options> redis_local;
    if (s.get_string("floe.local.type") == "redis") {
        auto uri = s.get_optional("floe.local.redis.uri");
        if (!uri || uri->empty()) {
            spdlog::error("floe.local.redis.uri: required with floe.local.type=redis (redis://host:port)");
            return 2;
        }
        auto ro = redis::parse_uris(*uri, "floe.local.redis.uri");
        if (!ro) {
            spdlog::error("{}", ro.error().message());
            return 2;
        }
        ro->connect_timeout = s.get_duration("floe.local.redis.connect-timeout");
        ro->command_timeout = s.get_duration("floe.local.redis.command-timeout");
        ro->pool_size = size_t(s.get_int("floe.local.redis.pool-size"));
        ro->client_name = "floe";
        redis_tier::options to;
        to.redis = std::move(*ro);
        to.ns = s.get_string("floe.namespace");
        to.min_replicas = int(s.get_int("floe.local.redis.min-replicas"));
        to.wait_timeout = s.get_duration("floe.local.redis.command-timeout");
        for (auto& [k, v] : s.topic_defaults(/*overridden_only=*/true)) to.topic_defaults[k] = v;
        to.default_partitions = static_cast<int32_t>(s.get_int("floe.default-partitions"));
        to.log_dir = data_dir / "log";
        to.capabilities = topic_caps;
        redis_local = std::move(to);
    }
    auto catalog_type = s.get_string("floe.storage.remote.catalog.type");
    auto catalog_uri = s.get_string("floe.storage.remote.catalog.uri");
    auto warehouse = s.get_string("floe.storage.remote.path");
    auto storage = make_file_io(s);
    if (!storage) {
        spdlog::error("{}", storage.error().message());
        return 2;
    }
    auto io = storage->io;
    // Unreachable storage is not fatal (produce keeps working; offload retries): it is logged
    // here and shown by /readyz as the storage entry until it is fixed.
    if (auto reach = storage->check(); !reach)
        spdlog::warn("warehouse {} is not usable yet: {}", warehouse, reach.error().message());
    health.add("storage", [check = storage->check] {
        auto ok = check();
        if (!ok) return http::component_health{http::health_status::down, ok.error().message()};
        return http::component_health{http::health_status::up, *ok};
    });
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        spdlog::error("cannot open the {} catalog at {}: {}; check floe.storage.remote.catalog.uri", catalog_type,
                      config::redact_uri(catalog_uri), config::redact_uri(cat.error().message()));
        return 1;
    }
    // Every catalog call is counted (requests, errors, latency) for /metrics.
    std::shared_ptr<iceberg::catalog> catalog =
        std::make_shared<lake::metered_catalog>(std::shared_ptr<iceberg::catalog>(std::move(*cat)));
    // One lake per cluster: on the Redis tier, this broker's catalog and warehouse against the
    // ones the cluster recorded, before anything is served or offloaded.
    if (redis_local)
        if (int rc = check_cluster_lake(s, redis_local->redis, *catalog); rc != 0) return rc;
    lake::lake_options lo;
    lo.warehouse = warehouse;
    lo.ns = s.get_string("floe.namespace");
    lo.parquet.row_group_size = static_cast<uint64_t>(s.get_size("floe.storage.remote.iceberg.row-group-size"));
    lo.parquet.target_file_size = static_cast<uint64_t>(s.get_size("floe.storage.remote.iceberg.target-file-size"));
    lo.parquet.row_group_rows = static_cast<uint64_t>(s.get_int("floe.storage.remote.iceberg.row-group-rows"));
    auto codec = parquet::parse_codec(s.get_string("floe.storage.remote.iceberg.compression"));
    FLOE_ASSERT(codec.has_value(), "a validated compression setting names a known codec");
    lo.parquet.codec = *codec;
    lake::iceberg_lake lake(catalog, io, lo);
    lake.set_key_provider(key_provider);
    health.add("catalog", [catalog, lo, catalog_type] {
        auto ok = catalog->namespace_exists(lo.ns);
        if (!ok)
            return http::component_health{http::health_status::down,
                                          fmt::format("{} catalog: {}", catalog_type, ok.error().message())};
        return http::component_health{http::health_status::up, fmt::format("{} catalog: reachable", catalog_type)};
    });
    tiering::remote_reader remote(lake);

    kafka::broker_options bo;
    bo.listen = s.get_string("floe.kafka.listen");
    bo.advertised = s.get_string("floe.kafka.advertised-listener");
    if (bo.advertised == bo.listen) bo.advertised.clear(); // follow the bound port when listen uses 0
    bo.data_dir = data_dir;
    bo.auto_create_topics = s.get_bool("floe.auto-create-topics");
    bo.default_partitions = static_cast<int32_t>(s.get_int("floe.default-partitions"));
    bo.topic_defaults = s.topic_defaults(/*overridden_only=*/true);
    bo.topic_capabilities = topic_caps;
    bo.io_threads = static_cast<size_t>(s.get_int("floe.kafka.io-threads"));
    bo.max_request_bytes = static_cast<size_t>(s.get_size("floe.kafka.socket-request-max-bytes"));
    bo.fetch_max_bytes = static_cast<size_t>(s.get_size("floe.kafka.fetch-max-bytes"));
    bo.fetch_max_records = static_cast<size_t>(s.get_int("floe.kafka.fetch-max-records"));
    bo.flush_interval_ms = s.get_duration("floe.log.flush-interval").count();
    bo.sasl_max_reauth_ms = s.get_duration("floe.sasl.connections-max-reauth").count();
    bo.group_consumer_session_timeout_ms = s.get_duration("floe.kafka.group.consumer.session-timeout").count();
    bo.group_consumer_heartbeat_interval_ms = s.get_duration("floe.kafka.group.consumer.heartbeat-interval").count();
    bo.cleaner_interval_ms = s.get_duration("floe.log.cleaner.interval").count();
    bo.cleaner_io_max_bytes_per_second =
        static_cast<uint64_t>(s.get_size("floe.log.cleaner.io-max-bytes-per-second"));
    if (auto l = s.get_optional("floe.kafka.listeners")) {
        auto ls = kafka::parse_listeners(*l);
        if (!ls) {
            spdlog::error("invalid value for 'floe.kafka.listeners': {}", ls.error().message());
            return 2;
        }
        bo.listeners = std::move(*ls);
        if (auto a = s.get_optional("floe.kafka.advertised-listeners"))
            if (auto r = kafka::apply_advertised_listeners(bo.listeners, *a); !r) {
                spdlog::error("invalid value for 'floe.kafka.advertised-listeners': {}", r.error().message());
                return 2;
            }
    } else if (s.get_optional("floe.kafka.advertised-listeners")) {
        spdlog::error("'floe.kafka.advertised-listeners' needs 'floe.kafka.listeners' (use "
                      "floe.kafka.advertised-listener with floe.kafka.listen)");
        return 2;
    }
    if (auto m = kafka::parse_sasl_mechanisms(s.get_string("floe.sasl.mechanisms")); m) {
        bo.sasl_mechanisms = std::move(*m);
    } else {
        spdlog::error("invalid value for 'floe.sasl.mechanisms': {}", m.error().message());
        return 2;
    }
    if (auto su = kafka::parse_super_users(s.get_optional("floe.security.super-users").value_or("")); su) {
        bo.super_users = std::move(*su);
    } else {
        spdlog::error("invalid value for 'floe.security.super-users': {}", su.error().message());
        return 2;
    }
    bo.tls.cert_file = s.get_optional("floe.tls.cert-file").value_or("");
    bo.tls.key_file = s.get_optional("floe.tls.key-file").value_or("");
    bo.tls.ca_file = s.get_optional("floe.tls.ca-file").value_or("");
    auto client_auth = s.get_string("floe.tls.client-auth");
    bo.tls.auth = client_auth == "required"    ? kafka::tls_options::client_auth::required
                  : client_auth == "requested" ? kafka::tls_options::client_auth::requested
                                               : kafka::tls_options::client_auth::none;
    bo.remote = &remote;
    // The Redis client of the local tier, shared with the /readyz check.
    std::shared_ptr<redis::client> redis_client;
    if (redis_local) {
        bo.open_local_tier = [&redis_local, &redis_client]() -> result<std::unique_ptr<log::local_tier>> {
            auto c = FLOE_TRY_CTX(redis::client::connect(redis_local->redis),
                                  "floe.local.redis.uri: connecting to Redis");
            redis_client = std::shared_ptr<redis::client>(std::move(c));
            return redis_tier::open(redis_client, *redis_local);
        };
        spdlog::info("local tier: Redis Streams at {} (key prefix {})", s.get_optional("floe.local.redis.uri").value_or(""),
                     redis_local->ns);
    }
    // Unset: 0 alone; on the Redis tier the registry chooses it when the broker joins.
    bo.node_id = static_cast<int32_t>(std::stoll(s.get_optional("floe.broker.id").value_or("0")));
    // Brokers sharing the Redis tier form one cluster (registry, offsets, producer ids in Redis).
    const redis::broker_registry* cluster_registry = nullptr; // owned by the broker once joined
    if (redis_local) configure_redis_cluster(s, data_dir, redis_client, bo, &cluster_registry);
    kafka::broker broker(bo);
    if (auto r = broker.start(); !r) {
        if (r.error().code() == errc::already_exists)
            spdlog::error("{}", address_in_use(s, s.get_optional("floe.kafka.listeners") ? "floe.kafka.listeners"
                                                                                         : "floe.kafka.listen",
                                               r.error()));
        else if (r.error().code() == errc::conflict) // the cluster refused this broker (id, copied data dir)
            spdlog::error("{}", r.error().message());
        else
            spdlog::error("cannot start the Kafka broker: {}; check floe.kafka.listen(ers), floe.tls.* and floe.data-dir",
                          r.error().message());
        return r.error().code() == errc::invalid_argument || r.error().code() == errc::conflict ? 2 : 1;
    }
    running.push_back({"kafka broker and local log", [&broker] { broker.stop(); }});
    auto* logs = broker.logs();
    // DeleteRecords moves a partition's log start in the local log; the remote tier hides what
    // lies below it from every reader (Fetch, ListOffsets, HTTP lookups).
    remote.set_records_floor([logs](const std::string& topic, int32_t partition) -> int64_t {
        auto p = logs->partition(topic, partition);
        return p ? p->records_start()() : 0;
    });
    // Below the local start, the table must hold what the offload marker says was offloaded:
    // when it does not, reads there answer a retriable error naming the table (never "nothing").
    remote.set_tier_marks([logs](const std::string& topic,
                                 int32_t partition) -> std::optional<tiering::remote_reader::tier_marks> {
        auto p = logs->partition(topic, partition);
        if (!p) return std::nullopt;
        const int64_t offloaded = p->offloaded_up_to()(); // read before the table (check_history)
        auto o = p->current_offsets();
        if (!o) return std::nullopt;
        return tiering::remote_reader::tier_marks{offloaded, o->log_start()};
    });
    health.add("tiered-history", [&remote] {
        auto gaps = remote.history_gaps();
        if (gaps.empty())
            return http::component_health{http::health_status::up, "every table read holds what was offloaded"};
        return http::component_health{http::health_status::down,
                                      fmt::format("{}; reads of those offsets answer a retriable error",
                                                  fmt::join(gaps, "; "))};
    });
    spdlog::info("local log: {} topic(s) under {}/log", logs->topics().size(), data_dir.string());
    // Per-partition offsets per tier, computed at scrape time.
    auto offsets_collector = metrics::registry::instance().add_collector([logs] {
        std::vector<metrics::collected_family> fams{
            {"floe_partition_local_start_offset", "First offset in the local tier.", "gauge", {}},
            {"floe_partition_log_end_offset", "Next offset to be written (high watermark).", "gauge", {}},
            {"floe_partition_offloaded_up_to", "Offsets below this are committed to Iceberg.", "gauge", {}},
            {"floe_offload_lag_records", "Records of tiered partitions not yet in Iceberg.", "gauge", {}},
            {"floe_offload_lag_seconds",
             "Age (by record timestamp) of the oldest record of a tiered partition not yet in Iceberg; 0 when none.",
             "gauge",
             {}}};
        auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
        for (auto& t : logs->topics())
            for (int32_t p = 0; p < t.partitions; ++p) {
                auto pl = logs->partition(t.name, p);
                if (!pl) continue;
                auto o = pl->offsets();
                metrics::labels l{{"topic", t.name}, {"partition", std::to_string(p)}};
                auto off = pl->offloaded_up_to()();
                fams[0].samples.push_back({fams[0].name, l, double(o.log_start())});
                fams[1].samples.push_back({fams[1].name, l, double(o.log_end())});
                fams[2].samples.push_back({fams[2].name, l, double(off)});
                if (t.config.remote_storage_enable) {
                    fams[3].samples.push_back({fams[3].name, l, double(std::max<int64_t>(0, o.log_end() - off))});
                    // The oldest record not yet offloaded, by its batch's timestamp (the append
                    // time for LogAppendTime batches); 0 when there is none.
                    double lag_s = 0;
                    if (auto h = pl->batch_header_at(kafka_offset(off)); h && *h) {
                        int64_t ts = (*h)->is_log_append_time() ? (*h)->max_timestamp : (*h)->base_timestamp;
                        lag_s = double(std::max<int64_t>(0, now_ms - ts)) / 1000.0;
                    }
                    fams[4].samples.push_back({fams[4].name, l, lag_s});
                }
            }
        return fams;
    });
    running.push_back({"partition metrics", [offsets_collector] {
                           metrics::registry::instance().remove_collector(offsets_collector);
                       }});
    health.add("kafka-listener", [&broker] {
        return http::component_health{http::health_status::up, fmt::format("listening on port {}", broker.port())};
    });
    health.add("local-log", [data_dir, logs] { return local_log_health(data_dir, *logs); });
    // Typed topics' dead letters: up (records that could not be decoded are kept, nothing stalls),
    // with the counts an operator acts on (`floe dlq replay` after a fix).
    health.add("dead-letters", [logs, &lake] {
        std::vector<std::string> parts;
        for (auto& t : logs->topics()) {
            if (!t.config.typed()) continue;
            auto n = lake::dead_letter_records(lake, t.name);
            if (!n) parts.push_back(fmt::format("{}: cannot count ({})", t.name, n.error().message()));
            else if (*n > 0)
                parts.push_back(fmt::format("{}: {} record(s) in {}", t.name, *n,
                                            lake::dlq_table_name(lake::table_name_for_topic(t.name))));
        }
        return http::component_health{http::health_status::up,
                                      parts.empty() ? std::string("no dead letters") : fmt::format("{}", fmt::join(parts, "; "))};
    });
    if (redis_client)
        health.add("redis", [redis_client] {
            if (auto p = redis_client->ping(); !p)
                return http::component_health{http::health_status::down,
                                              fmt::format("redis local tier unreachable: {}", p.error().message())};
            return http::component_health{http::health_status::up,
                                          fmt::format("redis local tier: {} master(s)", redis_client->masters().size())};
        });
    if (cluster_registry)
        // The cluster as this broker last saw it (the registry's cached live set, no round trip):
        // down while this broker is missing from it (its heartbeats have not reached Redis for a
        // session timeout, so the others have taken its partitions and groups).
        health.add("cluster", [cluster_registry] {
            auto live = cluster_registry->cached_live();
            std::vector<int32_t> ids;
            for (auto& b : live) ids.push_back(b.id);
            bool self = std::find(ids.begin(), ids.end(), cluster_registry->id()) != ids.end();
            return http::component_health{
                self ? http::health_status::up : http::health_status::down,
                fmt::format("broker {}{}: live brokers [{}]", cluster_registry->id(),
                            self ? "" : " is not in the live set (heartbeats not reaching Redis)", fmt::join(ids, ", "))};
        });

    // Declared before the worker, which calls it, so it is destroyed after the worker stops.
    auto maintainer = make_scheduled_maintainer(s, lake);
    std::unique_ptr<tiering::storage_worker> worker;
    if (s.get_bool("floe.storage.worker.enabled")) {
        tiering::worker_options wo;
        wo.tick_interval = s.get_duration("floe.storage.worker.tick-interval");
        wo.parallelism = static_cast<size_t>(s.get_int("floe.storage.worker.parallelism"));
        wo.maintainer = maintainer.get();
        wo.maintenance_interval = s.get_duration("floe.maintenance.interval");
        // The same broker (same data dir) restarting after a crash takes its own lease back at
        // once instead of waiting out the lease of its previous life.
        const int32_t broker_id = cluster_registry ? cluster_registry->id() : bo.node_id; // as joined
        auto owner = fmt::format("broker-{}@{}", broker_id, data_dir.string());
        auto lease_duration = s.get_duration("floe.storage.worker.lease-duration");
        if (redis_client) {
            // Brokers share the Redis tier: one lease per partition, in Redis, spread over the
            // live brokers of the registry.
            auto leases = redis_partition_leases::create(*redis_client, redis_local->ns, cluster_registry, broker_id,
                                                         owner, lease_duration);
            if (!leases) {
                spdlog::error("cannot start the storage worker's partition leases: {}", leases.error().message());
                for (auto it = running.rbegin(); it != running.rend(); ++it) it->stop();
                return 1;
            }
            worker = std::make_unique<tiering::storage_worker>(*logs, lake, std::move(*leases), wo);
            spdlog::info("storage worker: per-partition leases in Redis (broker {}, lease {} ms)", broker_id,
                         lease_duration.count());
        } else {
            auto lease = std::make_unique<tiering::file_lease>(data_dir / "tiering" / "lease", owner, lease_duration,
                                                               system_clock_source::instance());
            worker = std::make_unique<tiering::storage_worker>(*logs, lake, std::move(lease), wo);
        }
        worker->start();
        running.push_back({"storage worker", [&worker] { worker->stop(); }});
        health.add("storage-worker", [&worker] {
            auto h = worker->health();
            return http::component_health{h.ok ? http::health_status::up : http::health_status::down, h.message};
        });
        spdlog::info("storage worker: tick every {} ms, {} partition(s) at once", wo.tick_interval.count(),
                     wo.parallelism);
    } else {
        spdlog::info("storage worker disabled (floe.storage.worker.enabled=false)");
    }

    // Ingest: mirrors of external sources appended to local mirror topics (the storage worker
    // lands them in Iceberg like any topic). Stopped before the broker closes the log.
    // Hooks: a segment sealed by an ingest threshold wakes the worker; a Kafka source partition
    // changing owner starts from the table's committed position (read through the lake).
    ingest::ingest_hooks hooks;
    hooks.sealed = [&worker] {
        if (worker) worker->wake();
    };
    hooks.lake_position = [&lake](const std::string& topic, int32_t partition) -> result<int64_t> {
        auto table = FLOE_TRY(lake.table_for_topic(topic));
        auto positions = FLOE_TRY(table->committed_positions());
        auto it = positions.find(tiering::stream_key_for(topic, partition));
        return it == positions.end() ? 0 : it->second;
    };
    ingest::ingest_engine ingest(s, *logs, hooks);
    if (!ingest.empty()) {
        if (auto r = ingest.start(); !r) {
            spdlog::error("cannot start ingest: {}", r.error().message());
            for (auto it = running.rbegin(); it != running.rend(); ++it) it->stop();
            return 1;
        }
        running.push_back({"ingest", [&ingest] { ingest.stop(); }});
        for (auto& st : ingest.status())
            health.add("ingest-" + st.name, [&ingest, name = st.name] {
                for (auto& x : ingest.status())
                    if (x.name == name)
                        return x.state == "running" || x.state == "paused"
                                   ? http::component_health{http::health_status::up,
                                                            x.paused ? fmt::format("paused: {} bytes not yet in Iceberg "
                                                                                   "(max-local-bytes {})",
                                                                                   x.local_bytes, x.max_local_bytes)
                                                                     : fmt::format("{} partition(s) mirrored",
                                                                                   x.partitions.size())}
                                   : http::component_health{http::health_status::down,
                                                            x.last_error.empty() ? x.state : x.last_error};
                return http::component_health{http::health_status::down, "unknown source"};
            });
    }

    auto http_addr = s.get_address("floe.http.listen");
    http::server_options http_opts{.host = http_addr.host, .port = http_addr.port, .threads = 4};
    if (s.get_bool("floe.http.tls.enabled")) {
        auto cert = s.get_optional("floe.tls.cert-file"), key = s.get_optional("floe.tls.key-file");
        if (!cert || !key) {
            spdlog::error("'floe.http.tls.enabled' needs 'floe.tls.cert-file' and 'floe.tls.key-file'");
            return 2;
        }
        http_opts.tls = http::tls_files{*cert, *key};
    }
    std::unique_ptr<kafka::authorizer> http_acls; // asked by the HTTP threads: outlives `admin`
    // The last hour of the metrics, sampled every 10 s, for /v1/metrics/series (the console's
    // charts): declared before `admin`, whose threads read it.
    constexpr std::chrono::milliseconds metric_interval{10'000};
    http::metric_ring metric_history(360);
    // The produce rate per topic too (1,000 topics; beyond, the first 1,000 by name).
    http::metric_sampler metric_sampling(metric_history, metric_interval, {http::produce_rate_per_topic()});
    http::server admin(http_opts);
    // Every HTTP request has a principal for the ACLs: the bearer token's with
    // floe.http.tokens-file (then only floe.http.open-paths go without one), else User:ANONYMOUS.
    // A guard on the whole path space, so routes added under any prefix (/v1, /iceberg) are covered.
    std::vector<std::string> open_paths;
    for (auto p : std::views::split(s.get_string("floe.http.open-paths"), ','))
        if (auto v = std::string(p.begin(), p.end()); !v.empty()) open_paths.push_back(v);
    std::shared_ptr<http::token_guard> tokens;
    if (auto f = s.get_optional("floe.http.tokens-file")) {
        tokens = std::make_shared<http::token_guard>(*f, open_paths);
        if (auto r = tokens->load(); !r) {
            spdlog::error("invalid value for 'floe.http.tokens-file': {}", r.error().message());
            return 2;
        }
        admin.guard_prefix("", [tokens](http::request& r) { return (*tokens)(r); });
        // The console's static files hold no data and must load before the user gives a token;
        // everything it shows comes from /v1, under the token guard and the ACLs.
        admin.guard_prefix("/console", [](http::request& r) -> std::optional<http::response> {
            r.principal = "User:ANONYMOUS";
            return std::nullopt;
        });
    } else {
        admin.guard_prefix("", [](http::request& r) -> std::optional<http::response> {
            r.principal = "User:ANONYMOUS";
            return std::nullopt;
        });
    }
    http::add_admin_routes(admin, health);
    http::add_ingest_routes(admin, ingest);
    http::add_metric_routes(admin, metric_history, metric_interval);
    if (s.get_bool("floe.http.console.enabled"))
        http::add_console_routes(admin, {.export_enabled = s.get_bool("floe.http.console.export"),
                                         .tokens = tokens != nullptr});
    http::lookup_options lookup_opts;
    lookup_opts.maintainer = maintainer.get(); // each table's state in /v1/topics
    lookup_opts.export_enabled = s.get_bool("floe.http.console.export");
    lookup_opts.max_searches_per_client = static_cast<size_t>(s.get_int("floe.http.search.max-per-client"));
    http::lookup_service lookups(*logs, &lake, &remote, lookup_opts);
    if (auto* gc = broker.groups()) {
        // /v1/groups: the coordinator's groups (classic and KIP-848) and their committed offsets.
        lookups.set_groups([gc, logs]() -> result<std::vector<http::group_info>> {
            std::vector<http::group_info> out;
            std::set<std::string> consumer_groups;
            for (auto& [name, state] : gc->consumer().list()) consumer_groups.insert(name);
            for (auto& g : gc->list({}).groups) {
                http::group_info gi;
                gi.id = g.group_id;
                gi.state = g.state;
                gi.protocol_type = g.protocol_type;
                auto d = gc->describe(g.group_id);
                bool classic = !d.members.empty() || (d.state != "Empty" && d.state != "Dead");
                gi.kind = classic ? "classic" : consumer_groups.contains(g.group_id) ? "consumer" : "";
                for (auto& m : d.members)
                    gi.members.push_back({m.member_id, m.client_id, m.client_host, m.group_instance_id, {}, {}});
                if (gi.kind == "consumer") {
                    // KIP-848 members as ConsumerGroupDescribe shows them: epoch and owned partitions.
                    std::vector<kafka::cg_topic> topics;
                    for (auto& t : logs->topics()) topics.push_back({t.name, t.id, t.partitions});
                    auto cd = gc->consumer().describe(g.group_id, topics);
                    gi.state = cd.group_state;
                    for (auto& m : cd.members) {
                        std::vector<std::pair<std::string, std::vector<int32_t>>> owned;
                        for (auto& tp : m.assignment) owned.push_back({tp.topic_name, tp.partitions});
                        gi.members.push_back({m.member_id, m.client_id, m.client_host, m.instance_id, m.member_epoch,
                                              std::move(owned)});
                    }
                }
                auto committed = gc->offsets().load(g.group_id);
                if (!committed) return fail(std::move(committed).error());
                for (auto& [k, c] : *committed)
                    if (c.offset >= 0) gi.committed.push_back({k.first, k.second, c.offset});
                out.push_back(std::move(gi));
            }
            return out;
        });
    }
    if (auto* gc = broker.groups()) {
        // Each group's lag in records (high watermark minus the committed offset, clamped at the
        // log start across both tiers), for /metrics and the console's lag charts (the metric
        // ring keeps families of up to 32 children per child).
        auto lag_collector = metrics::registry::instance().add_collector([gc, logs, &remote] {
            std::vector<metrics::collected_family> fams{
                {"floe_group_lag_records", "Records of the group's committed partitions not yet consumed.", "gauge", {}}};
            for (auto& name : gc->offsets().groups()) {
                double lag = 0;
                for (auto& [k, c] : gc->offsets().all(name)) {
                    auto pl = logs->partition(k.first, k.second);
                    if (!pl || c.offset < 0) continue;
                    auto o = pl->offsets();
                    int64_t lo = o.log_start();
                    if (auto rs = remote.start_offset(k.first, k.second); rs && *rs) lo = std::min(lo, **rs);
                    lag += double(std::max<int64_t>(0, o.high_watermark() - std::max(c.offset, lo)));
                }
                fams[0].samples.push_back({fams[0].name, {{"group", name}}, lag});
            }
            return fams;
        });
        running.push_back({"group lag metrics", [lag_collector] {
                               metrics::registry::instance().remove_collector(lag_collector);
                           }});
    }
    lookups.add_routes(admin);
    // /v1 and /iceberg ask the Kafka ACLs (same store and super users as the Kafka APIs). They
    // are strict (no ACL = no access) when a Kafka listener authenticates, as for Kafka, and
    // also when the HTTP plane itself authenticates (floe.http.tokens-file): a token names a
    // principal, and a principal gets what its ACLs grant.
    http::access_control http_access;
    if (auto* acl = broker.acl_authorizer()) {
        http_acls = std::make_unique<kafka::authorizer>(acl->store(), bo.super_users, acl->strict() || tokens != nullptr);
        http_access = http::access_control([a = http_acls.get()](const std::string& principal, const std::string& host,
                                                                 http::acl_op op, http::acl_type type,
                                                                 std::string_view name) {
            auto kop = op == http::acl_op::describe ? kafka::acl_operation::describe
                       : op == http::acl_op::read   ? kafka::acl_operation::read
                       : op == http::acl_op::write  ? kafka::acl_operation::write
                       : op == http::acl_op::create ? kafka::acl_operation::create
                                                    : kafka::acl_operation::alter;
            auto ktype = type == http::acl_type::topic   ? kafka::acl_resource::topic
                         : type == http::acl_type::group ? kafka::acl_resource::group
                                                         : kafka::acl_resource::cluster;
            return a->allowed(principal, host, kop, ktype, name);
        });
        spdlog::info("http plane: /v1 and /iceberg follow the ACLs ({})",
                     http_acls->strict() ? "strict: no ACL means no access" : "open where no ACL names a resource");
    }
    lookups.set_access(http_access);
    // GET /v1/brokers: the brokers Metadata lists (the console's overview); DESCRIBE on the cluster.
    admin.route("GET", "/v1/brokers", [&broker, &http_access](const http::request& r) {
        http::count_request("/v1/brokers");
        if (!http_access.allows(r, http::acl_op::describe, http::acl_type::cluster, http::access_control::cluster_name))
            return http::response::error(403, fmt::format("{} may not describe the cluster", r.principal));
        std::string out;
        for (auto& b : broker.cluster_brokers())
            out += fmt::format(R"({}{{"node_id":{},"host":"{}","port":{},"self":{}}})", out.empty() ? "" : ",", b.node_id,
                               floe::json_escape(b.host), b.port, b.node_id == broker.node_id());
        return http::response::json(200, fmt::format(R"({{"brokers":[{}]}})", out));
    });
    // GET /v1/cluster, /v1/security/users, /v1/security/acls (the console's cluster and
    // security pages, read-only): DESCRIBE on the cluster, as /v1/brokers.
    app::add_cluster_routes(admin, http_access,
                            {.broker = &broker,
                             .acls = broker.acl_authorizer() ? &broker.acl_authorizer()->store() : nullptr,
                             .super_users = bo.super_users,
                             .strict_acls = http_acls && http_acls->strict(),
                             .security_dir = data_dir / "security",
                             .file_lease = data_dir / "tiering" / "lease",
                             .redis = redis_client.get(),
                             .redis_ns = redis_local ? redis_local->ns : std::string(),
                             .registry = cluster_registry});
    // The Iceberg REST catalog over Floe's own catalog: engines find and commit to its tables.
    const auto topics_ns = s.get_string("floe.namespace");
    http::iceberg_rest iceberg_catalog(catalog, io, {.warehouse = warehouse, .topics_namespace = topics_ns});
    // A topic's table follows the topic's ACLs: the topic whose table name it is (or a topic
    // named so, for the 404 hint); a table of no topic is the cluster's.
    iceberg_catalog.set_access(http_access, [&logs, topics_ns](const std::string& ns,
                                                               const std::string& table) -> std::optional<std::string> {
        if (ns != topics_ns) return std::nullopt;
        if (auto t = logs->topic(table)) return t->name;
        for (auto& t : logs->topics())
            if (lake::table_name_for_topic(t.name) == table) return t.name;
        return std::nullopt;
    });
    iceberg_catalog.add_routes(admin);
    if (auto r = admin.start(); !r) {
        if (r.error().code() == errc::already_exists)
            spdlog::error("{}", address_in_use(s, "floe.http.listen", r.error()));
        else
            spdlog::error("{}; set floe.http.listen to a free address", r.error().message());
        return 1;
    }
    running.push_back({"http admin plane", [&admin] { admin.stop(); }});

    // The schema registry on its own listener, with the HTTP plane's TLS and bearer tokens. Its
    // log: a framed file under the data directory (embedded tier), or a Redis list shared by
    // every broker of the cluster (Redis tier).
    std::shared_ptr<schema::registry> schemas;
    std::unique_ptr<schema::rest_api> schema_api;
    std::unique_ptr<http::server> schema_server;
    if (s.get_bool("floe.schema-registry.enabled")) {
        std::unique_ptr<schema::registry_log> slog;
        if (redis_client) {
            slog = make_redis_schema_log(redis_client, redis_local->ns);
        } else {
            auto l = open_file_schema_log(data_dir / "schemas");
            if (!l) {
                spdlog::error("cannot open the schema registry's log: {}; check floe.data-dir", l.error().message());
                for (auto it = running.rbegin(); it != running.rend(); ++it) it->stop();
                return 1;
            }
            slog = std::move(*l);
        }
        auto where = slog->describe();
        schemas = std::make_shared<schema::registry>(std::shared_ptr<schema::registry_log>(std::move(slog)));
        if (auto r = schemas->refresh(); !r)
            spdlog::warn("schema registry: cannot read its log at {} yet: {}", where, r.error().message());
        lake.set_registry(schemas); // typed tables decode with it
        schema_api = std::make_unique<schema::rest_api>(*schemas);
        auto addr = s.get_address("floe.schema-registry.listen");
        http::server_options so;
        so.host = addr.host;
        so.port = addr.port;
        so.threads = 4;
        so.max_body_bytes = 2 * 1024 * 1024; // schemas are small: a 10 MB body is a 413, unread
        so.tls = http_opts.tls;
        so.error_body = http::schema_registry_error;
        schema_server = std::make_unique<http::server>(so);
        http::guard g;
        if (tokens) g = [tokens](http::request& r) { return (*tokens)(r); };
        http::add_schema_registry_routes(*schema_server, *schema_api, g);
        if (auto r = schema_server->start(); !r) {
            if (r.error().code() == errc::already_exists)
                spdlog::error("{}", address_in_use(s, "floe.schema-registry.listen", r.error()));
            else
                spdlog::error("{}; set floe.schema-registry.listen to a free address (or "
                              "floe.schema-registry.enabled=false)",
                              r.error().message());
            for (auto it = running.rbegin(); it != running.rend(); ++it) it->stop();
            return 1;
        }
        running.push_back({"schema registry", [&schema_server] { schema_server->stop(); }});
        health.add("schema-registry", [schemas, where, port = schema_server->port()] {
            if (auto r = schemas->refresh(); !r)
                return http::component_health{http::health_status::down,
                                              fmt::format("cannot read the registry log at {}: {}", where,
                                                          r.error().message())};
            return http::component_health{http::health_status::up,
                                          fmt::format("port {}, log at {} ({} records)", port, where,
                                                      schemas->position())};
        });
        spdlog::info("schema registry listening on {}:{} (log: {})", addr.host, schema_server->port(), where);
    } else {
        spdlog::info("schema registry disabled (floe.schema-registry.enabled=false)");
    }
    // The bound ports (listen addresses may use port 0), for the message a second floe prints.
    if (auto r = dir_lock->describe(fmt::format("kafka={}:{} http={}:{}", s.get_address("floe.kafka.listen").host,
                                                broker.port(), http_addr.host, admin.port()));
        !r)
        spdlog::warn("{}", r.error().message());
    spdlog::info("http admin plane listening on {}:{} (/metrics, /healthz, /readyz, /v1/topics, /v1/ingest, /iceberg/v1)", http_addr.host,
                 admin.port());
    spdlog::info("floe is up; stop it with Ctrl-C or SIGTERM");

    int sig = 0;
    for (;;) {
        sigwait(&stop_signals, &sig);
        if (sig != SIGHUP) break;
        // Certificates renewed on disk: new connections get them, open ones are kept.
        if (auto r = broker.reload_tls(); !r) spdlog::error("SIGHUP: Kafka TLS kept as before: {}", r.error());
        if (auto r = admin.reload_tls(); !r) spdlog::error("SIGHUP: HTTP TLS kept as before: {}", r.error());
        if (schema_server)
            if (auto r = schema_server->reload_tls(); !r)
                spdlog::error("SIGHUP: schema registry TLS kept as before: {}", r.error());
        spdlog::info("SIGHUP: TLS certificates re-read");
        // A rotated keyring (a new current key): new files use it, old ids stay readable.
        if (auto* ring = dynamic_cast<crypto::keyring_provider*>(key_provider.get())) {
            if (auto r = ring->reload(); !r) spdlog::error("SIGHUP: keyring kept as before: {}", r.error());
            else spdlog::info("SIGHUP: {}", ring->describe());
        }
    }
    spdlog::info("received {}, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    for (auto it = running.rbegin(); it != running.rend(); ++it) {
        spdlog::info("stopping {}", it->name);
        it->stop();
    }
    spdlog::info("floe stopped cleanly");
    return 0;
}

} // namespace floe::app
