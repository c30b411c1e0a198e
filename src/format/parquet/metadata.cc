#include "format/parquet/metadata.h"

#include "format/parquet/thrift.h"

namespace floe::parquet {

using thrift::ttype;

// ---------------------------------------------------------------- encode

namespace {

void encode_stats(thrift::writer& w, const statistics& s) {
    if (s.null_count) w.field_i64(3, *s.null_count);
    if (s.distinct_count) w.field_i64(4, *s.distinct_count);
    if (s.max_value) w.field_string(5, *s.max_value);
    if (s.min_value) w.field_string(6, *s.min_value);
    if (s.is_max_value_exact) w.field_bool(7, *s.is_max_value_exact);
    if (s.is_min_value_exact) w.field_bool(8, *s.is_min_value_exact);
    if (s.nan_count) w.field_i64(9, *s.nan_count);
}

/// LogicalType union member for `e.logical` (field 10 of SchemaElement), if it has one.
void encode_logical(thrift::writer& w, const schema_element& e) {
    auto empty_member = [&](int16_t id) {
        w.begin_struct_field(10);
        w.empty_struct_field(id);
        w.end_struct();
    };
    auto time_member = [&](int16_t id) { // TimeType / TimestampType in MICROS
        w.begin_struct_field(10);
        w.begin_struct_field(id);
        w.field_bool(1, e.logical_utc);
        w.begin_struct_field(2);
        w.empty_struct_field(2); // TimeUnit.MICROS
        w.end_struct();
        w.end_struct();
        w.end_struct();
    };
    switch (e.logical) {
    case logical_type::string:
        empty_member(1);
        break;
    case logical_type::map:
        empty_member(2);
        break;
    case logical_type::list:
        empty_member(3);
        break;
    case logical_type::enum_:
        empty_member(4);
        break;
    case logical_type::decimal:
        w.begin_struct_field(10);
        w.begin_struct_field(5);
        w.field_i32(1, e.logical_scale);
        w.field_i32(2, e.logical_precision);
        w.end_struct();
        w.end_struct();
        break;
    case logical_type::date:
        empty_member(6);
        break;
    case logical_type::time_micros:
        time_member(7);
        break;
    case logical_type::timestamp_micros:
        time_member(8);
        break;
    case logical_type::json:
        empty_member(12);
        break;
    case logical_type::uuid:
        empty_member(14);
        break;
    default:
        break;
    }
}

void encode_schema_element(thrift::writer& w, const schema_element& e) {
    if (e.type) w.field_i32(1, static_cast<int32_t>(*e.type));
    if (e.type_length) w.field_i32(2, *e.type_length);
    if (e.repetition_type) w.field_i32(3, static_cast<int32_t>(*e.repetition_type));
    w.field_string(4, e.name);
    if (e.num_children) w.field_i32(5, *e.num_children);
    if (e.converted) w.field_i32(6, *e.converted);
    if (e.scale) w.field_i32(7, *e.scale);
    if (e.precision) w.field_i32(8, *e.precision);
    if (e.field_id) w.field_i32(9, *e.field_id);
    encode_logical(w, e);
}

void encode_column_meta(thrift::writer& w, const column_metadata& m) {
    w.field_i32(1, static_cast<int32_t>(m.type));
    w.begin_list_field(2, ttype::i32, m.encodings.size());
    for (auto e : m.encodings)
        w.elem_i32(static_cast<int32_t>(e));
    w.begin_list_field(3, ttype::binary, m.path_in_schema.size());
    for (auto& p : m.path_in_schema)
        w.elem_string(p);
    w.field_i32(4, static_cast<int32_t>(m.codec));
    w.field_i64(5, m.num_values);
    w.field_i64(6, m.total_uncompressed_size);
    w.field_i64(7, m.total_compressed_size);
    w.field_i64(9, m.data_page_offset);
    if (m.dictionary_page_offset) w.field_i64(11, *m.dictionary_page_offset);
    if (m.stats) {
        w.begin_struct_field(12);
        encode_stats(w, *m.stats);
        w.end_struct();
    }
    if (!m.encoding_stats.empty()) {
        w.begin_list_field(13, ttype::strct, m.encoding_stats.size());
        for (auto& s : m.encoding_stats) {
            w.begin_struct_elem();
            w.field_i32(1, static_cast<int32_t>(s.type));
            w.field_i32(2, static_cast<int32_t>(s.enc));
            w.field_i32(3, s.count);
            w.end_struct();
        }
    }
    if (m.bloom_filter_offset) w.field_i64(14, *m.bloom_filter_offset);
    if (m.bloom_filter_length) w.field_i32(15, *m.bloom_filter_length);
}

void encode_algorithm(thrift::writer& w, int16_t id, const encryption_algorithm& a) {
    w.begin_struct_field(id);
    w.begin_struct_field(a.cipher == cipher_algorithm::aes_gcm_v1 ? 1 : 2);
    if (a.aad_prefix) w.field_string(1, *a.aad_prefix);
    if (a.aad_file_unique) w.field_string(2, *a.aad_file_unique);
    if (a.supply_aad_prefix) w.field_bool(3, true);
    w.end_struct();
    w.end_struct();
}

} // namespace

void encode(const column_metadata& m, byte_buffer& out) {
    thrift::writer w(out);
    encode_column_meta(w, m);
    w.end();
}

void encode(const file_crypto_metadata& m, byte_buffer& out) {
    thrift::writer w(out);
    encode_algorithm(w, 1, m.algorithm);
    if (m.key_metadata) w.field_string(2, *m.key_metadata);
    w.end();
}

void encode(const file_metadata& m, byte_buffer& out) {
    thrift::writer w(out);
    w.field_i32(1, m.version);
    w.begin_list_field(2, ttype::strct, m.schema.size());
    for (auto& e : m.schema) {
        w.begin_struct_elem();
        encode_schema_element(w, e);
        w.end_struct();
    }
    w.field_i64(3, m.num_rows);
    w.begin_list_field(4, ttype::strct, m.row_groups.size());
    for (auto& rg : m.row_groups) {
        w.begin_struct_elem();
        w.begin_list_field(1, ttype::strct, rg.columns.size());
        for (auto& c : rg.columns) {
            w.begin_struct_elem();
            w.field_i64(2, c.file_offset);
            if (c.meta_data) {
                w.begin_struct_field(3);
                encode_column_meta(w, *c.meta_data);
                w.end_struct();
            }
            if (c.offset_index_offset) w.field_i64(4, *c.offset_index_offset);
            if (c.offset_index_length) w.field_i32(5, *c.offset_index_length);
            if (c.column_index_offset) w.field_i64(6, *c.column_index_offset);
            if (c.column_index_length) w.field_i32(7, *c.column_index_length);
            if (c.crypto_metadata) {
                w.begin_struct_field(8);
                if (c.crypto_metadata->with_footer_key) {
                    w.empty_struct_field(1);
                } else {
                    w.begin_struct_field(2);
                    w.begin_list_field(1, ttype::binary, c.crypto_metadata->path_in_schema.size());
                    for (auto& p : c.crypto_metadata->path_in_schema)
                        w.elem_string(p);
                    if (c.crypto_metadata->key_metadata)
                        w.field_string(2, *c.crypto_metadata->key_metadata);
                    w.end_struct();
                }
                w.end_struct();
            }
            if (c.encrypted_column_metadata) w.field_string(9, *c.encrypted_column_metadata);
            w.end_struct();
        }
        w.field_i64(2, rg.total_byte_size);
        w.field_i64(3, rg.num_rows);
        if (rg.file_offset) w.field_i64(5, *rg.file_offset);
        if (rg.total_compressed_size) w.field_i64(6, *rg.total_compressed_size);
        if (rg.ordinal) w.field_i16(7, *rg.ordinal);
        w.end_struct();
    }
    if (!m.key_value_metadata.empty()) {
        w.begin_list_field(5, ttype::strct, m.key_value_metadata.size());
        for (auto& kv : m.key_value_metadata) {
            w.begin_struct_elem();
            w.field_string(1, kv.key);
            if (kv.value) w.field_string(2, *kv.value);
            w.end_struct();
        }
    }
    if (m.created_by) w.field_string(6, *m.created_by);
    if (m.column_orders > 0) {
        w.begin_list_field(7, ttype::strct, m.column_orders);
        for (size_t i = 0; i < m.column_orders; ++i) {
            w.begin_struct_elem();
            w.empty_struct_field(1); // TYPE_ORDER
            w.end_struct();
        }
    }
    if (m.encryption) encode_algorithm(w, 8, *m.encryption);
    if (m.footer_signing_key_metadata) w.field_string(9, *m.footer_signing_key_metadata);
    w.end();
}

void encode(const page_header& h, byte_buffer& out) {
    thrift::writer w(out);
    w.field_i32(1, static_cast<int32_t>(h.type));
    w.field_i32(2, h.uncompressed_page_size);
    w.field_i32(3, h.compressed_page_size);
    if (h.crc) w.field_i32(4, static_cast<int32_t>(*h.crc));
    if (h.data) {
        auto& d = *h.data;
        w.begin_struct_field(5);
        w.field_i32(1, d.num_values);
        w.field_i32(2, static_cast<int32_t>(d.enc));
        w.field_i32(3, static_cast<int32_t>(d.definition_level_encoding));
        w.field_i32(4, static_cast<int32_t>(d.repetition_level_encoding));
        if (d.stats) {
            w.begin_struct_field(5);
            encode_stats(w, *d.stats);
            w.end_struct();
        }
        w.end_struct();
    }
    if (h.dictionary) {
        auto& d = *h.dictionary;
        w.begin_struct_field(7);
        w.field_i32(1, d.num_values);
        w.field_i32(2, static_cast<int32_t>(d.enc));
        if (d.is_sorted) w.field_bool(3, *d.is_sorted);
        w.end_struct();
    }
    if (h.data_v2) {
        auto& d = *h.data_v2;
        w.begin_struct_field(8);
        w.field_i32(1, d.num_values);
        w.field_i32(2, d.num_nulls);
        w.field_i32(3, d.num_rows);
        w.field_i32(4, static_cast<int32_t>(d.enc));
        w.field_i32(5, d.definition_levels_byte_length);
        w.field_i32(6, d.repetition_levels_byte_length);
        w.field_bool(7, d.is_compressed);
        w.end_struct();
    }
    w.end();
}

void encode(const bloom_filter_header& h, byte_buffer& out) {
    thrift::writer w(out);
    w.field_i32(1, h.num_bytes);
    w.begin_struct_field(2); // algorithm: BLOCK
    w.empty_struct_field(1);
    w.end_struct();
    w.begin_struct_field(3); // hash: XXHASH
    w.empty_struct_field(1);
    w.end_struct();
    w.begin_struct_field(4); // compression: UNCOMPRESSED
    w.empty_struct_field(1);
    w.end_struct();
    w.end();
}

void encode(const offset_index& i, byte_buffer& out) {
    thrift::writer w(out);
    w.begin_list_field(1, ttype::strct, i.page_locations.size());
    for (auto& p : i.page_locations) {
        w.begin_struct_elem();
        w.field_i64(1, p.offset);
        w.field_i32(2, p.compressed_page_size);
        w.field_i64(3, p.first_row_index);
        w.end_struct();
    }
    w.end();
}

void encode(const column_index& i, byte_buffer& out) {
    thrift::writer w(out);
    w.begin_list_field(1, ttype::bool_true, i.null_pages.size());
    for (bool b : i.null_pages)
        w.elem_bool(b);
    w.begin_list_field(2, ttype::binary, i.min_values.size());
    for (auto& v : i.min_values)
        w.elem_string(v);
    w.begin_list_field(3, ttype::binary, i.max_values.size());
    for (auto& v : i.max_values)
        w.elem_string(v);
    w.field_i32(4, static_cast<int32_t>(i.order));
    if (!i.null_counts.empty()) {
        w.begin_list_field(5, ttype::i64, i.null_counts.size());
        for (int64_t n : i.null_counts)
            w.elem_i64(n);
    }
    if (!i.nan_counts.empty()) {
        w.begin_list_field(8, ttype::i64, i.nan_counts.size());
        for (int64_t n : i.nan_counts)
            w.elem_i64(n);
    }
    w.end();
}

// ---------------------------------------------------------------- decode

namespace {

using thrift::reader;

// Reads one struct: `on_field(header)` returns true when it consumed the field's value, false to
// have it skipped. Keeps the depth accounting in one place.
template<typename F> result<void> read_struct(reader& r, F&& on_field) {
    FLOE_TRY(r.begin_struct());
    for (;;) {
        auto h = r.next_field();
        if (!h) {
            r.end_struct();
            return std::unexpected(h.error());
        }
        if (h->type == ttype::stop) break;
        auto handled = on_field(*h);
        if (!handled) {
            r.end_struct();
            return std::unexpected(handled.error());
        }
        if (!*handled) {
            auto s = r.skip(h->type);
            if (!s) {
                r.end_struct();
                return s;
            }
        }
    }
    r.end_struct();
    return {};
}

template<typename F> result<void> read_list(reader& r, ttype expect, F&& on_elem) {
    auto lh = FLOE_TRY(r.read_list_header());
    for (uint32_t i = 0; i < lh.size; ++i) {
        if (lh.elem != expect) {
            FLOE_TRY(r.skip(lh.elem));
            continue;
        }
        FLOE_TRY(on_elem());
    }
    return {};
}

result<statistics> decode_stats(reader& r) {
    statistics s;
    std::optional<std::string> legacy_min, legacy_max;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::binary) return false;
            legacy_max = std::string(FLOE_TRY(r.read_string()));
            return true;
        case 2:
            if (h.type != ttype::binary) return false;
            legacy_min = std::string(FLOE_TRY(r.read_string()));
            return true;
        case 3:
            if (h.type != ttype::i64) return false;
            s.null_count = FLOE_TRY(r.read_i64());
            return true;
        case 4:
            if (h.type != ttype::i64) return false;
            s.distinct_count = FLOE_TRY(r.read_i64());
            return true;
        case 5:
            if (h.type != ttype::binary) return false;
            s.max_value = std::string(FLOE_TRY(r.read_string()));
            return true;
        case 6:
            if (h.type != ttype::binary) return false;
            s.min_value = std::string(FLOE_TRY(r.read_string()));
            return true;
        case 7:
            if (h.type != ttype::bool_true && h.type != ttype::bool_false) return false;
            s.is_max_value_exact = thrift::field_bool_value(h);
            return true;
        case 8:
            if (h.type != ttype::bool_true && h.type != ttype::bool_false) return false;
            s.is_min_value_exact = thrift::field_bool_value(h);
            return true;
        case 9:
            if (h.type != ttype::i64) return false;
            s.nan_count = FLOE_TRY(r.read_i64());
            return true;
        default:
            return false;
        }
    }));
    if (!s.min_value && !s.max_value && (legacy_min || legacy_max)) {
        s.min_value = std::move(legacy_min);
        s.max_value = std::move(legacy_max);
        s.legacy_min_max = true;
    }
    return s;
}

