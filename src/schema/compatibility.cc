#include "schema/compatibility.h"

#include <google/protobuf/descriptor.pb.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

namespace floe::schema {

namespace gp = google::protobuf;

std::string_view to_string(compatibility_level l) noexcept {
    switch (l) {
    case compatibility_level::none: return "NONE";
    case compatibility_level::backward: return "BACKWARD";
    case compatibility_level::backward_transitive: return "BACKWARD_TRANSITIVE";
    case compatibility_level::forward: return "FORWARD";
    case compatibility_level::forward_transitive: return "FORWARD_TRANSITIVE";
    case compatibility_level::full: return "FULL";
    case compatibility_level::full_transitive: return "FULL_TRANSITIVE";
    }
    return "?";
}

std::optional<compatibility_level> parse_compatibility_level(std::string_view s) noexcept {
    for (auto l : {compatibility_level::none, compatibility_level::backward, compatibility_level::backward_transitive,
                   compatibility_level::forward, compatibility_level::forward_transitive, compatibility_level::full,
                   compatibility_level::full_transitive})
        if (to_string(l) == s) return l;
    return std::nullopt;
}

std::string compatibility_problem::to_message() const {
    return fmt::format("{{errorType:'{}', description:'{}', additionalInfo:'{}'}}", error_type, description, path);
}

// ---------------------------------------------------------------------------------------------
// Avro: schema resolution.
namespace {

class avro_resolver {
public:
    std::vector<compatibility_problem> problems;

    // True when a reader `r` can read what `w` wrote. Adds problems only when `report`.
    bool check(const avro_node& r, const avro_node& w, const std::string& path, bool report) {
        // Recursive named types: a pair already under check is assumed to resolve (a cycle
        // adds no new constraint).
        auto key = std::make_pair(&r, &w);
        if (_active.contains(key)) return true;
        if (auto it = _done.find(key); it != _done.end() && (it->second || !report)) return it->second;
        _active.insert(key);
        bool ok = check_inner(r, w, path, report);
        _active.erase(key);
        _done[key] = ok;
        return ok;
    }

private:
    void add(bool report, std::string type, std::string path, std::string description) {
        if (report) problems.push_back({std::move(type), std::move(path), std::move(description)});
    }

    static bool names_match(const avro_node& r, const avro_node& w) {
        return r.name == w.name || r.answers_to(w.full_name);
    }

    static bool promotes(avro_kind w, avro_kind r) {
        switch (w) {
        case avro_kind::int_: return r == avro_kind::long_ || r == avro_kind::float_ || r == avro_kind::double_;
        case avro_kind::long_: return r == avro_kind::float_ || r == avro_kind::double_;
        case avro_kind::float_: return r == avro_kind::double_;
        case avro_kind::string: return r == avro_kind::bytes;
        case avro_kind::bytes: return r == avro_kind::string;
        default: return false;
        }
    }

    static std::string describe(const avro_node& n) {
        if (is_named(n.kind)) return fmt::format("{} {}", to_string(n.kind), n.full_name);
        return std::string(to_string(n.kind));
    }

