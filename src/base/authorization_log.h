#pragma once

#include "base/rate_limit.h"

#include <string_view>

namespace floe {

/// One refused authorization, as the Kafka APIs and the HTTP plane (/v1, /iceberg) report it.
struct denied_access {
    std::string_view source;        ///< "kafka" or "http"
    std::string_view principal;     ///< "User:bob"
    std::string_view host;          ///< the client address
    std::string_view operation;     ///< Kafka's name: "READ", "ALTER", ...
    std::string_view resource_type; ///< "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID"
    std::string_view resource_name; ///< "orders", "kafka-cluster"
    std::string_view detail = {};   ///< what was asked, when known ("POST /iceberg/v1/...")
};

/// Counts `d` in floe_authorization_denied_total{source,resource_type,operation} (every one)
/// and logs it at info level, as Kafka's authorizer log does: "authorization denied: User:bob
/// from 127.0.0.1 may not READ TOPIC 'orders' (kafka)". The log is rate-limited process-wide
/// (`limit`, default at most 10 lines a second): denials beyond it are only counted, and the
/// next line written says how many were left out. Thread-safe.
void report_denied(const denied_access& d);
/// The limiter report_denied uses (tests set their own window through it).
log_rate_limit& denial_log_limit();

} // namespace floe