/// TimeType / TimestampType: isAdjustedToUTC and whether the unit is MICROS.
result<bool> decode_time_member(reader& r, schema_element& e) {
    bool micros = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.id == 1 && (h.type == ttype::bool_true || h.type == ttype::bool_false)) {
            e.logical_utc = thrift::field_bool_value(h);
            return true;
        }
        if (h.id == 2 && h.type == ttype::strct) {
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& u) -> result<bool> {
                if (u.id == 2 && u.type == ttype::strct) micros = true;
                return false;
            }));
            return true;
        }
        return false;
    }));
    return micros;
}

/// The LogicalType union into e.logical and its parameters.
result<void> decode_logical(reader& r, schema_element& e) {
    e.logical = logical_type::other;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.type != ttype::strct) return false;
        switch (h.id) {
        case 1:
            e.logical = logical_type::string;
            return false; // skip the (empty or not) member struct
        case 2:
            e.logical = logical_type::map;
            return false;
        case 3:
            e.logical = logical_type::list;
            return false;
        case 4:
            e.logical = logical_type::enum_;
            return false;
        case 5:
            e.logical = logical_type::decimal;
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& d) -> result<bool> {
                if (d.type != ttype::i32) return false;
                if (d.id == 1) e.logical_scale = FLOE_TRY(r.read_i32());
                else if (d.id == 2) e.logical_precision = FLOE_TRY(r.read_i32());
                else return false;
                return true;
            }));
            return true;
        case 6:
            e.logical = logical_type::date;
            return false;
        case 7:
        case 8:
            e.logical = FLOE_TRY(decode_time_member(r, e))
                            ? (h.id == 7 ? logical_type::time_micros
                                         : logical_type::timestamp_micros)
                            : logical_type::other;
            return true;
        case 12:
            e.logical = logical_type::json;
            return false;
        case 14:
            e.logical = logical_type::uuid;
            return false;
        default:
            return false;
        }
    }));
    return {};
}

