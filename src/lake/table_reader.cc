#include "lake/table_reader.h"

#include "iceberg/bounds.h"
#include "iceberg/transform.h"

#include <algorithm>

namespace floe::lake {
namespace {

// A data file in object storage read by ranges (S3 ranged GETs): the footer, then only the
// row groups and columns the reader asks for. The size comes from the manifest when known;
// the file's last 64 KiB are fetched once, so the magic, footer length and footer (and the
// whole of a small file) cost one GET instead of three; sequential reads fetch 8 MiB windows.
// One reader (and thread) at a time, as parquet::input_source requires.
class file_io_source final : public parquet::input_source {
public:
    file_io_source(iceberg::file_io& io, std::string uri, int64_t size) : _io(io), _uri(std::move(uri)) {
        if (size >= 0) _size = static_cast<uint64_t>(size);
    }
    result<uint64_t> size() override {
        if (!_size) _size = FLOE_TRY(_io.size(_uri));
        return *_size;
    }
    result<void> read_at(uint64_t offset, size_t len, byte_buffer& out) override {
        auto total = FLOE_TRY(size());
        if (!_tail_loaded) {
            _tail_off = total - std::min<uint64_t>(total, tail_bytes);
            FLOE_TRY(_io.read_range(_uri, _tail_off, static_cast<size_t>(total - _tail_off), _tail));
            _tail_loaded = true;
        }
        if (offset >= _tail_off && offset + len <= total) {
            auto from = _tail.begin() + static_cast<ptrdiff_t>(offset - _tail_off);
            out.assign(from, from + static_cast<ptrdiff_t>(len));
            return {};
        }
        if (offset >= _window_off && offset + len <= _window_off + _window.size()) {
            auto from = _window.begin() + static_cast<ptrdiff_t>(offset - _window_off);
            out.assign(from, from + static_cast<ptrdiff_t>(len));
            _next = offset + len;
            return {};
        }
        // A read that starts where the last one ended is a sequential scan (the column chunks
        // of a row group, row group after row group): fetch a whole window, one GET for many
        // chunks. Point reads (key lookups) keep fetching only what they ask for.
        bool sequential = offset == _next;
        _next = offset + len;
        if (!sequential || len >= readahead_bytes) return _io.read_range(_uri, offset, len, out);
        auto want = std::min<uint64_t>(readahead_bytes, total - offset);
        FLOE_TRY(_io.read_range(_uri, offset, static_cast<size_t>(want), _window));
        _window_off = offset;
        out.assign(_window.begin(), _window.begin() + static_cast<ptrdiff_t>(len));
        return {};
    }
    const std::string& name() const override { return _uri; }

private:
    static constexpr uint64_t tail_bytes = 64 * 1024;
    static constexpr uint64_t readahead_bytes = 8u << 20;
    iceberg::file_io& _io;
    std::string _uri;
    std::optional<uint64_t> _size;
    bool _tail_loaded = false;
    uint64_t _tail_off = 0;
    byte_buffer _tail;
    uint64_t _next = UINT64_MAX;    // where the last read ended
    uint64_t _window_off = 0;       // the read-ahead window of a sequential scan
    byte_buffer _window;
};

} // namespace

table_reader::table_reader(iceberg_lake& lake, std::string topic)
    : _lake(lake), _topic(std::move(topic)), _table(table_name_for_topic(_topic)) {}

table_reader::table_reader(iceberg_lake& lake, std::string topic, std::string table)
    : _lake(lake), _topic(std::move(topic)), _table(std::move(table)), _with_dead_letters(false) {}

result<std::vector<planned_file>> table_reader::plan_files(const iceberg::loaded_table& t) {
    std::vector<planned_file> files;
    auto entries = FLOE_TRY_CTX(iceberg::live_files(_lake.io(), t.metadata), "planning a scan of {}", t.metadata_location);
    files.reserve(entries.size());
    for (auto& e : entries) {
        planned_file f;
        f.uri = e.file.file_path;
        if (auto k = iceberg::file_stream_key(e.file, t.metadata.partition_specs)) f.stream_key = std::move(*k);
        f.record_count = e.file.record_count;
        f.file_size = e.file.file_size_in_bytes;
        auto bound = [&](const std::map<int32_t, std::string>& m, int32_t id, int64_t dflt) -> int64_t {
            auto it = m.find(id);
            if (it == m.end()) return dflt;
            auto v = iceberg::deserialize_long(it->second);
            return v ? *v : dflt;
        };
        f.min_offset = bound(e.file.lower_bounds, iceberg::field_ids::offset, INT64_MIN);
        f.max_offset = bound(e.file.upper_bounds, iceberg::field_ids::offset, INT64_MAX);
        if (auto k = e.file.lower_bounds.find(iceberg::field_ids::key); k != e.file.lower_bounds.end())
            f.min_key = k->second;
        if (auto k = e.file.upper_bounds.find(iceberg::field_ids::key); k != e.file.upper_bounds.end())
            f.max_key = k->second;
        f.min_ts = bound(e.file.lower_bounds, iceberg::field_ids::message_ts, INT64_MIN);
        f.max_ts = bound(e.file.upper_bounds, iceberg::field_ids::message_ts, INT64_MAX);
        f.key_metadata = e.file.key_metadata;
        files.push_back(std::move(f));
    }
    return files;
}

result<std::vector<planned_file>> table_reader::all_files() {
    // One catalog lookup per call (a cheap indexed query) so a commit is visible at once: a
    // reader must never miss rows that local retention already removed from the hot tier.
    // Manifests are read again only when the metadata location moved.
    std::lock_guard g(_mu);
    iceberg::table_ident ident{_lake.options().ns, _table};
    auto loc = FLOE_TRY(_lake.catalog().metadata_location(ident));
    if (!loc) {
        _files.clear();
        _positions.clear();
        _metadata_location.clear();
        _dlq_location.clear();
        return _files;
    }
    // A typed table names its dead-letter table (before the first dead letter is committed):
    // the records there are the topic's too, and a Kafka read of their offsets must find them.
    std::optional<std::string> dlq_loc;
    if (!_dlq_table.empty()) dlq_loc = FLOE_TRY(_lake.catalog().metadata_location({ident.ns, _dlq_table}));
    if (*loc == _metadata_location && dlq_loc.value_or("") == _dlq_location) return _files;
    auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), ident));
    position_map positions;
    if (auto* snap = t.metadata.current_snapshot())
        positions = FLOE_TRY_CTX(positions_from_summary(snap->summary), "table {}.{} ({})", ident.ns, ident.name, *loc);
    auto files = FLOE_TRY(plan_files(t));
    for (auto& f : files) f.aad_prefix = aad_prefix_of(ident.ns, ident.name);
    if (auto d = t.metadata.properties.find(dead_letter_table_property);
        _with_dead_letters && d != t.metadata.properties.end()) {
        if (_dlq_table != d->second) {
            _dlq_table = d->second;
            dlq_loc = FLOE_TRY(_lake.catalog().metadata_location({ident.ns, _dlq_table}));
        }
        if (dlq_loc) {
            auto dt = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), {ident.ns, _dlq_table}));
            for (auto& f : FLOE_TRY(plan_files(dt))) {
                f.aad_prefix = aad_prefix_of(ident.ns, _dlq_table);
                files.push_back(std::move(f));
            }
        }
    }
    std::sort(files.begin(), files.end(), [](auto& a, auto& b) {
        return std::tie(a.stream_key, a.min_offset) < std::tie(b.stream_key, b.min_offset);
    });
    _files = std::move(files);
    _positions = std::move(positions);
    _metadata_location = *loc;
    _dlq_location = dlq_loc.value_or("");
    return _files;
}

