#include "kafka/acl.h"

#include "base/file_lock.h"
#include "log/fs_util.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace floe::kafka {

namespace {

template<typename E, size_t N>
std::optional<E> parse_name(std::string_view s, const std::array<std::pair<E, std::string_view>, N>& names) {
    for (auto& [v, n] : names)
        if (n.size() == s.size() &&
            std::equal(n.begin(), n.end(), s.begin(), [](char a, char b) { return a == std::toupper(uint8_t(b)); }))
            return v;
    return std::nullopt;
}
template<typename E, size_t N>
std::string_view name_of(E v, const std::array<std::pair<E, std::string_view>, N>& names) {
    for (auto& [e, n] : names)
        if (e == v) return n;
    return "UNKNOWN";
}

constexpr std::array<std::pair<acl_resource, std::string_view>, 8> k_resources{{
    {acl_resource::unknown, "UNKNOWN"},
    {acl_resource::any, "ANY"},
    {acl_resource::topic, "TOPIC"},
    {acl_resource::group, "GROUP"},
    {acl_resource::cluster, "CLUSTER"},
    {acl_resource::transactional_id, "TRANSACTIONAL_ID"},
    {acl_resource::delegation_token, "DELEGATION_TOKEN"},
    {acl_resource::user, "USER"},
}};
constexpr std::array<std::pair<acl_pattern, std::string_view>, 5> k_patterns{{
    {acl_pattern::unknown, "UNKNOWN"},
    {acl_pattern::any, "ANY"},
    {acl_pattern::match, "MATCH"},
    {acl_pattern::literal, "LITERAL"},
    {acl_pattern::prefixed, "PREFIXED"},
}};
constexpr std::array<std::pair<acl_operation, std::string_view>, 15> k_operations{{
    {acl_operation::unknown, "UNKNOWN"},
    {acl_operation::any, "ANY"},
    {acl_operation::all, "ALL"},
    {acl_operation::read, "READ"},
    {acl_operation::write, "WRITE"},
    {acl_operation::create, "CREATE"},
    {acl_operation::remove, "DELETE"},
    {acl_operation::alter, "ALTER"},
    {acl_operation::describe, "DESCRIBE"},
    {acl_operation::cluster_action, "CLUSTER_ACTION"},
    {acl_operation::describe_configs, "DESCRIBE_CONFIGS"},
    {acl_operation::alter_configs, "ALTER_CONFIGS"},
    {acl_operation::idempotent_write, "IDEMPOTENT_WRITE"},
    {acl_operation::create_tokens, "CREATE_TOKENS"},
    {acl_operation::describe_tokens, "DESCRIBE_TOKENS"},
}};
constexpr std::array<std::pair<acl_permission, std::string_view>, 4> k_permissions{{
    {acl_permission::unknown, "UNKNOWN"},
    {acl_permission::any, "ANY"},
    {acl_permission::deny, "DENY"},
    {acl_permission::allow, "ALLOW"},
}};

/// The operations that apply to each resource type (Kafka's authorized-operations sets).
std::span<const acl_operation> operations_of(acl_resource t) {
    using o = acl_operation;
    static constexpr o topic[] = {o::read, o::write, o::create, o::remove, o::alter, o::describe,
                                  o::describe_configs, o::alter_configs};
    static constexpr o group[] = {o::read, o::remove, o::describe};
    static constexpr o cluster[] = {o::create, o::alter, o::describe, o::cluster_action, o::describe_configs,
                                    o::alter_configs, o::idempotent_write};
    static constexpr o txn[] = {o::write, o::describe};
    switch (t) {
    case acl_resource::topic: return topic;
    case acl_resource::group: return group;
    case acl_resource::cluster: return cluster;
    case acl_resource::transactional_id: return txn;
    default: return {};
    }
}

bool valid_principal(std::string_view p) {
    auto colon = p.find(':');
    return colon != std::string_view::npos && colon > 0 && colon + 1 < p.size();
}

std::string_view bare_host(std::string_view h) {
    if (!h.empty() && h.front() == '/') h.remove_prefix(1);
    return h;
}

/// Whether binding `b` applies to the resource (type, name).
bool applies_to(const acl_binding& b, acl_resource type, std::string_view name) {
    if (b.resource_type != type) return false;
    if (b.pattern == acl_pattern::literal) return b.resource_name == "*" || b.resource_name == name;
    if (b.pattern == acl_pattern::prefixed) return name.starts_with(b.resource_name);
    return false;
}

/// Whether an ALLOW of `granted` permits `wanted` (Kafka's implied operations).
bool implies(acl_operation granted, acl_operation wanted) {
    using o = acl_operation;
    if (granted == o::all || granted == wanted) return true;
    if (wanted == o::describe)
        return granted == o::read || granted == o::write || granted == o::remove || granted == o::alter;
    if (wanted == o::describe_configs) return granted == o::alter_configs;
    return false;
}

/// Takes the store's lock, waiting up to 10 s for another writer (floe acls, the broker).
result<file_lock> lock_store(const std::filesystem::path& file) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        auto l = file_lock::acquire(file, "acls.json writer");
        if (l || l.error().code() != errc::unavailable || std::chrono::steady_clock::now() > deadline) return l;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace

std::string_view to_string(acl_resource v) noexcept { return name_of(v, k_resources); }
std::string_view to_string(acl_pattern v) noexcept { return name_of(v, k_patterns); }
std::string_view to_string(acl_operation v) noexcept { return name_of(v, k_operations); }
std::string_view to_string(acl_permission v) noexcept { return name_of(v, k_permissions); }
std::optional<acl_resource> parse_acl_resource(std::string_view s) noexcept { return parse_name(s, k_resources); }
std::optional<acl_pattern> parse_acl_pattern(std::string_view s) noexcept { return parse_name(s, k_patterns); }
std::optional<acl_operation> parse_acl_operation(std::string_view s) noexcept { return parse_name(s, k_operations); }
std::optional<acl_permission> parse_acl_permission(std::string_view s) noexcept {
    return parse_name(s, k_permissions);
}

result<void> validate_acl(const acl_binding& b) {
    switch (b.resource_type) {
    case acl_resource::topic:
    case acl_resource::group:
    case acl_resource::cluster:
    case acl_resource::transactional_id:
    case acl_resource::delegation_token:
    case acl_resource::user: break;
    default: return fail(errc::invalid_argument, "resource type {} cannot be used in an ACL", int(b.resource_type));
    }
    if (b.pattern != acl_pattern::literal && b.pattern != acl_pattern::prefixed)
        return fail(errc::invalid_argument, "pattern type must be LITERAL or PREFIXED");
    if (b.resource_name.empty()) return fail(errc::invalid_argument, "resource name must not be empty");
    if (b.resource_type == acl_resource::cluster &&
        (b.resource_name != k_cluster_resource_name || b.pattern != acl_pattern::literal))
        return fail(errc::invalid_argument, "the cluster resource is LITERAL '{}'", k_cluster_resource_name);
    if (!valid_principal(b.principal))
        return fail(errc::invalid_argument, "principal '{}' is not Type:name (e.g. User:alice)", b.principal);
    if (b.host.empty()) return fail(errc::invalid_argument, "host must not be empty ('*' for any)");
    if (b.operation == acl_operation::unknown || b.operation == acl_operation::any)
        return fail(errc::invalid_argument, "operation must be a concrete operation");
    if (b.permission != acl_permission::allow && b.permission != acl_permission::deny)
        return fail(errc::invalid_argument, "permission must be ALLOW or DENY");
    return {};
}

std::string describe_acl(const acl_binding& b) {
    return fmt::format("{} has {} permission for operations: {} from hosts: {} on {}:{}:{}", b.principal,
                       to_string(b.permission), to_string(b.operation), b.host, to_string(b.resource_type),
                       to_string(b.pattern), b.resource_name);
}

bool acl_filter::matches(const acl_binding& b) const {
    if (resource_type != acl_resource::any && resource_type != b.resource_type) return false;
    if (operation != acl_operation::any && operation != b.operation) return false;
    if (permission != acl_permission::any && permission != b.permission) return false;
    if (principal && *principal != b.principal) return false;
    if (host && *host != b.host) return false;
    switch (pattern) {
    case acl_pattern::any: return !resource_name || *resource_name == b.resource_name;
    case acl_pattern::match:
        if (!resource_name) return true;
        if (b.pattern == acl_pattern::literal) return b.resource_name == *resource_name || b.resource_name == "*";
        return b.pattern == acl_pattern::prefixed && std::string_view(*resource_name).starts_with(b.resource_name);
    default: return b.pattern == pattern && (!resource_name || *resource_name == b.resource_name);
    }
}

result<void> validate_acl_filter(const acl_filter& f) {
    if (f.resource_type == acl_resource::unknown) return fail(errc::invalid_argument, "resource type UNKNOWN");
    if (f.pattern == acl_pattern::unknown) return fail(errc::invalid_argument, "pattern type UNKNOWN");
    if (f.operation == acl_operation::unknown) return fail(errc::invalid_argument, "operation UNKNOWN");
    if (f.permission == acl_permission::unknown) return fail(errc::invalid_argument, "permission UNKNOWN");
    return {};
}

// ---------------- acls.json ----------------

result<acl_store::acl_set> parse_acls_json(std::string_view text) {
    acl_store::acl_set out;
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return fail(errc::corrupt, "not a JSON object");
    auto acls = j.find("acls");
    if (acls == j.end() || !acls->is_array()) return fail(errc::corrupt, "no \"acls\" array");
    size_t i = 0;
    for (auto& a : *acls) {
        auto field = [&](const char* k) -> std::optional<std::string> {
            auto it = a.find(k);
            if (!a.is_object() || it == a.end() || !it->is_string()) return std::nullopt;
            return it->get<std::string>();
        };
        auto rt = field("resource_type"), name = field("resource_name"), pt = field("pattern_type"),
             pr = field("principal"), host = field("host"), op = field("operation"), perm = field("permission");
        if (!rt || !name || !pt || !pr || !host || !op || !perm)
            return fail(errc::corrupt,
                        "acl #{}: needs resource_type, resource_name, pattern_type, principal, host, operation, "
                        "permission (strings)",
                        i);
        acl_binding b;
        auto r = parse_acl_resource(*rt);
        auto p = parse_acl_pattern(*pt);
        auto o = parse_acl_operation(*op);
        auto m = parse_acl_permission(*perm);
        if (!r || !p || !o || !m) return fail(errc::corrupt, "acl #{}: unknown name", i);
        b = {*r, std::move(*name), *p, std::move(*pr), std::move(*host), *o, *m};
        if (auto v = validate_acl(b); !v) return fail(errc::corrupt, "acl #{}: {}", i, v.error().message());
        out.insert(std::move(b));
        ++i;
    }
    return out;
}

std::string acls_json(const acl_store::acl_set& acls) {
    nlohmann::json j;
    j["version"] = 1;
    j["acls"] = nlohmann::json::array();
    for (auto& b : acls)
        j["acls"].push_back({{"resource_type", to_string(b.resource_type)},
                             {"resource_name", b.resource_name},
                             {"pattern_type", to_string(b.pattern)},
                             {"principal", b.principal},
                             {"host", b.host},
                             {"operation", to_string(b.operation)},
                             {"permission", to_string(b.permission)}});
    return j.dump(2) + "\n";
}

acl_store::acl_store(std::filesystem::path dir, std::chrono::milliseconds recheck)
    : _dir(std::move(dir)), _file(_dir / "acls.json"), _recheck(recheck), _acls(std::make_shared<acl_set>()) {}

result<void> acl_store::refresh_locked(bool force) {
    auto now = std::chrono::steady_clock::now();
    if (!force && !_seen.empty() && now - _checked < _recheck) return {};
    _checked = now;
    struct stat st {};
    if (::stat(_file.c_str(), &st) != 0) {
        if (errno != ENOENT) return fail(errc::io_error, "stat {}: {}", _file.string(), std::strerror(errno));
        if (_seen != "none") _acls = std::make_shared<acl_set>(); // no file: no ACLs
        _seen = "none";
        return {};
    }
    auto id = fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (id == _seen) return {};
    auto bytes = FLOE_TRY(log::read_file(_file));
    auto acls = parse_acls_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!acls) return fail(std::move(acls).error().with_context("reading {}", _file.string()));
    _acls = std::make_shared<acl_set>(std::move(*acls));
    _seen = std::move(id);
    return {};
}

