#include "http/access.h"

#include "base/authorization_log.h"

#include <fmt/format.h>

namespace floe::http {

std::string_view to_string(acl_op op) noexcept {
    switch (op) {
    case acl_op::describe: return "DESCRIBE";
    case acl_op::read: return "READ";
    case acl_op::write: return "WRITE";
    case acl_op::create: return "CREATE";
    case acl_op::alter: return "ALTER";
    }
    return "UNKNOWN";
}

std::string_view to_string(acl_type t) noexcept {
    switch (t) {
    case acl_type::topic: return "TOPIC";
    case acl_type::cluster: return "CLUSTER";
    case acl_type::group: return "GROUP";
    }
    return "UNKNOWN";
}

bool access_control::allows(const request& r, acl_op op, acl_type type, std::string_view name, bool quiet) const {
    if (!_check) return true;
    if (_check(r.principal, r.client_host, op, type, name)) return true;
    if (!quiet) {
        auto what = fmt::format("{} {}", r.method, r.path);
        report_denied({.source = "http",
                       .principal = r.principal,
                       .host = r.client_host,
                       .operation = to_string(op),
                       .resource_type = to_string(type),
                       .resource_name = name,
                       .detail = what});
    }
    return false;
}

} // namespace floe::http