result<schema_element> decode_schema_element(reader& r) {
    schema_element e;
    bool have_name = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::i32) return false;
            e.type = static_cast<physical_type>(FLOE_TRY(r.read_i32()));
            return true;
        case 2:
            if (h.type != ttype::i32) return false;
            e.type_length = FLOE_TRY(r.read_i32());
            return true;
        case 3:
            if (h.type != ttype::i32) return false;
            e.repetition_type = static_cast<repetition>(FLOE_TRY(r.read_i32()));
            return true;
        case 4:
            if (h.type != ttype::binary) return false;
            e.name = std::string(FLOE_TRY(r.read_string()));
            have_name = true;
            return true;
        case 5:
            if (h.type != ttype::i32) return false;
            e.num_children = FLOE_TRY(r.read_i32());
            return true;
        case 6:
            if (h.type != ttype::i32) return false;
            e.converted = FLOE_TRY(r.read_i32());
            return true;
        case 7:
            if (h.type != ttype::i32) return false;
            e.scale = FLOE_TRY(r.read_i32());
            return true;
        case 8:
            if (h.type != ttype::i32) return false;
            e.precision = FLOE_TRY(r.read_i32());
            return true;
        case 9:
            if (h.type != ttype::i32) return false;
            e.field_id = FLOE_TRY(r.read_i32());
            return true;
        case 10:
            if (h.type != ttype::strct) return false;
            FLOE_TRY(decode_logical(r, e));
            return true;
        default:
            return false;
        }
    }));
    if (!have_name) return fail(errc::corrupt, "schema element without a name");
    return e;
}

