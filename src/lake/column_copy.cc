#include "lake/column_copy.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace floe::lake {

namespace {

using parquet::logical_type;
using parquet::physical_type;
using parquet::repetition;

/// One node on a leaf's path (top-level field first, the leaf last), keyed by its field id
/// (LIST's `list` and MAP's `key_value` groups have none: by name).
struct path_node {
    std::string key;
    repetition rep = repetition::required;
    std::string name;
};
using leaf_path = std::vector<path_node>;

std::vector<leaf_path> leaf_paths(const parquet::schema& s) {
    std::vector<leaf_path> out;
    leaf_path cur;
    auto walk = [&](auto& self, const parquet::schema_node& n) -> void {
        cur.push_back({n.field_id ? fmt::format("#{}", *n.field_id) : "~" + n.name, n.rep, n.name});
        if (n.is_leaf()) out.push_back(cur);
        for (auto& c : n.children)
            self(self, c);
        cur.pop_back();
    };
    for (auto& c : s.root().children)
        walk(walk, c);
    return out;
}

std::string dotted(const leaf_path& p, size_t n) {
    std::string out;
    for (size_t i = 0; i < n && i < p.size(); ++i)
        out += (i ? "." : "") + p[i].name;
    return out;
}

/// Definition level -> index of the deepest node defined at that level (-1: none): a level d
/// defines the nodes before the (d+1)-th optional or repeated node.
std::vector<int> deepest_defined(const leaf_path& p) {
    std::vector<int> out;
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i].rep != repetition::required) out.push_back(static_cast<int>(i) - 1);
    out.push_back(static_cast<int>(p.size()) - 1);
    return out;
}

/// The definition level at which nodes 0..i of `p` are defined.
int16_t level_through(const leaf_path& p, int i) {
    int16_t n = 0;
    for (int k = 0; k <= i && k < static_cast<int>(p.size()); ++k)
        n += p[static_cast<size_t>(k)].rep != repetition::required;
    return n;
}

int16_t repeated_through(const leaf_path& p, size_t count) {
    int16_t n = 0;
    for (size_t k = 0; k < count && k < p.size(); ++k)
        n += p[k].rep == repetition::repeated;
    return n;
}

/// Big-endian two's complement of `v` in `width` bytes.
std::string be_bytes(int64_t v, int32_t width) {
    std::string out(static_cast<size_t>(width), v < 0 ? '\xff' : '\0');
    for (int32_t i = 0; i < width && i < 8; ++i)
        out[static_cast<size_t>(width - 1 - i)] =
            static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
    return out;
}

} // namespace

