#include "schema/registry.h"

#include "base/random.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <set>

/// FLOE_TRY for any std::expected (api_result's error is api_error, not floe::error).
#define SR_TRY(expr)                                                                             \
    ({                                                                                           \
        auto _sr_r = (expr);                                                                     \
        if (!_sr_r) [[unlikely]] return std::unexpected(std::move(_sr_r).error());               \
        std::move(_sr_r).value();                                                                \
    })

namespace floe::schema {

using json = nlohmann::json;

std::string_view to_string(registry_mode m) noexcept {
    switch (m) {
    case registry_mode::readwrite: return "READWRITE";
    case registry_mode::readonly: return "READONLY";
    case registry_mode::import_: return "IMPORT";
    }
    return "?";
}

std::optional<registry_mode> parse_registry_mode(std::string_view s) noexcept {
    if (s == "READWRITE") return registry_mode::readwrite;
    if (s == "READONLY") return registry_mode::readonly;
    if (s == "IMPORT") return registry_mode::import_;
    return std::nullopt;
}

namespace {

api_error err(int status, int code, std::string message) { return api_error{status, code, std::move(message)}; }
std::unexpected<api_error> fail_api(int status, int code, std::string message) {
    return std::unexpected(err(status, code, std::move(message)));
}
std::unexpected<api_error> subject_not_found(std::string_view s) {
    return fail_api(404, 40401, fmt::format("Subject '{}' not found.", s));
}
std::unexpected<api_error> version_not_found(int32_t v) {
    return fail_api(404, 40402, fmt::format("Version {} not found.", v));
}
std::unexpected<api_error> store_error(const error& e) {
    return fail_api(500, 50001, fmt::format("Error in the backend data store: {}", e.message()));
}

json refs_json(const std::vector<schema_reference>& refs) {
    json a = json::array();
    for (auto& r : refs) a.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    return a;
}

std::vector<schema_reference> refs_from(const json& j) {
    std::vector<schema_reference> out;
    if (!j.is_array()) return out;
    for (auto& r : j)
        if (r.is_object() && r.value("name", json()).is_string() && r.value("subject", json()).is_string() &&
            r.value("version", json()).is_number_integer())
            out.push_back({r["name"].get<std::string>(), r["subject"].get<std::string>(), r["version"].get<int32_t>()});
    return out;
}

std::string new_token() {
    return fmt::format("{:016x}{:016x}", os_random64(), os_random64());
}

} // namespace

bool registry::subject_entry::live() const {
    for (auto& [v, e] : versions)
        if (!e.deleted) return true;
    return false;
}

registry::registry(std::shared_ptr<registry_log> log, registry_options opts) : _log(std::move(log)), _opts(opts) {}

uint64_t registry::position() const {
    std::shared_lock lk(_mu);
    return _applied;
}

std::string registry::content_key(schema_type t, std::string_view text, const std::vector<schema_reference>& refs) {
    return fmt::format("{}\n{}\n{}", to_string(t), refs_json(refs).dump(), text);
}

// ---------------------------------------------------------------------------------------------
// The log.

void registry::apply(const std::string& record) {
    // Called with _mu held exclusively. A record that does not parse is skipped (logged): the
    // position still counts, so every registry reading the same log agrees on positions.
    auto j = json::parse(record, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("t")) {
        spdlog::warn("schema registry: skipping an unreadable log record at position {}", _applied);
        return;
    }
    if (auto tok = j.find("tok"); tok != j.end() && tok->is_string() && !_pending_token.empty() &&
                                  tok->get<std::string>() == _pending_token)
        _pending_seen = true;
    auto t = j.value("t", std::string());
    auto subject = j.value("subject", std::string());
    try {
        if (t == "register") {
            auto id = j.at("id").get<int32_t>();
            auto type = parse_schema_type(j.at("schemaType").get<std::string>()).value_or(schema_type::avro);
            if (!_schemas.contains(id)) {
                stored s{id, type, j.at("schema").get<std::string>(), refs_from(j.value("references", json::array()))};
                _by_content.emplace(content_key(s.type, s.text, s.refs), id);
                _schemas.emplace(id, std::move(s));
            }
            _max_id = std::max(_max_id, id);
            auto version = j.at("version").get<int32_t>();
            auto& slot = _subjects[subject].versions[version];
            if (slot.id) --_uses[slot.id];
            slot = {id, false};
            ++_uses[id];
        } else if (t == "delete_version") {
            auto it = _subjects.find(subject);
            if (it == _subjects.end()) return;
            auto v = j.at("version").get<int32_t>();
            if (j.value("permanent", false)) {
                if (auto vi = it->second.versions.find(v); vi != it->second.versions.end()) {
                    --_uses[vi->second.id];
                    it->second.versions.erase(vi);
                }
            } else if (auto vi = it->second.versions.find(v); vi != it->second.versions.end())
                vi->second.deleted = true;
        } else if (t == "delete_subject") {
            auto it = _subjects.find(subject);
            if (it == _subjects.end()) return;
            if (j.value("permanent", false)) {
                for (auto& [v, e] : it->second.versions) --_uses[e.id];
                it->second.versions.clear();
            } else
                for (auto& [v, e] : it->second.versions) e.deleted = true;
        } else if (t == "config") {
            std::optional<compatibility_level> l;
            if (j.contains("level") && j["level"].is_string()) l = parse_compatibility_level(j["level"].get<std::string>());
            if (subject.empty()) _global_level = l;
            else _subjects[subject].level = l;
        } else if (t == "mode") {
            std::optional<registry_mode> m;
            if (j.contains("mode") && j["mode"].is_string()) m = parse_registry_mode(j["mode"].get<std::string>());
            if (subject.empty()) _global_mode = m;
            else _subjects[subject].mode = m;
        }
    } catch (const std::exception& e) {
        spdlog::warn("schema registry: skipping a malformed log record at position {}: {}", _applied, e.what());
    }
}

result<void> registry::catch_up_locked() {
    uint64_t from;
    {
        std::shared_lock lk(_mu);
        from = _applied;
    }
    auto recs = SR_TRY(_log->read_from(from));
    if (recs.empty()) return {};
    std::unique_lock lk(_mu);
    for (auto& r : recs) {
        apply(r);
        ++_applied;
    }
    return {};
}

result<void> registry::refresh() {
    std::lock_guard io(_io_mu);
    return catch_up_locked();
}

api_result<registry::append_outcome> registry::append(json record) {
    // _io_mu held by the caller, and the state caught up to _applied.
    _pending_token = new_token();
    _pending_seen = false;
    record["tok"] = _pending_token;
    auto text = record.dump(-1, ' ', false, json::error_handler_t::replace);
    uint64_t at;
    {
        std::shared_lock lk(_mu);
        at = _applied;
    }
    auto r = _log->append_if(at, text);
    if (r) {
        std::unique_lock lk(_mu);
        apply(text);
        ++_applied;
        _pending_token.clear();
        return append_outcome::applied;
    }
    if (r.error().code() == errc::conflict) {
        _pending_token.clear();
        return append_outcome::conflict;
    }
    // The outcome may be unknown: read the log to find out whether the record landed.
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (catch_up_locked()) {
            bool seen = _pending_seen;
            _pending_token.clear();
            if (seen) return append_outcome::applied;
            return store_error(r.error()); // not written: the caller answers 50001
        }
    }
    _pending_token.clear();
    return store_error(r.error());
}

