#include "format/parquet/reader.h"

#include "format/parquet/bloom_filter.h"
#include "format/parquet/encoding.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace floe::parquet {

namespace {
constexpr uint8_t magic[4] = {'P', 'A', 'R', '1'};

bool bytes_less(std::string_view a, std::string_view b) noexcept {
    size_t n = std::min(a.size(), b.size());
    int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
    return c < 0 || (c == 0 && a.size() < b.size());
}
} // namespace

result<std::unique_ptr<file_reader>> file_reader::open(std::unique_ptr<input_source> src,
                                                       reader_options opts) {
    if (!src) return fail(errc::invalid_argument, "parquet reader: no source");
    std::unique_ptr<file_reader> r(new file_reader(std::move(src), opts));
    FLOE_TRY_CTX(r->load_footer(), "{}", r->name());
    return r;
}

result<std::unique_ptr<file_reader>> file_reader::open_file(const std::string& path,
                                                            reader_options opts) {
    auto src = FLOE_TRY(open_file_source(path));
    return open(std::move(src), opts);
}

result<void> file_reader::load_footer() {
    _size = FLOE_TRY(_src->size());
    if (_size < 12) return fail(errc::corrupt, "not a Parquet file: {} bytes is too small", _size);
    FLOE_TRY(_src->read_at(0, 4, _buf));
    if (std::memcmp(_buf.data(), magic, 4) != 0)
        return fail(errc::corrupt, "not a Parquet file: bad magic at start");
    FLOE_TRY(_src->read_at(_size - 8, 8, _buf));
    if (std::memcmp(_buf.data() + 4, magic, 4) != 0)
        return fail(errc::corrupt, "not a Parquet file or truncated: bad magic at end");
    uint32_t len;
    std::memcpy(&len, _buf.data(), 4);
    if (len == 0 || len > _size - 12)
        return fail(errc::corrupt, "footer length {} does not fit in a file of {} bytes", len,
                    _size);
    if (len > _opts.max_footer_size)
        return fail(errc::corrupt, "footer length {} exceeds the limit of {}", len,
                    _opts.max_footer_size);
    FLOE_TRY(_src->read_at(_size - 8 - len, len, _buf));
    _meta = FLOE_TRY_CTX(decode_file_metadata(_buf), "footer");
    _schema = FLOE_TRY_CTX(schema::from_elements(_meta.schema), "footer schema");
    size_t ncols = _schema.columns().size();
    int64_t rows = 0;
    for (size_t i = 0; i < _meta.row_groups.size(); ++i) {
        auto& rg = _meta.row_groups[i];
        if (rg.columns.size() != ncols)
            return fail(errc::corrupt, "row group {} has {} column chunks, the schema {} columns",
                        i, rg.columns.size(), ncols);
        if (rg.num_rows < 0) return fail(errc::corrupt, "row group {} has {} rows", i, rg.num_rows);
        rows += rg.num_rows;
        for (size_t c = 0; c < ncols; ++c) {
            auto& cc = rg.columns[c];
            if (!cc.meta_data)
                return fail(errc::corrupt, "row group {} column {} has no metadata", i, c);
            auto& m = *cc.meta_data;
            if (m.num_values > _opts.max_chunk_values)
                return fail(errc::corrupt,
                            "row group {} column {}: {} values exceed the limit of {}", i, c,
                            m.num_values, _opts.max_chunk_values);
            if (m.type != _schema.columns()[c].type)
                return fail(errc::corrupt,
                            "row group {} column {}: type {} differs from the schema's", i, c,
                            static_cast<int>(m.type));
            int64_t start = m.dictionary_page_offset.value_or(m.data_page_offset);
            if (m.dictionary_page_offset && *m.dictionary_page_offset > m.data_page_offset)
                start = m.data_page_offset;
            if (start < 4 || m.total_compressed_size < 0 || m.num_values < 0
                || static_cast<uint64_t>(start) > _size
                || static_cast<uint64_t>(m.total_compressed_size)
                       > _size - static_cast<uint64_t>(start))
                return fail(errc::corrupt,
                            "row group {} column {}: chunk at {} of {} bytes lies outside the file",
                            i, _schema.columns()[c].dotted_path(), start, m.total_compressed_size);
        }
    }
    if (rows != _meta.num_rows)
        return fail(errc::corrupt, "row groups hold {} rows, the footer says {}", rows,
                    _meta.num_rows);
    return {};
}

