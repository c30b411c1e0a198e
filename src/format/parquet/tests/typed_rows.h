#pragma once

// Test helpers for typed (nested) tables: a value tree that mirrors a Parquet schema, a
// record shredder (Dremel levels) that feeds a file_writer's column writers and logs every
// entry it gave them, the same entries read back from a file_reader, and the "every type"
// schema and rows that the unit tests and the independent-reader fixture share.
//
// A value mirrors the schema node it is written to: a group's value has one item per child;
// a repeated node's value holds one item per repetition, each shaped like the node itself
// (so a LIST's repeated `list` group gets items that are groups of one `element`).

#include "format/parquet/reader.h"
#include "format/parquet/writer.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace floe::parquet::testing {

struct tval {
    enum class kind : uint8_t { null, boolean, integer, real, bytes, group, repeated };
    kind k = kind::null;
    bool b = false;
    int64_t i = 0;
    double d = 0;
    std::string s;
    std::vector<tval> items;

    static tval null() { return {}; }
    static tval boolean(bool v) {
        tval t;
        t.k = kind::boolean;
        t.b = v;
        return t;
    }
    static tval integer(int64_t v) {
        tval t;
        t.k = kind::integer;
        t.i = v;
        return t;
    }
    static tval real(double v) {
        tval t;
        t.k = kind::real;
        t.d = v;
        return t;
    }
    static tval bytes(std::string v) {
        tval t;
        t.k = kind::bytes;
        t.s = std::move(v);
        return t;
    }
    static tval group(std::vector<tval> children) {
        tval t;
        t.k = kind::group;
        t.items = std::move(children);
        return t;
    }
    static tval repeated(std::vector<tval> reps) {
        tval t;
        t.k = kind::repeated;
        t.items = std::move(reps);
        return t;
    }
    /// A value for list_node(...): its elements (tval::null() for a null element).
    static tval list(std::vector<tval> elements) {
        std::vector<tval> reps;
        for (auto& e : elements)
            reps.push_back(group({std::move(e)}));
        return group({repeated(std::move(reps))});
    }
    /// A value for map_node(...): its entries.
    static tval map(std::vector<std::pair<tval, tval>> entries) {
        std::vector<tval> reps;
        for (auto& [k, v] : entries)
            reps.push_back(group({std::move(k), std::move(v)}));
        return group({repeated(std::move(reps))});
    }
    bool is_null() const noexcept { return k == kind::null; }
};

/// What a column was given or holds: definition and repetition level of each entry and the
/// defined values as Parquet plain bytes (booleans one byte, byte arrays raw).
struct column_entries {
    std::vector<int16_t> def, rep;
    std::vector<std::string> values;
    bool operator==(const column_entries&) const = default;
};

inline std::string plain_of(physical_type t, const tval& v) {
    switch (t) {
    case physical_type::boolean:
        return std::string(1, static_cast<char>(v.b));
    case physical_type::int32: {
        auto x = static_cast<int32_t>(v.i);
        return std::string(reinterpret_cast<const char*>(&x), 4);
    }
    case physical_type::int64:
        return std::string(reinterpret_cast<const char*>(&v.i), 8);
    case physical_type::float_: {
        auto x = static_cast<float>(v.d);
        return std::string(reinterpret_cast<const char*>(&x), 4);
    }
    case physical_type::double_:
        return std::string(reinterpret_cast<const char*>(&v.d), 8);
    default:
        return v.s;
    }
}

/// Writes rows into a file_writer, Dremel-style, logging each column's entries.
class shredder {
public:
    shredder(file_writer& w, const schema& s) : _w(w), _s(s), _log(s.columns().size()) {}

