#include "format/parquet/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace floe::parquet {

schema_node leaf_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                      physical_type type, logical_type logical) {
    schema_node n;
    n.name = std::move(name);
    n.field_id = field_id;
    n.rep = rep;
    n.type = type;
    n.logical = logical;
    return n;
}

schema_node group_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                       std::vector<schema_node> children) {
    schema_node n;
    n.name = std::move(name);
    n.field_id = field_id;
    n.rep = rep;
    n.children = std::move(children);
    return n;
}

schema_node list_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                      schema_node element) {
    element.name = "element";
    schema_node list = group_node("list", std::nullopt, repetition::repeated, {std::move(element)});
    schema_node outer = group_node(std::move(name), field_id, rep, {std::move(list)});
    outer.logical = logical_type::list;
    return outer;
}

schema_node fixed_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                       int32_t length, logical_type logical) {
    auto n = leaf_node(std::move(name), field_id, rep, physical_type::fixed_len_byte_array, logical);
    n.type_length = length;
    return n;
}

int32_t decimal_fixed_length(int32_t precision) {
    // The largest unscaled value has `precision` nines; n bytes hold up to 2^(8n-1) - 1.
    // log2(10) * precision + 1 sign bit, rounded up to bytes (exact enough: 10^p is never a
    // power of two, and the margin of log2(10) below is far smaller than a bit for p <= 1000).
    if (precision <= 0) return 1;
    double bits = precision * 3.321928094887362 + 1;
    return static_cast<int32_t>((static_cast<int64_t>(bits) + 8) / 8);
}

schema_node decimal_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                         int32_t precision, int32_t scale) {
    schema_node n;
    if (precision <= 9)
        n = leaf_node(std::move(name), field_id, rep, physical_type::int32, logical_type::decimal);
    else if (precision <= 18)
        n = leaf_node(std::move(name), field_id, rep, physical_type::int64, logical_type::decimal);
    else
        n = fixed_node(std::move(name), field_id, rep, decimal_fixed_length(precision),
                       logical_type::decimal);
    n.precision = precision;
    n.scale = scale;
    return n;
}

schema_node map_node(std::string name, std::optional<int32_t> field_id, repetition rep,
                     schema_node key, schema_node value) {
    key.name = "key";
    key.rep = repetition::required;
    value.name = "value";
    std::vector<schema_node> kv;
    kv.push_back(std::move(key));
    kv.push_back(std::move(value));
    schema_node entries = group_node("key_value", std::nullopt, repetition::repeated, std::move(kv));
    std::vector<schema_node> outer_children;
    outer_children.push_back(std::move(entries));
    schema_node outer = group_node(std::move(name), field_id, rep, std::move(outer_children));
    outer.logical = logical_type::map;
    return outer;
}

