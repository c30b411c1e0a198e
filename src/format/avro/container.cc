#include "format/avro/container.h"

#include "base/random.h"
#include "base/varint.h"

namespace floe::avro {

namespace {

constexpr uint8_t magic[4] = {'O', 'b', 'j', 1};

void put_string(byte_buffer& out, std::string_view s) {
    put_varint(out, static_cast<int64_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

sync_marker random_sync() {
    sync_marker m;
    os_random_bytes(m.data(), m.size());
    return m;
}

} // namespace

result<container_writer> container_writer::create(const schema& s, writer_options opts) {
    for (auto& [k, v] : opts.metadata)
        if (k.starts_with("avro."))
            return fail(errc::invalid_argument, "metadata key {} is reserved for Avro", k);
    container_writer w(s, std::move(opts));
    w._sync = w._opts.sync ? *w._opts.sync : random_sync();
    auto& out = w._file;
    out.reserve(s.json().size() + 256);
    out.insert(out.end(), std::begin(magic), std::end(magic));
    put_varint(out, static_cast<int64_t>(2 + w._opts.metadata.size()));
    put_string(out, "avro.schema");
    put_string(out, s.json());
    put_string(out, "avro.codec");
    put_string(out, codec_name(w._opts.codec));
    for (auto& [k, v] : w._opts.metadata) {
        put_string(out, k);
        put_string(out, v);
    }
    out.push_back(0);
    out.insert(out.end(), w._sync.begin(), w._sync.end());
    w._block.reserve(w._opts.block_target_bytes + 1024);
    return w;
}

result<void> container_writer::append(const datum& d) {
    size_t mark = _block.size();
    if (auto r = encode(_schema->root(), d, _block); !r) {
        _block.resize(mark);
        return std::unexpected(std::move(r).error());
    }
    ++_block_count;
    ++_total;
    if (_block.size() >= _opts.block_target_bytes) FLOE_TRY(flush_block());
    return {};
}

result<void> container_writer::flush_block() {
    if (_block_count == 0) return {};
    const byte_buffer* data = &_block;
    if (_opts.codec != codec::null) {
        _scratch.clear();
        FLOE_TRY(compress(_opts.codec, _block, _scratch, _opts.level));
        data = &_scratch;
    }
    put_varint(_file, static_cast<int64_t>(_block_count));
    put_varint(_file, static_cast<int64_t>(data->size()));
    _file.insert(_file.end(), data->begin(), data->end());
    _file.insert(_file.end(), _sync.begin(), _sync.end());
    _block.clear();
    _block_count = 0;
    return {};
}

result<byte_buffer> container_writer::finish() {
    FLOE_TRY(flush_block());
    return std::move(_file);
}

result<container_reader> container_reader::open(bytes_view file, std::string name,
                                                reader_options opts) {
    container_reader r;
    r._file = file;
    r._name = std::move(name);
    r._opts = opts;
    FLOE_TRY_CTX(r.read_header(), "avro file {}: header", r._name);
    return r;
}

result<container_reader> container_reader::open_owned(byte_buffer file, std::string name,
                                                      reader_options opts) {
    container_reader r;
    r._owned = std::move(file);
    r._file = r._owned;
    r._name = std::move(name);
    r._opts = opts;
    FLOE_TRY_CTX(r.read_header(), "avro file {}: header", r._name);
    return r;
}

std::optional<std::string_view> container_reader::meta(std::string_view key) const noexcept {
    for (auto& [k, v] : _meta)
        if (k == key) return std::string_view(v);
    return std::nullopt;
}

result<void> container_reader::read_header() {
    byte_reader r(_file);
    auto m = r.bytes(4);
    if (!m || std::memcmp(m->data(), magic, 4) != 0)
        return fail(errc::corrupt, "bad magic (not an Avro object container file)");
    for (;;) {
        auto count = FLOE_TRY(read_varint(r));
        if (count == 0) break;
        if (count < 0) {
            if (count == INT64_MIN) return fail(errc::corrupt, "metadata block count overflow");
            count = -count;
            FLOE_TRY(read_varint(r));
        }
        if (static_cast<uint64_t>(count) > r.remaining() / 2)
            return fail(errc::corrupt, "metadata claims {} entries, only {} bytes left", count,
                        r.remaining());
        for (int64_t i = 0; i < count; ++i) {
            std::string kv[2];
            for (auto& s : kv) {
                auto n = FLOE_TRY(read_varint(r));
                if (n < 0 || static_cast<uint64_t>(n) > r.remaining())
                    return fail(errc::corrupt, "metadata string length {} at offset {} exceeds the "
                                "{} bytes left", n, r.position(), r.remaining());
                s = as_chars(FLOE_TRY(r.bytes(static_cast<size_t>(n))));
            }
            _meta.emplace_back(std::move(kv[0]), std::move(kv[1]));
        }
    }
    auto s = meta("avro.schema");
    if (!s) return fail(errc::corrupt, "no avro.schema in the metadata");
    _schema = std::make_unique<schema>(FLOE_TRY_CTX(schema::parse(*s), "avro.schema"));
    if (auto c = meta("avro.codec")) {
        auto parsed = codec_from_name(*c);
        if (!parsed) return fail(errc::unsupported, "codec \"{}\" is not supported", *c);
        _codec = *parsed;
    }
    auto sync = FLOE_TRY_CTX(r.bytes(16), "sync marker");
    std::memcpy(_sync.data(), sync.data(), 16);
    _pos = r.position();
    return {};
}

result<void> container_reader::load_block() {
    byte_reader r(_file.subspan(_pos));
    auto count = FLOE_TRY(read_varint(r));
    auto size = FLOE_TRY(read_varint(r));
    if (count < 0) return fail(errc::corrupt, "negative object count {}", count);
    if (size < 0 || static_cast<uint64_t>(size) > r.remaining())
        return fail(errc::corrupt, "block size {} exceeds the {} bytes left", size, r.remaining());
    auto data = FLOE_TRY(r.bytes(static_cast<size_t>(size)));
    auto sync = r.bytes(16);
    if (!sync) return fail(errc::corrupt, "truncated before the sync marker");
    if (std::memcmp(sync->data(), _sync.data(), 16) != 0)
        return fail(errc::corrupt, "sync marker mismatch (damaged block or wrong length)");
    FLOE_TRY(decompress(_codec, data, _block, _opts.max_block_bytes));
    _in = byte_reader(_block);
    _left_in_block = count;
    _pos += r.position();
    return {};
}

result<bool> container_reader::next(datum& out) {
    while (_left_in_block == 0) {
        if (_block_index > 0 && !_in.empty())
            return fail(errc::corrupt, "avro file {}: block {} at offset {}: {} bytes left after its "
                        "objects", _name, _block_index - 1, _block_offset, _in.remaining());
        if (_pos >= _file.size()) return false;
        _block_offset = _pos;
        FLOE_TRY_CTX(load_block(), "avro file {}: block {} at offset {}", _name, _block_index,
                     _block_offset);
        ++_block_index;
    }
    out = FLOE_TRY_CTX(decode(_schema->root(), _in, _opts.budget),
                       "avro file {}: block {} at offset {}: object ending near block byte {}", _name, _block_index - 1,
                       _block_offset, _in.position());
    --_left_in_block;
    return true;
}

result<std::vector<datum>> container_reader::read_all() {
    std::vector<datum> out;
    datum d;
    while (FLOE_TRY(next(d))) out.push_back(std::move(d));
    return out;
}

} // namespace floe::avro
