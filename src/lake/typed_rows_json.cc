#include "lake/typed_rows_json.h"

#include "lake/plan_support.h"
#include "lake/text_checks.h"
#include "schema/iceberg_mapping.h"
#include "schema/json_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>

namespace floe::lake {

using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using schema::json_kind;

struct json_row_plan::op {
    json_kind kind = json_kind::object;
    bool nullable = false;
    uint32_t col = 0;
    uint32_t first = 0, count = 0;
    int16_t present_def = 0, null_def = 0;
    int16_t elem_rep = 0;
    std::string path;
    const schema::json_schema_node* node = nullptr;
    std::vector<std::string> names; // object: property names (children in the same order);
                                    // union: branch names
    std::vector<bool> required;     // object: per child
    std::vector<op> children;       // object: properties; map: [value]; array: [element];
                                    // union: branches
    std::vector<std::pair<uint32_t, uint32_t>> absent; // object: table columns no property writes
    bool string_enum = false; // string: check the value against node->enum_values
};

namespace {

using op = json_row_plan::op;

using detail::find_field;
using detail::plan_error;

struct builder {
    uint32_t base;

    static std::unexpected<plan_error> incompatible(const std::string& path,
                                                    const iceberg::type_ptr& wt, const type& t) {
        return std::unexpected(
            plan_error{decode_reason::incompatible_schema,
                       fmt::format("field `{}`: {} -> {}", path,
                                   wt ? schema::describe(*wt) : "nothing", schema::describe(t))});
    }

