#pragma once

// Kafka's ACL model (principal, resource type + pattern, operation, permission, host), the
// durable ACL store and the authorizer every Kafka API asks.

#include "base/result.h"

#include <chrono>
#include <compare>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace floe::kafka {

/// Values are Kafka's wire numbers (org.apache.kafka.common.resource.ResourceType).
enum class acl_resource : int8_t {
    unknown = 0,
    any = 1,
    topic = 2,
    group = 3,
    cluster = 4,
    transactional_id = 5,
    delegation_token = 6,
    user = 7,
};
/// PatternType: MATCH and ANY are for filters only.
enum class acl_pattern : int8_t { unknown = 0, any = 1, match = 2, literal = 3, prefixed = 4 };
/// AclOperation; ANY is for filters only.
enum class acl_operation : int8_t {
    unknown = 0,
    any = 1,
    all = 2,
    read = 3,
    write = 4,
    create = 5,
    remove = 6, ///< DELETE
    alter = 7,
    describe = 8,
    cluster_action = 9,
    describe_configs = 10,
    alter_configs = 11,
    idempotent_write = 12,
    create_tokens = 13,
    describe_tokens = 14,
};
/// AclPermissionType; ANY is for filters only.
enum class acl_permission : int8_t { unknown = 0, any = 1, deny = 2, allow = 3 };

/// The name of the one cluster resource.
inline constexpr std::string_view k_cluster_resource_name = "kafka-cluster";

std::string_view to_string(acl_resource v) noexcept;
std::string_view to_string(acl_pattern v) noexcept;
std::string_view to_string(acl_operation v) noexcept;
std::string_view to_string(acl_permission v) noexcept;
/// Kafka's names, case-insensitive ("TOPIC", "prefixed", "DESCRIBE_CONFIGS", "Allow"); nullopt
/// when unknown.
std::optional<acl_resource> parse_acl_resource(std::string_view s) noexcept;
std::optional<acl_pattern> parse_acl_pattern(std::string_view s) noexcept;
std::optional<acl_operation> parse_acl_operation(std::string_view s) noexcept;
std::optional<acl_permission> parse_acl_permission(std::string_view s) noexcept;

/// One ACL: `principal` ("User:alice", "User:*") from `host` ("*" or an address) is allowed or
/// denied `operation` on the resources `resource_name` names under `pattern` (literal: that
/// name, "*" every name; prefixed: every name starting with it).
struct acl_binding {
    acl_resource resource_type = acl_resource::topic;
    std::string resource_name;
    acl_pattern pattern = acl_pattern::literal;
    std::string principal;
    std::string host = "*";
    acl_operation operation = acl_operation::all;
    acl_permission permission = acl_permission::allow;
    auto operator<=>(const acl_binding&) const = default;
};
/// Why `b` cannot be stored (CreateAcls' INVALID_REQUEST), or nothing.
result<void> validate_acl(const acl_binding& b);
/// "User:alice has ALLOW permission for operations: WRITE from hosts: * on TOPIC:LITERAL:orders".
std::string describe_acl(const acl_binding& b);

/// DescribeAcls / DeleteAcls filter: unset fields and ANY match everything; pattern MATCH
/// matches the bindings that would apply to a resource of that exact name (literal equal,
/// literal "*", prefixed with a prefix of it).
struct acl_filter {
    acl_resource resource_type = acl_resource::any;
    std::optional<std::string> resource_name;
    acl_pattern pattern = acl_pattern::any;
    std::optional<std::string> principal;
    std::optional<std::string> host;
    acl_operation operation = acl_operation::any;
    acl_permission permission = acl_permission::any;
    bool matches(const acl_binding& b) const;
};
/// Why `f` is not a usable filter (a field UNKNOWN), or nothing.
result<void> validate_acl_filter(const acl_filter& f);

/// The ACLs, in `<dir>/acls.json` (mode 0600, directory 0700, next to users.json). Shared by
/// the broker and `floe acls`, whether or not a server runs: a change takes the exclusive lock
/// `<dir>/acls.lock`, re-reads the file, applies itself and replaces the file atomically
/// (write, fsync, rename). Readers take `snapshot()`, which re-reads the file when its identity
/// changed (checked at most every `recheck`), so a running broker sees `floe acls` changes
/// within that time and its own CreateAcls/DeleteAcls at once. Thread-safe.
class acl_store {
public:
    using acl_set = std::set<acl_binding>;
    explicit acl_store(std::filesystem::path dir,
                       std::chrono::milliseconds recheck = std::chrono::milliseconds(100));

    /// The current ACLs (the last good ones when the file became unreadable: logged).
    std::shared_ptr<const acl_set> snapshot();
    /// Every ACL, read now. Errors: the file cannot be read or parsed.
    result<acl_set> list();
    /// Applies `fn` to the set under the lock and writes it; nothing is written when it fails.
    result<void> update(const std::function<result<void>(acl_set&)>& fn);

    const std::filesystem::path& path() const noexcept { return _file; }

private:
    result<void> refresh_locked(bool force);
    std::filesystem::path _dir, _file;
    std::chrono::milliseconds _recheck;
    std::mutex _mu;
    std::shared_ptr<const acl_set> _acls;
    std::string _seen; ///< identity (inode, size, mtime) of the file last read; empty: never
    std::chrono::steady_clock::time_point _checked{};
};

/// Parses and serialises acls.json (exposed for tests).
result<acl_store::acl_set> parse_acls_json(std::string_view text);
std::string acls_json(const acl_store::acl_set& acls);

/// Parses floe.security.super-users ("User:admin;User:ops"): each entry "Type:name".
result<std::vector<std::string>> parse_super_users(std::string_view text);

/// Decides every Kafka API's authorization as Kafka's authorizer does: super users may do
/// anything; a DENY binding matching the principal (or User:*), the host (or *) and the
/// operation (or ALL) wins; otherwise an ALLOW binding must match, where READ, WRITE, DELETE
/// and ALTER imply DESCRIBE and ALTER_CONFIGS implies DESCRIBE_CONFIGS. With `strict` (some
/// listener authenticates) no matching ACL means no access; without it a resource no ACL names
/// at all is open to everyone (Kafka's allow.everyone.if.no.acl.found), so a broker with only
/// PLAINTEXT listeners behaves as before ACLs existed. Thread-safe; the store must outlive it.
class authorizer {
public:
    authorizer(acl_store& store, std::vector<std::string> super_users, bool strict);

    /// `host`: the client address, with or without Java's leading '/'.
    bool allowed(std::string_view principal, std::string_view host, acl_operation op, acl_resource type,
                 std::string_view name) const;
    /// Whether `op` is allowed on at least one resource of `type` (Kafka's authorizeByResourceType):
    /// an ALLOW binding of the principal for it, unless a DENY of the principal covers every name.
    bool allowed_on_some(std::string_view principal, std::string_view host, acl_operation op,
                         acl_resource type) const;
    /// Kafka's authorized-operations bit field (bit = operation number) over the operations
    /// that apply to `type`.
    int32_t authorized_operations(std::string_view principal, std::string_view host, acl_resource type,
                                  std::string_view name) const;
    bool is_super_user(std::string_view principal) const;
    bool strict() const noexcept { return _strict; }
    acl_store& store() noexcept { return _store; }

private:
    bool allowed_in(const acl_store::acl_set& acls, std::string_view principal, std::string_view host,
                    acl_operation op, acl_resource type, std::string_view name) const;
    acl_store& _store;
    std::vector<std::string> _super_users;
    bool _strict;
};

} // namespace floe::kafka
