#include "schema/iceberg_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace floe::schema {

using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using iceberg::type_ptr;

namespace {

constexpr int32_t max_decimal_precision = 38;

type_ptr prim(type_id id) { return type::primitive(id); }

type_ptr decimal_type(int32_t p, int32_t s) {
    auto t = std::make_shared<type>();
    t->id = type_id::decimal;
    t->precision = p;
    t->scale = s;
    return t;
}

type_ptr fixed_type(uint32_t n) {
    auto t = std::make_shared<type>();
    t->id = type_id::fixed;
    t->length = n;
    return t;
}

class mapper {
public:
    result<mapped_type> map(const avro_node& n) {
        if (n.logical) {
            const auto& l = *n.logical;
            if (l.name == "decimal" && (n.kind == avro_kind::bytes || n.kind == avro_kind::fixed)) {
                if (l.precision > max_decimal_precision)
                    return fail(errc::invalid_argument,
                                "decimal({}, {}) exceeds Iceberg's maximum precision of {}", l.precision,
                                l.scale, max_decimal_precision);
                return mapped_type{decimal_type(l.precision, l.scale)};
            }
            if (l.name == "date" && n.kind == avro_kind::int_) return mapped_type{prim(type_id::date)};
            if ((l.name == "time-millis" && n.kind == avro_kind::int_)
                || (l.name == "time-micros" && n.kind == avro_kind::long_))
                return mapped_type{prim(type_id::time)};
            if ((l.name == "timestamp-millis" || l.name == "timestamp-micros") && n.kind == avro_kind::long_)
                return mapped_type{prim(type_id::timestamptz)};
            if ((l.name == "local-timestamp-millis" || l.name == "local-timestamp-micros")
                && n.kind == avro_kind::long_)
                return mapped_type{prim(type_id::timestamp)};
            if (l.name == "uuid"
                && (n.kind == avro_kind::string || (n.kind == avro_kind::fixed && n.fixed_size == 16)))
                return mapped_type{prim(type_id::uuid)};
        }
        switch (n.kind) {
        case avro_kind::null: return mapped_type{nullptr, true};
        case avro_kind::boolean: return mapped_type{prim(type_id::boolean)};
        case avro_kind::int_: return mapped_type{prim(type_id::int_)};
        case avro_kind::long_: return mapped_type{prim(type_id::long_)};
        case avro_kind::float_: return mapped_type{prim(type_id::float_)};
        case avro_kind::double_: return mapped_type{prim(type_id::double_)};
        case avro_kind::bytes: return mapped_type{prim(type_id::binary)};
        case avro_kind::string:
        case avro_kind::enum_: return mapped_type{prim(type_id::string)};
        case avro_kind::fixed: return mapped_type{fixed_type(static_cast<uint32_t>(n.fixed_size))};
        case avro_kind::record: {
            auto fields = FLOE_TRY(record_fields(n));
            auto t = std::make_shared<type>();
            t->id = type_id::struct_;
            t->fields = std::move(fields);
            return mapped_type{t};
        }
        case avro_kind::array: {
            auto e = FLOE_TRY(map(*n.items));
            auto t = std::make_shared<type>();
            t->id = type_id::list;
            if (!e.type) return fail(errc::invalid_argument, "an array of nulls has no Iceberg type");
            t->element = e.type;
            t->element_required = false;
            return mapped_type{t};
        }
        case avro_kind::map: {
            auto v = FLOE_TRY(map(*n.items));
            if (!v.type) return fail(errc::invalid_argument, "a map of nulls has no Iceberg type");
            auto t = std::make_shared<type>();
            t->id = type_id::map;
            t->key = prim(type_id::string);
            t->value = v.type;
            t->value_required = false;
            return mapped_type{t};
        }
        case avro_kind::union_: return map_union(n);
        }
        return fail(errc::invalid_argument, "unknown Avro type");
    }

    result<std::vector<nested_field>> record_fields(const avro_node& rec) {
        if (std::find(_stack.begin(), _stack.end(), &rec) != _stack.end())
            return fail(errc::invalid_argument,
                        "record {} is recursive: Iceberg cannot express a type that contains itself",
                        rec.full_name);
        if (_stack.size() >= 64)
            return fail(errc::invalid_argument, "records nested deeper than 64 levels");
        _stack.push_back(&rec);
        std::vector<nested_field> out;
        for (auto& f : rec.fields) {
            auto m = map(*f.type);
            if (!m) {
                _stack.pop_back();
                return std::unexpected(std::move(m).error().with_context("field {}.{}", rec.name, f.name));
            }
            if (!m->type) continue; // a null field carries no data
            out.push_back(nested_field{.id = 0, .name = f.name, .required = false, .field_type = m->type, .doc = f.doc});
        }
        _stack.pop_back();
        return out;
    }

private:
    result<mapped_type> map_union(const avro_node& n) {
        std::vector<const avro_node*> non_null;
        bool has_null = false;
        for (auto* b : n.branches) {
            if (b->kind == avro_kind::null)
                has_null = true;
            else
                non_null.push_back(b);
        }
        if (non_null.empty()) return mapped_type{nullptr, true};
        if (non_null.size() == 1) {
            auto m = FLOE_TRY(map(*non_null[0]));
            m.nullable = true;
            return m;
        }
        auto t = std::make_shared<type>();
        t->id = type_id::struct_;
        for (auto* b : non_null) {
            auto m = FLOE_TRY(map(*b));
            t->fields.push_back(nested_field{.id = 0, .name = union_branch_name(n, *b), .required = false, .field_type = m.type});
        }
        return mapped_type{t, has_null};
    }

