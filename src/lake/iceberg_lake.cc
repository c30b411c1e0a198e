#include "lake/iceberg_lake.h"

#include "base/crc32c.h"
#include "base/metrics.h"
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"
#include "lake/column_copy.h"
#include "lake/table_reader.h"
#include "lake/value_codec.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

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

std::string data_dir_name(std::string_view stream_key) { return partition_dir_name("stream_key", stream_key); }

std::string partition_dir_name(std::string_view field, std::string_view value) {
    constexpr size_t name_max = 255;
    auto escaped = escape_partition_value(value);
    auto name = fmt::format("{}={}", field, escaped);
    if (name.size() <= name_max) return name;
    // No '=' here: engines that discover Hive-style partitions from paths (DuckDB's
    // read_parquet does by default) would take the shortened name for the value.
    auto tail = fmt::format("~{:08x}", crc32c(as_bytes(value)));
    name = fmt::format("{}~{}", field, escaped);
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

std::string aad_prefix_of(std::string_view ns, std::string_view table) { return fmt::format("{}.{}", ns, table); }

encrypted_column split_encrypted_column(std::string_view entry) {
    auto colon = entry.find(':');
    if (colon == std::string_view::npos) return {entry, {}};
    return {entry.substr(0, colon), entry.substr(colon + 1)};
}

result<table_encryption> encryption_from_properties(const std::map<std::string, std::string>& props) {
    table_encryption e;
    auto get = [&](const char* k) -> std::optional<std::string> {
        auto it = props.find(k);
        if (it == props.end()) return std::nullopt;
        return it->second;
    };
    auto mode = get(encryption_property).value_or("none");
    if (mode == "none") return e;
    if (mode == "uniform") e.how = table_encryption::mode::uniform;
    else if (mode == "columns") e.how = table_encryption::mode::columns;
    else return fail(errc::corrupt, "table property {}='{}' is not none, uniform or columns", encryption_property, mode);
    if (auto cols = get(encryption_columns_property)) {
        size_t at = 0;
        while (at <= cols->size() && !cols->empty()) {
            size_t c = std::min(cols->find(',', at), cols->size());
            if (c > at) e.columns.push_back(cols->substr(at, c - at));
            at = c + 1;
        }
    }
    if (e.how == table_encryption::mode::columns && e.columns.empty())
        return fail(errc::corrupt, "table property {}=columns without {}", encryption_property,
                    encryption_columns_property);
    auto footer = get(encryption_footer_property).value_or("encrypted");
    if (footer != "encrypted" && footer != "plaintext")
        return fail(errc::corrupt, "table property {}='{}' is not encrypted or plaintext", encryption_footer_property,
                    footer);
    e.encrypted_footer = footer == "encrypted";
    auto algo = get(encryption_algorithm_property).value_or("AES_GCM_V1");
    if (algo != "AES_GCM_V1" && algo != "AES_GCM_CTR_V1")
        return fail(errc::corrupt, "table property {}='{}' is not AES_GCM_V1 or AES_GCM_CTR_V1",
                    encryption_algorithm_property, algo);
    e.ctr = algo == "AES_GCM_CTR_V1";
    auto aad = get(encryption_aad_prefix_property).value_or("none");
    if (aad == "stored") e.aad_prefix = table_encryption::aad::stored;
    else if (aad == "supplied") e.aad_prefix = table_encryption::aad::supplied;
    else if (aad != "none")
        return fail(errc::corrupt, "table property {}='{}' is not none, stored or supplied",
                    encryption_aad_prefix_property, aad);
    return e;
}

bool encryption_to_properties(const table_encryption& e, std::map<std::string, std::string>& props) {
    auto before = props;
    for (auto* k : {encryption_property, encryption_columns_property, encryption_footer_property,
                    encryption_algorithm_property, encryption_aad_prefix_property})
        props.erase(k);
    if (e.enabled()) {
        props[encryption_property] = e.how == table_encryption::mode::uniform ? "uniform" : "columns";
        if (e.how == table_encryption::mode::columns)
            props[encryption_columns_property] = fmt::format("{}", fmt::join(e.columns, ","));
        props[encryption_footer_property] = e.encrypted_footer ? "encrypted" : "plaintext";
        props[encryption_algorithm_property] = e.ctr ? "AES_GCM_CTR_V1" : "AES_GCM_V1";
        if (e.aad_prefix != table_encryption::aad::none)
            props[encryption_aad_prefix_property] = e.aad_prefix == table_encryption::aad::stored ? "stored" : "supplied";
    }
    return props != before;
}

std::string describe(const table_encryption& e) {
    if (!e.enabled()) return "none";
    return fmt::format("{}{} ({}, {} footer{})", e.how == table_encryption::mode::uniform ? "uniform" : "columns ",
                       e.how == table_encryption::mode::columns ? fmt::format("{}", fmt::join(e.columns, ",")) : "",
                       e.ctr ? "AES_GCM_CTR_V1" : "AES_GCM_V1", e.encrypted_footer ? "encrypted" : "plaintext",
                       e.aad_prefix == table_encryption::aad::stored     ? ", AAD prefix stored"
                       : e.aad_prefix == table_encryption::aad::supplied ? ", AAD prefix supplied by readers"
                                                                           : "");
}

std::string key_label(std::string_view key_metadata) {
    auto info = crypto::parse_key_metadata(as_bytes(key_metadata));
    if (!info) return "an unreadable key_metadata";
    if (info->provider == "keyring") return fmt::format("key '{}' of the keyring", info->key_id);
    return fmt::format("{} key '{}'", info->provider == "aws-kms" ? "KMS" : info->provider, info->key_id);
}

namespace {

/// `layout` with no bloom filter on any leaf (DuckDB 1.5 fails the tag of an encrypted column
/// that has one).
std::shared_ptr<const parquet::schema> without_blooms(const parquet::schema& layout) {
    auto root = layout.root();
    auto clear = [](auto& self, parquet::schema_node& n) -> void {
        n.bloom_filter = false;
        for (auto& c : n.children) self(self, c);
    };
    clear(clear, root);
    auto s = parquet::schema::make(std::move(root));
    FLOE_ASSERT(s.has_value(), "a valid schema stays valid without bloom filters");
    return std::make_shared<const parquet::schema>(std::move(*s));
}

/// The entry of `entries` (table_encryption::columns) that leaf `d` is at or below, if any.
std::optional<encrypted_column> listed(const parquet::column_descriptor& d, const std::vector<std::string>& entries) {
    auto path = d.dotted_path();
    for (auto& e : entries) {
        auto c = split_encrypted_column(e);
        auto n = c.name;
        if (path == n || (path.size() > n.size() && path.starts_with(n) && path[n.size()] == '.')) return c;
    }
    return std::nullopt;
}

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

/// Snapshot summary entry of a dead-letter replay's commits.
constexpr const char* replay_summary_key = "floe.dlq-replay";

/// Columns a file holds after Floe's eleven (a typed table's decoded value, a dead-letter
/// table's error columns): fills them for the row whose message columns were just given.
class extra_columns {
public:
    virtual ~extra_columns() = default;
    virtual result<void> write(parquet::file_writer& w) = 0;
};

/// Splits rows by a partition spec's tuple (floe.iceberg.partition-spec), over Floe's columns.
/// Immutable; built from a table version's default spec and current schema.
class partitioner {
public:
    static result<std::shared_ptr<const partitioner>> make(const iceberg::table_metadata& m) {
        auto* spec = m.default_spec();
        auto* schema = m.current_schema();
        if (!spec || !schema) return fail(errc::corrupt, "table has no default spec or current schema");
        return make(spec, schema);
    }

    static result<std::shared_ptr<const partitioner>> make(const iceberg::partition_spec* spec,
                                                           const iceberg::schema* schema) {
        auto p = std::make_shared<partitioner>();
        p->_spec = *spec;
        p->_trivial = spec->fields.size() == 1 && iceberg::stream_key_field(*spec) == 0;
        for (auto& f : spec->fields) {
            auto* src = schema->find(f.source_id);
            if (!src || !src->field_type)
                return fail(errc::invalid_argument, "partition field {}: no source column {}", f.name, f.source_id);
            if (f.source_id < iceberg::field_ids::stream_key || f.source_id > iceberg::field_ids::offset
                || f.source_id == iceberg::field_ids::headers)
                return fail(errc::unsupported,
                            "partition field {}: Floe partitions rows by its own columns only, not by {}", f.name,
                            src->name);
            auto tr = FLOE_TRY_CTX(iceberg::transform::parse(f.transform), "partition field {}", f.name);
            auto rt = FLOE_TRY_CTX(tr.result_type(*src->field_type), "partition field {}", f.name);
            p->_fields.push_back({f.source_id, tr, src->field_type, std::move(rt), f.name});
        }
        p->_has_stream_key = iceberg::stream_key_field(*spec) >= 0;
        return std::shared_ptr<const partitioner>(std::move(p));
    }

    /// The spec is identity(stream_key) alone: one file per stream, as before specs existed.
    bool trivial() const noexcept { return _trivial; }
    bool has_stream_key() const noexcept { return _has_stream_key; }
    int32_t spec_id() const noexcept { return _spec.spec_id; }

    /// The row's partition tuple.
    result<std::vector<avro::datum>> tuple(const parquet::message_row& r) const {
        std::vector<avro::datum> out;
        out.reserve(_fields.size());
        for (auto& f : _fields) out.push_back(FLOE_TRY(f.how.apply(*f.source, source_value(f.source_id, r))));
        return out;
    }

    /// The directory under data/ for a tuple ("message_ts_day=2026-12-03/key_bucket_16=3").
    std::string dir(const std::vector<avro::datum>& t) const {
        std::string out;
        for (size_t i = 0; i < _fields.size(); ++i) {
            if (!out.empty()) out += '/';
            out += partition_dir_name(_fields[i].name, _fields[i].how.human(*_fields[i].result, t[i]));
        }
        return out;
    }

private:
    struct field {
        int32_t source_id;
        iceberg::transform how;
        iceberg::type_ptr source, result;
        std::string name;
    };

    static avro::datum source_value(int32_t id, const parquet::message_row& r) {
        namespace ids = iceberg::field_ids;
        switch (id) {
        case ids::stream_key: return avro::datum::string(r.stream_key);
        case ids::segment_id: return avro::datum::int64(r.segment_id);
        case ids::message_id: return avro::datum::string(r.message_id);
        case ids::message_ts: return avro::datum::int64(r.message_ts);
        case ids::kafka_timestamp: return avro::datum::int64(r.kafka_timestamp);
        case ids::key: return r.key ? avro::datum::bytes(*r.key) : avro::datum::null();
        case ids::value: return r.value ? avro::datum::bytes(*r.value) : avro::datum::null();
        case ids::partition: return avro::datum::int32(r.partition);
        case ids::offset: return avro::datum::int64(r.offset);
        default: return avro::datum::null();
        }
    }

    iceberg::partition_spec _spec;
    std::vector<field> _fields;
    bool _trivial = true;
    bool _has_stream_key = true;
};

/// A Parquet file being written for one stream key (and partition tuple): a local file for
/// file:// warehouses (written in place, fsynced on close), an object_writer elsewhere
/// (published at close).
struct open_file {
    std::string uri;
    std::string stream_key;
    std::vector<avro::datum> partition; ///< the file's partition tuple (non-trivial specs)
    std::string partition_dir;          ///< its directory under data/
    std::unique_ptr<parquet::file_writer> writer;
    /// The writer's first eleven column writers (Floe's message columns), one load each per row.
    std::array<parquet::column_writer*, parquet::message_col::count> cols{};
    /// Encrypted files: the key_metadata of the file's key (also the data file entry's), and
    /// which leaves are encrypted (their bounds stay out of the plaintext manifest).
    std::optional<std::string> key_metadata;
    std::vector<bool> secret;
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

    result<std::unique_ptr<append>> begin_append(const value_decoding& d) override;
    result<std::unique_ptr<append>> begin_rewrite(std::vector<std::string> replaced) override;
    result<std::unique_ptr<file_rewrite>> begin_file_rewrite(std::vector<std::string> replaced) override;
    result<size_t> expire_before(int64_t cutoff_ms) override;
    result<void> set_encryption(const table_encryption& e) override;
    result<void> set_partition_spec(std::string_view text) override;
    const std::string& table_name() const override { return _ident.name; }
    std::string location() const override { return _location; }

    iceberg_lake& lake() { return _lake; }
    const iceberg::table_ident& ident() const { return _ident; }
    const std::string& topic() const { return _topic; }

private:
    iceberg_lake& _lake;
    std::string _topic;
    iceberg::table_ident _ident;
    std::string _location;
    std::mutex _enc_mu;
    std::optional<table_encryption> _enc_set; // what set_encryption last made the table's (cache)
    std::mutex _spec_mu;
    std::optional<std::string> _spec_set; // what set_partition_spec last made the table's (cache)
};

class iceberg_append final : public append {
public:
    /// An append of rows above `base` in files of `layout` (nullptr: Floe's message columns).
    iceberg_append(iceberg_table& table, position_map base, std::shared_ptr<const parquet::schema> layout = nullptr)
        : _table(table), _base(std::move(base)), _layout(std::move(layout)) {}
    /// A rewrite: no position filter, commit replaces `replaced`.
    iceberg_append(iceberg_table& table, std::vector<std::string> replaced,
                   std::shared_ptr<const parquet::schema> layout = nullptr)
        : _table(table), _replaced(std::move(replaced)), _layout(std::move(layout)) {}

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
        if (below_base(row)) {
            ++_skipped;
            return {};
        }
        return add_row(row, nullptr);
    }

    /// True when the row is below the position this append started from (already committed).
    bool below_base(const parquet::message_row& row) {
        if (_base.empty()) return false;
        // Rows come stream by stream: the last stream's position is kept (no key built per row).
        if (row.stream_key != _base_key) {
            _base_key.assign(row.stream_key);
            auto b = _base.find(_base_key);
            _base_pos = b == _base.end() ? INT64_MIN : b->second;
        }
        return row.offset < _base_pos;
    }
    void count_skipped() noexcept { ++_skipped; }

    /// Writes `row` (no position filter), `extra` filling the layout's columns after Floe's.
    result<void> add_row(const parquet::message_row& row, extra_columns* extra) {
        auto key = std::string(row.stream_key);
        // One file per stream and partition tuple: the file key is the stream key, plus the
        // tuple when the spec has more than identity(stream_key) (Floe keeps one stream per
        // file whatever the spec, so every reader knows a file's Kafka partition).
        std::string file_key = key;
        std::vector<avro::datum> tuple;
        if (_part && !_part->trivial()) {
            tuple = FLOE_TRY_CTX(_part->tuple(row), "partitioning offset {} of {}", row.offset, key);
            file_key += '\x1f';
            for (auto& v : tuple) {
                file_key += avro::to_debug_string(v);
                file_key += '\x1f';
            }
        }
        auto& f = _open[file_key];
        // A rewrite writes one file per stream: compaction sized its input by the files' sizes
        // on storage, while the writer's estimate counts open pages and dictionaries raw, which
        // would cut a small target's files far below it (and compact them again every pass).
        if (f && f->writer && !_replaced && f->writer->should_roll()) FLOE_TRY(close_file(*f));
        if (!f || !f->writer) FLOE_TRY(open_new(key, row.segment_id, f, std::move(tuple)));
        // Offsets rise within each file; files of one stream may interleave (the spec splits
        // rows by time or value, and a rewrite takes whole files one after the other).
        auto& last = _last_offset[file_key];
        if (_rows_by_stream[file_key] > 0 && row.offset <= last)
            return fail(errc::invalid_argument, "rows of {} out of order: offset {} after {}", key,
                        row.offset, last);
        last = row.offset;
        if (auto [it, fresh] = _first_offset.try_emplace(key, row.offset); !fresh) it->second = std::min(it->second, row.offset);
        ++_rows_by_stream[file_key];
        ++_rows;
        parquet::add_message_columns(f->cols, row);
        if (extra) FLOE_TRY(extra->write(*f->writer));
        return f->writer->end_row();
    }

    /// Files opened from now on hold `layout` (a typed table's schema evolved): the open ones are
    /// closed first, so each file has one schema.
    result<void> set_layout(std::shared_ptr<const parquet::schema> layout) {
        for (auto& [k, f] : _open)
            if (f && f->writer) FLOE_TRY(close_file(*f));
        _layout = std::move(layout);
        return {};
    }
    /// A dead-letter append: the commit checks that the table's positions of the streams it adds
    /// to are still the ones it started from (its rows may lie below them: a retry after the
    /// main table's commit was lost re-adds none of the rows already there, see typed_append).
    void check_unchanged_positions() noexcept { _check_unchanged = true; }
    /// A rewrite that changes rows (a dead-letter replay): committed as `operation` ("append":
    /// rows moved into the table, "overwrite": rows moved out of it, "delete" when nothing is
    /// added) instead of "replace", with `marker` in the summary; it fails if a snapshot after
    /// sequence number `since` carries the marker (another replay ran meanwhile).
    void as_replay(std::string operation, int64_t since) {
        _replay_op = std::move(operation);
        _replay_since = since;
    }
    int64_t rows() const noexcept { return _rows; }
    const position_map& base() const noexcept { return _base; }
    /// Files opened from now on are encrypted as `e` says (the table's properties).
    void set_encryption(table_encryption e) { _enc = std::move(e); }
    /// Files opened from now on follow the default partition spec of `m` (without this call:
    /// spec 0, identity(stream_key), which every table Floe creates has).
    result<void> set_partitioning(const iceberg::table_metadata& m) {
        _part = FLOE_TRY_CTX(partitioner::make(m), "the partition spec of {}", _table.table_name());
        return {};
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
        req.prepare = [advance, first_rows, unchanged = _check_unchanged, started = _base](
                          const iceberg::table_metadata& base,
                          std::map<std::string, std::string>& summary) -> result<void> {
            position_map pos;
            if (auto* s = base.current_snapshot()) pos = FLOE_TRY(positions_from_summary(s->summary));
            // A concurrent writer may have committed these rows since we started: adding
            // them again would duplicate them. Abort; the caller retries from the new positions.
            for (auto& [k, first] : first_rows) {
                auto it = pos.find(k);
                int64_t now = it == pos.end() ? 0 : it->second;
                auto st = started.find(k);
                int64_t then = st == started.end() ? 0 : st->second;
                if (unchanged ? now != then : first < now)
                    return fail(errc::already_exists,
                                "rows of {} from offset {} were committed concurrently (position now {})",
                                k, first, now);
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
        req.operation = _replay_op.empty() ? "replace" : (_files.empty() && _replay_op == "overwrite") ? "delete" : _replay_op;
        req.add = _files;
        req.remove = *_replaced;
        if (req.add.empty() && req.remove.empty()) {
            _committed = true;
            return out;
        }
        // The same rows, in other files (or rows moved by a replay, which are below the
        // positions): positions move neither way.
        req.prepare = [replay = !_replay_op.empty(), since = _replay_since](
                          const iceberg::table_metadata& base, std::map<std::string, std::string>& summary) -> result<void> {
            if (auto* s = base.current_snapshot())
                if (auto it = s->summary.find(positions_summary_key); it != s->summary.end())
                    summary[positions_summary_key] = it->second;
            if (replay) {
                for (auto& snap : base.snapshots)
                    if (snap.sequence_number > since && snap.summary.contains(replay_summary_key))
                        return fail(errc::conflict, "another dead-letter replay committed (snapshot {})",
                                    snap.snapshot_id);
                summary[replay_summary_key] = "true";
            }
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

    result<void> open_new(const std::string& key, int64_t segment_id, std::unique_ptr<open_file>& slot,
                          std::vector<avro::datum> tuple = {}) {
        auto f = std::make_unique<open_file>();
        f->stream_key = key;
        if (_part && !_part->trivial()) {
            f->partition_dir = _part->dir(tuple);
            f->partition = std::move(tuple);
        } else {
            f->partition_dir = data_dir_name(key);
        }
        f->uri = fmt::format("{}/data/{}/segment-{}-{}.parquet", _table.location(), f->partition_dir,
                             segment_id, uuid::random().to_string());
        // The key first: a provider that is down fails the append before any file exists.
        const auto* layout = _layout ? _layout.get() : &parquet::message_schema();
        auto opts = _table.lake().options().parquet;
        std::shared_ptr<const parquet::schema> plain_layout; // the DuckDB profile's copy, no blooms
        if (_enc.enabled()) {
            auto keys = _table.lake().key_provider();
            if (!keys)
                return fail(errc::invalid_argument,
                            "table {} is encrypted ({}) but this process has no key provider "
                            "(floe.encryption.provider)",
                            _table.table_name(), describe(_enc));
            auto dk = FLOE_TRY_CTX(keys->data_key_for_new_file(_table.table_name()),
                                   "a data key for a new file of {}", _table.table_name());
            if (_enc.duckdb_profile()) {
                plain_layout = without_blooms(*layout);
                layout = plain_layout.get();
                opts.single_page_chunks = true;
            }
            parquet::encryption_config ec;
            ec.algorithm = _enc.ctr ? parquet::cipher_algorithm::aes_gcm_ctr_v1 : parquet::cipher_algorithm::aes_gcm_v1;
            auto kb = dk.key.bytes();
            ec.footer_key.assign(reinterpret_cast<const char*>(kb.data()), kb.size());
            ec.footer_key_metadata.assign(reinterpret_cast<const char*>(dk.key_metadata.data()), dk.key_metadata.size());
            ec.encrypted_footer = _enc.encrypted_footer;
            if (_enc.aad_prefix != table_encryption::aad::none) {
                ec.aad_prefix = aad_prefix_of(_table.ident().ns, _table.ident().name);
                ec.store_aad_prefix = _enc.aad_prefix == table_encryption::aad::stored;
            }
            const auto& leaves = layout->columns();
            f->secret.assign(leaves.size(), false);
            std::map<std::string, parquet::column_encryption_key, std::less<>> own_keys; // by key id, this file's
            for (size_t i = 0; i < leaves.size(); ++i) {
                if (_enc.how == table_encryption::mode::columns) {
                    auto entry = listed(leaves[i], _enc.columns);
                    if (!entry) continue;
                    if (entry->key_id.empty()) {
                        ec.column_keys[leaves[i].dotted_path()] = {ec.footer_key, ec.footer_key_metadata};
                    } else {
                        // A column with its own key: one data key per key id and file.
                        auto it = own_keys.find(entry->key_id);
                        if (it == own_keys.end()) {
                            auto ck = FLOE_TRY_CTX(keys->data_key_under(_table.table_name(), entry->key_id),
                                                   "the key of column {} of table {} (floe.iceberg.encryption.columns)",
                                                   entry->name, _table.table_name());
                            auto b = ck.key.bytes();
                            parquet::column_encryption_key k;
                            k.key.assign(reinterpret_cast<const char*>(b.data()), b.size());
                            k.key_metadata.assign(reinterpret_cast<const char*>(ck.key_metadata.data()),
                                                  ck.key_metadata.size());
                            it = own_keys.emplace(std::string(entry->key_id), std::move(k)).first;
                        }
                        ec.column_keys[leaves[i].dotted_path()] = it->second;
                    }
                    f->secret[i] = true;
                } else {
                    // Uniform: every column is encrypted; the manifest keeps the bounds scan
                    // planning needs (offsets, timestamps, ids), not those of the payload.
                    namespace mc = parquet::message_col;
                    f->secret[i] = i == mc::key || i == mc::value || i == mc::header_key || i == mc::header_value
                                   || i >= mc::count;
                }
            }
            if (_enc.how == table_encryption::mode::columns && ec.column_keys.empty())
                return fail(errc::invalid_argument,
                            "table {}: no column of its files is among floe.iceberg.encryption.columns={} (a file "
                            "would be written with nothing encrypted)",
                            _table.table_name(), fmt::join(_enc.columns, ","));
            f->key_metadata = ec.footer_key_metadata;
            opts.encryption = std::move(ec);
        }
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
        f->writer = FLOE_TRY(parquet::file_writer::open(std::move(sink), *layout, opts));
        for (size_t i = 0; i < f->cols.size(); ++i)
            f->cols[i] = &f->writer->column(i);
        _written.push_back(f->uri);
        slot = std::move(f);
        return {};
    }

    result<void> close_file(open_file& f) {
        auto summary = FLOE_TRY_CTX(f.writer->close(), "closing {}", f.uri);
        f.writer.reset();
        iceberg::data_file df;
        df.file_path = f.uri;
        if (_part && !_part->trivial()) {
            df.partition = f.partition;
            df.spec_id = _part->spec_id();
        } else {
            df.partition = {avro::datum::string(f.stream_key)};
            df.spec_id = _part ? _part->spec_id() : 0;
        }
        df.record_count = summary.row_count;
        df.file_size_in_bytes = static_cast<int64_t>(summary.file_size);
        df.split_offsets = summary.split_offsets;
        df.sort_order_id = 1;
        df.key_metadata = f.key_metadata;
        const auto& leaves = (_layout ? *_layout : parquet::message_schema()).columns();
        for (size_t i = 0; i < summary.columns.size(); ++i) {
            auto& c = summary.columns[i];
            if (!c.field_id) continue;
            int32_t id = *c.field_id;
            df.column_sizes[id] = c.compressed_size;
            df.value_counts[id] = c.num_values;
            df.null_value_counts[id] = c.null_count;
            // Iceberg keeps no bounds for fields inside lists and maps; Parquet plain bytes equal
            // Iceberg's single-value serialization for every type but decimals (Iceberg: big-endian
            // unscaled bytes; Parquet: little-endian int32/int64 or fixed) and int96: no bounds
            // for those.
            if (c.repeated) continue;
            if (i < f.secret.size() && f.secret[i]) continue; // encrypted: no plaintext bounds
            if (i < leaves.size() && (leaves[i].logical == parquet::logical_type::decimal
                                      || leaves[i].type == parquet::physical_type::int96))
                continue;
            if (c.min_value) df.lower_bounds[id] = *c.min_value;
            if (c.max_value) df.upper_bounds[id] = *c.max_value;
        }
        if (_part && !_part->has_stream_key()) {
            // The file's stream key, for readers, when the spec does not carry it: exact bounds
            // (the Parquet statistics cut strings at 64 bytes), kept even when the column is
            // encrypted (it names a Kafka partition, nothing of the payload).
            df.lower_bounds[iceberg::field_ids::stream_key] = f.stream_key;
            df.upper_bounds[iceberg::field_ids::stream_key] = f.stream_key;
        }
        _bytes += summary.file_size;
        _files.push_back(std::move(df));
        return {};
    }

    iceberg_table& _table;
    position_map _base;
    std::optional<std::vector<std::string>> _replaced;
    std::string _base_key; // below_base(): the stream last asked about, and its position
    int64_t _base_pos = INT64_MIN;
    std::shared_ptr<const parquet::schema> _layout; // nullptr: parquet::message_schema()
    bool _check_unchanged = false;
    std::string _replay_op;
    int64_t _replay_since = 0;
    table_encryption _enc;
    std::shared_ptr<const partitioner> _part; // nullptr: spec 0, identity(stream_key)
    std::map<std::string, std::unique_ptr<open_file>> _open;
    std::map<std::string, int64_t> _last_offset, _rows_by_stream, _first_offset;
    std::vector<iceberg::data_file> _files;
    std::vector<std::string> _written;
    int64_t _rows = 0, _skipped = 0;
    uint64_t _bytes = 0;
    bool _committed = false;
};

/// Adds the schema a codec evolved to the table and makes it current, unless another writer
/// changed the schema since `started` (then the caller fails and is retried on the new one).
result<void> commit_evolved_schema(iceberg_table& table, const value_codec& codec, int32_t started) {
    auto& lake = table.lake();
    const auto& next = codec.table_schema();
    const int32_t last_id = codec.last_column_id();
    auto r = iceberg::commit_metadata(
        lake.catalog(), lake.io(), table.ident(),
        [&](iceberg::table_metadata& m) -> result<bool> {
            if (m.current_schema_id != started)
                return fail(errc::conflict, "the schema of {} changed concurrently (schema {} is now current)",
                            table.table_name(), m.current_schema_id);
            auto s = next;
            s.schema_id = 0;
            for (auto& have : m.schemas) s.schema_id = std::max(s.schema_id, have.schema_id + 1);
            m.schemas.push_back(std::move(s));
            m.current_schema_id = m.schemas.back().schema_id;
            m.last_column_id = std::max(m.last_column_id, last_id);
            return true;
        },
        lake.options().commit);
    FLOE_TRY_CTX(std::move(r), "updating the schema of {}", table.table_name());
    spdlog::info("typed table {}: schema evolved (last column id {})", table.table_name(), last_id);
    return {};
}

/// Writes a dead-letter row's error columns (after Floe's eleven).
class dead_letter_columns final : public extra_columns {
public:
    explicit dead_letter_columns(const dead_letter& d) : _d(d) {}
    result<void> write(parquet::file_writer& w) override {
        constexpr size_t first = parquet::message_col::count;
        w.column(first).add_bytes(_d.reason);
        if (_d.detail.empty()) w.column(first + 1).add_null(0);
        else w.column(first + 1).add_bytes(_d.detail);
        if (_d.schema_id) w.column(first + 2).add_i32(*_d.schema_id);
        else w.column(first + 2).add_null(0);
        return {};
    }

private:
    const dead_letter& _d;
};

/// The decoded value's columns, from the codec that accepted it.
class typed_columns final : public extra_columns {
public:
    explicit typed_columns(value_codec& c) : _c(c) {}
    result<void> write(parquet::file_writer& w) override {
        _c.write(w);
        return {};
    }

private:
    value_codec& _c;
};

/// An append to a typed table: each record becomes a typed row of the table, or a row of its
/// dead-letter table `<table>_dlq` (raw columns and the reason), never both.
///
/// Exactly once across the two tables: the dead-letter table keeps committed positions of its
/// own, and commits first; the main table commits second, after a schema update if the values
/// needed one. A retry after a crash between the two commits finds the dead-letter table ahead
/// (its position above the main table's) and reads which offsets of that range it holds: those
/// rows are not written again, the others go to the main table whatever they decode to now
/// (a record that now fails goes to the dead-letter table, which holds no row of it).
class typed_append final : public append {
public:
    typed_append(iceberg_table& table, std::unique_ptr<iceberg_append> rows, std::unique_ptr<value_codec> codec,
                 position_map dlq_base, std::map<std::string, std::set<int64_t>> in_dlq, int32_t started_schema_id,
                 table_encryption enc)
        : _table(table), _rows(std::move(rows)), _codec(std::move(codec)), _dlq_base(std::move(dlq_base)),
          _in_dlq(std::move(in_dlq)), _started_schema_id(started_schema_id),
          _layout_version(_codec->layout_version()), _enc(std::move(enc)) {}

    result<void> add(const parquet::message_row& row) override {
        if (_rows->below_base(row)) {
            _rows->count_skipped();
            return {};
        }
        if (!_in_dlq.empty()) {
            auto it = _in_dlq.find(std::string(row.stream_key));
            if (it != _in_dlq.end() && it->second.contains(row.offset)) {
                _rows->count_skipped();
                return {}; // the dead-letter table committed it before the main table's commit was lost
            }
        }
        auto dead = FLOE_TRY(_codec->decode(row.value, row.key));
        if (dead) return add_dead(row, *dead);
        if (_codec->layout_version() != _layout_version) {
            FLOE_TRY(_rows->set_layout(_codec->layout()));
            _layout_version = _codec->layout_version();
        }
        typed_columns cols(*_codec);
        return _rows->add_row(row, &cols);
    }

    result<commit_result> commit(const position_map& advance) override {
        int64_t dead_rows = 0;
        if (_dlq) {
            dead_rows = _dlq->rows();
            FLOE_TRY_CTX(_dlq->commit(advance), "committing {} row(s) to the dead-letter table of {}", dead_rows,
                         _table.table_name());
        }
        if (_codec->evolved()) FLOE_TRY(commit_evolved_schema(_table, *_codec, _started_schema_id));
        auto out = FLOE_TRY(_rows->commit(advance));
        out.dead_letter_rows = dead_rows;
        return out;
    }

    std::vector<std::string> written_files() const override {
        auto out = _rows->written_files();
        if (_dlq)
            for (auto& f : _dlq->written_files()) out.push_back(f);
        return out;
    }

private:
    result<void> add_dead(const parquet::message_row& row, const dead_letter& d) {
        if (!_dlq) FLOE_TRY(open_dlq());
        static auto& dead = metrics::registry::instance().counter_family(
            "floe_lake_dead_letter_records_total",
            "Records written to a typed table's dead-letter table, by topic and reason.", {"topic", "reason"});
        dead.with({_table.topic(), d.reason}).inc();
        if (_logged_reasons.insert(d.reason).second)
            spdlog::warn("typed table {}: offset {} of {} goes to {} ({}: {}); this append sends every such record "
                         "there (floe_lake_dead_letter_records_total counts them; after a fix, `floe dlq replay "
                         "--topic {}` moves those that decode then)",
                         _table.table_name(), row.offset, row.stream_key, dlq_table_name(_table.table_name()), d.reason,
                         d.detail, _table.topic());
        dead_letter_columns cols(d);
        return _dlq->add_row(row, &cols);
    }

    result<void> open_dlq() {
        auto& lake = _table.lake();
        iceberg::table_ident ident{_table.ident().ns, dlq_table_name(_table.ident().name)};
        auto location = fmt::format("{}/{}/{}", lake.options().warehouse, ident.ns, ident.name);
        auto t = FLOE_TRY_CTX(iceberg::create_table_if_missing(lake.catalog(), lake.io(), ident, location,
                                                               {{"floe.dead-letter-of", _table.topic()}},
                                                               iceberg::floe_dlq_table_schema()),
                              "opening the dead-letter table of {}", _table.topic());
        auto owner = t.metadata.properties.find("floe.dead-letter-of");
        if (owner == t.metadata.properties.end() || owner->second != _table.topic())
            return fail(errc::already_exists,
                        "table {}.{} is not the dead-letter table of topic {} (it has no floe.dead-letter-of={}); "
                        "rename the topic whose table it is",
                        ident.ns, ident.name, _table.topic(), _table.topic());
        // The main table names it before any dead letter is committed: a reader of the topic's
        // offsets (Kafka, lookups) then reads both tables, so a record the local tier trims after
        // the main table's commit is always found in one of them.
        auto named = iceberg::commit_metadata(
            lake.catalog(), lake.io(), _table.ident(),
            [&](iceberg::table_metadata& m) -> result<bool> {
                auto& p = m.properties[dead_letter_table_property];
                if (p == ident.name) return false;
                p = ident.name;
                return true;
            },
            lake.options().commit);
        FLOE_TRY_CTX(std::move(named), "naming the dead-letter table in {}", _table.table_name());
        _dlq_table = std::make_unique<iceberg_table>(lake, _table.topic(), ident, t.metadata.location);
        _dlq = std::make_unique<iceberg_append>(*_dlq_table, _dlq_base, dlq_layout());
        _dlq->check_unchanged_positions();
        _dlq->set_encryption(_enc); // the dead letters hold the same keys and values
        return {};
    }

    iceberg_table& _table;
    std::unique_ptr<iceberg_append> _rows;
    std::unique_ptr<value_codec> _codec;
    position_map _dlq_base;
    std::map<std::string, std::set<int64_t>> _in_dlq;
    int32_t _started_schema_id;
    uint64_t _layout_version;
    std::unique_ptr<iceberg_table> _dlq_table;
    std::unique_ptr<iceberg_append> _dlq;
    std::set<std::string> _logged_reasons;
    table_encryption _enc;
};

result<std::unique_ptr<append>> iceberg_table::begin_append(const value_decoding& d) {
    if (!d.typed()) {
        auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
        position_map base;
        if (auto* snap = t.metadata.current_snapshot())
            base = FLOE_TRY_CTX(positions_from_summary(snap->summary), "table {}.{} ({})", _ident.ns, _ident.name,
                                t.metadata_location);
        auto app = std::make_unique<iceberg_append>(*this, std::move(base));
        app->set_encryption(FLOE_TRY_CTX(encryption_from_properties(t.metadata.properties), "table {}", _ident.name));
        FLOE_TRY(app->set_partitioning(t.metadata));
        return std::unique_ptr<append>(std::move(app));
    }
    auto registry = _lake.registry();
    if (!registry)
        return fail(errc::invalid_argument,
                    "topic {} is typed (floe.iceberg.mode) but the schema registry is off "
                    "(floe.schema-registry.enabled=false): turn it on, or set floe.iceberg.mode=raw",
                    _topic);
    auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
    position_map base;
    if (auto* snap = t.metadata.current_snapshot())
        base = FLOE_TRY_CTX(positions_from_summary(snap->summary), "table {}.{}", _ident.ns, _ident.name);
    const auto* current = t.metadata.current_schema();
    if (!current) return fail(errc::corrupt, "table {}.{} has no current schema", _ident.ns, _ident.name);
    auto codec = FLOE_TRY(value_codec::make(*registry, d, *current, t.metadata.last_column_id));

    // The dead-letter table's positions, and what it holds above the main table's (a retry).
    position_map dlq_base;
    std::map<std::string, std::set<int64_t>> in_dlq;
    iceberg::table_ident dlq{_ident.ns, dlq_table_name(_ident.name)};
    if (auto loc = FLOE_TRY(_lake.catalog().metadata_location(dlq)); loc) {
        auto dt = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), dlq));
        if (auto* snap = dt.metadata.current_snapshot())
            dlq_base = FLOE_TRY_CTX(positions_from_summary(snap->summary), "table {}.{}", dlq.ns, dlq.name);
        table_reader reader(_lake, _topic, dlq.name);
        for (auto& [key, dpos] : dlq_base) {
            auto m = base.find(key);
            int64_t mpos = m == base.end() ? 0 : m->second;
            if (dpos <= mpos) continue;
            auto& held = in_dlq[key];
            for (auto& f : FLOE_TRY(reader.files_for_offsets(key, mpos, dpos))) {
                auto rows = FLOE_TRY_CTX(reader.read_file(f), "reading dead-letter file {}", f.uri);
                for (auto& r : rows)
                    if (r.offset >= mpos && r.offset < dpos) held.insert(r.offset);
            }
            spdlog::info("typed table {}: the dead-letter table is ahead for {} ({} > {}): {} of those records are "
                         "there already and are not written again",
                         _ident.name, key, dpos, mpos, held.size());
        }
    }
    auto layout = codec->layout();
    auto enc = FLOE_TRY_CTX(encryption_from_properties(t.metadata.properties), "table {}", _ident.name);
    auto rows = std::make_unique<iceberg_append>(*this, std::move(base), layout);
    rows->set_encryption(enc);
    FLOE_TRY(rows->set_partitioning(t.metadata));
    return std::unique_ptr<append>(std::make_unique<typed_append>(*this, std::move(rows), std::move(codec),
                                                                  std::move(dlq_base), std::move(in_dlq),
                                                                  current->schema_id, std::move(enc)));
}

/// A dead-letter row read back, and its fate in a replay.
struct dead_row {
    parquet::message_record rec;
    std::optional<dead_letter> still; ///< why it stays (set after decoding)
};

} // namespace

result<replay_report> replay_dead_letters(iceberg_lake& lake, const std::string& topic, const value_decoding& d) {
    replay_report out;
    if (!d.typed())
        return fail(errc::invalid_argument, "topic {} is not typed (floe.iceberg.mode=raw): nothing decodes its values",
                    topic);
    auto registry = lake.registry();
    if (!registry) return fail(errc::invalid_argument, "the schema registry is off: dead letters cannot be decoded");
    auto tw = FLOE_TRY(lake.table_for_topic(topic));
    auto& table = static_cast<iceberg_table&>(*tw);
    iceberg::table_ident dlq{table.ident().ns, dlq_table_name(table.ident().name)};
    if (!FLOE_TRY(lake.catalog().metadata_location(dlq))) return out;
    auto main_meta = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), table.ident()));
    position_map positions;
    if (auto* snap = main_meta.metadata.current_snapshot())
        positions = FLOE_TRY(positions_from_summary(snap->summary));
    const auto* current = main_meta.metadata.current_schema();
    if (!current) return fail(errc::corrupt, "table {} has no current schema", table.table_name());
    auto dlq_meta = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), dlq));
    const int64_t main_seq = main_meta.metadata.last_sequence_number;
    const int64_t dlq_seq = dlq_meta.metadata.last_sequence_number;

    // The dead letters below the main table's positions (rows at or above one belong to an
    // offload that has not committed the main table yet: their files wait for the next replay).
    table_reader dlq_reader(lake, topic, dlq.name);
    std::vector<std::string> taken;
    std::map<std::string, std::vector<dead_row>> rows;
    for (auto& f : FLOE_TRY(dlq_reader.files())) {
        auto recs = FLOE_TRY_CTX(dlq_reader.read_file(f), "reading dead-letter file {}", f.uri);
        auto pos = positions.find(f.stream_key);
        bool pending = std::any_of(recs.begin(), recs.end(), [&](auto& r) {
            return pos == positions.end() || r.offset >= pos->second;
        });
        if (pending) {
            ++out.files_waiting;
            continue;
        }
        taken.push_back(f.uri);
        for (auto& r : recs) rows[r.stream_key].push_back({std::move(r), std::nullopt});
    }
    out.files = taken.size();
    if (taken.empty()) return out;

    // Offsets the main table holds already (a replay that crashed between its two commits).
    table_reader main_reader(lake, topic, table.table_name()); // the main table alone
    std::map<std::string, std::set<int64_t>> in_main;
    for (auto& [key, list] : rows) {
        std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.rec.offset < b.rec.offset; });
        auto& held = in_main[key];
        for (auto& f : FLOE_TRY(main_reader.files_for_offsets(key, list.front().rec.offset, list.back().rec.offset + 1)))
            for (auto& r : FLOE_TRY_CTX(main_reader.read_file(f), "reading {}", f.uri)) held.insert(r.offset);
    }

    // Decode again; what decodes now goes to the main table (below its positions, which stay).
    auto codec = FLOE_TRY(value_codec::make(*registry, d, *current, main_meta.metadata.last_column_id));
    auto enc = FLOE_TRY_CTX(encryption_from_properties(main_meta.metadata.properties), "table {}", table.table_name());
    auto moved = std::make_unique<iceberg_append>(table, std::vector<std::string>{}, codec->layout());
    FLOE_TRY(moved->set_partitioning(main_meta.metadata));
    moved->as_replay("append", main_seq);
    moved->set_encryption(enc);
    uint64_t layout_version = codec->layout_version();
    std::vector<parquet::message_header_view> headers;
    for (auto& [key, list] : rows)
        for (auto& r : list) {
            if (in_main[key].contains(r.rec.offset)) {
                ++out.already_in_main;
                continue;
            }
            auto as_view = [](const std::optional<std::string>& s) {
                return s ? std::optional<std::string_view>(*s) : std::nullopt;
            };
            auto dead = FLOE_TRY(codec->decode(as_view(r.rec.value), as_view(r.rec.key)));
            if (dead) {
                r.still = std::move(*dead);
                continue;
            }
            if (codec->layout_version() != layout_version) {
                FLOE_TRY(moved->set_layout(codec->layout()));
                layout_version = codec->layout_version();
            }
            typed_columns cols(*codec);
            FLOE_TRY(moved->add_row(row_of(r.rec, headers), &cols));
            in_main[key].insert(r.rec.offset);
            ++out.replayed;
        }
    if (codec->evolved()) FLOE_TRY(commit_evolved_schema(table, *codec, current->schema_id));
    if (out.replayed > 0)
        FLOE_TRY_CTX(moved->commit({}), "committing {} replayed row(s) to {}", out.replayed, table.table_name());

    // The dead-letter files taken are replaced by the rows that stay (none of them in the main
    // table, which was read again above: exactly one of the two tables holds each record).
    iceberg_table dlq_table(lake, topic, dlq, dlq_meta.metadata.location);
    auto rest = std::make_unique<iceberg_append>(dlq_table, taken, dlq_layout());
    rest->as_replay("overwrite", dlq_seq);
    rest->set_encryption(enc);
    for (auto& [key, list] : rows)
        for (auto& r : list) {
            if (in_main[key].contains(r.rec.offset)) continue;
            FLOE_ASSERT(r.still.has_value(), "a row not in the main table was refused again");
            dead_letter_columns cols(*r.still);
            FLOE_TRY(rest->add_row(row_of(r.rec, headers), &cols));
            ++out.still_dead;
            ++out.reasons[r.still->reason];
        }
    FLOE_TRY_CTX(rest->commit({}), "rewriting the dead-letter table {}", dlq.name);
    spdlog::info("dead-letter replay of {}: {} row(s) moved to {}, {} stay in {} ({} already there, {} file(s) "
                 "waiting for their offload)",
                 topic, out.replayed, table.table_name(), out.still_dead, dlq.name, out.already_in_main,
                 out.files_waiting);
    return out;
}

