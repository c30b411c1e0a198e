#pragma once

// The durable state files of the group and transaction coordinators (`offsets.log`,
// `transactions.log`): an append-only file of records framed as [u32 length][u32 CRC-32C]
// [payload], each appended with one write and an fdatasync before the answer that depends on
// it. Opening replays the whole records, cuts a torn or corrupt tail (a crash mid-append), and
// compacts: what the owner's state holds now is written to a temp file, fsynced and renamed
// over the log (then the directory fsynced), so the file never grows past one record per live
// key plus what was appended since the last start.

#include "base/bytes.h"
#include "base/result.h"

#include <filesystem>
#include <functional>
#include <memory>
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

    /// Appends one record and makes it durable (fdatasync). Not thread-safe: the owner locks.
    /// On failure (disk full, a failed fdatasync) the file is cut back to its last whole record
    /// before returning; if even that fails, every later append is refused until a restart.
    result<void> append(bytes_view payload);

private:
    framed_log(std::string what, int fd, uint64_t size) : _what(std::move(what)), _fd(fd), _size(size) {}
    std::string _what;
    int _fd = -1;
    uint64_t _size = 0;                 ///< bytes of whole records in the file
    std::optional<std::string> _broken; ///< why appends are refused (a partial record could not be cut)
};

} // namespace floe::kafka
