#pragma once

#include "base/result.h"
#include "redis/client.h"

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace floe::redis::fixture {

/// A real redis-server child process on loopback, for tests and benchmarks. Its files live in
/// `dir`. The destructor kills it (SIGKILL); the kernel also kills it when the thread that
/// started it ends (PR_SET_PDEATHSIG), so a crashed test leaves none behind: start servers
/// from a thread that outlives their use (the test's main thread). Not thread-safe.
class server {
public:
    /// Starts redis-server on a free loopback port (also free at port+10000 when `cluster`),
    /// waits (bounded) until it answers PING.
    static result<server> start(std::filesystem::path dir, std::vector<std::string> extra_args = {},
                                bool cluster = false);
    server(server&& o) noexcept;
    server& operator=(server&& o) noexcept;
    ~server();

    uint16_t port() const { return _port; }
    std::string uri() const { return fmt::format("redis://127.0.0.1:{}", _port); }
    node_address address() const { return {"127.0.0.1", _port}; }
    pid_t pid() const { return _pid; }

    /// SIGKILL and reap (a crash: nothing flushed).
    void kill9();
    /// SIGTERM, bounded wait, then SIGKILL.
    void stop();
    /// Starts it again on the same port with the same arguments and directory.
    result<void> restart();

    /// Runs one command on a fresh connection (outside any client under test).
    result<reply> raw(std::vector<std::string> args) const;

private:
    server() = default;
    result<void> spawn();

    std::filesystem::path _dir;
    std::vector<std::string> _args;
    uint16_t _port = 0;
    pid_t _pid = -1;
};

/// A Redis Cluster on loopback (by default three masters, no replicas), created with
/// `redis-cli --cluster create ... --cluster-replicas R --cluster-yes`; waits until every node
/// says cluster_state:ok (and, with replicas, until every replica's link to its master is up).
class cluster {
public:
    static result<cluster> start(std::filesystem::path dir, int masters = 3, int replicas_per_master = 0);
    std::vector<server>& nodes() { return _nodes; }
    /// Comma-separated seed URIs of every node.
    std::string uris() const;
    /// Waits (bounded) until every running node reports cluster_state:ok.
    result<void> wait_ok(std::chrono::milliseconds limit) const;
    /// The node whose port is `port` (nullptr if none).
    server* by_port(uint16_t port);

private:
    std::vector<server> _nodes;
};

/// An empty directory for a test's servers: <tmp>/floe-<name>-<pid>, emptied if it existed.
std::filesystem::path fresh_dir(std::string_view name);

/// A free loopback TCP port (and, when `with_bus`, port+10000 free too).
result<uint16_t> free_port(bool with_bus = false);

} // namespace floe::redis::fixture