result<column_metadata> decode_column_meta(reader& r) {
    column_metadata m;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::i32) return false;
            m.type = static_cast<physical_type>(FLOE_TRY(r.read_i32()));
            return true;
        case 2:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::i32, [&]() -> result<void> {
                m.encodings.push_back(static_cast<encoding>(FLOE_TRY(r.read_i32())));
                return {};
            }));
            return true;
        case 3:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::binary, [&]() -> result<void> {
                m.path_in_schema.emplace_back(FLOE_TRY(r.read_string()));
                return {};
            }));
            return true;
        case 4:
            if (h.type != ttype::i32) return false;
            m.codec = static_cast<compression_codec>(FLOE_TRY(r.read_i32()));
            return true;
        case 5:
            if (h.type != ttype::i64) return false;
            m.num_values = FLOE_TRY(r.read_i64());
            return true;
        case 6:
            if (h.type != ttype::i64) return false;
            m.total_uncompressed_size = FLOE_TRY(r.read_i64());
            return true;
        case 7:
            if (h.type != ttype::i64) return false;
            m.total_compressed_size = FLOE_TRY(r.read_i64());
            return true;
        case 9:
            if (h.type != ttype::i64) return false;
            m.data_page_offset = FLOE_TRY(r.read_i64());
            return true;
        case 11:
            if (h.type != ttype::i64) return false;
            m.dictionary_page_offset = FLOE_TRY(r.read_i64());
            return true;
        case 12:
            if (h.type != ttype::strct) return false;
            m.stats = FLOE_TRY(decode_stats(r));
            return true;
        case 13:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
                page_encoding_stats s{page_type::data_page, encoding::plain, 0};
                FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                    if (f.type != ttype::i32) return false;
                    int32_t v = FLOE_TRY(r.read_i32());
                    if (f.id == 1)
                        s.type = static_cast<page_type>(v);
                    else if (f.id == 2)
                        s.enc = static_cast<encoding>(v);
                    else if (f.id == 3)
                        s.count = v;
                    return true;
                }));
                m.encoding_stats.push_back(s);
                return {};
            }));
            return true;
        case 14:
            if (h.type != ttype::i64) return false;
            m.bloom_filter_offset = FLOE_TRY(r.read_i64());
            return true;
        case 15:
            if (h.type != ttype::i32) return false;
            m.bloom_filter_length = FLOE_TRY(r.read_i32());
            return true;
        default:
            return false;
        }
    }));
    return m;
}

