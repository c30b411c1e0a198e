#include "lake/typed_rows.h"

#include "lake/plan_support.h"
#include "lake/text_checks.h"
#include "schema/iceberg_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace floe::lake {

using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using parquet::logical_type;
using parquet::physical_type;
using parquet::repetition;
using parquet::schema_node;
using schema::avro_kind;
using schema::avro_node;

// ---- Parquet schema of Iceberg columns --------------------------------------------------------

namespace {

schema_node node_of(std::string name, int32_t id, bool required, const type& t) {
    auto rep = required ? repetition::required : repetition::optional;
    auto leaf = [&](physical_type p, logical_type l = logical_type::none) {
        return parquet::leaf_node(std::move(name), id, rep, p, l);
    };
    switch (t.id) {
    case type_id::boolean: return leaf(physical_type::boolean);
    case type_id::int_: return leaf(physical_type::int32);
    case type_id::long_: return leaf(physical_type::int64);
    case type_id::float_: return leaf(physical_type::float_);
    case type_id::double_: return leaf(physical_type::double_);
    case type_id::decimal: return parquet::decimal_node(std::move(name), id, rep, t.precision, t.scale);
    case type_id::date: return leaf(physical_type::int32, logical_type::date);
    case type_id::time: {
        auto n = leaf(physical_type::int64, logical_type::time_micros);
        n.utc = false; // Iceberg's time is a time of day without zone
        return n;
    }
    case type_id::timestamp:
    case type_id::timestamptz: {
        auto n = leaf(physical_type::int64, logical_type::timestamp_micros);
        n.utc = t.id == type_id::timestamptz;
        return n;
    }
    case type_id::string: return leaf(physical_type::byte_array, logical_type::string);
    case type_id::uuid: return parquet::fixed_node(std::move(name), id, rep, 16, logical_type::uuid);
    case type_id::fixed: return parquet::fixed_node(std::move(name), id, rep, static_cast<int32_t>(t.length));
    case type_id::binary: return leaf(physical_type::byte_array);
    case type_id::struct_: {
        std::vector<schema_node> children;
        for (auto& f : t.fields) children.push_back(parquet_node(f));
        return parquet::group_node(std::move(name), id, rep, std::move(children));
    }
    case type_id::list:
        return parquet::list_node(std::move(name), id, rep,
                                  node_of("element", t.element_id, t.element_required, *t.element));
    case type_id::map:
        return parquet::map_node(std::move(name), id, rep, node_of("key", t.key_id, true, *t.key),
                                 node_of("value", t.value_id, t.value_required, *t.value));
    }
    return leaf(physical_type::byte_array);
}

} // namespace

schema_node parquet_node(const nested_field& f) { return node_of(f.name, f.id, f.required, *f.field_type); }

std::vector<schema_node> parquet_nodes(const std::vector<nested_field>& fields) {
    std::vector<schema_node> out;
    out.reserve(fields.size());
    for (auto& f : fields) out.push_back(parquet_node(f));
    return out;
}

schema_node parquet_schema_node(const iceberg::schema& s) {
    return parquet::group_node("table", std::nullopt, repetition::required, parquet_nodes(s.fields));
}

size_t leaf_count(const type& t) {
    switch (t.id) {
    case type_id::struct_: {
        size_t n = 0;
        for (auto& f : t.fields) n += leaf_count(*f.field_type);
        return n;
    }
    case type_id::list: return leaf_count(*t.element);
    case type_id::map: return leaf_count(*t.key) + leaf_count(*t.value);
    default: return 1;
    }
}

// ---- wire format -----------------------------------------------------------------------------

std::expected<wire_value, decode_failure> parse_confluent(std::string_view value) {
    if (value.empty() || value[0] != 0)
        return std::unexpected(decode_failure{
            decode_reason::bad_magic_byte,
            value.empty() ? std::string("empty value")
                          : fmt::format("magic byte 0x{:02x}, expected 0x00", static_cast<uint8_t>(value[0])),
            std::nullopt});
    if (value.size() < 5)
        return std::unexpected(decode_failure{decode_reason::decode_error,
                                              fmt::format("{} bytes: the 5-byte header is cut", value.size()),
                                              std::nullopt});
    auto b = reinterpret_cast<const uint8_t*>(value.data());
    uint32_t id = (uint32_t{b[1]} << 24) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 8) | b[4];
    return wire_value{static_cast<int32_t>(id), value.substr(5)};
}

