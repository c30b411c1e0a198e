#pragma once

#include "base/result.h"
#include "redis/resp.h"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::redis {

/// One decoded RESP2 reply (reply_type is in resp.h). Plain value type: copyable, owns its data.
class reply {
public:
    reply() = default; // nil
    static reply nil() { return reply(); }
    static reply integer(int64_t v);
    static reply string(std::string s);
    static reply status(std::string s);
    static reply error(std::string s);
    static reply array(std::vector<reply> elements);

    reply_type type() const noexcept { return _type; }
    bool is_nil() const noexcept { return _type == reply_type::nil; }
    bool is_integer() const noexcept { return _type == reply_type::integer; }
    bool is_string() const noexcept { return _type == reply_type::string; }
    bool is_status() const noexcept { return _type == reply_type::status; }
    bool is_error() const noexcept { return _type == reply_type::error; }
    bool is_array() const noexcept { return _type == reply_type::array; }

    /// The integer of an integer reply (0 for other types).
    int64_t integer() const noexcept { return _int; }
    /// The text of a string, status or error reply (empty for other types).
    const std::string& str() const noexcept { return _str; }
    /// The elements of an array reply (empty for other types).
    const std::vector<reply>& elements() const noexcept { return _elements; }
    std::vector<reply>& elements() noexcept { return _elements; }
    size_t size() const noexcept { return _elements.size(); }
    const reply& operator[](size_t i) const { return _elements.at(i); }

    /// The reply as an integer: integer replies, or string/status replies holding a decimal
    /// integer (Redis answers some numbers as bulk strings). Anything else is an error naming
    /// what was received.
    result<int64_t> as_integer() const;
    /// The reply as text: string or status replies; nil and others are errors.
    result<std::string_view> as_string() const;

    /// Short human form for logs and test failures ("(integer) 3", "[\"a\", nil]").
    std::string debug_string() const;

    friend bool operator==(const reply&, const reply&) = default;

private:
    reply_type _type = reply_type::nil;
    int64_t _int = 0;
    std::string _str;
    std::vector<reply> _elements;
};

/// host:port of one Redis node.
struct node_address {
    std::string host;
    uint16_t port = 6379;
    std::string to_string() const; // "host:port" ("[v6]:port" for IPv6 literals)
    friend bool operator==(const node_address&, const node_address&) = default;
};

/// How to reach Redis. Built by parse_uris from `redis://[user:password@]host:port[/db]`
/// URIs (several, comma-separated, are the seeds of a Redis Cluster; any one reachable seed
/// is enough). Credentials and db come from the first URI that names them and must agree.
struct options {
    std::vector<node_address> seeds;
    std::string user;     ///< ACL user (empty: AUTH with the password only, or no AUTH)
    std::string password; ///< empty: no AUTH
    int db = 0;           ///< SELECT on each connection; must be 0 on a Redis Cluster
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds command_timeout{5000}; ///< per round trip (a pipeline is one)
    size_t pool_size = 8;                            ///< connections per node at most
    std::chrono::seconds keepalive{15};              ///< TCP keepalive idle time (0: off)
    /// Server answers that say "not now" (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN,
    /// READONLY, MOVED/ASK loops) are retried inside the client with backoff for at most this
    /// long before the error is returned (it is then retriable).
    std::chrono::milliseconds retry_budget{2000};
    /// Name sent with CLIENT SETNAME on each connection (empty: none).
    std::string client_name;
};

/// Parses one or more comma-separated URIs. Errors (errc::invalid_argument) name `setting`
/// and the offending part, e.g. "floe.local.redis.uri: 'redis://h:x': port 'x' is not a number
/// in 1..65535"; a password is never echoed.
result<options> parse_uris(std::string_view uris, std::string_view setting = "redis uri");
result<options> parse_uris(std::span<const std::string> uris, std::string_view setting = "redis uri");

/// Errors returned by the client are floe::error values:
///  - a connection lost, refused or reset, a timeout, or a server answer meaning "not now"
///    (LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY, BUSY, NOREPLICAS, OOM, MOVED/ASK
///    left after the retry budget): errc::unavailable or errc::timeout, retryable() is true.
///    After a connection was lost or timed out mid-command the command may or may not have
///    run on the server.
///  - any other error reply (WRONGTYPE, ERR ..., errors raised by a script or function):
///    errc::invalid_argument (errc::not_found for "Function not found"/NOSCRIPT); the
///    message is exactly the server's error text, so callers may match their own script
///    errors with server_error_is().
/// True when `e` came from a Redis error reply whose text starts with `prefix`
/// (e.g. server_error_is(e, "FLOE_FENCED")).
bool server_error_is(const floe::error& e, std::string_view prefix);

/// True when `e` says a command was sent and its answer never came (the connection was lost or
/// timed out mid-command): the command may or may not have run. False for errors that prove
/// it did not run (no connection could be opened, pool busy, "not now" answers) and for
/// error replies.
bool outcome_unknown(const floe::error& e);

/// Turns an error reply into the floe::error described above (success for other replies).
result<void> check(const reply& r);