    std::vector<const avro_node*> _stack;

public:
    static std::string union_branch_name(const avro_node& u, const avro_node& b) {
        if (!is_named(b.kind)) return std::string(to_string(b.kind));
        int same = 0;
        for (auto* o : u.branches)
            if (is_named(o->kind) && o->name == b.name) ++same;
        if (same <= 1) return b.name;
        std::string s = b.full_name;
        std::replace(s.begin(), s.end(), '.', '_');
        return s;
    }
};

// ---- ids -------------------------------------------------------------------------------------

using path_ids = std::map<std::string, int32_t, std::less<>>;

void collect(const type& t, const std::string& path, path_ids& out);
void collect_fields(const std::vector<nested_field>& fs, const std::string& prefix, path_ids& out) {
    for (auto& f : fs) {
        std::string p = prefix.empty() ? f.name : prefix + "." + f.name;
        out[p] = f.id;
        collect(*f.field_type, p, out);
    }
}
void collect(const type& t, const std::string& path, path_ids& out) {
    switch (t.id) {
    case type_id::struct_: collect_fields(t.fields, path, out); break;
    case type_id::list:
        out[path + ".element"] = t.element_id;
        collect(*t.element, path + ".element", out);
        break;
    case type_id::map:
        out[path + ".key"] = t.key_id;
        out[path + ".value"] = t.value_id;
        collect(*t.key, path + ".key", out);
        collect(*t.value, path + ".value", out);
        break;
    default: break;
    }
}

struct id_assigner {
    const path_ids& prev;
    int32_t& last;
    int32_t id_for(const std::string& p) {
        auto it = prev.find(p);
        return it != prev.end() ? it->second : ++last;
    }
    type_ptr with_ids(const type_ptr& t, const std::string& path) {
        if (t->is_primitive()) return t;
        auto n = std::make_shared<type>(*t);
        switch (t->id) {
        case type_id::struct_: fields(n->fields, path); break;
        case type_id::list:
            n->element_id = id_for(path + ".element");
            n->element = with_ids(t->element, path + ".element");
            break;
        case type_id::map:
            n->key_id = id_for(path + ".key");
            n->value_id = id_for(path + ".value");
            n->key = with_ids(t->key, path + ".key");
            n->value = with_ids(t->value, path + ".value");
            break;
        default: break;
        }
        return n;
    }
    void fields(std::vector<nested_field>& fs, const std::string& prefix) {
        for (auto& f : fs) {
            std::string p = prefix.empty() ? f.name : prefix + "." + f.name;
            f.id = id_for(p);
            f.field_type = with_ids(f.field_type, p);
        }
    }
};

// ---- evolution -------------------------------------------------------------------------------

struct evolver {
    int32_t& last;
    bool changed = false;
    std::string reason;

    // `cur` is the table's type (ids set); `neu` the new version's (ids ignored). Returns the
    // merged type, or nullptr with `reason` set.
    type_ptr merge(const type_ptr& cur, const type_ptr& neu, const std::string& path) {
        if (cur->is_primitive() && neu->is_primitive()) {
            if (cur->id == neu->id) {
                if (cur->id == type_id::decimal) {
                    if (cur->scale != neu->scale) return incompatible(path, *cur, *neu);
                    if (neu->precision > cur->precision) {
                        changed = true;
                        return neu;
                    }
                    return cur;
                }
                if (cur->id == type_id::fixed && cur->length != neu->length)
                    return incompatible(path, *cur, *neu);
                return cur;
            }
            if (cur->id == type_id::int_ && neu->id == type_id::long_) {
                changed = true;
                return neu;
            }
            if (cur->id == type_id::float_ && neu->id == type_id::double_) {
                changed = true;
                return neu;
            }
            // The table is already wider: the new version's values are widened when written.
            if ((cur->id == type_id::long_ && neu->id == type_id::int_)
                || (cur->id == type_id::double_ && neu->id == type_id::float_))
                return cur;
            return incompatible(path, *cur, *neu);
        }
        if (cur->id != neu->id) return incompatible(path, *cur, *neu);
        switch (cur->id) {
        case type_id::struct_: {
            std::vector<nested_field> out;
            if (!merge_fields(cur->fields, neu->fields, path, out)) return nullptr;
            auto t = std::make_shared<type>(*cur);
            t->fields = std::move(out);
            return t;
        }
        case type_id::list: {
            auto e = merge(cur->element, neu->element, path + ".element");
            if (!e) return nullptr;
            auto t = std::make_shared<type>(*cur);
            t->element = e;
            if (t->element_required && !neu->element_required) {
                t->element_required = false;
                changed = true;
            }
            return t;
        }
        case type_id::map: {
            auto k = merge(cur->key, neu->key, path + ".key");
            if (!k) return nullptr;
            auto v = merge(cur->value, neu->value, path + ".value");
            if (!v) return nullptr;
            auto t = std::make_shared<type>(*cur);
            t->key = k;
            t->value = v;
            if (t->value_required && !neu->value_required) {
                t->value_required = false;
                changed = true;
            }
            return t;
        }
        default: return incompatible(path, *cur, *neu);
        }
    }