result<void> file_reader::decode_page_values(const column_descriptor& d, const page_header& ph,
                                             bytes_view page,
                                             const std::vector<std::string_view>& dict,
                                             column_data& out) {
    const auto& dh = *ph.data;
    // RLE runs can claim any count in a few bytes: bound what the page may make us allocate.
    if (dh.num_values < 0 || static_cast<uint32_t>(dh.num_values) > _opts.max_page_values)
        return fail(errc::corrupt, "page with {} values", dh.num_values);
    size_t n = static_cast<size_t>(dh.num_values);
    byte_reader r(page);
    auto read_levels = [&](std::vector<uint8_t>& lv, int16_t max) -> result<void> {
        uint32_t len = FLOE_TRY(r.le<uint32_t>());
        auto b = FLOE_TRY(r.bytes(len));
        std::vector<uint32_t> tmp(n);
        rle_decoder dec(b, bit_width_of(static_cast<uint64_t>(max)));
        FLOE_TRY(dec.get(tmp.data(), n));
        for (uint32_t v : tmp) {
            if (v > static_cast<uint32_t>(max))
                return fail(errc::corrupt, "level {} above the maximum {}", v, max);
            lv.push_back(static_cast<uint8_t>(v));
        }
        return {};
    };
    size_t rep_start = out.rep.size(), def_start = out.def.size();
    if (d.max_rep > 0) FLOE_TRY(read_levels(out.rep, d.max_rep));
    if (d.max_def > 0) FLOE_TRY(read_levels(out.def, d.max_def));
    if (d.max_rep > 0 && n > 0 && out.rep[rep_start] != 0 && rep_start == 0)
        return fail(errc::corrupt, "column chunk starts inside a row");
    size_t present = n;
    if (d.max_def > 0)
        present =
            static_cast<size_t>(std::count(out.def.begin() + static_cast<ptrdiff_t>(def_start),
                                           out.def.end(), static_cast<uint8_t>(d.max_def)));
    bytes_view rest = r.rest();
    switch (dh.enc) {
    case encoding::plain: {
        if (d.type == physical_type::int32 || d.type == physical_type::int64) {
            size_t w = d.type == physical_type::int32 ? 4 : 8;
            if (rest.size() / w < present)
                return fail(errc::corrupt, "plain page holds fewer than {} values", present);
            for (size_t i = 0; i < present; ++i) {
                if (w == 4) {
                    int32_t v;
                    std::memcpy(&v, rest.data() + i * 4, 4);
                    out.i32.push_back(v);
                } else {
                    int64_t v;
                    std::memcpy(&v, rest.data() + i * 8, 8);
                    out.i64.push_back(v);
                }
            }
        } else {
            byte_reader vr(rest);
            for (size_t i = 0; i < present; ++i) {
                uint32_t len = FLOE_TRY(vr.le<uint32_t>());
                auto b = FLOE_TRY(vr.bytes(len));
                out.bytes.push_back(as_chars(b));
            }
        }
        return {};
    }
    case encoding::rle_dictionary:
    case encoding::plain_dictionary: {
        if (d.type != physical_type::byte_array)
            return fail(errc::unsupported, "dictionary-encoded integers");
        if (rest.empty()) {
            if (present == 0) return {};
            return fail(errc::corrupt, "dictionary page data missing its bit width");
        }
        int width = rest[0];
        if (width > 32) return fail(errc::corrupt, "dictionary index bit width {}", width);
        std::vector<uint32_t> idx(present);
        rle_decoder dec(rest.subspan(1), width);
        FLOE_TRY(dec.get(idx.data(), present));
        for (uint32_t i : idx) {
            if (i >= dict.size())
                return fail(errc::corrupt, "dictionary index {} beyond {} entries", i, dict.size());
            out.bytes.push_back(dict[i]);
        }
        return {};
    }
    case encoding::delta_binary_packed: {
        if (d.type == physical_type::int32) {
            size_t before = out.i32.size();
            FLOE_TRY(delta_binary_decode<int32_t>(rest, present, out.i32));
            if (out.i32.size() - before != present)
                return fail(errc::corrupt, "delta page holds {} of {} values",
                            out.i32.size() - before, present);
        } else if (d.type == physical_type::int64) {
            size_t before = out.i64.size();
            FLOE_TRY(delta_binary_decode<int64_t>(rest, present, out.i64));
            if (out.i64.size() - before != present)
                return fail(errc::corrupt, "delta page holds {} of {} values",
                            out.i64.size() - before, present);
        } else {
            return fail(errc::unsupported, "DELTA_BINARY_PACKED on byte arrays");
        }
        return {};
    }
    default:
        return fail(errc::unsupported, "encoding {} not supported", to_string(dh.enc));
    }
}