    bool check_inner(const avro_node& r, const avro_node& w, const std::string& path, bool report) {
        if (w.kind == avro_kind::union_) {
            // Every branch the writer may have used must resolve.
            bool ok = true;
            for (size_t i = 0; i < w.branches.size(); ++i)
                if (!check(r, *w.branches[i], fmt::format("{}/{}", path, i), false)) {
                    ok = false;
                    if (r.kind == avro_kind::union_)
                        add(report, "MISSING_UNION_BRANCH", fmt::format("{}/{}", path, i),
                            fmt::format("The new schema is missing a type inside a union field at path '{}/{}' in the old "
                                        "schema: reader union lacks {}",
                                        path, i, describe(*w.branches[i])));
                    else
                        check(r, *w.branches[i], fmt::format("{}/{}", path, i), report);
                }
            return ok;
        }
        if (r.kind == avro_kind::union_) {
            for (auto* b : r.branches)
                if (check(*b, w, path, false)) return true;
            add(report, "MISSING_UNION_BRANCH", path,
                fmt::format("The new schema is missing a type inside a union field at path '{}' in the old schema: "
                            "reader union lacks {}",
                            path, describe(w)));
            return false;
        }
        if (r.kind != w.kind) {
            if (promotes(w.kind, r.kind)) return true;
            add(report, "TYPE_MISMATCH", path,
                fmt::format("The type (path '{}') of a field in the new schema does not match with the old schema: "
                            "reader {} cannot read writer {}",
                            path, describe(r), describe(w)));
            return false;
        }
        switch (r.kind) {
        case avro_kind::record: {
            if (!names_match(r, w)) {
                add(report, "NAME_MISMATCH", path + "/name",
                    fmt::format("The name of the schema has changed (path '{}/name'): reader {} writer {}", path,
                                r.full_name, w.full_name));
                return false;
            }
            bool ok = true;
            for (size_t i = 0; i < r.fields.size(); ++i) {
                auto& rf = r.fields[i];
                const avro_field* wf = w.find_field(rf.name);
                for (size_t a = 0; !wf && a < rf.aliases.size(); ++a) wf = w.find_field(rf.aliases[a]);
                auto fpath = fmt::format("{}/fields/{}", path, i);
                if (wf) {
                    if (!check(*rf.type, *wf->type, fpath + "/type", report)) ok = false;
                } else if (!rf.default_value) {
                    ok = false;
                    add(report, "READER_FIELD_MISSING_DEFAULT_VALUE", fpath,
                        fmt::format("The field '{}' at path '{}' in the new schema has no default value and is missing "
                                    "in the old schema",
                                    rf.name, fpath));
                }
            }
            return ok;
        }
        case avro_kind::enum_: {
            if (!names_match(r, w)) {
                add(report, "NAME_MISMATCH", path + "/name",
                    fmt::format("The name of the schema has changed (path '{}/name'): reader {} writer {}", path,
                                r.full_name, w.full_name));
                return false;
            }
            if (r.enum_default) return true; // unknown symbols read as the default
            std::vector<std::string> missing;
            for (auto& s : w.symbols)
                if (r.symbol_index(s) < 0) missing.push_back(s);
            if (missing.empty()) return true;
            std::string list;
            for (auto& m : missing) {
                if (!list.empty()) list += ", ";
                list += m;
            }
            add(report, "MISSING_ENUM_SYMBOLS", path + "/symbols",
                fmt::format("The new schema is missing enum symbols '[{}]' at path '{}/symbols' in the old schema", list,
                            path));
            return false;
        }
        case avro_kind::fixed:
            if (!names_match(r, w)) {
                add(report, "NAME_MISMATCH", path + "/name",
                    fmt::format("The name of the schema has changed (path '{}/name'): reader {} writer {}", path,
                                r.full_name, w.full_name));
                return false;
            }
            if (r.fixed_size != w.fixed_size) {
                add(report, "FIXED_SIZE_MISMATCH", path + "/size",
                    fmt::format("The size of FIXED type field at path '{}/size' in the old schema does not match with "
                                "the new schema: reader {} writer {}",
                                path, r.fixed_size, w.fixed_size));
                return false;
            }
            return true;
        case avro_kind::array: return check(*r.items, *w.items, path + "/items", report);
        case avro_kind::map: return check(*r.items, *w.items, path + "/values", report);
        default: return true; // same primitive
        }
    }

