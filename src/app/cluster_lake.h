#pragma once
// One lake per cluster. Brokers sharing the Redis tier must offload into one table per topic in
// one catalog: a partition lease that moves to a broker with another catalog or warehouse
// splits the table's history (the new holder's table lacks what the old one committed). The
// first broker records the cluster's lake in Redis; every broker that starts compares its own
// with it and refuses to start on a difference. `floe cluster lake show|set` reads it and
// changes it on purpose.
//
// What is recorded (JSON under `<ns>{<ns>.brokers}.lake`, set once with SET NX):
//   catalog-type  floe.storage.remote.catalog.type
//   catalog-uri   floe.storage.remote.catalog.uri with its password removed; a SQLite catalog as
//                 sqlite://<absolute path>; empty for catalogs that do not use it (filesystem, glue)
//   warehouse     floe.storage.remote.path; file:// as file://<absolute path>
//   namespace     floe.namespace
//   catalog-id    a random id the catalog itself keeps (namespace property `floe.lake-id` of the
//                 namespace, created by the first broker): two catalogs reached under the same
//                 URI (another host behind the same name, another SQLite file at the same path
//                 on another machine) differ here. Empty for catalogs without namespace
//                 properties Floe can set atomically (filesystem, REST, Glue, Hive, Nessie).
// Local paths (a SQLite catalog, a file:// warehouse) are accepted only when every broker names
// the same absolute path, i.e. the brokers share one machine (and for SQLite, one file).

#include "base/result.h"
#include "config/settings.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {
class catalog;
}
namespace floe::redis {
class client;
struct options;
} // namespace floe::redis

namespace floe::app {

/// The lake a broker writes to, in the form the cluster records and compares.
struct lake_identity {
    std::string catalog_type;
    std::string catalog_uri;
    std::string warehouse;
    std::string ns;
    std::string catalog_id; ///< empty: the catalog keeps none (or it could not be read)

    std::string to_json() const;
    static result<lake_identity> from_json(std::string_view text);
};

/// One setting on which a broker's lake differs from the cluster's.
struct lake_difference {
    std::string setting;       ///< e.g. "floe.storage.remote.path"
    std::string cluster_value; ///< as the cluster recorded it
    std::string broker_value;  ///< this broker's
};

/// This broker's lake from the settings, paths made absolute, passwords removed; catalog_id
/// empty (see with_catalog_id).
lake_identity configured_lake(const config::settings& s);

/// Reads the catalog's lake id (namespace property `floe.lake-id`), creating it on first use.
/// Empty when the catalog keeps no namespace properties; an error when it cannot be reached.
result<std::string> catalog_lake_id(iceberg::catalog& cat, const std::string& ns);

/// The settings on which `broker` differs from `cluster`. The catalog id is compared only when
/// the settings agree and both have one.
std::vector<lake_difference> compare_lakes(const lake_identity& cluster, const lake_identity& broker);

/// The message for a broker refused because of `diffs`: each setting with the cluster's and
/// this broker's value, and the ways out.
std::string describe_lake_mismatch(const std::vector<lake_difference>& diffs, const lake_identity& broker,
                                   const std::string& data_dir);

/// The Redis key of the cluster's lake for key prefix `ns`.
std::string cluster_lake_key(const std::string& ns);

/// What `check_cluster_lake` found.
enum class lake_check { recorded, matches, differs };

/// Records `mine` as the cluster's lake unless one is recorded (SET NX), else compares.
/// On `differs`, `*diffs` is filled.
result<lake_check> record_or_compare_lake(redis::client& c, const std::string& ns, const lake_identity& mine,
                                          std::vector<lake_difference>* diffs);

/// `floe serve` on the Redis tier, before the broker starts: this broker's lake against the
/// cluster's. Returns 0 to go on; otherwise the exit code (2: another lake, the message logged;
/// 1: Redis could not be reached).
int check_cluster_lake(const config::settings& s, const redis::options& redis, iceberg::catalog& cat);

/// `floe cluster lake show` (action "show") and `floe cluster lake set` (action "set", with
/// `force` to go ahead while brokers are live). Returns the exit code.
int run_cluster_lake_command(const config::settings& s, const std::string& action, bool force);

} // namespace floe::app