std::shared_ptr<const acl_store::acl_set> acl_store::snapshot() {
    std::lock_guard lk(_mu);
    if (auto r = refresh_locked(false); !r) {
        _seen = "unreadable"; // try again at the next recheck
        spdlog::error("ACL store: {}; keeping the ACLs read before", r.error());
    }
    return _acls;
}

result<acl_store::acl_set> acl_store::list() {
    std::lock_guard lk(_mu);
    FLOE_TRY(refresh_locked(true));
    return *_acls;
}

result<void> acl_store::update(const std::function<result<void>(acl_set&)>& fn) {
    std::error_code ec;
    std::filesystem::create_directories(_dir, ec);
    if (ec) return fail(errc::io_error, "creating {}: {}", _dir.string(), ec.message());
    std::filesystem::permissions(_dir, std::filesystem::perms::owner_all, ec);
    auto lock = FLOE_TRY(lock_store(_dir / "acls.lock"));
    std::lock_guard lk(_mu);
    FLOE_TRY(refresh_locked(true)); // always re-read under the lock: another process may have written
    acl_set next = *_acls;
    FLOE_TRY(fn(next));
    auto text = acls_json(next);
    FLOE_TRY(log::write_file_atomic(_file, as_bytes(text)));
    ::chmod(_file.c_str(), 0600);
    _acls = std::make_shared<acl_set>(std::move(next));
    _seen.clear(); // re-stat at the next snapshot (the rename gave the file a new identity)
    return {};
}

