#include "iceberg/rest_catalog.h"

#include "base/random.h"
#include "aws/sigv4.h"
#include "iceberg/metadata_cache.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <set>
#include <strings.h>
#include <thread>

namespace floe::iceberg {

using json = nlohmann::json;

namespace {

std::once_flag curl_once;

size_t on_body(char* data, size_t size, size_t n, void* user) {
    static_cast<std::string*>(user)->append(data, size * n);
    return size * n;
}

/// Keeps the ETag response header (the last one, should a 100 Continue come first).
size_t on_header(char* data, size_t size, size_t n, void* user) {
    std::string_view line(data, size * n);
    if (line.size() > 5 && strncasecmp(line.data(), "etag:", 5) == 0) {
        line.remove_prefix(5);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
        *static_cast<std::string*>(user) = std::string(line);
    }
    return size * n;
}

struct header_list {
    curl_slist* list = nullptr;
    ~header_list() { curl_slist_free_all(list); }
    void add(const std::string& h) { list = curl_slist_append(list, h.c_str()); }
};

/// "409 CommitFailedException: Requirement failed: ..." from the spec's error model, or the
/// status and the start of the body when the server did not use it.
std::string describe(const rest_catalog::http_response& r) {
    auto j = json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("error") && j["error"].is_object()) {
        auto& e = j["error"];
        return fmt::format("{} {}: {}", r.status, e.value("type", std::string("?")),
                           e.value("message", std::string("(no message)")));
    }
    auto body = r.body.substr(0, 200);
    return body.empty() ? fmt::format("HTTP {}", r.status) : fmt::format("HTTP {}: {}", r.status, body);
}

std::string form_encode(std::string_view s) { return aws::uri_encode(s, false); }

bool retryable(long status) { return status == 429 || status >= 500; }

std::string key(const table_ident& t) { return t.ns + '\x1f' + t.name; }

void backoff(const rest_catalog_options& o, int attempt) {
    auto cap = std::max<int64_t>(1, o.retry_base.count() << std::min(attempt, 6));
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(os_random64() % static_cast<uint64_t>(cap + 1))));
}

} // namespace

rest_catalog::rest_catalog(rest_catalog_options opts) : _opts(std::move(opts)) {
    std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    while (_opts.uri.ends_with("/")) _opts.uri.pop_back();
    if (_opts.oauth2_server_uri.empty()) _opts.oauth2_server_uri = _opts.uri + "/v1/oauth/tokens";
    if (_opts.scope.empty()) _opts.scope = "catalog";
    _oauth = !_opts.credential.empty();
}

rest_catalog::~rest_catalog() {
    for (auto* h : _idle) curl_easy_cleanup(static_cast<CURL*>(h));
}

result<std::unique_ptr<rest_catalog>> rest_catalog::open(rest_catalog_options opts) {
    if (!opts.uri.starts_with("http://") && !opts.uri.starts_with("https://"))
        return fail(errc::invalid_argument, "REST catalog URI '{}' must start with http:// or https://", opts.uri);
    std::unique_ptr<rest_catalog> c(new rest_catalog(std::move(opts)));
    std::string path = "/v1/config";
    if (!c->_opts.warehouse.empty()) path += "?warehouse=" + form_encode(c->_opts.warehouse);
    c->_prefix_path = "/v1";
    auto r = FLOE_TRY_CTX(c->send_idempotent("GET", path), "REST catalog {}", c->_opts.uri);
    if (r.status != 200)
        return fail(r.status == 401 || r.status == 403 ? errc::invalid_argument : errc::unavailable,
                    "REST catalog GET {}{}: {}", c->_opts.uri, path, describe(r));
    auto j = json::parse(r.body, nullptr, false);
    if (!j.is_object()) return fail(errc::corrupt, "REST catalog GET {}{}: not a JSON object", c->_opts.uri, path);
    // Catalog properties: defaults, then ours, then overrides.
    std::string prefix;
    if (j.contains("defaults") && j["defaults"].is_object()) prefix = j["defaults"].value("prefix", std::string());
    if (!c->_opts.prefix.empty()) prefix = c->_opts.prefix;
    if (j.contains("overrides") && j["overrides"].is_object()) {
        if (!c->_opts.prefix_wins || c->_opts.prefix.empty()) prefix = j["overrides"].value("prefix", prefix);
        c->_opts.warehouse = j["overrides"].value("warehouse", c->_opts.warehouse);
    }
    if (!prefix.empty()) c->_prefix_path = "/v1/" + aws::uri_encode(prefix, true);
    spdlog::info("catalog: rest at {} (path {}{}){}", c->_opts.uri, c->_prefix_path,
                 c->_opts.warehouse.empty() ? "" : fmt::format(", warehouse {}", c->_opts.warehouse),
                 c->_opts.sigv4_credentials
                     ? fmt::format(", SigV4 for {} in {} with {}", c->_opts.sigv4_service, c->_opts.sigv4_region,
                                   c->_opts.sigv4_credentials->source())
                     : c->_oauth ? ", OAuth2 client credentials" : (c->_opts.token.empty() ? "" : ", bearer token"));
    return c;
}

