#include "format/avro/encoding.h"

#include "base/varint.h"

#include <cmath>
#include <limits>

namespace floe::avro {

namespace {

using dk = datum::kind;

bool kind_matches(type t, dk k) {
    switch (t) {
    case type::null: return k == dk::null;
    case type::boolean: return k == dk::boolean;
    case type::int_: return k == dk::int_;
    case type::long_: return k == dk::long_;
    case type::float_: return k == dk::float_;
    case type::double_: return k == dk::double_;
    case type::bytes: return k == dk::bytes;
    case type::string: return k == dk::string;
    case type::fixed: return k == dk::fixed;
    case type::enum_: return k == dk::enum_;
    case type::array: return k == dk::array;
    case type::map: return k == dk::map;
    case type::record: return k == dk::record;
    case type::union_: return false;
    }
    return false;
}

// Avro's promotions (int→long, float→double, string↔bytes), used when no branch matches exactly.
bool kind_promotes(type t, dk k) {
    return (t == type::long_ && k == dk::int_) || (t == type::double_ && k == dk::float_)
           || (t == type::bytes && k == dk::string) || (t == type::string && k == dk::bytes);
}

std::string_view kind_name(dk k) {
    static constexpr std::string_view names[] = {"null",  "boolean", "int",   "long", "float",
                                                 "double", "bytes",  "string", "fixed", "enum",
                                                 "array", "map",     "record"};
    return names[static_cast<int>(k)];
}

std::unexpected<error> mismatch(const node& s, const datum& d) {
    return fail(errc::invalid_argument, "a {} value does not fit schema type {}", kind_name(d.type()),
                to_string(s.kind));
}

void put_string(byte_buffer& out, std::string_view s) {
    put_varint(out, static_cast<int64_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

template<typename T>
void put_le(byte_buffer& out, T v) {
    byte_writer(out).put_le(v);
}

} // namespace

result<size_t> resolve_branch(const node& s, const datum& d) {
    size_t b = d.branch();
    if (b != datum::no_branch) {
        if (b >= s.branches.size()) return fail(errc::invalid_argument, "union has no branch {}", b);
        return b;
    }
    for (b = 0; b < s.branches.size(); ++b)
        if (kind_matches(s.branches[b]->kind, d.type())) return b;
    for (b = 0; b < s.branches.size(); ++b)
        if (kind_promotes(s.branches[b]->kind, d.type())) return b;
    return fail(errc::invalid_argument, "no union branch takes a {} value", kind_name(d.type()));
}

result<void> encode(const node& s, const datum& d, byte_buffer& out) {
    switch (s.kind) {
    case type::null:
        if (!d.is_null()) return mismatch(s, d);
        return {};
    case type::boolean:
        if (d.type() != dk::boolean) return mismatch(s, d);
        out.push_back(d.as_bool() ? 1 : 0);
        return {};
    case type::int_:
        if (d.type() == dk::int_) {
            put_varint(out, d.as_int());
            return {};
        }
        if (d.type() == dk::long_ && d.as_long() >= INT32_MIN && d.as_long() <= INT32_MAX) {
            put_varint(out, d.as_long());
            return {};
        }
        return mismatch(s, d);
    case type::long_:
        if (d.type() != dk::long_ && d.type() != dk::int_) return mismatch(s, d);
        put_varint(out, d.as_long());
        return {};
    case type::float_:
        if (d.type() != dk::float_ && d.type() != dk::double_) return mismatch(s, d);
        put_le(out, d.as_float());
        return {};
    case type::double_:
        if (d.type() != dk::float_ && d.type() != dk::double_) return mismatch(s, d);
        put_le(out, d.as_double());
        return {};
    case type::bytes:
    case type::string:
        if (d.type() != dk::bytes && d.type() != dk::string) return mismatch(s, d);
        put_string(out, d.as_string());
        return {};
    case type::fixed:
        if (d.type() != dk::fixed && d.type() != dk::bytes) return mismatch(s, d);
        if (d.as_string().size() != s.fixed_size)
            return fail(errc::invalid_argument, "fixed {} needs {} bytes, got {}", s.name,
                        s.fixed_size, d.as_string().size());
        out.insert(out.end(), d.as_string().begin(), d.as_string().end());
        return {};
    case type::enum_:
        if (d.type() != dk::enum_) return mismatch(s, d);
        if (d.as_int() < 0 || static_cast<size_t>(d.as_int()) >= s.symbols.size())
            return fail(errc::invalid_argument, "enum {} has no symbol {}", s.name, d.as_int());
        put_varint(out, d.as_int());
        return {};
    case type::array:
        if (d.type() != dk::array) return mismatch(s, d);
        if (!d.children().empty()) {
            put_varint(out, static_cast<int64_t>(d.children().size()));
            for (size_t i = 0; i < d.children().size(); ++i)
                FLOE_TRY_CTX(encode(*s.items, d.children()[i], out), "item {}", i);
        }
        out.push_back(0);
        return {};
    case type::map:
        if (d.type() != dk::map) return mismatch(s, d);
        if (!d.children().empty()) {
            put_varint(out, static_cast<int64_t>(d.children().size()));
            for (size_t i = 0; i < d.children().size(); ++i) {
                put_string(out, d.keys()[i]);
                FLOE_TRY_CTX(encode(*s.items, d.children()[i], out), "key {}", d.keys()[i]);
            }
        }
        out.push_back(0);
        return {};
    case type::union_: {
        size_t b = FLOE_TRY(resolve_branch(s, d));
        put_varint(out, static_cast<int64_t>(b));
        return encode(*s.branches[b], d, out);
    }
    case type::record:
        if (d.type() != dk::record) return mismatch(s, d);
        if (d.children().size() != s.fields.size())
            return fail(errc::invalid_argument, "record {} has {} fields, value has {}", s.name,
                        s.fields.size(), d.children().size());
        for (size_t i = 0; i < s.fields.size(); ++i)
            FLOE_TRY_CTX(encode(*s.fields[i].type, d.children()[i], out), "field {}",
                         s.fields[i].name);
        return {};
    }
    return fail(errc::internal, "unknown schema kind");
}

namespace {

result<int64_t> read_length(byte_reader& r, const char* what) {
    auto n = FLOE_TRY(read_varint(r));
    if (n < 0) return fail(errc::corrupt, "negative {} length {} at offset {}", what, n, r.position());
    if (static_cast<uint64_t>(n) > r.remaining())
        return fail(errc::corrupt, "{} length {} at offset {} exceeds the {} bytes left", what, n,
                    r.position(), r.remaining());
    return n;
}

// Reads one block header of an array or map: the item count (0 ends), checked so the claimed
// items fit in the bytes left.
result<int64_t> read_block_count(byte_reader& r, size_t min_item, decode_budget& budget) {
    auto count = FLOE_TRY(read_varint(r));
    if (count < 0) {
        if (count == std::numeric_limits<int64_t>::min())
            return fail(errc::corrupt, "block count overflow at offset {}", r.position());
        count = -count;
        FLOE_TRY(read_length(r, "block"));  // byte size, only a skipping hint for us
    }
    if (count == 0) return count;
    if (min_item == 0) {
        if (static_cast<uint64_t>(count) > budget.zero_size_items)
            return fail(errc::corrupt, "block of {} zero-size items at offset {} exceeds the limit",
                        count, r.position());
        budget.zero_size_items -= static_cast<size_t>(count);
    } else if (static_cast<uint64_t>(count) > r.remaining() / min_item) {
        return fail(errc::corrupt, "block claims {} items at offset {}, only {} bytes left", count,
                    r.position(), r.remaining());
    }
    return count;
}

result<datum> decode_at(const node& s, byte_reader& r, decode_budget& budget, int depth) {
    if (depth > budget.max_depth)
        return fail(errc::corrupt, "value nested deeper than {} levels", budget.max_depth);
    switch (s.kind) {
    case type::null: return datum::null();
    case type::boolean: {
        auto b = FLOE_TRY(r.u8());
        if (b > 1) return fail(errc::corrupt, "boolean byte {} at offset {}", b, r.position() - 1);
        return datum::boolean(b == 1);
    }
    case type::int_: return datum::int32(FLOE_TRY(read_varint32(r)));
    case type::long_: return datum::int64(FLOE_TRY(read_varint(r)));
    case type::float_: return datum::float32(FLOE_TRY(r.le<float>()));
    case type::double_: return datum::float64(FLOE_TRY(r.le<double>()));
    case type::bytes:
    case type::string: {
        auto n = FLOE_TRY(read_length(r, s.kind == type::bytes ? "bytes" : "string"));
        auto v = as_chars(FLOE_TRY(r.bytes(static_cast<size_t>(n))));
        return s.kind == type::bytes ? datum::bytes(v) : datum::string(v);
    }
    case type::fixed:
        return datum::fixed(as_chars(FLOE_TRY(r.bytes(s.fixed_size))));
    case type::enum_: {
        auto i = FLOE_TRY(read_varint32(r));
        if (i < 0 || static_cast<size_t>(i) >= s.symbols.size())
            return fail(errc::corrupt, "enum {} index {} out of range", s.name, i);
        return datum::enumeration(i);
    }
    case type::array:
    case type::map: {
        bool is_map = s.kind == type::map;
        datum out = is_map ? datum::map() : datum::array();
        size_t min_item = s.items->min_encoded_size + (is_map ? 1 : 0);
        for (;;) {
            auto count = FLOE_TRY(read_block_count(r, min_item, budget));
            if (count == 0) break;
            out.children().reserve(out.children().size() + static_cast<size_t>(count));
            for (int64_t i = 0; i < count; ++i) {
                if (is_map) {
                    auto n = FLOE_TRY(read_length(r, "map key"));
                    std::string key(as_chars(FLOE_TRY(r.bytes(static_cast<size_t>(n)))));
                    out.put(std::move(key), FLOE_TRY(decode_at(*s.items, r, budget, depth + 1)));
                } else {
                    out.push(FLOE_TRY(decode_at(*s.items, r, budget, depth + 1)));
                }
            }
        }
        return out;
    }
    case type::union_: {
        auto b = FLOE_TRY(read_varint(r));
        if (b < 0 || static_cast<uint64_t>(b) >= s.branches.size())
            return fail(errc::corrupt, "union branch {} out of range at offset {}", b, r.position());
        auto v = FLOE_TRY(decode_at(*s.branches[static_cast<size_t>(b)], r, budget, depth + 1));
        v.set_branch(static_cast<uint32_t>(b));
        return v;
    }
    case type::record: {
        std::vector<datum> fields;
        fields.reserve(s.fields.size());
        for (auto& f : s.fields)
            fields.push_back(FLOE_TRY_CTX(decode_at(*f.type, r, budget, depth + 1), "field {}", f.name));
        return datum::record(std::move(fields));
    }
    }
    return fail(errc::internal, "unknown schema kind");
}

} // namespace

result<datum> decode(const node& s, byte_reader& r, decode_budget& budget) {
    return decode_at(s, r, budget, 0);
}

} // namespace floe::avro
