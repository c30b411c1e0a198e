#include "app/cluster_lake.h"

#include "app/storage.h"
#include "base/uuid.h"
#include "config/redact.h"
#include "iceberg/catalog.h"
#include "redis/client.h"
#include "redis/coordination.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

namespace floe::app {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

/// The catalog's namespace property holding the lake id.
constexpr const char* lake_id_property = "floe.lake-id";

/// `path` absolute and normalized, without a trailing '/'.
std::string absolute_path(std::string_view path) {
    auto p = fs::absolute(fs::path(path)).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}


bool is_local(const lake_difference& d) {
    return d.setting == "floe.storage.remote.path" ? d.broker_value.starts_with("file://") || d.cluster_value.starts_with("file://")
           : d.setting == "floe.storage.remote.catalog.uri"
               ? d.broker_value.starts_with("sqlite://") || d.cluster_value.starts_with("sqlite://")
               : false;
}

/// The Redis options of floe.local.redis.*, as `floe serve` builds them.
result<redis::options> redis_options(const config::settings& s) {
    auto uri = s.get_optional("floe.local.redis.uri");
    if (s.get_string("floe.local.type") != "redis" || !uri || uri->empty())
        return fail(errc::invalid_argument,
                    "the cluster's lake lives in Redis: set floe.local.type=redis and floe.local.redis.uri as the "
                    "brokers do");
    auto ro = FLOE_TRY(redis::parse_uris(*uri, "floe.local.redis.uri"));
    ro.connect_timeout = s.get_duration("floe.local.redis.connect-timeout");
    ro.command_timeout = s.get_duration("floe.local.redis.command-timeout");
    ro.pool_size = 2;
    ro.client_name = "floe";
    return ro;
}

void print_lake(const char* title, const lake_identity& l) {
    std::printf("%s\n", title);
    std::printf("  floe.storage.remote.catalog.type  %s\n", l.catalog_type.c_str());
    std::printf("  floe.storage.remote.catalog.uri   %s\n", l.catalog_uri.empty() ? "(not used)" : l.catalog_uri.c_str());
    std::printf("  floe.storage.remote.path          %s\n", l.warehouse.c_str());
    std::printf("  floe.namespace                    %s\n", l.ns.c_str());
    std::printf("  catalog id (%s)            %s\n", lake_id_property,
                l.catalog_id.empty() ? "(none: the catalog keeps no namespace properties)" : l.catalog_id.c_str());
}

} // namespace

std::string lake_identity::to_json() const {
    json j{{"catalog-type", catalog_type},
           {"catalog-uri", catalog_uri},
           {"warehouse", warehouse},
           {"namespace", ns},
           {"catalog-id", catalog_id}};
    return j.dump();
}

result<lake_identity> lake_identity::from_json(std::string_view text) {
    auto j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return fail(errc::corrupt, "the cluster's lake record is not a JSON object: {}", text);
    lake_identity l;
    l.catalog_type = j.value("catalog-type", "");
    l.catalog_uri = j.value("catalog-uri", "");
    l.warehouse = j.value("warehouse", "");
    l.ns = j.value("namespace", "");
    l.catalog_id = j.value("catalog-id", "");
    return l;
}

lake_identity configured_lake(const config::settings& s) {
    lake_identity l;
    l.catalog_type = s.get_string("floe.storage.remote.catalog.type");
    auto uri = s.get_string("floe.storage.remote.catalog.uri");
    if (l.catalog_type == "sql") {
        if (auto db = iceberg::sqlite_catalog_path(uri); db && !db->empty() && *db != ":memory:")
            l.catalog_uri = "sqlite://" + absolute_path(*db);
        else
            l.catalog_uri = config::redact_uri(uri);
    } else if (l.catalog_type == "rest" || l.catalog_type == "hive" || l.catalog_type == "nessie") {
        l.catalog_uri = config::redact_uri(uri);
        while (l.catalog_uri.size() > 1 && l.catalog_uri.back() == '/') l.catalog_uri.pop_back();
    } // filesystem and glue do not use the uri: its SQLite default must not count
    auto wh = s.get_string("floe.storage.remote.path");
    if (wh.starts_with("file://")) wh = "file://" + absolute_path(wh.substr(7));
    while (wh.size() > 1 && wh.back() == '/') wh.pop_back();
    l.warehouse = wh;
    l.ns = s.get_string("floe.namespace");
    return l;
}

result<std::string> catalog_lake_id(iceberg::catalog& cat, const std::string& ns) {
    auto id = FLOE_TRY(cat.namespace_property_set_once(ns, lake_id_property, uuid::random().to_string()));
    return id.value_or("");
}

