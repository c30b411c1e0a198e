#include "lake/typed_rows_protobuf.h"

#include "lake/plan_support.h"
#include "lake/text_checks.h"
#include "schema/iceberg_mapping.h"
#include "schema/protobuf_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace floe::lake {

namespace gp = google::protobuf;
using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using parquet::physical_type;

// ---- framing ---------------------------------------------------------------------------------

namespace {

bool read_raw_varint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p == end) return false;
        uint8_t b = *p++;
        if (shift == 63 && b > 1) return false; // the 10th byte holds bit 63 only
        v |= uint64_t{b & 0x7Fu} << shift;
        if (!(b & 0x80)) {
            out = v;
            return true;
        }
    }
    return false;
}

int64_t unzigzag(uint64_t z) {
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
}

} // namespace

std::expected<protobuf_framing, std::string> parse_message_indexes(std::string_view after_header) {
    auto p = reinterpret_cast<const uint8_t*>(after_header.data());
    auto end = p + after_header.size();
    uint64_t z;
    if (!read_raw_varint(p, end, z))
        return std::unexpected(std::string("message-index count cut or malformed"));
    int64_t n = unzigzag(z);
    if (n < 0 || n > 64)
        return std::unexpected(fmt::format("message-index count {} (0 to 64 allowed)", n));
    protobuf_framing f;
    if (n == 0) f.indexes.push_back(0);
    for (int64_t i = 0; i < n; ++i) {
        if (!read_raw_varint(p, end, z))
            return std::unexpected(std::string("message index cut or malformed"));
        int64_t x = unzigzag(z);
        if (x < 0 || x > INT32_MAX)
            return std::unexpected(fmt::format("message index {} is negative or too large", x));
        f.indexes.push_back(static_cast<int>(x));
    }
    f.payload = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(end - p));
    return f;
}

// ---- the plan --------------------------------------------------------------------------------

enum class pk : uint8_t {
    // scalar leaves, by wire decoding
    v_int32,
    v_int64,
    v_uint32,
    v_uint64,
    v_sint32,
    v_sint64,
    v_bool,
    v_enum,
    f_fixed32,
    f_sfixed32,
    f_float,
    f_fixed64,
    f_sfixed64,
    f_double,
    l_string,
    l_bytes,
    // length-delimited values with structure
    message,
    timestamp,
    duration,
    wrapper,
    map_entry,
    // fields with more than one value
    list,
    map,
    oneof,
};

enum class store : uint8_t { i32, i64, f32, f64, boolean, bytes, dec };

enum wire : uint8_t {
    wt_varint = 0,
    wt_i64 = 1,
    wt_len = 2,
    wt_sgroup = 3,
    wt_egroup = 4,
    wt_i32 = 5
};

struct protobuf_row_plan::op {
    pk kind = pk::message;
    store st = store::bytes;
    uint8_t wire = wt_len;    // the wire type of one value (a list: of its elements)
    bool packable = false;    // list: elements may come packed
    bool has_presence = true; // singular: null when absent (else the default is written)
    bool required = false;    // proto2 required: absent is a decode error
    int32_t number = 0;       // field number (0 for the root)
    uint16_t slot = 0;        // index in the containing message's slots
    uint32_t col = 0;         // leaves: file column
    uint32_t first = 0, count = 0;
    int16_t present_def = 0, null_def = 0;
    int16_t elem_rep = 0; // list/map: repetition level of the 2nd+ entries
    int32_t dec_len = 0;  // store::dec: FIXED length of the column
    const gp::EnumDescriptor* en = nullptr;
    std::vector<std::string_view> enum_names; // by number, for numbers 0..n (empty: not dense)
    std::string def_text; // store::bytes: the default (enum: its first value's name)
    std::string path;
    std::vector<op> children; // message: fields (oneofs as one child); oneof: branches;
                              // list: [element]; map: [entry]; map_entry: [key, value];
                              // wrapper: [the wrapped scalar]
    // message only
    uint16_t nslots = 0;
    std::vector<std::pair<int32_t, uint16_t>> by_number; // sorted: field number -> slot
    std::vector<int32_t> dense;                         // field number < dense.size() -> slot or -1
    std::vector<std::pair<uint16_t, int16_t>> slot_ref; // slot -> (child, oneof branch or -1)
    std::vector<std::pair<uint32_t, uint32_t>> absent;  // table columns no field writes
};

namespace {

using op = protobuf_row_plan::op;
using T = gp::FieldDescriptor;

using detail::find_field;
using detail::plan_error;

uint8_t wire_of(const gp::FieldDescriptor& f) {
    switch (f.type()) {
    case T::TYPE_FIXED64:
    case T::TYPE_SFIXED64:
    case T::TYPE_DOUBLE:
        return wt_i64;
    case T::TYPE_FIXED32:
    case T::TYPE_SFIXED32:
    case T::TYPE_FLOAT:
        return wt_i32;
    case T::TYPE_STRING:
    case T::TYPE_BYTES:
    case T::TYPE_MESSAGE:
        return wt_len;
    case T::TYPE_GROUP:
        return wt_sgroup;
    default:
        return wt_varint;
    }
}

pk leaf_kind(const gp::FieldDescriptor& f) {
    switch (f.type()) {
    case T::TYPE_INT32:
        return pk::v_int32;
    case T::TYPE_INT64:
        return pk::v_int64;
    case T::TYPE_UINT32:
        return pk::v_uint32;
    case T::TYPE_UINT64:
        return pk::v_uint64;
    case T::TYPE_SINT32:
        return pk::v_sint32;
    case T::TYPE_SINT64:
        return pk::v_sint64;
    case T::TYPE_BOOL:
        return pk::v_bool;
    case T::TYPE_ENUM:
        return pk::v_enum;
    case T::TYPE_FIXED32:
        return pk::f_fixed32;
    case T::TYPE_SFIXED32:
        return pk::f_sfixed32;
    case T::TYPE_FLOAT:
        return pk::f_float;
    case T::TYPE_FIXED64:
        return pk::f_fixed64;
    case T::TYPE_SFIXED64:
        return pk::f_sfixed64;
    case T::TYPE_DOUBLE:
        return pk::f_double;
    case T::TYPE_STRING:
        return pk::l_string;
    default:
        return pk::l_bytes;
    }
}

struct builder {
    uint32_t base;