result<column_crypto_metadata> decode_column_crypto(reader& r) {
    column_crypto_metadata c;
    bool member = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.type != ttype::strct) return false;
        if (h.id == 1) {
            member = true;
            c.with_footer_key = true;
            return false; // EncryptionWithFooterKey is empty: skip it
        }
        if (h.id != 2) return false;
        member = true;
        c.with_footer_key = false;
        FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
            if (f.id == 1 && f.type == ttype::list) {
                FLOE_TRY(read_list(r, ttype::binary, [&]() -> result<void> {
                    c.path_in_schema.emplace_back(FLOE_TRY(r.read_string()));
                    return {};
                }));
                return true;
            }
            if (f.id == 2 && f.type == ttype::binary) {
                c.key_metadata = std::string(FLOE_TRY(r.read_string()));
                return true;
            }
            return false;
        }));
        return true;
    }));
    if (!member) return fail(errc::corrupt, "column crypto metadata names no key");
    return c;
}

result<encryption_algorithm> decode_algorithm(reader& r) {
    encryption_algorithm a;
    bool member = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.type != ttype::strct || (h.id != 1 && h.id != 2)) return false;
        member = true;
        a.cipher = h.id == 1 ? cipher_algorithm::aes_gcm_v1 : cipher_algorithm::aes_gcm_ctr_v1;
        FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
            if ((f.id == 1 || f.id == 2) && f.type == ttype::binary) {
                (f.id == 1 ? a.aad_prefix : a.aad_file_unique) = std::string(FLOE_TRY(r.read_string()));
                return true;
            }
            if (f.id == 3 && (f.type == ttype::bool_true || f.type == ttype::bool_false)) {
                a.supply_aad_prefix = thrift::field_bool_value(f);
                return true;
            }
            return false;
        }));
        return true;
    }));
    if (!member) return fail(errc::unsupported, "unknown encryption algorithm");
    return a;
}

result<row_group> decode_row_group(reader& r) {
    row_group rg;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
                column_chunk c;
                FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                    if (f.id == 2 && f.type == ttype::i64) {
                        c.file_offset = FLOE_TRY(r.read_i64());
                        return true;
                    }
                    if (f.id == 3 && f.type == ttype::strct) {
                        c.meta_data = FLOE_TRY(decode_column_meta(r));
                        return true;
                    }
                    if ((f.id == 4 || f.id == 6) && f.type == ttype::i64) {
                        (f.id == 4 ? c.offset_index_offset : c.column_index_offset) =
                            FLOE_TRY(r.read_i64());
                        return true;
                    }
                    if ((f.id == 5 || f.id == 7) && f.type == ttype::i32) {
                        (f.id == 5 ? c.offset_index_length : c.column_index_length) =
                            FLOE_TRY(r.read_i32());
                        return true;
                    }
                    if (f.id == 8 && f.type == ttype::strct) {
                        c.crypto_metadata = FLOE_TRY(decode_column_crypto(r));
                        return true;
                    }
                    if (f.id == 9 && f.type == ttype::binary) {
                        c.encrypted_column_metadata = std::string(FLOE_TRY(r.read_string()));
                        return true;
                    }
                    return false;
                }));
                rg.columns.push_back(std::move(c));
                return {};
            }));
            return true;
        case 2:
            if (h.type != ttype::i64) return false;
            rg.total_byte_size = FLOE_TRY(r.read_i64());
            return true;
        case 3:
            if (h.type != ttype::i64) return false;
            rg.num_rows = FLOE_TRY(r.read_i64());
            return true;
        case 5:
            if (h.type != ttype::i64) return false;
            rg.file_offset = FLOE_TRY(r.read_i64());
            return true;
        case 6:
            if (h.type != ttype::i64) return false;
            rg.total_compressed_size = FLOE_TRY(r.read_i64());
            return true;
        case 7:
            if (h.type != ttype::i16) return false;
            rg.ordinal = FLOE_TRY(r.read_i16());
            return true;
        default:
            return false;
        }
    }));
    return rg;
}

} // namespace