result<std::vector<std::string>> parse_super_users(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto semi = text.find(';');
        auto item = text.substr(0, semi);
        text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) continue;
        if (!valid_principal(item))
            return fail(errc::invalid_argument, "'{}' is not Type:name (e.g. User:admin)", item);
        out.emplace_back(item);
    }
    return out;
}

// ---------------- authorizer ----------------

authorizer::authorizer(acl_store& store, std::vector<std::string> super_users, bool strict)
    : _store(store), _super_users(std::move(super_users)), _strict(strict) {}

bool authorizer::is_super_user(std::string_view principal) const {
    return std::ranges::find(_super_users, principal) != _super_users.end();
}

bool authorizer::allowed_in(const acl_store::acl_set& acls, std::string_view principal, std::string_view host,
                            acl_operation op, acl_resource type, std::string_view name) const {
    host = bare_host(host);
    bool any_for_resource = false, allow = false;
    for (auto& b : acls) {
        if (!applies_to(b, type, name)) continue;
        any_for_resource = true;
        if (b.principal != principal && b.principal != "User:*") continue;
        if (b.host != "*" && b.host != host) continue;
        if (b.permission == acl_permission::deny) {
            if (b.operation == op || b.operation == acl_operation::all) return false; // deny wins
        } else if (implies(b.operation, op)) {
            allow = true;
        }
    }
    return allow || (!_strict && !any_for_resource);
}

