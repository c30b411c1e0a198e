#include "http/search_filter.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <memory>

namespace floe::http {

struct search_filter::parsed_operand {
    nlohmann::json value;
    std::optional<nlohmann::json::json_pointer> pointer;
};

namespace {
std::optional<std::string> one(const std::multimap<std::string, std::string>& q, const std::string& name) {
    auto it = q.find(name);
    if (it == q.end()) return std::nullopt;
    return it->second;
}

result<std::optional<int64_t>> ts_param(const std::multimap<std::string, std::string>& q, const std::string& name) {
    auto v = one(q, name);
    if (!v || v->empty()) return std::optional<int64_t>{};
    int64_t out = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || p != v->data() + v->size())
        return fail(errc::invalid_argument, "parameter '{}' must be a timestamp in milliseconds, got '{}'", name, *v);
    return std::optional<int64_t>(out);
}
} // namespace

result<search_filter> search_filter::parse(const std::multimap<std::string, std::string>& q) {
    search_filter f;
    f.key_equals = one(q, "key");
    f.key_prefix = one(q, "key-prefix");
    if (auto h = one(q, "header")) {
        if (h->empty()) return fail(errc::invalid_argument, "parameter 'header' must name a header (N or N=V)");
        if (auto eq = h->find('='); eq != std::string::npos) {
            f.header_name = h->substr(0, eq);
            f.header_value = h->substr(eq + 1);
        } else {
            f.header_name = *h;
        }
    }
    f.value_contains = one(q, "contains");
    if (f.value_contains && f.value_contains->empty()) f.value_contains.reset();
    auto ptr = one(q, "json"), op = one(q, "json-op"), val = one(q, "json-value");
    if (!ptr && (op || val)) return fail(errc::invalid_argument, "json-op and json-value need json=<JSON pointer>");
    if (ptr) {
        json_test t;
        t.pointer = *ptr;
        auto parsed = std::make_shared<parsed_operand>();
        try {
            parsed->pointer.emplace(t.pointer);
        } catch (const std::exception& e) {
            return fail(errc::invalid_argument, "parameter 'json' is not a JSON pointer ('/a/b'): {}", e.what());
        }
        std::string o = op.value_or(val ? "eq" : "exists");
        if (o == "eq") t.op = json_op::eq;
        else if (o == "lt") t.op = json_op::lt;
        else if (o == "gt") t.op = json_op::gt;
        else if (o == "exists") t.op = json_op::exists;
        else return fail(errc::invalid_argument, "parameter 'json-op' must be one of eq, lt, gt, exists; got '{}'", o);
        if (t.op != json_op::exists) {
            if (!val) return fail(errc::invalid_argument, "json-op={} needs json-value", o);
            t.operand = *val;
            auto j = nlohmann::json::parse(*val, nullptr, /*allow_exceptions=*/false);
            parsed->value = j.is_discarded() ? nlohmann::json(*val) : std::move(j);
        }
        f.json = std::move(t);
        f._operand = std::move(parsed);
    }
    auto from = FLOE_TRY(ts_param(q, "from-ts")), to = FLOE_TRY(ts_param(q, "to-ts"));
    if (from) f._from_ts = *from;
    if (to) f._to_ts = *to;
    if (f._from_ts > f._to_ts) return fail(errc::invalid_argument, "from-ts is after to-ts");
    return f;
}

bool search_filter::empty() const {
    return !key_equals && !key_prefix && !header_name && !value_contains && !json && _from_ts == INT64_MIN &&
           _to_ts == INT64_MAX;
}

bool search_filter::json_matches(std::string_view value) const {
    auto doc = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return false;
    const auto& ptr = *_operand->pointer;
    const nlohmann::json* found = nullptr;
    try { // a pointer that does not fit the document (an array index that is not a number) throws
        if (doc.contains(ptr)) found = &doc.at(ptr);
    } catch (const std::exception&) {
        return false;
    }
    if (!found) return false;
    const auto& field = *found;
    const auto& want = _operand->value;
    switch (json->op) {
    case json_op::exists: return true;
    case json_op::eq:
        if (field.is_number() && want.is_number()) return field.get<double>() == want.get<double>();
        return field == want;
    case json_op::lt:
    case json_op::gt: {
        int c = 0;
        if (field.is_number() && want.is_number()) {
            double a = field.get<double>(), b = want.get<double>();
            c = a < b ? -1 : a > b ? 1 : 0;
        } else if (field.is_string() && want.is_string()) {
            c = field.get_ref<const std::string&>().compare(want.get_ref<const std::string&>());
        } else {
            return false;
        }
        return json->op == json_op::lt ? c < 0 : c > 0;
    }
    }
    return false;
}

bool search_filter::matches(const searched_record& r) const {
    if (r.timestamp < _from_ts || r.timestamp > _to_ts) return false;
    if (key_equals && (!r.key || *r.key != *key_equals)) return false;
    if (key_prefix && (!r.key || !r.key->starts_with(*key_prefix))) return false;
    if (header_name) {
        bool found = false;
        if (r.headers)
            for (auto& [k, v] : *r.headers)
                if (k == *header_name && (!header_value || (v && *v == *header_value))) {
                    found = true;
                    break;
                }
        if (!found) return false;
    }
    if (value_contains && (!r.value || r.value->find(*value_contains) == std::string_view::npos)) return false;
    if (json && (!r.value || !json_matches(*r.value))) return false;
    return true;
}

} // namespace floe::http