// ---------------------------------------------------------------------------------------------
// Parsing and references.

api_result<std::vector<resolved_reference>> registry::resolve_refs(const std::vector<schema_reference>& refs,
                                                                   int depth) {
    // _mu held shared.
    if (depth > _opts.max_reference_depth)
        return fail_api(422, 42201,
                        fmt::format("Invalid schema: references nested deeper than {} (a cycle?)", _opts.max_reference_depth));
    std::vector<resolved_reference> out;
    std::set<std::string> names;
    for (auto& r : refs) {
        if (r.name.empty()) return fail_api(422, 42201, "Invalid schema: a reference needs a name");
        if (!names.insert(r.name).second)
            return fail_api(422, 42201, fmt::format("Invalid schema: reference name '{}' appears twice", r.name));
        auto s = _subjects.find(r.subject);
        int32_t v = r.version;
        if (s != _subjects.end() && v == -1) {
            v = 0;
            for (auto& [n, e] : s->second.versions)
                if (!e.deleted) v = n;
        }
        const version_entry* ve = nullptr;
        if (s != _subjects.end())
            if (auto it = s->second.versions.find(v); it != s->second.versions.end()) ve = &it->second;
        if (!ve)
            return fail_api(422, 42201,
                            fmt::format("Invalid schema: reference '{}' names subject '{}' version {}, which does not "
                                        "exist",
                                        r.name, r.subject, r.version));
        auto p = parsed_locked(ve->id, depth + 1);
        if (!p) {
            auto e = p.error();
            if (e.error_code == 42201) return std::unexpected(e);
            return fail_api(422, 42201, fmt::format("Invalid schema: reference '{}': {}", r.name, e.message));
        }
        out.push_back({r.name, *p});
    }
    return out;
}

