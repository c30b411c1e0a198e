#include "schema/json_schema.h"

#include "schema/json_text.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

namespace floe::schema {

using json = nlohmann::ordered_json;

std::string json_types_to_string(uint8_t bits) {
    if (bits == json_any) return "any";
    static constexpr std::pair<uint8_t, const char*> names[] = {
        {json_null, "null"},     {json_boolean, "boolean"}, {json_integer, "integer"}, {json_number, "number"},
        {json_string, "string"}, {json_object, "object"},   {json_array, "array"}};
    std::string out;
    for (auto [b, n] : names)
        if (bits & b) {
            if (!out.empty()) out += ',';
            out += n;
        }
    return out.empty() ? "nothing" : out;
}

const json_schema_node* json_schema_node::find_property(std::string_view name) const noexcept {
    for (auto& [k, v] : properties)
        if (k == name) return v;
    return nullptr;
}

bool json_schema_node::is_required(std::string_view name) const noexcept {
    for (auto& r : required)
        if (r == name) return true;
    return false;
}

const json_schema_node& json_schema_node::effective() const noexcept {
    const json_schema_node* n = this;
    for (int i = 0; i < 32 && n->ref; ++i) n = n->ref;
    return *n;
}

namespace {

std::optional<uint8_t> type_bit(std::string_view s) {
    if (s == "null") return json_null;
    if (s == "boolean") return json_boolean;
    if (s == "integer") return json_integer;
    if (s == "number") return uint8_t(json_number | json_integer);
    if (s == "string") return json_string;
    if (s == "object") return json_object;
    if (s == "array") return json_array;
    return std::nullopt;
}

// Decodes one JSON pointer token (~1 -> /, ~0 -> ~, percent-decoding of URI fragments).
std::string pointer_token(std::string_view t) {
    std::string out;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '~' && i + 1 < t.size()) {
            out += t[i + 1] == '1' ? '/' : '~';
            ++i;
        } else if (t[i] == '%' && i + 2 < t.size() && std::isxdigit(uint8_t(t[i + 1])) &&
                   std::isxdigit(uint8_t(t[i + 2]))) {
            out += char(std::stoi(std::string(t.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += t[i];
        }
    }
    return out;
}

} // namespace

class json_schema_parser {
public:
    json_schema_parser(json_schema& s, int max_depth) : _s(s), _max_depth(max_depth) {}