result<column_data> file_reader::read_column(size_t rg, size_t col) {
    if (rg >= _meta.row_groups.size() || col >= _schema.columns().size())
        return fail(errc::out_of_range, "{}: no row group {} column {}", name(), rg, col);
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg, d.dotted_path());
    };
    int64_t start = m.data_page_offset;
    if (m.dictionary_page_offset && *m.dictionary_page_offset < start)
        start = *m.dictionary_page_offset;
    byte_buffer raw;
    FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(start),
                               static_cast<size_t>(m.total_compressed_size), raw),
                 "{}", ctx());
    column_data out;
    std::vector<std::string_view> dict;
    size_t pos = 0;
    int64_t values = 0;
    while (pos < raw.size() && values < m.num_values) {
        size_t hlen = 0;
        auto ph = FLOE_TRY_CTX(decode_page_header(bytes_view(raw).subspan(pos), hlen),
                               "{}: page header at {}", ctx(), start + static_cast<int64_t>(pos));
        pos += hlen;
        if (static_cast<size_t>(ph.compressed_page_size) > raw.size() - pos)
            return fail(errc::corrupt, "{}: page of {} bytes runs past the chunk end ({} left)",
                        ctx(), ph.compressed_page_size, raw.size() - pos);
        if (static_cast<uint32_t>(ph.uncompressed_page_size) > _opts.max_page_size)
            return fail(errc::corrupt, "{}: page of {} uncompressed bytes exceeds the limit", ctx(),
                        ph.uncompressed_page_size);
        bytes_view body(raw.data() + pos, static_cast<size_t>(ph.compressed_page_size));
        pos += body.size();
        if (ph.crc && _opts.verify_crc) {
            auto crc =
                static_cast<uint32_t>(::crc32(0L, body.data(), static_cast<uInt>(body.size())));
            if (crc != *ph.crc) return fail(errc::corrupt, "{}: page CRC mismatch", ctx());
        }
        if (ph.type != page_type::data_page && ph.type != page_type::dictionary_page) {
            if (ph.type == page_type::data_page_v2)
                return fail(errc::unsupported, "{}: data page v2 not supported", ctx());
            continue; // index pages: skip
        }
        byte_buffer page;
        FLOE_TRY_CTX(
            _decomp.decompress(m.codec, body, static_cast<size_t>(ph.uncompressed_page_size), page),
            "{}", ctx());
        if (ph.type == page_type::dictionary_page) {
            if (!ph.dictionary)
                return fail(errc::corrupt, "{}: dictionary page without its header", ctx());
            if (!dict.empty()) return fail(errc::corrupt, "{}: second dictionary page", ctx());
            if (d.type != physical_type::byte_array)
                return fail(errc::unsupported, "{}: integer dictionaries", ctx());
            if (ph.dictionary->num_values < 0
                || static_cast<size_t>(ph.dictionary->num_values) > page.size() / 4)
                return fail(errc::corrupt, "{}: dictionary of {} entries in {} bytes", ctx(),
                            ph.dictionary->num_values, page.size());
            out.storage.push_back(std::move(page));
            byte_reader vr(out.storage.back());
            for (int32_t i = 0; i < ph.dictionary->num_values; ++i) {
                uint32_t len = FLOE_TRY_CTX(vr.le<uint32_t>(), "{}: dictionary", ctx());
                auto b = FLOE_TRY_CTX(vr.bytes(len), "{}: dictionary", ctx());
                dict.push_back(as_chars(b));
            }
            continue;
        }
        if (!ph.data) return fail(errc::corrupt, "{}: data page without its header", ctx());
        if (ph.data->num_values > m.num_values - values)
            return fail(errc::corrupt, "{}: pages hold more than the chunk's {} values", ctx(),
                        m.num_values);
        out.storage.push_back(std::move(page));
        FLOE_TRY_CTX(decode_page_values(d, ph, out.storage.back(), dict, out), "{}: page at {}",
                     ctx(), start + static_cast<int64_t>(pos - body.size() - hlen));
        values += ph.data->num_values;
    }
    if (values != m.num_values)
        return fail(errc::corrupt, "{}: pages hold {} values, the chunk says {}", ctx(), values,
                    m.num_values);
    out.num_entries = values;
    return out;
}

bool file_reader::stats_may_contain(size_t rg, size_t col, std::string_view value) const {
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.stats || m.stats->legacy_min_max || _meta.column_orders == 0) return true;
    if (m.stats->min_value && bytes_less(value, *m.stats->min_value)) return false;
    if (m.stats->max_value && bytes_less(*m.stats->max_value, value)) return false;
    if (m.stats->null_count && *m.stats->null_count == m.num_values) return false;
    return true;
}

