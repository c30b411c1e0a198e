#include "base/authorization_log.h"

#include "base/metrics.h"

#include <spdlog/spdlog.h>

namespace floe {

namespace {
metrics::family<metrics::counter>& denied_total() {
    static auto& c = metrics::registry::instance().counter_family(
        "floe_authorization_denied_total",
        "Requests (or parts of requests) refused by the ACLs, by source (kafka, http), resource type and operation.",
        {"source", "resource_type", "operation"});
    return c;
}
/// A name a client chose (topic, path, principal), made safe for one log line: control bytes
/// as \xNN, at most 200 bytes.
std::string printable(std::string_view s) {
    std::string out;
    for (unsigned char c : s.substr(0, 200)) {
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += char(c);
    }
    if (s.size() > 200) out += "...";
    return out;
}
} // namespace

log_rate_limit& denial_log_limit() {
    static log_rate_limit limit;
    return limit;
}

void report_denied(const denied_access& d) {
    denied_total().with({std::string(d.source), std::string(d.resource_type), std::string(d.operation)}).inc();
    auto v = denial_log_limit().admit();
    if (!v.log) return;
    std::string held =
        v.suppressed ? fmt::format(" [{} more denials not logged before this one; see floe_authorization_denied_total]",
                                   v.suppressed)
                     : std::string();
    spdlog::info("authorization denied: {} from {} may not {} {} '{}' ({}{}{}){}", printable(d.principal), printable(d.host),
                 d.operation, d.resource_type, printable(d.resource_name), d.source, d.detail.empty() ? "" : ": ",
                 printable(d.detail), held);
}

} // namespace floe