bool authorizer::allowed(std::string_view principal, std::string_view host, acl_operation op, acl_resource type,
                         std::string_view name) const {
    if (is_super_user(principal)) return true;
    auto acls = _store.snapshot();
    return allowed_in(*acls, principal, host, op, type, name);
}

bool authorizer::allowed_on_some(std::string_view principal, std::string_view host, acl_operation op,
                                 acl_resource type) const {
    if (is_super_user(principal)) return true;
    auto acls = _store.snapshot();
    host = bare_host(host);
    bool any_of_type = false, allow = false;
    for (auto& b : *acls) {
        if (b.resource_type != type) continue;
        any_of_type = true;
        if (b.principal != principal && b.principal != "User:*") continue;
        if (b.host != "*" && b.host != host) continue;
        if (b.permission == acl_permission::deny) {
            bool every_name = (b.pattern == acl_pattern::literal && b.resource_name == "*") ||
                              (b.pattern == acl_pattern::prefixed && b.resource_name.empty());
            if (every_name && (b.operation == op || b.operation == acl_operation::all)) return false;
        } else if (implies(b.operation, op)) {
            allow = true;
        }
    }
    return allow || (!_strict && !any_of_type);
}

int32_t authorizer::authorized_operations(std::string_view principal, std::string_view host, acl_resource type,
                                          std::string_view name) const {
    bool super = is_super_user(principal);
    auto acls = _store.snapshot();
    int32_t bits = 0;
    for (auto op : operations_of(type))
        if (super || allowed_in(*acls, principal, host, op, type, name)) bits |= int32_t(1) << int(op);
    return bits;
}

} // namespace floe::kafka
