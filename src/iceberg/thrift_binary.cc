#include "iceberg/thrift_binary.h"

#include <bit>
#include <cstring>

namespace floe::iceberg::thrift {
namespace {

constexpr uint32_t version_1 = 0x80010000u;
constexpr uint32_t version_mask = 0xffff0000u;

void put_u8(std::string& out, uint8_t v) {
    out.push_back(static_cast<char>(v));
}
void put_u16(std::string& out, uint16_t v) {
    put_u8(out, static_cast<uint8_t>(v >> 8));
    put_u8(out, static_cast<uint8_t>(v));
}
void put_u32(std::string& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        put_u8(out, static_cast<uint8_t>(v >> shift));
}
void put_u64(std::string& out, uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8)
        put_u8(out, static_cast<uint8_t>(v >> shift));
}
void put_string(std::string& out, std::string_view s) {
    FLOE_ASSERT(s.size() <= 0x7fffffffu, "thrift string longer than 2 GiB");
    put_u32(out, static_cast<uint32_t>(s.size()));
    out.append(s);
}

/// The fewest bytes one value of type `t` takes: bounds a container's count by what is left.
size_t min_size(ttype t) {
    switch (t) {
    case ttype::boolean:
    case ttype::byte:
    case ttype::strct:
        return 1;
    case ttype::i16:
        return 2;
    case ttype::i32:
    case ttype::string:
        return 4;
    case ttype::dbl:
    case ttype::i64:
        return 8;
    case ttype::map:
        return 6;
    case ttype::set:
    case ttype::list:
        return 5;
    case ttype::stop:
        return 1;
    }
    return 1;
}

/// Reads from a buffer that may end early: `short_input` tells "need more bytes" apart from
/// bytes that are wrong.
class reader {
public:
    reader(std::string_view data, const limits& lim) : _data(data), _lim(lim) {}

    bool short_input = false;

    size_t position() const { return _pos; }

    result<uint8_t> u8() {
        FLOE_TRY(need(1));
        return static_cast<uint8_t>(_data[_pos++]);
    }
    result<uint16_t> u16() {
        FLOE_TRY(need(2));
        uint16_t v = static_cast<uint16_t>((byte(0) << 8) | byte(1));
        _pos += 2;
        return v;
    }
    result<uint32_t> u32() {
        FLOE_TRY(need(4));
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k)
            v = (v << 8) | byte(k);
        _pos += 4;
        return v;
    }
    result<uint64_t> u64() {
        FLOE_TRY(need(8));
        uint64_t v = 0;
        for (int k = 0; k < 8; ++k)
            v = (v << 8) | byte(k);
        _pos += 8;
        return v;
    }
    result<std::string> str() {
        auto n = static_cast<int32_t>(FLOE_TRY(u32()));
        if (n < 0) return fail(errc::corrupt, "thrift: negative string length {}", n);
        if (_pos + static_cast<size_t>(n) > _lim.max_message_bytes)
            return fail(errc::corrupt,
                        "thrift: a string of {} bytes exceeds the {}-byte message limit", n,
                        _lim.max_message_bytes);
        FLOE_TRY(need(static_cast<size_t>(n)));
        std::string s(_data.substr(_pos, static_cast<size_t>(n)));
        _pos += static_cast<size_t>(n);
        return s;
    }
    result<ttype> type_id() {
        auto t = FLOE_TRY(u8());
        if (!valid_type(t) || t == 0) return fail(errc::corrupt, "thrift: unknown type id {}", t);
        return static_cast<ttype>(t);
    }
    /// A container of `count` elements of at least `each` bytes apiece.
    result<void> check_count(int32_t count, size_t each) {
        if (count < 0) return fail(errc::corrupt, "thrift: negative container size {}", count);
        auto need_bytes = static_cast<uint64_t>(count) * each;
        if (_pos + need_bytes > _lim.max_message_bytes)
            return fail(errc::corrupt,
                        "thrift: a container of {} elements exceeds the {}-byte message limit",
                        count, _lim.max_message_bytes);
        return {};
    }

