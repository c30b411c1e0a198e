#include "schema/rest_api.h"

#include "schema/json_text.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>

namespace floe::schema {

using json = nlohmann::json;

rest_response error_response(int status, int code, std::string_view message) {
    rest_response r;
    r.status = status;
    r.body = json{{"error_code", code}, {"message", std::string(message)}}.dump(-1, ' ', false,
                                                                                json::error_handler_t::replace);
    return r;
}

namespace {

using params = std::map<std::string, std::string>;

std::string decode(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(uint8_t(s[i + 1])) &&
            std::isxdigit(uint8_t(s[i + 2]))) {
            int v = 0;
            std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
            out += char(v);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::vector<std::string> split_path(std::string_view p) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < p.size()) {
        if (p[i] == '/') {
            ++i;
            continue;
        }
        auto j = p.find('/', i);
        if (j == std::string_view::npos) j = p.size();
        out.push_back(decode(p.substr(i, j - i)));
        i = j;
    }
    return out;
}

rest_response ok(json body, int status = 200) {
    rest_response r;
    r.status = status;
    r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return r;
}

rest_response from_error(const api_error& e) { return error_response(e.http_status, e.error_code, e.message); }

std::string q(const rest_request& r, const char* name, std::string def = "") {
    auto it = r.query.find(name);
    return it == r.query.end() ? def : it->second;
}
bool qbool(const rest_request& r, const char* name) {
    auto v = q(r, name);
    return v == "true" || v == "TRUE" || v == "True" || v == "1";
}

json refs_json(const std::vector<schema_reference>& refs) {
    json a = json::array();
    for (auto& x : refs) a.push_back({{"name", x.name}, {"subject", x.subject}, {"version", x.version}});
    return a;
}

json version_json(const version_view& v) {
    json j{{"subject", v.subject}, {"version", v.version}, {"id", v.id}};
    if (v.type != schema_type::avro) j["schemaType"] = std::string(to_string(v.type));
    if (!v.references.empty()) j["references"] = refs_json(v.references);
    j["schema"] = v.schema;
    if (v.deleted) j["deleted"] = true;
    return j;
}

// The schema a client sent: {"schema": "...", "schemaType": "...", "references": [...], ...}.
std::expected<schema_request, api_error> parse_schema_body(const rest_request& r) {
    auto j = parse_json(r.body, 64, "request body");
    if (!j) return std::unexpected(api_error{400, 400, fmt::format("Unrecognized request body: {}", j.error().message())});
    if (!j->is_object()) return std::unexpected(api_error{400, 400, "Unrecognized request body: not a JSON object"});
    schema_request req;
    auto s = j->find("schema");
    if (s == j->end() || !s->is_string() || s->get<std::string>().empty())
        return std::unexpected(api_error{422, 42201, "Invalid schema: empty or missing \"schema\""});
    req.schema = s->get<std::string>();
    if (auto t = j->find("schemaType"); t != j->end() && !t->is_null()) {
        auto st = t->is_string() ? parse_schema_type(t->get<std::string>()) : std::nullopt;
        if (!st)
            return std::unexpected(api_error{422, 42201, fmt::format("Invalid schema type {}; valid types are AVRO, "
                                                                     "PROTOBUF, JSON",
                                                                     t->dump())});
        req.type = *st;
    }
    if (auto rs = j->find("references"); rs != j->end() && !rs->is_null()) {
        if (!rs->is_array()) return std::unexpected(api_error{422, 42201, "Invalid schema: \"references\" must be an array"});
        for (auto& x : *rs) {
            if (!x.is_object() || !x.contains("name") || !x["name"].is_string() || !x.contains("subject") ||
                !x["subject"].is_string() || !x.contains("version") || !x["version"].is_number_integer())
                return std::unexpected(
                    api_error{422, 42201, "Invalid schema: a reference needs \"name\", \"subject\" and \"version\""});
            auto v = x["version"].get<int64_t>();
            if (v < -1 || v > INT32_MAX || v == 0)
                return std::unexpected(api_error{422, 42202, fmt::format("Invalid reference version {}", v)});
            req.references.push_back({x["name"].get<std::string>(), x["subject"].get<std::string>(), int32_t(v)});
        }
    }
    auto int_field = [&](const char* k, std::optional<int32_t>& out) -> std::optional<api_error> {
        auto it = j->find(k);
        if (it == j->end() || it->is_null()) return std::nullopt;
        if (!it->is_number_integer() || it->get<int64_t>() > INT32_MAX || it->get<int64_t>() < -1)
            return api_error{422, 42201, fmt::format("Invalid \"{}\"", k)};
        if (it->get<int64_t>() > 0) out = int32_t(it->get<int64_t>());
        return std::nullopt;
    };
    if (auto e = int_field("id", req.id)) return std::unexpected(*e);
    if (auto e = int_field("version", req.version)) return std::unexpected(*e);
    req.normalize = qbool(r, "normalize");
    return req;
}

std::expected<json, api_error> parse_object_body(const rest_request& r) {
    auto j = parse_json(r.body, 64, "request body");
    if (!j || !j->is_object())
        return std::unexpected(api_error{400, 400, "Unrecognized request body: a JSON object is expected"});
    return *j;
}

std::expected<int32_t, api_error> parse_id(const std::string& s) {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 1)
        return std::unexpected(api_error{404, 40403, fmt::format("Schema {} not found", s)});
    return v;
}

} // namespace