result<void> rest_catalog::refresh_token_locked() {
    auto colon = _opts.credential.find(':');
    std::string id = colon == std::string::npos ? std::string() : _opts.credential.substr(0, colon);
    std::string secret = colon == std::string::npos ? _opts.credential : _opts.credential.substr(colon + 1);
    std::string form = "grant_type=client_credentials";
    if (!id.empty()) form += "&client_id=" + form_encode(id);
    form += "&client_secret=" + form_encode(secret) + "&scope=" + form_encode(_opts.scope);
    CURL* h = curl_easy_init();
    if (!h) return fail(errc::internal, "curl_easy_init failed");
    std::string body;
    header_list hl;
    hl.add("Content-Type: application/x-www-form-urlencoded");
    hl.add("Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, _opts.oauth2_server_uri.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl.list);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(_opts.request_timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(_opts.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(form.size()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    auto rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK)
        return fail(errc::unavailable, "OAuth2 token request to {}: {}", _opts.oauth2_server_uri, curl_easy_strerror(rc));
    auto j = json::parse(body, nullptr, false);
    if (status != 200 || !j.is_object() || !j.contains("access_token") || !j["access_token"].is_string()) {
        // OAuth errors are {"error": "invalid_client", "error_description": ...}.
        std::string what = j.is_object() && j.contains("error") && j["error"].is_string()
                               ? fmt::format("{}: {}", j["error"].get<std::string>(), j.value("error_description", std::string()))
                               : body.substr(0, 200);
        return fail(status == 401 || status == 400 ? errc::invalid_argument : errc::unavailable,
                    "OAuth2 token request to {} (client credentials, scope {}): HTTP {}: {}",
                    _opts.oauth2_server_uri, _opts.scope, status, what);
    }
    _token = j["access_token"].get<std::string>();
    int64_t expires_in = j.contains("expires_in") && j["expires_in"].is_number_integer()
                             ? j["expires_in"].get<int64_t>()
                             : 3600;
    // Refreshed before it expires: at half its life for short tokens, a minute before otherwise.
    auto lead = std::min<int64_t>(60, expires_in / 2);
    _refresh_at = std::chrono::steady_clock::now() + std::chrono::seconds(std::max<int64_t>(0, expires_in - lead));
    spdlog::debug("catalog: OAuth2 token valid for {} s", expires_in);
    return {};
}

result<std::string> rest_catalog::bearer() {
    std::lock_guard g(_mu);
    if (_oauth) {
        if (_token.empty() || std::chrono::steady_clock::now() >= _refresh_at) FLOE_TRY(refresh_token_locked());
        return _token;
    }
    return _opts.token;
}

result<rest_catalog::http_response> rest_catalog::send(const std::string& method, const std::string& path,
                                                       const std::string& body, bool vend,
                                                       const std::string& if_none_match) {
    for (int auth_try = 0;; ++auth_try) {
        auto token = FLOE_TRY(bearer());
        CURL* h = nullptr;
        {
            std::lock_guard g(_mu);
            if (!_idle.empty()) {
                h = static_cast<CURL*>(_idle.back());
                _idle.pop_back();
            }
        }
        if (!h) h = curl_easy_init();
        if (!h) return fail(errc::internal, "curl_easy_init failed");
        curl_easy_reset(h);
        header_list hl;
        hl.add("Accept: application/json");
        hl.add("X-Client-Version: floe");
        if (!body.empty()) hl.add("Content-Type: application/json");
        if (!token.empty()) hl.add("Authorization: Bearer " + token);
        if (vend) hl.add("X-Iceberg-Access-Delegation: vended-credentials");
        if (!if_none_match.empty()) hl.add("If-None-Match: " + if_none_match);
        for (auto& [k, v] : _opts.headers) hl.add(k + ": " + v);
        hl.add("Expect:");
        auto url = _opts.uri + path;
        if (_opts.sigv4_credentials) {
            // Signed per attempt with the provider's current keys (renewed sessions included).
            auto creds = FLOE_TRY_CTX(_opts.sigv4_credentials->get(), "REST catalog {} {}", method, url);
            auto now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
            for (auto& [k, v] : aws::sigv4_sign(method, url, body, creds, _opts.sigv4_region, _opts.sigv4_service, now))
                hl.add(k + ": " + v);
        }
        http_response resp;
        char errbuf[CURL_ERROR_SIZE] = {0};
        curl_easy_setopt(h, CURLOPT_URL, url.c_str());
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl.list);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(_opts.request_timeout.count()));
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(_opts.connect_timeout.count()));
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp.etag);
        if (method == "HEAD") {
            curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        } else if (method == "POST") {
            curl_easy_setopt(h, CURLOPT_POST, 1L);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        } else if (method != "GET") {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
        }
        auto rc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
        if (rc != CURLE_OK) {
            curl_easy_cleanup(h);  // its connection may be half-used
            return fail(errc::unavailable, "REST catalog {} {}: {}", method, url,
                        errbuf[0] ? errbuf : curl_easy_strerror(rc));
        }
        {
            std::lock_guard g(_mu);
            if (_idle.size() < 16) _idle.push_back(h);
            else curl_easy_cleanup(h);
        }
        if (resp.status == 401 && _oauth && auth_try == 0) {
            // Revoked or expired early: one new token, one more try.
            std::lock_guard g(_mu);
            _token.clear();
            continue;
        }
        return resp;
    }
}