// ---- the plan --------------------------------------------------------------------------------

enum class op_kind : uint8_t {
    // leaves: <avro encoding>_<column value>
    boolean,
    int_i32,
    int_i64,
    int_millis_i64, // time-millis -> time (micros)
    long_i64,
    long_millis_i64, // timestamp-millis -> micros
    float_f32,
    float_f64,
    double_f64,
    string_bytes, // UTF-8 checked
    bytes_bytes,
    enum_string,
    uuid_string,  // 36-character text -> 16 bytes
    fixed_fixed,
    fixed_bytes,
    decimal, // bytes or fixed -> the column's decimal representation
    // structure
    null_,  // a union's null branch, or a field of type null
    skip,   // a writer field the table has no column for (type null only): read nothing
    record,
    union_,
    array,
    map,
};

struct avro_row_plan::op {
    op_kind kind = op_kind::null_;
    const avro_node* avro = nullptr; // the writer node (enum symbols, fixed size, decimal source)
    uint32_t col = 0;                // leaves: file column
    uint32_t first = 0, count = 0;   // file columns of the table node this op fills
    int16_t null_def = 0;            // definition level written to every column when null
    int16_t present_def = 0;         // the table node's level when present
    int16_t elem_rep = 0;            // array/map: repetition level of the 2nd+ entries
    physical_type dec_phys = physical_type::int32; // decimal: the column's representation
    int32_t dec_len = 0;             // decimal: fixed length of the column
    int32_t dec_precision = 0;       // decimal: the column's precision
    bool union_struct = false;       // union: branches are fields of a struct
    int32_t null_branch = -1;        // union
    uint32_t min_bytes = 0;          // fewest bytes a value takes
    std::vector<op> children;        // record fields (writer order), union branches,
                                     // array [element], map [key, value]
    std::vector<std::pair<uint32_t, uint32_t>> absent; // record: columns of table fields the
                                                       // writer lacks (first, count)
};

namespace {

using op = avro_row_plan::op;

using detail::plan_error;

struct builder {
    uint32_t base; // file column of table leaf 0

    std::expected<op, plan_error> value(const avro_node& w, const type& t, uint32_t first, int16_t present_def,
                                        int16_t rep, const std::string& path) {
        op o;
        o.avro = &w;
        o.first = base + first;
        o.count = static_cast<uint32_t>(leaf_count(t));
        o.present_def = present_def;
        o.null_def = present_def - 1;
        if (w.kind == avro_kind::union_) {
            o.kind = op_kind::union_;
            o.min_bytes = 1;
            std::vector<const avro_node*> non_null;
            for (auto* b : w.branches)
                if (b->kind != avro_kind::null) non_null.push_back(b);
            if (non_null.size() >= 2) {
                if (t.id != type_id::struct_) return incompatible(path, w, t);
                o.union_struct = true;
            }
            for (size_t i = 0; i < w.branches.size(); ++i) {
                auto* b = w.branches[i];
                if (b->kind == avro_kind::null) {
                    o.null_branch = static_cast<int32_t>(i);
                    op n;
                    n.kind = op_kind::null_;
                    o.children.push_back(std::move(n));
                    continue;
                }
                if (!o.union_struct) {
                    auto c = value(*b, t, first, present_def, rep, path);
                    if (!c) return c;
                    o.children.push_back(std::move(*c));
                    continue;
                }
                auto name = schema::avro_union_branch_name(w, *b);
                uint32_t off = 0;
                const nested_field* f = nullptr;
                for (auto& sf : t.fields) {
                    if (sf.name == name) {
                        f = &sf;
                        break;
                    }
                    off += static_cast<uint32_t>(leaf_count(*sf.field_type));
                }
                if (!f)
                    return std::unexpected(plan_error{decode_reason::incompatible_schema,
                                                      fmt::format("field `{}`: union branch {} has no column", path, name)});
                auto c = value(*b, *f->field_type, first + off, static_cast<int16_t>(present_def + 1), rep,
                               path + "." + name);
                if (!c) return c;
                o.children.push_back(std::move(*c));
            }
            return o;
        }
        switch (w.kind) {
        case avro_kind::null: o.kind = op_kind::null_; return o;
        case avro_kind::record: {
            if (t.id != type_id::struct_) return incompatible(path, w, t);
            o.kind = op_kind::record;
            return record(w, t.fields, first, present_def, rep, path, std::move(o));
        }
        case avro_kind::array: {
            if (t.id != type_id::list) return incompatible(path, w, t);
            o.kind = op_kind::array;
            o.min_bytes = 1;
            o.elem_rep = static_cast<int16_t>(rep + 1);
            auto e = value(*w.items, *t.element, first, static_cast<int16_t>(present_def + (t.element_required ? 1 : 2)),
                           o.elem_rep, path + ".element");
            if (!e) return e;
            o.children.push_back(std::move(*e));
            return o;
        }
        case avro_kind::map: {
            if (t.id != type_id::map || t.key->id != type_id::string) return incompatible(path, w, t);
            o.kind = op_kind::map;
            o.min_bytes = 1;
            o.elem_rep = static_cast<int16_t>(rep + 1);
            op k;
            k.kind = op_kind::string_bytes;
            k.col = base + first;
            k.first = k.col;
            k.count = 1;
            k.present_def = static_cast<int16_t>(present_def + 1);
            k.null_def = present_def;
            k.min_bytes = 1;
            auto v = value(*w.items, *t.value, first + 1, static_cast<int16_t>(present_def + (t.value_required ? 1 : 2)),
                           o.elem_rep, path + ".value");
            if (!v) return v;
            o.children.push_back(std::move(k));
            o.children.push_back(std::move(*v));
            return o;
        }
        default: return leaf(w, t, first, path, std::move(o));
        }
    }