bool planned_file::may_contain_key(std::string_view key) const {
    if (min_key && key < std::string_view(*min_key)) return false;
    if (max_key && key > std::string_view(*max_key)) return false;
    return true;
}

result<std::vector<planned_file>> table_reader::files() { return all_files(); }

result<std::vector<planned_file>> table_reader::files_for_offsets(const std::string& stream_key, int64_t from,
                                                                  int64_t to) {
    auto all = FLOE_TRY(all_files());
    std::vector<planned_file> out;
    for (auto& f : all)
        if (f.stream_key == stream_key && f.max_offset >= from && f.min_offset < to) out.push_back(f);
    return out;
}

result<std::vector<planned_file>> table_reader::files_for_time(const std::string& stream_key, int64_t from_ts,
                                                               int64_t to_ts) {
    auto all = FLOE_TRY(all_files());
    std::vector<planned_file> out;
    for (auto& f : all)
        if (f.stream_key == stream_key && f.max_ts >= from_ts && f.min_ts <= to_ts) out.push_back(f);
    return out;
}

result<int64_t> table_reader::committed_position(const std::string& stream_key) {
    FLOE_TRY(all_files());
    std::lock_guard g(_mu);
    auto it = _positions.find(stream_key);
    return it == _positions.end() ? 0 : it->second;
}