result<rest_catalog::http_response> rest_catalog::send_idempotent(const std::string& method, const std::string& path,
                                                                  bool vend, const std::string& if_none_match) {
    for (int attempt = 1;; ++attempt) {
        auto r = send(method, path, "", vend, if_none_match);
        bool again = !r ? r.error().code() == errc::unavailable : retryable(r->status);
        if (!again || attempt >= _opts.max_attempts) return r;
        spdlog::debug("catalog: {} {}: {}; retrying", method, path, r ? describe(*r) : r.error().message());
        backoff(_opts, attempt);
    }
}

std::string rest_catalog::ns_path(const std::string& ns) const {
    return _prefix_path + "/namespaces/" + aws::uri_encode(ns, false);
}

std::string rest_catalog::table_path(const table_ident& t) const {
    return ns_path(t.ns) + "/tables/" + aws::uri_encode(t.name, false);
}

std::string rest_catalog::remember(const table_ident& t, const json& j, const std::string& etag, bool cache_metadata) {
    if (!j.is_object()) return {};
    std::string loc = j.contains("metadata-location") && j["metadata-location"].is_string()
                          ? j["metadata-location"].get<std::string>()
                          : std::string();
    auto md = j.find("metadata");
    if (!loc.empty() && md != j.end()) {
        bool vended = j.contains("storage-credentials")
                      || (j.contains("config") && j["config"].is_object() && j["config"].contains("s3.access-key-id"));
        {
            std::lock_guard g(_mu);
            _loaded[key(t)] = {loc, etag, vended};
        }
        // The commit that follows a load takes its base from the cache instead of reading the
        // file the server wrote (a location names one content: files are written once).
        auto& cache = metadata_cache::global();
        if (cache_metadata && !cache.holds(loc)) {
            if (auto m = parse_metadata_object(*md)) {
                auto e = std::make_unique<cached_metadata>();
                e->metadata_location = loc;
                e->metadata = std::move(*m);
                cache.put(std::move(e));
            }
        }
    }
    if (!_opts.on_vended_credentials) return loc;
    // storage-credentials first (the spec's order), then the table config.
    auto from = [&](const json& cfg) -> bool {
        if (!cfg.is_object()) return false;
        auto id = cfg.find("s3.access-key-id");
        auto secret = cfg.find("s3.secret-access-key");
        if (id == cfg.end() || secret == cfg.end() || !id->is_string() || !secret->is_string()) return false;
        aws::credentials c{id->get<std::string>(), secret->get<std::string>(), cfg.value("s3.session-token", std::string())};
        _opts.on_vended_credentials(c);
        return true;
    };
    if (auto sc = j.find("storage-credentials"); sc != j.end() && sc->is_array())
        for (auto& e : *sc)
            if (e.is_object() && from(e.value("config", json::object()))) return loc;
    if (auto cfg = j.find("config"); cfg != j.end()) from(*cfg);
    return loc;
}