    std::expected<op, plan_error> record(const avro_node& w, const std::vector<nested_field>& fields, uint32_t first,
                                         int16_t present_def, int16_t rep, const std::string& path, op o) {
        o.kind = op_kind::record;
        std::vector<bool> used(fields.size(), false);
        for (auto& wf : w.fields) {
            std::string p = path.empty() ? wf.name : path + "." + wf.name;
            uint32_t off = 0;
            size_t idx = fields.size();
            for (size_t i = 0; i < fields.size(); ++i) {
                if (fields[i].name == wf.name) {
                    idx = i;
                    break;
                }
                off += static_cast<uint32_t>(leaf_count(*fields[i].field_type));
            }
            if (idx == fields.size()) {
                auto m = schema::avro_type_to_iceberg(*wf.type);
                if (m && !m->type) { // a null field: no column, no bytes
                    op s;
                    s.kind = op_kind::skip;
                    s.avro = wf.type;
                    o.children.push_back(std::move(s));
                    continue;
                }
                return std::unexpected(
                    plan_error{decode_reason::incompatible_schema, fmt::format("field `{}` has no column in the table", p)});
            }
            used[idx] = true;
            const auto& tf = fields[idx];
            auto c = value(*wf.type, *tf.field_type, first + off,
                           static_cast<int16_t>(present_def + (tf.required ? 0 : 1)), rep, p);
            if (!c) return c;
            if (tf.required && (c->kind == op_kind::union_ || c->kind == op_kind::null_))
                return std::unexpected(plan_error{decode_reason::incompatible_schema,
                                                  fmt::format("field `{}` is nullable; its column is required", p)});
            o.min_bytes += c->min_bytes;
            o.children.push_back(std::move(*c));
        }
        uint32_t off = 0;
        for (size_t i = 0; i < fields.size(); ++i) {
            auto n = static_cast<uint32_t>(leaf_count(*fields[i].field_type));
            if (!used[i]) {
                if (fields[i].required)
                    return std::unexpected(plan_error{
                        decode_reason::incompatible_schema,
                        fmt::format("required column `{}` is absent from the writer schema", fields[i].name)});
                o.absent.emplace_back(base + first + off, n);
            }
            off += n;
        }
        return o;
    }

