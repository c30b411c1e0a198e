#include "iceberg/hive_catalog.h"

#include "iceberg/glue_catalog.h" // table_location_of

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <thread>

namespace floe::iceberg {
namespace {

using thrift::ttype;
using thrift::tvalue;
using clock = std::chrono::steady_clock;

constexpr const char* metadata_key = "metadata_location";
constexpr const char* previous_key = "previous_metadata_location";

std::string upper(std::string v) {
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return v;
}

std::map<std::string, std::string> parameters_of(const tvalue& table) {
    auto* p = table.field(hms::table_f::parameters);
    return p ? p->as_string_map() : std::map<std::string, std::string>();
}

bool is_iceberg(const tvalue& table) {
    auto p = parameters_of(table);
    auto it = p.find("table_type");
    return it != p.end() && upper(it->second) == "ICEBERG";
}

int32_t now_seconds() {
    return static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
}

const char* state_name(hms::lock_state s) {
    switch (s) {
    case hms::lock_state::acquired:
        return "ACQUIRED";
    case hms::lock_state::waiting:
        return "WAITING";
    case hms::lock_state::abort:
        return "ABORT";
    case hms::lock_state::not_acquired:
        return "NOT_ACQUIRED";
    }
    return "?";
}

} // namespace

/// A granted lock and when it was last heartbeaten; released by its owner (swap) on every path.
struct hive_catalog::held_lock {
    int64_t id = 0;
    clock::time_point last_heartbeat;
};

hive_catalog::hive_catalog(hive_catalog_options o) : _o(std::move(o)) {
    if (_o.user.empty()) {
        const char* u = std::getenv("USER");
        _o.user = u && *u ? u : "floe";
    }
    if (_o.hostname.empty()) {
        char host[256] = {};
        _o.hostname = ::gethostname(host, sizeof host - 1) == 0 ? host : "localhost";
    }
    _client = std::make_unique<hms::client>(_o.metastore);
}

tvalue hive_catalog::new_table(const table_ident& t, const std::string& metadata_location,
                               const std::string& owner) {
    auto serde = tvalue::strct(
        {{hms::serde_f::name, tvalue::str(t.name)},
         {hms::serde_f::lib, tvalue::str("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")},
         {hms::serde_f::parameters, tvalue::string_map({})}});
    // Iceberg's HiveCatalog uses the plain file formats: Hive itself reads the table through
    // Iceberg's storage handler, other engines through the metadata_location parameter.
    auto sd = tvalue::strct(
        {{hms::sd_f::cols, tvalue::list(ttype::strct)},
         {hms::sd_f::location, tvalue::str(table_location_of(metadata_location))},
         {hms::sd_f::input_format, tvalue::str("org.apache.hadoop.mapred.FileInputFormat")},
         {hms::sd_f::output_format, tvalue::str("org.apache.hadoop.mapred.FileOutputFormat")},
         {hms::sd_f::compressed, tvalue::boolean(false)},
         {hms::sd_f::num_buckets, tvalue::i32(-1)},
         {hms::sd_f::serde, std::move(serde)},
         {hms::sd_f::bucket_cols, tvalue::list(ttype::string)},
         {hms::sd_f::parameters, tvalue::string_map({})}});
    auto now = now_seconds();
    return tvalue::strct(
        {{hms::table_f::name, tvalue::str(t.name)},
         {hms::table_f::db, tvalue::str(t.ns)},
         {hms::table_f::owner, tvalue::str(owner)},
         {hms::table_f::create_time, tvalue::i32(now)},
         {hms::table_f::last_access, tvalue::i32(now)},
         {hms::table_f::retention, tvalue::i32(0)},
         {hms::table_f::sd, std::move(sd)},
         {hms::table_f::partition_keys, tvalue::list(ttype::strct)},
         {hms::table_f::parameters, tvalue::string_map({{"EXTERNAL", "TRUE"},
                                                        {"table_type", "ICEBERG"},
                                                        {metadata_key, metadata_location}})},
         {hms::table_f::table_type, tvalue::str("EXTERNAL_TABLE")}});
}

tvalue hive_catalog::moved_table(tvalue current, const std::string& metadata_location,
                                 const std::string& previous) {
    auto params = parameters_of(current);
    params["table_type"] = "ICEBERG";
    params[metadata_key] = metadata_location;
    if (previous.empty())
        params.erase(previous_key);
    else
        params[previous_key] = previous;
    current.set(hms::table_f::parameters, tvalue::string_map(params));
    if (auto* sd = current.field(hms::table_f::sd); sd && sd->type == ttype::strct)
        sd->set(hms::sd_f::location, tvalue::str(table_location_of(metadata_location)));
    return current;
}

result<std::string> hive_catalog::location_of(const table_ident& t, const tvalue& table) {
    auto p = parameters_of(table);
    if (!is_iceberg(table))
        return fail(
            errc::invalid_argument,
            "metastore table {}.{} is not an Iceberg table (its table_type parameter is '{}')",
            t.ns, t.name, p.contains("table_type") ? p.at("table_type") : "");
    auto it = p.find(metadata_key);
    if (it == p.end() || it->second.empty())
        return fail(errc::corrupt, "metastore table {}.{} has no metadata_location parameter", t.ns,
                    t.name);
    return it->second;
}

result<void> hive_catalog::create_namespace_if_missing(const std::string& ns) {
    if (FLOE_TRY(_client->get_database(ns))) return {};
    std::string location;
    if (!_o.warehouse.empty()) {
        location = _o.warehouse;
        while (location.ends_with("/"))
            location.pop_back();
        location += "/" + ns;
    }
    auto created = _client->create_database(ns, location);
    if (created || created.error().code() == errc::already_exists) return {};
    // The answer may have been lost: the database is there or it is not.
    if (auto again = _client->get_database(ns); again && *again) return {};
    return created;
}

result<bool> hive_catalog::namespace_exists(const std::string& ns) {
    return FLOE_TRY(_client->get_database(ns)).has_value();
}

result<std::vector<std::string>> hive_catalog::list_namespaces() {
    auto dbs = FLOE_TRY(_client->get_all_databases());
    std::sort(dbs.begin(), dbs.end());
    return dbs;
}

result<std::optional<std::string>> hive_catalog::metadata_location(const table_ident& t) {
    auto table = FLOE_TRY(_client->get_table(t.ns, t.name));
    if (!table) return std::optional<std::string>();
    return std::optional<std::string>(FLOE_TRY(location_of(t, *table)));
}

result<void> hive_catalog::create_table(const table_ident& t, const std::string& location) {
    auto created = _client->create_table(new_table(t, location, _o.user));
    if (created || created.error().code() == errc::already_exists) return created;
    // The answer was lost: the table is ours if it points at our metadata.
    auto table = _client->get_table(t.ns, t.name);
    if (table && *table && parameters_of(**table)[metadata_key] == location) return {};
    return created;
}

result<hive_catalog::held_lock> hive_catalog::acquire(const table_ident& t) {
    auto started = clock::now();
    auto r = FLOE_TRY_CTX(_client->lock_table(t.ns, t.name, _o.user, _o.hostname, "floe"),
                          "locking {}.{} for a commit", t.ns, t.name);
    held_lock lock{r.lock_id, clock::now()};
    auto pause = _o.lock_check_min;
    bool told = false;
    while (r.state == hms::lock_state::waiting) {
        if (clock::now() - started >= _o.lock_wait) {
            if (auto u = _client->unlock(lock.id); !u)
                spdlog::warn("hive: giving up lock {} on {}.{}: {}", lock.id, t.ns, t.name,
                             u.error().message());
            return fail(errc::timeout,
                        "metastore {}: the lock on {}.{} was not granted within {} ms (another "
                        "client holds it)",
                        address(), t.ns, t.name, _o.lock_wait.count());
        }
        if (!told) {
            spdlog::info("hive: waiting for the metastore lock on {}.{} (lock {}; another client "
                         "holds the table)",
                         t.ns, t.name, lock.id);
            told = true;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, _o.lock_check_max);
        if (clock::now() - lock.last_heartbeat >= _o.heartbeat_interval) {
            if (auto h = _client->heartbeat(lock.id); !h) {
                if (h.error().code() != errc::not_found) (void)_client->unlock(lock.id);
                return fail(errc::unavailable, "heartbeat of lock {} on {}.{}: {}", lock.id, t.ns,
                            t.name, h.error().message());
            }
            lock.last_heartbeat = clock::now();
        }
        auto checked = _client->check_lock(lock.id);
        if (!checked) {
            if (checked.error().code() != errc::not_found) (void)_client->unlock(lock.id);
            return fail(checked.error().code() == errc::not_found ? errc::unavailable
                                                                  : checked.error().code(),
                        "waiting for lock {} on {}.{}: {}", lock.id, t.ns, t.name,
                        checked.error().message());
        }
        r = *checked;
    }
    if (r.state != hms::lock_state::acquired) {
        (void)_client->unlock(lock.id);
        return fail(errc::unavailable, "metastore {}: lock {} on {}.{} ended in state {}",
                    address(), lock.id, t.ns, t.name, state_name(r.state));
    }
    if (told)
        spdlog::info(
            "hive: got the metastore lock on {}.{} after {} ms", t.ns, t.name,
            std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started).count());
    return lock;
}