result<bool> rest_catalog::namespace_exists(const std::string& ns) {
    auto r = FLOE_TRY(send_idempotent("HEAD", ns_path(ns)));
    if (r.status == 204 || r.status == 200) return true;
    if (r.status == 404) return false;
    return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog HEAD {}: {}",
                ns_path(ns), describe(r));
}

result<void> rest_catalog::create_namespace_if_missing(const std::string& ns) {
    if (FLOE_TRY(namespace_exists(ns))) return {};
    json body;
    body["namespace"] = json::array({ns});
    body["properties"] = json::object();
    auto path = _prefix_path + "/namespaces";
    auto r = FLOE_TRY(send("POST", path, body.dump()));
    if (r.status == 200 || r.status == 409) return {};  // 409: created concurrently
    return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog POST {}: {}", path,
                describe(r));
}

result<std::optional<std::string>> rest_catalog::load(const table_ident& t, bool conditional, json* body) {
    auto path = table_path(t);
    known_version known;
    if (conditional && _opts.conditional_loads) {
        std::lock_guard g(_mu);
        if (auto it = _loaded.find(key(t)); it != _loaded.end() && !it->second.vended) known = it->second;
    }
    auto r = FLOE_TRY(send_idempotent("GET", path, true, known.etag));
    if (r.status == 304 && !known.etag.empty()) return std::optional<std::string>(known.location);
    if (r.status == 404) {
        std::lock_guard g(_mu);
        _loaded.erase(key(t));
        return std::optional<std::string>();
    }
    if (r.status != 200)
        return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog GET {}: {}", path,
                    describe(r));
    auto j = json::parse(r.body, nullptr, false);
    auto loc = remember(t, j, r.etag);
    if (loc.empty()) return fail(errc::corrupt, "REST catalog GET {}: no metadata-location in the answer", path);
    if (body) *body = std::move(j);
    return std::optional<std::string>(std::move(loc));
}

result<std::optional<std::string>> rest_catalog::metadata_location(const table_ident& t) {
    return load(t, true, nullptr);
}

result<void> rest_catalog::create_table(const table_ident& t, const std::string&) {
    return fail(errc::unsupported, "table {}.{}: the REST catalog creates tables through commit_next", t.ns, t.name);
}

result<void> rest_catalog::swap(const table_ident& t, const std::string&, const std::string&) {
    return fail(errc::unsupported, "table {}.{}: the REST catalog commits through commit_next", t.ns, t.name);
}

result<std::vector<std::string>> rest_catalog::list_tables(const std::string& ns) {
    std::vector<std::string> out;
    std::string token;
    for (int page = 0; page < 100000; ++page) {
        auto path = ns_path(ns) + "/tables" + (token.empty() ? "" : "?pageToken=" + form_encode(token));
        auto r = FLOE_TRY(send_idempotent("GET", path));
        if (r.status == 404) return out;
        if (r.status != 200)
            return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog GET {}: {}",
                        path, describe(r));
        auto j = json::parse(r.body, nullptr, false);
        if (!j.is_object()) return fail(errc::corrupt, "REST catalog GET {}: not a JSON object", path);
        for (auto& id : j.value("identifiers", json::array()))
            if (id.is_object() && id.contains("name") && id["name"].is_string()) out.push_back(id["name"]);
        if (!j.contains("next-page-token") || !j["next-page-token"].is_string()) break;
        token = j["next-page-token"].get<std::string>();
    }
    std::sort(out.begin(), out.end());
    return out;
}