api_result<std::shared_ptr<const parsed_schema>> registry::parsed_locked(int32_t id, int depth) {
    {
        std::lock_guard lk(_parsed_mu);
        if (auto it = _parsed.find(id); it != _parsed.end()) return it->second;
    }
    auto it = _schemas.find(id);
    if (it == _schemas.end()) return fail_api(404, 40403, fmt::format("Schema {} not found", id));
    auto refs = SR_TRY(resolve_refs(it->second.refs, depth));
    auto p = parsed_schema::parse(it->second.type, it->second.text, std::move(refs), {.max_depth = _opts.max_depth});
    if (!p) return fail_api(422, 42201, fmt::format("Invalid schema {}: {}", id, p.error().message()));
    std::lock_guard lk(_parsed_mu);
    _parsed.emplace(id, *p);
    return *p;
}

api_result<std::shared_ptr<const parsed_schema>> registry::parse_request(const schema_request& req) {
    // _mu held shared.
    if (req.schema.size() > _opts.max_schema_bytes)
        return fail_api(422, 42201, fmt::format("Invalid schema: {} bytes, more than the {} allowed", req.schema.size(),
                                                _opts.max_schema_bytes));
    if (req.schema.empty()) return fail_api(422, 42201, "Invalid schema: empty schema");
    auto refs = SR_TRY(resolve_refs(req.references, 0));
    auto p = parsed_schema::parse(req.type, req.schema, std::move(refs), {.max_depth = _opts.max_depth});
    if (!p)
        return fail_api(422, 42201, fmt::format("Invalid schema {{schemaType: {}}}: {}", to_string(req.type),
                                                p.error().message()));
    return *p;
}