    /// Writes one row (a group value for the root) and ends it.
    result<void> write_row(const tval& row) {
        size_t col = 0;
        const auto& root = _s.root();
        if (row.k != tval::kind::group || row.items.size() != root.children.size())
            return fail(errc::invalid_argument, "row does not match the root group");
        for (size_t i = 0; i < root.children.size(); ++i)
            FLOE_TRY(node(root.children[i], row.items[i], 0, 0, 0, col));
        return _w.end_row();
    }
    const std::vector<column_entries>& log() const noexcept { return _log; }

private:
    static size_t leaves(const schema_node& n) {
        if (n.is_leaf()) return 1;
        size_t c = 0;
        for (auto& ch : n.children)
            c += leaves(ch);
        return c;
    }
    void nulls(const schema_node& n, int16_t rep, int16_t def, size_t& col) {
        for (size_t i = leaves(n); i > 0; --i, ++col) {
            _w.column(col).add_null(def, rep);
            _log[col].def.push_back(def);
            _log[col].rep.push_back(rep);
        }
    }
    result<void> node(const schema_node& n, const tval& v, int16_t rep, int16_t def,
                      int16_t depth, size_t& col) {
        if (n.rep == repetition::optional) {
            if (v.is_null()) {
                nulls(n, rep, def, col);
                return {};
            }
            ++def;
        } else if (v.is_null()) {
            return fail(errc::invalid_argument, "null for required {}", n.name);
        }
        if (n.rep == repetition::repeated) {
            if (v.k != tval::kind::repeated)
                return fail(errc::invalid_argument, "{} is repeated", n.name);
            if (v.items.empty()) {
                nulls(n, rep, def, col);
                return {};
            }
            size_t start = col;
            for (size_t i = 0; i < v.items.size(); ++i) {
                col = start;
                FLOE_TRY(content(n, v.items[i], i == 0 ? rep : static_cast<int16_t>(depth + 1),
                                 static_cast<int16_t>(def + 1), static_cast<int16_t>(depth + 1),
                                 col));
            }
            return {};
        }
        return content(n, v, rep, def, depth, col);
    }
    result<void> content(const schema_node& n, const tval& v, int16_t rep, int16_t def,
                         int16_t depth, size_t& col) {
        if (n.is_leaf()) {
            auto& c = _w.column(col);
            switch (*n.type) {
            case physical_type::boolean:
                c.add_bool(v.b, rep);
                break;
            case physical_type::int32:
                c.add_i32(static_cast<int32_t>(v.i), rep);
                break;
            case physical_type::int64:
                c.add_i64(v.i, rep);
                break;
            case physical_type::float_:
                c.add_f32(static_cast<float>(v.d), rep);
                break;
            case physical_type::double_:
                c.add_f64(v.d, rep);
                break;
            case physical_type::byte_array:
                c.add_bytes(v.s, rep);
                break;
            case physical_type::fixed_len_byte_array:
                c.add_fixed(v.s, rep);
                break;
            default:
                return fail(errc::unsupported, "type");
            }
            _log[col].def.push_back(def);
            _log[col].rep.push_back(rep);
            _log[col].values.push_back(plain_of(*n.type, v));
            ++col;
            return {};
        }
        if (v.k != tval::kind::group || v.items.size() != n.children.size())
            return fail(errc::invalid_argument, "{}: group value with {} items for {} children",
                        n.name, v.items.size(), n.children.size());
        for (size_t i = 0; i < n.children.size(); ++i)
            FLOE_TRY(node(n.children[i], v.items[i], rep, def, depth, col));
        return {};
    }

    file_writer& _w;
    const schema& _s;
    std::vector<column_entries> _log;
};

/// A column chunk's entries as decoded by the reader, in column_entries form.
inline column_entries entries_of(const column_descriptor& d, const column_data& c) {
    column_entries e;
    size_t vi = 0;
    for (int64_t i = 0; i < c.num_entries; ++i) {
        auto ui = static_cast<size_t>(i);
        int16_t def = c.def.empty() ? d.max_def : c.def[ui];
        e.def.push_back(def);
        e.rep.push_back(c.rep.empty() ? int16_t{0} : static_cast<int16_t>(c.rep[ui]));
        if (def != d.max_def) continue;
        switch (d.type) {
        case physical_type::boolean:
            e.values.emplace_back(1, static_cast<char>(c.bools.at(vi)));
            break;
        case physical_type::int32:
            e.values.emplace_back(reinterpret_cast<const char*>(&c.i32.at(vi)), 4);
            break;
        case physical_type::int64:
            e.values.emplace_back(reinterpret_cast<const char*>(&c.i64.at(vi)), 8);
            break;
        case physical_type::float_:
            e.values.emplace_back(reinterpret_cast<const char*>(&c.f32.at(vi)), 4);
            break;
        case physical_type::double_:
            e.values.emplace_back(reinterpret_cast<const char*>(&c.f64.at(vi)), 8);
            break;
        default:
            e.values.emplace_back(c.bytes.at(vi));
            break;
        }
        ++vi;
    }
    return e;
}