result<std::vector<std::string>> rest_catalog::list_namespaces() {
    std::vector<std::string> out;
    std::string token;
    for (int page = 0; page < 100000; ++page) {
        auto path = _prefix_path + "/namespaces" + (token.empty() ? "" : "?pageToken=" + form_encode(token));
        auto r = FLOE_TRY(send_idempotent("GET", path));
        if (r.status != 200)
            return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog GET {}: {}",
                        path, describe(r));
        auto j = json::parse(r.body, nullptr, false);
        if (!j.is_object()) return fail(errc::corrupt, "REST catalog GET {}: not a JSON object", path);
        for (auto& ns : j.value("namespaces", json::array())) {
            std::string name;
            for (auto& level : ns) {
                if (!level.is_string()) continue;
                if (!name.empty()) name.push_back('.');
                name.append(level.get_ref<const std::string&>());
            }
            out.push_back(std::move(name));
        }
        if (!j.contains("next-page-token") || !j["next-page-token"].is_string()) break;
        token = j["next-page-token"].get<std::string>();
    }
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

/// The snapshot ids of a metadata object.
std::set<int64_t> snapshot_ids(const json& m) {
    std::set<int64_t> out;
    for (auto& s : m.value("snapshots", json::array()))
        if (s.is_object() && s.contains("snapshot-id") && s["snapshot-id"].is_number_integer())
            out.insert(s["snapshot-id"].get<int64_t>());
    return out;
}

json ref_of(const json& m, const std::string& name) {
    if (m.contains("refs") && m["refs"].is_object() && m["refs"].contains(name)) return m["refs"][name];
    return nullptr;
}

/// requirements + updates that turn `base` into `next` (what table.cc changes: snapshots,
/// refs, properties; the rest must be equal).
result<json> commit_request(const json& base, const json& next) {
    json req;
    req["requirements"] = json::array();
    req["updates"] = json::array();
    req["requirements"].push_back({{"type", "assert-table-uuid"}, {"uuid", base.value("table-uuid", std::string())}});
    auto base_main = ref_of(base, "main");
    req["requirements"].push_back({{"type", "assert-ref-snapshot-id"},
                                   {"ref", "main"},
                                   {"snapshot-id", base_main.is_object() ? base_main["snapshot-id"] : json(nullptr)}});
    auto& ups = req["updates"];
    auto base_ids = snapshot_ids(base);
    auto next_ids = snapshot_ids(next);
    for (auto& s : next.value("snapshots", json::array()))
        if (!base_ids.count(s.value("snapshot-id", int64_t{0}))) ups.push_back({{"action", "add-snapshot"}, {"snapshot", s}});
    json removed = json::array();
    for (auto id : base_ids)
        if (!next_ids.count(id)) removed.push_back(id);
    // Refs: set the ones that changed, remove the ones gone (main last set, after its snapshot).
    json base_refs = base.value("refs", json::object()), next_refs = next.value("refs", json::object());
    for (auto& [name, ref] : next_refs.items()) {
        if (base_refs.contains(name) && base_refs[name] == ref) continue;
        json u = ref;
        u["action"] = "set-snapshot-ref";
        u["ref-name"] = name;
        ups.push_back(u);
    }
    for (auto& [name, ref] : base_refs.items())
        if (!next_refs.contains(name)) ups.push_back({{"action", "remove-snapshot-ref"}, {"ref-name", name}});
    if (!removed.empty()) ups.push_back({{"action", "remove-snapshots"}, {"snapshot-ids", removed}});
    json base_props = base.value("properties", json::object()), next_props = next.value("properties", json::object());
    json set = json::object(), gone = json::array();
    for (auto& [k, v] : next_props.items())
        if (!base_props.contains(k) || base_props[k] != v) set[k] = v;
    for (auto& [k, v] : base_props.items())
        if (!next_props.contains(k)) gone.push_back(k);
    if (!set.empty()) ups.push_back({{"action", "set-properties"}, {"updates", set}});
    if (!gone.empty()) ups.push_back({{"action", "remove-properties"}, {"removals", gone}});
    for (auto* field : {"location", "current-schema-id", "default-spec-id", "default-sort-order-id"})
        if (base.value(field, json()) != next.value(field, json()))
            return fail(errc::unsupported, "the REST catalog client does not commit changes of \"{}\"", field);
    return req;
}

} // namespace

