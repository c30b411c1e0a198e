#include "base/file_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace floe {

result<file_lock> file_lock::acquire(const std::filesystem::path& path, std::string_view description) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return fail(errc::io_error, "cannot open lock file {}: {}", path.string(), std::strerror(errno));
    int rc;
    do rc = ::flock(fd, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int saved = errno;
        ::close(fd);
        if (saved != EWOULDBLOCK)
            return fail(errc::io_error, "cannot lock {}: {}", path.string(), std::strerror(saved));
        // The holder writes its line right after locking: a reader racing that write may see
        // nothing yet, so look again a few times before giving up on naming it.
        std::string holder;
        for (int i = 0; i < 20 && holder.empty(); ++i) {
            if (i) ::usleep(10'000);
            auto h = read_holder(path);
            if (h) holder = *h;
        }
        return fail(errc::unavailable, "{} is locked by another process ({})", path.string(),
                    holder.empty() ? "which has not written its pid yet" : holder);
    }
    file_lock l(fd, path);
    FLOE_TRY(l.describe(description));
    return l;
}

file_lock::file_lock(file_lock&& o) noexcept : _fd(o._fd), _path(std::move(o._path)) { o._fd = -1; }

file_lock& file_lock::operator=(file_lock&& o) noexcept {
    if (this != &o) {
        if (_fd >= 0) ::close(_fd);
        _fd = o._fd;
        _path = std::move(o._path);
        o._fd = -1;
    }
    return *this;
}

file_lock::~file_lock() {
    if (_fd >= 0) ::close(_fd); // closing the last descriptor releases the flock
}

result<void> file_lock::describe(std::string_view description) {
    auto line = fmt::format("pid={}{}{}\n", ::getpid(), description.empty() ? "" : " ", description);
    // Overwrite, then cut the tail: a reader never sees an empty file once a line was written.
    size_t done = 0;
    while (done < line.size()) {
        ssize_t w = ::pwrite(_fd, line.data() + done, line.size() - done, off_t(done));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return fail(errc::io_error, "writing lock file {}: {}", _path.string(), std::strerror(errno));
        done += size_t(w);
    }
    if (::ftruncate(_fd, off_t(line.size())) != 0)
        return fail(errc::io_error, "truncating lock file {}: {}", _path.string(), std::strerror(errno));
    return {};
}

result<std::string> file_lock::read_holder(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(errc::io_error, "cannot open {}: {}", path.string(), std::strerror(errno));
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || text.size() > 64 * 1024) break;
        text.append(buf, size_t(r));
    }
    ::close(fd);
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    return text;
}

} // namespace floe