api_result<int32_t> registry::parse_version_locked(const std::string& subject, std::string_view version, bool deleted,
                                                   bool* is_latest) const {
    int32_t v = 0;
    if (version == "latest" || version == "-1") {
        if (is_latest) *is_latest = true;
        auto s = _subjects.find(subject);
        if (s == _subjects.end() || (!deleted && !s->second.live()) || s->second.versions.empty())
            return subject_not_found(subject);
        for (auto& [n, e] : s->second.versions)
            if (deleted || !e.deleted) v = n;
        return v;
    }
    auto [p, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
    if (ec != std::errc() || p != version.data() + version.size() || v < 1)
        return fail_api(422, 42202,
                        fmt::format("The specified version '{}' is not a valid version id. Allowed values are between "
                                    "[1, 2^31-1] and the string \"latest\"",
                                    version));
    return v;
}

compatibility_level registry::level_locked(const std::string& subject) const {
    if (auto s = _subjects.find(subject); s != _subjects.end() && s->second.level) return *s->second.level;
    return _global_level.value_or(default_level);
}

registry_mode registry::mode_locked(const std::string& subject) const {
    if (auto s = _subjects.find(subject); s != _subjects.end() && s->second.mode) return *s->second.mode;
    return _global_mode.value_or(registry_mode::readwrite);
}

bool registry::referenced_locked(const std::string& subject, int32_t version) const {
    for (auto& [sn, s] : _subjects)
        for (auto& [v, e] : s.versions) {
            auto it = _schemas.find(e.id);
            if (it == _schemas.end()) continue;
            for (auto& r : it->second.refs)
                if (r.subject == subject && r.version == version) return true;
        }
    return false;
}

// ---------------------------------------------------------------------------------------------
// registry_client.

result<std::shared_ptr<const parsed_schema>> registry::get_by_id(int32_t id) {
    {
        std::lock_guard lk(_parsed_mu);
        if (auto it = _parsed.find(id); it != _parsed.end()) return it->second;
    }
    bool known;
    {
        std::shared_lock lk(_mu);
        known = _schemas.contains(id);
    }
    if (!known) SR_TRY(refresh());
    std::shared_lock lk(_mu);
    auto p = parsed_locked(id, 0);
    if (!p) return fail(p.error().http_status == 404 ? errc::not_found : errc::invalid_argument, "{}", p.error().message);
    return *p;
}

result<registry_client::subject_version> registry::latest(std::string_view subject) {
    SR_TRY(refresh());
    std::shared_lock lk(_mu);
    auto s = _subjects.find(std::string(subject));
    if (s == _subjects.end() || !s->second.live()) return fail(errc::not_found, "subject '{}' has no live version", subject);
    subject_version out{std::string(subject), 0, 0, nullptr};
    for (auto& [v, e] : s->second.versions)
        if (!e.deleted) {
            out.version = v;
            out.id = e.id;
        }
    auto p = parsed_locked(out.id, 0);
    if (!p) return fail(errc::invalid_argument, "{}", p.error().message);
    out.schema = *p;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Reads.

api_result<std::vector<std::string>> registry::subjects(std::string_view prefix, bool deleted) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    std::vector<std::string> out;
    for (auto& [name, s] : _subjects)
        if (name.starts_with(prefix) && (s.live() || (deleted && !s.versions.empty()))) out.push_back(name);
    return out;
}

api_result<std::vector<int32_t>> registry::versions(const std::string& subject, bool deleted) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto s = _subjects.find(subject);
    if (s == _subjects.end() || s->second.versions.empty() || (!deleted && !s->second.live()))
        return subject_not_found(subject);
    std::vector<int32_t> out;
    for (auto& [v, e] : s->second.versions)
        if (deleted || !e.deleted) out.push_back(v);
    return out;
}

api_result<version_view> registry::get_version(const std::string& subject, std::string_view version, bool deleted) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto v = SR_TRY(parse_version_locked(subject, version, deleted));
    auto s = _subjects.find(subject);
    if (s == _subjects.end() || s->second.versions.empty() || (!deleted && !s->second.live()))
        return subject_not_found(subject);
    auto it = s->second.versions.find(v);
    if (it == s->second.versions.end() || (it->second.deleted && !deleted)) return version_not_found(v);
    auto& st = _schemas.at(it->second.id);
    return version_view{subject, v, st.id, st.type, st.text, st.refs, it->second.deleted};
}