    std::expected<op, plan_error> leaf(const avro_node& w, const type& t, uint32_t first, const std::string& path, op o) {
        o.col = base + first;
        auto m = schema::avro_type_to_iceberg(w);
        if (!m || !m->type) return incompatible(path, w, t);
        const type& wt = *m->type;
        auto kind = w.kind;
        std::string_view lname = w.logical ? std::string_view(w.logical->name) : std::string_view();
        auto is = [&](type_id a, type_id b) { return wt.id == a && t.id == b; };
        if (t.id == type_id::decimal) {
            if (wt.id != type_id::decimal) return incompatible(path, w, t);
            if (wt.scale != t.scale)
                return std::unexpected(plan_error{
                    decode_reason::decode_error,
                    fmt::format("field `{}`: decimal scale {} cannot be written to a column of scale {}", path,
                                wt.scale, t.scale)});
            if (wt.precision > t.precision) return incompatible(path, w, t);
            o.kind = op_kind::decimal;
            o.dec_precision = t.precision;
            if (t.precision <= 9)
                o.dec_phys = physical_type::int32;
            else if (t.precision <= 18)
                o.dec_phys = physical_type::int64;
            else {
                o.dec_phys = physical_type::fixed_len_byte_array;
                o.dec_len = parquet::decimal_fixed_length(t.precision);
            }
            o.min_bytes = kind == avro_kind::fixed ? static_cast<uint32_t>(w.fixed_size) : 1;
            return o;
        }
        if (wt.id == t.id) {
            switch (t.id) {
            case type_id::boolean: o.kind = op_kind::boolean; o.min_bytes = 1; return o;
            case type_id::int_:
            case type_id::date: o.kind = op_kind::int_i32; o.min_bytes = 1; return o;
            case type_id::long_: o.kind = op_kind::long_i64; o.min_bytes = 1; return o;
            case type_id::time:
                o.kind = kind == avro_kind::int_ ? op_kind::int_millis_i64 : op_kind::long_i64;
                o.min_bytes = 1;
                return o;
            case type_id::timestamp:
            case type_id::timestamptz:
                o.kind = lname.ends_with("millis") ? op_kind::long_millis_i64 : op_kind::long_i64;
                o.min_bytes = 1;
                return o;
            case type_id::float_: o.kind = op_kind::float_f32; o.min_bytes = 4; return o;
            case type_id::double_: o.kind = op_kind::double_f64; o.min_bytes = 8; return o;
            case type_id::string:
                o.kind = kind == avro_kind::enum_ ? op_kind::enum_string : op_kind::string_bytes;
                o.min_bytes = 1;
                return o;
            case type_id::binary: o.kind = op_kind::bytes_bytes; o.min_bytes = 1; return o;
            case type_id::uuid:
                o.kind = kind == avro_kind::string ? op_kind::uuid_string : op_kind::fixed_fixed;
                o.min_bytes = kind == avro_kind::string ? 1 : 16;
                return o;
            case type_id::fixed:
                if (wt.length != t.length) return incompatible(path, w, t);
                o.kind = op_kind::fixed_fixed;
                o.min_bytes = t.length;
                return o;
            default: break;
            }
        }
        if (is(type_id::int_, type_id::long_)) {
            o.kind = op_kind::int_i64;
            o.min_bytes = 1;
            return o;
        }
        if (is(type_id::float_, type_id::double_)) {
            o.kind = op_kind::float_f64;
            o.min_bytes = 4;
            return o;
        }
        return incompatible(path, w, t);
    }