    std::expected<op, plan_error> value(const schema::json_shape& s, const type& t, uint32_t first,
                                        int16_t present_def, int16_t max_rep,
                                        const std::string& path) {
        op o;
        o.kind = s.kind;
        o.nullable = s.nullable;
        o.node = s.node;
        o.first = o.col = base + first;
        o.count = static_cast<uint32_t>(leaf_count(t));
        o.present_def = present_def;
        o.null_def = static_cast<int16_t>(present_def - 1);
        o.path = path;
        auto wt = schema::json_shape_type(s);
        if (!wt)
            return std::unexpected(plan_error{
                wt.error().code() == errc::unsupported ? decode_reason::unsupported_schema_type
                                                       : decode_reason::incompatible_schema,
                fmt::format("field `{}`: {}", path, wt.error().message())});
        if (!*wt || (*wt)->id != t.id) return incompatible(path, *wt, t);
        switch (s.kind) {
        case json_kind::object: {
            if (t.id == type_id::string) { // an object with no typed property: its JSON text
                o.kind = json_kind::any;
                return o;
            }
            std::vector<bool> used(t.fields.size(), false);
            for (auto& [name, node] : s.node->properties) {
                auto ps = schema::json_classify(*node);
                if (!ps)
                    return std::unexpected(
                        plan_error{decode_reason::unsupported_schema_type, ps.error().message()});
                std::string p = path.empty() ? name : path + "." + name;
                uint32_t off;
                const nested_field* tf = find_field(t.fields, name, off);
                if (!tf) {
                    auto pt = schema::json_shape_type(*ps);
                    if (pt && !*pt) continue; // no data: skipped like an unnamed key
                    return std::unexpected(
                        plan_error{decode_reason::incompatible_schema,
                                   fmt::format("field `{}` has no column in the table", p)});
                }
                used[static_cast<size_t>(tf - t.fields.data())] = true;
                auto c = value(*ps, *tf->field_type, first + off,
                               static_cast<int16_t>(present_def + 1), max_rep, p);
                if (!c) return c;
                o.names.push_back(name);
                o.required.push_back(s.node->is_required(name));
                o.children.push_back(std::move(*c));
            }
            uint32_t off = 0;
            for (size_t i = 0; i < t.fields.size(); ++i) {
                auto n = static_cast<uint32_t>(leaf_count(*t.fields[i].field_type));
                if (!used[i]) o.absent.emplace_back(base + first + off, n);
                off += n;
            }
            return o;
        }
        case json_kind::map: {
            o.elem_rep = static_cast<int16_t>(max_rep + 1);
            auto vs = schema::json_classify(*s.node->additional_properties);
            if (!vs)
                return std::unexpected(
                    plan_error{decode_reason::unsupported_schema_type, vs.error().message()});
            auto v = value(*vs, *t.value, first + 1,
                           static_cast<int16_t>(present_def + (t.value_required ? 1 : 2)),
                           o.elem_rep, path + ".value");
            if (!v) return v;
            o.children.push_back(std::move(*v));
            return o;
        }
        case json_kind::array: {
            o.elem_rep = static_cast<int16_t>(max_rep + 1);
            auto es = schema::json_classify(*s.node->items);
            if (!es)
                return std::unexpected(
                    plan_error{decode_reason::unsupported_schema_type, es.error().message()});
            auto e = value(*es, *t.element, first,
                           static_cast<int16_t>(present_def + (t.element_required ? 1 : 2)),
                           o.elem_rep, path + ".element");
            if (!e) return e;
            o.children.push_back(std::move(*e));
            return o;
        }
        case json_kind::union_: {
            for (auto& b : s.branches) {
                auto bs = schema::json_classify(*b.node, b.types);
                if (!bs)
                    return std::unexpected(
                        plan_error{decode_reason::unsupported_schema_type, bs.error().message()});
                uint32_t off;
                const nested_field* tf = find_field(t.fields, b.name, off);
                if (!tf) {
                    auto bt = schema::json_shape_type(*bs);
                    if (bt && !*bt) continue;
                    return std::unexpected(plan_error{
                        decode_reason::incompatible_schema,
                        fmt::format("field `{}`: branch {} has no column", path, b.name)});
                }
                auto c = value(*bs, *tf->field_type, first + off,
                               static_cast<int16_t>(present_def + 1), max_rep, path + "." + b.name);
                if (!c) return c;
                c->nullable = false; // a branch is chosen by a non-null value
                o.names.push_back(b.name);
                o.children.push_back(std::move(*c));
            }
            return o;
        }
        case json_kind::string:
            o.string_enum = s.node && s.node->enum_values
                            && std::all_of(s.node->enum_values->begin(), s.node->enum_values->end(),
                                           [](auto& j) { return j.is_string(); });
            return o;
        default:
            return o;
        }
    }
};

// ---- the walk --------------------------------------------------------------------------------

constexpr int max_depth = 256;
constexpr uint64_t max_items = 1u << 22;

struct ctx {
    uint64_t items = 0;
    int depth = 0;
    std::string err;
    const char* begin = nullptr;
};

struct cur {
    const char* p;
    const char* end;
};

bool bad(ctx& x, std::string msg) {
    if (x.err.empty()) x.err = std::move(msg);
    return false;
}
bool bad_at(ctx& x, const op& o, std::string_view what) {
    return bad(x, o.path.empty() ? std::string(what) : fmt::format("field `{}`: {}", o.path, what));
}

void ws(cur& c) {
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t' || *c.p == '\n' || *c.p == '\r'))
        ++c.p;
}

int hex4(const char* p) {
    int v = 0;
    for (int i = 0; i < 4; ++i) {
        int h = hex_table[static_cast<uint8_t>(p[i])];
        if (h < 0) return -1;
        v = (v << 4) | h;
    }
    return v;
}

void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

/// A string at c (the opening quote). `out` gets its text: a view of the input when it has no
/// escapes, else `scratch` unescaped. Validates UTF-8, control characters and escapes.
bool string(cur& c, ctx& x, std::string_view& out, std::string& scratch) {
    if (c.p >= c.end || *c.p != '"') return bad(x, "expected a string");
    const char* b = ++c.p;
    bool escaped = false;
    while (true) {
        if (c.p >= c.end) return bad(x, "string not terminated");
        char ch = *c.p;
        if (ch == '"') break;
        if (static_cast<uint8_t>(ch) < 0x20) return bad(x, "control character in a string");
        if (ch == '\\') {
            escaped = true;
            if (c.end - c.p < 2) return bad(x, "string not terminated");
            c.p += 2;
            if (c.p[-1] == 'u') c.p += 4;
            if (c.p > c.end) return bad(x, "\\u escape cut");
            continue;
        }
        ++c.p;
    }
    std::string_view raw(b, static_cast<size_t>(c.p - b));
    ++c.p;
    if (!escaped) {
        if (!valid_utf8(raw)) return bad(x, "string is not valid UTF-8");
        out = raw;
        return true;
    }
    scratch.clear();
    for (size_t i = 0; i < raw.size();) {
        char ch = raw[i];
        if (ch != '\\') {
            size_t j = raw.find('\\', i);
            if (j == std::string_view::npos) j = raw.size();
            scratch.append(raw.substr(i, j - i));
            i = j;
            continue;
        }
        char e = raw[i + 1];
        i += 2;
        switch (e) {
        case '"':
            scratch.push_back('"');
            break;
        case '\\':
            scratch.push_back('\\');
            break;
        case '/':
            scratch.push_back('/');
            break;
        case 'b':
            scratch.push_back('\b');
            break;
        case 'f':
            scratch.push_back('\f');
            break;
        case 'n':
            scratch.push_back('\n');
            break;
        case 'r':
            scratch.push_back('\r');
            break;
        case 't':
            scratch.push_back('\t');
            break;
        case 'u': {
            int u = hex4(raw.data() + i);
            i += 4;
            if (u < 0) return bad(x, "bad \\u escape");
            uint32_t cp = static_cast<uint32_t>(u);
            if (cp >= 0xDC00 && cp <= 0xDFFF) return bad(x, "lone low surrogate in a string");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (i + 6 > raw.size() || raw[i] != '\\' || raw[i + 1] != 'u')
                    return bad(x, "lone high surrogate in a string");
                int lo = hex4(raw.data() + i + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) return bad(x, "lone high surrogate in a string");
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
            }
            put_utf8(scratch, cp);
            break;
        }
        default:
            return bad(x, fmt::format("bad escape \\{}", e));
        }
    }
    if (!valid_utf8(scratch)) return bad(x, "string is not valid UTF-8");
    out = scratch;
    return true;
}

/// A number's text at c (RFC 8259 grammar); `integral`: no fraction and no exponent.
bool number_text(cur& c, ctx& x, std::string_view& out, bool& integral) {
    const char* b = c.p;
    integral = true;
    if (c.p < c.end && *c.p == '-') ++c.p;
    if (c.p >= c.end || !(*c.p >= '0' && *c.p <= '9')) return bad(x, "bad number");
    if (*c.p == '0')
        ++c.p;
    else
        while (c.p < c.end && *c.p >= '0' && *c.p <= '9')
            ++c.p;
    if (c.p < c.end && *c.p == '.') {
        integral = false;
        ++c.p;
        if (c.p >= c.end || !(*c.p >= '0' && *c.p <= '9')) return bad(x, "bad number fraction");
        while (c.p < c.end && *c.p >= '0' && *c.p <= '9')
            ++c.p;
    }
    if (c.p < c.end && (*c.p == 'e' || *c.p == 'E')) {
        integral = false;
        ++c.p;
        if (c.p < c.end && (*c.p == '+' || *c.p == '-')) ++c.p;
        if (c.p >= c.end || !(*c.p >= '0' && *c.p <= '9')) return bad(x, "bad number exponent");
        while (c.p < c.end && *c.p >= '0' && *c.p <= '9')
            ++c.p;
    }
    out = std::string_view(b, static_cast<size_t>(c.p - b));
    return true;
}

bool literal(cur& c, ctx& x, std::string_view lit) {
    if (static_cast<size_t>(c.end - c.p) < lit.size() || std::string_view(c.p, lit.size()) != lit)
        return bad(x, "invalid JSON literal");
    c.p += lit.size();
    return true;
}

thread_local std::string t_scratch;

/// Skips (validates) any JSON value at c.
bool skip_value(cur& c, ctx& x) {
    ws(c);
    if (c.p >= c.end) return bad(x, "value missing");
    std::string_view s;
    bool integral;
    switch (*c.p) {
    case '"':
        return string(c, x, s, t_scratch);
    case 't':
        return literal(c, x, "true");
    case 'f':
        return literal(c, x, "false");
    case 'n':
        return literal(c, x, "null");
    case '{':
    case '[': {
        char close = *c.p == '{' ? '}' : ']';
        bool obj = close == '}';
        if (++x.depth > max_depth) return bad(x, "JSON nested too deep");
        ++c.p;
        ws(c);
        if (c.p < c.end && *c.p == close) {
            ++c.p;
            --x.depth;
            return true;
        }
        while (true) {
            if (obj) {
                ws(c);
                if (!string(c, x, s, t_scratch)) return false;
                ws(c);
                if (c.p >= c.end || *c.p != ':') return bad(x, "expected ':'");
                ++c.p;
            }
            if (!skip_value(c, x)) return false;
            ws(c);
            if (c.p >= c.end) return bad(x, "JSON cut");
            if (*c.p == ',') {
                ++c.p;
                continue;
            }
            if (*c.p == close) {
                ++c.p;
                break;
            }
            return bad(x, fmt::format("expected ',' or '{}'", close));
        }
        --x.depth;
        return true;
    }
    default:
        return number_text(c, x, s, integral);
    }
}

std::string_view kind_of(char ch) {
    switch (ch) {
    case '"':
        return "string";
    case '{':
        return "object";
    case '[':
        return "array";
    case 't':
    case 'f':
        return "boolean";
    case 'n':
        return "null";
    default:
        return "number";
    }
}

inline void fill_nulls(parquet::file_writer& w, uint32_t first, uint32_t count, int16_t def,
                       int16_t rep) {
    for (uint32_t c = first; c < first + count; ++c)
        w.column(c).add_null(def, rep);
}

bool digits(std::string_view s, size_t at, size_t n, int& out) {
    if (at + n > s.size()) return false;
    out = 0;
    for (size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}

bool parse_date(std::string_view s, int32_t& days) {
    int y, m, d;
    if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 0, 4, y) || !digits(s, 5, 2, m)
        || !digits(s, 8, 2, d))
        return false;
    std::chrono::year_month_day ymd{std::chrono::year(y),
                                    std::chrono::month(static_cast<unsigned>(m)),
                                    std::chrono::day(static_cast<unsigned>(d))};
    if (!ymd.ok()) return false;
    days = std::chrono::sys_days(ymd).time_since_epoch().count();
    return true;
}

