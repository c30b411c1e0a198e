#pragma once

#include "base/result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace floe {

/// An exclusive lock on a file (flock), held from acquire() until the object is destroyed or
/// the process ends: the kernel releases it when the process dies, kill -9 included, so a
/// crashed holder never leaves a stale lock behind. Used to keep a data directory to one
/// process (`<data-dir>/floe.lock`).
///
/// The file also says who holds the lock: one line, "pid=<pid>" followed by the holder's own
/// description (its listeners), which a process refused the lock reads back for its message.
/// The file is never removed or replaced (a rename or unlink would let two processes lock two
/// different files of the same name), only rewritten in place.
///
/// Ownership: move-only, owns the descriptor (O_CLOEXEC). Not thread-safe; one owner.
class file_lock {
public:
    /// Creates `path` if missing and locks it without waiting. errc::unavailable when another
    /// process (or another file_lock of this process) holds it; the message names the file and
    /// the holder's line. errc::io_error when the file cannot be opened or locked.
    static result<file_lock> acquire(const std::filesystem::path& path, std::string_view description);

    file_lock(file_lock&& o) noexcept;
    file_lock& operator=(file_lock&& o) noexcept;
    file_lock(const file_lock&) = delete;
    file_lock& operator=(const file_lock&) = delete;
    ~file_lock();

    /// Rewrites the holder line (e.g. once listeners are bound and their ports known).
    result<void> describe(std::string_view description);
    /// The holder line as written in the file: "pid=<pid> <description>".
    static result<std::string> read_holder(const std::filesystem::path& path);
    const std::filesystem::path& path() const noexcept { return _path; }

private:
    file_lock(int fd, std::filesystem::path path) : _fd(fd), _path(std::move(path)) {}
    int _fd = -1;
    std::filesystem::path _path;
};

} // namespace floe