result<column_copy> column_copy::make(const parquet::schema& from, const parquet::schema& to,
                                      size_t first_leaf) {
    const auto& fcols = from.columns();
    const auto& tcols = to.columns();
    if (fcols.size() < first_leaf || tcols.size() < first_leaf)
        return fail(errc::invalid_argument, "a file of {} columns has fewer than Floe's {}",
                    fcols.size(), first_leaf);
    auto fpaths = leaf_paths(from);
    auto tpaths = leaf_paths(to);
    column_copy out;
    std::vector<bool> used(fcols.size(), false);
    auto source_slot = [&](size_t leaf) -> int {
        auto it = std::find(out._sources.begin(), out._sources.end(), leaf);
        if (it != out._sources.end()) return static_cast<int>(it - out._sources.begin());
        out._sources.push_back(leaf);
        return static_cast<int>(out._sources.size()) - 1;
    };
    for (size_t j = first_leaf; j < tcols.size(); ++j) {
        const auto& tp = tpaths[j];
        const auto& td = tcols[j];
        // The file leaf sharing the longest path prefix (by field ids) with this one.
        size_t best = 0, best_len = 0;
        for (size_t s = first_leaf; s < fcols.size(); ++s) {
            const auto& fp = fpaths[s];
            size_t n = 0;
            while (n < fp.size() && n < tp.size() && fp[n].key == tp[n].key)
                ++n;
            if (n > best_len) {
                best_len = n;
                best = s;
            }
        }
        plan p;
        p.dest = j;
        if (best_len == 0) {
            if (td.max_def == 0)
                return fail(errc::invalid_argument,
                            "column {} is required and the file has no values for it",
                            td.dotted_path());
            out._plans.push_back(std::move(p)); // one null per row
            continue;
        }
        const auto& fp = fpaths[best];
        const auto& fd = fcols[best];
        // Nodes shared: the same kind of repetition, or required made optional.
        for (size_t k = 0; k < best_len; ++k) {
            auto a = fp[k].rep, b = tp[k].rep;
            bool ok = a == b || (a == repetition::required && b == repetition::optional);
            if (!ok)
                return fail(errc::invalid_argument,
                            "column {}: node {} is {} in the file and {} in the table",
                            td.dotted_path(), dotted(tp, k + 1), static_cast<int>(a),
                            static_cast<int>(b));
        }
        auto deepest = deepest_defined(fp);
        p.src = source_slot(best);
        p.src_max_def = fd.max_def;
        const bool whole = best_len == tp.size() && best_len == fp.size();
        if (!whole) {
            if (best_len == fp.size() || best_len == tp.size())
                return fail(errc::invalid_argument,
                            "column {}: the file's column {} has another shape", td.dotted_path(),
                            fd.dotted_path());
            // A field the file lacks: nulls at the shared ancestor's level.
            p.fill = true;
            const int shared = static_cast<int>(best_len) - 1;
            if (level_through(tp, shared) >= td.max_def)
                return fail(errc::invalid_argument,
                            "column {} is required and the file has no values for it",
                            td.dotted_path());
            p.max_rep_kept = repeated_through(fp, best_len);
            for (int d = 0; d <= fd.max_def; ++d)
                p.def_map.push_back(
                    level_through(tp, std::min(deepest[static_cast<size_t>(d)], shared)));
            out._plans.push_back(std::move(p));
            continue;
        }
        used[best] = true;
        for (int d = 0; d <= fd.max_def; ++d)
            p.def_map.push_back(level_through(tp, deepest[static_cast<size_t>(d)]));
        FLOE_ASSERT(p.def_map.back() == td.max_def,
                    "a defined value maps to the column's full definition level");
        // Values: the same type, or one of Iceberg's promotions.
        auto bad = [&] {
            return fail(errc::invalid_argument,
                        "column {}: the file's type ({}, {}) cannot become the table's ({}, {})",
                        td.dotted_path(), static_cast<int>(fd.type), static_cast<int>(fd.logical),
                        static_cast<int>(td.type), static_cast<int>(td.logical));
        };
        const bool dec = fd.logical == logical_type::decimal || td.logical == logical_type::decimal;
        if (dec) {
            if (fd.logical != td.logical || fd.scale != td.scale || fd.precision > td.precision)
                return bad();
        } else if (fd.logical != td.logical) {
            return bad();
        }
        p.width = td.type_length;
        using pt = physical_type;
        if (fd.type == td.type
            && (fd.type != pt::fixed_len_byte_array || fd.type_length == td.type_length)) {
            switch (fd.type) {
            case pt::boolean:
                p.how = conv::boolean;
                break;
            case pt::int32:
                p.how = conv::i32;
                break;
            case pt::int64:
                p.how = conv::i64;
                break;
            case pt::float_:
                p.how = conv::f32;
                break;
            case pt::double_:
                p.how = conv::f64;
                break;
            case pt::byte_array:
                p.how = conv::bytes;
                break;
            case pt::fixed_len_byte_array:
                p.how = conv::fixed;
                break;
            default:
                return bad();
            }
        } else if (fd.type == pt::int32 && td.type == pt::int64) {
            p.how = conv::i32_to_i64;
        } else if (fd.type == pt::float_ && td.type == pt::double_ && !dec) {
            p.how = conv::f32_to_f64;
        } else if (dec && td.type == pt::fixed_len_byte_array && fd.type == pt::int32) {
            p.how = conv::i32_to_fixed;
        } else if (dec && td.type == pt::fixed_len_byte_array && fd.type == pt::int64) {
            p.how = conv::i64_to_fixed;
        } else if (dec && td.type == pt::fixed_len_byte_array && fd.type == pt::fixed_len_byte_array
                   && fd.type_length < td.type_length) {
            p.how = conv::fixed_widen;
        } else {
            return bad();
        }
        out._plans.push_back(std::move(p));
    }
    for (size_t s = first_leaf; s < fcols.size(); ++s)
        if (!used[s])
            return fail(errc::invalid_argument,
                        "the file's column {} (field id {}) is not in the table schema: copying "
                        "would drop it",
                        fcols[s].dotted_path(), fcols[s].field_id ? *fcols[s].field_id : -1);
    out._chunks.resize(out._sources.size());
    return out;
}