bool file_reader::stats_may_contain(size_t rg, size_t col, int64_t value) const {
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.stats || !m.stats->min_value || !m.stats->max_value) return true;
    auto get = [&](const std::string& s, int64_t& out) {
        if (d.type == physical_type::int32 && s.size() == 4) {
            int32_t v;
            std::memcpy(&v, s.data(), 4);
            out = v;
            return true;
        }
        if (d.type == physical_type::int64 && s.size() == 8) {
            std::memcpy(&out, s.data(), 8);
            return true;
        }
        return false;
    };
    int64_t lo, hi;
    if (!get(*m.stats->min_value, lo) || !get(*m.stats->max_value, hi)) return true;
    return value >= lo && value <= hi;
}

result<bool> file_reader::bloom_may_contain(size_t rg, size_t col, std::string_view value) {
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.bloom_filter_offset) return true;
    auto ctx = [&]() { return fmt::format("{}: row group {} bloom filter", name(), rg); };
    uint64_t off = static_cast<uint64_t>(*m.bloom_filter_offset);
    if (off >= _size) return fail(errc::corrupt, "{}: offset {} outside the file", ctx(), off);
    size_t len = m.bloom_filter_length ? static_cast<size_t>(std::max(0, *m.bloom_filter_length))
                                       : static_cast<size_t>(std::min<uint64_t>(_size - off, 64));
    if (len == 0 || len > _size - off)
        return fail(errc::corrupt, "{}: length {} runs past the file end", ctx(), len);
    byte_buffer b;
    FLOE_TRY_CTX(_src->read_at(off, len, b), "{}", ctx());
    size_t hlen = 0;
    auto h = FLOE_TRY_CTX(decode_bloom_filter_header(b, hlen), "{}", ctx());
    if (static_cast<uint64_t>(h.num_bytes) > _size - off - hlen)
        return fail(errc::corrupt, "{}: {} bytes run past the file end", ctx(), h.num_bytes);
    if (hlen + static_cast<size_t>(h.num_bytes) > b.size())
        FLOE_TRY_CTX(_src->read_at(off, hlen + static_cast<size_t>(h.num_bytes), b), "{}", ctx());
    auto f = FLOE_TRY_CTX(
        bloom_filter::from_bitset(bytes_view(b).subspan(hlen, static_cast<size_t>(h.num_bytes))),
        "{}", ctx());
    return f.may_contain(bloom_filter::hash(value));
}

// ------------------------------------------------------------------ message_reader

