#pragma once

// file_io on S3: every operation is aws::s3_client's (see src/aws/README.md "S3" for the
// request each makes and what is retried); this class only adapts the types.

#include "aws/s3.h"
#include "iceberg/file_io.h"

#include <memory>

namespace floe::iceberg {

/// file_io for s3://bucket/key URIs. Thread-safe (as aws::s3_client).
class s3_file_io final : public file_io {
public:
    explicit s3_file_io(aws::s3_options opts);

    result<byte_buffer> read(std::string_view uri) override;
    result<void> write(std::string_view uri, bytes_view data) override;
    result<void> create_new(std::string_view uri, bytes_view data) override;
    result<bool> exists(std::string_view uri) override;
    result<void> copy(std::string_view from, std::string_view to) override;
    result<void> copy_new(std::string_view from, std::string_view to) override;
    result<void> remove(std::string_view uri) override;
    result<std::vector<std::string>> list(std::string_view prefix) override;
    result<std::vector<object_info>> list_info(std::string_view prefix) override;
    result<uint64_t> size(std::string_view uri) override;
    result<void> read_range(std::string_view uri, uint64_t offset, size_t len,
                            byte_buffer& out) override;
    result<std::unique_ptr<object_writer>> open_writer(std::string_view uri) override;
    result<std::vector<pending_upload>> list_pending_uploads(std::string_view prefix) override;
    result<void> abort_pending_upload(const pending_upload& u) override;

    /// The client underneath (bucket checks, multipart uploads listed, tests).
    aws::s3_client& client() noexcept { return _s3; }

private:
    aws::s3_client _s3;
};

} // namespace floe::iceberg