    static std::unexpected<plan_error> incompatible(const std::string& path,
                                                    std::string_view writer, const type& t) {
        return std::unexpected(
            plan_error{decode_reason::incompatible_schema,
                       fmt::format("field `{}`: {} -> {}", path, writer, schema::describe(t))});
    }

    void place(op& o, const type& t, uint32_t first, int16_t present_def, const std::string& path) {
        o.first = base + first;
        o.col = o.first;
        o.count = static_cast<uint32_t>(leaf_count(t));
        o.present_def = present_def;
        o.null_def = static_cast<int16_t>(present_def - 1);
        o.path = path;
    }

    /// One scalar value of `f` into a column of type `t`.
    std::expected<op, plan_error> scalar(const gp::FieldDescriptor& f, const type& t,
                                         uint32_t first, int16_t present_def,
                                         const std::string& path) {
        op o;
        place(o, t, first, present_def, path);
        o.kind = leaf_kind(f);
        o.wire = wire_of(f);
        auto wt = schema::protobuf_scalar_type(f);
        if (!wt) return incompatible(path, "group", t);
        bool same = wt->id == t.id
                    && (t.id != type_id::decimal || (t.scale == 0 && t.precision >= wt->precision));
        bool widen = (wt->id == type_id::int_ && t.id == type_id::long_)
                     || (wt->id == type_id::float_ && t.id == type_id::double_);
        if (!same && !widen) return incompatible(path, schema::describe(*wt), t);
        switch (t.id) {
        case type_id::int_:
            o.st = store::i32;
            break;
        case type_id::long_:
            o.st = store::i64;
            break;
        case type_id::float_:
            o.st = store::f32;
            break;
        case type_id::double_:
            o.st = store::f64;
            break;
        case type_id::boolean:
            o.st = store::boolean;
            break;
        case type_id::decimal:
            o.st = store::dec;
            o.dec_len = parquet::decimal_fixed_length(t.precision);
            if (t.precision <= 18 || o.dec_len < 9 || o.dec_len > 64)
                return incompatible(path, schema::describe(*wt), t);
            break;
        default:
            o.st = store::bytes;
            break;
        }
        if (f.type() == T::TYPE_ENUM) {
            o.en = f.enum_type();
            int max = -1;
            for (int i = 0; i < o.en->value_count(); ++i)
                max = std::max(max, o.en->value(i)->number());
            if (max < 256) {
                o.enum_names.resize(static_cast<size_t>(max + 1));
                for (int i = 0; i < o.en->value_count(); ++i) { // the first name of a number, as
                    int n = o.en->value(i)->number();           // FindValueByNumber gives
                    if (n >= 0 && o.enum_names[static_cast<size_t>(n)].empty())
                        o.enum_names[static_cast<size_t>(n)] = o.en->value(i)->name();
                }
            }
            o.def_text = f.default_value_enum() ? f.default_value_enum()->name() : std::string();
        }
        return o;
    }

    /// One value of `f` (the element of a repeated field) into a column of type `t`.
    std::expected<op, plan_error> value(const gp::FieldDescriptor& f, const type& t, uint32_t first,
                                        int16_t present_def, int16_t max_rep,
                                        const std::string& path) {
        if (f.type() == T::TYPE_GROUP)
            return std::unexpected(plan_error{decode_reason::unsupported_schema_type,
                                              fmt::format("field `{}` is a proto2 group", path)});
        if (f.type() != T::TYPE_MESSAGE) return scalar(f, t, first, present_def, path);
        const gp::Descriptor& m = *f.message_type();
        op o;
        place(o, t, first, present_def, path);
        o.wire = wt_len;
        switch (schema::protobuf_well_known(m)) {
        case schema::protobuf_wkt::timestamp:
            if (t.id != type_id::timestamptz) return incompatible(path, "timestamptz", t);
            o.kind = pk::timestamp;
            o.st = store::i64;
            return o;
        case schema::protobuf_wkt::duration:
            if (t.id != type_id::long_) return incompatible(path, "long (Duration)", t);
            o.kind = pk::duration;
            o.st = store::i64;
            return o;
        case schema::protobuf_wkt::wrapper: {
            o.kind = pk::wrapper;
            auto inner = scalar(*m.field(0), t, first, present_def, path);
            if (!inner) return inner;
            inner->number = 1;
            inner->has_presence = false;
            o.st = inner->st;
            o.children.push_back(std::move(*inner));
            return o;
        }
        case schema::protobuf_wkt::none:
            break;
        }
        if (t.id != type_id::struct_) return incompatible(path, "struct", t);
        return message(m, t.fields, first, present_def, max_rep, path, std::move(o));
    }