    bool merge_fields(const std::vector<nested_field>& cur, const std::vector<nested_field>& neu,
                      const std::string& prefix, std::vector<nested_field>& out) {
        for (auto& c : cur) {
            std::string p = prefix.empty() ? c.name : prefix + "." + c.name;
            auto it = std::find_if(neu.begin(), neu.end(), [&](auto& n) { return n.name == c.name; });
            if (it == neu.end()) {
                out.push_back(c); // removed from the version: the column stays
                continue;
            }
            auto t = merge(c.field_type, it->field_type, p);
            if (!t) return false;
            nested_field f = c;
            f.field_type = t;
            if (c.required && !it->required) {
                f.required = false;
                changed = true;
            }
            out.push_back(std::move(f));
        }
        for (auto& n : neu) {
            if (std::any_of(cur.begin(), cur.end(), [&](auto& c) { return c.name == n.name; })) continue;
            nested_field f = n;
            f.required = false; // Iceberg adds optional columns only
            std::vector<nested_field> one{std::move(f)};
            static const path_ids none;
            id_assigner a{none, last};
            a.fields(one, prefix);
            out.push_back(std::move(one[0]));
            changed = true;
        }
        return true;
    }

    type_ptr incompatible(const std::string& path, const type& cur, const type& neu) {
        reason = fmt::format("field `{}`: {} -> {}", path, describe(cur), describe(neu));
        return nullptr;
    }
};

} // namespace

std::string describe(const type& t) {
    switch (t.id) {
    case type_id::struct_: return "struct";
    case type_id::list: return fmt::format("list<{}>", describe(*t.element));
    case type_id::map: return fmt::format("map<{}, {}>", describe(*t.key), describe(*t.value));
    default: return iceberg::primitive_name(t);
    }
}

std::string avro_union_branch_name(const avro_node& u, const avro_node& b) {
    return mapper::union_branch_name(u, b);
}

result<mapped_type> avro_type_to_iceberg(const avro_node& node) { return mapper{}.map(node); }

result<std::vector<nested_field>> avro_to_iceberg(const avro_node& record) {
    if (record.kind != avro_kind::record)
        return fail(errc::invalid_argument, "a typed table needs an Avro record at the root, not {}",
                    to_string(record.kind));
    return mapper{}.record_fields(record);
}

result<std::vector<nested_field>> avro_to_iceberg(const avro_schema& s) { return avro_to_iceberg(s.root()); }

void assign_ids(std::vector<nested_field>& fields, const iceberg::schema* previous, int32_t& last_column_id) {
    path_ids prev;
    if (previous) collect_fields(previous->fields, "", prev);
    id_assigner a{prev, last_column_id};
    a.fields(fields, "");
}

std::vector<std::pair<std::string, int32_t>> name_paths(const iceberg::schema& s) {
    path_ids ids;
    collect_fields(s.fields, "", ids);
    return {ids.begin(), ids.end()};
}

evolution evolve(const iceberg::schema& current, const std::vector<nested_field>& fields, int32_t last_column_id) {
    evolution out;
    int32_t last = std::max(last_column_id, current.highest_field_id());
    evolver ev{last};
    std::vector<nested_field> merged;
    if (!ev.merge_fields(current.fields, fields, "", merged)) {
        out.outcome = evolution::kind::incompatible;
        out.reason = std::move(ev.reason);
        out.schema = current;
        out.last_column_id = std::max(last_column_id, current.highest_field_id());
        return out;
    }
    out.last_column_id = last;
    if (!ev.changed) {
        out.outcome = evolution::kind::unchanged;
        out.schema = current;
        return out;
    }
    out.outcome = evolution::kind::updated;
    out.schema = current;
    out.schema.schema_id = current.schema_id + 1;
    out.schema.fields = std::move(merged);
    return out;
}

} // namespace floe::schema