/// hh:mm:ss[.frac] at s[at..]; advances `at`. Microseconds of the day.
bool parse_clock(std::string_view s, size_t& at, int64_t& micros) {
    int h, m, sec;
    if (!digits(s, at, 2, h) || at + 2 >= s.size() || s[at + 2] != ':' || !digits(s, at + 3, 2, m)
        || at + 5 >= s.size() || s[at + 5] != ':' || !digits(s, at + 6, 2, sec))
        return false;
    if (h > 23 || m > 59 || sec > 60) return false; // 60: a leap second, read as the next second
    at += 8;
    int64_t frac = 0;
    if (at < s.size() && s[at] == '.') {
        ++at;
        size_t n = 0;
        while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
            if (n < 6) frac = frac * 10 + (s[at] - '0');
            ++n;
            ++at;
        }
        if (n == 0) return false;
        for (; n < 6; ++n)
            frac *= 10;
    }
    micros = ((int64_t{h} * 60 + m) * 60 + sec) * 1000000 + frac;
    return true;
}

/// Z or ±hh:mm at s[at..] to the end; the offset in microseconds.
bool parse_zone(std::string_view s, size_t at, int64_t& off) {
    if (at + 1 == s.size() && (s[at] == 'Z' || s[at] == 'z')) {
        off = 0;
        return true;
    }
    int h, m;
    if (at + 6 != s.size() || (s[at] != '+' && s[at] != '-') || !digits(s, at + 1, 2, h)
        || s[at + 3] != ':' || !digits(s, at + 4, 2, m) || h > 23 || m > 59)
        return false;
    off = (int64_t{h} * 60 + m) * 60 * 1000000 * (s[at] == '-' ? -1 : 1);
    return true;
}

