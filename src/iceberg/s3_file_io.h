#pragma once

// file_io on S3 (and S3-compatible servers): libcurl for HTTP, our own SigV4 signer. See
// README.md "S3" for the request each operation makes and what is retried.

#include "iceberg/file_io.h"
#include "iceberg/sigv4.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

/// Where signing keys come from (static settings, the environment, STS, instance metadata).
/// Implementations are thread-safe and cache temporary credentials until shortly before they
/// expire.
class credentials_provider {
public:
    virtual ~credentials_provider() = default;
    virtual result<aws_credentials> credentials() = 0;
    /// "static settings", "environment", ...: for /readyz and errors (never the keys).
    virtual std::string source() const = 0;
};

/// Keys given in the settings.
class static_credentials final : public credentials_provider {
public:
    explicit static_credentials(aws_credentials c) : _c(std::move(c)) {}
    result<aws_credentials> credentials() override { return _c; }
    std::string source() const override { return "static settings"; }

private:
    aws_credentials _c;
};

struct s3_options {
    std::string region = "us-east-1";
    /// "http(s)://host[:port]"; empty: https://s3.<region>.amazonaws.com.
    std::string endpoint;
    /// Bucket in the path (http://host/bucket/key) instead of the host (http://bucket.host/key).
    bool path_style = false;
    std::shared_ptr<credentials_provider> credentials;
    int max_attempts = 5;                              ///< per request, counting the first
    std::chrono::milliseconds request_timeout{60'000}; ///< whole request, per attempt
    std::chrono::milliseconds connect_timeout{5'000};
    std::chrono::milliseconds retry_base{100}; ///< backoff: random in [0, base * 2^attempt], capped
    std::chrono::milliseconds retry_cap{5'000};
    /// Writes larger than this go up as a multipart upload of parts this size (>= 5 MiB on S3).
    uint64_t multipart_part_size = 16ull << 20;
    size_t max_connections =
        16;                    ///< idle easy handles (each keeping its connections) kept for reuse
    int list_page_size = 1000; ///< max-keys of each ListObjectsV2 page
};

/// An s3://bucket/key URI split; fails unless it is one.
struct s3_location {
    std::string bucket;
    std::string key;
};
result<s3_location> parse_s3_uri(std::string_view uri);

/// One S3 request's outcome beyond the body, for callers and tests.
struct s3_object_info {
    uint64_t size = 0;
    std::string etag;
};

/// file_io for s3://bucket/key URIs. Thread-safe: each request takes an idle curl handle from
/// a small pool (so connections are reused) and returns it. Owns no background thread.
class s3_file_io final : public file_io {
public:
    explicit s3_file_io(s3_options opts);
    ~s3_file_io() override;
    s3_file_io(const s3_file_io&) = delete;
    s3_file_io& operator=(const s3_file_io&) = delete;

    result<byte_buffer> read(std::string_view uri) override;
    result<void> write(std::string_view uri, bytes_view data) override;
    result<void> create_new(std::string_view uri, bytes_view data) override;
    result<bool> exists(std::string_view uri) override;
    result<void> copy(std::string_view from, std::string_view to) override;
    result<void> remove(std::string_view uri) override;
    result<std::vector<std::string>> list(std::string_view prefix) override;
    /// ListObjectsV2 with each object's Size and LastModified (what orphan cleanup ages by).
    result<std::vector<object_info>> list_info(std::string_view prefix) override;
    result<uint64_t> size(std::string_view uri) override;
    result<void> read_range(std::string_view uri, uint64_t offset, size_t len,
                            byte_buffer& out) override;

    /// HEAD of the bucket: a missing bucket or bad credentials as a clear error (/readyz).
    result<void> check_bucket(std::string_view bucket);
    /// A multipart upload of `data` whatever its size (write() uses it above the part size).
    result<void> write_multipart(std::string_view uri, bytes_view data);
    /// Uploads a part each time `multipart_part_size` bytes are buffered; close() completes the
    /// upload (or puts a small object whole); an unclosed or failed writer aborts its upload.
    result<std::unique_ptr<object_writer>> open_writer(std::string_view uri) override;

    /// URIs of multipart uploads in progress under `prefix` (ListMultipartUploads, first 1000):
    /// what a crashed or failed writer leaves behind until aborted.
    result<std::vector<std::string>> list_uploads(std::string_view prefix);
    /// The same with upload ids and initiation times (orphan cleanup aborts the old ones).
    result<std::vector<pending_upload>> list_pending_uploads(std::string_view prefix) override;
    result<void> abort_pending_upload(const pending_upload& u) override;

    // Multipart steps (public for the writer; each retried like any request).
    result<std::string> start_upload(const s3_location& loc);
    result<std::string> upload_part(const s3_location& loc, const std::string& upload_id, int part,
                                    bytes_view data);
    /// `expected_size`: the object's size, to recognise an upload an earlier send completed.
    result<void> complete_upload(const s3_location& loc, const std::string& upload_id,
                                 const std::vector<std::string>& etags,
                                 std::optional<uint64_t> expected_size);
    void abort_upload(const s3_location& loc, const std::string& upload_id);

    const s3_options& options() const noexcept { return _opts; }

    struct request;
    struct response;

private:
    result<response> execute(request& req);
    result<response> perform_once(request& req, const aws_credentials& creds);
    void* take_handle();
    void give_back(void* handle);

    s3_options _opts;
    std::string _scheme, _host; // of the endpoint; _host keeps a port
    std::mutex _mu;
    std::vector<void*> _idle; // CURL* kept for reuse
};

} // namespace floe::iceberg