/// Big-endian two's complement of `v` in `len` bytes (DECIMAL in FIXED_LEN_BYTE_ARRAY).
inline std::string decimal_bytes(__int128 v, size_t len) {
    std::string s(len, '\0');
    auto u = static_cast<unsigned __int128>(v);
    for (size_t i = 0; i < len; ++i) {
        s[len - 1 - i] = static_cast<char>(static_cast<uint8_t>(u & 0xFF));
        u = i < 15 ? u >> 8 : (v < 0 ? ~static_cast<unsigned __int128>(0) : 0);
    }
    return s;
}

/// The unscaled value of a big-endian two's complement decimal of up to 16 bytes.
inline __int128 decimal_value(std::string_view b) {
    unsigned __int128 u = (!b.empty() && static_cast<int8_t>(b[0]) < 0) ? ~static_cast<unsigned __int128>(0) : 0;
    for (unsigned char c : b)
        u = (u << 8) | c;
    return static_cast<__int128>(u);
}

/// "123.4500" for unscaled 1234500 at scale 4 (DuckDB's text form of a DECIMAL).
inline std::string decimal_text(__int128 v, int scale) {
    bool neg = v < 0;
    unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
    std::string digits;
    while (u > 0) {
        digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
        u /= 10;
    }
    while (digits.size() < static_cast<size_t>(scale) + 1)
        digits.insert(digits.begin(), '0');
    std::string out = neg ? "-" : "";
    out += digits.substr(0, digits.size() - static_cast<size_t>(scale));
    if (scale > 0) out += "." + digits.substr(digits.size() - static_cast<size_t>(scale));
    return out;
}

inline __int128 pow10_i128(int n) {
    __int128 p = 1;
    for (int i = 0; i < n; ++i)
        p *= 10;
    return p;
}

/// The "every type" table (Iceberg field ids 1..31), nested at depth 3:
///   id long, flag boolean?, f32 float?, f64 double, dec9 decimal(9,2)?, dec18 decimal(18,4)?,
///   dec38 decimal(38,10)?, day date?, tod time?, ts timestamp?, tstz timestamptz?, uid uuid?,
///   kind enum-as-string?, fx3 fixed[3], bin binary?, name string?, doc json?,
///   rec struct<label string, items list<struct<n int?, w double?, tags list<string?>?>>?>?,
///   attrs map<string, struct<score decimal(9,2)?, seen timestamptz?, on boolean>?>?
inline schema_node typed_schema_node() {
    using pt = physical_type;
    using lt = logical_type;
    auto req = repetition::required, opt = repetition::optional;
    auto tod = leaf_node("tod", 9, opt, pt::int64, lt::time_micros);
    tod.utc = false;
    auto ts = leaf_node("ts", 10, opt, pt::int64, lt::timestamp_micros);
    ts.utc = false;
    auto tstz = leaf_node("tstz", 11, opt, pt::int64, lt::timestamp_micros);
    auto seen = leaf_node("seen", 30, opt, pt::int64, lt::timestamp_micros);
    auto item = group_node(
        "element", 21, req,
        {leaf_node("n", 22, opt, pt::int32), leaf_node("w", 23, opt, pt::double_),
         list_node("tags", 24, opt, leaf_node("element", 25, opt, pt::byte_array, lt::string))});
    auto rec = group_node("rec", 18, opt,
                          {leaf_node("label", 19, req, pt::byte_array, lt::string),
                           list_node("items", 20, opt, std::move(item))});
    auto attr_value = group_node("value", 28, opt,
                                 {decimal_node("score", 29, opt, 9, 2), std::move(seen),
                                  leaf_node("on", 31, req, pt::boolean)});
    auto attrs = map_node("attrs", 26, opt, leaf_node("key", 27, req, pt::byte_array, lt::string),
                          std::move(attr_value));
    return group_node(
        "typed", std::nullopt, req,
        {leaf_node("id", 1, req, pt::int64), leaf_node("flag", 2, opt, pt::boolean),
         leaf_node("f32", 3, opt, pt::float_), leaf_node("f64", 4, req, pt::double_),
         decimal_node("dec9", 5, opt, 9, 2), decimal_node("dec18", 6, opt, 18, 4),
         decimal_node("dec38", 7, opt, 38, 10), leaf_node("day", 8, opt, pt::int32, lt::date),
         std::move(tod), std::move(ts), std::move(tstz), fixed_node("uid", 12, opt, 16, lt::uuid),
         leaf_node("kind", 13, opt, pt::byte_array, lt::enum_), fixed_node("fx3", 14, req, 3),
         leaf_node("bin", 15, opt, pt::byte_array),
         leaf_node("name", 16, opt, pt::byte_array, lt::string),
         leaf_node("doc", 17, opt, pt::byte_array, lt::json), std::move(rec), std::move(attrs)});
}

