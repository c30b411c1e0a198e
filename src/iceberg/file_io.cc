#include "iceberg/file_io.h"

#include "base/random.h"
#include "base/uuid.h"


#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace floe::iceberg {

namespace fs = std::filesystem;

result<std::string> local_path(std::string_view uri) {
    if (uri.starts_with("file://")) uri.remove_prefix(7);
    else if (uri.starts_with("file:")) uri.remove_prefix(5);
    else if (uri.find("://") != std::string_view::npos)
        return fail(errc::unsupported, "no file_io for {}", uri);
    if (!uri.starts_with("/")) return fail(errc::invalid_argument, "not an absolute path: {}", uri);
    return std::string(uri);
}

std::string file_uri(std::string_view absolute_path) { return "file://" + std::string(absolute_path); }

namespace {

std::unexpected<error> os_error(const char* what, const std::string& path) {
    int e = errno;
    return fail(e == ENOENT ? errc::not_found : errc::io_error, "{} {}: {}", what, path, std::strerror(e));
}

result<void> write_all(int fd, bytes_view data, const std::string& path) {
    size_t off = 0;
    while (off < data.size()) {
        ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return os_error("write", path);
        }
        off += static_cast<size_t>(n);
    }
    return {};
}

result<void> fsync_dir(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_error("open directory", dir);
    int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) return os_error("fsync directory", dir);
    return {};
}

// Writes a durable temp file beside `path` and returns its name.
result<std::string> durable_temp(const std::string& path, bytes_view data) {
    auto dir = fs::path(path).parent_path();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return fail(errc::io_error, "create directory {}: {}", dir.string(), ec.message());
    auto tmp = path + ".tmp-" + uuid::random().to_string();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return os_error("create", tmp);
    auto ok = write_all(fd, data, tmp);
    if (ok && ::fsync(fd) != 0) ok = os_error("fsync", tmp);
    ::close(fd);
    if (!ok) {
        ::unlink(tmp.c_str());
        return std::unexpected(ok.error());
    }
    return tmp;
}

} // namespace

result<byte_buffer> local_file_io::read(std::string_view uri) {
    auto path = FLOE_TRY(local_path(uri));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return os_error("open", path);
    byte_buffer out;
    struct stat st{};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            auto e = os_error("read", path);
            ::close(fd);
            return e;
        }
        if (n == 0) break;
        out.insert(out.end(), buf, buf + n);
    }
    ::close(fd);
    return out;
}

result<void> local_file_io::write(std::string_view uri, bytes_view data) {
    auto path = FLOE_TRY(local_path(uri));
    auto tmp = FLOE_TRY(durable_temp(path, data));
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        auto e = os_error("rename onto", path);
        ::unlink(tmp.c_str());
        return e;
    }
    return fsync_dir(fs::path(path).parent_path().string());
}

result<void> local_file_io::create_new(std::string_view uri, bytes_view data) {
    auto path = FLOE_TRY(local_path(uri));
    auto tmp = FLOE_TRY(durable_temp(path, data));
    // link() fails with EEXIST instead of replacing: the no-replace create a commit relies on.
    int rc = ::link(tmp.c_str(), path.c_str());
    int err = errno;
    ::unlink(tmp.c_str());
    if (rc != 0) {
        if (err == EEXIST) return fail(errc::already_exists, "{} already exists", path);
        errno = err;
        return os_error("link", path);
    }
    return fsync_dir(fs::path(path).parent_path().string());
}

result<void> file_io::copy(std::string_view from, std::string_view to) {
    auto bytes = FLOE_TRY(read(from));
    return write(to, bytes);
}

result<void> local_file_io::copy(std::string_view from_uri, std::string_view to_uri) {
    auto from = FLOE_TRY(local_path(from_uri));
    auto to = FLOE_TRY(local_path(to_uri));
    // The source was written durably by write/create_new; its link is what must be made durable.
    auto tmp = to + ".tmp-" + uuid::random().to_string();
    if (::link(from.c_str(), tmp.c_str()) != 0) return os_error("link", from);
    if (::rename(tmp.c_str(), to.c_str()) != 0) {
        auto e = os_error("rename onto", to);
        ::unlink(tmp.c_str());
        return e;
    }
    return fsync_dir(fs::path(to).parent_path().string());
}

