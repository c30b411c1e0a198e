#include "format/parquet/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace floe::parquet {

namespace {

class file_sink final : public output_sink {
public:
    file_sink(int fd, std::string name, bool sync) : _fd(fd), _name(std::move(name)), _sync(sync) {}
    ~file_sink() override {
        if (_fd >= 0) ::close(_fd);
    }
    result<void> write(bytes_view data) override {
        if (_fd < 0) return fail(errc::invalid_argument, "{}: write after close", _name);
        const uint8_t* p = data.data();
        size_t left = data.size();
        while (left > 0) {
            ssize_t n = ::write(_fd, p, left);
            if (n < 0) {
                if (errno == EINTR) continue;
                return fail(errc::io_error, "{}: write failed: {}", _name, std::strerror(errno));
            }
            p += n;
            left -= static_cast<size_t>(n);
        }
        return {};
    }
    result<void> close() override {
        if (_fd < 0) return {};
        int fd = _fd;
        _fd = -1;
        if (_sync && ::fsync(fd) != 0) {
            int e = errno;
            ::close(fd);
            return fail(errc::io_error, "{}: fsync failed: {}", _name, std::strerror(e));
        }
        if (::close(fd) != 0)
            return fail(errc::io_error, "{}: close failed: {}", _name, std::strerror(errno));
        return {};
    }
    const std::string& name() const override { return _name; }

private:
    int _fd;
    std::string _name;
    bool _sync;
};

class memory_sink final : public output_sink {
public:
    memory_sink(byte_buffer& out, std::string name) : _out(out), _name(std::move(name)) {}
    result<void> write(bytes_view data) override {
        _out.insert(_out.end(), data.begin(), data.end());
        return {};
    }
    result<void> close() override { return {}; }
    const std::string& name() const override { return _name; }

private:
    byte_buffer& _out;
    std::string _name;
};

class file_source final : public input_source {
public:
    file_source(int fd, std::string name) : _fd(fd), _name(std::move(name)) {}
    ~file_source() override { ::close(_fd); }
    result<uint64_t> size() override {
        struct stat st {};
        if (::fstat(_fd, &st) != 0)
            return fail(errc::io_error, "{}: stat failed: {}", _name, std::strerror(errno));
        return static_cast<uint64_t>(st.st_size);
    }
    result<void> read_at(uint64_t offset, size_t len, byte_buffer& out) override {
        out.resize(len);
        size_t done = 0;
        while (done < len) {
            ssize_t n =
                ::pread(_fd, out.data() + done, len - done, static_cast<off_t>(offset + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                return fail(errc::io_error, "{}: read failed: {}", _name, std::strerror(errno));
            }
            if (n == 0)
                return fail(errc::corrupt,
                            "{}: truncated: wanted {} bytes at offset {}, file ends first", _name,
                            len, offset);
            done += static_cast<size_t>(n);
        }
        return {};
    }
    const std::string& name() const override { return _name; }

private:
    int _fd;
    std::string _name;
};

class memory_source final : public input_source {
public:
    memory_source(bytes_view data, std::string name) : _data(data), _name(std::move(name)) {}
    result<uint64_t> size() override { return _data.size(); }
    result<void> read_at(uint64_t offset, size_t len, byte_buffer& out) override {
        if (offset > _data.size() || len > _data.size() - offset)
            return fail(errc::corrupt, "{}: truncated: wanted {} bytes at offset {}, size is {}",
                        _name, len, offset, _data.size());
        out.assign(_data.begin() + static_cast<ptrdiff_t>(offset),
                   _data.begin() + static_cast<ptrdiff_t>(offset + len));
        return {};
    }
    const std::string& name() const override { return _name; }

private:
    bytes_view _data;
    std::string _name;
};

} // namespace

result<std::unique_ptr<output_sink>> open_file_sink(const std::string& path, bool sync) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(errc::io_error, "{}: cannot create: {}", path, std::strerror(errno));
    return std::unique_ptr<output_sink>(new file_sink(fd, path, sync));
}

std::unique_ptr<output_sink> make_memory_sink(byte_buffer& out, std::string name) {
    return std::make_unique<memory_sink>(out, std::move(name));
}

result<std::unique_ptr<input_source>> open_file_source(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(errc::not_found, "{}: cannot open: {}", path, std::strerror(errno));
    return std::unique_ptr<input_source>(new file_source(fd, path));
}

std::unique_ptr<input_source> make_memory_source(bytes_view data, std::string name) {
    return std::make_unique<memory_source>(data, std::move(name));
}

} // namespace floe::parquet