bool parse_timestamp(std::string_view s, int64_t& micros) {
    int32_t days;
    if (s.size() < 20 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
        || !parse_date(s.substr(0, 10), days))
        return false;
    size_t at = 11;
    int64_t clock, off;
    if (!parse_clock(s, at, clock) || !parse_zone(s, at, off)) return false;
    micros = int64_t{days} * 86400000000 + clock - off;
    return true;
}

bool parse_time(std::string_view s, int64_t& micros) {
    size_t at = 0;
    int64_t clock, off = 0;
    if (!parse_clock(s, at, clock)) return false;
    if (at != s.size() && !parse_zone(s, at, off)) return false;
    constexpr int64_t day = 86400000000;
    micros = ((clock - off) % day + day) % day;
    return true;
}

// Per-thread scratch of the objects being walked: where each property's last value starts.
thread_local std::vector<const char*> t_slots;
thread_local std::vector<std::string> t_map_keys;

template<bool W> bool walk(const op& o, cur& c, ctx& x, int16_t rep, parquet::file_writer* w);

template<bool W>
bool walk_object(const op& o, cur& c, ctx& x, int16_t rep, parquet::file_writer* w) {
    ++c.p; // '{'
    size_t base = t_slots.size();
    t_slots.resize(base + o.children.size(), nullptr);
    auto done = [&](bool ok) {
        t_slots.resize(base);
        return ok;
    };
    ws(c);
    if (c.p < c.end && *c.p == '}') {
        ++c.p;
    } else {
        std::string key_scratch;
        while (true) {
            ws(c);
            std::string_view key;
            if (!string(c, x, key, key_scratch)) return done(false);
            ws(c);
            if (c.p >= c.end || *c.p != ':') return done(bad(x, "expected ':'"));
            ++c.p;
            size_t i = 0;
            for (; i < o.names.size(); ++i)
                if (o.names[i] == key) break;
            if (i == o.names.size()) {
                if (!skip_value(c, x)) return done(false);
            } else {
                ws(c);
                t_slots[base + i] = c.p;
                if constexpr (!W) {
                    if (!walk<false>(o.children[i], c, x, rep, nullptr)) return done(false);
                } else if (!skip_value(c, x)) {
                    return done(false);
                }
            }
            ws(c);
            if (c.p >= c.end) return done(bad(x, "JSON cut inside an object"));
            if (*c.p == ',') {
                ++c.p;
                continue;
            }
            if (*c.p == '}') {
                ++c.p;
                break;
            }
            return done(bad(x, "expected ',' or '}'"));
        }
    }
    for (size_t i = 0; i < o.children.size(); ++i) {
        const char* at = t_slots[base + i];
        const op& ch = o.children[i];
        if (!at) {
            if constexpr (!W) {
                if (o.required[i]) return done(bad_at(x, ch, "required property is absent"));
            } else {
                fill_nulls(*w, ch.first, ch.count, ch.null_def, rep);
            }
            continue;
        }
        if constexpr (W) {
            cur vc{at, c.end};
            walk<true>(ch, vc, x, rep, w);
        }
    }
    if constexpr (W)
        for (auto& [first, count] : o.absent)
            fill_nulls(*w, first, count, o.present_def, rep);
    return done(true);
}