    std::set<std::pair<const avro_node*, const avro_node*>> _active;
    std::map<std::pair<const avro_node*, const avro_node*>, bool> _done;
};

} // namespace

std::vector<compatibility_problem> avro_reader_problems(const avro_node& reader, const avro_node& writer) {
    avro_resolver r;
    r.check(reader, writer, "", true);
    return std::move(r.problems);
}

// ---------------------------------------------------------------------------------------------
// Protobuf.
namespace {

// Scalar types whose encodings read as each other (protobuf's "Updating a message type").
int scalar_group(gp::FieldDescriptor::Type t) {
    using T = gp::FieldDescriptor;
    switch (t) {
    case T::TYPE_INT32:
    case T::TYPE_UINT32:
    case T::TYPE_INT64:
    case T::TYPE_UINT64:
    case T::TYPE_BOOL: return 1;
    case T::TYPE_SINT32:
    case T::TYPE_SINT64: return 2;
    case T::TYPE_FIXED32:
    case T::TYPE_SFIXED32: return 3;
    case T::TYPE_FIXED64:
    case T::TYPE_SFIXED64: return 4;
    case T::TYPE_STRING:
    case T::TYPE_BYTES: return 5;
    case T::TYPE_FLOAT: return 6;
    case T::TYPE_DOUBLE: return 7;
    default: return 0;
    }
}

enum class field_kind { scalar, message, enum_ };
field_kind kind_of(const gp::FieldDescriptor& f) {
    if (f.type() == gp::FieldDescriptor::TYPE_MESSAGE || f.type() == gp::FieldDescriptor::TYPE_GROUP)
        return field_kind::message;
    if (f.type() == gp::FieldDescriptor::TYPE_ENUM) return field_kind::enum_;
    return field_kind::scalar;
}
const char* kind_name(field_kind k) {
    return k == field_kind::scalar ? "scalar" : k == field_kind::message ? "message" : "enum";
}

// The oneof a field really belongs to (proto3 `optional` is a synthetic oneof: not a oneof).
const gp::OneofDescriptor* real_oneof(const gp::FieldDescriptor& f) {
    auto* o = f.containing_oneof();
    if (!o) return nullptr;
    if (o->field_count() == 1 && f.has_optional_keyword()) return nullptr;
    return o;
}

bool is_numeric_scalar(const gp::FieldDescriptor& f) {
    return kind_of(f) == field_kind::enum_ ||
           (kind_of(f) == field_kind::scalar && f.type() != gp::FieldDescriptor::TYPE_STRING &&
            f.type() != gp::FieldDescriptor::TYPE_BYTES);
}

class protobuf_checker {
public:
    std::vector<compatibility_problem> problems;

    void check_file(const gp::FileDescriptor& r, const gp::FileDescriptor& w) {
        if (r.package() != w.package())
            add("PACKAGE_CHANGED", r.package(),
                fmt::format("The package changed from '{}' to '{}'", w.package(), r.package()));
        for (int i = 0; i < w.message_type_count(); ++i) check_message_tree(r, *w.message_type(i));
        for (int i = 0; i < w.enum_type_count(); ++i) check_enum_exists(r, *w.enum_type(i));
    }

private:
    void add(std::string type, std::string path, std::string description) {
        problems.push_back({std::move(type), std::move(path), std::move(description)});
    }

    // Messages are matched by full name within the reader's file.
    static const gp::Descriptor* find_message(const gp::FileDescriptor& r, const std::string& full) {
        auto* d = r.pool()->FindMessageTypeByName(full);
        return d && d->file() == &r ? d : nullptr;
    }

    void check_enum_exists(const gp::FileDescriptor& r, const gp::EnumDescriptor& w) {
        auto* e = r.pool()->FindEnumTypeByName(w.full_name());
        if (!e || e->file() != &r)
            add("ENUM_REMOVED", w.full_name(), fmt::format("The enum '{}' was removed", w.full_name()));
    }

    void check_message_tree(const gp::FileDescriptor& rf, const gp::Descriptor& w) {
        if (w.options().map_entry()) return; // map entries are compared through their fields
        auto* r = find_message(rf, w.full_name());
        if (!r) {
            add("MESSAGE_REMOVED", w.full_name(), fmt::format("The message '{}' was removed", w.full_name()));
            return;
        }
        check_message(*r, w);
        for (int i = 0; i < w.nested_type_count(); ++i) check_message_tree(rf, *w.nested_type(i));
        for (int i = 0; i < w.enum_type_count(); ++i) check_enum_exists(rf, *w.enum_type(i));
    }

