#pragma once

// The warehouse's file_io, built from the settings: local files for file://, S3 for s3://
// (static keys from floe.storage.remote.s3.*, else the AWS credential chain). One factory for
// `floe serve` and `floe tables`.

#include "base/result.h"
#include "config/settings.h"
#include "iceberg/file_io.h"

#include <functional>
#include <memory>

namespace floe::app {

struct remote_storage {
    std::shared_ptr<iceberg::file_io> io;
    /// Whether the warehouse can be reached now (the bucket exists and the credentials work);
    /// what /readyz shows as the storage entry. Makes a request each call.
    std::function<result<std::string>()> check;
};

/// Fails naming the setting when the warehouse URI has no file_io.
result<remote_storage> make_file_io(const config::settings& s);

} // namespace floe::app
