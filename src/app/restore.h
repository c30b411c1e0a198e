#pragma once

#include "config/settings.h"

#include <cstdint>
#include <optional>
#include <string>

namespace floe::app {

/// `floe restore`: what to replay and where (the backup half of issue 32).
struct restore_request {
    std::string table;                       ///< a topic, or <namespace>.<table>
    std::optional<int64_t> from_offset;      ///< first offset replayed (inclusive)
    std::optional<int64_t> to_offset;        ///< last offset replayed (inclusive)
    std::optional<std::string> from_ts;      ///< first message_ts replayed (inclusive): epoch ms or ISO-8601 UTC
    std::optional<std::string> to_ts;        ///< last message_ts replayed (inclusive)
    std::string to;                          ///< nats://host:port or kafka://host:port[,host:port]
    std::string stream;                      ///< JetStream target stream (with nats://)
    std::string topic;                       ///< Kafka target topic (with kafka://)
    double max_rate = 0;                     ///< messages per second at most; 0: as fast as the target takes them
};

/// Exit codes of `floe restore`.
enum restore_exit : int {
    restore_done = 0,
    restore_failed = 1,      ///< the target failed or cannot be reached, or a data file cannot be read: run it again
    restore_usage = 2,       ///< bad options, or a row the target cannot take (no subject, a header NATS cannot carry)
    restore_not_found = 3,   ///< no such table, stream or topic
};

/// Replays the table's rows, in offset order (partition by partition), into a JetStream stream
/// or a Kafka topic, keeping subjects/keys, headers, payloads and timestamps. Idempotent:
/// every message carries an id derived from <namespace>.<table>, partition and offset
/// (JetStream: Nats-Msg-Id; Kafka: the Floe-Restore-Id header), and a run first looks for the
/// newest id of this table in the target and resumes after it, so a run cut short (kill -9
/// included) and run again adds nothing twice. Progress and rate every second on stderr, a
/// summary on stdout. Returns a restore_exit.
int run_restore(const config::settings& s, const restore_request& req);

/// The restore id of one row: "floe:<namespace>.<table>:<partition>:<offset>".
std::string restore_id(const std::string& table_id, int32_t partition, int64_t offset);
/// Parses a restore id of `table_id` into (partition, offset); nullopt for anything else.
std::optional<std::pair<int32_t, int64_t>> parse_restore_id(std::string_view id, const std::string& table_id);
/// Epoch milliseconds from digits, or from ISO-8601 UTC ("2026-12-03T04:00:00Z", "...:00.250Z").
std::optional<int64_t> parse_restore_time(std::string_view text);

} // namespace floe::app