    // Parses the subschema at `j` (which lives in `doc`, whose root is `doc_root`).
    result<const json_schema_node*> parse(const json& j, const json_schema* owner, int depth) {
        if (depth > _max_depth) return fail(errc::invalid_argument, "schema nested deeper than {} levels", _max_depth);
        auto key = std::make_pair(owner, &j);
        if (auto it = _memo.find(key); it != _memo.end()) return it->second;
        _s._nodes.push_back(std::make_unique<json_schema_node>());
        auto* n = _s._nodes.back().get();
        _memo[key] = n;
        n->raw = &j;
        if (j.is_boolean()) {
            n->boolean_schema = j.get<bool>();
            return n;
        }
        if (!j.is_object()) return fail(errc::invalid_argument, "a schema must be an object or a boolean");
        auto sub = [&](const char* k) -> result<const json_schema_node*> {
            auto it = j.find(k);
            if (it == j.end()) return nullptr;
            return FLOE_TRY_CTX(parse(*it, owner, depth + 1), "\"{}\"", k);
        };
        auto sub_list = [&](const char* k, std::vector<const json_schema_node*>& out) -> result<void> {
            auto it = j.find(k);
            if (it == j.end()) return {};
            if (!it->is_array() || it->empty())
                return fail(errc::invalid_argument, "\"{}\" must be a non-empty array of schemas", k);
            for (auto& x : *it) out.push_back(FLOE_TRY_CTX(parse(x, owner, depth + 1), "\"{}\"", k));
            return {};
        };
        auto sub_map = [&](const char* k, std::vector<std::pair<std::string, const json_schema_node*>>& out)
            -> result<void> {
            auto it = j.find(k);
            if (it == j.end()) return {};
            if (!it->is_object()) return fail(errc::invalid_argument, "\"{}\" must be an object", k);
            for (auto& [name, x] : it->items())
                out.emplace_back(name, FLOE_TRY_CTX(parse(x, owner, depth + 1), "\"{}\" of \"{}\"", k, name));
            return {};
        };
        auto count = [&](const char* k, std::optional<uint64_t>& out) -> result<void> {
            auto it = j.find(k);
            if (it == j.end()) return {};
            if (!it->is_number_integer() || (!it->is_number_unsigned() && it->get<int64_t>() < 0)) {
                // 5.0 is allowed by draft-06+ as an integer.
                if (it->is_number_float() && it->get<double>() >= 0 && it->get<double>() == double(uint64_t(it->get<double>()))) {
                    out = uint64_t(it->get<double>());
                    return {};
                }
                return fail(errc::invalid_argument, "\"{}\" must be a non-negative integer", k);
            }
            out = it->get<uint64_t>();
            return {};
        };
        auto number = [&](const char* k, std::optional<double>& out) -> result<void> {
            auto it = j.find(k);
            if (it == j.end() || it->is_boolean()) return {};
            if (!it->is_number()) return fail(errc::invalid_argument, "\"{}\" must be a number", k);
            out = it->get<double>();
            return {};
        };
        auto string = [&](const char* k, std::optional<std::string>& out) -> result<void> {
            auto it = j.find(k);
            if (it == j.end()) return {};
            if (!it->is_string()) return fail(errc::invalid_argument, "\"{}\" must be a string", k);
            out = it->get<std::string>();
            return {};
        };

        if (auto t = j.find("type"); t != j.end()) {
            n->has_type = true;
            n->types = 0;
            auto one = [&](const json& x) -> result<void> {
                if (!x.is_string()) return fail(errc::invalid_argument, "\"type\" must name JSON types");
                auto b = type_bit(x.get<std::string>());
                if (!b) return fail(errc::invalid_argument, "unknown type \"{}\"", x.get<std::string>());
                n->types |= *b;
                return {};
            };
            if (t->is_array()) {
                if (t->empty()) return fail(errc::invalid_argument, "\"type\" must not be an empty array");
                for (auto& x : *t) FLOE_TRY(one(x));
            } else {
                FLOE_TRY(one(*t));
            }
        }
        FLOE_TRY(sub_map("properties", n->properties));
        if (auto r = j.find("required"); r != j.end()) {
            if (!r->is_array()) return fail(errc::invalid_argument, "\"required\" must be an array of names");
            for (auto& x : *r) {
                if (!x.is_string()) return fail(errc::invalid_argument, "\"required\" must be an array of names");
                n->required.push_back(x.get<std::string>());
            }
        }
        n->additional_properties = FLOE_TRY(sub("additionalProperties"));
        FLOE_TRY(sub_map("patternProperties", n->pattern_properties));
        n->property_names = FLOE_TRY(sub("propertyNames"));
        FLOE_TRY(count("minProperties", n->min_properties));
        FLOE_TRY(count("maxProperties", n->max_properties));
        for (const char* dk : {"dependencies", "dependentRequired", "dependentSchemas"}) {
            auto d = j.find(dk);
            if (d == j.end()) continue;
            if (!d->is_object()) return fail(errc::invalid_argument, "\"{}\" must be an object", dk);
            for (auto& [name, x] : d->items()) {
                if (x.is_array()) {
                    auto& v = n->dependent_required[name];
                    for (auto& y : x) {
                        if (!y.is_string()) return fail(errc::invalid_argument, "\"{}\" of \"{}\": names expected", dk, name);
                        v.push_back(y.get<std::string>());
                    }
                } else {
                    n->dependent_schemas[name] = FLOE_TRY(parse(x, owner, depth + 1));
                }
            }
        }
        if (auto it = j.find("items"); it != j.end()) {
            if (it->is_array())
                for (auto& x : *it) n->tuple_items.push_back(FLOE_TRY_CTX(parse(x, owner, depth + 1), "\"items\""));
            else if (j.contains("prefixItems"))
                n->additional_items = FLOE_TRY(sub("items")); // 2020-12: items after prefixItems
            else
                n->items = FLOE_TRY(sub("items"));
        }
        if (auto it = j.find("prefixItems"); it != j.end()) {
            if (!it->is_array()) return fail(errc::invalid_argument, "\"prefixItems\" must be an array");
            for (auto& x : *it) n->tuple_items.push_back(FLOE_TRY_CTX(parse(x, owner, depth + 1), "\"prefixItems\""));
        }
        if (!n->additional_items) n->additional_items = FLOE_TRY(sub("additionalItems"));
        FLOE_TRY(count("minItems", n->min_items));
        FLOE_TRY(count("maxItems", n->max_items));
        if (auto u = j.find("uniqueItems"); u != j.end() && u->is_boolean()) n->unique_items = u->get<bool>();
        n->contains = FLOE_TRY(sub("contains"));
        FLOE_TRY(count("minLength", n->min_length));
        FLOE_TRY(count("maxLength", n->max_length));
        FLOE_TRY(string("pattern", n->pattern));
        FLOE_TRY(string("format", n->format));
        FLOE_TRY(string("contentEncoding", n->content_encoding));
        FLOE_TRY(string("contentMediaType", n->content_media_type));
        FLOE_TRY(number("minimum", n->minimum));
        FLOE_TRY(number("maximum", n->maximum));
        FLOE_TRY(number("exclusiveMinimum", n->exclusive_minimum));
        FLOE_TRY(number("exclusiveMaximum", n->exclusive_maximum));
        FLOE_TRY(number("multipleOf", n->multiple_of));
        if (n->multiple_of && *n->multiple_of <= 0)
            return fail(errc::invalid_argument, "\"multipleOf\" must be greater than 0");
        // Draft-04: "exclusiveMinimum": true makes "minimum" exclusive.
        if (auto e = j.find("exclusiveMinimum"); e != j.end() && e->is_boolean() && e->get<bool>() && n->minimum) {
            n->exclusive_minimum = n->minimum;
            n->minimum.reset();
        }
        if (auto e = j.find("exclusiveMaximum"); e != j.end() && e->is_boolean() && e->get<bool>() && n->maximum) {
            n->exclusive_maximum = n->maximum;
            n->maximum.reset();
        }
        if (auto e = j.find("enum"); e != j.end()) {
            if (!e->is_array()) return fail(errc::invalid_argument, "\"enum\" must be an array");
            n->enum_values = std::vector<json>(e->begin(), e->end());
        }
        if (auto c = j.find("const"); c != j.end()) n->const_value = *c;
        FLOE_TRY(sub_list("allOf", n->all_of));
        FLOE_TRY(sub_list("anyOf", n->any_of));
        FLOE_TRY(sub_list("oneOf", n->one_of));
        n->not_ = FLOE_TRY(sub("not"));
        n->if_ = FLOE_TRY(sub("if"));
        n->then_ = FLOE_TRY(sub("then"));
        n->else_ = FLOE_TRY(sub("else"));
        if (auto t = j.find("title"); t != j.end() && t->is_string()) n->title = t->get<std::string>();
        if (auto t = j.find("description"); t != j.end() && t->is_string()) n->description = t->get<std::string>();
        if (auto d = j.find("default"); d != j.end()) n->default_value = *d;
        // Subschemas under definitions are parsed when a $ref reaches them (and checked then).
        if (auto r = j.find("$ref"); r != j.end()) {
            if (!r->is_string()) return fail(errc::invalid_argument, "\"$ref\" must be a string");
            n->ref_uri = r->get<std::string>();
            n->ref = FLOE_TRY(resolve(n->ref_uri, owner, depth));
        }
        return n;
    }