template<bool W> bool walk(const op& o, cur& c, ctx& x, int16_t rep, parquet::file_writer* w) {
    ws(c);
    if (c.p >= c.end) return bad_at(x, o, "value missing");
    char ch = *c.p;
    if (ch == 'n') {
        if (!literal(c, x, "null")) return false;
        if (!o.nullable) return bad_at(x, o, "null where the schema does not allow it");
        if constexpr (W) fill_nulls(*w, o.first, o.count, o.null_def, rep);
        return true;
    }
    auto expect = [&](std::string_view want) {
        return bad_at(x, o, fmt::format("expected {}, got {}", want, kind_of(ch)));
    };
    std::string_view s;
    bool integral;
    switch (o.kind) {
    case json_kind::any: {
        const char* b = c.p;
        if (!skip_value(c, x)) return false;
        if constexpr (W)
            w->column(o.col).add_bytes(std::string_view(b, static_cast<size_t>(c.p - b)), rep);
        return true;
    }
    case json_kind::boolean:
        if (ch != 't' && ch != 'f') return expect("boolean");
        if (!literal(c, x, ch == 't' ? "true" : "false")) return false;
        if constexpr (W) w->column(o.col).add_bool(ch == 't', rep);
        return true;
    case json_kind::integer: {
        if (ch != '-' && !(ch >= '0' && ch <= '9')) return expect("integer");
        if (!number_text(c, x, s, integral)) return false;
        int64_t v = 0;
        if (integral) {
            auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec != std::errc()) return bad_at(x, o, fmt::format("integer {} out of range", s));
        } else {
            double d = 0;
            auto r = std::from_chars(s.data(), s.data() + s.size(), d);
            if (r.ec != std::errc() || d != std::floor(d) || !(std::fabs(d) < 9.2e18))
                return bad_at(x, o, fmt::format("expected integer, got {}", s));
            v = static_cast<int64_t>(d);
        }
        if constexpr (W) w->column(o.col).add_i64(v, rep);
        return true;
    }
    case json_kind::number: {
        if (ch != '-' && !(ch >= '0' && ch <= '9')) return expect("number");
        if (!number_text(c, x, s, integral)) return false;
        double d = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), d);
        if (r.ec != std::errc() || !std::isfinite(d))
            return bad_at(x, o, fmt::format("number {} out of range", s));
        if constexpr (W) w->column(o.col).add_f64(d, rep);
        return true;
    }
    case json_kind::string:
    case json_kind::date:
    case json_kind::timestamptz:
    case json_kind::time:
    case json_kind::uuid: {
        if (ch != '"') return expect("string");
        if (!string(c, x, s, t_scratch)) return false;
        switch (o.kind) {
        case json_kind::string:
            if constexpr (!W) {
                if (o.string_enum
                    && std::none_of(
                        o.node->enum_values->begin(), o.node->enum_values->end(),
                        [&](auto& j) { return j.template get_ref<const std::string&>() == s; }))
                    return bad_at(x, o, "string is not one of the enum's values");
            } else {
                w->column(o.col).add_bytes(s, rep);
            }
            return true;
        case json_kind::date: {
            int32_t d;
            if (!parse_date(s, d))
                return bad_at(x, o,
                              fmt::format("\"{}\" is not a date (YYYY-MM-DD)", s.substr(0, 40)));
            if constexpr (W) w->column(o.col).add_i32(d, rep);
            return true;
        }
        case json_kind::timestamptz: {
            int64_t v;
            if (!parse_timestamp(s, v))
                return bad_at(x, o,
                              fmt::format("\"{}\" is not an RFC 3339 date-time with a zone",
                                          s.substr(0, 40)));
            if constexpr (W) w->column(o.col).add_i64(v, rep);
            return true;
        }
        case json_kind::time: {
            int64_t v;
            if (!parse_time(s, v))
                return bad_at(x, o,
                              fmt::format("\"{}\" is not a time (hh:mm:ss)", s.substr(0, 40)));
            if constexpr (W) w->column(o.col).add_i64(v, rep);
            return true;
        }
        default: {
            char u[16];
            if (!parse_uuid(s, u)) return bad_at(x, o, "uuid is not 36-character text");
            if constexpr (W) w->column(o.col).add_fixed(std::string_view(u, 16), rep);
            return true;
        }
        }
    }
    case json_kind::object:
        if (ch != '{') return expect("object");
        if (++x.depth > max_depth) return bad(x, "JSON nested too deep");
        if (!walk_object<W>(o, c, x, rep, w)) return false;
        --x.depth;
        return true;
    case json_kind::map:
    case json_kind::array: {
        bool is_map = o.kind == json_kind::map;
        if (ch != (is_map ? '{' : '[')) return expect(is_map ? "object" : "array");
        if (++x.depth > max_depth) return bad(x, "JSON nested too deep");
        char close = is_map ? '}' : ']';
        ++c.p;
        ws(c);
        size_t keys_base = t_map_keys.size();
        bool any = false;
        int16_t r = rep;
        if (c.p < c.end && *c.p == close) {
            ++c.p;
        } else {
            std::string key_scratch;
            while (true) {
                if (++x.items > max_items) return bad(x, "too many array or map entries");
                if (is_map) {
                    ws(c);
                    std::string_view key;
                    if (!string(c, x, key, key_scratch)) return false;
                    ws(c);
                    if (c.p >= c.end || *c.p != ':') return bad(x, "expected ':'");
                    ++c.p;
                    if constexpr (W)
                        w->column(o.first).add_bytes(key, r);
                    else
                        t_map_keys.emplace_back(key);
                }
                if (!walk<W>(o.children[0], c, x, r, w)) return false;
                r = o.elem_rep;
                any = true;
                ws(c);
                if (c.p >= c.end) return bad(x, "JSON cut");
                if (*c.p == ',') {
                    ++c.p;
                    continue;
                }
                if (*c.p == close) {
                    ++c.p;
                    break;
                }
                return bad(x, fmt::format("expected ',' or '{}'", close));
            }
        }
        if constexpr (!W) {
            if (is_map && t_map_keys.size() - keys_base > 1) {
                auto b = t_map_keys.begin() + static_cast<std::ptrdiff_t>(keys_base);
                std::sort(b, t_map_keys.end());
                bool dup = std::adjacent_find(b, t_map_keys.end()) != t_map_keys.end();
                t_map_keys.resize(keys_base);
                if (dup) return bad_at(x, o, "a map key appears twice");
            }
            t_map_keys.resize(keys_base);
        }
        if constexpr (W)
            if (!any) fill_nulls(*w, o.first, o.count, o.present_def, rep);
        --x.depth;
        return true;
    }
    case json_kind::union_: {
        // The first branch the value fits (tried without writing; errors of the others dropped).
        const op* win = nullptr;
        for (const op& b : o.children) {
            cur t = c;
            ctx tx;
            tx.depth = x.depth;
            if (walk<false>(b, t, tx, rep, nullptr)) {
                win = &b;
                break;
            }
        }
        if (!win)
            return bad_at(x, o, fmt::format("a {} fits none of the union's branches", kind_of(ch)));
        if (!walk<W>(*win, c, x, rep, w)) return false;
        if constexpr (W) {
            fill_nulls(*w, o.first, win->first - o.first, o.present_def, rep);
            fill_nulls(*w, win->first + win->count, o.first + o.count - (win->first + win->count),
                       o.present_def, rep);
        }
        return true;
    }
    case json_kind::none:
        return bad_at(x, o, "no column");
    }
    return bad(x, "bad plan");
}

} // namespace