result<void> hive_catalog::swap(const table_ident& t, const std::string& expected,
                                const std::string& new_location) {
    auto lock = FLOE_TRY(acquire(t));
    auto out = swap_locked(t, expected, new_location, lock);
    if (auto u = _client->unlock(lock.id); !u)
        // An unlock that did not land ends with the lock's expiry (no more heartbeats).
        spdlog::warn("hive: unlocking lock {} on {}.{}: {} (it expires without heartbeats)",
                     lock.id, t.ns, t.name, u.error().message());
    return out;
}

result<void> hive_catalog::swap_locked(const table_ident& t, const std::string& expected,
                                       const std::string& new_location, held_lock& lock) {
    auto beat = [&]() -> result<void> {
        if (clock::now() - lock.last_heartbeat < _o.heartbeat_interval) return {};
        FLOE_TRY_CTX(_client->heartbeat(lock.id), "heartbeat of lock {} on {}.{}", lock.id, t.ns,
                     t.name);
        lock.last_heartbeat = clock::now();
        return {};
    };
    auto table = FLOE_TRY(_client->get_table(t.ns, t.name));
    if (!table) return fail(errc::not_found, "metastore table {}.{} does not exist", t.ns, t.name);
    auto now = FLOE_TRY(location_of(t, *table));
    if (now != expected)
        return fail(errc::conflict,
                    "metastore table {}.{} moved on from {} to {} (concurrent commit)", t.ns,
                    t.name, expected, now);
    FLOE_TRY(beat());
    auto altered =
        _client->alter_table(t.ns, t.name, moved_table(std::move(*table), new_location, expected),
                             {{"DO_NOT_UPDATE_STATS", "true"},
                              {"expected_parameter_key", metadata_key},
                              {"expected_parameter_value", expected}});
    if (altered) return {};
    // Refused or no answer: the table, read under the lock still held, says what happened.
    auto again = _client->get_table(t.ns, t.name);
    if (!again || !*again) return altered;
    auto at = parameters_of(**again)[metadata_key];
    if (at == new_location) return {};
    if (at != expected)
        return fail(errc::conflict,
                    "metastore table {}.{} moved on from {} to {} (concurrent commit)", t.ns,
                    t.name, expected, at);
    if (altered.error().code() == errc::timeout)
        return fail(errc::unavailable, "{}", altered.error().message());
    return altered;
}

result<std::vector<std::string>> hive_catalog::list_tables(const std::string& ns) {
    auto names = FLOE_TRY(_client->get_all_tables(ns));
    std::vector<std::string> out;
    for (auto& n : names) {
        auto table = FLOE_TRY(_client->get_table(ns, n));
        if (table && is_iceberg(*table)) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace floe::iceberg