result<message_reader> message_reader::open(std::unique_ptr<input_source> src,
                                            std::vector<size_t> projection, reader_options opts) {
    auto r = FLOE_TRY(file_reader::open(std::move(src), opts));
    const auto& want = message_schema().columns();
    const auto& have = r->file_schema().columns();
    if (have.size() != want.size())
        return fail(errc::invalid_argument, "{}: not a Floe message file ({} columns, expected {})",
                    r->name(), have.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
        if (have[i].path != want[i].path || have[i].type != want[i].type
            || have[i].max_def != want[i].max_def || have[i].max_rep != want[i].max_rep)
            return fail(errc::invalid_argument, "{}: column {} is not Floe's {}", r->name(),
                        have[i].dotted_path(), want[i].dotted_path());
    if (projection.empty())
        for (size_t i = 0; i < message_col::count; ++i)
            projection.push_back(i);
    for (size_t c : projection)
        if (c >= message_col::count)
            return fail(errc::invalid_argument, "projection column {} out of range", c);
    // header_key and header_value are assembled together.
    bool hk = std::count(projection.begin(), projection.end(), message_col::header_key) > 0;
    bool hv = std::count(projection.begin(), projection.end(), message_col::header_value) > 0;
    if (hk != hv) {
        projection.push_back(hk ? message_col::header_value : message_col::header_key);
    }
    return message_reader(std::move(r), std::move(projection));
}

result<bool> message_reader::next_row_group(std::vector<message_record>& out) {
    if (_next >= _r->num_row_groups()) return false;
    FLOE_TRY(read_row_group(_next++, out));
    return true;
}

result<void> message_reader::read_row_group(size_t rg, std::vector<message_record>& out) {
    namespace mc = message_col;
    size_t rows = static_cast<size_t>(_r->row_group_rows(rg));
    // A flat required column has one entry per row: this bounds the row count by the (limited)
    // value count before anything is allocated for it.
    if (_r->metadata().row_groups[rg].columns[mc::segment_id].meta_data->num_values
        != _r->row_group_rows(rg))
        return fail(errc::corrupt, "{}: row group {} has {} rows but {} segment_id values",
                    _r->name(), rg, _r->row_group_rows(rg),
                    _r->metadata().row_groups[rg].columns[mc::segment_id].meta_data->num_values);
    size_t base = out.size();
    out.resize(base + rows);
    auto bad = [&](size_t col, std::string_view what) {
        return fail(errc::corrupt, "{}: row group {} column {}: {}", _r->name(), rg,
                    message_schema().columns()[col].dotted_path(), what);
    };
    for (size_t c : _proj) {
        if (c == mc::header_value) continue; // with header_key
        if (c == mc::header_key) {
            auto k = FLOE_TRY(_r->read_column(rg, mc::header_key));
            auto v = FLOE_TRY(_r->read_column(rg, mc::header_value));
            if (k.num_entries != v.num_entries || k.rep != v.rep)
                return bad(c, "header key and value levels differ");
            size_t row = 0, ki = 0, vi = 0;
            bool first = true;
            for (int64_t e = 0; e < k.num_entries; ++e) {
                if (k.rep[static_cast<size_t>(e)] == 0) {
                    if (!first) ++row;
                    first = false;
                }
                if (row >= rows) return bad(c, "more rows than the row group");
                auto& rec = out[base + row];
                uint8_t dk = k.def[static_cast<size_t>(e)], dv = v.def[static_cast<size_t>(e)];
                if (dk == 0) continue; // null list
                if (!rec.headers) rec.headers.emplace();
                if (dk == 1) continue; // empty list
                if (ki >= k.bytes.size()) return bad(c, "fewer values than levels");
                message_record::header h;
                h.key = std::string(k.bytes[ki++]);
                if (dv == 3) {
                    if (vi >= v.bytes.size()) return bad(c, "fewer values than levels");
                    h.value = std::string(v.bytes[vi++]);
                }
                rec.headers->push_back(std::move(h));
            }
            if (!first) ++row;
            if (row != rows) return bad(c, "row count differs from the row group's");
            continue;
        }
        auto d = FLOE_TRY(_r->read_column(rg, c));
        if (static_cast<size_t>(d.num_entries) != rows)
            return bad(c, "entry count differs from the row count");
        const auto& desc = message_schema().columns()[c];
        size_t vi = 0;
        for (size_t i = 0; i < rows; ++i) {
            auto& rec = out[base + i];
            bool present = desc.max_def == 0 || d.def[i] == desc.max_def;
            if (!present) continue;
            switch (c) {
            case mc::stream_key:
                rec.stream_key = std::string(d.bytes.at(vi++));
                break;
            case mc::message_id:
                rec.message_id = std::string(d.bytes.at(vi++));
                break;
            case mc::key:
                rec.key = std::string(d.bytes.at(vi++));
                break;
            case mc::value:
                rec.value = std::string(d.bytes.at(vi++));
                break;
            case mc::segment_id:
                rec.segment_id = d.i64.at(vi++);
                break;
            case mc::message_ts:
                rec.message_ts = d.i64.at(vi++);
                break;
            case mc::kafka_timestamp:
                rec.kafka_timestamp = d.i64.at(vi++);
                break;
            case mc::offset:
                rec.offset = d.i64.at(vi++);
                break;
            case mc::partition:
                rec.partition = d.i32.at(vi++);
                break;
            default:
                break;
            }
        }
    }
    return {};
}

result<std::vector<message_record>> message_reader::find_by_key(std::string_view key,
                                                                lookup_stats* stats) {
    std::vector<message_record> found, rows;
    lookup_stats st;
    auto saved = _proj;
    if (std::count(_proj.begin(), _proj.end(), message_col::key) == 0)
        _proj.push_back(message_col::key);
    struct restore {
        std::vector<size_t>& p;
        std::vector<size_t>& s;
        ~restore() { p = std::move(s); }
    } restore_proj{_proj, saved};
    for (size_t rg = 0; rg < _r->num_row_groups(); ++rg) {
        ++st.row_groups;
        if (!_r->stats_may_contain(rg, message_col::key, key)) {
            ++st.skipped_by_stats;
            continue;
        }
        if (!FLOE_TRY(_r->bloom_may_contain(rg, message_col::key, key))) {
            ++st.skipped_by_bloom;
            continue;
        }
        ++st.read;
        rows.clear();
        FLOE_TRY(read_row_group(rg, rows));
        for (auto& r : rows)
            if (r.key && *r.key == key) found.push_back(std::move(r));
    }
    if (stats) *stats = st;
    return found;
}

} // namespace floe::parquet