int compare_plain(const column_descriptor& d, std::string_view a, std::string_view b) {
    auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
    auto load = [](auto& out, std::string_view v) {
        if (!v.empty()) std::memcpy(&out, v.data(), std::min(sizeof(out), v.size()));
    };
    auto cmp = [&](auto x, auto y) {
        load(x, a);
        load(y, b);
        return sign(x, y);
    };
    switch (d.type) {
    case physical_type::int32:
        return cmp(int32_t{0}, int32_t{0});
    case physical_type::int64:
        return cmp(int64_t{0}, int64_t{0});
    case physical_type::float_:
        return cmp(0.0f, 0.0f);
    case physical_type::double_:
        return cmp(0.0, 0.0);
    case physical_type::fixed_len_byte_array:
        if (d.logical == logical_type::decimal && !a.empty() && !b.empty() && a[0] != b[0])
            return sign(static_cast<int8_t>(a[0]), static_cast<int8_t>(b[0]));
        [[fallthrough]];
    default: { // BOOLEAN (one byte), BYTE_ARRAY: unsigned bytes (char_traits<char> compares so)
        int c = a.compare(b);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    }
}

std::string column_descriptor::dotted_path() const {
    return fmt::format("{}", fmt::join(path, "."));
}

namespace {

/// A leaf's physical type, length and logical type fit together.
result<void> check_leaf(const schema_node& n) {
    using pt = physical_type;
    using lt = logical_type;
    auto t = *n.type;
    switch (t) {
    case pt::boolean:
    case pt::int32:
    case pt::int64:
    case pt::float_:
    case pt::double_:
    case pt::byte_array:
    case pt::int96: // read only (legacy timestamps, encrypted test vectors); never written
        break;
    case pt::fixed_len_byte_array:
        if (n.type_length <= 0 || n.type_length > (1 << 20))
            return fail(errc::invalid_argument, "column {}: fixed length {} out of range", n.name,
                        n.type_length);
        break;
    default:
        return fail(errc::unsupported, "column {}: physical type {} not supported", n.name,
                    static_cast<int>(t));
    }
    auto need = [&](bool ok, std::string_view what) -> result<void> {
        if (!ok) return fail(errc::invalid_argument, "column {}: {} on physical type {}", n.name, what,
                             static_cast<int>(t));
        return {};
    };
    switch (n.logical) {
    case lt::string:
        return need(t == pt::byte_array, "STRING");
    case lt::enum_:
        return need(t == pt::byte_array, "ENUM");
    case lt::json:
        return need(t == pt::byte_array, "JSON");
    case lt::date:
        return need(t == pt::int32, "DATE");
    case lt::time_micros:
        return need(t == pt::int64, "TIME(MICROS)");
    case lt::timestamp_micros:
        return need(t == pt::int64, "TIMESTAMP(MICROS)");
    case lt::uuid:
        return need(t == pt::fixed_len_byte_array && n.type_length == 16, "UUID");
    case lt::map:
    case lt::list:
        return fail(errc::invalid_argument, "column {}: MAP/LIST on a leaf", n.name);
    case lt::decimal: {
        if (n.precision <= 0 || n.scale < 0 || n.scale > n.precision)
            return fail(errc::invalid_argument, "column {}: DECIMAL({}, {})", n.name, n.precision,
                        n.scale);
        int32_t max_digits = 0;
        if (t == pt::int32)
            max_digits = 9;
        else if (t == pt::int64)
            max_digits = 18;
        else if (t == pt::fixed_len_byte_array || t == pt::byte_array)
            max_digits = t == pt::byte_array ? INT32_MAX
                                             : static_cast<int32_t>((8.0 * n.type_length - 1)
                                                                    * 0.30102999566398120);
        if (n.precision > max_digits)
            return fail(errc::invalid_argument, "column {}: DECIMAL({}, {}) does not fit type {}",
                        n.name, n.precision, n.scale, static_cast<int>(t));
        return {};
    }
    default:
        return {};
    }
}

result<void> flatten(const schema_node& n, std::vector<std::string>& path, int16_t def, int16_t rep,
                     std::vector<column_descriptor>& out, int depth) {
    if (depth > 32) return fail(errc::invalid_argument, "schema nested deeper than 32 levels");
    if (n.name.empty()) return fail(errc::invalid_argument, "schema node without a name");
    if (n.rep == repetition::optional) ++def;
    if (n.rep == repetition::repeated) {
        ++def;
        ++rep;
    }
    path.push_back(n.name);
    if (n.is_leaf()) {
        if (!n.children.empty())
            return fail(errc::invalid_argument, "leaf {} has children", n.name);
        FLOE_TRY(check_leaf(n));
        column_descriptor c;
        c.path = path;
        c.type = *n.type;
        c.logical = n.logical;
        c.type_length = n.type_length;
        c.precision = n.precision;
        c.scale = n.scale;
        c.utc = n.utc;
        c.max_def = def;
        c.max_rep = rep;
        c.field_id = n.field_id;
        c.enc = n.enc;
        c.bloom_filter = n.bloom_filter;
        out.push_back(std::move(c));
    } else {
        if (n.children.empty())
            return fail(errc::invalid_argument, "group {} has no children", n.name);
        for (auto& ch : n.children)
            FLOE_TRY(flatten(ch, path, def, rep, out, depth + 1));
    }
    path.pop_back();
    return {};
}

void build_elements(const schema_node& n, bool is_root, std::vector<schema_element>& out) {
    schema_element e;
    e.name = n.name;
    if (!is_root) e.repetition_type = n.rep;
    e.field_id = n.field_id;
    if (n.is_leaf()) {
        e.type = n.type;
        if (*n.type == physical_type::fixed_len_byte_array) e.type_length = n.type_length;
    } else {
        e.num_children = static_cast<int32_t>(n.children.size());
    }
    e.logical = n.logical;
    switch (n.logical) {
    case logical_type::string:
        e.converted = static_cast<int32_t>(converted_type::utf8);
        break;
    case logical_type::map:
        e.converted = static_cast<int32_t>(converted_type::map);
        break;
    case logical_type::list:
        e.converted = static_cast<int32_t>(converted_type::list);
        break;
    case logical_type::enum_:
        e.converted = static_cast<int32_t>(converted_type::enum_);
        break;
    case logical_type::decimal:
        e.converted = static_cast<int32_t>(converted_type::decimal);
        e.scale = e.logical_scale = n.scale;
        e.precision = e.logical_precision = n.precision;
        break;
    case logical_type::date:
        e.converted = static_cast<int32_t>(converted_type::date);
        break;
    case logical_type::time_micros:
        e.converted = static_cast<int32_t>(converted_type::time_micros);
        e.logical_utc = false; // normalised by schema::make
        break;
    case logical_type::timestamp_micros:
        e.converted = static_cast<int32_t>(converted_type::timestamp_micros);
        e.logical_utc = n.utc;
        break;
    case logical_type::json:
        e.converted = static_cast<int32_t>(converted_type::json);
        break;
    case logical_type::uuid: // no ConvertedType
    case logical_type::none:
        break;
    default:
        e.logical = logical_type::none; // `other` is what a reader saw, not something to write
        break;
    }
    out.push_back(std::move(e));
    for (auto& c : n.children)
        build_elements(c, false, out);
}

result<schema_node> from_elements_rec(const std::vector<schema_element>& els, size_t& pos,
                                      int depth) {
    if (depth > 32) return fail(errc::corrupt, "schema nested deeper than 32 levels");
    if (pos >= els.size()) return fail(errc::corrupt, "schema: element list ends early");
    const auto& e = els[pos++];
    schema_node n;
    n.name = e.name;
    n.field_id = e.field_id;
    n.rep = e.repetition_type.value_or(repetition::required);
    if (static_cast<int32_t>(n.rep) < 0 || static_cast<int32_t>(n.rep) > 2)
        return fail(errc::corrupt, "schema: element {} has repetition {}", e.name,
                    static_cast<int32_t>(n.rep));
    n.logical = e.logical;
    n.scale = e.logical_scale;
    n.precision = e.logical_precision;
    n.utc = e.logical_utc;
    if (n.logical == logical_type::none && e.converted) {
        // Legacy ConvertedType only (TIME/TIMESTAMP ones meant UTC-adjusted values).
        n.utc = true;
        switch (static_cast<converted_type>(*e.converted)) {
        case converted_type::utf8:
            n.logical = logical_type::string;
            break;
        case converted_type::map:
            n.logical = logical_type::map;
            break;
        case converted_type::list:
            n.logical = logical_type::list;
            break;
        case converted_type::enum_:
            n.logical = logical_type::enum_;
            break;
        case converted_type::decimal:
            n.logical = logical_type::decimal;
            n.scale = e.scale.value_or(0);
            n.precision = e.precision.value_or(0);
            break;
        case converted_type::date:
            n.logical = logical_type::date;
            break;
        case converted_type::time_micros:
            n.logical = logical_type::time_micros;
            break;
        case converted_type::timestamp_micros:
            n.logical = logical_type::timestamp_micros;
            break;
        case converted_type::json:
            n.logical = logical_type::json;
            break;
        default:
            n.logical = logical_type::other;
            break;
        }
    }
    int32_t kids = e.num_children.value_or(0);
    if (kids < 0 || static_cast<size_t>(kids) > els.size() - pos)
        return fail(errc::corrupt, "schema: element {} claims {} children, {} elements left",
                    e.name, kids, els.size() - pos);
    if (kids == 0) {
        if (!e.type) return fail(errc::corrupt, "schema: leaf {} has no type", e.name);
        n.type = *e.type;
        n.type_length = e.type_length.value_or(0);
    }
    for (int32_t i = 0; i < kids; ++i)
        n.children.push_back(FLOE_TRY(from_elements_rec(els, pos, depth + 1)));
    return n;
}

} // namespace

namespace {
/// TIME is always local (isAdjustedToUTC=false), as Iceberg's time type is: `utc` is cleared on
/// TIME leaves so a schema and the one read back from its file are equal.
void normalise(schema_node& n, int depth) {
    if (depth > 64) return; // flatten() refuses such depth
    if (n.is_leaf() && n.logical == logical_type::time_micros) n.utc = false;
    for (auto& c : n.children)
        normalise(c, depth + 1);
}
} // namespace

result<schema> schema::make(schema_node root) {
    schema s;
    std::vector<std::string> path;
    if (root.is_leaf()) return fail(errc::invalid_argument, "schema root must be a group");
    normalise(root, 0);
    for (auto& c : root.children)
        FLOE_TRY(flatten(c, path, 0, 0, s._columns, 1));
    if (s._columns.empty()) return fail(errc::invalid_argument, "schema has no columns");
    s._root = std::move(root);
    return s;
}

result<schema> schema::from_elements(const std::vector<schema_element>& elements) {
    size_t pos = 0;
    auto root = FLOE_TRY(from_elements_rec(elements, pos, 0));
    if (pos != elements.size())
        return fail(errc::corrupt, "schema: {} elements after the root's subtree",
                    elements.size() - pos);
    return make(std::move(root));
}

std::vector<schema_element> schema::to_elements() const {
    std::vector<schema_element> out;
    build_elements(_root, true, out);
    return out;
}

std::optional<size_t> schema::column_by_field_id(int32_t field_id) const {
    for (size_t i = 0; i < _columns.size(); ++i)
        if (_columns[i].field_id == field_id) return i;
    return std::nullopt;
}

std::optional<size_t> schema::column_by_path(std::string_view dotted) const {
    for (size_t i = 0; i < _columns.size(); ++i)
        if (_columns[i].dotted_path() == dotted) return i;
    return std::nullopt;
}

schema_node message_schema_node() {
    using pt = physical_type;
    using lt = logical_type;
    auto req = repetition::required, opt = repetition::optional;
    auto key = leaf_node("key", 6, opt, pt::byte_array);
    key.bloom_filter = true;
    auto header = group_node("element", 11, req,
                             {leaf_node("header_key", 12, req, pt::byte_array, lt::string),
                              leaf_node("header_value", 13, opt, pt::byte_array)});
    return group_node("table", std::nullopt, req,
                      {leaf_node("stream_key", 1, req, pt::byte_array, lt::string),
                       leaf_node("segment_id", 2, req, pt::int64),
                       leaf_node("message_id", 3, req, pt::byte_array, lt::string),
                       leaf_node("message_ts", 4, req, pt::int64),
                       leaf_node("kafka_timestamp", 5, req, pt::int64), std::move(key),
                       leaf_node("value", 7, opt, pt::byte_array),
                       list_node("headers", 8, opt, std::move(header)),
                       leaf_node("partition", 9, req, pt::int32),
                       leaf_node("offset", 10, req, pt::int64)});
}

const schema& message_schema() {
    static const schema s = *schema::make(message_schema_node());
    return s;
}

} // namespace floe::parquet
