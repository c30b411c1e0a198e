#include "schema/json_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace floe::schema {

using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using iceberg::type_ptr;

namespace {

std::string_view type_name(uint8_t bit) {
    switch (bit) {
    case json_boolean:
        return "boolean";
    case json_integer:
        return "integer";
    case json_number:
        return "number";
    case json_string:
        return "string";
    case json_object:
        return "object";
    case json_array:
        return "array";
    default:
        return "null";
    }
}

bool is_null_only(const json_schema_node& n) {
    const auto& e = n.effective();
    return e.has_type && e.types == json_null;
}

/// The types a node without "type" can hold, from its other keywords.
uint8_t inferred_types(const json_schema_node& e) {
    if (!e.properties.empty() || e.additional_properties) return json_object;
    if (e.items || !e.tuple_items.empty()) return json_array;
    auto all_strings = [](const std::vector<nlohmann::ordered_json>& v) {
        return !v.empty() && std::all_of(v.begin(), v.end(), [](auto& j) { return j.is_string(); });
    };
    if (e.enum_values && all_strings(*e.enum_values)) return json_string;
    if (e.const_value && e.const_value->is_string()) return json_string;
    if (e.format) return json_string;
    return json_any;
}

std::string branch_name(const json_schema_node& b, size_t i) {
    const auto& e = b.effective();
    if (!b.title.empty()) return b.title;
    if (!e.title.empty()) return e.title;
    if (!b.ref_uri.empty()) {
        auto s = b.ref_uri.substr(b.ref_uri.find_last_of("/#") == std::string::npos
                                      ? 0
                                      : b.ref_uri.find_last_of("/#") + 1);
        if (!s.empty()) return s;
    }
    uint8_t t = (e.has_type ? e.types : inferred_types(e)) & ~json_null;
    if (t == (json_integer | json_number)) return "number";
    if (std::has_single_bit(static_cast<unsigned>(t))) return std::string(type_name(t));
    return fmt::format("branch{}", i);
}

void unique_names(std::vector<json_branch>& bs) {
    std::set<std::string> seen;
    for (size_t i = 0; i < bs.size(); ++i) {
        if (!seen.insert(bs[i].name).second) {
            bs[i].name += fmt::format("_{}", i);
            seen.insert(bs[i].name);
        }
    }
}

} // namespace

result<json_shape> json_classify(const json_schema_node& n, uint8_t allowed) {
    const json_schema_node& e = n.effective();
    json_shape s;
    s.node = &e;
    if (e.boolean_schema) {
        s.kind = *e.boolean_schema ? json_kind::any : json_kind::none;
        s.nullable = true;
        return s;
    }
    if (e.not_ || e.if_) return fail(errc::unsupported, "\"not\" and \"if\" have no Iceberg type");
    if (!e.one_of.empty() && !e.any_of.empty())
        return fail(errc::unsupported, "oneOf and anyOf together");
    if (!e.all_of.empty()) {
        if (e.all_of.size() > 1)
            return fail(errc::unsupported, "allOf with {} subschemas", e.all_of.size());
        return json_classify(*e.all_of[0], allowed);
    }
    if (!e.tuple_items.empty())
        return fail(errc::unsupported, "tuple arrays (\"items\" as a list) have no Iceberg type");
    const auto& alts = !e.one_of.empty() ? e.one_of : e.any_of;
    if (!alts.empty()) {
        std::vector<json_branch> kept;
        for (size_t i = 0; i < alts.size(); ++i) {
            if (is_null_only(*alts[i])) {
                s.nullable = true;
                continue;
            }
            kept.push_back(json_branch{branch_name(*alts[i], i), alts[i], allowed});
        }
        if (kept.empty()) return s; // only null: no column
        if (kept.size() == 1) {
            auto inner = FLOE_TRY(json_classify(*kept[0].node, allowed));
            inner.nullable = inner.nullable || s.nullable;
            return inner;
        }
        unique_names(kept);
        s.kind = json_kind::union_;
        s.branches = std::move(kept);
        return s;
    }
    uint8_t types = (e.has_type ? e.types : inferred_types(e)) & allowed;
    s.nullable = (types & json_null) || !e.has_type;
    uint8_t nn = types & ~json_null;
    if (nn == 0) return s;
    if (nn == (json_any & ~json_null) && !e.has_type) {
        s.kind = json_kind::any;
        return s;
    }
    if (nn == (json_integer | json_number)) nn = json_number;
    if (!std::has_single_bit(static_cast<unsigned>(nn))) {
        for (uint8_t bit :
             {json_boolean, json_integer, json_number, json_string, json_object, json_array}) {
            if (!(nn & bit)) continue;
            if (bit == json_integer && (nn & json_number)) continue; // "number" holds integers
            uint8_t only = bit == json_number ? uint8_t(json_number | json_integer) : bit;
            s.branches.push_back(json_branch{std::string(type_name(bit)), &e, only});
        }
        s.kind = json_kind::union_;
        return s;
    }
    switch (nn) {
    case json_boolean:
        s.kind = json_kind::boolean;
        break;
    case json_integer:
        s.kind = json_kind::integer;
        break;
    case json_number:
        s.kind = json_kind::number;
        break;
    case json_string: {
        s.kind = json_kind::string;
        if (e.format) {
            if (*e.format == "date")
                s.kind = json_kind::date;
            else if (*e.format == "date-time")
                s.kind = json_kind::timestamptz;
            else if (*e.format == "time")
                s.kind = json_kind::time;
            else if (*e.format == "uuid")
                s.kind = json_kind::uuid;
        }
        break;
    }
    case json_object:
        if (!e.properties.empty())
            s.kind = json_kind::object;
        else if (e.additional_properties && !(e.additional_properties->effective().boolean_schema))
            s.kind = json_kind::map;
        else
            s.kind = json_kind::any;
        break;
    case json_array:
        s.kind = e.items ? json_kind::array : json_kind::any;
        break;
    default:
        s.kind = json_kind::any;
        break;
    }
    return s;
}