    void check_message(const gp::Descriptor& r, const gp::Descriptor& w) {
        // Fields of the writer, by number.
        for (int i = 0; i < w.field_count(); ++i) {
            auto& wf = *w.field(i);
            auto path = fmt::format("{}.{}", w.full_name(), wf.name());
            auto* rf = r.FindFieldByNumber(wf.number());
            if (!rf) {
                if (wf.is_required())
                    add("REQUIRED_FIELD_REMOVED", path,
                        fmt::format("The required field '{}' (number {}) was removed", wf.name(), wf.number()));
                else if (real_oneof(wf))
                    add("ONEOF_FIELD_REMOVED", path,
                        fmt::format("The field '{}' (number {}) was removed from oneof '{}'", wf.name(), wf.number(),
                                    real_oneof(wf)->name()));
                continue; // an optional field removed: the reader skips it as unknown
            }
            check_field(*rf, wf, path);
        }
        // Fields of the reader that the writer lacks.
        for (int i = 0; i < r.field_count(); ++i) {
            auto& rf = *r.field(i);
            if (!w.FindFieldByNumber(rf.number()) && rf.is_required())
                add("REQUIRED_FIELD_ADDED", fmt::format("{}.{}", r.full_name(), rf.name()),
                    fmt::format("The required field '{}' (number {}) was added", rf.name(), rf.number()));
        }
        // Oneofs of the reader: fields that were not in one before.
        for (int o = 0; o < r.oneof_decl_count(); ++o) {
            auto& ro = *r.oneof_decl(o);
            if (ro.field_count() == 1 && ro.field(0)->has_optional_keyword()) continue; // synthetic
            int moved = 0;
            bool existed = false;
            for (int k = 0; k < ro.field_count(); ++k) {
                auto* wf = w.FindFieldByNumber(ro.field(k)->number());
                if (!wf) continue;
                if (!real_oneof(*wf)) ++moved;
                else existed = true;
            }
            if (moved > 1 || (moved > 0 && existed))
                add(moved > 1 ? "MULTIPLE_FIELDS_MOVED_TO_ONEOF" : "FIELD_MOVED_TO_EXISTING_ONEOF",
                    fmt::format("{}.{}", r.full_name(), ro.name()),
                    fmt::format("{} field(s) moved into oneof '{}' ({}): a writer may set more than one of them",
                                moved, ro.name(), moved > 1 ? "several at once" : "which already had fields"));
        }
    }

    void check_field(const gp::FieldDescriptor& r, const gp::FieldDescriptor& w, const std::string& path) {
        auto rk = kind_of(r), wk = kind_of(w);
        if (r.is_map() != w.is_map() || rk != wk) {
            add("FIELD_KIND_CHANGED", path,
                fmt::format("The kind of field '{}' (number {}) changed from {} to {}", w.name(), w.number(),
                            w.is_map() ? "map" : kind_name(wk), r.is_map() ? "map" : kind_name(rk)));
            return;
        }
        if (r.is_map()) {
            // Map entries: key and value must be compatible as fields.
            check_field(*r.message_type()->map_key(), *w.message_type()->map_key(), path + ".key");
            check_field(*r.message_type()->map_value(), *w.message_type()->map_value(), path + ".value");
            return;
        }
        if (rk == field_kind::scalar) {
            if (r.type() != w.type() && (scalar_group(r.type()) == 0 || scalar_group(r.type()) != scalar_group(w.type())))
                add("FIELD_SCALAR_KIND_CHANGED", path,
                    fmt::format("The type of field '{}' (number {}) changed from {} to {}, which do not share a wire "
                                "encoding",
                                w.name(), w.number(), w.type_name(), r.type_name()));
        } else {
            auto rn = rk == field_kind::message ? r.message_type()->full_name() : r.enum_type()->full_name();
            auto wn = wk == field_kind::message ? w.message_type()->full_name() : w.enum_type()->full_name();
            if (rn != wn)
                add("FIELD_NAMED_TYPE_CHANGED", path,
                    fmt::format("The type of field '{}' (number {}) changed from {} to {}", w.name(), w.number(), wn, rn));
        }
        if (r.is_repeated() != w.is_repeated() && is_numeric_scalar(r))
            add("FIELD_NUMERIC_LABEL_CHANGED", path,
                fmt::format("Field '{}' (number {}) changed between repeated and singular: a numeric field's encodings "
                            "differ (packed)",
                            w.name(), w.number()));
        if (!w.is_required() && r.is_required())
            add("REQUIRED_FIELD_ADDED", path, fmt::format("The field '{}' (number {}) became required", r.name(), r.number()));
        if (w.is_required() && !r.is_required())
            add("REQUIRED_FIELD_REMOVED", path,
                fmt::format("The field '{}' (number {}) is no longer required", r.name(), r.number()));
        if (real_oneof(w) && !real_oneof(r))
            add("ONEOF_FIELD_REMOVED", path,
                fmt::format("The field '{}' (number {}) was moved out of oneof '{}'", w.name(), w.number(),
                            real_oneof(w)->name()));
    }
};

} // namespace

std::vector<compatibility_problem> protobuf_reader_problems(const protobuf_schema& reader,
                                                            const protobuf_schema& writer) {
    protobuf_checker c;
    c.check_file(reader.file(), writer.file());
    return std::move(c.problems);
}

// ---------------------------------------------------------------------------------------------
// JSON Schema: the reader must accept every instance the writer accepts.
namespace {

class json_checker {
public:
    std::vector<compatibility_problem> problems;

