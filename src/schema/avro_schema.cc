#include "schema/avro_schema.h"

#include "schema/json_text.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace floe::schema {

using json = nlohmann::json;

std::string_view to_string(avro_kind k) noexcept {
    switch (k) {
    case avro_kind::null: return "null";
    case avro_kind::boolean: return "boolean";
    case avro_kind::int_: return "int";
    case avro_kind::long_: return "long";
    case avro_kind::float_: return "float";
    case avro_kind::double_: return "double";
    case avro_kind::bytes: return "bytes";
    case avro_kind::string: return "string";
    case avro_kind::record: return "record";
    case avro_kind::enum_: return "enum";
    case avro_kind::array: return "array";
    case avro_kind::map: return "map";
    case avro_kind::union_: return "union";
    case avro_kind::fixed: return "fixed";
    }
    return "?";
}

const avro_field* avro_node::find_field(std::string_view n) const noexcept {
    for (auto& f : fields)
        if (f.name == n) return &f;
    return nullptr;
}

int avro_node::symbol_index(std::string_view s) const noexcept {
    for (size_t i = 0; i < symbols.size(); ++i)
        if (symbols[i] == s) return int(i);
    return -1;
}

bool avro_node::answers_to(std::string_view full) const noexcept {
    if (full_name == full) return true;
    for (auto& a : aliases)
        if (a == full) return true;
    return false;
}

const avro_node* avro_schema::find_named(std::string_view full_name) const noexcept {
    if (auto it = _defined.find(std::string(full_name)); it != _defined.end()) return it->second;
    for (auto& r : _refs)
        if (auto* n = r->find_named(full_name)) return n;
    return nullptr;
}