std::vector<lake_difference> compare_lakes(const lake_identity& cluster, const lake_identity& broker) {
    std::vector<lake_difference> out;
    auto cmp = [&](const char* setting, const std::string& a, const std::string& b) {
        if (a != b) out.push_back({setting, a, b});
    };
    cmp("floe.storage.remote.catalog.type", cluster.catalog_type, broker.catalog_type);
    cmp("floe.storage.remote.catalog.uri", cluster.catalog_uri, broker.catalog_uri);
    cmp("floe.storage.remote.path", cluster.warehouse, broker.warehouse);
    cmp("floe.namespace", cluster.ns, broker.ns);
    // The id tells two catalogs behind the same settings apart; with other settings it adds nothing.
    if (out.empty() && !cluster.catalog_id.empty() && !broker.catalog_id.empty())
        cmp("catalog id (namespace property floe.lake-id: the same URI reaches another catalog)", cluster.catalog_id,
            broker.catalog_id);
    return out;
}

std::string describe_lake_mismatch(const std::vector<lake_difference>& diffs, const lake_identity& broker,
                                   const std::string& data_dir) {
    std::string out = "this broker's lake is not the cluster's (every broker of a cluster must offload into the same "
                      "catalog and warehouse, or a partition's history splits between tables):";
    for (auto& d : diffs)
        out += fmt::format(" {}: cluster '{}', this broker '{}';", d.setting, d.cluster_value, d.broker_value);
    bool local = false, under_data_dir = false;
    for (auto& d : diffs) {
        local = local || is_local(d);
        auto v = d.broker_value.starts_with("sqlite://") ? d.broker_value.substr(9)
                 : d.broker_value.starts_with("file://") ? d.broker_value.substr(7)
                                                          : std::string();
        if (!v.empty() && (v == data_dir || v.starts_with(data_dir + "/"))) under_data_dir = true;
    }
    if (under_data_dir)
        out += fmt::format(" a SQLite catalog or file:// warehouse under floe.data-dir ({}) is this broker's alone;",
                           data_dir);
    if (local)
        out += " local paths are shared only by brokers on one machine naming the same absolute path;";
    (void)broker;
    out += " start this broker with the cluster's settings (a shared catalog such as PostgreSQL or a REST catalog, "
           "and a shared warehouse such as s3://), or change the cluster's lake on purpose with `floe cluster lake "
           "set` (see the README)";
    return out;
}

std::string cluster_lake_key(const std::string& ns) { return fmt::format("{}{{{}.brokers}}.lake", ns, ns); }

result<lake_check> record_or_compare_lake(redis::client& c, const std::string& ns, const lake_identity& mine,
                                          std::vector<lake_difference>* diffs) {
    auto key = cluster_lake_key(ns);
    auto text = mine.to_json();
    // SET NX: of brokers starting at once, exactly one records its lake; the others compare.
    auto set = FLOE_TRY(c.command({"SET", key, text, "NX"}));
    if (!set.is_nil()) return lake_check::recorded;
    auto got = FLOE_TRY(c.command({"GET", key}));
    if (got.is_nil()) return fail(errc::unavailable, "the cluster's lake record {} vanished; start again", key);
    auto cluster = FLOE_TRY(lake_identity::from_json(FLOE_TRY(got.as_string())));
    auto d = compare_lakes(cluster, mine);
    if (d.empty()) {
        // A record written without a catalog id (the catalog was unreachable) gets this one.
        if (cluster.catalog_id.empty() && !mine.catalog_id.empty())
            (void)c.command({"SET", key, text, "XX"});
        return lake_check::matches;
    }
    if (diffs) *diffs = std::move(d);
    return lake_check::differs;
}

