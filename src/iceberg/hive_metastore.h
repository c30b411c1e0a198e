#pragma once

// A client of the Hive Metastore's Thrift service (binary protocol, unframed socket, as the
// metastore listens by default on port 9083): the calls Floe's hive catalog makes. Field ids come
// from hive_metastore.thrift beside this file (Floe's own subset of the service's IDL).

#include "base/result.h"
#include "iceberg/thrift_binary.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg::hms {

/// Field ids of the structs Floe reads or writes (hive_metastore.thrift).
namespace table_f {
inline constexpr int16_t name = 1, db = 2, owner = 3, create_time = 4, last_access = 5,
                         retention = 6, sd = 7, partition_keys = 8, parameters = 9, table_type = 12;
}
namespace sd_f {
inline constexpr int16_t cols = 1, location = 2, input_format = 3, output_format = 4,
                         compressed = 5, num_buckets = 6, serde = 7, bucket_cols = 8,
                         parameters = 10;
}
namespace serde_f {
inline constexpr int16_t name = 1, lib = 2, parameters = 3;
}
namespace database_f {
inline constexpr int16_t name = 1, description = 2, location = 3, parameters = 4;
}

enum class lock_state : int32_t { acquired = 1, waiting = 2, abort = 3, not_acquired = 4 };

struct lock_response {
    int64_t lock_id = 0;
    lock_state state = lock_state::abort;
};

struct options {
    std::string host;
    uint16_t port = 9083;
    /// Connect, send and receive deadline of one call.
    std::chrono::milliseconds timeout{30'000};
};

/// Parses `thrift://host:port` (port default 9083). Several URIs (comma-separated) are not
/// supported: the first is taken and the rest named in a warning by the caller.
result<options> parse_uri(const std::string& uri);

/// One connection to one metastore, opened on first use and again after any I/O failure.
/// Thread-safe: calls are serialized by a mutex (one request on the wire at a time).
/// Errors: errc::not_found (NoSuchObjectException), errc::already_exists, errc::unavailable
/// (no connection, or the connection failed mid-call: the call's outcome is unknown),
/// errc::timeout, errc::io_error (MetaException and the other exceptions of the service),
/// errc::corrupt (an answer that is not Thrift). Every message names the metastore's address.
class client {
public:
    explicit client(options o) : _o(std::move(o)) {}
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// "thrift://host:port".
    std::string address() const;

    result<void> create_database(const std::string& name, const std::string& location);
    /// The Database struct, or nullopt when there is none of that name.
    result<std::optional<thrift::tvalue>> get_database(const std::string& name);
    result<std::vector<std::string>> get_all_databases();
    result<void> create_table(const thrift::tvalue& table);
    /// The Table struct, or nullopt when the table (or its database) does not exist.
    result<std::optional<thrift::tvalue>> get_table(const std::string& db, const std::string& name);
    result<std::vector<std::string>> get_all_tables(const std::string& db);
    /// alter_table_with_environment_context with `env` as the context's properties.
    result<void> alter_table(const std::string& db, const std::string& name,
                             const thrift::tvalue& table,
                             const std::map<std::string, std::string>& env);
    result<void> drop_table(const std::string& db, const std::string& name);
    /// An EXCLUSIVE table-level lock request (no transaction).
    result<lock_response> lock_table(const std::string& db, const std::string& name,
                                     const std::string& user, const std::string& host,
                                     const std::string& agent);
    result<lock_response> check_lock(int64_t lock_id);
    result<void> unlock(int64_t lock_id);
    result<void> heartbeat(int64_t lock_id);

    /// A generic call: the reply's result struct (field 0 the return value, others exceptions).
    /// `exceptions` names the declared exception structs by field id, for error messages.
    result<thrift::tvalue> call(const std::string& method, thrift::tvalue args,
                                const std::map<int16_t, const char*>& exceptions);

private:
    result<void> connect_locked();
    void close_locked();
    result<void> send_all_locked(std::string_view bytes);
    result<thrift::message> receive_locked();

    options _o;
    std::mutex _mu;
    int _fd = -1;
    int32_t _seqid = 0;
    std::string _inbuf;
};

} // namespace floe::iceberg::hms