namespace {

std::optional<avro_kind> primitive(std::string_view s) {
    if (s == "null") return avro_kind::null;
    if (s == "boolean") return avro_kind::boolean;
    if (s == "int") return avro_kind::int_;
    if (s == "long") return avro_kind::long_;
    if (s == "float") return avro_kind::float_;
    if (s == "double") return avro_kind::double_;
    if (s == "bytes") return avro_kind::bytes;
    if (s == "string") return avro_kind::string;
    return std::nullopt;
}

bool valid_simple_name(std::string_view s) {
    if (s.empty()) return false;
    auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
    if (!alpha(s[0])) return false;
    for (char c : s)
        if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    return true;
}

bool valid_full_name(std::string_view s) {
    if (s.empty()) return false;
    size_t start = 0;
    for (;;) {
        auto dot = s.find('.', start);
        if (!valid_simple_name(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
            return false;
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}

// Attributes the model names (they are not copied into props).
const std::set<std::string, std::less<>> named_attrs = {"type",    "name",   "namespace", "aliases", "doc",
                                                        "fields",  "symbols", "default",  "size",    "items",
                                                        "values",  "logicalType", "precision", "scale", "order"};

} // namespace

class avro_parser {
public:
    avro_parser(avro_schema& s, int max_depth, bool validate) : _s(s), _max_depth(max_depth), _validate(validate) {}

    result<const avro_node*> parse(const json& j, const std::string& ns, int depth) {
        if (depth > _max_depth) return fail(errc::invalid_argument, "schema nested deeper than {} levels", _max_depth);
        if (j.is_string()) return resolve_name(j.get<std::string>(), ns);
        if (j.is_array()) return parse_union(j, ns, depth);
        if (!j.is_object()) return fail(errc::invalid_argument, "a schema must be a string, object or array, not {}", j.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80));
        auto t = j.find("type");
        if (t == j.end()) return fail(errc::invalid_argument, "a schema object needs \"type\"");
        if (t->is_object() || t->is_array()) {
            // {"type": {...}} or {"type": [...]}: the inner schema (attributes on the outer
            // object are ignored, as the Java implementation does).
            return parse(*t, ns, depth + 1);
        }
        if (!t->is_string()) return fail(errc::invalid_argument, "\"type\" must be a string, object or array");
        auto tn = t->get<std::string>();
        if (auto p = primitive(tn)) {
            auto* n = add(*p);
            copy_props(j, *n);
            set_logical(j, *n);
            return n;
        }
        if (tn == "record" || tn == "error") return parse_record(j, ns, depth, tn == "error");
        if (tn == "enum") return parse_enum(j, ns);
        if (tn == "fixed") return parse_fixed(j, ns);
        if (tn == "array" || tn == "map") {
            const char* key = tn == "array" ? "items" : "values";
            auto it = j.find(key);
            if (it == j.end()) return fail(errc::invalid_argument, "{} needs \"{}\"", tn, key);
            auto* n = add(tn == "array" ? avro_kind::array : avro_kind::map);
            copy_props(j, *n);
            n->items = FLOE_TRY(parse(*it, ns, depth + 1));
            return n;
        }
        // A named type referred to as {"type": "com.acme.X"}.
        return resolve_name(tn, ns);
    }

    result<void> validate_defaults() {
        for (auto& [f, rec] : _defaults) {
            if (!avro_default_fits(*f->type, *f->default_value))
                return fail(errc::invalid_argument, "invalid default for field \"{}\" of {}: {} is not a {}", f->name,
                            rec, f->default_value->dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 200),
                            describe(*f->type));
        }
        return {};
    }

private:
    static std::string describe(const avro_node& n) {
        if (is_named(n.kind)) return fmt::format("{} {}", to_string(n.kind), n.full_name);
        return std::string(to_string(n.kind));
    }

    avro_node* add(avro_kind k) {
        _s._nodes.push_back(std::make_unique<avro_node>());
        auto* n = _s._nodes.back().get();
        n->kind = k;
        return n;
    }

    void copy_props(const json& j, avro_node& n) {
        for (auto& [k, v] : j.items())
            if (!named_attrs.contains(k)) n.props[k] = v;
    }

    // A logical type is kept only when valid for its underlying type; otherwise ignored (the
    // node reads as the underlying type), as the specification says.
    void set_logical(const json& j, avro_node& n) {
        auto it = j.find("logicalType");
        if (it == j.end() || !it->is_string()) return;
        auto lt = it->get<std::string>();
        avro_logical l{.name = lt};
        // Keep the raw attributes visible even when the logical type is ignored.
        n.props["logicalType"] = lt;
        if (lt == "decimal") {
            if (n.kind != avro_kind::bytes && n.kind != avro_kind::fixed) return;
            auto p = j.find("precision"), s = j.find("scale");
            if (p == j.end() || !p->is_number_integer()) return;
            int64_t prec = p->get<int64_t>(), scale = 0;
            if (s != j.end()) {
                if (!s->is_number_integer()) return;
                scale = s->get<int64_t>();
            }
            if (prec <= 0 || scale < 0 || scale > prec) return;
            if (n.kind == avro_kind::fixed) {
                // Largest precision a fixed of this size holds: floor(log10(2^(8*size-1) - 1)).
                double max_digits = std::floor(std::log10(2.0) * double(8 * n.fixed_size - 1));
                if (n.fixed_size == 0 || double(prec) > max_digits) return;
            }
            if (prec > INT32_MAX) return;
            l.precision = int32_t(prec);
            l.scale = int32_t(scale);
            n.props["precision"] = prec;
            if (s != j.end()) n.props["scale"] = scale;
        } else if (lt == "uuid") {
            if (n.kind != avro_kind::string && !(n.kind == avro_kind::fixed && n.fixed_size == 16)) return;
        } else if (lt == "date" || lt == "time-millis") {
            if (n.kind != avro_kind::int_) return;
        } else if (lt == "time-micros" || lt == "timestamp-millis" || lt == "timestamp-micros" ||
                   lt == "timestamp-nanos" || lt == "local-timestamp-millis" || lt == "local-timestamp-micros" ||
                   lt == "local-timestamp-nanos") {
            if (n.kind != avro_kind::long_) return;
        } else if (lt == "duration") {
            if (n.kind != avro_kind::fixed || n.fixed_size != 12) return;
        }
        // Unknown logical types are kept by name: readers that do not know them use the
        // underlying type.
        n.logical = std::move(l);
    }

    result<const avro_node*> resolve_name(const std::string& name, const std::string& ns) {
        if (auto p = primitive(name)) return add(*p);
        if (!valid_full_name(name)) return fail(errc::invalid_argument, "\"{}\" is not a valid Avro type name", name);
        if (name.find('.') == std::string::npos && !ns.empty())
            if (auto* n = find(ns + "." + name)) return n;
        if (auto* n = find(name)) return n;
        return fail(errc::invalid_argument, "undefined name: \"{}\" (a named type must be defined before it is used, "
                                            "here or in a schema reference)", name);
    }

    const avro_node* find(const std::string& full) const {
        if (auto it = _s._defined.find(full); it != _s._defined.end()) return it->second;
        for (auto& r : _s._refs)
            if (auto* n = r->find_named(full)) return n;
        return nullptr;
    }

    // Name, namespace and aliases of a named type; registers it (before its body, so a record
    // can refer to itself).
    result<void> define(const json& j, const std::string& enclosing_ns, avro_node& n) {
        auto it = j.find("name");
        if (it == j.end() || !it->is_string())
            return fail(errc::invalid_argument, "a {} needs a \"name\" string", to_string(n.kind));
        auto name = it->get<std::string>();
        std::string ns = enclosing_ns;
        if (auto nsi = j.find("namespace"); nsi != j.end()) {
            if (!nsi->is_string() && !nsi->is_null())
                return fail(errc::invalid_argument, "\"namespace\" of {} must be a string", name);
            ns = nsi->is_string() ? nsi->get<std::string>() : "";
        }
        if (auto dot = name.rfind('.'); dot != std::string::npos) {
            ns = name.substr(0, dot);
            n.name = name.substr(dot + 1);
        } else {
            n.name = name;
        }
        if (!valid_simple_name(n.name)) return fail(errc::invalid_argument, "\"{}\" is not a valid Avro name", name);
        if (!ns.empty() && !valid_full_name(ns))
            return fail(errc::invalid_argument, "\"{}\" is not a valid Avro namespace", ns);
        n.ns = ns;
        n.full_name = ns.empty() ? n.name : ns + "." + n.name;
        if (primitive(n.name) && ns.empty())
            return fail(errc::invalid_argument, "\"{}\" cannot be redefined (a primitive type name)", n.name);
        if (find(n.full_name)) return fail(errc::invalid_argument, "\"{}\" is defined twice", n.full_name);
        if (auto a = j.find("aliases"); a != j.end()) {
            if (!a->is_array()) return fail(errc::invalid_argument, "\"aliases\" of {} must be an array", n.full_name);
            for (auto& x : *a) {
                if (!x.is_string() || !valid_full_name(x.get<std::string>()))
                    return fail(errc::invalid_argument, "alias {} of {} is not a valid name",
                                x.dump(-1, ' ', false, json::error_handler_t::replace), n.full_name);
                auto s = x.get<std::string>();
                n.aliases.push_back(s.find('.') == std::string::npos && !ns.empty() ? ns + "." + s : s);
            }
        }
        if (auto d = j.find("doc"); d != j.end() && d->is_string()) n.doc = d->get<std::string>();
        copy_props(j, n);
        _s._defined.emplace(n.full_name, &n);
        return {};
    }

    result<const avro_node*> parse_record(const json& j, const std::string& ns, int depth, bool is_error) {
        auto* n = add(avro_kind::record);
        n->is_error = is_error;
        FLOE_TRY(define(j, ns, *n));
        auto fs = j.find("fields");
        if (fs == j.end() || !fs->is_array())
            return fail(errc::invalid_argument, "record {} needs a \"fields\" array", n->full_name);
        std::set<std::string> seen;
        n->fields.reserve(fs->size());
        for (auto& fj : *fs) {
            if (!fj.is_object()) return fail(errc::invalid_argument, "a field of {} is not an object", n->full_name);
            auto name = fj.find("name");
            if (name == fj.end() || !name->is_string())
                return fail(errc::invalid_argument, "a field of {} needs a \"name\" string", n->full_name);
            avro_field f;
            f.name = name->get<std::string>();
            if (!valid_simple_name(f.name))
                return fail(errc::invalid_argument, "\"{}\" is not a valid field name (in {})", f.name, n->full_name);
            if (!seen.insert(f.name).second)
                return fail(errc::invalid_argument, "field \"{}\" appears twice in {}", f.name, n->full_name);
            auto t = fj.find("type");
            if (t == fj.end()) return fail(errc::invalid_argument, "field \"{}\" of {} needs a \"type\"", f.name, n->full_name);
            f.type = FLOE_TRY_CTX(parse(*t, n->ns, depth + 1), "field \"{}\" of {}", f.name, n->full_name);
            if (auto d = fj.find("default"); d != fj.end()) f.default_value = *d;
            if (auto o = fj.find("order"); o != fj.end()) {
                auto v = o->is_string() ? o->get<std::string>() : "";
                if (v == "ascending") f.order = avro_order::ascending;
                else if (v == "descending") f.order = avro_order::descending;
                else if (v == "ignore") f.order = avro_order::ignore;
                else return fail(errc::invalid_argument, "field \"{}\": \"order\" must be ascending, descending or ignore", f.name);
            }
            if (auto a = fj.find("aliases"); a != fj.end()) {
                if (!a->is_array()) return fail(errc::invalid_argument, "\"aliases\" of field \"{}\" must be an array", f.name);
                for (auto& x : *a) {
                    if (!x.is_string() || !valid_simple_name(x.get<std::string>()))
                        return fail(errc::invalid_argument, "alias {} of field \"{}\" is not a valid name",
                                    x.dump(-1, ' ', false, json::error_handler_t::replace), f.name);
                    f.aliases.push_back(x.get<std::string>());
                }
            }
            if (auto d = fj.find("doc"); d != fj.end() && d->is_string()) f.doc = d->get<std::string>();
            f.props = json::object();
            for (auto& [k, v] : fj.items())
                if (!named_attrs.contains(k)) f.props[k] = v;
            f.position = n->fields.size();
            n->fields.push_back(std::move(f));
        }
        for (auto& f : n->fields)
            if (f.default_value) _defaults.emplace_back(&f, n->full_name);
        return n;
    }

    result<const avro_node*> parse_enum(const json& j, const std::string& ns) {
        auto* n = add(avro_kind::enum_);
        FLOE_TRY(define(j, ns, *n));
        auto s = j.find("symbols");
        if (s == j.end() || !s->is_array())
            return fail(errc::invalid_argument, "enum {} needs a \"symbols\" array", n->full_name);
        std::set<std::string> seen;
        for (auto& x : *s) {
            if (!x.is_string() || !valid_simple_name(x.get<std::string>()))
                return fail(errc::invalid_argument, "enum {}: symbol {} is not a valid name", n->full_name,
                            x.dump(-1, ' ', false, json::error_handler_t::replace));
            if (!seen.insert(x.get<std::string>()).second)
                return fail(errc::invalid_argument, "enum {}: symbol \"{}\" appears twice", n->full_name,
                            x.get<std::string>());
            n->symbols.push_back(x.get<std::string>());
        }
        if (auto d = j.find("default"); d != j.end()) {
            if (!d->is_string() || n->symbol_index(d->get<std::string>()) < 0)
                return fail(errc::invalid_argument, "enum {}: default must be one of its symbols", n->full_name);
            n->enum_default = d->get<std::string>();
        }
        set_logical(j, *n);
        return n;
    }

    result<const avro_node*> parse_fixed(const json& j, const std::string& ns) {
        auto* n = add(avro_kind::fixed);
        FLOE_TRY(define(j, ns, *n));
        auto s = j.find("size");
        if (s == j.end() || !s->is_number_integer() || s->get<int64_t>() < 0 || s->get<int64_t>() > INT32_MAX)
            return fail(errc::invalid_argument, "fixed {} needs a non-negative integer \"size\"", n->full_name);
        n->fixed_size = size_t(s->get<int64_t>());
        set_logical(j, *n);
        return n;
    }

    result<const avro_node*> parse_union(const json& j, const std::string& ns, int depth) {
        auto* n = add(avro_kind::union_);
        std::set<std::string> seen;
        for (auto& b : j) {
            auto* bn = FLOE_TRY(parse(b, ns, depth + 1));
            if (bn->kind == avro_kind::union_)
                return fail(errc::invalid_argument, "a union cannot directly contain another union");
            auto key = is_named(bn->kind) ? bn->full_name : std::string(to_string(bn->kind));
            if (!seen.insert(key).second)
                return fail(errc::invalid_argument, "union has two branches of type {}", key);
            n->branches.push_back(bn);
        }
        return n;
    }

    avro_schema& _s;
    int _max_depth;
    bool _validate;
    std::vector<std::pair<const avro_field*, std::string>> _defaults;

public:
    bool validate() const { return _validate; }
};

bool avro_default_fits(const avro_node& type, const json& v, int depth) {
    if (depth > 128) return false;
    switch (type.kind) {
    case avro_kind::null: return v.is_null();
    case avro_kind::boolean: return v.is_boolean();
    case avro_kind::int_:
        if (!v.is_number_integer()) return false;
        if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(INT32_MAX);
        return v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
    case avro_kind::long_:
        return v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(INT64_MAX));
    case avro_kind::float_:
    case avro_kind::double_:
        if (v.is_number()) return true;
        if (v.is_string()) {
            auto s = v.get<std::string>();
            return s == "NaN" || s == "Infinity" || s == "-Infinity";
        }
        return false;
    case avro_kind::bytes:
    case avro_kind::fixed: {
        if (!v.is_string()) return false;
        // Code points 0-255, one per byte.
        auto s = v.get<std::string>();
        size_t count = 0;
        for (size_t i = 0; i < s.size(); ++count) {
            auto c = uint8_t(s[i]);
            if (c < 0x80) i += 1;
            else if ((c & 0xE0) == 0xC0 && c <= 0xC3) i += 2;
            else return false;
        }
        return type.kind == avro_kind::bytes || count == type.fixed_size;
    }
    case avro_kind::string: return v.is_string();
    case avro_kind::enum_: return v.is_string() && type.symbol_index(v.get<std::string>()) >= 0;
    case avro_kind::array:
        if (!v.is_array()) return false;
        for (auto& x : v)
            if (!avro_default_fits(*type.items, x, depth + 1)) return false;
        return true;
    case avro_kind::map:
        if (!v.is_object()) return false;
        for (auto& [k, x] : v.items())
            if (!avro_default_fits(*type.items, x, depth + 1)) return false;
        return true;
    case avro_kind::record:
        if (!v.is_object()) return false;
        for (auto& f : type.fields) {
            auto it = v.find(f.name);
            if (it == v.end()) {
                if (!f.default_value) return false;
            } else if (!avro_default_fits(*f.type, *it, depth + 1))
                return false;
        }
        return true;
    case avro_kind::union_:
        for (auto* b : type.branches)
            if (avro_default_fits(*b, v, depth + 1)) return true;
        return false;
    }
    return false;
}