    /// A field of a message whose struct is present at `parent_def`.
    std::expected<op, plan_error> field(const gp::FieldDescriptor& f, const type& t, uint32_t first,
                                        int16_t parent_def, int16_t max_rep,
                                        const std::string& path) {
        auto def = static_cast<int16_t>(parent_def + 1);
        if (f.is_map()) {
            if (t.id != type_id::map) return incompatible(path, "map", t);
            op o;
            place(o, t, first, def, path);
            o.kind = pk::map;
            o.wire = wt_len;
            o.elem_rep = static_cast<int16_t>(max_rep + 1);
            op e;
            place(e, t, first, static_cast<int16_t>(def + 1), path);
            e.kind = pk::map_entry;
            e.wire = wt_len;
            auto k = scalar(*f.message_type()->map_key(), *t.key, first,
                            static_cast<int16_t>(def + 1), path + ".key");
            if (!k) return k;
            k->number = 1;
            k->has_presence = false;
            auto v = value(*f.message_type()->map_value(), *t.value,
                           first + static_cast<uint32_t>(leaf_count(*t.key)),
                           static_cast<int16_t>(def + 2), o.elem_rep, path + ".value");
            if (!v) return v;
            v->number = 2;
            v->has_presence =
                v->kind == pk::timestamp || v->kind == pk::duration || v->kind == pk::wrapper;
            e.children.push_back(std::move(*k));
            e.children.push_back(std::move(*v));
            o.children.push_back(std::move(e));
            return o;
        }
        if (f.is_repeated()) {
            if (t.id != type_id::list) return incompatible(path, "list", t);
            op o;
            place(o, t, first, def, path);
            o.kind = pk::list;
            o.elem_rep = static_cast<int16_t>(max_rep + 1);
            auto e = value(f, *t.element, first,
                           static_cast<int16_t>(def + (t.element_required ? 1 : 2)), o.elem_rep,
                           path + ".element");
            if (!e) return e;
            o.wire = e->wire;
            o.packable = f.is_packable();
            o.children.push_back(std::move(*e));
            return o;
        }
        auto o = value(f, t, first, def, max_rep, path);
        if (!o) return o;
        o->has_presence = f.has_presence();
        o->required = f.is_required();
        return o;
    }