result<file_metadata> decode_file_metadata(bytes_view in) {
    size_t consumed = 0;
    return decode_file_metadata(in, consumed);
}

result<column_metadata> decode_column_metadata(bytes_view in) {
    reader r(in);
    return decode_column_meta(r);
}

result<file_crypto_metadata> decode_file_crypto_metadata(bytes_view in, size_t& consumed) {
    reader r(in);
    file_crypto_metadata m;
    bool have_algorithm = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.id == 1 && h.type == ttype::strct) {
            m.algorithm = FLOE_TRY(decode_algorithm(r));
            have_algorithm = true;
            return true;
        }
        if (h.id == 2 && h.type == ttype::binary) {
            m.key_metadata = std::string(FLOE_TRY(r.read_string()));
            return true;
        }
        return false;
    }));
    if (!have_algorithm) return fail(errc::corrupt, "file crypto metadata without an algorithm");
    consumed = r.position();
    return m;
}

result<file_metadata> decode_file_metadata(bytes_view in, size_t& consumed) {
    reader r(in);
    file_metadata m;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::i32) return false;
            m.version = FLOE_TRY(r.read_i32());
            return true;
        case 2:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
                m.schema.push_back(FLOE_TRY(decode_schema_element(r)));
                return {};
            }));
            return true;
        case 3:
            if (h.type != ttype::i64) return false;
            m.num_rows = FLOE_TRY(r.read_i64());
            return true;
        case 4:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
                m.row_groups.push_back(FLOE_TRY(decode_row_group(r)));
                return {};
            }));
            return true;
        case 5:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
                key_value kv;
                FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                    if (f.type != ttype::binary) return false;
                    if (f.id == 1)
                        kv.key = std::string(FLOE_TRY(r.read_string()));
                    else if (f.id == 2)
                        kv.value = std::string(FLOE_TRY(r.read_string()));
                    else
                        return false;
                    return true;
                }));
                m.key_value_metadata.push_back(std::move(kv));
                return {};
            }));
            return true;
        case 6:
            if (h.type != ttype::binary) return false;
            m.created_by = std::string(FLOE_TRY(r.read_string()));
            return true;
        case 7: {
            if (h.type != ttype::list) return false;
            auto lh = FLOE_TRY(r.read_list_header());
            for (uint32_t i = 0; i < lh.size; ++i)
                FLOE_TRY(r.skip(lh.elem));
            m.column_orders = lh.size;
            return true;
        }
        case 8:
            if (h.type != ttype::strct) return false;
            m.encryption = FLOE_TRY(decode_algorithm(r));
            return true;
        case 9:
            if (h.type != ttype::binary) return false;
            m.footer_signing_key_metadata = std::string(FLOE_TRY(r.read_string()));
            return true;
        default:
            return false;
        }
    }));
    if (m.schema.empty()) return fail(errc::corrupt, "file metadata has no schema");
    if (m.num_rows < 0)
        return fail(errc::corrupt, "file metadata: negative row count {}", m.num_rows);
    consumed = r.position();
    return m;
}

