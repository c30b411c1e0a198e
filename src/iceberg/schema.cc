#include "iceberg/schema.h"

#include "iceberg/json_util.h"

#include <nlohmann/json.hpp>

namespace floe::iceberg {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

type_ptr type::primitive(type_id id) {
    auto t = std::make_shared<type>();
    t->id = id;
    return t;
}

std::string primitive_name(const type& t) {
    switch (t.id) {
    case type_id::boolean: return "boolean";
    case type_id::int_: return "int";
    case type_id::long_: return "long";
    case type_id::float_: return "float";
    case type_id::double_: return "double";
    case type_id::decimal: return fmt::format("decimal({}, {})", t.precision, t.scale);
    case type_id::date: return "date";
    case type_id::time: return "time";
    case type_id::timestamp: return "timestamp";
    case type_id::timestamptz: return "timestamptz";
    case type_id::string: return "string";
    case type_id::uuid: return "uuid";
    case type_id::fixed: return fmt::format("fixed[{}]", t.length);
    case type_id::binary: return "binary";
    case type_id::struct_: return "struct";
    case type_id::list: return "list";
    case type_id::map: return "map";
    }
    return "?";
}

namespace {

const nested_field* find_in(const std::vector<nested_field>& fields, int32_t id);

const nested_field* find_in_type(const type& t, int32_t id) {
    switch (t.id) {
    case type_id::struct_: return find_in(t.fields, id);
    case type_id::list: return t.element ? find_in_type(*t.element, id) : nullptr;
    case type_id::map: {
        if (t.key)
            if (auto* f = find_in_type(*t.key, id)) return f;
        return t.value ? find_in_type(*t.value, id) : nullptr;
    }
    default: return nullptr;
    }
}

const nested_field* find_in(const std::vector<nested_field>& fields, int32_t id) {
    for (auto& f : fields) {
        if (f.id == id) return &f;
        if (auto* n = find_in_type(*f.field_type, id)) return n;
    }
    return nullptr;
}

int32_t highest(const type& t) {
    int32_t m = 0;
    switch (t.id) {
    case type_id::struct_:
        for (auto& f : t.fields) m = std::max({m, f.id, highest(*f.field_type)});
        break;
    case type_id::list: m = std::max(t.element_id, highest(*t.element)); break;
    case type_id::map: m = std::max({t.key_id, t.value_id, highest(*t.key), highest(*t.value)}); break;
    default: break;
    }
    return m;
}

ojson type_json(const type& t);

ojson field_json(const nested_field& f) {
    ojson j;
    j["id"] = f.id;
    j["name"] = f.name;
    j["required"] = f.required;
    j["type"] = type_json(*f.field_type);
    if (!f.doc.empty()) j["doc"] = f.doc;
    return j;
}

ojson type_json(const type& t) {
    switch (t.id) {
    case type_id::struct_: {
        ojson j;
        j["type"] = "struct";
        j["fields"] = ojson::array();
        for (auto& f : t.fields) j["fields"].push_back(field_json(f));
        return j;
    }
    case type_id::list: {
        ojson j;
        j["type"] = "list";
        j["element-id"] = t.element_id;
        j["element"] = type_json(*t.element);
        j["element-required"] = t.element_required;
        return j;
    }
    case type_id::map: {
        ojson j;
        j["type"] = "map";
        j["key-id"] = t.key_id;
        j["key"] = type_json(*t.key);
        j["value-id"] = t.value_id;
        j["value"] = type_json(*t.value);
        j["value-required"] = t.value_required;
        return j;
    }
    default: return primitive_name(t);
    }
}

result<type_ptr> parse_type(const json& j, int depth);

result<nested_field> parse_field(const json& j, int depth) {
    if (!j.is_object()) return fail(errc::corrupt, "schema field is not an object");
    nested_field f;
    f.id = FLOE_TRY(json_int<int32_t>(j, "id"));
    f.name = FLOE_TRY(json_string(j, "name"));
    f.required = FLOE_TRY(json_bool(j, "required"));
    if (!j.contains("type")) return fail(errc::corrupt, "field {} has no \"type\"", f.name);
    f.field_type = FLOE_TRY_CTX(parse_type(j["type"], depth + 1), "field {}", f.name);
    if (auto d = j.find("doc"); d != j.end() && d->is_string()) f.doc = d->get<std::string>();
    return f;
}

result<type_ptr> parse_type(const json& j, int depth) {
    if (depth > 64) return fail(errc::corrupt, "type nested deeper than 64 levels");
    if (j.is_string()) {
        auto s = j.get<std::string>();
        static const std::pair<const char*, type_id> prims[] = {
            {"boolean", type_id::boolean}, {"int", type_id::int_},       {"long", type_id::long_},
            {"float", type_id::float_},    {"double", type_id::double_}, {"date", type_id::date},
            {"time", type_id::time},       {"timestamp", type_id::timestamp},
            {"timestamptz", type_id::timestamptz}, {"string", type_id::string},
            {"uuid", type_id::uuid},       {"binary", type_id::binary}};
        for (auto& [n, id] : prims)
            if (s == n) return type::primitive(id);
        auto t = std::make_shared<type>();
        if (std::sscanf(s.c_str(), "fixed[%u]", &t->length) == 1) {
            t->id = type_id::fixed;
            return t;
        }
        if (std::sscanf(s.c_str(), "decimal(%d,%d)", &t->precision, &t->scale) == 2
            || std::sscanf(s.c_str(), "decimal(%d, %d)", &t->precision, &t->scale) == 2) {
            t->id = type_id::decimal;
            return t;
        }
        return fail(errc::corrupt, "unknown type \"{}\"", s);
    }
    if (!j.is_object()) return fail(errc::corrupt, "type is not a string or object");
    auto kind = FLOE_TRY(json_string(j, "type"));
    auto t = std::make_shared<type>();
    if (kind == "struct") {
        t->id = type_id::struct_;
        auto fs = j.find("fields");
        if (fs == j.end() || !fs->is_array()) return fail(errc::corrupt, "struct without fields");
        for (auto& f : *fs) t->fields.push_back(FLOE_TRY(parse_field(f, depth + 1)));
        return t;
    }
    if (kind == "list") {
        t->id = type_id::list;
        t->element_id = FLOE_TRY(json_int<int32_t>(j, "element-id"));
        t->element_required = FLOE_TRY(json_bool(j, "element-required"));
        if (!j.contains("element")) return fail(errc::corrupt, "list without element");
        t->element = FLOE_TRY(parse_type(j["element"], depth + 1));
        return t;
    }
    if (kind == "map") {
        t->id = type_id::map;
        t->key_id = FLOE_TRY(json_int<int32_t>(j, "key-id"));
        t->value_id = FLOE_TRY(json_int<int32_t>(j, "value-id"));
        t->value_required = FLOE_TRY(json_bool(j, "value-required"));
        if (!j.contains("key") || !j.contains("value")) return fail(errc::corrupt, "map without key or value");
        t->key = FLOE_TRY(parse_type(j["key"], depth + 1));
        t->value = FLOE_TRY(parse_type(j["value"], depth + 1));
        return t;
    }
    return fail(errc::corrupt, "unknown type \"{}\"", kind);
}

type_ptr prim(type_id id) { return type::primitive(id); }

} // namespace

const nested_field* schema::find(int32_t field_id) const noexcept { return find_in(fields, field_id); }

const nested_field* schema::find(std::string_view name) const noexcept {
    for (auto& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

int32_t schema::highest_field_id() const noexcept {
    int32_t m = 0;
    for (auto& f : fields) m = std::max({m, f.id, highest(*f.field_type)});
    return m;
}

const schema& floe_table_schema() {
    static const schema s = [] {
        using namespace field_ids;
        auto header = std::make_shared<type>();
        header->id = type_id::struct_;
        header->fields = {{header_key, "header_key", true, prim(type_id::string), {}},
                          {header_value, "header_value", false, prim(type_id::binary), {}}};
        auto headers_t = std::make_shared<type>();
        headers_t->id = type_id::list;
        headers_t->element_id = header_element;
        headers_t->element_required = true;
        headers_t->element = header;
        schema sc;
        sc.schema_id = 0;
        sc.fields = {
            {stream_key, "stream_key", true, prim(type_id::string), {}},
            {segment_id, "segment_id", true, prim(type_id::long_), {}},
            {message_id, "message_id", true, prim(type_id::string), {}},
            {message_ts, "message_ts", true, prim(type_id::long_), {}},
            {kafka_timestamp, "kafka_timestamp", true, prim(type_id::long_), {}},
            {key, "key", false, prim(type_id::binary), {}},
            {value, "value", false, prim(type_id::binary), {}},
            {headers, "headers", false, headers_t, {}},
            {partition, "partition", true, prim(type_id::int_), {}},
            {offset, "offset", true, prim(type_id::long_), {}},
        };
        return sc;
    }();
    return s;
}

const schema& floe_dlq_table_schema() {
    static const schema s = [] {
        schema sc = floe_table_schema();
        sc.fields.push_back({field_ids::error_reason, "error_reason", true, prim(type_id::string), {}});
        sc.fields.push_back({field_ids::error_detail, "error_detail", false, prim(type_id::string), {}});
        sc.fields.push_back({field_ids::schema_id, "schema_id", false, prim(type_id::int_), {}});
        return sc;
    }();
    return s;
}

result<std::vector<type_ptr>> partition_spec::result_types(const schema& s) const {
    std::vector<type_ptr> out;
    for (auto& f : fields) {
        auto* src = s.find(f.source_id);
        if (!src) return fail(errc::corrupt, "partition field {} has no source column {}", f.name, f.source_id);
        if (f.transform == "identity" || f.transform.starts_with("truncate"))
            out.push_back(src->field_type);
        else if (f.transform.starts_with("bucket") || f.transform == "year" || f.transform == "month"
                 || f.transform == "hour")
            out.push_back(prim(type_id::int_));
        else if (f.transform == "day")
            out.push_back(prim(type_id::date));
        else if (f.transform == "void")
            out.push_back(src->field_type);
        else
            return fail(errc::unsupported, "partition transform {}", f.transform);
    }
    return out;
}

partition_spec floe_partition_spec() {
    return partition_spec{0, {{field_ids::stream_key, 1000, "stream_key", "identity"}}};
}

sort_order floe_sort_order() {
    return sort_order{1, {{field_ids::message_ts, "identity", "asc", "nulls-first"}}};
}

ojson to_json(const schema& s) {
    ojson j;
    j["type"] = "struct";
    j["schema-id"] = s.schema_id;
    if (!s.identifier_field_ids.empty()) j["identifier-field-ids"] = s.identifier_field_ids;
    j["fields"] = ojson::array();
    for (auto& f : s.fields) j["fields"].push_back(field_json(f));
    return j;
}

ojson to_json(const partition_spec& p) {
    ojson j;
    j["spec-id"] = p.spec_id;
    j["fields"] = ojson::array();
    for (auto& f : p.fields)
        j["fields"].push_back(ojson{{"name", f.name}, {"transform", f.transform},
                                    {"source-id", f.source_id}, {"field-id", f.field_id}});
    return j;
}

ojson to_json(const sort_order& o) {
    ojson j;
    j["order-id"] = o.order_id;
    j["fields"] = ojson::array();
    for (auto& f : o.fields)
        j["fields"].push_back(ojson{{"transform", f.transform}, {"source-id", f.source_id},
                                    {"direction", f.direction}, {"null-order", f.null_order}});
    return j;
}

result<schema> schema_from_json(const json& j) {
    if (!j.is_object()) return fail(errc::corrupt, "schema is not an object");
    schema s;
    s.schema_id = j.contains("schema-id") ? FLOE_TRY(json_int<int32_t>(j, "schema-id")) : 0;
    if (auto it = j.find("identifier-field-ids"); it != j.end() && it->is_array())
        for (auto& v : *it) {
            if (!v.is_number_integer()) return fail(errc::corrupt, "identifier-field-ids holds a non-integer");
            s.identifier_field_ids.push_back(v.get<int32_t>());
        }
    auto fs = j.find("fields");
    if (fs == j.end() || !fs->is_array()) return fail(errc::corrupt, "schema without \"fields\"");
    for (auto& f : *fs) s.fields.push_back(FLOE_TRY(parse_field(f, 0)));
    return s;
}

result<partition_spec> partition_spec_from_json(const json& j) {
    partition_spec p;
    p.spec_id = FLOE_TRY(json_int<int32_t>(j, "spec-id"));
    auto fs = j.find("fields");
    if (fs == j.end() || !fs->is_array()) return fail(errc::corrupt, "partition spec without fields");
    for (auto& f : *fs) {
        if (!f.is_object()) return fail(errc::corrupt, "partition field is not an object");
        partition_field pf;
        pf.name = FLOE_TRY(json_string(f, "name"));
        pf.transform = FLOE_TRY(json_string(f, "transform"));
        pf.source_id = FLOE_TRY(json_int<int32_t>(f, "source-id"));
        pf.field_id = FLOE_TRY(json_int<int32_t>(f, "field-id"));
        p.fields.push_back(std::move(pf));
    }
    return p;
}

result<sort_order> sort_order_from_json(const json& j) {
    sort_order o;
    o.order_id = FLOE_TRY(json_int<int32_t>(j, "order-id"));
    auto fs = j.find("fields");
    if (fs == j.end() || !fs->is_array()) return fail(errc::corrupt, "sort order without fields");
    for (auto& f : *fs) {
        if (!f.is_object()) return fail(errc::corrupt, "sort field is not an object");
        sort_field sf;
        sf.transform = FLOE_TRY(json_string(f, "transform"));
        sf.source_id = FLOE_TRY(json_int<int32_t>(f, "source-id"));
        sf.direction = FLOE_TRY(json_string(f, "direction"));
        sf.null_order = FLOE_TRY(json_string(f, "null-order"));
        o.fields.push_back(std::move(sf));
    }
    return o;
}

} // namespace floe::iceberg