    static std::unexpected<plan_error> incompatible(const std::string& path, const avro_node& w, const type& t) {
        std::string wt = std::string(schema::to_string(w.kind));
        if (auto m = schema::avro_type_to_iceberg(w); m && m->type) wt = schema::describe(*m->type);
        return std::unexpected(plan_error{decode_reason::incompatible_schema,
                                          fmt::format("field `{}`: {} -> {}", path, wt, schema::describe(t))});
    }
};

// ---- the walk --------------------------------------------------------------------------------

constexpr int max_depth = 256;              // nesting of values (skip of recursive types)
constexpr uint64_t max_items = 1u << 22;    // array/map entries per record

struct cursor {
    const uint8_t* p;
    const uint8_t* end;
    uint64_t items = 0;
    int depth = 0;
    std::string err;
    size_t left() const noexcept { return static_cast<size_t>(end - p); }
};

bool bad(cursor& c, std::string msg) {
    if (c.err.empty()) c.err = std::move(msg);
    return false;
}

[[gnu::always_inline]] inline bool read_long(cursor& c, int64_t& out) {
    uint64_t v = 0;
    int shift = 0;
    while (true) {
        if (c.p == c.end) [[unlikely]]
            return bad(c, "value cut inside a varint");
        uint8_t b = *c.p++;
        v |= uint64_t{b & 0x7Fu} << shift;
        if (!(b & 0x80)) break;
        shift += 7;
        if (shift >= 64) [[unlikely]]
            return bad(c, "varint longer than 10 bytes");
    }
    out = static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
    return true;
}

[[gnu::always_inline]] inline bool read_int(cursor& c, int64_t& out) {
    if (!read_long(c, out)) return false;
    if (out < INT32_MIN || out > INT32_MAX) [[unlikely]]
        return bad(c, fmt::format("int {} out of range", out));
    return true;
}

[[gnu::always_inline]] inline bool read_len(cursor& c, std::string_view& out) {
    int64_t n;
    if (!read_long(c, n)) return false;
    if (n < 0 || static_cast<uint64_t>(n) > c.left()) [[unlikely]]
        return bad(c, fmt::format("length {} with {} bytes left", n, c.left()));
    out = std::string_view(reinterpret_cast<const char*>(c.p), static_cast<size_t>(n));
    c.p += n;
    return true;
}

bool read_fixed(cursor& c, size_t n, std::string_view& out) {
    if (n > c.left()) return bad(c, fmt::format("fixed of {} bytes with {} left", n, c.left()));
    out = std::string_view(reinterpret_cast<const char*>(c.p), n);
    c.p += n;
    return true;
}

// Big-endian two's complement `b` (any length; empty is 0) as the column's representation.
// Returns false when the value does not fit.
struct decimal_out {
    int64_t v = 0;
    char fixed[64];
};
bool convert_decimal(std::string_view b, const op& o, decimal_out& out) {
    auto u = reinterpret_cast<const uint8_t*>(b.data());
    size_t n = b.size();
    bool neg = n && (u[0] & 0x80);
    uint8_t sign = neg ? 0xFF : 0x00;
    // Drop sign bytes that only repeat the sign (keeping one that carries it).
    size_t i = 0;
    while (n - i > 1 && u[i] == sign && ((u[i + 1] & 0x80) == (sign & 0x80))) ++i;
    size_t sig = n - i;
    if (o.dec_phys == physical_type::fixed_len_byte_array) {
        auto len = static_cast<size_t>(o.dec_len);
        if (sig > len || len > sizeof(out.fixed)) return false;
        std::memset(out.fixed, sign, len - sig);
        if (sig) std::memcpy(out.fixed + (len - sig), u + i, sig);
        return true;
    }
    if (sig > 8) return false;
    uint64_t x = neg ? ~uint64_t{0} : 0;
    for (size_t k = i; k < n; ++k) x = (x << 8) | u[k];
    auto v = static_cast<int64_t>(x);
    int64_t limit = 1;
    for (int k = 0; k < o.dec_precision && k < 18; ++k) limit *= 10;
    if (v >= limit || v <= -limit) return false;
    out.v = v;
    return true;
}

inline void fill_nulls(parquet::file_writer& w, uint32_t first, uint32_t count, int16_t def, int16_t rep) {
    for (uint32_t c = first; c < first + count; ++c) w.column(c).add_null(def, rep);
}

// Skips one value of `n` (a writer field with no column); validates what it reads.
bool skip(cursor& c, const avro_node& n) {
    if (++c.depth > max_depth) return bad(c, "values nested too deep");
    int64_t x;
    std::string_view s;
    bool ok = true;
    switch (n.kind) {
    case avro_kind::null: break;
    case avro_kind::boolean: ok = read_fixed(c, 1, s); break;
    case avro_kind::int_:
    case avro_kind::long_:
    case avro_kind::enum_: ok = read_long(c, x); break;
    case avro_kind::float_: ok = read_fixed(c, 4, s); break;
    case avro_kind::double_: ok = read_fixed(c, 8, s); break;
    case avro_kind::bytes:
    case avro_kind::string: ok = read_len(c, s); break;
    case avro_kind::fixed: ok = read_fixed(c, n.fixed_size, s); break;
    case avro_kind::record:
        for (auto& f : n.fields)
            if (!(ok = skip(c, *f.type))) break;
        break;
    case avro_kind::union_:
        ok = read_long(c, x) && (x >= 0 && static_cast<size_t>(x) < n.branches.size() ? skip(c, *n.branches[x])
                                                                                    : bad(c, "bad union index"));
        break;
    case avro_kind::array:
    case avro_kind::map:
        while (ok) {
            if (!read_long(c, x)) return false;
            if (x == 0) break;
            if (x < 0) {
                int64_t sz;
                if (x == INT64_MIN || !read_long(c, sz)) return bad(c, "bad block");
                x = -x;
            }
            c.items += static_cast<uint64_t>(x);
            if (c.items > max_items) return bad(c, "too many array or map entries");
            for (int64_t k = 0; k < x && ok; ++k) {
                if (n.kind == avro_kind::map) ok = read_len(c, s);
                ok = ok && skip(c, *n.items);
            }
        }
        break;
    }
    --c.depth;
    return ok;
}

template<bool W>
bool walk(const op& o, cursor& c, int16_t rep, parquet::file_writer* w) {
    int64_t x;
    std::string_view s;
    switch (o.kind) {
    case op_kind::boolean:
        if (!read_fixed(c, 1, s)) return false;
        if (static_cast<uint8_t>(s[0]) > 1) return bad(c, "boolean byte not 0 or 1");
        if constexpr (W) w->column(o.col).add_bool(s[0] != 0, rep);
        return true;
    case op_kind::int_i32:
        if (!read_int(c, x)) return false;
        if constexpr (W) w->column(o.col).add_i32(static_cast<int32_t>(x), rep);
        return true;
    case op_kind::int_i64:
        if (!read_int(c, x)) return false;
        if constexpr (W) w->column(o.col).add_i64(x, rep);
        return true;
    case op_kind::int_millis_i64:
        if (!read_int(c, x)) return false;
        if constexpr (W) w->column(o.col).add_i64(x * 1000, rep);
        return true;
    case op_kind::long_i64:
        if (!read_long(c, x)) return false;
        if constexpr (W) w->column(o.col).add_i64(x, rep);
        return true;
    case op_kind::long_millis_i64:
        if (!read_long(c, x)) return false;
        if (x > INT64_MAX / 1000 || x < INT64_MIN / 1000) return bad(c, fmt::format("timestamp-millis {} overflows micros", x));
        if constexpr (W) w->column(o.col).add_i64(x * 1000, rep);
        return true;
    case op_kind::float_f32:
    case op_kind::float_f64: {
        if (!read_fixed(c, 4, s)) return false;
        if constexpr (W) {
            uint32_t u;
            std::memcpy(&u, s.data(), 4);
            if constexpr (std::endian::native == std::endian::big) u = std::byteswap(u);
            float f = std::bit_cast<float>(u);
            if (o.kind == op_kind::float_f32)
                w->column(o.col).add_f32(f, rep);
            else
                w->column(o.col).add_f64(f, rep);
        }
        return true;
    }
    case op_kind::double_f64:
        if (!read_fixed(c, 8, s)) return false;
        if constexpr (W) {
            uint64_t u;
            std::memcpy(&u, s.data(), 8);
            if constexpr (std::endian::native == std::endian::big) u = std::byteswap(u);
            w->column(o.col).add_f64(std::bit_cast<double>(u), rep);
        }
        return true;
    case op_kind::string_bytes:
        if (!read_len(c, s)) return false;
        if constexpr (!W) {
            if (!valid_utf8(s)) return bad(c, "string is not valid UTF-8");
        } else {
            w->column(o.col).add_bytes(s, rep);
        }
        return true;
    case op_kind::bytes_bytes:
        if (!read_len(c, s)) return false;
        if constexpr (W) w->column(o.col).add_bytes(s, rep);
        return true;
    case op_kind::enum_string:
        if (!read_int(c, x)) return false;
        if (x < 0 || static_cast<size_t>(x) >= o.avro->symbols.size())
            return bad(c, fmt::format("enum index {} of {} symbols", x, o.avro->symbols.size()));
        if constexpr (W) w->column(o.col).add_bytes(o.avro->symbols[static_cast<size_t>(x)], rep);
        return true;
    case op_kind::uuid_string: {
        if (!read_len(c, s)) return false;
        char u[16];
        if (!parse_uuid(s, u)) return bad(c, "uuid is not 36-character text");
        if constexpr (W) w->column(o.col).add_fixed(std::string_view(u, 16), rep);
        return true;
    }
    case op_kind::fixed_fixed:
    case op_kind::fixed_bytes:
        if (!read_fixed(c, o.avro->fixed_size, s)) return false;
        if constexpr (W) {
            if (o.kind == op_kind::fixed_fixed)
                w->column(o.col).add_fixed(s, rep);
            else
                w->column(o.col).add_bytes(s, rep);
        }
        return true;
    case op_kind::decimal: {
        if (o.avro->kind == avro_kind::fixed) {
            if (!read_fixed(c, o.avro->fixed_size, s)) return false;
        } else if (!read_len(c, s)) {
            return false;
        }
        decimal_out d;
        if (!convert_decimal(s, o, d))
            return bad(c, fmt::format("decimal of {} bytes does not fit decimal({})", s.size(), o.dec_precision));
        if constexpr (W) {
            auto& col = w->column(o.col);
            if (o.dec_phys == physical_type::int32)
                col.add_i32(static_cast<int32_t>(d.v), rep);
            else if (o.dec_phys == physical_type::int64)
                col.add_i64(d.v, rep);
            else
                col.add_fixed(std::string_view(d.fixed, static_cast<size_t>(o.dec_len)), rep);
        }
        return true;
    }
    case op_kind::null_:
        if constexpr (W) fill_nulls(*w, o.first, o.count, o.null_def, rep);
        return true;
    case op_kind::skip: return skip(c, *o.avro);
    case op_kind::record:
        for (auto& ch : o.children)
            if (!walk<W>(ch, c, rep, w)) return false;
        if constexpr (W)
            for (auto& [first, count] : o.absent) fill_nulls(*w, first, count, o.present_def, rep);
        return true;
    case op_kind::union_: {
        if (!read_long(c, x)) return false;
        if (x < 0 || static_cast<size_t>(x) >= o.children.size())
            return bad(c, fmt::format("union index {} of {} branches", x, o.children.size()));
        const op& b = o.children[static_cast<size_t>(x)];
        if (b.kind == op_kind::null_) {
            if constexpr (W) fill_nulls(*w, o.first, o.count, o.null_def, rep);
            return true;
        }
        if (!walk<W>(b, c, rep, w)) return false;
        if constexpr (W) {
            if (o.union_struct) { // the other branches' fields are null in a present struct
                fill_nulls(*w, o.first, b.first - o.first, o.present_def, rep);
                fill_nulls(*w, b.first + b.count, o.first + o.count - (b.first + b.count), o.present_def, rep);
            }
        }
        return true;
    }
    case op_kind::array:
    case op_kind::map: {
        if (++c.depth > max_depth) return bad(c, "values nested too deep");
        bool any = false;
        int16_t r = rep;
        uint32_t min_entry = 0;
        for (auto& ch : o.children) min_entry += ch.min_bytes;
        while (true) {
            if (!read_long(c, x)) return false;
            if (x == 0) break;
            if (x < 0) {
                int64_t sz;
                if (x == INT64_MIN) return bad(c, "bad block count");
                if (!read_long(c, sz)) return false;
                if (sz < 0 || static_cast<uint64_t>(sz) > c.left()) return bad(c, "bad block size");
                x = -x;
            }
            if (min_entry && static_cast<uint64_t>(x) > c.left() / min_entry)
                return bad(c, fmt::format("{} entries cannot fit in {} bytes", x, c.left()));
            c.items += static_cast<uint64_t>(x);
            if (c.items > max_items) return bad(c, "too many array or map entries");
            for (int64_t k = 0; k < x; ++k) {
                for (auto& ch : o.children)
                    if (!walk<W>(ch, c, r, w)) return false;
                r = o.elem_rep;
                any = true;
            }
        }
        if constexpr (W)
            if (!any) fill_nulls(*w, o.first, o.count, o.present_def, rep); // present, empty
        --c.depth;
        return true;
    }
    }
    return bad(c, "unknown op");
}

} // namespace

