#include "iceberg/s3_file_io.h"

namespace floe::iceberg {
namespace {

class s3_object_writer final : public object_writer {
public:
    explicit s3_object_writer(std::unique_ptr<aws::s3_writer> w) : _w(std::move(w)) {}
    result<void> write(bytes_view data) override { return _w->write(data); }
    result<void> close() override { return _w->close(); }
    uint64_t size() const override { return _w->size(); }

private:
    std::unique_ptr<aws::s3_writer> _w;
};

} // namespace

s3_file_io::s3_file_io(aws::s3_options opts) : _s3(std::move(opts)) {}

result<byte_buffer> s3_file_io::read(std::string_view uri) { return _s3.read(uri); }

result<void> s3_file_io::write(std::string_view uri, bytes_view data) {
    return _s3.write(uri, data);
}

result<void> s3_file_io::create_new(std::string_view uri, bytes_view data) {
    return _s3.create_new(uri, data);
}

result<bool> s3_file_io::exists(std::string_view uri) { return _s3.exists(uri); }

result<void> s3_file_io::copy(std::string_view from, std::string_view to) {
    return _s3.copy(from, to);
}

result<void> s3_file_io::copy_new(std::string_view from, std::string_view to) {
    return _s3.copy_new(from, to);
}

result<void> s3_file_io::remove(std::string_view uri) { return _s3.remove(uri); }

result<std::vector<std::string>> s3_file_io::list(std::string_view prefix) {
    return _s3.list(prefix);
}

result<std::vector<object_info>> s3_file_io::list_info(std::string_view prefix) {
    auto objects = FLOE_TRY(_s3.list_info(prefix));
    std::vector<object_info> out;
    out.reserve(objects.size());
    for (auto& o : objects)
        out.push_back({std::move(o.uri), o.size, o.modified_ms});
    return out;
}

result<uint64_t> s3_file_io::size(std::string_view uri) { return _s3.size(uri); }

result<void> s3_file_io::read_range(std::string_view uri, uint64_t offset, size_t len,
                                    byte_buffer& out) {
    return _s3.read_range(uri, offset, len, out);
}

result<std::unique_ptr<object_writer>> s3_file_io::open_writer(std::string_view uri) {
    auto w = FLOE_TRY(_s3.open_writer(uri));
    return std::make_unique<s3_object_writer>(std::move(w));
}

result<std::vector<pending_upload>> s3_file_io::list_pending_uploads(std::string_view prefix) {
    auto uploads = FLOE_TRY(_s3.list_pending_uploads(prefix));
    std::vector<pending_upload> out;
    out.reserve(uploads.size());
    for (auto& u : uploads)
        out.push_back({std::move(u.uri), std::move(u.id), u.initiated_ms});
    return out;
}

result<void> s3_file_io::abort_pending_upload(const pending_upload& u) {
    return _s3.abort_pending_upload({u.uri, u.id, u.initiated_ms});
}

} // namespace floe::iceberg