    result<const json_schema_node*> resolve(const std::string& uri, const json_schema* owner, int depth) {
        auto hash = uri.find('#');
        auto base = uri.substr(0, hash);
        auto fragment = hash == std::string::npos ? std::string() : uri.substr(hash + 1);
        const json_schema* target = owner;
        if (!base.empty()) {
            target = nullptr;
            for (auto& r : _s._refs)
                if (r.name == base) target = r.schema.get();
            // The document's own "$id" names itself.
            if (!target && owner == &_s) {
                if (auto id = _s._doc->find("$id"); id != _s._doc->end() && id->is_string() &&
                                                     id->get<std::string>() == base)
                    target = &_s;
            }
            if (!target)
                return fail(errc::invalid_argument, "\"$ref\": \"{}\" names no schema reference", uri);
        }
        if (target != &_s && target != owner) {
            // Another schema: its own parsed nodes (no copy), found by pointer.
            if (fragment.empty() || fragment == "/") return &target->root();
            return fail_or_find_foreign(*target, fragment, uri);
        }
        const json& doc = target == &_s ? *_s._doc : target->document();
        const json* at = &doc;
        if (!fragment.empty()) {
            if (fragment[0] != '/')
                return fail(errc::invalid_argument, "\"$ref\": \"{}\": only JSON pointers are resolved", uri);
            size_t pos = 1;
            while (pos <= fragment.size()) {
                auto next = fragment.find('/', pos);
                auto tok = pointer_token(std::string_view(fragment).substr(pos, next == std::string::npos ? std::string::npos
                                                                                                            : next - pos));
                if (at->is_object()) {
                    auto it = at->find(tok);
                    if (it == at->end()) return fail(errc::invalid_argument, "\"$ref\": \"{}\" resolves to nothing", uri);
                    at = &*it;
                } else if (at->is_array()) {
                    size_t idx = 0;
                    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), idx);
                    if (ec != std::errc() || p != tok.data() + tok.size() || idx >= at->size())
                        return fail(errc::invalid_argument, "\"$ref\": \"{}\" resolves to nothing", uri);
                    at = &(*at)[idx];
                } else {
                    return fail(errc::invalid_argument, "\"$ref\": \"{}\" resolves to nothing", uri);
                }
                if (next == std::string::npos) break;
                pos = next + 1;
            }
        }
        return parse(*at, target, depth + 1);
    }