result<std::string> rest_catalog::commit_next(const table_ident& t, const std::string& expected,
                                              const std::string& next_json) {
    auto next = json::parse(next_json, nullptr, false);
    if (!next.is_object()) return fail(errc::internal, "commit of {}.{}: the next metadata is not JSON", t.ns, t.name);
    if (expected.empty()) {
        // createTable with the schema, spec, order and properties of the first version.
        json body;
        body["name"] = t.name;
        body["location"] = next.value("location", std::string());
        int32_t sid = next.value("current-schema-id", 0), pid = next.value("default-spec-id", 0),
                oid = next.value("default-sort-order-id", 0);
        for (auto& s : next.value("schemas", json::array()))
            if (s.value("schema-id", -1) == sid) body["schema"] = s;
        for (auto& s : next.value("partition-specs", json::array()))
            if (s.value("spec-id", -1) == pid) body["partition-spec"] = s;
        for (auto& s : next.value("sort-orders", json::array()))
            if (s.value("order-id", -1) == oid) body["write-order"] = s;
        body["properties"] = next.value("properties", json::object());
        auto path = ns_path(t.ns) + "/tables";
        auto r = FLOE_TRY(send("POST", path, body.dump(), true));
        if (r.status == 409) return fail(errc::already_exists, "REST catalog POST {}: {}", path, describe(r));
        if (r.status != 200)
            return fail(retryable(r.status) ? errc::unavailable : errc::invalid_argument, "REST catalog POST {}: {}",
                        path, describe(r));
        return remember(t, json::parse(r.body, nullptr, false), r.etag);
    }
    // The base as the server gives it now (the JSON this generic path diffs against).
    json loaded;
    auto now = FLOE_TRY(load(t, false, &loaded));
    if (!now || *now != expected) return fail(errc::conflict, "{}.{} moved on from {}", t.ns, t.name, expected);
    if (!loaded.contains("metadata") || !loaded["metadata"].is_object())
        return fail(errc::corrupt, "{}.{}: the catalog's answer held no metadata", t.ns, t.name);
    const json& base = loaded["metadata"];
    auto req = FLOE_TRY_CTX(commit_request(base, next), "commit to {}.{}", t.ns, t.name);
    auto want_main = ref_of(next, "main");
    auto added = snapshot_ids(next);
    for (auto id : snapshot_ids(base)) added.erase(id);
    std::string landed_at;
    auto r = FLOE_TRY(post_commit(t, expected, req.dump(), [&](const json& cur) {
        auto ids = snapshot_ids(cur);
        return !added.empty() && std::all_of(added.begin(), added.end(), [&](int64_t id) { return ids.count(id) > 0; })
               && ref_of(cur, "main") == want_main;
    }, landed_at));
    if (!landed_at.empty()) return landed_at;
    auto j = json::parse(r.body, nullptr, false);
    auto loc = remember(t, j, r.etag);
    if (loc.empty()) return fail(errc::corrupt, "REST catalog commit to {}.{}: no metadata-location in the answer", t.ns, t.name);
    return loc;
}

result<rest_catalog::http_response> rest_catalog::post_commit(const table_ident& t, const std::string& expected,
                                                              const std::string& request,
                                                              const std::function<bool(const json&)>& landed,
                                                              std::string& landed_at) {
    auto path = table_path(t);
    auto r = send("POST", path, request);
    if (r && r->status == 200) return std::move(*r);
    if (r && r->status == 409) return fail(errc::conflict, "REST catalog POST {}: {}", path, describe(*r));
    if (r && !retryable(r->status) && r->status != 408)
        return fail(r->status == 404 ? errc::not_found : errc::invalid_argument, "REST catalog POST {}: {}", path,
                    describe(*r));
    // 5xx, 408 or no answer: the commit may have landed. Look before anything is retried.
    auto what = r ? describe(*r) : r.error().message();
    for (int attempt = 1; attempt <= _opts.max_attempts; ++attempt) {
        json cur;
        auto now = load(t, false, &cur);
        if (!now) {
            backoff(_opts, attempt);
            continue;
        }
        const json empty = json::object();
        const json& md = cur.is_object() && cur.contains("metadata") ? cur["metadata"] : empty;
        if (*now && **now != expected && landed(md)) {
            spdlog::info("catalog: commit to {}.{} answered {} but landed ({})", t.ns, t.name, what, **now);
            landed_at = **now;
            return http_response{};
        }
        // Not in the table now; a slow server may still apply it, so the outcome stays unknown:
        // the caller keeps the files and retries from a reload, where it looks for the snapshot
        // first (and the requirement on main refuses a second copy).
        return fail(errc::unavailable, "REST catalog POST {}: {}; the table does not hold this commit (yet)", path,
                    what);
    }
    return fail(errc::unavailable, "REST catalog POST {}: {}; outcome unknown (the table could not be reloaded)", path,
                what);
}