avro_row_plan::~avro_row_plan() = default;

std::expected<std::shared_ptr<const avro_row_plan>, decode_failure>
avro_row_plan::make(const avro_node& root, const std::vector<nested_field>& table_fields, size_t first_column) {
    if (root.kind != avro_kind::record)
        return std::unexpected(decode_failure{decode_reason::incompatible_schema,
                                              fmt::format("the value schema is {}, not a record", schema::to_string(root.kind)),
                                              std::nullopt});
    // Recursive writer records are refused like the mapping refuses them.
    if (auto m = schema::avro_to_iceberg(root); !m)
        return std::unexpected(decode_failure{decode_reason::incompatible_schema, m.error().message(), std::nullopt});
    builder b{static_cast<uint32_t>(first_column)};
    op o;
    o.avro = &root;
    o.first = static_cast<uint32_t>(first_column);
    size_t n = 0;
    for (auto& f : table_fields) n += leaf_count(*f.field_type);
    o.count = static_cast<uint32_t>(n);
    auto r = b.record(root, table_fields, 0, 0, 0, "", std::move(o));
    if (!r) return std::unexpected(decode_failure{r.error().reason, std::move(r.error().detail), std::nullopt});
    std::shared_ptr<avro_row_plan> p(new avro_row_plan());
    p->_root = std::make_unique<op>(std::move(*r));
    p->_first_column = first_column;
    p->_num_columns = n;
    return p;
}

