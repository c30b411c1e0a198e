#pragma once

#include "iceberg/catalog.h"

#include <initializer_list>
#include <mutex>
#include <string_view>

typedef struct pg_conn PGconn;

namespace floe::iceberg {

/// The SQL catalog on PostgreSQL (libpq), for several brokers sharing one catalog: the same
/// tables, columns and conditional-UPDATE swap as `sqlite_catalog`. One connection per object,
/// guarded by a mutex; a broken connection is reset and reported as errc::unavailable.
class postgres_catalog final : public catalog {
public:
    /// `conninfo`: a libpq connection string or URI (postgresql://user@host:port/db).
    static result<std::unique_ptr<postgres_catalog>> open(const std::string& conninfo,
                                                          std::string catalog_name = "floe");
    ~postgres_catalog() override;

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const table_ident& t) override;
    result<void> create_table(const table_ident& t, const std::string& metadata_location) override;
    result<void> swap(const table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;
    result<std::optional<std::string>> namespace_property_set_once(const std::string& ns, const std::string& key,
                                                                   const std::string& value) override;

private:
    using rows = std::vector<std::optional<std::string>>;
    postgres_catalog(PGconn* conn, std::string name);
    /// Runs one statement with text parameters; returns the first column of each row.
    result<rows> exec(const char* sql, std::initializer_list<std::string_view> params,
                      std::string* sqlstate = nullptr, int64_t* affected = nullptr);

    std::mutex _mu;
    PGconn* _conn;
    std::string _name;
};

} // namespace floe::iceberg