    std::expected<op, plan_error> message(const gp::Descriptor& m,
                                          const std::vector<nested_field>& fields, uint32_t first,
                                          int16_t present_def, int16_t max_rep,
                                          const std::string& path, op o) {
        o.kind = pk::message;
        std::vector<bool> used(fields.size(), false);
        auto sub = [&](std::string_view name) {
            return path.empty() ? std::string(name) : path + "." + std::string(name);
        };
        auto add_slot = [&](op& f, uint16_t child, int16_t branch) {
            f.slot = o.nslots++;
            o.by_number.emplace_back(f.number, f.slot);
            o.slot_ref.emplace_back(child, branch);
        };
        for (int i = 0; i < m.field_count(); ++i) {
            const gp::FieldDescriptor& f = *m.field(i);
            const gp::OneofDescriptor* one = f.real_containing_oneof();
            if (one && one->field(0) != &f) continue;
            std::string_view name =
                one ? std::string_view(one->name()) : std::string_view(f.name());
            uint32_t off;
            const nested_field* tf = find_field(fields, name, off);
            if (!tf) {
                auto mapped = schema::protobuf_to_iceberg(m);
                bool has_column = true;
                if (mapped) {
                    has_column = false;
                    for (auto& mf : *mapped)
                        if (mf.name == name) has_column = true;
                }
                if (!has_column)
                    continue; // no data (an empty message): skipped like an unknown field
                return std::unexpected(
                    plan_error{decode_reason::incompatible_schema,
                               fmt::format("field `{}` has no column in the table", sub(name))});
            }
            used[static_cast<size_t>(tf - fields.data())] = true;
            if (one) {
                if (tf->field_type->id != type_id::struct_)
                    return incompatible(sub(name), "struct (oneof)", *tf->field_type);
                op u;
                place(u, *tf->field_type, first + off, static_cast<int16_t>(present_def + 1),
                      sub(name));
                u.kind = pk::oneof;
                auto child = static_cast<uint16_t>(o.children.size());
                for (int b = 0; b < one->field_count(); ++b) {
                    const gp::FieldDescriptor& bf = *one->field(b);
                    uint32_t boff;
                    const nested_field* bt = find_field(tf->field_type->fields, bf.name(), boff);
                    if (!bt) {
                        if (bf.type() == T::TYPE_MESSAGE
                            && schema::protobuf_well_known(*bf.message_type())
                                   == schema::protobuf_wkt::none) {
                            auto inner = schema::protobuf_to_iceberg(*bf.message_type());
                            if (inner && inner->empty()) continue; // an empty message: no column
                        }
                        return std::unexpected(plan_error{
                            decode_reason::incompatible_schema,
                            fmt::format("oneof branch `{}.{}` has no column in the table",
                                        sub(name), bf.name())});
                    }
                    auto c = field(bf, *bt->field_type, first + off + boff,
                                   static_cast<int16_t>(present_def + 1), max_rep,
                                   sub(name) + "." + bf.name());
                    if (!c) return c;
                    c->number = bf.number();
                    c->has_presence = true;
                    add_slot(*c, child, static_cast<int16_t>(u.children.size()));
                    u.children.push_back(std::move(*c));
                }
                o.children.push_back(std::move(u));
                continue;
            }
            auto c = field(f, *tf->field_type, first + off, present_def, max_rep, sub(name));
            if (!c) return c;
            c->number = f.number();
            add_slot(*c, static_cast<uint16_t>(o.children.size()), -1);
            o.children.push_back(std::move(*c));
        }
        uint32_t off = 0;
        for (size_t i = 0; i < fields.size(); ++i) {
            auto n = static_cast<uint32_t>(leaf_count(*fields[i].field_type));
            if (!used[i]) o.absent.emplace_back(base + first + off, n);
            off += n;
        }
        std::sort(o.by_number.begin(), o.by_number.end());
        if (!o.by_number.empty() && o.by_number.back().first < 1024) {
            o.dense.assign(static_cast<size_t>(o.by_number.back().first) + 1, -1);
            for (auto& [number, slot] : o.by_number)
                o.dense[static_cast<size_t>(number)] = slot;
        }
        return o;
    }
};

// ---- the walk --------------------------------------------------------------------------------

constexpr int max_depth = 100;           // nested messages and groups
constexpr uint64_t max_items = 1u << 22; // repeated entries per record

struct slot {
    const uint8_t* at = nullptr; // where the last occurrence's value starts (after its tag)
    uint32_t count = 0;
    uint32_t order = 0;
};

// Per-thread scratch: every message being walked has its slots here (a stack: a nested
// message pushes its own above its parent's and pops them when done); map keys of the
// messages being validated, for duplicate detection.
thread_local std::vector<slot> t_slots;
thread_local std::vector<std::pair<uint32_t, std::string>> t_keys;

struct ctx {
    uint64_t items = 0;
    uint32_t seq = 0;
    int depth = 0;
    std::string err;
};

struct cur {
    const uint8_t* p;
    const uint8_t* end;
    size_t left() const noexcept { return static_cast<size_t>(end - p); }
};

bool bad(ctx& x, std::string msg) {
    if (x.err.empty()) x.err = std::move(msg);
    return false;
}

bool bad_at(ctx& x, const op& o, std::string_view what) {
    return bad(x, o.path.empty() ? std::string(what) : fmt::format("field `{}`: {}", o.path, what));
}

[[gnu::always_inline]] inline bool varint(cur& c, ctx& x, uint64_t& out) {
    if (c.p != c.end && *c.p < 0x80) [[likely]] {
        out = *c.p++;
        return true;
    }
    if (!read_raw_varint(c.p, c.end, out))
        return bad(x, c.p == c.end ? "value cut inside a varint" : "varint longer than 10 bytes");
    return true;
}

bool fixed(cur& c, ctx& x, size_t n, const uint8_t*& out) {
    if (c.left() < n) return bad(x, fmt::format("{}-byte value with {} bytes left", n, c.left()));
    out = c.p;
    c.p += n;
    return true;
}

bool len(cur& c, ctx& x, cur& out) {
    uint64_t n;
    if (!varint(c, x, n)) return false;
    if (n > c.left()) return bad(x, fmt::format("length {} with {} bytes left", n, c.left()));
    out = cur{c.p, c.p + n};
    c.p += n;
    return true;
}

uint32_t le32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    if constexpr (std::endian::native == std::endian::big) v = std::byteswap(v);
    return v;
}
uint64_t le64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) v = std::byteswap(v);
    return v;
}

bool tag(cur& c, ctx& x, int32_t& number, uint8_t& wt) {
    uint64_t t;
    if (!varint(c, x, t)) return false;
    if ((t >> 3) == 0 || (t >> 3) > 0x1FFFFFFF)
        return bad(x, fmt::format("field number {} is out of range", t >> 3));
    number = static_cast<int32_t>(t >> 3);
    wt = static_cast<uint8_t>(t & 7);
    if (wt > 5) return bad(x, fmt::format("wire type {} of field {} does not exist", wt, number));
    return true;
}

/// Skips one value of wire type `wt` (an unknown field), a group up to its end tag.
bool skip(cur& c, ctx& x, uint8_t wt, int32_t number) {
    uint64_t u;
    const uint8_t* p;
    cur s;
    switch (wt) {
    case wt_varint:
        return varint(c, x, u);
    case wt_i64:
        return fixed(c, x, 8, p);
    case wt_i32:
        return fixed(c, x, 4, p);
    case wt_len:
        return len(c, x, s);
    case wt_sgroup: {
        if (++x.depth > max_depth) return bad(x, "groups nested too deep");
        while (true) {
            int32_t n;
            uint8_t w;
            if (c.p == c.end) return bad(x, fmt::format("group {} has no end", number));
            if (!tag(c, x, n, w)) return false;
            if (w == wt_egroup) {
                if (n != number)
                    return bad(x, fmt::format("group {} ended by end-group {}", number, n));
                break;
            }
            if (!skip(c, x, w, n)) return false;
        }
        --x.depth;
        return true;
    }
    default:
        return bad(x, fmt::format("end-group {} without a start", number));
    }
}

inline void fill_nulls(parquet::file_writer& w, uint32_t first, uint32_t count, int16_t def,
                       int16_t rep) {
    for (uint32_t c = first; c < first + count; ++c)
        w.column(c).add_null(def, rep);
}