    // `r` and `w` may be null: an absent subschema accepts everything.
    void check(const json_schema_node* r, const json_schema_node* w, const std::string& path) {
        if (r) r = &r->effective();
        if (w) w = &w->effective();
        if (accepts_all(r)) return;
        if (w && w->boolean_schema == false) return; // the writer wrote nothing here
        auto key = std::make_pair(r, w);
        if (!_active.insert(key).second) return; // recursive schemas: already being compared
        check_inner(*r, w, path);
        _active.erase(key);
    }

private:
    void add(std::string type, std::string path, std::string description) {
        problems.push_back({std::move(type), std::move(path), std::move(description)});
    }

    static bool accepts_all(const json_schema_node* n) {
        if (!n) return true;
        if (n->boolean_schema) return *n->boolean_schema;
        return !n->has_type && n->properties.empty() && n->required.empty() && !n->additional_properties &&
               n->pattern_properties.empty() && !n->property_names && !n->min_properties && !n->max_properties &&
               n->dependent_required.empty() && n->dependent_schemas.empty() && !n->items && n->tuple_items.empty() &&
               !n->additional_items && !n->min_items && !n->max_items && !n->unique_items && !n->contains &&
               !n->min_length && !n->max_length && !n->pattern && !n->minimum && !n->maximum && !n->exclusive_minimum &&
               !n->exclusive_maximum && !n->multiple_of && !n->enum_values && !n->const_value && n->all_of.empty() &&
               n->any_of.empty() && n->one_of.empty() && !n->not_ && !n->if_ && !n->ref;
    }

    static std::string sub(const std::string& path, std::string_view what, std::string_view name = {}) {
        return name.empty() ? fmt::format("{}/{}", path, what) : fmt::format("{}/{}/{}", path, what, name);
    }

    void check_inner(const json_schema_node& r, const json_schema_node* w, const std::string& path) {
        static const json_schema_node any{};
        const json_schema_node& wn = w ? *w : any;
        if (r.boolean_schema == false) {
            add("TYPE_NARROWED", path, fmt::format("At '{}' the new schema accepts nothing (false)", path));
            return;
        }
        // Combinators of the reader.
        if (!r.any_of.empty() || !r.one_of.empty()) {
            auto& rb = !r.any_of.empty() ? r.any_of : r.one_of;
            const auto& wb_src = !wn.any_of.empty() ? wn.any_of : wn.one_of;
            std::vector<const json_schema_node*> wb(wb_src.begin(), wb_src.end());
            if (wb.empty()) wb.push_back(&wn);
            for (size_t i = 0; i < wb.size(); ++i) {
                bool found = false;
                for (auto* b : rb) {
                    json_checker probe;
                    probe._active = _active;
                    probe.check(b, wb[i], path);
                    if (probe.problems.empty()) {
                        found = true;
                        break;
                    }
                }
                if (!found)
                    add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", sub(path, !r.any_of.empty() ? "anyOf" : "oneOf"),
                        fmt::format("At '{}' no branch of the new schema's {} accepts {} of the old schema", path,
                                    !r.any_of.empty() ? "anyOf" : "oneOf",
                                    wb.size() == 1 ? std::string("the value") : fmt::format("branch {}", i)));
            }
        }
        for (size_t i = 0; i < r.all_of.size(); ++i) check(r.all_of[i], &wn, sub(path, "allOf", std::to_string(i)));
        if (r.not_) {
            bool same = wn.not_ && wn.not_->raw && r.not_->raw && *wn.not_->raw == *r.not_->raw;
            if (!same)
                add("NOT_TYPE_EXTENDED", sub(path, "not"),
                    fmt::format("At '{}' the new schema excludes values ('not') the old one did not", path));
        }
        if (!r.any_of.empty() || !r.one_of.empty() || (!r.has_type && !wn.any_of.empty())) {
            // Branch-wise comparison done above; type checks on the combined node would repeat it.
        }

