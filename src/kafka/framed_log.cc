#include "kafka/framed_log.h"

#include "base/crc32c.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

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

result<void> framed_log::append(bytes_view payload) {
    if (_broken)
        return fail(errc::io_error, "{} refuses appends: a failed append could not be cut from its end ({}); "
                                    "restart Floe once the disk has room",
                    _what, *_broken);
    // A write cut short (disk full) or a failed fdatasync leaves a partial or doubtful record at
    // the end. It is cut at once: the next record must never follow a torn one, or the next open
    // stops at the torn one and drops every record appended after it.
    auto r = write_all(_fd, frame(payload), _what);
    if (r && ::fdatasync(_fd) != 0) r = fail(errc::io_error, "fsync {}: {}", _what, std::strerror(errno));
    if (!r) {
        if (::ftruncate(_fd, off_t(_size)) != 0 || ::fdatasync(_fd) != 0) {
            _broken = std::strerror(errno);
            spdlog::error("{}: {}; cutting the partial record failed: {}; further appends are refused until "
                          "a restart",
                          _what, r.error().message(), *_broken);
        }
        return r;
    }
    _size += 8 + payload.size();
    return {};
}

} // namespace floe::kafka