void put_int(const op& o, int64_t v, int16_t rep, parquet::file_writer& w) {
    if (o.st == store::i32)
        w.column(o.col).add_i32(static_cast<int32_t>(v), rep);
    else
        w.column(o.col).add_i64(v, rep);
}

void put_unsigned_dec(const op& o, uint64_t v, int16_t rep, parquet::file_writer& w) {
    char b[64];
    auto n = static_cast<size_t>(o.dec_len);
    std::memset(b, 0, n);
    for (size_t i = 0; i < 8; ++i)
        b[n - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    w.column(o.col).add_fixed(std::string_view(b, n), rep);
}

void write_default(const op& o, int16_t rep, parquet::file_writer& w) {
    switch (o.st) {
    case store::i32:
    case store::i64:
        put_int(o, 0, rep, w);
        break;
    case store::f32:
        w.column(o.col).add_f32(0.0f, rep);
        break;
    case store::f64:
        w.column(o.col).add_f64(0.0, rep);
        break;
    case store::boolean:
        w.column(o.col).add_bool(false, rep);
        break;
    case store::bytes:
        w.column(o.col).add_bytes(o.def_text, rep);
        break;
    case store::dec:
        put_unsigned_dec(o, 0, rep, w);
        break;
    }
}

/// One scalar value of leaf `o` at `c` (its tag already read and its wire type matched).
template<bool W> bool leaf(const op& o, cur& c, ctx& x, int16_t rep, parquet::file_writer* w) {
    uint64_t u = 0;
    const uint8_t* p;
    cur s;
    switch (o.kind) {
    case pk::v_int32:
        if (!varint(c, x, u)) return false;
        if constexpr (W) put_int(o, static_cast<int32_t>(static_cast<uint32_t>(u)), rep, *w);
        return true;
    case pk::v_int64:
        if (!varint(c, x, u)) return false;
        if constexpr (W) put_int(o, static_cast<int64_t>(u), rep, *w);
        return true;
    case pk::v_uint32:
        if (!varint(c, x, u)) return false;
        if constexpr (W) put_int(o, static_cast<int64_t>(static_cast<uint32_t>(u)), rep, *w);
        return true;
    case pk::v_sint32:
        if (!varint(c, x, u)) return false;
        if constexpr (W) {
            auto z = static_cast<uint32_t>(u);
            put_int(o, static_cast<int32_t>((z >> 1) ^ (~(z & 1) + 1)), rep, *w);
        }
        return true;
    case pk::v_sint64:
        if (!varint(c, x, u)) return false;
        if constexpr (W) put_int(o, unzigzag(u), rep, *w);
        return true;
    case pk::v_uint64:
        if (!varint(c, x, u)) return false;
        if constexpr (W) put_unsigned_dec(o, u, rep, *w);
        return true;
    case pk::v_bool:
        if (!varint(c, x, u)) return false;
        if constexpr (W) w->column(o.col).add_bool(u != 0, rep);
        return true;
    case pk::v_enum:
        if (!varint(c, x, u)) return false;
        if constexpr (W) {
            auto n = static_cast<int32_t>(static_cast<uint32_t>(u));
            if (n >= 0 && static_cast<size_t>(n) < o.enum_names.size()
                && !o.enum_names[static_cast<size_t>(n)].empty())
                w->column(o.col).add_bytes(o.enum_names[static_cast<size_t>(n)], rep);
            else if (auto* v = o.en->FindValueByNumber(n))
                w->column(o.col).add_bytes(v->name(), rep);
            else
                w->column(o.col).add_bytes(fmt::format_int(n).str(), rep);
        }
        return true;
    case pk::f_fixed32:
        if (!fixed(c, x, 4, p)) return false;
        if constexpr (W) put_int(o, static_cast<int64_t>(le32(p)), rep, *w);
        return true;
    case pk::f_sfixed32:
        if (!fixed(c, x, 4, p)) return false;
        if constexpr (W) put_int(o, static_cast<int32_t>(le32(p)), rep, *w);
        return true;
    case pk::f_float:
        if (!fixed(c, x, 4, p)) return false;
        if constexpr (W) {
            float f = std::bit_cast<float>(le32(p));
            if (o.st == store::f32)
                w->column(o.col).add_f32(f, rep);
            else
                w->column(o.col).add_f64(f, rep);
        }
        return true;
    case pk::f_fixed64:
        if (!fixed(c, x, 8, p)) return false;
        if constexpr (W) put_unsigned_dec(o, le64(p), rep, *w);
        return true;
    case pk::f_sfixed64:
        if (!fixed(c, x, 8, p)) return false;
        if constexpr (W) put_int(o, static_cast<int64_t>(le64(p)), rep, *w);
        return true;
    case pk::f_double:
        if (!fixed(c, x, 8, p)) return false;
        if constexpr (W) w->column(o.col).add_f64(std::bit_cast<double>(le64(p)), rep);
        return true;
    case pk::l_string:
        if (!len(c, x, s)) return false;
        if constexpr (!W) {
            if (!valid_utf8({reinterpret_cast<const char*>(s.p), s.left()}))
                return bad_at(x, o, "string is not valid UTF-8");
        } else {
            w->column(o.col).add_bytes({reinterpret_cast<const char*>(s.p), s.left()}, rep);
        }
        return true;
    case pk::l_bytes:
        if (!len(c, x, s)) return false;
        if constexpr (W)
            w->column(o.col).add_bytes({reinterpret_cast<const char*>(s.p), s.left()}, rep);
        return true;
    default:
        return bad(x, "not a scalar");
    }
}

template<bool W>
bool walk_message(const op& m, cur c, ctx& x, int16_t rep, parquet::file_writer* w);

/// Timestamp and Duration: seconds (1) and nanos (2), last occurrence wins, others skipped.
template<bool W>
bool seconds_nanos(const op& o, cur c, ctx& x, int16_t rep, parquet::file_writer* w) {
    int64_t seconds = 0, nanos = 0;
    while (c.p < c.end) {
        int32_t n;
        uint8_t wt;
        if (!tag(c, x, n, wt)) return false;
        if (n == 1 || n == 2) {
            if (wt != wt_varint)
                return bad_at(x, o, fmt::format("field {} has wire type {}, not varint", n, wt));
            uint64_t u;
            if (!varint(c, x, u)) return false;
            if (n == 1)
                seconds = static_cast<int64_t>(u);
            else
                nanos = static_cast<int32_t>(static_cast<uint32_t>(u));
        } else if (!skip(c, x, wt, n)) {
            return false;
        }
    }
    if (o.kind == pk::timestamp) {
        if (seconds < -62135596800 || seconds > 253402300799)
            return bad_at(x, o,
                          fmt::format("Timestamp seconds {} outside years 1 to 9999", seconds));
        if (nanos < 0 || nanos > 999999999)
            return bad_at(x, o, fmt::format("Timestamp nanos {} outside 0..999999999", nanos));
    } else {
        if (seconds < -315576000000 || seconds > 315576000000)
            return bad_at(x, o, fmt::format("Duration seconds {} outside +-10000 years", seconds));
        if (nanos < -999999999 || nanos > 999999999 || (seconds > 0 && nanos < 0)
            || (seconds < 0 && nanos > 0))
            return bad_at(x, o, fmt::format("Duration nanos {} (seconds {})", nanos, seconds));
    }
    if constexpr (W) w->column(o.col).add_i64(seconds * 1000000 + nanos / 1000, rep);
    return true;
}

/// A wrapper (google.protobuf.*Value): its field 1, last occurrence wins, the default if absent.
template<bool W> bool wrapper(const op& o, cur c, ctx& x, int16_t rep, parquet::file_writer* w) {
    const op& v = o.children[0];
    const uint8_t* last = nullptr;
    while (c.p < c.end) {
        int32_t n;
        uint8_t wt;
        if (!tag(c, x, n, wt)) return false;
        if (n == 1) {
            if (wt != v.wire)
                return bad_at(x, o, fmt::format("value has wire type {}, not {}", wt, v.wire));
            last = c.p;
            if (!leaf<false>(v, c, x, rep, nullptr)) return false;
        } else if (!skip(c, x, wt, n)) {
            return false;
        }
    }
    if constexpr (W) {
        if (last) {
            cur lc{last, c.end};
            leaf<true>(v, lc, x, rep, w);
        } else {
            write_default(v, rep, *w);
        }
    }
    return true;
}

template<bool W>
bool map_entry(const op& e, cur c, ctx& x, int16_t rep, parquet::file_writer* w,
               std::string* key_out);

/// One value of `o` at `c` (tag read, wire type matched).
template<bool W> bool value(const op& o, cur& c, ctx& x, int16_t rep, parquet::file_writer* w) {
    if (o.kind < pk::message) return leaf<W>(o, c, x, rep, w);
    cur s;
    if (!len(c, x, s)) return false;
    switch (o.kind) {
    case pk::message:
        return walk_message<W>(o, s, x, rep, w);
    case pk::timestamp:
    case pk::duration:
        return seconds_nanos<W>(o, s, x, rep, w);
    case pk::wrapper:
        return wrapper<W>(o, s, x, rep, w);
    case pk::map_entry:
        return map_entry<W>(o, s, x, rep, w, nullptr);
    default:
        return bad(x, "bad plan");
    }
}

template<bool W>
bool map_entry(const op& e, cur c, ctx& x, int16_t rep, parquet::file_writer* w,
               std::string* key_out) {
    const op& k = e.children[0];
    const op& v = e.children[1];
    const uint8_t* kat = nullptr;
    const uint8_t* vat = nullptr;
    while (c.p < c.end) {
        int32_t n;
        uint8_t wt;
        if (!tag(c, x, n, wt)) return false;
        if (n == 1 || n == 2) {
            const op& f = n == 1 ? k : v;
            if (wt != f.wire) return bad_at(x, f, fmt::format("wire type {}, not {}", wt, f.wire));
            (n == 1 ? kat : vat) = c.p;
            if (!value<false>(f, c, x, rep, nullptr)) return false;
        } else if (!skip(c, x, wt, n)) {
            return false;
        }
    }
    if (key_out) {
        key_out->clear();
        if (kat) {
            cur kc{kat, c.end};
            if (k.wire == wt_len) {
                cur s;
                len(kc, x, s);
                key_out->assign(reinterpret_cast<const char*>(s.p), s.left());
            } else {
                uint64_t u = 0;
                const uint8_t* p;
                if (k.wire == wt_varint)
                    varint(kc, x, u);
                else if (k.wire == wt_i32 && fixed(kc, x, 4, p))
                    u = le32(p);
                else if (fixed(kc, x, 8, p))
                    u = le64(p);
                if (k.kind == pk::v_int32 || k.kind == pk::v_uint32 || k.kind == pk::v_sint32)
                    u &= 0xFFFFFFFFu;
                if (k.kind == pk::v_bool) u = u != 0;
                key_out->assign(reinterpret_cast<const char*>(&u), 8);
            }
        }
    }
    if constexpr (W) {
        if (kat) {
            cur kc{kat, c.end};
            leaf<true>(k, kc, x, rep, w);
        } else {
            write_default(k, rep, *w);
        }
        if (vat) {
            cur vc{vat, c.end};
            value<true>(v, vc, x, rep, w);
        } else if (v.kind == pk::message) {
            walk_message<true>(v, cur{c.end, c.end}, x, rep, w); // an empty message: its defaults
        } else if (v.has_presence) {
            fill_nulls(*w, v.first, v.count, v.null_def, rep);
        } else {
            write_default(v, rep, *w);
        }
    }
    return true;
}

/// The bytes of every occurrence of singular message field `number` in [b, e), concatenated
/// (the spec's merge of repeated occurrences). Only called when there is more than one.
std::string merged(const uint8_t* b, const uint8_t* e, int32_t number) {
    std::string out;
    cur c{b, e};
    ctx x;
    while (c.p < c.end) {
        int32_t n;
        uint8_t wt;
        if (!tag(c, x, n, wt)) break;
        if (n == number && wt == wt_len) {
            cur s;
            if (!len(c, x, s)) break;
            out.append(reinterpret_cast<const char*>(s.p), s.left());
        } else if (!skip(c, x, wt, n)) {
            break;
        }
    }
    return out;
}

/// A singular field's value from its slot (or its absence).
template<bool W>
bool singular(const op& f, const slot& s, const uint8_t* mb, const uint8_t* me, ctx& x, int16_t rep,
              parquet::file_writer* w) {
    if (s.count == 0) {
        if constexpr (!W) {
            if (f.required) return bad_at(x, f, "required field is absent");
            return true;
        } else {
            if (f.has_presence)
                fill_nulls(*w, f.first, f.count, f.null_def, rep);
            else
                write_default(f, rep, *w);
            return true;
        }
    }
    if constexpr (!W)
        if (f.kind != pk::message) return true; // validated when met
    if (f.kind == pk::message && s.count > 1) {
        std::string buf = merged(mb, me, f.number);
        auto p = reinterpret_cast<const uint8_t*>(buf.data());
        return walk_message<W>(f, cur{p, p + buf.size()}, x, rep, w);
    }
    cur c{s.at, me};
    return value<W>(f, c, x, rep, w);
}

template<bool W>
bool walk_message(const op& m, cur c, ctx& x, int16_t rep, parquet::file_writer* w) {
    if (++x.depth > max_depth) return bad(x, "messages nested too deep");
    const uint8_t* mb = c.p;
    const uint8_t* me = c.end;
    size_t base = t_slots.size();
    t_slots.resize(base + m.nslots);
    size_t keys_base = t_keys.size();
    auto done = [&](bool ok) {
        t_slots.resize(base);
        if constexpr (!W) t_keys.resize(keys_base);
        --x.depth;
        return ok;
    };
    std::string key;
    while (c.p < c.end) {
        int32_t n;
        uint8_t wt;
        if (!tag(c, x, n, wt)) return done(false);
        int32_t found = -1;
        if (static_cast<size_t>(n) < m.dense.size()) {
            found = m.dense[static_cast<size_t>(n)];
        } else if (m.dense.empty()) {
            auto it = std::lower_bound(m.by_number.begin(), m.by_number.end(),
                                       std::pair<int32_t, uint16_t>{n, 0});
            if (it != m.by_number.end() && it->first == n) found = it->second;
        }
        if (found < 0) {
            if (!skip(c, x, wt, n)) return done(false);
            continue;
        }
        auto si = static_cast<uint16_t>(found);
        auto [child, branch] = m.slot_ref[si];
        const op& f = branch < 0 ? m.children[child]
                                 : m.children[child].children[static_cast<size_t>(branch)];
        if (f.kind == pk::list || f.kind == pk::map) {
            const op& e = f.children[0];
            auto one = [&](cur& vc) {
                if (++x.items > max_items) return bad(x, "too many repeated entries");
                slot& s = t_slots[base + si];
                int16_t r = s.count == 0 ? rep : f.elem_rep;
                ++s.count;
                if (f.kind == pk::map && !W) {
                    cur ec;
                    if (!len(vc, x, ec)) return false;
                    if (!map_entry<false>(e, ec, x, r, nullptr, &key)) return false;
                    t_keys.emplace_back(si, key);
                    return true;
                }
                return value<W>(e, vc, x, r, w);
            };
            if (wt == wt_len && f.packable) {
                cur pc;
                if (!len(c, x, pc)) return done(false);
                while (pc.p < pc.end)
                    if (!one(pc)) return done(false);
            } else if (wt == e.wire) {
                if (!one(c)) return done(false);
            } else {
                return done(bad_at(x, f, fmt::format("wire type {}, not {}", wt, e.wire)));
            }
            continue;
        }
        if (wt != f.wire)
            return done(bad_at(x, f, fmt::format("wire type {}, not {}", wt, f.wire)));
        slot& s = t_slots[base + si];
        s.at = c.p;
        ++s.count;
        s.order = ++x.seq;
        if (f.kind == pk::message) { // walked once after the scan (merged when repeated)
            cur sc;
            if (!len(c, x, sc)) return done(false);
            continue;
        }
        if constexpr (W) {
            // Validated by the first pass: only step over it (it is written after the scan).
            if (!skip(c, x, wt, n)) return done(false);
        } else if (!value<false>(f, c, x, rep, nullptr)) {
            return done(false);
        }
    }
    if constexpr (!W) {
        // Duplicate map keys (per map field of this message).
        if (t_keys.size() - keys_base > 1) {
            std::sort(t_keys.begin() + static_cast<std::ptrdiff_t>(keys_base), t_keys.end());
            for (size_t i = keys_base + 1; i < t_keys.size(); ++i)
                if (t_keys[i] == t_keys[i - 1]) {
                    const op& mf = m.children[m.slot_ref[t_keys[i].first].first];
                    return done(bad_at(x, mf, "a map key appears twice"));
                }
        }
    }
    for (const op& f : m.children) {
        if (f.kind == pk::list || f.kind == pk::map) {
            if constexpr (W)
                if (t_slots[base + f.slot].count == 0)
                    fill_nulls(*w, f.first, f.count, f.present_def, rep); // empty
            continue;
        }
        if (f.kind == pk::oneof) {
            const op* win = nullptr;
            uint32_t best = 0;
            for (const op& b : f.children) {
                const slot& s = t_slots[base + b.slot];
                if (s.count && s.order >= best) {
                    best = s.order;
                    win = &b;
                }
            }
            if (!win) {
                if constexpr (W) fill_nulls(*w, f.first, f.count, f.null_def, rep);
                continue;
            }
            slot s = t_slots[base + win->slot];
            if (!singular<W>(*win, s, mb, me, x, rep, w)) return done(false);
            if constexpr (W) {
                fill_nulls(*w, f.first, win->first - f.first, f.present_def, rep);
                fill_nulls(*w, win->first + win->count,
                           f.first + f.count - (win->first + win->count), f.present_def, rep);
            }
            continue;
        }
        slot s = t_slots[base + f.slot];
        if (!singular<W>(f, s, mb, me, x, rep, w)) return done(false);
    }
    if constexpr (W)
        for (auto& [first, count] : m.absent)
            fill_nulls(*w, first, count, m.present_def, rep);
    return done(true);
}

} // namespace