namespace {

class json_mapper {
public:
    result<type_ptr> map(const json_shape& s) {
        switch (s.kind) {
        case json_kind::none:
            return type_ptr{};
        case json_kind::any:
        case json_kind::string:
            return type::primitive(type_id::string);
        case json_kind::boolean:
            return type::primitive(type_id::boolean);
        case json_kind::integer:
            return type::primitive(type_id::long_);
        case json_kind::number:
            return type::primitive(type_id::double_);
        case json_kind::date:
            return type::primitive(type_id::date);
        case json_kind::timestamptz:
            return type::primitive(type_id::timestamptz);
        case json_kind::time:
            return type::primitive(type_id::time);
        case json_kind::uuid:
            return type::primitive(type_id::uuid);
        case json_kind::object: {
            auto fields = FLOE_TRY(object_fields(*s.node));
            if (fields.empty())
                return type::primitive(type_id::string); // nothing typed: its JSON text
            auto t = std::make_shared<type>();
            t->id = type_id::struct_;
            t->fields = std::move(fields);
            return type_ptr(t);
        }
        case json_kind::map: {
            auto v = FLOE_TRY(sub(*s.node->additional_properties, s.node, "additionalProperties"));
            if (!v) return fail(errc::invalid_argument, "a map of nulls has no Iceberg type");
            auto t = std::make_shared<type>();
            t->id = type_id::map;
            t->key = type::primitive(type_id::string);
            t->value = v;
            t->value_required = false;
            return type_ptr(t);
        }
        case json_kind::array: {
            auto v = FLOE_TRY(sub(*s.node->items, s.node, "items"));
            if (!v) return fail(errc::invalid_argument, "an array of nulls has no Iceberg type");
            auto t = std::make_shared<type>();
            t->id = type_id::list;
            t->element = v;
            t->element_required = false;
            return type_ptr(t);
        }
        case json_kind::union_: {
            auto t = std::make_shared<type>();
            t->id = type_id::struct_;
            for (auto& b : s.branches) {
                auto bs = FLOE_TRY(json_classify(*b.node, b.types));
                auto bt = FLOE_TRY(enter(bs));
                if (!bt) continue;
                t->fields.push_back(
                    nested_field{.id = 0, .name = b.name, .required = false, .field_type = bt});
            }
            return type_ptr(t);
        }
        }
        return type_ptr{};
    }

    /// A shape below the current node: recursion is checked on objects, maps and arrays.
    result<type_ptr> enter(const json_shape& s) {
        bool container =
            s.kind == json_kind::object || s.kind == json_kind::map || s.kind == json_kind::array;
        if (!container) return map(s);
        if (std::find(_stack.begin(), _stack.end(), s.node) != _stack.end())
            return fail(
                errc::invalid_argument,
                "the schema is recursive: Iceberg cannot express a type that contains itself");
        if (_stack.size() >= 64)
            return fail(errc::invalid_argument, "objects nested deeper than 64 levels");
        _stack.push_back(s.node);
        auto r = map(s);
        _stack.pop_back();
        return r;
    }

    result<type_ptr> sub(const json_schema_node& n, const json_schema_node*, std::string_view) {
        auto s = FLOE_TRY(json_classify(n));
        return enter(s);
    }

    result<std::vector<nested_field>> object_fields(const json_schema_node& obj) {
        std::vector<nested_field> out;
        for (auto& [name, node] : obj.properties) {
            auto s = json_classify(*node);
            if (!s) return std::unexpected(std::move(s).error().with_context("property {}", name));
            auto t = enter(*s);
            if (!t) return std::unexpected(std::move(t).error().with_context("property {}", name));
            if (!*t) continue;
            out.push_back(nested_field{.id = 0,
                                       .name = name,
                                       .required = false,
                                       .field_type = *t,
                                       .doc = node->effective().description});
        }
        return out;
    }

    std::vector<const json_schema_node*> _stack;
};

} // namespace

result<type_ptr> json_shape_type(const json_shape& s) {
    json_mapper m;
    return m.enter(s);
}

result<std::vector<nested_field>> json_to_iceberg(const json_schema& js) {
    auto s = FLOE_TRY(json_classify(js.root()));
    if (s.kind != json_kind::object)
        return fail(errc::invalid_argument,
                    "the value schema is not an object with properties: it has no fields to make "
                    "columns of");
    json_mapper m;
    m._stack.push_back(s.node);
    return m.object_fields(*s.node);
}

} // namespace floe::schema
