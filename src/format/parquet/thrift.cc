#include "format/parquet/thrift.h"

#include "base/varint.h"

#include <cstring>

namespace floe::parquet::thrift {

// ---- writer ----

void writer::uvarint(uint64_t v) {
    put_uvarint(_out, v);
}

void writer::field_header(ttype t, int16_t id) {
    int delta = id - _last;
    if (delta > 0 && delta <= 15) {
        _out.push_back(static_cast<uint8_t>((delta << 4) | static_cast<uint8_t>(t)));
    } else {
        _out.push_back(static_cast<uint8_t>(t));
        uvarint(zigzag_encode(static_cast<int32_t>(id)));
    }
    _last = id;
}

void writer::field_i32(int16_t id, int32_t v) {
    field_header(ttype::i32, id);
    uvarint(zigzag_encode(v));
}
void writer::field_i64(int16_t id, int64_t v) {
    field_header(ttype::i64, id);
    uvarint(zigzag_encode(v));
}
void writer::field_i16(int16_t id, int16_t v) {
    field_header(ttype::i16, id);
    uvarint(zigzag_encode(static_cast<int32_t>(v)));
}
void writer::field_bool(int16_t id, bool v) {
    field_header(v ? ttype::bool_true : ttype::bool_false, id);
}
void writer::field_binary(int16_t id, bytes_view v) {
    field_header(ttype::binary, id);
    uvarint(v.size());
    _out.insert(_out.end(), v.begin(), v.end());
}
void writer::begin_struct_field(int16_t id) {
    field_header(ttype::strct, id);
    FLOE_ASSERT(_depth < 32, "thrift writer nesting too deep");
    _stack[_depth++] = _last;
    _last = 0;
}
void writer::empty_struct_field(int16_t id) {
    field_header(ttype::strct, id);
    _out.push_back(0);
}
void writer::begin_list_field(int16_t id, ttype elem, size_t n) {
    field_header(ttype::list, id);
    if (n < 15) {
        _out.push_back(static_cast<uint8_t>((n << 4) | static_cast<uint8_t>(elem)));
    } else {
        _out.push_back(static_cast<uint8_t>(0xF0 | static_cast<uint8_t>(elem)));
        uvarint(n);
    }
}
void writer::elem_i32(int32_t v) {
    uvarint(zigzag_encode(v));
}
void writer::elem_i64(int64_t v) {
    uvarint(zigzag_encode(v));
}
void writer::elem_binary(bytes_view v) {
    uvarint(v.size());
    _out.insert(_out.end(), v.begin(), v.end());
}
void writer::begin_struct_elem() {
    FLOE_ASSERT(_depth < 32, "thrift writer nesting too deep");
    _stack[_depth++] = _last;
    _last = 0;
}
void writer::end_struct() {
    _out.push_back(0);
    FLOE_ASSERT(_depth > 0, "thrift writer: end_struct without begin");
    _last = _stack[--_depth];
}

// ---- reader ----

result<uint64_t> reader::uvarint(unsigned max_bits) {
    return read_uvarint(_r, max_bits);
}

result<void> reader::begin_struct() {
    if (_depth >= _max_depth || _depth >= 64)
        return fail(errc::corrupt, "thrift nesting deeper than {} at offset {}", _max_depth,
                    _r.position());
    _stack[_depth++] = _last;
    _last = 0;
    return {};
}

void reader::end_struct() {
    if (_depth > 0) _last = _stack[--_depth];
}

result<field_header> reader::next_field() {
    uint8_t b = FLOE_TRY(_r.u8());
    auto t = static_cast<ttype>(b & 0x0F);
    if (t == ttype::stop) return field_header{ttype::stop, 0};
    if (static_cast<uint8_t>(t) > static_cast<uint8_t>(ttype::strct))
        return fail(errc::corrupt, "thrift: unknown type {} at offset {}", b & 0x0F,
                    _r.position() - 1);
    int delta = b >> 4;
    int16_t id;
    if (delta != 0) {
        id = static_cast<int16_t>(_last + delta);
    } else {
        uint64_t z = FLOE_TRY(uvarint(32));
        int32_t v = zigzag_decode(static_cast<uint32_t>(z));
        if (v < INT16_MIN || v > INT16_MAX)
            return fail(errc::corrupt, "thrift: field id {} out of range", v);
        id = static_cast<int16_t>(v);
    }
    _last = id;
    return field_header{t, id};
}

result<int8_t> reader::read_i8() {
    return static_cast<int8_t>(FLOE_TRY(_r.u8()));
}
result<int16_t> reader::read_i16() {
    uint64_t z = FLOE_TRY(uvarint(32));
    int32_t v = zigzag_decode(static_cast<uint32_t>(z));
    if (v < INT16_MIN || v > INT16_MAX) return fail(errc::corrupt, "thrift: i16 out of range");
    return static_cast<int16_t>(v);
}
result<int32_t> reader::read_i32() {
    uint64_t z = FLOE_TRY(uvarint(32));
    return zigzag_decode(static_cast<uint32_t>(z));
}
result<int64_t> reader::read_i64() {
    uint64_t z = FLOE_TRY(uvarint(64));
    return zigzag_decode(z);
}
result<double> reader::read_double() {
    auto b = FLOE_TRY(_r.bytes(8));
    double d;
    std::memcpy(&d, b.data(), 8);
    return d;
}
result<bytes_view> reader::read_binary() {
    uint64_t n = FLOE_TRY(uvarint(32));
    if (n > _r.remaining())
        return fail(errc::corrupt,
                    "thrift: binary length {} exceeds the {} bytes left at offset {}", n,
                    _r.remaining(), _r.position());
    return _r.bytes(n);
}
result<bool> reader::read_bool_elem() {
    uint8_t b = FLOE_TRY(_r.u8());
    return b == 1;
}
result<list_header> reader::read_list_header() {
    uint8_t b = FLOE_TRY(_r.u8());
    auto elem = static_cast<ttype>(b & 0x0F);
    uint64_t n = b >> 4;
    if (n == 15) n = FLOE_TRY(uvarint(32));
    // Every element takes at least one byte, so a size beyond the remaining bytes is a lie.
    if (n > _r.remaining())
        return fail(errc::corrupt,
                    "thrift: list of {} elements but only {} bytes left at offset {}", n,
                    _r.remaining(), _r.position());
    if (static_cast<uint8_t>(elem) > static_cast<uint8_t>(ttype::strct) || elem == ttype::stop)
        if (n != 0) return fail(errc::corrupt, "thrift: list of unknown element type {}", b & 0x0F);
    return list_header{elem, static_cast<uint32_t>(n)};
}

result<void> reader::skip(ttype t) {
    switch (t) {
    case ttype::bool_true:
    case ttype::bool_false:
        return {};
    case ttype::i8:
        return _r.skip(1);
    case ttype::i16:
    case ttype::i32:
    case ttype::i64:
        FLOE_TRY(uvarint(64));
        return {};
    case ttype::dbl:
        return _r.skip(8);
    case ttype::binary:
        FLOE_TRY(read_binary());
        return {};
    case ttype::list:
    case ttype::set: {
        if (_depth >= _max_depth)
            return fail(errc::corrupt, "thrift nesting deeper than {}", _max_depth);
        auto h = FLOE_TRY(read_list_header());
        ++_depth;
        for (uint32_t i = 0; i < h.size; ++i) {
            if (h.elem == ttype::bool_true || h.elem == ttype::bool_false) {
                auto r = _r.skip(1);
                if (!r) {
                    --_depth;
                    return r;
                }
            } else {
                auto r = skip(h.elem);
                if (!r) {
                    --_depth;
                    return r;
                }
            }
        }
        --_depth;
        return {};
    }
    case ttype::map: {
        if (_depth >= _max_depth)
            return fail(errc::corrupt, "thrift nesting deeper than {}", _max_depth);
        uint64_t n = FLOE_TRY(uvarint(32));
        if (n == 0) return {};
        if (n > _r.remaining()) return fail(errc::corrupt, "thrift: map size {} exceeds input", n);
        uint8_t kv = FLOE_TRY(_r.u8());
        auto kt = static_cast<ttype>(kv >> 4), vt = static_cast<ttype>(kv & 0x0F);
        ++_depth;
        for (uint64_t i = 0; i < n; ++i) {
            for (auto tt : {kt, vt}) {
                auto r =
                    (tt == ttype::bool_true || tt == ttype::bool_false) ? _r.skip(1) : skip(tt);
                if (!r) {
                    --_depth;
                    return r;
                }
            }
        }
        --_depth;
        return {};
    }
    case ttype::strct: {
        FLOE_TRY(begin_struct());
        for (;;) {
            auto h = next_field();
            if (!h) {
                end_struct();
                return std::unexpected(h.error());
            }
            if (h->type == ttype::stop) break;
            auto r = skip(h->type);
            if (!r) {
                end_struct();
                return r;
            }
        }
        end_struct();
        return {};
    }
    default:
        return fail(errc::corrupt, "thrift: cannot skip type {}", static_cast<int>(t));
    }
}

} // namespace floe::parquet::thrift