/// A Redis client for one server or a Redis Cluster (auto-detected at connect: CLUSTER SLOTS
/// answered means cluster mode). Thread-safe: any number of threads may call it at once; each
/// call borrows a pooled connection of the node that owns the key's slot for one round trip.
/// In cluster mode it keeps the slot map, follows MOVED (and refreshes the map) and ASK
/// (ASKING, then the command once on that node), and refreshes the map after a connection
/// failure. Owned by whoever created it; must outlive the calls on it.
class client {
public:
    /// Connects to the first reachable seed, detects cluster mode and loads the slot map.
    /// Fails (retryable) when no seed answers, or (invalid_argument) on AUTH/SELECT errors.
    static result<std::unique_ptr<client>> connect(options opts);
    /// A client that connects on first use: while no seed answers, every call fails with a
    /// retryable error and the next call tries again (a broker may start while Redis is down).
    static std::unique_ptr<client> create(options opts);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// One command. It is routed by args[1] (the first key of most commands); keyless
    /// commands (one argument) go to any node. An error reply is returned as an error.
    result<reply> command(std::span<const std::string_view> args);
    result<reply> command(std::initializer_list<std::string_view> args);
    /// One command routed by `slot_key` (use for commands whose first key is not args[1]).
    result<reply> command_for(std::string_view slot_key, std::span<const std::string_view> args);
    result<reply> command_for(std::string_view slot_key, std::initializer_list<std::string_view> args);

    /// Several commands, all for the slot of `slot_key`, sent in one round trip on one
    /// connection (so a trailing WAIT covers the writes before it). Returns one reply per
    /// command in order; error replies are returned as replies (not as a failure) because
    /// earlier commands may have run. MOVED/ASK answers are resent to the right node.
    /// Fails only when the connection fails (then any prefix may have run).
    result<std::vector<reply>> pipeline(std::string_view slot_key,
                                        std::span<const std::vector<std::string>> commands);
    /// The same with borrowed arguments (no copies; the caller keeps them alive).
    result<std::vector<reply>> pipeline(std::string_view slot_key,
                                        std::span<const std::vector<std::string_view>> commands);

    /// Like pipeline (borrowed arguments), but each reply comes back as its RESP2 bytes, read
    /// in place with raw_reply::reader(): no allocation per element, for large answers
    /// (XRANGE). Redirects and "not now" answers are handled as in pipeline; other error
    /// replies are returned as replies (raw_reply::is_error).
    result<std::vector<raw_reply>> pipeline_raw(std::string_view slot_key,
                                                std::span<const std::vector<std::string_view>> commands);
    /// Like fcall, with the reply as its RESP2 bytes (an error reply is an error value, as in fcall).
    result<raw_reply> fcall_raw(std::string_view function, std::span<const std::string_view> keys,
                                std::span<const std::string_view> args);

    /// A command that may block on the server (XREAD/XREADGROUP BLOCK ms, BLPOP, WAIT) for up
    /// to `block`: its round trip may take block + command_timeout. It holds a pooled
    /// connection meanwhile. Routed by `slot_key`.
    result<reply> command_blocking(std::string_view slot_key, std::span<const std::string_view> args,
                                   std::chrono::milliseconds block);

    /// FCALL function numkeys keys... args..., routed by keys[0] (all keys must share a
    /// slot). When the server does not know the function and a library registered with
    /// load_library defines it (a restarted server without persistence, a new master), the
    /// library is loaded on that node and the call repeated once.
    result<reply> fcall(std::string_view function, std::span<const std::string_view> keys,
                        std::span<const std::string_view> args);
    result<reply> fcall(std::string_view function, std::initializer_list<std::string_view> keys,
                        std::initializer_list<std::string_view> args);

    /// Loads a Lua function library on every master unless it is there at this `version`.
    /// `code` is the library body without the `#!lua` line: the client writes
    /// `#!lua name=<name>` and a `-- version: <version>` line above it, checks FUNCTION LIST
    /// LIBRARYNAME <name> WITHCODE on each master, and sends FUNCTION LOAD REPLACE only where
    /// the version line differs or the library is missing. Remembered for fcall's reload.
    result<void> load_library(std::string_view name, std::string_view code, std::string_view version);

    /// One command on one node named as masters() names it ("host:port"), without redirects:
    /// for per-node commands (SCAN with that node's cursor, INFO, DBSIZE, FUNCTION STATS).
    result<reply> command_on_node(std::string_view node, std::span<const std::string_view> args);
    result<reply> command_on_node(std::string_view node, std::initializer_list<std::string_view> args);

    /// PING on every master (one node for a single Redis): ok when all answer PONG.
    result<void> ping();

    bool is_cluster() const noexcept;
    /// The masters currently known ("host:port"), in slot order; one entry for a single Redis.
    std::vector<std::string> masters() const;
    /// The node that owns the slot of `key` according to the current map ("host:port").
    std::string node_for(std::string_view key) const;
    /// Reloads the slot map now (cluster mode; no-op for a single Redis).
    result<void> refresh_topology();

    /// Counters for tests and metrics.
    struct stats {
        uint64_t moved = 0;           ///< MOVED answers followed
        uint64_t ask = 0;             ///< ASK answers followed
        uint64_t retries = 0;         ///< TRYAGAIN/CLUSTERDOWN/... retried
        uint64_t refreshes = 0;       ///< slot map reloads
        uint64_t connections = 0;     ///< connections opened
        uint64_t library_loads = 0;   ///< FUNCTION LOAD sent (any node)
    };
    stats counters() const;

    const options& opts() const noexcept;

    class impl;

private:
    explicit client(std::unique_ptr<impl> p);
    std::unique_ptr<impl> _impl;
};

} // namespace floe::redis
