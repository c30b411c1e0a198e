#pragma once

// Authorization of the HTTP plane: /v1 and /iceberg ask the Kafka ACLs (the check is set by
// `floe serve`; the http module does not depend on kafka) and report every refusal through
// base/authorization_log.h (logged rate-limited, counted with source="http").

#include "http/server.h"

#include <functional>
#include <string>
#include <string_view>

namespace floe::http {

/// Kafka's operations and resource types that the HTTP plane asks about (a subset).
enum class acl_op { describe, read, write, create, alter };
enum class acl_type { topic, cluster, group };
std::string_view to_string(acl_op op) noexcept;   ///< "DESCRIBE", ...
std::string_view to_string(acl_type t) noexcept;  ///< "TOPIC", "CLUSTER", "GROUP"

/// Whether `principal` from `host` may do `op` on the resource: the Kafka authorizer's answer.
using acl_check = std::function<bool(const std::string& principal, const std::string& host, acl_op op, acl_type type,
                                     std::string_view name)>;

/// The one place HTTP routes ask: unset (no authorizer), everything is allowed. Thread-safe
/// when the check is.
class access_control {
public:
    access_control() = default;
    explicit access_control(acl_check check) : _check(std::move(check)) {}
    bool enabled() const noexcept { return static_cast<bool>(_check); }
    /// Asks the check for `r`'s principal and client address. A refusal is reported
    /// (report_denied: logged rate-limited and counted) unless `quiet` — for checks that only
    /// filter what a listing shows, as Kafka's Metadata leaves topics out without logging.
    bool allows(const request& r, acl_op op, acl_type type, std::string_view name, bool quiet = false) const;
    /// The cluster resource's name ("kafka-cluster").
    static constexpr std::string_view cluster_name = "kafka-cluster";

private:
    acl_check _check;
};

} // namespace floe::http