namespace {

json ref_json(const std::string& name, const snapshot_ref& ref) {
    json u{{"action", "set-snapshot-ref"}, {"ref-name", name}, {"snapshot-id", ref.snapshot_id}, {"type", ref.type}};
    if (ref.min_snapshots_to_keep) u["min-snapshots-to-keep"] = *ref.min_snapshots_to_keep;
    if (ref.max_snapshot_age_ms) u["max-snapshot-age-ms"] = *ref.max_snapshot_age_ms;
    if (ref.max_ref_age_ms) u["max-ref-age-ms"] = *ref.max_ref_age_ms;
    return u;
}

bool same_ref(const snapshot_ref& a, const snapshot_ref& b) {
    return a.snapshot_id == b.snapshot_id && a.type == b.type && a.min_snapshots_to_keep == b.min_snapshots_to_keep
           && a.max_snapshot_age_ms == b.max_snapshot_age_ms && a.max_ref_age_ms == b.max_ref_age_ms;
}

/// The CommitTableRequest that turns `base` into `next`, from the typed versions: only the
/// snapshots added (each serialised once), the refs and properties that changed, the ids of
/// the snapshots removed. The rest must be equal (table.cc changes nothing else).
result<std::string> change_request(const commit_base& base, const table_metadata& next, std::vector<int64_t>& added) {
    const auto& b = base.shape;
    if (b.location != next.location) return fail(errc::unsupported, "the REST catalog client does not commit changes of \"location\"");
    if (b.current_schema_id != next.current_schema_id || b.default_spec_id != next.default_spec_id
        || b.default_sort_order_id != next.default_sort_order_id)
        return fail(errc::unsupported, "the REST catalog client commits no schema, spec or sort order changes");
    json req;
    auto& reqs = req["requirements"] = json::array();
    reqs.push_back({{"type", "assert-table-uuid"}, {"uuid", b.table_uuid}});
    auto main = b.refs.find("main");
    reqs.push_back({{"type", "assert-ref-snapshot-id"},
                    {"ref", "main"},
                    {"snapshot-id", main != b.refs.end() ? json(main->second.snapshot_id) : json(nullptr)}});
    auto& ups = req["updates"] = json::array();
    std::vector<int64_t> next_ids;
    next_ids.reserve(next.snapshots.size());
    std::string snapshots_text;  // add-snapshot updates, spliced in as text (already JSON)
    for (auto& sn : next.snapshots) {
        next_ids.push_back(sn.snapshot_id);
        if (std::binary_search(base.snapshot_ids.begin(), base.snapshot_ids.end(), sn.snapshot_id)) continue;
        added.push_back(sn.snapshot_id);
        snapshots_text += R"({"action":"add-snapshot","snapshot":)";
        snapshots_text += to_json_text(sn);
        snapshots_text += "},";
    }
    std::sort(next_ids.begin(), next_ids.end());
    // Refs: set the ones that changed (after the snapshots they name), remove the ones gone.
    for (auto& [name, ref] : next.refs)
        if (auto it = b.refs.find(name); it == b.refs.end() || !same_ref(it->second, ref)) ups.push_back(ref_json(name, ref));
    for (auto& [name, ref] : b.refs)
        if (!next.refs.contains(name)) ups.push_back({{"action", "remove-snapshot-ref"}, {"ref-name", name}});
    json removed = json::array();
    for (auto id : base.snapshot_ids)
        if (!std::binary_search(next_ids.begin(), next_ids.end(), id)) removed.push_back(id);
    if (!removed.empty()) ups.push_back({{"action", "remove-snapshots"}, {"snapshot-ids", removed}});
    json set = json::object(), gone = json::array();
    for (auto& [k, v] : next.properties)
        if (auto it = b.properties.find(k); it == b.properties.end() || it->second != v) set[k] = v;
    for (auto& [k, v] : b.properties)
        if (!next.properties.contains(k)) gone.push_back(k);
    if (!set.empty()) ups.push_back({{"action", "set-properties"}, {"updates", set}});
    if (!gone.empty()) ups.push_back({{"action", "remove-properties"}, {"removals", gone}});
    auto text = req.dump();
    if (!snapshots_text.empty()) {
        // `"updates":[` then the add-snapshot updates first, so refs name snapshots already added.
        auto at = text.find(R"("updates":[)");
        if (at == std::string::npos) return fail(errc::internal, "commit request without updates");
        at += std::string_view(R"("updates":[)").size();
        if (text[at] == ']') snapshots_text.pop_back();  // no other update follows
        text.insert(at, snapshots_text);
    }
    return text;
}

} // namespace

