#include "format/avro/schema.h"

#include <nlohmann/json.hpp>

#include <unordered_map>

namespace floe::avro {

using json = nlohmann::json;

std::string_view to_string(type t) noexcept {
    switch (t) {
    case type::null: return "null";
    case type::boolean: return "boolean";
    case type::int_: return "int";
    case type::long_: return "long";
    case type::float_: return "float";
    case type::double_: return "double";
    case type::bytes: return "bytes";
    case type::string: return "string";
    case type::record: return "record";
    case type::enum_: return "enum";
    case type::array: return "array";
    case type::map: return "map";
    case type::union_: return "union";
    case type::fixed: return "fixed";
    }
    return "?";
}

const field* node::find_field(std::string_view n) const noexcept {
    for (auto& f : fields)
        if (f.name == n) return &f;
    return nullptr;
}

int node::field_index(std::string_view n) const noexcept {
    for (size_t i = 0; i < fields.size(); ++i)
        if (fields[i].name == n) return static_cast<int>(i);
    return -1;
}

namespace {

std::optional<type> primitive(std::string_view s) {
    if (s == "null") return type::null;
    if (s == "boolean") return type::boolean;
    if (s == "int") return type::int_;
    if (s == "long") return type::long_;
    if (s == "float") return type::float_;
    if (s == "double") return type::double_;
    if (s == "bytes") return type::bytes;
    if (s == "string") return type::string;
    return std::nullopt;
}

// nlohmann's parser is iterative but everything after it (our walk, its destructor in older
// releases) recurses, so a hostile "[[[[..." is refused before parsing.
result<void> check_nesting(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > limit)
                return fail(errc::corrupt, "schema JSON nested deeper than {} levels", limit);
        } else if (c == ']' || c == '}') --depth;
    }
    return {};
}

result<std::optional<int32_t>> int_attr(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::optional<int32_t>{};
    if (!it->is_number_integer())
        return fail(errc::corrupt, "attribute \"{}\" is not an integer", key);
    auto v = it->get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX)
        return fail(errc::corrupt, "attribute \"{}\" out of int range", key);
    return std::optional<int32_t>(static_cast<int32_t>(v));
}

} // namespace

class schema_parser {
public:
    explicit schema_parser(schema& s) : _s(s) {}

    result<const node*> parse(const json& j, const std::string& ns, int depth) {
        if (depth > schema::max_depth)
            return fail(errc::corrupt, "schema nested deeper than {} levels", schema::max_depth);
        if (j.is_string()) return named_or_primitive(j.get_ref<const std::string&>(), ns);
        if (j.is_array()) {
            auto* n = make(type::union_);
            if (j.empty()) return fail(errc::corrupt, "empty union");
            for (auto& b : j) {
                auto* bn = FLOE_TRY(parse(b, ns, depth + 1));
                if (bn->kind == type::union_)
                    return fail(errc::corrupt, "union directly inside a union");
                n->branches.push_back(bn);
            }
            return n;
        }
        if (!j.is_object()) return fail(errc::corrupt, "schema is not a string, array or object");
        auto t = j.find("type");
        if (t == j.end()) return fail(errc::corrupt, "schema object without \"type\"");
        if (!t->is_string()) return parse(*t, ns, depth + 1);
        auto& tn = t->get_ref<const std::string&>();
        std::string logical;
        if (auto lt = j.find("logicalType"); lt != j.end() && lt->is_string())
            logical = lt->get<std::string>();
        if (auto p = primitive(tn)) {
            auto* n = make(*p);
            n->logical_type = std::move(logical);
            return n;
        }
        if (tn == "record" || tn == "error") return record(j, ns, depth, std::move(logical));
        if (tn == "enum") {
            auto* n = FLOE_TRY(named(j, ns, type::enum_));
            auto sy = j.find("symbols");
            if (sy == j.end() || !sy->is_array()) return fail(errc::corrupt, "enum without symbols");
            for (auto& s : *sy) {
                if (!s.is_string()) return fail(errc::corrupt, "enum symbol is not a string");
                n->symbols.push_back(s.get<std::string>());
            }
            n->logical_type = std::move(logical);
            return n;
        }
        if (tn == "fixed") {
            auto* n = FLOE_TRY(named(j, ns, type::fixed));
            auto sz = j.find("size");
            if (sz == j.end() || !sz->is_number_unsigned())
                return fail(errc::corrupt, "fixed without a valid size");
            auto v = sz->get<uint64_t>();
            if (v > (1u << 20)) return fail(errc::corrupt, "fixed size {} too large", v);
            n->fixed_size = v;
            n->logical_type = std::move(logical);
            return n;
        }
        if (tn == "array") {
            auto* n = make(type::array);
            auto it = j.find("items");
            if (it == j.end()) return fail(errc::corrupt, "array without items");
            n->items = FLOE_TRY(parse(*it, ns, depth + 1));
            n->element_id = FLOE_TRY(int_attr(j, "element-id"));
            n->logical_type = std::move(logical);
            return n;
        }
        if (tn == "map") {
            auto* n = make(type::map);
            auto it = j.find("values");
            if (it == j.end()) return fail(errc::corrupt, "map without values");
            n->items = FLOE_TRY(parse(*it, ns, depth + 1));
            n->key_id = FLOE_TRY(int_attr(j, "key-id"));
            n->value_id = FLOE_TRY(int_attr(j, "value-id"));
            n->logical_type = std::move(logical);
            return n;
        }
        return named_or_primitive(tn, ns);
    }