result<uint64_t> file_io::size(std::string_view uri) {
    auto bytes = FLOE_TRY(read(uri));
    return bytes.size();
}

result<void> file_io::read_range(std::string_view uri, uint64_t offset, size_t len, byte_buffer& out) {
    auto bytes = FLOE_TRY(read(uri));
    if (offset > bytes.size() || len > bytes.size() - offset)
        return fail(errc::out_of_range, "{}: {} bytes at {} past its end ({} bytes)", uri, len, offset, bytes.size());
    out.assign(bytes.begin() + static_cast<ptrdiff_t>(offset), bytes.begin() + static_cast<ptrdiff_t>(offset + len));
    return {};
}

namespace {

// Buffers the object and writes it whole at close.
class buffered_writer final : public object_writer {
public:
    buffered_writer(file_io& io, std::string uri) : _io(io), _uri(std::move(uri)) {}
    result<void> write(bytes_view data) override {
        _buf.insert(_buf.end(), data.begin(), data.end());
        _size += data.size();
        return {};
    }
    result<void> close() override {
        FLOE_TRY(_io.write(_uri, _buf));
        _buf = {};
        return {};
    }
    uint64_t size() const override { return _size; }

private:
    file_io& _io;
    std::string _uri;
    byte_buffer _buf;
    uint64_t _size = 0;
};

} // namespace

result<std::unique_ptr<object_writer>> file_io::open_writer(std::string_view uri) {
    return std::make_unique<buffered_writer>(*this, std::string(uri));
}

result<std::vector<pending_upload>> file_io::list_pending_uploads(std::string_view) {
    return std::vector<pending_upload>{};
}

result<void> file_io::abort_pending_upload(const pending_upload&) { return {}; }

result<void> file_io::copy_new(std::string_view from, std::string_view to) {
    auto bytes = FLOE_TRY(read(from));
    return create_new(to, bytes);
}

result<void> local_file_io::copy_new(std::string_view from_uri, std::string_view to_uri) {
    auto from = FLOE_TRY(local_path(from_uri));
    auto to = FLOE_TRY(local_path(to_uri));
    if (::link(from.c_str(), to.c_str()) != 0) {
        if (errno == EEXIST) return fail(errc::already_exists, "{} already exists", to);
        return os_error("link", to);
    }
    return fsync_dir(fs::path(to).parent_path().string());
}

result<bool> local_file_io::exists(std::string_view uri) {
    auto path = FLOE_TRY(local_path(uri));
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT) return false;
    return os_error("stat", path);
}

result<void> local_file_io::remove(std::string_view uri) {
    auto path = FLOE_TRY(local_path(uri));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return os_error("unlink", path);
    return {};
}

result<std::vector<std::string>> local_file_io::list(std::string_view prefix) {
    auto path = FLOE_TRY(local_path(prefix));
    std::vector<std::string> out;
    std::error_code ec;
    auto dir = path.ends_with("/") ? fs::path(path) : fs::path(path).parent_path();
    if (!fs::exists(dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (!it->is_regular_file()) continue;
        auto p = it->path().string();
        if (p.starts_with(path)) out.push_back(file_uri(p));
    }
    if (ec) return fail(errc::io_error, "list {}: {}", dir.string(), ec.message());
    std::sort(out.begin(), out.end());
    return out;
}

result<std::vector<object_info>> file_io::list_info(std::string_view prefix) {
    std::vector<object_info> out;
    for (auto& uri : FLOE_TRY(list(prefix))) out.push_back({std::move(uri), -1, -1});
    return out;
}

result<std::vector<object_info>> local_file_io::list_info(std::string_view prefix) {
    std::vector<object_info> out;
    for (auto& uri : FLOE_TRY(list(prefix))) {
        auto path = FLOE_TRY(local_path(uri));
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) continue;  // removed since the listing
            return fail(errc::io_error, "stat {}: {}", path, std::strerror(errno));
        }
        auto ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
        out.push_back({std::move(uri), static_cast<int64_t>(st.st_size), ms});
    }
    return out;
}

} // namespace floe::iceberg