result<void> column_copy::load(parquet::file_reader& r, size_t rg) {
    for (size_t i = 0; i < _sources.size(); ++i)
        _chunks[i] = FLOE_TRY_CTX(r.read_column(rg, _sources[i]), "row group {}", rg);
    for (auto& p : _plans)
        p.entry = p.value = 0;
    return {};
}

result<void> column_copy::write_row(parquet::file_writer& w) {
    for (auto& p : _plans) {
        auto& out = w.column(p.dest);
        if (p.src < 0) {
            out.add_null(0, 0);
            continue;
        }
        const auto& c = _chunks[static_cast<size_t>(p.src)];
        if (static_cast<int64_t>(p.entry) >= c.num_entries)
            return fail(errc::corrupt,
                        "column {}: the file's chunk has fewer rows than its row group",
                        out.descriptor().dotted_path());
        bool first = true;
        while (static_cast<int64_t>(p.entry) < c.num_entries) {
            const int16_t rep = c.rep.empty() ? 0 : c.rep[p.entry];
            if (!first && rep == 0) break; // the next row's
            first = false;
            const int16_t def = c.def.empty() ? p.src_max_def : c.def[p.entry];
            ++p.entry;
            if (def > p.src_max_def)
                return fail(errc::corrupt, "column {}: definition level {} above {}",
                            out.descriptor().dotted_path(), def, p.src_max_def);
            if (p.fill) {
                if (rep > p.max_rep_kept) continue; // a repetition below the shared ancestor
                out.add_null(p.def_map[static_cast<size_t>(def)], rep);
                continue;
            }
            if (def < p.src_max_def) {
                out.add_null(p.def_map[static_cast<size_t>(def)], rep);
                continue;
            }
            const size_t v = p.value++;
            auto missing = [&] {
                return fail(errc::corrupt, "column {}: fewer values than defined entries",
                            out.descriptor().dotted_path());
            };
            switch (p.how) {
            case conv::i32:
                if (v >= c.i32.size()) return missing();
                out.add_i32(c.i32[v], rep);
                break;
            case conv::i64:
                if (v >= c.i64.size()) return missing();
                out.add_i64(c.i64[v], rep);
                break;
            case conv::i32_to_i64:
                if (v >= c.i32.size()) return missing();
                out.add_i64(c.i32[v], rep);
                break;
            case conv::f32:
                if (v >= c.f32.size()) return missing();
                out.add_f32(c.f32[v], rep);
                break;
            case conv::f64:
                if (v >= c.f64.size()) return missing();
                out.add_f64(c.f64[v], rep);
                break;
            case conv::f32_to_f64:
                if (v >= c.f32.size()) return missing();
                out.add_f64(static_cast<double>(c.f32[v]), rep);
                break;
            case conv::boolean:
                if (v >= c.bools.size()) return missing();
                out.add_bool(c.bools[v] != 0, rep);
                break;
            case conv::bytes:
                if (v >= c.bytes.size()) return missing();
                out.add_bytes(c.bytes[v], rep);
                break;
            case conv::fixed:
                if (v >= c.bytes.size()) return missing();
                out.add_fixed(c.bytes[v], rep);
                break;
            case conv::i32_to_fixed:
                if (v >= c.i32.size()) return missing();
                out.add_fixed(be_bytes(c.i32[v], p.width), rep);
                break;
            case conv::i64_to_fixed:
                if (v >= c.i64.size()) return missing();
                out.add_fixed(be_bytes(c.i64[v], p.width), rep);
                break;
            case conv::fixed_widen: {
                if (v >= c.bytes.size()) return missing();
                auto b = c.bytes[v];
                const bool neg = !b.empty() && (static_cast<unsigned char>(b[0]) & 0x80);
                std::string wide(static_cast<size_t>(p.width)
                                     - std::min(b.size(), static_cast<size_t>(p.width)),
                                 neg ? '\xff' : '\0');
                wide.append(b);
                out.add_fixed(wide, rep);
                break;
            }
            }
        }
    }
    return {};
}

} // namespace floe::lake
