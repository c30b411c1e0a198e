#pragma once

// The durable state files of the group and transaction coordinators (`offsets.log`,
// `transactions.log`): an append-only file of records framed as [u32 length][u32 CRC-32C]
// [payload], each appended with one write and made durable (fdatasync, shared by the threads
// that wrote meanwhile: group commit) before the answer that depends on it. Opening replays the whole records, cuts a torn or corrupt tail (a crash mid-append), and
// compacts: what the owner's state holds now is written to a temp file, fsynced and renamed
// over the log (then the directory fsynced), so the file never grows past one record per live
// key plus what was appended since the last start.

#include "base/bytes.h"
#include "base/result.h"

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::kafka {

class framed_log {
public:
    /// Opens (creating) `path`, calling `replay(payload)` for each whole record in order; a
    /// record `replay` refuses (false) ends the log there, like a bad CRC. Then writes the
    /// records `compacted()` gives as the new file. `records` (optional) gets how many were
    /// replayed. `what` names the log in messages ("offsets log").
    static result<std::unique_ptr<framed_log>> open(const std::filesystem::path& path, std::string what,
                                                    const std::function<bool(bytes_view)>& replay,
                                                    const std::function<std::vector<byte_buffer>()>& compacted,
                                                    size_t* records = nullptr);
    ~framed_log();
    framed_log(const framed_log&) = delete;
    framed_log& operator=(const framed_log&) = delete;

    /// Appends one record and makes it durable (fdatasync): write() then sync(). The owner
    /// locks around it.
    result<void> append(bytes_view payload);
    /// Appends one record without making it durable; returns the file position at its end, for
    /// sync(). Not thread-safe with other write()/append() calls: the owner locks. A write cut
    /// short (disk full) is cut back to the last whole record before returning; if even that
    /// fails, every later write is refused until a restart.
    result<uint64_t> write(bytes_view payload);
    /// Returns once every byte before `end` (a position write() returned) is durable. Group
    /// commit: thread-safe and called without the owner's lock, so the records several threads
    /// wrote meanwhile share one fdatasync (the first caller to find none running does it for
    /// all). A failed fdatasync leaves the records after the last good one doubtful: the log
    /// then refuses every later write and sync until a restart (the next open keeps what reached
    /// the disk).
    result<void> sync(uint64_t end);
    /// fdatasyncs sync() ran so far (tests, metrics).
    uint64_t syncs() const {
        std::lock_guard lk(_sync_mu);
        return _syncs;
    }

private:
    framed_log(std::string what, int fd, uint64_t size)
        : _what(std::move(what)), _fd(fd), _size(size), _written(size), _synced(size) {}
    result<void> refused() const; // requires _sync_mu
    std::string _what;
    int _fd = -1;
    uint64_t _size = 0;                 ///< bytes of whole records in the file (write(): owner's lock)
    mutable std::mutex _sync_mu;        ///< guards what follows
    std::condition_variable _sync_cv;   ///< a sync finished
    uint64_t _written = 0;              ///< _size as sync() sees it
    uint64_t _synced = 0;               ///< bytes known durable
    bool _syncing = false;              ///< an fdatasync is running (outside the lock)
    uint64_t _syncs = 0;
    std::optional<std::string> _broken; ///< why writes and syncs are refused
};

} // namespace floe::kafka
