#pragma once
// Where the registry's state lives: an append-only log of registry events (the same idea as
// Confluent's `_schemas` topic), shared by every broker of a cluster. The registry keeps the
// state the log describes in memory and writes by appending, conditionally on the log's length:
// a writer that has not seen every earlier record cannot append, so two brokers can never hand
// one id to two schemas or two ids to one schema (the loser re-reads and finds the winner's
// record). Declared here, beside its consumer; implementations live in app (a framed file under
// the data directory for the embedded tier, a Redis list with a Lua compare-and-append for the
// Redis tier), so schema depends on neither.

#include "base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace floe::schema {

class registry_log {
public:
    virtual ~registry_log() = default;

    /// The records at positions [from, end), oldest first. errc::unavailable / io_error when
    /// the store cannot be read (retry).
    virtual result<std::vector<std::string>> read_from(uint64_t from) = 0;

    /// Appends `record` at position `expected_size` if the log holds exactly that many records,
    /// durably before returning. errc::conflict: the log is longer (another writer appended;
    /// read and retry). errc::unavailable/io_error/timeout: the outcome may be unknown (the
    /// caller reads the log to find out whether its record landed: every record it writes
    /// carries a unique token).
    virtual result<void> append_if(uint64_t expected_size, const std::string& record) = 0;

    /// Says where the log is, for /readyz and start-up messages.
    virtual std::string describe() const = 0;
};

/// A log in memory (tests, and `floe schemas` dry runs). Thread-safe.
std::unique_ptr<registry_log> make_memory_log();

} // namespace floe::schema
