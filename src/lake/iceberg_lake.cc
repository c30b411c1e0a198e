#include "lake/iceberg_lake.h"

#include "base/crc32c.h"
#include "base/metrics.h"
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/schema.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

namespace floe::lake {

std::string table_name_for_topic(std::string_view topic) {
    std::string out(topic);
    for (auto& c : out)
        if (c == '.' || c == '-' || c == ':') c = '_';
    return out;
}

bool is_stream_key_of(std::string_view topic, std::string_view stream_key) {
    if (stream_key.size() < topic.size() + 2 || !stream_key.starts_with(topic) || stream_key[topic.size()] != '-')
        return false;
    auto digits = stream_key.substr(topic.size() + 1);
    return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string escape_partition_value(std::string_view v) {
    std::string out;
    for (unsigned char c : v) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string data_dir_name(std::string_view stream_key) {
    constexpr size_t name_max = 255;
    auto escaped = escape_partition_value(stream_key);
    auto name = "stream_key=" + escaped;
    if (name.size() <= name_max) return name;
    // No '=' here: engines that discover Hive-style partitions from paths (DuckDB's
    // read_parquet does by default) would take the shortened name for the value.
    auto tail = fmt::format("~{:08x}", crc32c(as_bytes(stream_key)));
    name = "stream_key~" + escaped;
    name.resize(name_max - tail.size());
    // Never cut an escape ("%2F") in half.
    if (auto pct = name.rfind('%'); pct != std::string::npos && pct + 3 > name.size()) name.resize(pct);
    return name + tail;
}

result<position_map> positions_from_summary(const std::map<std::string, std::string>& summary) {
    position_map out;
    auto it = summary.find(positions_summary_key);
    if (it == summary.end()) return out;
    auto j = nlohmann::json::parse(it->second, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(errc::corrupt, "snapshot summary {} is not a JSON object", positions_summary_key);
    for (auto& [k, v] : j.items()) {
        if (!v.is_number_integer())
            return fail(errc::corrupt, "snapshot summary {}: position of '{}' is not an integer",
                        positions_summary_key, k);
        out[k] = v.get<int64_t>();
    }
    return out;
}

std::string positions_to_json(const position_map& p) {
    nlohmann::json j = nlohmann::json::object();
    for (auto& [k, v] : p) j[k] = v;
    return j.dump();
}

namespace {

/// The Parquet writer's sink on an object store: bytes go to a file_io object_writer (S3:
/// parts uploaded as they fill) and close() publishes the object. Destroyed unclosed (a failed
/// batch), the object_writer abandons the upload.
class object_sink final : public parquet::output_sink {
public:
    object_sink(std::unique_ptr<iceberg::object_writer> w, std::string uri) : _w(std::move(w)), _uri(std::move(uri)) {}
    result<void> write(bytes_view data) override { return _w->write(data); }
    result<void> close() override { return _w->close(); }
    const std::string& name() const override { return _uri; }

private:
    std::unique_ptr<iceberg::object_writer> _w;
    std::string _uri;
};

/// A Parquet file being written for one stream key: a local file for file:// warehouses
/// (written in place, fsynced on close), an object_writer elsewhere (published at close).
struct open_file {
    std::string uri;
    std::string stream_key;
    std::unique_ptr<parquet::message_writer> writer;
};

class iceberg_table final : public table_writer {
public:
    iceberg_table(iceberg_lake& lake, std::string topic, iceberg::table_ident ident, std::string location)
        : _lake(lake), _topic(std::move(topic)), _ident(std::move(ident)), _location(std::move(location)) {}

    result<position_map> committed_positions() override {
        auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
        auto* snap = t.metadata.current_snapshot();
        if (!snap) return position_map{};
        return FLOE_TRY_CTX(positions_from_summary(snap->summary), "table {}.{} ({})", _ident.ns,
                            _ident.name, t.metadata_location);
    }

    result<std::unique_ptr<append>> begin_append() override;
    result<std::unique_ptr<append>> begin_rewrite(std::vector<std::string> replaced) override;
    result<size_t> expire_before(int64_t cutoff_ms) override;
    const std::string& table_name() const override { return _ident.name; }
    std::string location() const override { return _location; }

    iceberg_lake& lake() { return _lake; }
    const iceberg::table_ident& ident() const { return _ident; }

private:
    iceberg_lake& _lake;
    std::string _topic;
    iceberg::table_ident _ident;
    std::string _location;
};

class iceberg_append final : public append {
public:
    iceberg_append(iceberg_table& table, position_map base) : _table(table), _base(std::move(base)) {}
    /// A rewrite: no position filter, commit replaces `replaced`.
    iceberg_append(iceberg_table& table, std::vector<std::string> replaced)
        : _table(table), _replaced(std::move(replaced)) {}

    ~iceberg_append() override {
        if (!_committed && !_written.empty()) {
            static auto& orphans = metrics::registry::instance().counter_family(
                "floe_lake_orphan_files_total",
                "Data files written by appends that did not commit (left for orphan cleanup).");
            orphans.with({}).inc(_written.size());
            spdlog::warn("append to {} abandoned: {} data file(s) left for orphan cleanup: {}",
                         _table.table_name(), _written.size(), fmt::join(_written, ", "));
        }
    }

    result<void> add(const parquet::message_row& row) override {
        auto key = std::string(row.stream_key);
        auto b = _base.find(key);
        if (b != _base.end() && row.offset < b->second) {
            ++_skipped;
            return {};
        }
        auto& f = _open[key];
        // A rewrite writes one file per stream: compaction sized its input by the files' sizes
        // on storage, while the writer's estimate counts open pages and dictionaries raw, which
        // would cut a small target's files far below it (and compact them again every pass).
        if (f && !_replaced && f->writer->file().should_roll()) FLOE_TRY(close_file(*f));
        if (!f || !f->writer) FLOE_TRY(open_new(key, row.segment_id, f));
        auto& last = _last_offset[key];
        if (_rows_by_stream[key] > 0 && row.offset <= last)
            return fail(errc::invalid_argument, "rows of {} out of order: offset {} after {}", key,
                        row.offset, last);
        last = row.offset;
        _first_offset.emplace(key, row.offset);
        ++_rows_by_stream[key];
        ++_rows;
        return f->writer->append(row);
    }

    result<commit_result> commit(const position_map& advance) override {
        for (auto& [k, f] : _open)
            if (f && f->writer) FLOE_TRY(close_file(*f));
        bool moves = false;
        for (auto& [k, v] : advance) {
            auto b = _base.find(k);
            if (b == _base.end() || v > b->second) moves = true;
        }
        commit_result out;
        out.skipped_rows = _skipped;
        if (_replaced) return commit_rewrite(std::move(out));
        if (_files.empty() && !moves) {
            _committed = true;
            return out; // nothing to add, no position to move
        }
        iceberg::append_request req;
        req.files = _files;
        auto first_rows = _first_offset; // per stream: the lowest offset this append adds
        req.prepare = [advance, first_rows](const iceberg::table_metadata& base,
                                            std::map<std::string, std::string>& summary) -> result<void> {
            position_map pos;
            if (auto* s = base.current_snapshot()) pos = FLOE_TRY(positions_from_summary(s->summary));
            // A concurrent writer may have committed these rows since we started: adding
            // them again would duplicate them. Abort; the caller retries from the new positions.
            for (auto& [k, first] : first_rows) {
                auto it = pos.find(k);
                if (it != pos.end() && first < it->second)
                    return fail(errc::already_exists,
                                "rows of {} from offset {} were committed concurrently (position now {})",
                                k, first, it->second);
            }
            for (auto& [k, v] : advance) {
                auto& cur = pos[k];
                cur = std::max(cur, v);
            }
            summary[positions_summary_key] = positions_to_json(pos);
            return {};
        };
        auto res = FLOE_TRY_CTX(iceberg::append_files(_table.lake().catalog(), _table.lake().io(),
                                                      _table.ident(), std::move(req),
                                                      _table.lake().options().commit),
                                "committing {} file(s) to {}.{}", _files.size(), _table.ident().ns,
                                _table.ident().name);
        _committed = true;
        out.snapshot_id = res.snapshot_id;
        out.sequence_number = res.sequence_number;
        out.attempts = res.attempts;
        out.added_rows = _rows;
        out.data_files = _written;
        out.added_bytes = _bytes;
        return out;
    }

    std::vector<std::string> written_files() const override { return _written; }

private:
    result<commit_result> commit_rewrite(commit_result out) {
        iceberg::change_request req;
        req.operation = "replace";
        req.add = _files;
        req.remove = *_replaced;
        if (req.add.empty() && req.remove.empty()) {
            _committed = true;
            return out;
        }
        // The same rows, in other files: positions move neither way.
        req.prepare = [](const iceberg::table_metadata& base,
                         std::map<std::string, std::string>& summary) -> result<void> {
            if (auto* s = base.current_snapshot())
                if (auto it = s->summary.find(positions_summary_key); it != s->summary.end())
                    summary[positions_summary_key] = it->second;
            return {};
        };
        auto res = FLOE_TRY_CTX(iceberg::commit_changes(_table.lake().catalog(), _table.lake().io(), _table.ident(),
                                                        std::move(req), _table.lake().options().commit),
                                "rewriting {} file(s) of {}.{} into {}", _replaced->size(), _table.ident().ns,
                                _table.ident().name, _files.size());
        _committed = true;
        out.snapshot_id = res.snapshot_id;
        out.sequence_number = res.sequence_number;
        out.attempts = res.attempts;
        out.added_rows = _rows;
        out.data_files = _written;
        out.added_bytes = _bytes;
        return out;
    }

    result<void> open_new(const std::string& key, int64_t segment_id, std::unique_ptr<open_file>& slot) {
        auto f = std::make_unique<open_file>();
        f->stream_key = key;
        f->uri = fmt::format("{}/data/{}/segment-{}-{}.parquet", _table.location(), data_dir_name(key),
                             segment_id, uuid::random().to_string());
        std::unique_ptr<parquet::output_sink> sink;
        if (f->uri.starts_with("file://")) {
            auto path = FLOE_TRY(iceberg::local_path(f->uri));
            std::error_code ec;
            std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
            if (ec) return fail(errc::io_error, "cannot create directory for {}: {}", path, ec.message());
            sink = FLOE_TRY(parquet::open_file_sink(path, true));
        } else {
            sink = std::make_unique<object_sink>(FLOE_TRY(_table.lake().io().open_writer(f->uri)), f->uri);
        }
        auto w = FLOE_TRY(parquet::message_writer::open(std::move(sink), _table.lake().options().parquet));
        f->writer = std::make_unique<parquet::message_writer>(std::move(w));
        _written.push_back(f->uri);
        slot = std::move(f);
        return {};
    }

    result<void> close_file(open_file& f) {
        auto summary = FLOE_TRY_CTX(f.writer->close(), "closing {}", f.uri);
        f.writer.reset();
        iceberg::data_file df;
        df.file_path = f.uri;
        df.partition = {avro::datum::string(f.stream_key)};
        df.record_count = summary.row_count;
        df.file_size_in_bytes = static_cast<int64_t>(summary.file_size);
        df.split_offsets = summary.split_offsets;
        df.sort_order_id = 1;
        for (auto& c : summary.columns) {
            if (!c.field_id) continue;
            int32_t id = *c.field_id;
            df.column_sizes[id] = c.compressed_size;
            df.value_counts[id] = c.num_values;
            df.null_value_counts[id] = c.null_count;
            // Iceberg keeps no bounds for fields inside lists; Parquet plain bytes equal
            // Iceberg's single-value serialization for int, long, string and binary.
            if (c.repeated) continue;
            if (c.min_value) df.lower_bounds[id] = *c.min_value;
            if (c.max_value) df.upper_bounds[id] = *c.max_value;
        }
        _bytes += summary.file_size;
        _files.push_back(std::move(df));
        return {};
    }

    iceberg_table& _table;
    position_map _base;
    std::optional<std::vector<std::string>> _replaced;
    std::map<std::string, std::unique_ptr<open_file>> _open;
    std::map<std::string, int64_t> _last_offset, _rows_by_stream, _first_offset;
    std::vector<iceberg::data_file> _files;
    std::vector<std::string> _written;
    int64_t _rows = 0, _skipped = 0;
    uint64_t _bytes = 0;
    bool _committed = false;
};

result<std::unique_ptr<append>> iceberg_table::begin_append() {
    auto base = FLOE_TRY(committed_positions());
    return std::unique_ptr<append>(std::make_unique<iceberg_append>(*this, std::move(base)));
}

result<std::unique_ptr<append>> iceberg_table::begin_rewrite(std::vector<std::string> replaced) {
    return std::unique_ptr<append>(std::make_unique<iceberg_append>(*this, std::move(replaced)));
}

result<size_t> iceberg_table::expire_before(int64_t cutoff_ms) {
    auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
    auto files = FLOE_TRY(iceberg::live_files(_lake.io(), t.metadata));
    iceberg::change_request req;
    req.operation = "delete";
    for (auto& e : files) {
        auto it = e.file.upper_bounds.find(iceberg::field_ids::message_ts);
        if (it == e.file.upper_bounds.end()) continue; // no bound: cannot prove it is old
        // Only this topic's files: a table shared with another topic keeps that topic's rows.
        if (e.file.partition.empty() || e.file.partition[0].type() != avro::datum::kind::string
            || !is_stream_key_of(_topic, e.file.partition[0].as_string()))
            continue;
        auto newest = iceberg::deserialize_long(it->second);
        if (newest && *newest < cutoff_ms) req.remove.push_back(e.file.file_path);
    }
    if (req.remove.empty()) return size_t(0);
    // Positions are carried forward unchanged: retention removes old rows, it does not make
    // them "not yet committed" (a retried offload must still skip them).
    req.prepare = [](const iceberg::table_metadata& base, std::map<std::string, std::string>& summary) -> result<void> {
        if (auto* s = base.current_snapshot())
            if (auto it = s->summary.find(positions_summary_key); it != s->summary.end())
                summary[positions_summary_key] = it->second;
        return {};
    };
    auto n = req.remove.size();
    FLOE_TRY_CTX(iceberg::commit_changes(_lake.catalog(), _lake.io(), _ident, std::move(req), _lake.options().commit),
                 "remote retention commit on {}.{}", _ident.ns, _ident.name);
    return n;
}

} // namespace

iceberg_lake::iceberg_lake(std::shared_ptr<iceberg::catalog> cat, std::shared_ptr<iceberg::file_io> io,
                           lake_options opts)
    : _cat(std::move(cat)), _io(std::move(io)), _opts(std::move(opts)) {
    while (!_opts.warehouse.empty() && _opts.warehouse.back() == '/') _opts.warehouse.pop_back();
}

result<std::shared_ptr<table_writer>> iceberg_lake::table_for_topic(const std::string& topic) {
    std::lock_guard g(_mu);
    if (auto it = _tables.find(topic); it != _tables.end()) return it->second;
    iceberg::table_ident ident{_opts.ns, table_name_for_topic(topic)};
    auto location = fmt::format("{}/{}/{}", _opts.warehouse, ident.ns, ident.name);
    auto t = FLOE_TRY_CTX(iceberg::create_table_if_missing(*_cat, *_io, ident, location,
                                                           {{"floe.topic", topic}}),
                          "opening the table of topic {}", topic);
    auto w = std::make_shared<iceberg_table>(*this, topic, ident, t.metadata.location);
    _tables.emplace(topic, w);
    return std::shared_ptr<table_writer>(w);
}

result<current_files> current_data_files(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t) {
    auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
    current_files out;
    out.metadata_location = loaded.metadata_location;
    out.snapshot_id = loaded.metadata.current_snapshot_id;
    if (!loaded.metadata.current_snapshot()) return out;
    auto entries = FLOE_TRY(iceberg::live_files(io, loaded.metadata));
    out.files.reserve(entries.size());
    for (auto& e : entries)
        if (e.file.content == iceberg::file_content::data) out.files.push_back(std::move(e.file));
    return out;
}

std::string readable_path(std::string_view uri) {
    if (uri.starts_with("file:"))
        if (auto p = iceberg::local_path(uri)) return *p;
    return std::string(uri);
}

} // namespace floe::lake