result<page_header> decode_page_header(bytes_view in, size_t& consumed) {
    reader r(in);
    page_header p;
    bool have_type = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1:
            if (h.type != ttype::i32) return false;
            p.type = static_cast<page_type>(FLOE_TRY(r.read_i32()));
            have_type = true;
            return true;
        case 2:
            if (h.type != ttype::i32) return false;
            p.uncompressed_page_size = FLOE_TRY(r.read_i32());
            return true;
        case 3:
            if (h.type != ttype::i32) return false;
            p.compressed_page_size = FLOE_TRY(r.read_i32());
            return true;
        case 4:
            if (h.type != ttype::i32) return false;
            p.crc = static_cast<uint32_t>(FLOE_TRY(r.read_i32()));
            return true;
        case 5: {
            if (h.type != ttype::strct) return false;
            data_page_header d;
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                if (f.id == 5 && f.type == ttype::strct) {
                    d.stats = FLOE_TRY(decode_stats(r));
                    return true;
                }
                if (f.type != ttype::i32) return false;
                int32_t v = FLOE_TRY(r.read_i32());
                if (f.id == 1)
                    d.num_values = v;
                else if (f.id == 2)
                    d.enc = static_cast<encoding>(v);
                else if (f.id == 3)
                    d.definition_level_encoding = static_cast<encoding>(v);
                else if (f.id == 4)
                    d.repetition_level_encoding = static_cast<encoding>(v);
                return true;
            }));
            p.data = std::move(d);
            return true;
        }
        case 7: {
            if (h.type != ttype::strct) return false;
            dictionary_page_header d;
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                if (f.id == 3 && (f.type == ttype::bool_true || f.type == ttype::bool_false)) {
                    d.is_sorted = thrift::field_bool_value(f);
                    return true;
                }
                if (f.type != ttype::i32) return false;
                int32_t v = FLOE_TRY(r.read_i32());
                if (f.id == 1)
                    d.num_values = v;
                else if (f.id == 2)
                    d.enc = static_cast<encoding>(v);
                return true;
            }));
            p.dictionary = d;
            return true;
        }
        case 8: {
            if (h.type != ttype::strct) return false;
            data_page_header_v2 d;
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                if (f.id == 7 && (f.type == ttype::bool_true || f.type == ttype::bool_false)) {
                    d.is_compressed = thrift::field_bool_value(f);
                    return true;
                }
                if (f.type != ttype::i32) return false;
                int32_t v = FLOE_TRY(r.read_i32());
                switch (f.id) {
                case 1:
                    d.num_values = v;
                    break;
                case 2:
                    d.num_nulls = v;
                    break;
                case 3:
                    d.num_rows = v;
                    break;
                case 4:
                    d.enc = static_cast<encoding>(v);
                    break;
                case 5:
                    d.definition_levels_byte_length = v;
                    break;
                case 6:
                    d.repetition_levels_byte_length = v;
                    break;
                default:
                    break;
                }
                return true;
            }));
            p.data_v2 = d;
            return true;
        }
        default:
            return false;
        }
    }));
    if (!have_type) return fail(errc::corrupt, "page header without a type");
    if (p.compressed_page_size < 0 || p.uncompressed_page_size < 0)
        return fail(errc::corrupt,
                    "page header with negative size ({} compressed, {} uncompressed)",
                    p.compressed_page_size, p.uncompressed_page_size);
    consumed = r.position();
    return p;
}

result<bloom_filter_header> decode_bloom_filter_header(bytes_view in, size_t& consumed) {
    reader r(in);
    bloom_filter_header b;
    bool algo = false, hash = false, comp = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.id == 1 && h.type == ttype::i32) {
            b.num_bytes = FLOE_TRY(r.read_i32());
            return true;
        }
        if (h.type != ttype::strct || h.id < 2 || h.id > 4) return false;
        int member = 0;
        FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
            member = f.id;
            return false;
        }));
        if (member == 1) (h.id == 2 ? algo : h.id == 3 ? hash : comp) = true;
        return true;
    }));
    if (!algo || !hash || !comp)
        return fail(errc::unsupported,
                    "bloom filter is not a split-block/xxhash/uncompressed filter");
    if (b.num_bytes <= 0 || b.num_bytes % 32 != 0)
        return fail(errc::corrupt, "bloom filter size {} is not a positive multiple of 32",
                    b.num_bytes);
    consumed = r.position();
    return b;
}

result<offset_index> decode_offset_index(bytes_view in) {
    reader r(in);
    offset_index oi;
    bool have_pages = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        if (h.id != 1 || h.type != ttype::list) return false;
        have_pages = true;
        FLOE_TRY(read_list(r, ttype::strct, [&]() -> result<void> {
            page_location p;
            bool off = false, size = false, row = false;
            FLOE_TRY(read_struct(r, [&](const thrift::field_header& f) -> result<bool> {
                if (f.id == 1 && f.type == ttype::i64) {
                    p.offset = FLOE_TRY(r.read_i64());
                    off = true;
                } else if (f.id == 2 && f.type == ttype::i32) {
                    p.compressed_page_size = FLOE_TRY(r.read_i32());
                    size = true;
                } else if (f.id == 3 && f.type == ttype::i64) {
                    p.first_row_index = FLOE_TRY(r.read_i64());
                    row = true;
                } else {
                    return false;
                }
                return true;
            }));
            if (!off || !size || !row)
                return fail(errc::corrupt, "offset index: page location {} lacks a field",
                            oi.page_locations.size());
            oi.page_locations.push_back(p);
            return {};
        }));
        return true;
    }));
    if (!have_pages) return fail(errc::corrupt, "offset index without page locations");
    for (size_t i = 0; i < oi.page_locations.size(); ++i) {
        auto& p = oi.page_locations[i];
        if (p.offset < 0 || p.compressed_page_size <= 0 || p.first_row_index < 0)
            return fail(errc::corrupt, "offset index: page {} at {} of {} bytes, first row {}", i,
                        p.offset, p.compressed_page_size, p.first_row_index);
        if (i == 0 && p.first_row_index != 0)
            return fail(errc::corrupt, "offset index: first page starts at row {}",
                        p.first_row_index);
        if (i > 0) {
            auto& q = oi.page_locations[i - 1];
            if (p.first_row_index <= q.first_row_index
                || p.offset < q.offset + q.compressed_page_size)
                return fail(errc::corrupt, "offset index: page {} does not follow page {}", i,
                            i - 1);
        }
    }
    return oi;
}

