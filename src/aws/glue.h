#pragma once

// The AWS Glue Data Catalog calls an Iceberg catalog needs (databases and tables), on the JSON
// 1.1 protocol (X-Amz-Target: AWSGlue.<Action>). Iceberg's own GlueCatalog semantics (table
// parameters, optimistic commits) are iceberg::glue_catalog's; this is only the service.

#include "aws/client.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::aws {

/// A Glue table as GetTable returns it: what a catalog reads, plus the whole object (an update
/// carries its other fields forward).
struct glue_table {
    std::string name;
    std::string version_id; ///< Glue's table version (UpdateTable's VersionId)
    std::map<std::string, std::string> parameters;
    std::string location; ///< StorageDescriptor.Location
    nlohmann::json raw;   ///< the Table object
};

/// Thread-safe (as service_client). Errors name the action, the database and table, and the
/// service's code and message; "not found" answers are values where a caller needs them.
class glue_client {
public:
    /// `catalog_id`: the account whose Data Catalog is used; empty: the caller's own.
    glue_client(service_options opts, std::string catalog_id);

    result<bool> database_exists(const std::string& db);
    /// CreateDatabase; succeeds when it exists already.
    result<void> create_database(const std::string& db);
    result<std::vector<std::string>> list_databases();
    /// GetTable; nullopt when the database or table does not exist.
    result<std::optional<glue_table>> get_table(const std::string& db, const std::string& name);
    /// CreateTable; errc::already_exists when the table exists. Sent once: a lost answer is
    /// errc::unavailable (the caller looks with get_table).
    result<void> create_table(const std::string& db, const nlohmann::json& table_input);
    /// UpdateTable at `version_id` (Glue refuses it with ConcurrentModificationException when
    /// the table moved on: errc::conflict). Sent once: a lost answer is errc::unavailable.
    result<void> update_table(const std::string& db, const nlohmann::json& table_input,
                              const std::string& version_id);
    /// Every table name of the database (GetTables, following NextToken), with its parameters.
    result<std::vector<glue_table>> list_tables(const std::string& db);

    std::string describe() const { return _client.describe(); }

private:
    nlohmann::json request(nlohmann::json body) const;
    service_client _client;
    std::string _catalog_id;
};

} // namespace floe::aws