    result<const json_schema_node*> fail_or_find_foreign(const json_schema& other, const std::string& fragment,
                                                         const std::string& uri) {
        // Walk the other schema's node tree by the pointer's property path (definitions are
        // reached through the nodes that refer to them). Keeps it simple: #/definitions/X and
        // #/$defs/X look for a node whose raw JSON is that member.
        const json* at = &other.document();
        size_t pos = 1;
        while (pos <= fragment.size()) {
            auto next = fragment.find('/', pos);
            auto tok = pointer_token(std::string_view(fragment).substr(pos, next == std::string::npos ? std::string::npos
                                                                                                        : next - pos));
            if (!at->is_object() || !at->contains(tok))
                return fail(errc::invalid_argument, "\"$ref\": \"{}\" resolves to nothing", uri);
            at = &(*at)[tok];
            if (next == std::string::npos) break;
            pos = next + 1;
        }
        return parse(*at, &other, 0);
    }

private:
    json_schema& _s;
    int _max_depth;
    std::map<std::pair<const json_schema*, const json*>, const json_schema_node*> _memo;
};

result<std::shared_ptr<const json_schema>> json_schema::parse(std::string_view text,
                                                              const std::vector<reference>& references,
                                                              json_parse_options opts) {
    std::shared_ptr<json_schema> s(new json_schema());
    s->_doc = std::make_unique<json>(FLOE_TRY(parse_ordered_json(text, opts.max_depth, "JSON schema")));
    s->_refs = references;
    if (!s->_doc->is_object() && !s->_doc->is_boolean())
        return fail(errc::invalid_argument, "invalid JSON schema: a schema must be an object or a boolean");
    if (s->_doc->is_object())
        if (auto d = s->_doc->find("$schema"); d != s->_doc->end() && d->is_string()) s->_dialect = d->get<std::string>();
    json_schema_parser p(*s, opts.max_depth);
    s->_root = FLOE_TRY_CTX(p.parse(*s->_doc, s.get(), 0), "invalid JSON schema");
    s->_canonical = s->_doc->dump(-1, ' ', false, json::error_handler_t::replace);
    return std::shared_ptr<const json_schema>(std::move(s));
}

std::string json_schema::normalized() const {
    // Keys sorted: nlohmann::json's objects are ordered maps by key.
    return nlohmann::json::parse(_doc->dump(-1, ' ', false, json::error_handler_t::replace))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace floe::schema