api_result<std::vector<int32_t>> registry::referenced_by(const std::string& subject, std::string_view version) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto v = SR_TRY(parse_version_locked(subject, version, false));
    auto s = _subjects.find(subject);
    if (s == _subjects.end() || !s->second.live()) return subject_not_found(subject);
    if (!s->second.versions.contains(v)) return version_not_found(v);
    std::set<int32_t> ids;
    for (auto& [sn, ss] : _subjects)
        for (auto& [n, e] : ss.versions) {
            if (e.deleted) continue;
            for (auto& r : _schemas.at(e.id).refs)
                if (r.subject == subject && r.version == v) ids.insert(e.id);
        }
    return std::vector<int32_t>(ids.begin(), ids.end());
}

api_result<version_view> registry::lookup(const std::string& subject, const schema_request& req, bool deleted) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto s = _subjects.find(subject);
    if (s == _subjects.end() || s->second.versions.empty() || (!deleted && !s->second.live()))
        return subject_not_found(subject);
    auto parsed = SR_TRY(parse_request(req));
    auto text = req.normalize ? parsed->normalized() : parsed->canonical();
    auto c = _by_content.find(content_key(req.type, text, req.references));
    if (c == _by_content.end() && !req.normalize) {
        // Also match a version registered normalized.
        c = _by_content.find(content_key(req.type, parsed->normalized(), req.references));
    }
    if (c != _by_content.end()) {
        // Newest version of the subject with that id.
        for (auto it = s->second.versions.rbegin(); it != s->second.versions.rend(); ++it)
            if (it->second.id == c->second && (deleted || !it->second.deleted)) {
                auto& st = _schemas.at(c->second);
                return version_view{subject, it->first, st.id, st.type, st.text, st.refs, it->second.deleted};
            }
    }
    return fail_api(404, 40403, "Schema not found");
}

api_result<schema_view> registry::schema_by_id(int32_t id) {
    bool known;
    {
        std::shared_lock lk(_mu);
        known = _schemas.contains(id);
    }
    if (!known)
        if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto it = _schemas.find(id);
    if (it == _schemas.end()) return fail_api(404, 40403, fmt::format("Schema {} not found", id));
    // A schema whose every version was permanently deleted is gone too.
    if (auto u = _uses.find(id); u == _uses.end() || u->second <= 0)
        return fail_api(404, 40403, fmt::format("Schema {} not found", id));
    return schema_view{id, it->second.type, it->second.text, it->second.refs};
}

api_result<std::vector<std::pair<std::string, int32_t>>> registry::id_versions(int32_t id, bool deleted) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    std::vector<std::pair<std::string, int32_t>> out;
    bool any = false;
    for (auto& [sn, s] : _subjects)
        for (auto& [v, e] : s.versions)
            if (e.id == id) {
                any = true;
                if (deleted || !e.deleted) out.emplace_back(sn, v);
            }
    if (!any) return fail_api(404, 40403, fmt::format("Schema {} not found", id));
    return out;
}

// ---------------------------------------------------------------------------------------------
// Writes.

