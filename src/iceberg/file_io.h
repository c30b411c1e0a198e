#pragma once

#include "base/bytes.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace floe::iceberg {

/// One object written front to back (a data file as it is encoded). Nothing is visible at the
/// URI until close() succeeds; destroying an unclosed writer abandons the object (an S3
/// multipart upload is aborted). One owner; not thread-safe.
class object_writer {
public:
    virtual ~object_writer() = default;
    virtual result<void> write(bytes_view data) = 0;
    /// Publishes the object (replacing any object at the URI, like file_io::write).
    virtual result<void> close() = 0;
    /// Bytes written so far.
    virtual uint64_t size() const = 0;
};

/// An object found by list_info. -1 when the store did not say.
struct object_info {
    std::string uri;
    int64_t size = -1;
    int64_t modified_ms = -1;
};

/// A multipart upload in progress (S3): what a writer killed mid-upload leaves behind, invisible
/// to listings of objects but billed until aborted.
struct pending_upload {
    std::string uri;
    std::string id;
    int64_t initiated_ms = -1;  ///< -1 when the store did not say
};

/// Object storage as Iceberg uses it: whole-object reads and writes addressed by URI. Shaped so
/// S3 fits: callers never rename; `write` replaces atomically (S3 PUT), `create_new` fails if
/// the object exists (S3 If-None-Match: *), and there is no directory to create or sync.
/// Implementations are thread-safe.
class file_io {
public:
    virtual ~file_io() = default;

    virtual result<byte_buffer> read(std::string_view uri) = 0;
    /// Writes the whole object; readers see the old object or the new one, never a part.
    virtual result<void> write(std::string_view uri, bytes_view data) = 0;
    /// Like write, but fails with errc::already_exists if the object is already there.
    virtual result<void> create_new(std::string_view uri, bytes_view data) = 0;
    virtual result<bool> exists(std::string_view uri) = 0;
    /// Replaces `to` (atomically, like write) with the content of the existing object `from`,
    /// which must never change afterwards. By default a read and a write; a store may do it
    /// without moving the bytes (S3 CopyObject, a hard link on a local file system).
    virtual result<void> copy(std::string_view from, std::string_view to);
    /// Like copy, but never replaces: errc::already_exists if `to` is there (S3 CopyObject with
    /// If-None-Match: *, a hard link on a local file system). By default a read and create_new.
    virtual result<void> copy_new(std::string_view from, std::string_view to);
    /// Removes the object; succeeds if it was already gone.
    virtual result<void> remove(std::string_view uri) = 0;
    /// URIs of the objects whose URI starts with `prefix` (a "directory" URI ending in '/').
    virtual result<std::vector<std::string>> list(std::string_view prefix) = 0;
    /// The object's size in bytes. By default the size of a whole read.
    virtual result<uint64_t> size(std::string_view uri);
    /// Replaces `out` with exactly `len` bytes from `offset` (an S3 ranged GET); fails if the
    /// object is shorter. By default a slice of a whole read.
    virtual result<void> read_range(std::string_view uri, uint64_t offset, size_t len, byte_buffer& out);
    /// A writer for one object. By default the bytes are kept in memory and put by write() at
    /// close; S3 uploads parts as they fill, so memory stays bounded by the part size.
    virtual result<std::unique_ptr<object_writer>> open_writer(std::string_view uri);
    /// Like list, with each object's size and last-modified time (orphan cleanup needs the
    /// age). By default list, with both unknown (-1).
    virtual result<std::vector<object_info>> list_info(std::string_view prefix);
    /// Uploads in progress under `prefix`. By default none (stores without multipart uploads).
    virtual result<std::vector<pending_upload>> list_pending_uploads(std::string_view prefix);
    /// Aborts one (its parts are freed); succeeds when it is gone already.
    virtual result<void> abort_pending_upload(const pending_upload& u);
};

/// file:// URIs (and plain absolute paths) on the local file system. Durable writes: a temp
/// file in the same directory, fsync, rename (link for create_new), fsync of the directory.
/// `copy` hard-links, so copies share the (never modified) file.
class local_file_io final : public file_io {
public:
    result<byte_buffer> read(std::string_view uri) override;
    result<void> write(std::string_view uri, bytes_view data) override;
    result<void> create_new(std::string_view uri, bytes_view data) override;
    result<bool> exists(std::string_view uri) override;
    /// A hard link under a temp name renamed onto `to`: no bytes are written.
    result<void> copy(std::string_view from, std::string_view to) override;
    /// link(2) of `from` at `to`: fails with errc::already_exists rather than replace.
    result<void> copy_new(std::string_view from, std::string_view to) override;
    result<void> remove(std::string_view uri) override;
    result<std::vector<std::string>> list(std::string_view prefix) override;
    result<std::vector<object_info>> list_info(std::string_view prefix) override;
};

/// The local path of a file:// URI ("file:///a/b", "file:/a/b") or an absolute path; fails for
/// other schemes.
result<std::string> local_path(std::string_view uri);
/// "file://" + absolute path.
std::string file_uri(std::string_view absolute_path);

} // namespace floe::iceberg