    result<tvalue> value(ttype t, int depth) {
        if (depth > _lim.max_depth)
            return fail(errc::corrupt, "thrift: nesting deeper than {}", _lim.max_depth);
        if (++_values > max_values)
            return fail(errc::corrupt, "thrift: more than {} values in one message", max_values);
        tvalue v;
        v.type = t;
        switch (t) {
        case ttype::boolean: {
            auto b = FLOE_TRY(u8());
            if (b > 1) return fail(errc::corrupt, "thrift: bool byte {}", b);
            v.i = b;
            break;
        }
        case ttype::byte:
            v.i = static_cast<int8_t>(FLOE_TRY(u8()));
            break;
        case ttype::i16:
            v.i = static_cast<int16_t>(FLOE_TRY(u16()));
            break;
        case ttype::i32:
            v.i = static_cast<int32_t>(FLOE_TRY(u32()));
            break;
        case ttype::i64:
            v.i = static_cast<int64_t>(FLOE_TRY(u64()));
            break;
        case ttype::dbl:
            v.d = std::bit_cast<double>(FLOE_TRY(u64()));
            break;
        case ttype::string:
            v.s = FLOE_TRY(str());
            break;
        case ttype::strct:
            for (;;) {
                auto ft = FLOE_TRY(u8());
                if (ft == 0) break;
                if (!valid_type(ft))
                    return fail(errc::corrupt, "thrift: unknown field type id {}", ft);
                auto id = static_cast<int16_t>(FLOE_TRY(u16()));
                v.fields.emplace_back(id, FLOE_TRY(value(static_cast<ttype>(ft), depth + 1)));
            }
            break;
        case ttype::list:
        case ttype::set: {
            v.elem = FLOE_TRY(type_id());
            auto n = static_cast<int32_t>(FLOE_TRY(u32()));
            FLOE_TRY(check_count(n, min_size(v.elem)));
            for (int32_t k = 0; k < n; ++k)
                v.elems.push_back(FLOE_TRY(value(v.elem, depth + 1)));
            break;
        }
        case ttype::map: {
            v.key = FLOE_TRY(type_id());
            v.elem = FLOE_TRY(type_id());
            auto n = static_cast<int32_t>(FLOE_TRY(u32()));
            FLOE_TRY(check_count(n, min_size(v.key) + min_size(v.elem)));
            for (int32_t k = 0; k < n; ++k) {
                v.elems.push_back(FLOE_TRY(value(v.key, depth + 1)));
                v.elems.push_back(FLOE_TRY(value(v.elem, depth + 1)));
            }
            break;
        }
        case ttype::stop:
            return fail(errc::corrupt, "thrift: a value of type stop");
        }
        return v;
    }

private:
    static constexpr size_t max_values = 1'000'000;

    uint32_t byte(int k) const {
        return static_cast<uint8_t>(_data[_pos + static_cast<size_t>(k)]);
    }
    result<void> need(size_t n) {
        if (_data.size() - _pos >= n) return {};
        short_input = true;
        return fail(errc::out_of_range, "thrift: input ends early");
    }

    std::string_view _data;
    const limits& _lim;
    size_t _pos = 0;
    size_t _values = 0;
};

} // namespace

bool valid_type(uint8_t t) noexcept {
    switch (t) {
    case 0:
    case 2:
    case 3:
    case 4:
    case 6:
    case 8:
    case 10:
    case 11:
    case 12:
    case 13:
    case 14:
    case 15:
        return true;
    default:
        return false;
    }
}

tvalue tvalue::string_map(const std::map<std::string, std::string>& m) {
    tvalue out;
    out.type = ttype::map;
    out.assign_string_map(m);
    return out;
}

const tvalue* tvalue::field(int16_t id) const {
    for (auto& [fid, v] : fields)
        if (fid == id) return &v;
    return nullptr;
}

tvalue* tvalue::field(int16_t id) {
    for (auto& [fid, v] : fields)
        if (fid == id) return &v;
    return nullptr;
}

void tvalue::set(int16_t id, tvalue v) {
    if (auto* f = field(id))
        *f = std::move(v);
    else
        fields.emplace_back(id, std::move(v));
}

std::optional<std::string> tvalue::string_field(int16_t id) const {
    auto* f = field(id);
    if (!f || f->type != ttype::string) return std::nullopt;
    return f->s;
}

std::optional<int64_t> tvalue::int_field(int16_t id) const {
    auto* f = field(id);
    if (!f) return std::nullopt;
    switch (f->type) {
    case ttype::byte:
    case ttype::i16:
    case ttype::i32:
    case ttype::i64:
    case ttype::boolean:
        return f->i;
    default:
        return std::nullopt;
    }
}

std::map<std::string, std::string> tvalue::as_string_map() const {
    std::map<std::string, std::string> out;
    if (type != ttype::map || key != ttype::string || elem != ttype::string) return out;
    for (size_t k = 0; k + 1 < elems.size(); k += 2)
        out[elems[k].s] = elems[k + 1].s;
    return out;
}

