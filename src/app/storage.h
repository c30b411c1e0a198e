#pragma once

// The warehouse's file_io, built from the settings: local files for file://, S3 for s3://
// (static keys from floe.storage.remote.s3.*, else the AWS credential chain). One factory for
// `floe serve` and `floe tables`.

#include "base/result.h"
#include "config/settings.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "aws/credentials.h"

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
    /// What every AWS call but vended S3 signs with (S3, Glue, STS, SigV4 REST catalogs, KMS):
    /// static keys from floe.storage.remote.s3.*, else the AWS credential chain, through
    /// floe.aws.role-arn's sessions when set. Built even for a file:// warehouse (no I/O until
    /// first used).
    std::shared_ptr<aws::credentials_provider> aws;
};

/// The AWS credentials of the settings (see remote_storage::aws), for callers without a
/// remote_storage (key providers).
std::shared_ptr<aws::credentials_provider> make_aws_credentials(const config::settings& s);

/// The region AWS calls default to: floe.storage.remote.s3.region, else AWS_REGION,
/// AWS_DEFAULT_REGION or the profile's, else us-east-1.
std::string default_aws_region(const config::settings& s);

/// Fails naming the setting when the warehouse URI has no file_io.
result<remote_storage> make_file_io(const config::settings& s);

/// The catalog named by floe.storage.remote.catalog.* (sql, filesystem, rest with its uri,
/// warehouse, prefix, token, OAuth2 credential or SigV4, headers; glue; hive; nessie); a REST
/// catalog's vended S3 credentials go to `storage`. Errors name the catalog and what to check.
result<std::unique_ptr<iceberg::catalog>> open_catalog(const config::settings& s, const remote_storage& storage);

} // namespace floe::app
