#include "tiering/lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace floe::tiering {

file_lease::file_lease(std::filesystem::path path, std::string owner,
                       std::chrono::milliseconds duration, clock_source& clock)
    : _path(std::move(path)), _owner(std::move(owner)), _duration(duration), _clock(clock) {}

result<bool> file_lease::acquire() {
    std::error_code ec;
    std::filesystem::create_directories(_path.parent_path(), ec);
    auto lock_path = _path.string() + ".lock";
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return fail(errc::io_error, "cannot open lease lock {}: {}", lock_path, strerror(errno));
    ::flock(fd, LOCK_EX);
    auto unlock = [fd] {
        ::flock(fd, LOCK_UN);
        ::close(fd);
    };
    std::string holder;
    int64_t expiry = 0;
    {
        std::ifstream in(_path);
        in >> holder >> expiry;
    }
    int64_t now = _clock.now_ms();
    if (!holder.empty() && holder != _owner && expiry > now) {
        unlock();
        return false;
    }
    auto tmp = _path.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << _owner << ' ' << now + _duration.count();
        if (!out.flush()) {
            unlock();
            return fail(errc::io_error, "cannot write lease {}", tmp);
        }
    }
    std::filesystem::rename(tmp, _path, ec);
    unlock();
    if (ec) return fail(errc::io_error, "cannot install lease {}: {}", _path.string(), ec.message());
    return true;
}

void file_lease::release() {
    std::ifstream in(_path);
    std::string holder;
    in >> holder;
    if (holder == _owner) {
        std::error_code ec;
        std::filesystem::remove(_path, ec);
    }
}

} // namespace floe::tiering