result<column_index> decode_column_index(bytes_view in) {
    reader r(in);
    column_index ci;
    bool have_nulls = false, have_min = false, have_max = false, have_order = false;
    FLOE_TRY(read_struct(r, [&](const thrift::field_header& h) -> result<bool> {
        switch (h.id) {
        case 1: {
            if (h.type != ttype::list) return false;
            auto lh = FLOE_TRY(r.read_list_header());
            if (lh.elem != ttype::bool_true && lh.elem != ttype::bool_false)
                return fail(errc::corrupt, "column index: null_pages is not a bool list");
            for (uint32_t i = 0; i < lh.size; ++i)
                ci.null_pages.push_back(FLOE_TRY(r.read_bool_elem()));
            have_nulls = true;
            return true;
        }
        case 2:
        case 3: {
            if (h.type != ttype::list) return false;
            auto& v = h.id == 2 ? ci.min_values : ci.max_values;
            FLOE_TRY(read_list(r, ttype::binary, [&]() -> result<void> {
                v.emplace_back(FLOE_TRY(r.read_string()));
                return {};
            }));
            (h.id == 2 ? have_min : have_max) = true;
            return true;
        }
        case 4: {
            if (h.type != ttype::i32) return false;
            int32_t o = FLOE_TRY(r.read_i32());
            if (o < 0 || o > 2) return fail(errc::corrupt, "column index: boundary order {}", o);
            ci.order = static_cast<boundary_order>(o);
            have_order = true;
            return true;
        }
        case 5:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::i64, [&]() -> result<void> {
                ci.null_counts.push_back(FLOE_TRY(r.read_i64()));
                return {};
            }));
            return true;
        case 8:
            if (h.type != ttype::list) return false;
            FLOE_TRY(read_list(r, ttype::i64, [&]() -> result<void> {
                ci.nan_counts.push_back(FLOE_TRY(r.read_i64()));
                return {};
            }));
            return true;
        default:
            return false;
        }
    }));
    if (!have_nulls || !have_min || !have_max || !have_order)
        return fail(errc::corrupt, "column index lacks a required field");
    size_t n = ci.null_pages.size();
    if (ci.min_values.size() != n || ci.max_values.size() != n
        || (!ci.null_counts.empty() && ci.null_counts.size() != n)
        || (!ci.nan_counts.empty() && ci.nan_counts.size() != n))
        return fail(errc::corrupt,
                    "column index: {} null_pages, {} min_values, {} max_values, {} null_counts", n,
                    ci.min_values.size(), ci.max_values.size(), ci.null_counts.size());
    return ci;
}

std::string_view to_string(encoding e) {
    switch (e) {
    case encoding::plain:
        return "PLAIN";
    case encoding::plain_dictionary:
        return "PLAIN_DICTIONARY";
    case encoding::rle:
        return "RLE";
    case encoding::bit_packed:
        return "BIT_PACKED";
    case encoding::delta_binary_packed:
        return "DELTA_BINARY_PACKED";
    case encoding::delta_length_byte_array:
        return "DELTA_LENGTH_BYTE_ARRAY";
    case encoding::delta_byte_array:
        return "DELTA_BYTE_ARRAY";
    case encoding::rle_dictionary:
        return "RLE_DICTIONARY";
    case encoding::byte_stream_split:
        return "BYTE_STREAM_SPLIT";
    }
    return "UNKNOWN";
}

std::string_view to_string(compression_codec c) {
    switch (c) {
    case compression_codec::uncompressed:
        return "UNCOMPRESSED";
    case compression_codec::snappy:
        return "SNAPPY";
    case compression_codec::gzip:
        return "GZIP";
    case compression_codec::lzo:
        return "LZO";
    case compression_codec::brotli:
        return "BROTLI";
    case compression_codec::lz4:
        return "LZ4";
    case compression_codec::zstd:
        return "ZSTD";
    case compression_codec::lz4_raw:
        return "LZ4_RAW";
    }
    return "UNKNOWN";
}

} // namespace floe::parquet
