#pragma once

// The Hive Metastore as an Iceberg catalog (floe.storage.remote.catalog.type=hive,
// .uri=thrift://host:9083), keeping tables as Iceberg's own HiveCatalog does: a metastore
// database per namespace, and per Iceberg table an EXTERNAL_TABLE whose parameters carry
// table_type=ICEBERG, metadata_location and previous_metadata_location, with the storage
// descriptor's location the table's location; Hive, Spark, Trino and Impala find them there.
// Floe writes the metadata files; the pointer moves under the metastore's lock: an EXCLUSIVE
// table lock (waiting with check_lock while the metastore says WAITING, heartbeating the lock so
// it does not expire), the table read again, its metadata_location checked against the base,
// alter_table (carrying the expected metadata_location in its environment context, which
// metastores since Hive 4 check atomically), then unlock, also on every failure path.

#include "iceberg/catalog.h"
#include "iceberg/hive_metastore.h"

#include <chrono>
#include <memory>

namespace floe::iceberg {

struct hive_catalog_options {
    hms::options metastore;
    /// The warehouse root: a new database's location is <warehouse>/<namespace>.
    std::string warehouse;
    /// How long one commit waits for the table lock before giving up (errc::timeout).
    std::chrono::milliseconds lock_wait{180'000};
    /// How often a lock is heartbeaten while waiting for it or holding it (the metastore drops
    /// locks without a heartbeat for hive.txn.timeout, 300 s by default).
    std::chrono::milliseconds heartbeat_interval{60'000};
    /// Pause between check_lock calls: doubles from min to max.
    std::chrono::milliseconds lock_check_min{50};
    std::chrono::milliseconds lock_check_max{2'000};
    /// Who asks for locks (shown by SHOW LOCKS); default $USER, and this host's name.
    std::string user;
    std::string hostname;
};

/// Thread-safe (the metastore client serializes calls; a commit's lock is its own). Errors name
/// the metastore's address, the call, the table and the metastore's exception.
class hive_catalog final : public catalog {
public:
    explicit hive_catalog(hive_catalog_options o);

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    /// Under the table's EXCLUSIVE lock: errc::conflict (nothing changed) when the table's
    /// metadata_location is not `expected`; errc::timeout when the lock was not granted within
    /// lock_wait. An alter_table whose answer was lost is settled by reading the table before the
    /// lock is released: ours (done), another (conflict), still `expected` (errc::unavailable).
    result<void> swap(const table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;

    /// The metastore Table struct of a new Iceberg table at `metadata_location`.
    static thrift::tvalue new_table(const table_ident& t, const std::string& metadata_location,
                                    const std::string& owner);
    /// `current` pointed at `metadata_location`, `previous` as its previous_metadata_location;
    /// every other field and parameter kept.
    static thrift::tvalue moved_table(thrift::tvalue current, const std::string& metadata_location,
                                      const std::string& previous);
    /// The metadata_location of an Iceberg table struct; errors name the table.
    static result<std::string> location_of(const table_ident& t, const thrift::tvalue& table);

    std::string address() const { return _client->address(); }

private:
    struct held_lock;
    result<held_lock> acquire(const table_ident& t);
    result<void> swap_locked(const table_ident& t, const std::string& expected,
                             const std::string& new_location, held_lock& lock);

    hive_catalog_options _o;
    std::unique_ptr<hms::client> _client;
};

} // namespace floe::iceberg