int check_cluster_lake(const config::settings& s, const redis::options& ro, iceberg::catalog& cat) {
    auto mine = configured_lake(s);
    if (auto id = catalog_lake_id(cat, mine.ns); id)
        mine.catalog_id = std::move(*id);
    else
        spdlog::warn("cluster lake: cannot read the catalog's lake id ({}); comparing the settings only",
                     id.error().message());
    auto ns = s.get_string("floe.namespace");
    // Redis down or still loading its data (a restart beside this one) is waited for, up to 30 s
    // with a line every 5 s: a broker of a cluster should not need a supervisor to outlast a Redis
    // restart. Anything else (a wrong password, a refused command) stops start-up at once.
    std::vector<lake_difference> diffs;
    result<lake_check> r = fail(errc::unavailable, "not tried");
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto next_note = std::chrono::steady_clock::now();
    for (int attempt = 1;; ++attempt) {
        auto c = redis::client::connect(ro);
        if (c) r = record_or_compare_lake(**c, ns, mine, &diffs);
        else r = std::unexpected(c.error());
        if (r || !is_retryable(r.error().code()) || std::chrono::steady_clock::now() >= give_up) break;
        if (std::chrono::steady_clock::now() >= next_note) {
            spdlog::warn("floe.local.redis.uri: waiting for Redis to check the cluster's lake (attempt {}, up to "
                         "30 s): {}",
                         attempt, r.error().message());
            next_note = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (!r) {
        spdlog::error("floe.local.redis.uri: checking the cluster's lake in Redis: {}; start Floe again once Redis "
                      "answers",
                      r.error().message());
        return 1;
    }
    switch (*r) {
    case lake_check::recorded:
        spdlog::info("cluster lake: recorded this broker's lake as the cluster's ({} catalog {}, warehouse {}, "
                     "namespace '{}', catalog id {})",
                     mine.catalog_type, mine.catalog_uri, mine.warehouse, mine.ns,
                     mine.catalog_id.empty() ? "none" : mine.catalog_id);
        return 0;
    case lake_check::matches:
        spdlog::info("cluster lake: this broker's lake is the cluster's (catalog id {})",
                     mine.catalog_id.empty() ? "none" : mine.catalog_id);
        return 0;
    case lake_check::differs:
        break;
    }
    auto data_dir = absolute_path(s.get_string("floe.data-dir"));
    spdlog::error("{}", describe_lake_mismatch(diffs, mine, data_dir));
    return 2;
}

int run_cluster_lake_command(const config::settings& s, const std::string& action, bool force) {
    auto ro = redis_options(s);
    if (!ro) {
        std::fprintf(stderr, "floe cluster lake: %s\n", ro.error().message().c_str());
        return 2;
    }
    auto ns = s.get_string("floe.namespace");
    auto c = redis::client::connect(*ro);
    if (!c) {
        std::fprintf(stderr, "floe cluster lake: floe.local.redis.uri: cannot connect to Redis: %s\n",
                     c.error().message().c_str());
        return 1;
    }
    auto key = cluster_lake_key(ns);
    auto got = (*c)->command({"GET", key});
    if (!got) {
        std::fprintf(stderr, "floe cluster lake: reading %s: %s\n", key.c_str(), got.error().message().c_str());
        return 1;
    }
    std::optional<lake_identity> recorded;
    if (!got->is_nil()) {
        auto l = lake_identity::from_json(got->str());
        if (l) recorded = std::move(*l);
    }
    if (action == "show") {
        if (!recorded) {
            std::printf("no lake recorded for namespace '%s' (the first broker to start records its own)\n", ns.c_str());
            return 0;
        }
        print_lake(fmt::format("the cluster's lake (namespace '{}', Redis key {}):", ns, key).c_str(), *recorded);
        return 0;
    }
    // set: this configuration's lake becomes the cluster's. Brokers still running keep writing
    // to the old lake, so live ones stop it unless --force.
    auto reg = redis::broker_registry::create(**c, ns, 0, "", std::chrono::seconds(1), "");
    if (!reg) {
        std::fprintf(stderr, "floe cluster lake: reading the broker registry: %s\n", reg.error().message().c_str());
        return 1;
    }
    auto live = (*reg)->live();
    if (!live) {
        std::fprintf(stderr, "floe cluster lake: reading the live brokers: %s\n", live.error().message().c_str());
        return 1;
    }
    if (!live->empty() && !force) {
        std::string ids;
        for (auto& b : *live) ids += (ids.empty() ? "" : ", ") + std::to_string(b.id);
        std::fprintf(stderr,
                     "floe cluster lake set: broker(s) %s of namespace '%s' are live and write to the recorded "
                     "lake; stop every broker first (or pass --force)\n",
                     ids.c_str(), ns.c_str());
        return 2;
    }
    // As `floe serve` does: a SQLite catalog's directory is created when missing.
    if (auto db = iceberg::sqlite_catalog_path(s.get_string("floe.storage.remote.catalog.uri"));
        db && !db->empty() && *db != ":memory:" && s.get_string("floe.storage.remote.catalog.type") == "sql") {
        std::error_code ec;
        fs::create_directories(fs::path(absolute_path(*db)).parent_path(), ec);
    }
    auto storage = make_file_io(s);
    if (!storage) {
        std::fprintf(stderr, "floe cluster lake: %s\n", storage.error().message().c_str());
        return 2;
    }
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        std::fprintf(stderr, "floe cluster lake: cannot open the catalog: %s\n",
                     config::redact_uri(cat.error().message()).c_str());
        return 1;
    }
    auto mine = configured_lake(s);
    auto id = catalog_lake_id(**cat, mine.ns);
    if (!id) {
        std::fprintf(stderr, "floe cluster lake: reading the catalog's lake id: %s\n", id.error().message().c_str());
        return 1;
    }
    mine.catalog_id = *id;
    auto set = (*c)->command({"SET", key, mine.to_json()});
    if (!set) {
        std::fprintf(stderr, "floe cluster lake: writing %s: %s\n", key.c_str(), set.error().message().c_str());
        return 1;
    }
    if (recorded) print_lake("was:", *recorded);
    print_lake(fmt::format("the cluster's lake is now (namespace '{}'):", ns).c_str(), mine);
    return 0;
}

} // namespace floe::app