std::optional<std::string> rest_catalog::same_as_answer(const std::string& body, table_metadata& next,
                                                        snapshot_json_cache& texts) const {
    // {"metadata-location":"<loc>","metadata":<metadata>,"config":{}}: Floe's server's answer.
    constexpr std::string_view head = R"({"metadata-location":")", mid = R"(","metadata":)", tail = R"(,"config":{}})";
    if (!body.starts_with(head) || !body.ends_with(tail)) return std::nullopt;
    auto loc_end = body.find('"', head.size());
    if (loc_end == std::string::npos) return std::nullopt;
    std::string loc = body.substr(head.size(), loc_end - head.size());
    if (loc.empty() || loc.find('\\') != std::string::npos) return std::nullopt;  // escapes: parse instead
    if (body.compare(loc_end, mid.size(), mid) != 0) return std::nullopt;
    const size_t md_start = loc_end + mid.size(), md_end = body.size() - tail.size();
    constexpr std::string_view updated = R"("last-updated-ms":)";
    auto at = body.find(updated, md_start);
    if (at == std::string::npos || at >= md_end) return std::nullopt;
    int64_t ms = 0;
    auto digits = body.data() + at + updated.size();
    auto [p, ec] = std::from_chars(digits, body.data() + md_end, ms);
    if (ec != std::errc() || p == digits) return std::nullopt;
    const int64_t ours = next.last_updated_ms;
    next.last_updated_ms = ms;
    thread_local std::string text;
    to_json_text(next, texts, text);
    if (text.size() == md_end - md_start && body.compare(md_start, text.size(), text) == 0) return loc;
    next.last_updated_ms = ours;
    return std::nullopt;
}

result<server_commit> rest_catalog::commit_change(const table_ident& t, const std::string& expected,
                                                  const commit_base& base, table_metadata& next,
                                                  snapshot_json_cache& texts) {
    if (expected.empty()) return catalog::commit_change(t, expected, base, next, texts);
    std::vector<int64_t> added;
    auto request = FLOE_TRY_CTX(change_request(base, next, added), "commit to {}.{}", t.ns, t.name);
    std::optional<int64_t> want_main;
    if (auto it = next.refs.find("main"); it != next.refs.end()) want_main = it->second.snapshot_id;
    std::string landed_at;
    auto r = FLOE_TRY(post_commit(t, expected, request, [&](const json& cur) {
        auto ids = snapshot_ids(cur);
        auto main = ref_of(cur, "main");
        std::optional<int64_t> cur_main;
        if (main.is_object() && main.contains("snapshot-id") && main["snapshot-id"].is_number_integer())
            cur_main = main["snapshot-id"].get<int64_t>();
        return !added.empty() && std::all_of(added.begin(), added.end(), [&](int64_t id) { return ids.count(id) > 0; })
               && cur_main == want_main;
    }, landed_at));
    if (!landed_at.empty()) return server_commit{landed_at, false};
    // The answer is this client's next version (with the server's clock) when it is Floe's
    // server and nobody else changed the table meanwhile: no parse. Else the answer is parsed.
    if (auto loc = same_as_answer(r.body, next, texts)) {
        std::lock_guard g(_mu);
        _loaded[key(t)] = {*loc, r.etag, false};
        return server_commit{std::move(*loc), true};
    }
    auto j = json::parse(r.body, nullptr, false);
    auto loc = remember(t, j, r.etag, /*cache_metadata=*/false);
    if (loc.empty())
        return fail(errc::corrupt, "REST catalog commit to {}.{}: no metadata-location in the answer", t.ns, t.name);
    if (auto md = j.find("metadata"); md != j.end())
        if (auto m = parse_metadata_object(*md)) {
            next = std::move(*m);
            texts.texts.clear();
            return server_commit{std::move(loc), true};
        }
    return server_commit{std::move(loc), false};
}

result<std::unique_ptr<catalog>> open_rest_catalog(rest_catalog_options opts) {
    auto c = FLOE_TRY(rest_catalog::open(std::move(opts)));
    return std::unique_ptr<catalog>(std::move(c));
}

} // namespace floe::iceberg
