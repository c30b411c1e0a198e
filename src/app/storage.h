#pragma once

// The warehouse's file_io, built from the settings: local files for file://, S3 for s3://
// (static keys from floe.storage.remote.s3.*, else the AWS credential chain). One factory for
// `floe serve` and `floe tables`.

#include "base/result.h"
#include "config/settings.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "aws/sigv4.h"

#include <functional>
#include <mutex>
#include <memory>

namespace floe::app {

struct remote_storage {
    std::shared_ptr<iceberg::file_io> io;
    /// Whether the warehouse can be reached now (the bucket exists and the credentials work);
    /// what /readyz shows as the storage entry. Makes a request each call.
    std::function<result<std::string>()> check;
    /// S3 only: takes the credentials a REST catalog vends for the warehouse (used from then
    /// on instead of the configured ones).
    std::function<void(const aws::credentials&)> vend;
};

/// Fails naming the setting when the warehouse URI has no file_io.
result<remote_storage> make_file_io(const config::settings& s);

/// The catalog named by floe.storage.remote.catalog.* (sql, filesystem or rest with its uri,
/// warehouse, prefix, token, OAuth2 credential, headers); a REST catalog's vended S3
/// credentials go to `storage`. Errors name the catalog and what to check.
result<std::unique_ptr<iceberg::catalog>> open_catalog(const config::settings& s, const remote_storage& storage);

} // namespace floe::app
