#pragma once

// A catalog that counts what its calls cost and how they fail, for /metrics:
// floe_catalog_requests_total{operation}, floe_catalog_errors_total{operation} (an error is a
// failed call; a lost compare-and-swap is a conflict, counted by the committer, not here) and
// floe_catalog_request_duration_seconds{operation}. Wraps any catalog; thread-safe as the
// catalog it wraps.

#include "iceberg/catalog.h"

#include <memory>

namespace floe::lake {

class metered_catalog final : public iceberg::catalog {
public:
    explicit metered_catalog(std::shared_ptr<iceberg::catalog> inner) : _inner(std::move(inner)) {}

    result<void> create_namespace_if_missing(const std::string& ns) override;
    result<bool> namespace_exists(const std::string& ns) override;
    result<std::optional<std::string>> metadata_location(const iceberg::table_ident& t) override;
    result<void> create_table(const iceberg::table_ident& t, const std::string& metadata_location) override;
    result<void> swap(const iceberg::table_ident& t, const std::string& expected,
                      const std::string& new_location) override;
    result<std::vector<std::string>> list_tables(const std::string& ns) override;
    result<std::vector<std::string>> list_namespaces() override;
    bool server_side_commit() const override { return _inner->server_side_commit(); }
    result<std::string> commit_next(const iceberg::table_ident& t, const std::string& expected,
                                    const std::string& next_json) override;
    result<iceberg::server_commit> commit_change(const iceberg::table_ident& t, const std::string& expected,
                                                 const iceberg::commit_base& base, iceberg::table_metadata& next,
                                                 iceberg::snapshot_json_cache& texts) override;
    std::string metadata_file_name(int64_t version) const override { return _inner->metadata_file_name(version); }
    bool commit_by_create() const override { return _inner->commit_by_create(); }
    result<std::optional<std::string>> namespace_property_set_once(const std::string& ns, const std::string& key,
                                                                   const std::string& value) override {
        return _inner->namespace_property_set_once(ns, key, value);
    }

private:
    std::shared_ptr<iceberg::catalog> _inner;
};

} // namespace floe::lake
