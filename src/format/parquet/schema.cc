#include "format/parquet/schema.h"

#include <fmt/format.h>

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

std::string column_descriptor::dotted_path() const {
    return fmt::format("{}", fmt::join(path, "."));
}

namespace {

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
        auto t = *n.type;
        if (t != physical_type::int32 && t != physical_type::int64
            && t != physical_type::byte_array)
            return fail(errc::unsupported, "column {}: physical type {} not supported", n.name,
                        static_cast<int>(t));
        if (n.logical == logical_type::string && t != physical_type::byte_array)
            return fail(errc::invalid_argument, "column {}: STRING needs BYTE_ARRAY", n.name);
        column_descriptor c;
        c.path = path;
        c.type = t;
        c.logical = n.logical;
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
        if (n.logical == logical_type::string) {
            e.logical = logical_type::string;
            e.converted = static_cast<int32_t>(converted_type::utf8);
        }
    } else {
        e.num_children = static_cast<int32_t>(n.children.size());
        if (n.logical == logical_type::list) {
            e.logical = logical_type::list;
            e.converted = static_cast<int32_t>(converted_type::list);
        }
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
    if (n.logical == logical_type::none && e.converted) {
        if (*e.converted == static_cast<int32_t>(converted_type::utf8))
            n.logical = logical_type::string;
        if (*e.converted == static_cast<int32_t>(converted_type::list))
            n.logical = logical_type::list;
    }
    int32_t kids = e.num_children.value_or(0);
    if (kids < 0 || static_cast<size_t>(kids) > els.size() - pos)
        return fail(errc::corrupt, "schema: element {} claims {} children, {} elements left",
                    e.name, kids, els.size() - pos);
    if (kids == 0) {
        if (!e.type) return fail(errc::corrupt, "schema: leaf {} has no type", e.name);
        n.type = *e.type;
    }
    for (int32_t i = 0; i < kids; ++i)
        n.children.push_back(FLOE_TRY(from_elements_rec(els, pos, depth + 1)));
    return n;
}

} // namespace

result<schema> schema::make(schema_node root) {
    schema s;
    std::vector<std::string> path;
    if (root.is_leaf()) return fail(errc::invalid_argument, "schema root must be a group");
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