result<std::shared_ptr<const avro_schema>> avro_schema::parse(
    std::string_view text, const std::vector<std::shared_ptr<const avro_schema>>& references, avro_parse_options opts) {
    auto ordered = FLOE_TRY(parse_ordered_json(text, opts.max_depth, "Avro schema"));
    auto j = FLOE_TRY(parse_json(text, opts.max_depth, "Avro schema"));
    std::shared_ptr<avro_schema> s(new avro_schema());
    s->_refs = references;
    avro_parser p(*s, opts.max_depth, opts.validate_defaults);
    s->_root = FLOE_TRY_CTX(p.parse(j, "", 0), "invalid Avro schema");
    if (opts.validate_defaults) FLOE_TRY_CTX(p.validate_defaults(), "invalid Avro schema");
    s->_canonical = ordered.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return std::shared_ptr<const avro_schema>(std::move(s));
}

namespace {

using ojson = nlohmann::ordered_json;

// Writes a node as ordered JSON for normalized(): full names, named types once.
ojson normalize_node(const avro_node& n, std::set<std::string>& written) {
    auto add_props = [](ojson& o, const json& props) {
        for (auto& [k, v] : props.items()) o[k] = ojson::parse(v.dump());
    };
    if (is_named(n.kind)) {
        if (!written.insert(n.full_name).second) return n.full_name;
        ojson o;
        o["type"] = n.kind == avro_kind::record ? (n.is_error ? "error" : "record") : std::string(to_string(n.kind));
        o["name"] = n.full_name;
        if (!n.aliases.empty()) o["aliases"] = n.aliases;
        if (!n.doc.empty()) o["doc"] = n.doc;
        if (n.kind == avro_kind::record) {
            o["fields"] = ojson::array();
            for (auto& f : n.fields) {
                ojson fo;
                fo["name"] = f.name;
                fo["type"] = normalize_node(*f.type, written);
                if (f.default_value) fo["default"] = ojson::parse(f.default_value->dump());
                if (f.order != avro_order::ascending)
                    fo["order"] = f.order == avro_order::descending ? "descending" : "ignore";
                if (!f.aliases.empty()) fo["aliases"] = f.aliases;
                if (!f.doc.empty()) fo["doc"] = f.doc;
                add_props(fo, f.props);
                o["fields"].push_back(std::move(fo));
            }
        } else if (n.kind == avro_kind::enum_) {
            o["symbols"] = n.symbols;
            if (n.enum_default) o["default"] = *n.enum_default;
        } else {
            o["size"] = n.fixed_size;
        }
        add_props(o, n.props);
        return o;
    }
    if (n.kind == avro_kind::union_) {
        ojson a = ojson::array();
        for (auto* b : n.branches) a.push_back(normalize_node(*b, written));
        return a;
    }
    if (n.kind == avro_kind::array || n.kind == avro_kind::map) {
        ojson o;
        o["type"] = std::string(to_string(n.kind));
        o[n.kind == avro_kind::array ? "items" : "values"] = normalize_node(*n.items, written);
        add_props(o, n.props);
        return o;
    }
    if (n.props.empty()) return std::string(to_string(n.kind));
    ojson o;
    o["type"] = std::string(to_string(n.kind));
    add_props(o, n.props);
    return o;
}

void write_pcf(const avro_node& n, std::set<std::string>& written, std::string& out) {
    if (is_named(n.kind)) {
        if (!written.insert(n.full_name).second) {
            out += json_quote(n.full_name);
            return;
        }
        out += "{\"name\":";
        out += json_quote(n.full_name);
        out += ",\"type\":";
        if (n.kind == avro_kind::record) {
            out += "\"record\",\"fields\":[";
            for (size_t i = 0; i < n.fields.size(); ++i) {
                if (i) out += ',';
                out += "{\"name\":";
                out += json_quote(n.fields[i].name);
                out += ",\"type\":";
                write_pcf(*n.fields[i].type, written, out);
                out += '}';
            }
            out += "]}";
        } else if (n.kind == avro_kind::enum_) {
            out += "\"enum\",\"symbols\":[";
            for (size_t i = 0; i < n.symbols.size(); ++i) {
                if (i) out += ',';
                out += json_quote(n.symbols[i]);
            }
            out += "]}";
        } else {
            out += fmt::format("\"fixed\",\"size\":{}}}", n.fixed_size);
        }
        return;
    }
    if (n.kind == avro_kind::union_) {
        out += '[';
        for (size_t i = 0; i < n.branches.size(); ++i) {
            if (i) out += ',';
            write_pcf(*n.branches[i], written, out);
        }
        out += ']';
        return;
    }
    if (n.kind == avro_kind::array || n.kind == avro_kind::map) {
        out += n.kind == avro_kind::array ? "{\"type\":\"array\",\"items\":" : "{\"type\":\"map\",\"values\":";
        write_pcf(*n.items, written, out);
        out += '}';
        return;
    }
    out += json_quote(to_string(n.kind));
}

} // namespace

std::string avro_schema::normalized() const {
    std::set<std::string> written;
    return normalize_node(*_root, written).dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string avro_schema::parsing_canonical_form() const {
    std::set<std::string> written;
    std::string out;
    write_pcf(*_root, written, out);
    return out;
}

} // namespace floe::schema
