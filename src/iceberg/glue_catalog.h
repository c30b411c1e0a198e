#pragma once

// The AWS Glue Data Catalog as an Iceberg catalog (floe.storage.remote.catalog.type=glue), as
// Iceberg's own GlueCatalog keeps tables: a Glue database per namespace, a Glue table per
// Iceberg table with TableType EXTERNAL_TABLE and the parameters table_type=ICEBERG,
// metadata_location and previous_metadata_location, and StorageDescriptor.Location the table's
// location; Athena, EMR and Spark find them there. Floe writes the metadata files; the swap is
// optimistic: GetTable, check that metadata_location is still the base, UpdateTable at the
// VersionId read (Glue refuses it if the table moved in between).

#include "aws/glue.h"
#include "iceberg/catalog.h"

#include <memory>

namespace floe::iceberg {

/// Thread-safe. Errors name the Glue call, the table and the service's answer.
class glue_catalog final : public catalog {
public:
    explicit glue_catalog(std::shared_ptr<aws::glue_client> glue) : _glue(std::move(glue)) {}

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    /// Refused (errc::conflict, nothing changed) when the table's metadata_location is not
    /// `expected`. An answer lost after UpdateTable was sent is settled by reading the table
    /// again: ours (done), another (conflict), or still `expected`: then the table is updated
    /// once more at the same VersionId with its parameters unchanged, so the lost request can
    /// never land later (Glue refuses a stale VersionId) and the swap is reported not done.
    result<void> swap(const table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;

    /// The TableInput of an Iceberg table at `metadata_location` (previous: "" for none),
    /// keeping `current`'s other parameters and storage descriptor when given.
    static nlohmann::json table_input(const table_ident& t, const std::string& metadata_location,
                                      const std::string& previous,
                                      const aws::glue_table* current);

private:
    std::shared_ptr<aws::glue_client> _glue;
};

/// The location of the table whose metadata file is `metadata_location`
/// (".../t/metadata/00001-x.metadata.json" -> ".../t").
std::string table_location_of(const std::string& metadata_location);

} // namespace floe::iceberg