        // Types: what the writer allows must be allowed by the reader.
        uint8_t wt = effective_types(wn), rt = effective_types(r);
        if (uint8_t lost = wt & ~rt; lost)
            add("TYPE_NARROWED", path,
                fmt::format("At '{}' the new schema no longer accepts {} (old: {}, new: {})", path,
                            json_types_to_string(lost), json_types_to_string(wt), json_types_to_string(rt)));
        uint8_t both = wt & rt;

        // enum / const.
        if (r.enum_values || r.const_value) {
            std::vector<nlohmann::ordered_json> rv = r.enum_values ? *r.enum_values : std::vector<nlohmann::ordered_json>{*r.const_value};
            if (!wn.enum_values && !wn.const_value)
                add("ENUM_ARRAY_NARROWED", sub(path, r.enum_values ? "enum" : "const"),
                    fmt::format("At '{}' the new schema restricts values to an enum the old one did not have", path));
            else {
                std::vector<nlohmann::ordered_json> wv =
                    wn.enum_values ? *wn.enum_values : std::vector<nlohmann::ordered_json>{*wn.const_value};
                for (auto& v : wv)
                    if (std::find(rv.begin(), rv.end(), v) == rv.end()) {
                        add("ENUM_ARRAY_NARROWED", sub(path, "enum"),
                            fmt::format("At '{}' the new schema's enum lacks {}", path,
                                        v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
                        break;
                    }
            }
        }

        if (both & (json_number | json_integer)) check_numbers(r, wn, path);
        if (both & json_string) check_strings(r, wn, path);
        if (both & json_array) check_arrays(r, wn, path);
        if (both & json_object) check_objects(r, wn, path);
    }

    static uint8_t effective_types(const json_schema_node& n) {
        if (n.boolean_schema) return *n.boolean_schema ? json_any : 0;
        uint8_t t = n.types;
        // An enum/const with no "type" restricts types to its values' types.
        return t;
    }

    void check_numbers(const json_schema_node& r, const json_schema_node& w, const std::string& path) {
        auto upper = [](const json_schema_node& n) -> std::pair<double, bool> { // value, exclusive
            double v = INFINITY;
            bool ex = false;
            if (n.maximum) v = *n.maximum;
            if (n.exclusive_maximum && *n.exclusive_maximum <= v) {
                v = *n.exclusive_maximum;
                ex = true;
            }
            return {v, ex};
        };
        auto lower = [](const json_schema_node& n) -> std::pair<double, bool> {
            double v = -INFINITY;
            bool ex = false;
            if (n.minimum) v = *n.minimum;
            if (n.exclusive_minimum && *n.exclusive_minimum >= v) {
                v = *n.exclusive_minimum;
                ex = true;
            }
            return {v, ex};
        };
        auto [ru, rux] = upper(r);
        auto [wu, wux] = upper(w);
        if (ru < wu || (ru == wu && rux && !wux))
            add("MAXIMUM_DECREASED", sub(path, "maximum"),
                fmt::format("At '{}' the new schema's maximum ({}{}) is below the old one's ({}{})", path,
                            rux ? "exclusive " : "", ru, wux ? "exclusive " : "", wu));
        auto [rl, rlx] = lower(r);
        auto [wl, wlx] = lower(w);
        if (rl > wl || (rl == wl && rlx && !wlx))
            add("MINIMUM_INCREASED", sub(path, "minimum"),
                fmt::format("At '{}' the new schema's minimum ({}{}) is above the old one's ({}{})", path,
                            rlx ? "exclusive " : "", rl, wlx ? "exclusive " : "", wl));
        if (r.multiple_of) {
            bool ok = false;
            if (w.multiple_of) {
                double q = *w.multiple_of / *r.multiple_of;
                ok = std::fabs(q - std::round(q)) < 1e-9;
            }
            if (!ok)
                add(w.multiple_of ? "MULTIPLE_OF_CHANGED" : "MULTIPLE_OF_ADDED", sub(path, "multipleOf"),
                    fmt::format("At '{}' the new schema's multipleOf {} does not divide the old one's", path,
                                *r.multiple_of));
        }
        // integer-only reader, number writer: covered by the type check.
    }

    void check_strings(const json_schema_node& r, const json_schema_node& w, const std::string& path) {
        if (r.max_length && (!w.max_length || *r.max_length < *w.max_length))
            add(w.max_length ? "MAX_LENGTH_DECREASED" : "MAX_LENGTH_ADDED", sub(path, "maxLength"),
                fmt::format("At '{}' the new schema's maxLength {} is below what the old one allowed", path, *r.max_length));
        if (r.min_length && *r.min_length > w.min_length.value_or(0))
            add(w.min_length ? "MIN_LENGTH_INCREASED" : "MIN_LENGTH_ADDED", sub(path, "minLength"),
                fmt::format("At '{}' the new schema's minLength {} is above what the old one allowed", path, *r.min_length));
        if (r.pattern && r.pattern != w.pattern)
            add(w.pattern ? "PATTERN_CHANGED" : "PATTERN_ADDED", sub(path, "pattern"),
                fmt::format("At '{}' the new schema's pattern '{}' differs from the old one's", path, *r.pattern));
    }

    void check_arrays(const json_schema_node& r, const json_schema_node& w, const std::string& path) {
        if (r.max_items && (!w.max_items || *r.max_items < *w.max_items))
            add(w.max_items ? "MAX_ITEMS_DECREASED" : "MAX_ITEMS_ADDED", sub(path, "maxItems"),
                fmt::format("At '{}' the new schema's maxItems {} is below what the old one allowed", path, *r.max_items));
        if (r.min_items && *r.min_items > w.min_items.value_or(0))
            add(w.min_items ? "MIN_ITEMS_INCREASED" : "MIN_ITEMS_ADDED", sub(path, "minItems"),
                fmt::format("At '{}' the new schema's minItems {} is above what the old one allowed", path, *r.min_items));
        if (r.unique_items && !w.unique_items)
            add("UNIQUE_ITEMS_ADDED", sub(path, "uniqueItems"),
                fmt::format("At '{}' the new schema requires unique items", path));
        // Positions: the writer's item schema at each index must be accepted by the reader's.
        size_t n = std::max(r.tuple_items.size(), w.tuple_items.size());
        auto at = [](const json_schema_node& s, size_t i) -> const json_schema_node* {
            if (i < s.tuple_items.size()) return s.tuple_items[i];
            return s.tuple_items.empty() ? s.items : s.additional_items;
        };
        for (size_t i = 0; i < n; ++i) check(at(r, i), at(w, i), sub(path, "items", std::to_string(i)));
        check(at(r, n), at(w, n), sub(path, "items"));
    }

    void check_objects(const json_schema_node& r, const json_schema_node& w, const std::string& path) {
        for (auto& req : r.required)
            if (!w.is_required(req))
                add("REQUIRED_ATTRIBUTE_ADDED", sub(path, "required"),
                    fmt::format("At '{}' the new schema requires property '{}' that the old one did not", path, req));
        auto closed = [](const json_schema_node* a) { return a && a->boolean_schema == false; };
        // Properties the reader describes.
        for (auto& [name, rs] : r.properties) {
            auto ppath = sub(path, "properties", name);
            if (auto* ws = w.find_property(name)) {
                check(rs, ws, ppath);
                continue;
            }
            // Added in the reader: what the writer allowed under that name.
            if (closed(w.additional_properties) && w.pattern_properties.empty()) continue; // never written
            if (w.additional_properties) {
                check(rs, w.additional_properties, ppath);
                continue;
            }
            if (!accepts_all(&rs->effective()))
                add("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", ppath,
                    fmt::format("The new schema adds property '{}' at '{}' while the old schema's content model was "
                                "open (old data may hold '{}' of any type)",
                                name, path, name));
        }
        // Properties only the writer describes: the reader's content model must take them.
        for (auto& [name, ws] : w.properties) {
            if (r.find_property(name)) continue;
            auto ppath = sub(path, "properties", name);
            if (closed(r.additional_properties)) {
                add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", ppath,
                    fmt::format("The new schema removes property '{}' at '{}' and its content model is closed", name,
                                path));
                continue;
            }
            if (r.additional_properties) check(r.additional_properties, ws, ppath);
        }
        // Any other property name.
        if (!closed(w.additional_properties) || !w.pattern_properties.empty()) {
            if (closed(r.additional_properties) && !closed(w.additional_properties))
                add("ADDITIONAL_PROPERTIES_REMOVED", sub(path, "additionalProperties"),
                    fmt::format("At '{}' the new schema closes the content model (additionalProperties false) that the "
                                "old one left open",
                                path));
            else if (r.additional_properties && !closed(r.additional_properties))
                check(r.additional_properties, w.additional_properties, sub(path, "additionalProperties"));
        }
        if (r.max_properties && (!w.max_properties || *r.max_properties < *w.max_properties))
            add("MAX_PROPERTIES_DECREASED", sub(path, "maxProperties"),
                fmt::format("At '{}' the new schema's maxProperties {} is below what the old one allowed", path,
                            *r.max_properties));
        if (r.min_properties && *r.min_properties > w.min_properties.value_or(0))
            add("MIN_PROPERTIES_INCREASED", sub(path, "minProperties"),
                fmt::format("At '{}' the new schema's minProperties {} is above what the old one allowed", path,
                            *r.min_properties));
        for (auto& [name, deps] : r.dependent_required) {
            auto it = w.dependent_required.find(name);
            for (auto& d : deps)
                if ((it == w.dependent_required.end() || std::find(it->second.begin(), it->second.end(), d) ==
                                                             it->second.end()) &&
                    !w.is_required(d))
                    add("DEPENDENCY_ARRAY_EXTENDED", sub(path, "dependencies", name),
                        fmt::format("At '{}' the new schema requires '{}' whenever '{}' is present", path, d, name));
        }
    }