api_result<int32_t> registry::register_schema(const std::string& subject, const schema_request& req) {
    if (subject.empty() || subject.size() > 1024 || subject.find('\0') != std::string::npos)
        return fail_api(422, 42201, "Invalid subject name");
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        json rec;
        {
            std::shared_lock lk(_mu);
            auto mode = mode_locked(subject);
            if (mode == registry_mode::readonly)
                return fail_api(422, 42205, fmt::format("Subject {} is in read-only mode", subject));
            if (req.id && mode != registry_mode::import_)
                return fail_api(422, 42205, "Overriding schema id is only permitted in IMPORT mode");
            auto parsed = SR_TRY(parse_request(req));
            auto text = req.normalize ? parsed->normalized() : parsed->canonical();
            auto key = content_key(req.type, text, req.references);
            auto existing = _by_content.find(key);
            const subject_entry* se = nullptr;
            if (auto it = _subjects.find(subject); it != _subjects.end()) se = &it->second;
            // Already a live version of this subject: its id, nothing written.
            if (existing != _by_content.end() && se)
                for (auto& [v, e] : se->versions)
                    if (e.id == existing->second && !e.deleted) {
                        if (req.id && *req.id != e.id)
                            return fail_api(422, 42205,
                                            fmt::format("Schema already registered with id {} instead of input id {}",
                                                        e.id, *req.id));
                        return e.id;
                    }
            int32_t id;
            if (req.id) {
                if (*req.id < 1) return fail_api(422, 42201, "Invalid schema: id must be positive");
                if (auto s = _schemas.find(*req.id); s != _schemas.end() && content_key(s->second.type, s->second.text,
                                                                                         s->second.refs) != key)
                    return fail_api(422, 42205,
                                    fmt::format("Overwrite new schema with id {} is not permitted: that id holds "
                                                "another schema",
                                                *req.id));
                id = *req.id;
            } else {
                id = existing != _by_content.end() ? existing->second : _max_id + 1;
            }
            int32_t version = 1;
            if (se && !se->versions.empty()) version = se->versions.rbegin()->first + 1;
            if (req.version) {
                if (*req.version < 1) return fail_api(422, 42202, "The specified version is not a valid version id");
                if (se && se->versions.contains(*req.version))
                    return fail_api(422, 42205, fmt::format("Version {} of subject {} already exists", *req.version,
                                                            subject));
                version = *req.version;
            }
            // Compatibility against the subject's live versions (not in IMPORT mode).
            if (mode != registry_mode::import_ && se) {
                std::vector<std::shared_ptr<const parsed_schema>> keep;
                std::vector<previous_version> prev;
                for (auto& [v, e] : se->versions) {
                    if (e.deleted) continue;
                    auto p = parsed_locked(e.id, 0);
                    if (!p) return std::unexpected(p.error());
                    keep.push_back(*p);
                    prev.push_back({v, p->get()});
                }
                auto level = level_locked(subject);
                auto c = check_compatibility(level, *parsed, prev);
                if (!c.compatible) {
                    std::string details;
                    for (auto& m : c.messages) {
                        if (!details.empty()) details += ", ";
                        details += m;
                    }
                    return fail_api(409, 409,
                                    fmt::format("Schema being registered is incompatible with an earlier schema for "
                                                "subject \"{}\", details: [{}]",
                                                subject, details));
                }
            }
            rec = {{"t", "register"},
                   {"subject", subject},
                   {"version", version},
                   {"id", id},
                   {"schemaType", std::string(to_string(req.type))},
                   {"schema", text},
                   {"references", refs_json(req.references)}};
        }
        auto out = SR_TRY(append(std::move(rec)));
        if (out == append_outcome::applied) {
            std::shared_lock lk(_mu);
            // The id the log now gives this content under this subject.
            auto s = _subjects.find(subject);
            if (s != _subjects.end() && !s->second.versions.empty()) return s->second.versions.rbegin()->second.id;
            return fail_api(500, 50001, "Error in the backend data store: registration not visible after append");
        }
        // conflict: another writer appended first; re-read and decide again.
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<std::vector<int32_t>> registry::delete_subject(const std::string& subject, bool permanent) {
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        std::vector<int32_t> deleted;
        {
            std::shared_lock lk(_mu);
            auto s = _subjects.find(subject);
            if (s == _subjects.end() || s->second.versions.empty()) return subject_not_found(subject);
            if (mode_locked(subject) == registry_mode::readonly)
                return fail_api(422, 42205, fmt::format("Subject {} is in read-only mode", subject));
            if (!permanent && !s->second.live())
                return fail_api(404, 40404, fmt::format("Subject '{}' was soft deleted.Set permanent=true to delete "
                                                        "permanently",
                                                        subject));
            if (permanent && s->second.live())
                return fail_api(404, 40405, fmt::format("Subject '{}' was not deleted first before being permanently "
                                                        "deleted",
                                                        subject));
            for (auto& [v, e] : s->second.versions) {
                if (referenced_locked(subject, v))
                    return fail_api(422, 42206, fmt::format("One or more references exist to the schema {{subject={}, "
                                                            "version={}}}",
                                                            subject, v));
                deleted.push_back(v);
            }
        }
        auto out = SR_TRY(append({{"t", "delete_subject"}, {"subject", subject}, {"permanent", permanent}}));
        if (out == append_outcome::applied) return deleted;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<int32_t> registry::delete_version(const std::string& subject, std::string_view version, bool permanent) {
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        int32_t v;
        {
            std::shared_lock lk(_mu);
            auto s = _subjects.find(subject);
            if (s == _subjects.end() || s->second.versions.empty()) return subject_not_found(subject);
            if (mode_locked(subject) == registry_mode::readonly)
                return fail_api(422, 42205, fmt::format("Subject {} is in read-only mode", subject));
            // "latest" names the newest live version (any version, for a permanent delete).
            v = SR_TRY(parse_version_locked(subject, version, permanent || !s->second.live()));
            auto it = s->second.versions.find(v);
            if (it == s->second.versions.end()) return version_not_found(v);
            if (!permanent && it->second.deleted)
                return fail_api(404, 40406, fmt::format("Subject '{}' Version {} was soft deleted.Set permanent=true to "
                                                        "delete permanently",
                                                        subject, v));
            if (permanent && !it->second.deleted)
                return fail_api(404, 40407, fmt::format("Subject '{}' Version {} was not deleted first before being "
                                                        "permanently deleted",
                                                        subject, v));
            if (referenced_locked(subject, v))
                return fail_api(422, 42206, fmt::format("One or more references exist to the schema {{subject={}, "
                                                        "version={}}}",
                                                        subject, v));
        }
        auto out = SR_TRY(
            append({{"t", "delete_version"}, {"subject", subject}, {"version", v}, {"permanent", permanent}}));
        if (out == append_outcome::applied) return v;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<compatibility_result> registry::check(const std::string& subject, std::string_view version,
                                                 const schema_request& req) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    auto parsed = SR_TRY(parse_request(req));
    auto s = _subjects.find(subject);
    auto level = level_locked(subject);
    std::vector<std::shared_ptr<const parsed_schema>> keep;
    std::vector<previous_version> prev;
    if (version.empty()) {
        if (s != _subjects.end())
            for (auto& [v, e] : s->second.versions)
                if (!e.deleted) {
                    auto p = SR_TRY(parsed_locked(e.id, 0));
                    keep.push_back(p);
                    prev.push_back({v, p.get()});
                }
    } else {
        auto v = SR_TRY(parse_version_locked(subject, version, false));
        if (s == _subjects.end() || !s->second.live()) return subject_not_found(subject);
        auto it = s->second.versions.find(v);
        if (it == s->second.versions.end() || it->second.deleted) return version_not_found(v);
        auto p = SR_TRY(parsed_locked(it->second.id, 0));
        keep.push_back(p);
        prev.push_back({v, p.get()});
    }
    return check_compatibility(level, *parsed, prev);
}

// ---------------------------------------------------------------------------------------------
// Config and mode.

api_result<compatibility_level> registry::get_config(const std::string& subject, bool default_to_global) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    if (subject.empty()) return _global_level.value_or(default_level);
    auto s = _subjects.find(subject);
    if (s != _subjects.end() && s->second.level) return *s->second.level;
    if (default_to_global) return _global_level.value_or(default_level);
    return fail_api(404, 40408, fmt::format("Subject '{}' does not have subject-level compatibility configured", subject));
}

api_result<compatibility_level> registry::set_config(const std::string& subject, std::string_view level) {
    auto l = parse_compatibility_level(level);
    if (!l)
        return fail_api(422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, "
                                    "backward_transitive, forward_transitive, and full_transitive");
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        {
            std::shared_lock lk(_mu);
            if (mode_locked(subject) == registry_mode::readonly && !subject.empty())
                return fail_api(422, 42205, fmt::format("Subject {} is in read-only mode", subject));
        }
        auto out = SR_TRY(append({{"t", "config"}, {"subject", subject}, {"level", std::string(to_string(*l))}}));
        if (out == append_outcome::applied) return *l;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<compatibility_level> registry::delete_config(const std::string& subject) {
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        compatibility_level old;
        {
            std::shared_lock lk(_mu);
            if (subject.empty()) old = _global_level.value_or(default_level);
            else {
                auto s = _subjects.find(subject);
                if (s == _subjects.end() || !s->second.level) return subject_not_found(subject);
                old = *s->second.level;
            }
        }
        auto out = SR_TRY(append({{"t", "config"}, {"subject", subject}, {"level", nullptr}}));
        if (out == append_outcome::applied) return old;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<registry_mode> registry::get_mode(const std::string& subject, bool default_to_global) {
    if (auto r = refresh(); !r) return store_error(r.error());
    std::shared_lock lk(_mu);
    if (subject.empty()) return _global_mode.value_or(registry_mode::readwrite);
    auto s = _subjects.find(subject);
    if (s != _subjects.end() && s->second.mode) return *s->second.mode;
    if (default_to_global) return _global_mode.value_or(registry_mode::readwrite);
    return fail_api(404, 40409, fmt::format("Subject '{}' does not have subject-level mode configured", subject));
}

api_result<registry_mode> registry::set_mode(const std::string& subject, std::string_view mode, bool force) {
    auto m = parse_registry_mode(mode);
    if (!m) return fail_api(422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT");
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        {
            std::shared_lock lk(_mu);
            if (*m == registry_mode::import_ && !force) {
                // IMPORT keeps the ids of another registry: only into an empty registry or subject.
                bool empty = true;
                for (auto& [sn, s] : _subjects)
                    if ((subject.empty() || sn == subject) && !s.versions.empty()) empty = false;
                if (!empty)
                    return fail_api(422, 42205, "Cannot import since found existing subjects (use force=true)");
            }
        }
        auto out = SR_TRY(append({{"t", "mode"}, {"subject", subject}, {"mode", std::string(to_string(*m))}}));
        if (out == append_outcome::applied) return *m;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

api_result<registry_mode> registry::delete_mode(const std::string& subject) {
    std::lock_guard io(_io_mu);
    for (int attempt = 0; attempt < _opts.max_append_attempts; ++attempt) {
        if (auto r = catch_up_locked(); !r) return store_error(r.error());
        registry_mode old;
        {
            std::shared_lock lk(_mu);
            if (subject.empty()) old = _global_mode.value_or(registry_mode::readwrite);
            else {
                auto s = _subjects.find(subject);
                if (s == _subjects.end() || !s->second.mode) return subject_not_found(subject);
                old = *s->second.mode;
            }
        }
        auto out = SR_TRY(append({{"t", "mode"}, {"subject", subject}, {"mode", nullptr}}));
        if (out == append_outcome::applied) return old;
    }
    return fail_api(500, 50001, "Error in the backend data store: too many concurrent writers");
}

// ---------------------------------------------------------------------------------------------
// The in-memory log.

namespace {
class memory_log final : public registry_log {
public:
    result<std::vector<std::string>> read_from(uint64_t from) override {
        std::lock_guard lk(_mu);
        if (from >= _records.size()) return std::vector<std::string>{};
        return std::vector<std::string>(_records.begin() + ptrdiff_t(from), _records.end());
    }
    result<void> append_if(uint64_t expected, const std::string& record) override {
        std::lock_guard lk(_mu);
        if (_records.size() != expected) return fail(errc::conflict, "log has {} records, not {}", _records.size(), expected);
        _records.push_back(record);
        return {};
    }
    std::string describe() const override { return "in memory"; }

private:
    std::mutex _mu;
    std::vector<std::string> _records;
};
} // namespace

std::unique_ptr<registry_log> make_memory_log() { return std::make_unique<memory_log>(); }

} // namespace floe::schema