std::optional<std::string> avro_row_plan::validate(std::string_view payload) const {
    cursor c{reinterpret_cast<const uint8_t*>(payload.data()),
             reinterpret_cast<const uint8_t*>(payload.data()) + payload.size()};
    if (!walk<false>(*_root, c, 0, nullptr))
        return fmt::format("{} (at byte {} of {})", c.err, payload.size() - c.left(), payload.size());
    if (c.left()) return fmt::format("{} bytes left after the record", c.left());
    return std::nullopt;
}

void avro_row_plan::write(std::string_view payload, parquet::file_writer& w) const {
    cursor c{reinterpret_cast<const uint8_t*>(payload.data()),
             reinterpret_cast<const uint8_t*>(payload.data()) + payload.size()};
    bool ok = walk<true>(*_root, c, 0, &w);
    FLOE_ASSERT(ok, "a validated Avro record failed to decode");
}


// ---- decoder ---------------------------------------------------------------------------------

typed_decoder::typed_decoder(schema::registry_client& registry, std::vector<nested_field> table_fields,
                             size_t first_column)
    : _registry(registry), _fields(std::move(table_fields)), _first_column(first_column), _num_columns(0) {
    for (auto& f : _fields) _num_columns += leaf_count(*f.field_type);
}

result<decode_status> typed_decoder::decode(std::string_view value, parquet::file_writer& w) {
    decode_status st;
    auto h = parse_confluent(value);
    if (!h) {
        st.failure = std::move(h.error());
        return st;
    }
    st.schema_id = h->schema_id;
    auto it = _plans.find(h->schema_id);
    if (it == _plans.end()) {
        entry e;
        auto s = _registry.get_by_id(h->schema_id);
        if (!s) {
            if (s.error().code() != errc::not_found) return std::unexpected(std::move(s).error());
            e.failure = decode_failure{decode_reason::unknown_schema_id,
                                       fmt::format("schema id {} is not in the registry", h->schema_id), h->schema_id};
        } else if (!(*s)->avro()) {
            e.failure = decode_failure{decode_reason::decode_error,
                                       fmt::format("schema id {} is {}: only Avro values are decoded yet", h->schema_id,
                                                   schema::to_string((*s)->type())),
                                       h->schema_id};
        } else {
            auto p = avro_row_plan::make((*s)->avro()->root(), _fields, _first_column);
            if (p)
                e.plan = *p;
            else {
                e.failure = std::move(p.error());
                e.failure->schema_id = h->schema_id;
            }
        }
        // Unknown ids are not cached: the schema may be registered a moment later.
        if (e.failure && e.failure->reason == decode_reason::unknown_schema_id) {
            st.failure = std::move(e.failure);
            return st;
        }
        it = _plans.emplace(h->schema_id, std::move(e)).first;
    }
    if (it->second.failure) {
        st.failure = it->second.failure;
        return st;
    }
    if (auto err = it->second.plan->decode(h->payload, w))
        st.failure = decode_failure{decode_reason::decode_error, std::move(*err), h->schema_id};
    return st;
}

void typed_decoder::write_nulls(parquet::file_writer& w) const {
    fill_nulls(w, static_cast<uint32_t>(_first_column), static_cast<uint32_t>(_num_columns), 0, 0);
}

} // namespace floe::lake