result<std::optional<int64_t>> table_reader::start_offset(const std::string& stream_key) {
    auto all = FLOE_TRY(all_files());
    std::optional<int64_t> start;
    for (auto& f : all)
        if (f.stream_key == stream_key && f.record_count > 0) start = std::min(start.value_or(INT64_MAX), f.min_offset);
    return start;
}

result<parquet::message_reader> table_reader::open_file(const planned_file& f, byte_buffer& storage) {
    std::unique_ptr<parquet::input_source> src;
    if (f.uri.starts_with("file://")) {
        auto path = FLOE_TRY(iceberg::local_path(f.uri));
        src = FLOE_TRY_CTX(parquet::open_file_source(path), "opening data file {}", f.uri);
    } else {
        storage.clear();
        src = std::make_unique<file_io_source>(_lake.io(), f.uri, f.file_size);
    }
    auto r = parquet::message_reader::open(std::move(src), {}, _lake.reader_options_for(f.uri, f.aad_prefix));
    if (!r) return std::unexpected(std::move(r).error().with_context("reading data file {}{}", f.uri, key_note(f)));
    return std::move(*r);
}

std::string table_reader::key_note(const planned_file& f) const {
    if (!f.key_metadata) return {};
    return fmt::format(" (encrypted with {}{})", key_label(*f.key_metadata),
                       _lake.key_provider() ? "" : "; this process has no key provider: set floe.encryption.provider");
}

result<std::vector<parquet::message_record>> table_reader::read_file(const planned_file& f) {
    byte_buffer remote;
    auto reader = FLOE_TRY(open_file(f, remote));
    std::vector<parquet::message_record> rows;
    rows.reserve(static_cast<size_t>(std::max<int64_t>(0, f.record_count)));
    while (FLOE_TRY_CTX(reader.next_row_group(rows), "reading data file {}{}", f.uri, key_note(f))) {}
    return rows;
}

parquet::message_row row_of(const parquet::message_record& r, std::vector<parquet::message_header_view>& headers) {
    parquet::message_row row;
    row.stream_key = r.stream_key;
    row.segment_id = r.segment_id;
    row.message_id = r.message_id;
    row.message_ts = r.message_ts;
    row.kafka_timestamp = r.kafka_timestamp;
    if (r.key) row.key = std::string_view(*r.key);
    if (r.value) row.value = std::string_view(*r.value);
    headers.clear();
    if (r.headers) {
        for (auto& h : *r.headers)
            headers.push_back({h.key, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt});
        row.headers = std::span<const parquet::message_header_view>(headers);
    }
    row.partition = r.partition;
    row.offset = r.offset;
    return row;
}

} // namespace floe::lake