struct rest_api::route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments; // "{x}" matches any one segment
    std::function<rest_response(const rest_request&, const params&)> handler;
};

rest_api::~rest_api() = default;

rest_api::rest_api(registry& reg) : _r(reg) {
    auto add = [this](std::string method, std::string pattern,
                      std::function<rest_response(const rest_request&, const params&)> h) {
        auto segs = split_path(pattern);
        _routes.push_back({std::move(method), std::move(pattern), std::move(segs), std::move(h)});
    };
    registry& r = _r;
    add("GET", "/", [](const rest_request&, const params&) { return ok(json::object()); });

    // Subjects.
    add("GET", "/subjects", [&r](const rest_request& q_, const params&) {
        auto s = r.subjects(q(q_, "subjectPrefix"), qbool(q_, "deleted"));
        return s ? ok(*s) : from_error(s.error());
    });
    add("POST", "/subjects/{subject}", [&r](const rest_request& q_, const params& p) {
        auto req = parse_schema_body(q_);
        if (!req) return from_error(req.error());
        auto v = r.lookup(p.at("subject"), *req, qbool(q_, "deleted"));
        return v ? ok(version_json(*v)) : from_error(v.error());
    });
    add("DELETE", "/subjects/{subject}", [&r](const rest_request& q_, const params& p) {
        auto v = r.delete_subject(p.at("subject"), qbool(q_, "permanent"));
        return v ? ok(*v) : from_error(v.error());
    });
    add("GET", "/subjects/{subject}/versions", [&r](const rest_request& q_, const params& p) {
        auto v = r.versions(p.at("subject"), qbool(q_, "deleted"));
        return v ? ok(*v) : from_error(v.error());
    });
    add("POST", "/subjects/{subject}/versions", [&r](const rest_request& q_, const params& p) {
        auto req = parse_schema_body(q_);
        if (!req) return from_error(req.error());
        auto id = r.register_schema(p.at("subject"), *req);
        return id ? ok(json{{"id", *id}}) : from_error(id.error());
    });
    add("GET", "/subjects/{subject}/versions/{version}", [&r](const rest_request& q_, const params& p) {
        auto v = r.get_version(p.at("subject"), p.at("version"), qbool(q_, "deleted"));
        return v ? ok(version_json(*v)) : from_error(v.error());
    });
    add("DELETE", "/subjects/{subject}/versions/{version}", [&r](const rest_request& q_, const params& p) {
        auto v = r.delete_version(p.at("subject"), p.at("version"), qbool(q_, "permanent"));
        return v ? ok(*v) : from_error(v.error());
    });
    add("GET", "/subjects/{subject}/versions/{version}/schema", [&r](const rest_request& q_, const params& p) {
        auto v = r.get_version(p.at("subject"), p.at("version"), qbool(q_, "deleted"));
        if (!v) return from_error(v.error());
        rest_response out;
        out.body = v->schema;
        return out;
    });
    add("GET", "/subjects/{subject}/versions/{version}/referencedby", [&r](const rest_request&, const params& p) {
        auto v = r.referenced_by(p.at("subject"), p.at("version"));
        return v ? ok(*v) : from_error(v.error());
    });

    // Schemas by id.
    add("GET", "/schemas/types", [](const rest_request&, const params&) { return ok(json{"JSON", "PROTOBUF", "AVRO"}); });
    add("GET", "/schemas/ids/{id}", [&r](const rest_request&, const params& p) {
        auto id = parse_id(p.at("id"));
        if (!id) return from_error(id.error());
        auto s = r.schema_by_id(*id);
        if (!s) return from_error(s.error());
        json j{{"schema", s->schema}};
        if (s->type != schema_type::avro) j["schemaType"] = std::string(to_string(s->type));
        if (!s->references.empty()) j["references"] = refs_json(s->references);
        return ok(j);
    });
    add("GET", "/schemas/ids/{id}/schema", [&r](const rest_request&, const params& p) {
        auto id = parse_id(p.at("id"));
        if (!id) return from_error(id.error());
        auto s = r.schema_by_id(*id);
        if (!s) return from_error(s.error());
        rest_response out;
        out.body = s->schema;
        return out;
    });
    add("GET", "/schemas/ids/{id}/versions", [&r](const rest_request& q_, const params& p) {
        auto id = parse_id(p.at("id"));
        if (!id) return from_error(id.error());
        auto v = r.id_versions(*id, qbool(q_, "deleted"));
        if (!v) return from_error(v.error());
        json a = json::array();
        for (auto& [s, n] : *v) a.push_back({{"subject", s}, {"version", n}});
        return ok(a);
    });

    // Compatibility.
    auto compat = [&r](const rest_request& q_, const params& p) {
        auto req = parse_schema_body(q_);
        if (!req) return from_error(req.error());
        auto it = p.find("version");
        auto c = r.check(p.at("subject"), it == p.end() ? std::string_view() : std::string_view(it->second), *req);
        if (!c) return from_error(c.error());
        json j{{"is_compatible", c->compatible}};
        if (qbool(q_, "verbose")) j["messages"] = c->messages;
        return ok(j);
    };
    add("POST", "/compatibility/subjects/{subject}/versions/{version}", compat);
    add("POST", "/compatibility/subjects/{subject}/versions", compat);

    // Config.
    auto get_config = [&r](const rest_request& q_, const params& p) {
        auto it = p.find("subject");
        auto l = r.get_config(it == p.end() ? "" : it->second, qbool(q_, "defaultToGlobal"));
        return l ? ok(json{{"compatibilityLevel", std::string(to_string(*l))}}) : from_error(l.error());
    };
    auto put_config = [&r](const rest_request& q_, const params& p) {
        auto j = parse_object_body(q_);
        if (!j) return from_error(j.error());
        auto c = j->find("compatibility");
        if (c == j->end()) c = j->find("compatibilityLevel");
        if (c == j->end() || !c->is_string())
            return error_response(422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, "
                                              "full, backward_transitive, forward_transitive, and full_transitive");
        auto it = p.find("subject");
        auto l = r.set_config(it == p.end() ? "" : it->second, c->get<std::string>());
        return l ? ok(json{{"compatibility", std::string(to_string(*l))}}) : from_error(l.error());
    };
    auto delete_config = [&r](const rest_request&, const params& p) {
        auto it = p.find("subject");
        auto l = r.delete_config(it == p.end() ? "" : it->second);
        return l ? ok(json{{"compatibilityLevel", std::string(to_string(*l))}}) : from_error(l.error());
    };
    add("GET", "/config", get_config);
    add("PUT", "/config", put_config);
    add("DELETE", "/config", delete_config);
    add("GET", "/config/{subject}", get_config);
    add("PUT", "/config/{subject}", put_config);
    add("DELETE", "/config/{subject}", delete_config);

    // Mode.
    auto get_mode = [&r](const rest_request& q_, const params& p) {
        auto it = p.find("subject");
        auto m = r.get_mode(it == p.end() ? "" : it->second, qbool(q_, "defaultToGlobal"));
        return m ? ok(json{{"mode", std::string(to_string(*m))}}) : from_error(m.error());
    };
    auto put_mode = [&r](const rest_request& q_, const params& p) {
        auto j = parse_object_body(q_);
        if (!j) return from_error(j.error());
        auto m = j->find("mode");
        if (m == j->end() || !m->is_string())
            return error_response(422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT");
        auto it = p.find("subject");
        auto out = r.set_mode(it == p.end() ? "" : it->second, m->get<std::string>(), qbool(q_, "force"));
        return out ? ok(json{{"mode", std::string(to_string(*out))}}) : from_error(out.error());
    };
    auto delete_mode = [&r](const rest_request&, const params& p) {
        auto it = p.find("subject");
        auto m = r.delete_mode(it == p.end() ? "" : it->second);
        return m ? ok(json{{"mode", std::string(to_string(*m))}}) : from_error(m.error());
    };
    add("GET", "/mode", get_mode);
    add("PUT", "/mode", put_mode);
    add("DELETE", "/mode", delete_mode);
    add("GET", "/mode/{subject}", get_mode);
    add("PUT", "/mode/{subject}", put_mode);
    add("DELETE", "/mode/{subject}", delete_mode);
}

std::vector<std::string> rest_api::routes() const {
    std::vector<std::string> out;
    for (auto& r : _routes) out.push_back(r.method + " " + r.pattern);
    return out;
}

rest_response rest_api::handle(const rest_request& req) const {
    auto path = req.raw_path.substr(0, req.raw_path.find('?'));
    auto segs = split_path(path);
    bool path_known = false;
    for (auto& r : _routes) {
        if (r.segments.size() != segs.size()) continue;
        params p;
        bool match = true;
        for (size_t i = 0; i < segs.size() && match; ++i) {
            auto& s = r.segments[i];
            if (s.size() > 2 && s.front() == '{' && s.back() == '}') p[s.substr(1, s.size() - 2)] = segs[i];
            else if (s != segs[i]) match = false;
        }
        if (!match) continue;
        path_known = true;
        if (r.method != req.method) continue;
        auto out = r.handler(req, p);
        out.endpoint = r.pattern;
        return out;
    }
    if (path_known) return error_response(405, 405, fmt::format("HTTP method {} not allowed on {}", req.method, path));
    return error_response(404, 404, fmt::format("HTTP 404 Not Found: {}", path));
}

} // namespace floe::schema