namespace {

result<std::unique_ptr<append>> iceberg_table::begin_rewrite(std::vector<std::string> replaced) {
    // The new files are encrypted as the table's properties say now (compaction of an
    // encrypted table writes encrypted files; of a table whose encryption changed, the new way).
    auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
    auto app = std::make_unique<iceberg_append>(*this, std::move(replaced));
    app->set_encryption(FLOE_TRY_CTX(encryption_from_properties(t.metadata.properties), "table {}", _ident.name));
    FLOE_TRY(app->set_partitioning(t.metadata));
    return std::unique_ptr<append>(std::move(app));
}

/// The columns after Floe's of one file, copied row by row (column_copy).
class copied_columns final : public extra_columns {
public:
    explicit copied_columns(column_copy& c) : _c(c) {}
    result<void> write(parquet::file_writer& w) override { return _c.write_row(w); }

private:
    column_copy& _c;
};

/// Compaction's and re-encryption's rewrite: files read whole (Floe's columns as records, the
/// others leaf by leaf) and written into files of the table's current layout.
class copying_rewrite final : public file_rewrite {
public:
    copying_rewrite(iceberg_table& table, std::unique_ptr<iceberg_append> out,
                    std::shared_ptr<const parquet::schema> layout)
        : _out(std::move(out)), _layout(std::move(layout)),
          _reader(table.lake(), table.topic(), table.table_name()),
          _aad_prefix(aad_prefix_of(table.ident().ns, table.ident().name)) {}