json_row_plan::~json_row_plan() = default;

std::expected<std::shared_ptr<const json_row_plan>, decode_failure>
json_row_plan::make_in_column(const schema::json_schema& s, const nested_field& column,
                              size_t first_column) {
    auto fail_with = [](const error& e) {
        return std::unexpected(decode_failure{e.code() == errc::unsupported
                                                  ? decode_reason::unsupported_schema_type
                                                  : decode_reason::incompatible_schema,
                                              e.message(), std::nullopt});
    };
    if (auto m = schema::json_to_iceberg(s); !m) return fail_with(m.error());
    auto shape = schema::json_classify(s.root());
    if (!shape) return fail_with(shape.error());
    builder b{static_cast<uint32_t>(first_column)};
    auto r = b.value(*shape, *column.field_type, 0, 1, 0, "");
    if (!r)
        return std::unexpected(
            decode_failure{r.error().reason, std::move(r.error().detail), std::nullopt});
    r->nullable = false; // a JSON null value is a dead letter, not a row with a null `data`
    std::shared_ptr<json_row_plan> p(new json_row_plan());
    p->_root = std::make_unique<op>(std::move(*r));
    return p;
}

std::optional<std::string> json_row_plan::validate(std::string_view payload) const {
    ctx x;
    cur c{payload.data(), payload.data() + payload.size()};
    if (!walk<false>(*_root, c, x, 0, nullptr))
        return fmt::format("{} (at byte {} of {})", x.err.empty() ? "invalid JSON" : x.err,
                           static_cast<size_t>(c.p - payload.data()), payload.size());
    ws(c);
    if (c.p != c.end) return fmt::format("{} bytes left after the JSON value", c.end - c.p);
    return std::nullopt;
}

void json_row_plan::write(std::string_view payload, parquet::file_writer& w) const {
    ctx x;
    cur c{payload.data(), payload.data() + payload.size()};
    bool ok = walk<true>(*_root, c, x, 0, &w);
    FLOE_ASSERT(ok, "a validated JSON value failed to decode");
}

} // namespace floe::lake