protobuf_row_plan::~protobuf_row_plan() = default;

std::expected<std::shared_ptr<const protobuf_row_plan>, decode_failure>
protobuf_row_plan::make(const gp::Descriptor& message,
                        const std::vector<nested_field>& table_fields, size_t first_column) {
    if (auto m = schema::protobuf_to_iceberg(message); !m)
        return std::unexpected(decode_failure{m.error().code() == errc::unsupported
                                                  ? decode_reason::unsupported_schema_type
                                                  : decode_reason::incompatible_schema,
                                              m.error().message(), std::nullopt});
    builder b{static_cast<uint32_t>(first_column)};
    op o;
    o.first = static_cast<uint32_t>(first_column);
    size_t n = 0;
    for (auto& f : table_fields)
        n += leaf_count(*f.field_type);
    o.count = static_cast<uint32_t>(n);
    auto r = b.message(message, table_fields, 0, 0, 0, "", std::move(o));
    if (!r)
        return std::unexpected(
            decode_failure{r.error().reason, std::move(r.error().detail), std::nullopt});
    std::shared_ptr<protobuf_row_plan> p(new protobuf_row_plan());
    p->_root = std::make_unique<op>(std::move(*r));
    return p;
}

std::expected<std::shared_ptr<const protobuf_row_plan>, decode_failure>
protobuf_row_plan::make_in_column(const gp::Descriptor& message, const nested_field& column,
                                  size_t first_column) {
    if (column.field_type->id != type_id::struct_)
        return std::unexpected(
            decode_failure{decode_reason::incompatible_schema,
                           fmt::format("column `{}` is not a struct", column.name), std::nullopt});
    if (auto m = schema::protobuf_to_iceberg(message); !m)
        return std::unexpected(decode_failure{m.error().code() == errc::unsupported
                                                  ? decode_reason::unsupported_schema_type
                                                  : decode_reason::incompatible_schema,
                                              m.error().message(), std::nullopt});
    builder b{static_cast<uint32_t>(first_column)};
    op o;
    o.first = static_cast<uint32_t>(first_column);
    o.count = static_cast<uint32_t>(leaf_count(*column.field_type));
    o.present_def = 1;
    o.null_def = 0;
    auto r = b.message(message, column.field_type->fields, 0, 1, 0, "", std::move(o));
    if (!r)
        return std::unexpected(
            decode_failure{r.error().reason, std::move(r.error().detail), std::nullopt});
    std::shared_ptr<protobuf_row_plan> p(new protobuf_row_plan());
    p->_root = std::make_unique<op>(std::move(*r));
    return p;
}

std::optional<std::string> protobuf_row_plan::validate(std::string_view payload) const {
    auto b = reinterpret_cast<const uint8_t*>(payload.data());
    ctx x;
    if (!walk_message<false>(*_root, cur{b, b + payload.size()}, x, 0, nullptr))
        return x.err.empty() ? std::string("invalid Protobuf message") : x.err;
    return std::nullopt;
}

void protobuf_row_plan::write(std::string_view payload, parquet::file_writer& w) const {
    auto b = reinterpret_cast<const uint8_t*>(payload.data());
    ctx x;
    bool ok = walk_message<true>(*_root, cur{b, b + payload.size()}, x, 0, &w);
    FLOE_ASSERT(ok, "a validated Protobuf message failed to decode");
}

} // namespace floe::lake