    std::set<std::pair<const json_schema_node*, const json_schema_node*>> _active;
};

} // namespace

std::vector<compatibility_problem> json_reader_problems(const json_schema_node& reader, const json_schema_node& writer) {
    json_checker c;
    c.check(&reader, &writer, "#");
    return std::move(c.problems);
}

std::vector<compatibility_problem> reader_problems(const parsed_schema& reader, const parsed_schema& writer) {
    if (reader.type() != writer.type())
        return {{"TYPE_MISMATCH", "",
                 fmt::format("Incompatible schema type: {} cannot read {}", to_string(reader.type()),
                             to_string(writer.type()))}};
    switch (reader.type()) {
    case schema_type::avro: return avro_reader_problems(reader.avro()->root(), writer.avro()->root());
    case schema_type::protobuf: return protobuf_reader_problems(*reader.protobuf(), *writer.protobuf());
    case schema_type::json: return json_reader_problems(reader.json()->root(), writer.json()->root());
    }
    return {};
}

compatibility_result check_compatibility(compatibility_level level, const parsed_schema& candidate,
                                         std::span<const previous_version> previous) {
    compatibility_result out;
    if (level == compatibility_level::none || previous.empty()) return out;
    bool transitive = level == compatibility_level::backward_transitive ||
                      level == compatibility_level::forward_transitive || level == compatibility_level::full_transitive;
    bool backward = level != compatibility_level::forward && level != compatibility_level::forward_transitive;
    bool forward = level != compatibility_level::backward && level != compatibility_level::backward_transitive;
    auto against = transitive ? previous : previous.subspan(previous.size() - 1);
    // Newest first, as Confluent reports.
    for (auto it = against.rbegin(); it != against.rend(); ++it) {
        std::vector<compatibility_problem> problems;
        if (backward) problems = reader_problems(candidate, *it->schema);
        if (forward) {
            auto f = reader_problems(*it->schema, candidate);
            problems.insert(problems.end(), f.begin(), f.end());
        }
        if (problems.empty()) continue;
        out.compatible = false;
        for (auto& p : problems) out.messages.push_back(p.to_message());
        out.messages.push_back(fmt::format("{{oldSchemaVersion: {}}}", it->version));
        out.messages.push_back(fmt::format("{{oldSchema: '{}'}}", it->schema->canonical()));
        out.messages.push_back(fmt::format("{{compatibility: '{}'}}", to_string(level)));
    }
    return out;
}

} // namespace floe::schema