    result<void> add_file(const planned_file& given) override {
        byte_buffer storage;
        // The rewritten files are this table's (maintenance lists them from its manifests).
        planned_file f = given;
        if (f.aad_prefix.empty()) f.aad_prefix = _aad_prefix;
        auto in = FLOE_TRY(_reader.open_file(f, storage));
        auto copy = FLOE_TRY_CTX(column_copy::make(in.file().file_schema(), *_layout, parquet::message_col::count),
                                 "copying data file {} into the table's current schema", f.uri);
        copied_columns extra(copy);
        std::vector<parquet::message_record> rows;
        std::vector<parquet::message_header_view> headers;
        for (size_t rg = 0;; ++rg) {
            rows.clear();
            if (!FLOE_TRY_CTX(in.next_row_group(rows), "reading data file {}{}", f.uri, _reader.key_note(f))) break;
            FLOE_TRY_CTX(copy.load(in.file(), rg), "reading data file {}{}", f.uri, _reader.key_note(f));
            for (auto& r : rows) FLOE_TRY_CTX(_out->add_row(row_of(r, headers), &extra), "copying {}", f.uri);
        }
        return {};
    }
    result<commit_result> commit() override { return _out->commit({}); }
    std::vector<std::string> written_files() const override { return _out->written_files(); }

private:
    std::unique_ptr<iceberg_append> _out;
    std::shared_ptr<const parquet::schema> _layout;
    table_reader _reader;
    std::string _aad_prefix;
};

result<std::unique_ptr<file_rewrite>> iceberg_table::begin_file_rewrite(std::vector<std::string> replaced) {
    auto t = FLOE_TRY(iceberg::load_table(_lake.catalog(), _lake.io(), _ident));
    const auto* current = t.metadata.current_schema();
    if (!current) return fail(errc::corrupt, "table {}.{} has no current schema", _ident.ns, _ident.name);
    auto layout = FLOE_TRY_CTX(table_layout(*current), "table {}", _ident.name);
    auto app = std::make_unique<iceberg_append>(*this, std::move(replaced), layout);
    FLOE_TRY(app->set_partitioning(t.metadata));
    // Dead letters are encrypted as their main table says (they hold the same keys and values).
    auto props = t.metadata.properties;
    if (props.contains("floe.dead-letter-of")) {
        iceberg::table_ident main{_ident.ns, table_name_for_topic(_topic)};
        props = FLOE_TRY_CTX(iceberg::load_table(_lake.catalog(), _lake.io(), main), "the table whose dead letters {} holds",
                             _ident.name)
                    .metadata.properties;
    }
    app->set_encryption(FLOE_TRY_CTX(encryption_from_properties(props), "table {}", _ident.name));
    return std::unique_ptr<file_rewrite>(std::make_unique<copying_rewrite>(*this, std::move(app), std::move(layout)));
}

result<void> iceberg_table::set_partition_spec(std::string_view text) {
    std::lock_guard g(_spec_mu);
    if (_spec_set && *_spec_set == text) return {};
    auto terms = FLOE_TRY(parse_partition_spec_text(text));
    std::string what;
    auto r = iceberg::commit_metadata(
        _lake.catalog(), _lake.io(), _ident,
        [&](iceberg::table_metadata& m) -> result<bool> {
            auto* schema = m.current_schema();
            if (!schema) return fail(errc::corrupt, "table {} has no current schema", _ident.name);
            auto spec = FLOE_TRY(iceberg::build_partition_spec(*schema, terms, m.partition_specs, m.last_partition_id));
            // Checked before it becomes the default: Floe writes rows by its own columns only.
            FLOE_TRY(partitioner::make(&spec, schema));
            if (auto* same = iceberg::find_same_spec(m.partition_specs, spec)) {
                if (m.default_spec_id == same->spec_id) return false;
                m.default_spec_id = same->spec_id;
                what = fmt::format("spec {} again", same->spec_id);
                return true;
            }
            for (auto& f : spec.fields) m.last_partition_id = std::max(m.last_partition_id, f.field_id);
            what = fmt::format("new spec {}", spec.spec_id);
            m.default_spec_id = spec.spec_id;
            m.partition_specs.push_back(std::move(spec));
            return true;
        },
        _lake.options().commit);
    auto done = FLOE_TRY_CTX(std::move(r), "setting the partition spec of {} to {}", _ident.name, text);
    if (done) spdlog::info("table {}: partitioned by {} from now on ({}; files already there keep their spec)",
                           _ident.name, text, what);
    _spec_set = std::string(text);
    return {};
}

result<void> iceberg_table::set_encryption(const table_encryption& e) {
    std::lock_guard g(_enc_mu);
    if (_enc_set && *_enc_set == e) return {};
    auto r = iceberg::commit_metadata(
        _lake.catalog(), _lake.io(), _ident,
        [&](iceberg::table_metadata& m) -> result<bool> { return encryption_to_properties(e, m.properties); },
        _lake.options().commit);
    auto done = FLOE_TRY_CTX(std::move(r), "setting the encryption of {} to {}", _ident.name, describe(e));
    if (done) spdlog::info("table {}: data files from now on encrypted: {}", _ident.name, describe(e));
    _enc_set = e;
    return {};
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
        auto stream = iceberg::file_stream_key(e.file, t.metadata.partition_specs);
        if (!stream || !is_stream_key_of(_topic, *stream)) continue;
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

void iceberg_lake::set_registry(std::shared_ptr<schema::registry_client> r) {
    std::lock_guard g(_mu);
    _registry = std::move(r);
}

std::shared_ptr<schema::registry_client> iceberg_lake::registry() const {
    std::lock_guard g(_mu);
    return _registry;
}

void iceberg_lake::set_key_provider(std::shared_ptr<crypto::key_provider> p) {
    std::lock_guard g(_mu);
    _keys = std::move(p);
}

std::shared_ptr<crypto::key_provider> iceberg_lake::key_provider() const {
    std::lock_guard g(_mu);
    return _keys;
}

parquet::reader_options iceberg_lake::reader_options_for(const std::string& uri, const std::string& aad_prefix) const {
    parquet::reader_options ro;
    auto keys = key_provider();
    if (!keys) return ro; // an encrypted file then fails naming what it lacks (open_file adds the key)
    parquet::decryption_config dc;
    dc.retriever = [keys](std::string_view key_metadata) -> result<std::string> {
        auto k = keys->key_for(as_bytes(key_metadata));
        if (!k) {
            // A key the provider does not have is "unavailable" to a reader, not "not found":
            // the rows exist and read again once the key is back (readers take not_found for a
            // file that compaction removed, and plan again).
            auto code = k.error().code() == errc::not_found ? errc::unavailable : k.error().code();
            return fail(code, "{} is not available: {}", key_label(key_metadata), k.error().message());
        }
        auto b = k->bytes();
        return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    };
    if (!aad_prefix.empty()) {
        dc.aad_prefix = aad_prefix;
        dc.aad_prefix_if_used = true;
    }
    ro.decryption = std::move(dc);
    return ro;
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

result<std::shared_ptr<table_writer>> iceberg_lake::dead_letter_table(const std::string& topic) {
    iceberg::table_ident ident{_opts.ns, dlq_table_name(table_name_for_topic(topic))};
    auto loc = FLOE_TRY(_cat->metadata_location(ident));
    if (!loc) return std::shared_ptr<table_writer>();
    auto t = FLOE_TRY_CTX(iceberg::load_table(*_cat, *_io, ident), "opening the dead-letter table of {}", topic);
    auto owner = t.metadata.properties.find("floe.dead-letter-of");
    if (owner == t.metadata.properties.end() || owner->second != topic)
        return fail(errc::already_exists, "table {}.{} is not the dead-letter table of topic {} (no floe.dead-letter-of={})",
                    ident.ns, ident.name, topic, topic);
    return std::shared_ptr<table_writer>(std::make_shared<iceberg_table>(*this, topic, ident, t.metadata.location));
}

result<current_files> current_data_files(iceberg::catalog& cat, iceberg::file_io& io, const iceberg::table_ident& t) {
    auto loaded = FLOE_TRY(iceberg::load_table(cat, io, t));
    current_files out;
    out.metadata_location = loaded.metadata_location;
    out.snapshot_id = loaded.metadata.current_snapshot_id;
    out.specs = loaded.metadata.partition_specs;
    if (!loaded.metadata.current_snapshot()) return out;
    auto entries = FLOE_TRY(iceberg::live_files(io, loaded.metadata));
    out.files.reserve(entries.size());
    for (auto& e : entries)
        if (e.file.content == iceberg::file_content::data) out.files.push_back(std::move(e.file));
    return out;
}

result<int64_t> dead_letter_records(iceberg_lake& lake, const std::string& topic) {
    iceberg::table_ident t{lake.options().ns, dlq_table_name(table_name_for_topic(topic))};
    if (!FLOE_TRY(lake.catalog().metadata_location(t))) return int64_t(0);
    auto loaded = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), t));
    auto* snap = loaded.metadata.current_snapshot();
    if (!snap) return int64_t(0);
    auto it = snap->summary.find("total-records");
    if (it == snap->summary.end()) return int64_t(0);
    int64_t n = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
    if (ec != std::errc()) return fail(errc::corrupt, "{}.{}: total-records '{}' is not a number", t.ns, t.name, it->second);
    return n;
}

std::string readable_path(std::string_view uri) {
    if (uri.starts_with("file:"))
        if (auto p = iceberg::local_path(uri)) return *p;
    return std::string(uri);
}

} // namespace floe::lake