    /// Fewest bytes a value takes; also rejects records that contain themselves with no union
    /// or array in between (no finite value exists).
    result<size_t> min_size(node* n, int depth) {
        if (depth > schema::max_depth * 4) return fail(errc::corrupt, "schema recursion too deep");
        switch (n->kind) {
        case type::null: return size_t{0};
        case type::float_: return size_t{4};
        case type::double_: return size_t{8};
        case type::fixed: return n->fixed_size;
        case type::record: {
            if (_visiting.count(n)) return fail(errc::corrupt, "record {} contains itself", n->name);
            if (auto d = _done.find(n); d != _done.end()) return d->second;
            _visiting[n] = true;
            size_t total = 0;
            for (auto& f : n->fields)
                total += FLOE_TRY(min_size(const_cast<node*>(f.type), depth + 1));
            _visiting.erase(n);
            _done[n] = total;
            return total;
        }
        default: return size_t{1};
        }
    }

    result<void> finish() {
        for (auto& n : _s._nodes) n->min_encoded_size = FLOE_TRY(min_size(n.get(), 0));
        // Arrays, maps and unions also need their children sized, done above since every node is
        // in _nodes.
        return {};
    }

private:
    node* make(type t) {
        _s._nodes.push_back(std::make_unique<node>());
        _s._nodes.back()->kind = t;
        return _s._nodes.back().get();
    }

    static std::string full_name(const std::string& name, const std::string& ns) {
        if (name.find('.') != std::string::npos || ns.empty()) return name;
        return ns + "." + name;
    }

    result<const node*> named_or_primitive(const std::string& name, const std::string& ns) {
        if (auto p = primitive(name)) return make(*p);
        if (auto it = _names.find(full_name(name, ns)); it != _names.end()) return it->second;
        if (auto it = _names.find(name); it != _names.end()) return it->second;
        return fail(errc::corrupt, "unknown type name \"{}\"", name);
    }

    result<node*> named(const json& j, const std::string& ns, type t) {
        auto nm = j.find("name");
        if (nm == j.end() || !nm->is_string())
            return fail(errc::corrupt, "{} without a name", to_string(t));
        std::string space = ns;
        if (auto s = j.find("namespace"); s != j.end() && s->is_string()) space = s->get<std::string>();
        auto full = full_name(nm->get<std::string>(), space);
        if (full.empty()) return fail(errc::corrupt, "{} with an empty name", to_string(t));
        if (_names.count(full)) return fail(errc::corrupt, "type name \"{}\" defined twice", full);
        auto* n = make(t);
        n->name = full;
        _names[full] = n;
        return n;
    }

    result<const node*> record(const json& j, const std::string& ns, int depth, std::string logical) {
        auto* n = FLOE_TRY(named(j, ns, type::record));
        n->logical_type = std::move(logical);
        auto dot = n->name.rfind('.');
        std::string inner_ns = dot == std::string::npos ? std::string() : n->name.substr(0, dot);
        auto fs = j.find("fields");
        if (fs == j.end() || !fs->is_array())
            return fail(errc::corrupt, "record {} without fields", n->name);
        for (auto& f : *fs) {
            if (!f.is_object()) return fail(errc::corrupt, "record {}: field is not an object", n->name);
            auto fn = f.find("name");
            auto ft = f.find("type");
            if (fn == f.end() || !fn->is_string() || ft == f.end())
                return fail(errc::corrupt, "record {}: field without name or type", n->name);
            field fld;
            fld.name = fn->get<std::string>();
            if (n->find_field(fld.name))
                return fail(errc::corrupt, "record {}: field {} twice", n->name, fld.name);
            fld.type = FLOE_TRY_CTX(parse(*ft, inner_ns, depth + 1), "field {}", fld.name);
            fld.field_id = FLOE_TRY_CTX(int_attr(f, "field-id"), "field {}", fld.name);
            n->fields.push_back(std::move(fld));
        }
        return n;
    }

    schema& _s;
    std::unordered_map<std::string, const node*> _names;
    std::unordered_map<const node*, bool> _visiting;
    std::unordered_map<const node*, size_t> _done;
};

result<schema> schema::parse(std::string_view json_text) {
    FLOE_TRY(check_nesting(json_text, max_depth * 2));
    auto j = json::parse(json_text, nullptr, false);
    if (j.is_discarded()) return fail(errc::corrupt, "schema is not valid JSON");
    schema s;
    s._json = std::string(json_text);
    try {
        schema_parser p(s);
        s._root = FLOE_TRY(p.parse(j, "", 0));
        FLOE_TRY(p.finish());
    } catch (const json::exception& e) {
        return fail(errc::corrupt, "schema JSON: {}", e.what());
    }
    return s;
}

} // namespace floe::avro
