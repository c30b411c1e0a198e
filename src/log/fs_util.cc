#include "log/fs_util.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace floe::log {

namespace {
std::unexpected<error> os_fail(std::string_view what, const std::filesystem::path& p) {
    return fail(errc::io_error, "{} {}: {}", what, p.string(), std::strerror(errno));
}
} // namespace

result<void> pwrite_all(int fd, bytes_view data, uint64_t pos) {
    const uint8_t* p = data.data();
    size_t n = data.size();
    while (n > 0) {
        ssize_t w = ::pwrite(fd, p, n, off_t(pos));
        if (w < 0) {
            if (errno == EINTR) continue;
            return fail(errc::io_error, "pwrite at {}: {}", pos, std::strerror(errno));
        }
        p += w;
        n -= size_t(w);
        pos += uint64_t(w);
    }
    return {};
}

result<void> pread_exact(int fd, uint8_t* buf, size_t n, uint64_t pos) {
    while (n > 0) {
        ssize_t r = ::pread(fd, buf, n, off_t(pos));
        if (r < 0) {
            if (errno == EINTR) continue;
            return fail(errc::io_error, "pread at {}: {}", pos, std::strerror(errno));
        }
        if (r == 0) return fail(errc::io_error, "pread at {}: unexpected end of file", pos);
        buf += r;
        n -= size_t(r);
        pos += uint64_t(r);
    }
    return {};
}

result<void> fsync_dir(const std::filesystem::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_fail("open dir", dir);
    int rc = ::fsync(fd);
    int saved = errno;
    ::close(fd);
    if (rc != 0) {
        errno = saved;
        return os_fail("fsync dir", dir);
    }
    return {};
}

result<void> write_file_atomic(const std::filesystem::path& path, bytes_view data, bool sync) {
    auto tmp = path;
    tmp += ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return os_fail("create", tmp);
    auto w = pwrite_all(fd, data, 0);
    if (w && sync && ::fsync(fd) != 0) w = os_fail("fsync", tmp);
    ::close(fd);
    if (!w) {
        ::unlink(tmp.c_str());
        return fail(std::move(w).error().with_context("writing {}", tmp.string()));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) return os_fail("rename onto", path);
    if (sync) FLOE_TRY(fsync_dir(path.parent_path().empty() ? "." : path.parent_path()));
    return {};
}

result<byte_buffer> read_file(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return fail(errc::not_found, "{} does not exist", path.string());
        return os_fail("open", path);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return os_fail("stat", path);
    }
    byte_buffer out(size_t(st.st_size));
    auto r = pread_exact(fd, out.data(), out.size(), 0);
    ::close(fd);
    if (!r) return fail(std::move(r).error().with_context("reading {}", path.string()));
    return out;
}

} // namespace floe::log