/// Deterministic rows for typed_schema_node(): nulls, empty lists and maps, NaN, +-0.0,
/// +-infinity, decimal extremes of both signs, negative dates and timestamps. Rows 40..59 of
/// f32 are all NaN or null (with pages of 20 rows, a page without float bounds).
inline std::vector<tval> typed_rows(size_t n, uint64_t seed = 5) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t m) { return rng() % m; };
    using T = tval;
    std::vector<tval> rows;
    const __int128 max38 = pow10_i128(38) - 1;
    const std::vector<std::string> kinds = {"CREATED", "PAID", "SHIPPED", "CANCELLED"};
    for (size_t r = 0; r < n; ++r) {
        auto ri = static_cast<int64_t>(r);
        std::vector<tval> c;
        c.push_back(T::integer(ri * 3 - 100));                                       // id
        c.push_back(r % 7 == 3 ? T::null() : T::boolean(pick(3) == 0));              // flag
        if (r >= 40 && r < 60)                                                       // f32
            c.push_back(r % 3 == 0 ? T::null() : T::real(std::nan("")));
        else if (r % 11 == 5)
            c.push_back(T::null());
        else {
            static const double special[] = {0.0, -0.0, HUGE_VAL, -HUGE_VAL, std::nan("")};
            c.push_back(T::real(r % 13 == 0 ? special[(r / 13) % 5]
                                            : static_cast<double>(static_cast<float>(
                                                  (static_cast<double>(pick(2000000)) - 1e6) / 128))));
        }
        // f64: mostly finite, with -0.0 and +0.0 and a NaN
        c.push_back(T::real(r == 7 ? -0.0 : r == 8 ? 0.0 : r == 9 ? std::nan("")
                                         : (static_cast<double>(pick(1u << 30)) - (1u << 29)) * 1e-3));
        // decimals: unscaled values, extremes at a few rows
        auto dec = [&](int64_t lim) { return static_cast<int64_t>(pick(static_cast<uint64_t>(2 * lim + 1))) - lim; };
        c.push_back(r % 9 == 4 ? T::null()
                               : T::integer(r == 1 ? 999999999 : r == 2 ? -999999999 : dec(5000000)));
        c.push_back(r % 10 == 6 ? T::null()
                                : T::integer(r == 1 ? 999999999999999999 : r == 2 ? -999999999999999999
                                                                               : dec(1000000000000000)));
        if (r % 8 == 5)
            c.push_back(T::null());
        else {
            __int128 v;
            if (r == 1)
                v = max38;
            else if (r == 2)
                v = -max38;
            else if (r == 3)
                v = -1;
            else
                v = static_cast<__int128>(dec(1000000000000000000)) * pow10_i128(17)
                    + static_cast<__int128>(pick(100000000000000000));
            c.push_back(T::bytes(decimal_bytes(v, 16)));
        }
        c.push_back(r % 6 == 2 ? T::null() : T::integer(static_cast<int64_t>(pick(40000)) - 10000)); // day
        c.push_back(r % 6 == 3 ? T::null() : T::integer(static_cast<int64_t>(pick(86400000000ull))));  // tod
        c.push_back(r % 6 == 4 ? T::null()
                               : T::integer(static_cast<int64_t>(pick(4000000000000000ull)) - 1000000000000000)); // ts
        c.push_back(r % 6 == 5 ? T::null()
                               : T::integer(static_cast<int64_t>(pick(4000000000000000ull)) - 1000000000000000)); // tstz
        if (r % 5 == 1)
            c.push_back(T::null());
        else {
            std::string u(16, '\0');
            for (auto& ch : u)
                ch = static_cast<char>(pick(256));
            u[6] = static_cast<char>((u[6] & 0x0F) | 0x40);
            u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
            c.push_back(T::bytes(u));
        }
        c.push_back(r % 4 == 0 ? T::null() : T::bytes(kinds[pick(kinds.size())])); // kind
        c.push_back(T::bytes(std::string{static_cast<char>(pick(256)), static_cast<char>(r & 0xFF),
                                         static_cast<char>(pick(2) ? 0 : 0xFF)})); // fx3
        if (r % 7 == 2)
            c.push_back(T::null());
        else {
            std::string b(pick(12), '\0');
            for (auto& ch : b)
                ch = static_cast<char>(pick(256));
            c.push_back(T::bytes(b)); // bin (may be empty)
        }
        c.push_back(r % 5 == 4 ? T::null()
                               : T::bytes(r % 10 == 0 ? std::string("") : fmt::format("name-{}-ü", r))); // name
        c.push_back(r % 3 == 1 ? T::null() : T::bytes(fmt::format("{{\"n\":{},\"s\":\"x{}\"}}", r, r % 4))); // doc
        // rec
        if (r % 5 == 2)
            c.push_back(T::null());
        else {
            tval items;
            if (r % 4 == 1)
                items = T::null();
            else {
                std::vector<tval> elems;
                for (size_t k = pick(4); k > 0; --k) { // 0..3 items (0: an empty list)
                    tval tags;
                    if (pick(4) == 0)
                        tags = T::null();
                    else {
                        std::vector<tval> tv;
                        for (size_t j = pick(4); j > 0; --j)
                            tv.push_back(pick(5) == 0 ? T::null() : T::bytes(fmt::format("t{}", pick(20))));
                        tags = T::list(std::move(tv));
                    }
                    elems.push_back(T::group(
                        {pick(4) == 0 ? T::null() : T::integer(static_cast<int64_t>(pick(1000)) - 500),
                         pick(4) == 0 ? T::null() : T::real(static_cast<double>(pick(100000)) / 64),
                         std::move(tags)}));
                }
                items = T::list(std::move(elems));
            }
            c.push_back(T::group({T::bytes(fmt::format("label-{}", r)), std::move(items)}));
        }
        // attrs
        if (r % 6 == 1)
            c.push_back(T::null());
        else {
            std::vector<std::pair<tval, tval>> entries;
            size_t nk = pick(4); // 0..3 keys (0: an empty map)
            size_t first = pick(5);
            for (size_t k = 0; k < nk; ++k) {
                tval v;
                if (pick(5) == 0)
                    v = T::null();
                else
                    v = T::group({pick(4) == 0 ? T::null() : T::integer(static_cast<int64_t>(pick(20000)) - 10000),
                                  pick(4) == 0 ? T::null() : T::integer(static_cast<int64_t>(pick(2000000000000000ull))),
                                  T::boolean(pick(2) == 0)});
                entries.emplace_back(T::bytes(fmt::format("k-{}", first + k)), std::move(v));
            }
            c.push_back(T::map(std::move(entries)));
        }
        rows.push_back(T::group(std::move(c)));
    }
    return rows;
}

} // namespace floe::parquet::testing
