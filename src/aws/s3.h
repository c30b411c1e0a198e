#pragma once

// An S3 client (AWS S3 and S3-compatible servers): libcurl for HTTP, our own SigV4 signer.
// Objects are addressed by s3://bucket/key URIs; iceberg's s3_file_io is its file_io. See
// README.md "S3" for the request each operation makes and what is retried.

#include "aws/credentials.h"
#include "base/bytes.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::aws {

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

/// An object found by list_info. -1 when the store did not say.
struct s3_object {
    std::string uri;
    int64_t size = -1;
    int64_t modified_ms = -1;
};

/// A multipart upload in progress: what a writer killed mid-upload leaves behind, invisible to
/// listings of objects but billed until aborted.
struct s3_upload {
    std::string uri;
    std::string id;
    int64_t initiated_ms = -1; ///< -1 when the server did not say
};

class s3_client;

/// One object written front to back: parts of `multipart_part_size` go up as they fill, so
/// memory holds at most one part; the upload starts with the first full part, so a small
/// object is one PUT at close. Nothing is visible at the URI until close() succeeds; an
/// unclosed or failed writer aborts its upload. One owner; not thread-safe.
class s3_writer {
public:
    s3_writer(s3_client& client, s3_location loc, uint64_t part_size, bool always_multipart);
    ~s3_writer();
    s3_writer(const s3_writer&) = delete;
    s3_writer& operator=(const s3_writer&) = delete;

    result<void> write(bytes_view data);
    /// Publishes the object (replacing any object at the URI).
    result<void> close();
    /// Bytes written so far.
    uint64_t size() const { return _size; }

private:
    result<void> flush_part();

    s3_client& _client;
    s3_location _loc;
    uint64_t _part_size;
    bool _always_multipart;
    byte_buffer _buf;
    std::string _upload_id;
    std::vector<std::string> _etags;
    uint64_t _size = 0;
    bool _closed = false, _failed = false;
};

/// S3 operations on s3://bucket/key URIs. Thread-safe: each request takes an idle curl handle
/// from a small pool (so connections are reused) and returns it. Owns no background thread.
class s3_client {
public:
    explicit s3_client(s3_options opts);
    ~s3_client();
    s3_client(const s3_client&) = delete;
    s3_client& operator=(const s3_client&) = delete;

    /// GetObject; errc::not_found when there is no such key.
    result<byte_buffer> read(std::string_view uri);
    /// PutObject (a multipart upload above the part size): replaces the object atomically.
    result<void> write(std::string_view uri, bytes_view data);
    /// PutObject with If-None-Match: *; errc::already_exists if the object is there.
    result<void> create_new(std::string_view uri, bytes_view data);
    result<bool> exists(std::string_view uri);
    /// CopyObject: replaces `to` with `from`'s content, without moving the bytes here.
    result<void> copy(std::string_view from, std::string_view to);
    /// Like copy, but never replaces: errc::already_exists if `to` is there. A GET and a
    /// conditional PUT (S3's CopyObject takes no If-None-Match).
    result<void> copy_new(std::string_view from, std::string_view to);
    /// DeleteObject; succeeds if the object was already gone.
    result<void> remove(std::string_view uri);
    result<std::vector<std::string>> list(std::string_view prefix);
    /// ListObjectsV2 with each object's Size and LastModified (what orphan cleanup ages by).
    result<std::vector<s3_object>> list_info(std::string_view prefix);
    result<uint64_t> size(std::string_view uri);
    /// Replaces `out` with exactly `len` bytes from `offset` (a ranged GET); fails if the
    /// object is shorter.
    result<void> read_range(std::string_view uri, uint64_t offset, size_t len, byte_buffer& out);

    /// HEAD of the bucket: a missing bucket or bad credentials as a clear error (/readyz).
    result<void> check_bucket(std::string_view bucket);
    /// A multipart upload of `data` whatever its size (write() uses it above the part size).
    result<void> write_multipart(std::string_view uri, bytes_view data);
    /// Uploads a part each time `multipart_part_size` bytes are buffered; close() completes the
    /// upload (or puts a small object whole); an unclosed or failed writer aborts its upload.
    result<std::unique_ptr<s3_writer>> open_writer(std::string_view uri);

    /// URIs of multipart uploads in progress under `prefix` (ListMultipartUploads, first 1000):
    /// what a crashed or failed writer leaves behind until aborted.
    result<std::vector<std::string>> list_uploads(std::string_view prefix);
    /// The same with upload ids and initiation times (orphan cleanup aborts the old ones).
    result<std::vector<s3_upload>> list_pending_uploads(std::string_view prefix);
    /// Aborts one (its parts are freed); succeeds when it is gone already.
    result<void> abort_pending_upload(const s3_upload& u);

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
    result<response> perform_once(request& req, const credentials& creds);
    void* take_handle();
    void give_back(void* handle);

    s3_options _opts;
    std::string _scheme, _host; // of the endpoint; _host keeps a port
    std::mutex _mu;
    std::vector<void*> _idle; // CURL* kept for reuse
};

} // namespace floe::aws
