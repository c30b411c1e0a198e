#include "kafka/framed_log.h"

#include "base/crc32c.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace floe::kafka {

namespace {

result<void> write_all(int fd, bytes_view data, const std::string& what) {
    const uint8_t* p = data.data();
    size_t n = data.size();
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return fail(errc::io_error, "write {}: {}", what, std::strerror(errno));
        }
        p += w;
        n -= size_t(w);
    }
    return {};
}

byte_buffer frame(bytes_view payload) {
    // Header written with memcpy into a sized buffer: growing an empty vector by 4 bytes here
    // trips a false -Wstringop-overflow in g++ 12 once inlined.
    byte_buffer out(8);
    uint32_t len = std::byteswap(uint32_t(payload.size()));
    uint32_t crc = std::byteswap(crc32c(payload));
    std::memcpy(out.data(), &len, 4);
    std::memcpy(out.data() + 4, &crc, 4);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

} // namespace

result<std::unique_ptr<framed_log>> framed_log::open(const std::filesystem::path& path, std::string what,
                                                     const std::function<bool(bytes_view)>& replay,
                                                     const std::function<std::vector<byte_buffer>()>& compacted,
                                                     size_t* records) {
    byte_buffer data;
    {
        std::ifstream in(path, std::ios::binary);
        if (in) data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    size_t pos = 0, n = 0;
    while (data.size() - pos >= 8) {
        byte_reader r(bytes_view(data).subspan(pos));
        uint32_t len = r.be<uint32_t>().value();
        uint32_t crc = r.be<uint32_t>().value();
        if (len > r.remaining()) break;
        auto payload = r.bytes(len).value();
        if (crc32c(payload) != crc || !replay(payload)) break;
        pos += 8 + len;
        ++n;
    }
    if (records) *records = n;
    if (pos < data.size())
        spdlog::warn("{} {}: cut {} bytes of torn or corrupt tail", what, path.string(), data.size() - pos);
    // Compact: the current state to a temp file, fsync, rename over the log, fsync the directory.
    auto tmp = path;
    tmp += ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(errc::io_error, "open {}: {}", tmp.string(), std::strerror(errno));
    for (auto& payload : compacted()) {
        if (auto w = write_all(fd, frame(payload), what); !w) {
            ::close(fd);
            return fail(w.error());
        }
    }
    if (::fsync(fd) != 0) {
        ::close(fd);
        return fail(errc::io_error, "fsync {}: {}", tmp.string(), std::strerror(errno));
    }
    ::close(fd);
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return fail(errc::io_error, "rename {}: {}", tmp.string(), ec.message());
    if (int dfd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    int afd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (afd < 0) return fail(errc::io_error, "open {}: {}", path.string(), std::strerror(errno));
    off_t size = ::lseek(afd, 0, SEEK_END);
    if (size < 0) {
        ::close(afd);
        return fail(errc::io_error, "seek {}: {}", path.string(), std::strerror(errno));
    }
    return std::unique_ptr<framed_log>(new framed_log(std::move(what), afd, uint64_t(size)));
}

framed_log::~framed_log() {
    if (_fd >= 0) ::close(_fd);
}

result<void> framed_log::refused() const {
    return fail(errc::io_error, "{} refuses appends: {}; restart Floe once the disk has room", _what,
                *_broken);
}

result<void> framed_log::append(bytes_view payload) {
    auto end = FLOE_TRY(write(payload));
    return sync(end);
}

result<uint64_t> framed_log::write(bytes_view payload) {
    {
        std::lock_guard lk(_sync_mu);
        if (_broken) return fail(refused().error());
    }
    // A write cut short (disk full) leaves a partial record at the end. It is cut at once: the
    // next record must never follow a torn one, or the next open stops at the torn one and drops
    // every record appended after it.
    auto r = write_all(_fd, frame(payload), _what);
    if (!r) {
        if (::ftruncate(_fd, off_t(_size)) != 0 || ::fdatasync(_fd) != 0) {
            std::lock_guard lk(_sync_mu);
            _broken = fmt::format("a failed append could not be cut from its end ({})", std::strerror(errno));
            spdlog::error("{}: {}; cutting the partial record failed: {}; further appends are refused until "
                          "a restart",
                          _what, r.error().message(), *_broken);
        }
        return fail(std::move(r).error());
    }
    _size += 8 + payload.size();
    std::lock_guard lk(_sync_mu);
    _written = _size;
    return _size;
}

result<void> framed_log::sync(uint64_t end) {
    std::unique_lock lk(_sync_mu);
    for (;;) {
        if (_broken) return refused();
        if (_synced >= end) return {};
        if (!_syncing) break;
        _sync_cv.wait(lk);
    }
    // This thread syncs for everyone: what was written so far is covered by this fdatasync.
    _syncing = true;
    const uint64_t target = _written;
    lk.unlock();
    const int rc = ::fdatasync(_fd);
    const int err = errno;
    lk.lock();
    _syncing = false;
    ++_syncs;
    if (rc != 0) {
        // The page cache may have dropped the dirty pages: what reached the disk is unknown.
        // Nothing written since the last good sync may be acknowledged, and nothing may follow it.
        _broken = fmt::format("fsync failed ({})", std::strerror(err));
        spdlog::error("{}: {}; further appends are refused until a restart", _what, *_broken);
    } else {
        _synced = std::max(_synced, target);
    }
    _sync_cv.notify_all();
    if (_broken) return refused();
    return {};
}

} // namespace floe::kafka