void tvalue::assign_string_map(const std::map<std::string, std::string>& m) {
    type = ttype::map;
    key = ttype::string;
    elem = ttype::string;
    elems.clear();
    for (auto& [k, v] : m) {
        elems.push_back(str(k));
        elems.push_back(str(v));
    }
}

void encode_value(std::string& out, const tvalue& v) {
    switch (v.type) {
    case ttype::boolean:
        put_u8(out, v.i ? 1 : 0);
        break;
    case ttype::byte:
        put_u8(out, static_cast<uint8_t>(v.i));
        break;
    case ttype::i16:
        put_u16(out, static_cast<uint16_t>(v.i));
        break;
    case ttype::i32:
        put_u32(out, static_cast<uint32_t>(v.i));
        break;
    case ttype::i64:
        put_u64(out, static_cast<uint64_t>(v.i));
        break;
    case ttype::dbl:
        put_u64(out, std::bit_cast<uint64_t>(v.d));
        break;
    case ttype::string:
        put_string(out, v.s);
        break;
    case ttype::strct:
        for (auto& [id, f] : v.fields) {
            put_u8(out, static_cast<uint8_t>(f.type));
            put_u16(out, static_cast<uint16_t>(id));
            encode_value(out, f);
        }
        put_u8(out, 0);
        break;
    case ttype::list:
    case ttype::set:
        put_u8(out, static_cast<uint8_t>(v.elem));
        put_u32(out, static_cast<uint32_t>(v.elems.size()));
        for (auto& e : v.elems) {
            FLOE_ASSERT(e.type == v.elem, "thrift list element of another type");
            encode_value(out, e);
        }
        break;
    case ttype::map:
        FLOE_ASSERT(v.elems.size() % 2 == 0, "thrift map with a key and no value");
        put_u8(out, static_cast<uint8_t>(v.key));
        put_u8(out, static_cast<uint8_t>(v.elem));
        put_u32(out, static_cast<uint32_t>(v.elems.size() / 2));
        for (auto& e : v.elems)
            encode_value(out, e);
        break;
    case ttype::stop:
        FLOE_ASSERT(false, "thrift value of type stop");
        break;
    }
}

std::string encode_message(const message& m) {
    std::string out;
    put_u32(out, version_1 | static_cast<uint32_t>(m.kind));
    put_string(out, m.name);
    put_u32(out, static_cast<uint32_t>(m.seqid));
    FLOE_ASSERT(m.body.type == ttype::strct, "thrift message body must be a struct");
    encode_value(out, m.body);
    return out;
}

result<std::optional<decoded>> decode_message(std::string_view data, const limits& lim) {
    reader r(data, lim);
    auto body = [&]() -> result<decoded> {
        decoded d;
        auto header = FLOE_TRY(r.u32());
        if ((header & version_mask) != version_1)
            return fail(errc::corrupt,
                        "thrift: not a strict binary-protocol message (header {:#010x})", header);
        auto kind = header & 0xffu;
        if (kind < 1 || kind > 4 || (header & 0xff00u) != 0)
            return fail(errc::corrupt, "thrift: unknown message type {}", kind);
        d.msg.kind = static_cast<message_kind>(kind);
        d.msg.name = FLOE_TRY(r.str());
        if (d.msg.name.size() > 1024)
            return fail(errc::corrupt, "thrift: method name of {} bytes", d.msg.name.size());
        d.msg.seqid = static_cast<int32_t>(FLOE_TRY(r.u32()));
        d.msg.body = FLOE_TRY(r.value(ttype::strct, 0));
        d.consumed = r.position();
        return d;
    }();
    if (body) return std::optional<decoded>(std::move(*body));
    if (!r.short_input) return fail(std::move(body).error());
    if (data.size() >= lim.max_message_bytes)
        return fail(errc::corrupt, "thrift: message larger than {} bytes", lim.max_message_bytes);
    return std::optional<decoded>();
}

result<tvalue> decode_value(std::string_view data, ttype t, const limits& lim) {
    if (!valid_type(static_cast<uint8_t>(t)) || t == ttype::stop)
        return fail(errc::invalid_argument, "thrift: no values of type {}", static_cast<int>(t));
    reader r(data, lim);
    auto v = r.value(t, 0);
    if (!v) {
        if (r.short_input)
            return fail(errc::corrupt, "thrift: truncated value ({} bytes)", data.size());
        return v;
    }
    if (r.position() != data.size())
        return fail(errc::corrupt, "thrift: {} bytes after the value", data.size() - r.position());
    return v;
}

} // namespace floe::iceberg::thrift
