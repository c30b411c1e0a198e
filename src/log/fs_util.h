#pragma once

#include "base/bytes.h"
#include "base/result.h"

#include <filesystem>

namespace floe::log {

/// Replaces `path` with `data` crash-safely: writes `<path>.tmp`, fsyncs it (when `sync`),
/// renames over `path`, fsyncs the directory (when `sync`). A crash leaves either the old or the
/// new content, never a mix. errc::io_error on failure.
result<void> write_file_atomic(const std::filesystem::path& path, bytes_view data, bool sync = true);
/// Reads a whole file. errc::not_found if missing, errc::io_error otherwise.
result<byte_buffer> read_file(const std::filesystem::path& path);
/// fsyncs a directory (after creating, renaming or removing entries in it).
result<void> fsync_dir(const std::filesystem::path& dir);
/// Writes all of `data` at `pos` (retrying short writes and EINTR).
result<void> pwrite_all(int fd, bytes_view data, uint64_t pos);
/// Reads exactly `n` bytes at `pos`; errc::io_error on short read.
result<void> pread_exact(int fd, uint8_t* buf, size_t n, uint64_t pos);

} // namespace floe::log
