#pragma once
// Multi-broker coordination on Redis: a registry of live brokers, leases with a fencing epoch,
// and rendezvous hashing of work over the live brokers. All state changes are single Redis
// functions (library `floe_coord`), so each check-and-set is atomic on the server, and every
// time comparison uses the server's clock (TIME), never a broker's.

#include "base/result.h"
#include "redis/client.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace floe::redis {

/// Version of the `floe_coord` function library; bump when its code changes.
inline constexpr std::string_view coordination_library_version = "2";

/// Loads (version-checked) the `floe_coord` library on every master. Called by the
/// constructors below; cheap when it is already there.
result<void> load_coordination_library(client& c);

/// One live broker as registered.
struct broker_info {
    int32_t id = -1;
    std::string listeners;  ///< opaque to the registry (the broker's advertised listeners)
    int64_t expires_ms = 0; ///< server time (ms since epoch) after which it counts as dead
    friend bool operator==(const broker_info&, const broker_info&) = default;
};

/// The registry of live brokers, shared by all brokers of one namespace.
///
/// Keys (one slot, hash tag `{<ns>.brokers}`): `<ns>{<ns>.brokers}.expiry` (zset id → expiry
/// ms), `.listeners` (hash id → listeners), `.token` (hash id → the registering process's
/// random token). A broker that stops heartbeating counts as dead once its expiry passes, and
/// is pruned by the next list. A second live process registering an id that is taken fails
/// (errc::already_exists) until the first one's entry expires.
///
/// Thread-safe: heartbeat()/live()/leave() may be called from any thread; start() runs the
/// heartbeats on its own thread until stop() (or destruction). The client must outlive it.
class broker_registry {
public:
    /// `ns` must not contain '{' or '}' (it is part of the hash tag). `instance_token`
    /// identifies this process's registration; empty: a random one. A broker that keeps a
    /// token across restarts (e.g. in its data directory) takes its id back at once after a
    /// crash instead of waiting for the old entry to expire.
    static result<std::unique_ptr<broker_registry>> create(client& c, std::string ns, int32_t id,
                                                           std::string listeners, std::chrono::milliseconds ttl,
                                                           std::string instance_token = {});
    ~broker_registry();

    /// How a broker joins with register_broker().
    struct registration {
        std::optional<int32_t> id; ///< nullopt: the id kept with `dir_token`, else the lowest free one
        std::string dir_token;     ///< the data directory's token (kept across restarts)
        std::string listeners;
        std::chrono::milliseconds ttl{6000};
        /// Where the directory is ("<host>:<absolute path>"), for a caller that holds the
        /// directory's lock (so no other live process runs from it there): a live entry of the
        /// same token and place is this broker's previous life, taken over at once. Empty: every
        /// live entry of the same token is watched as below.
        std::string place;
    };
    /// Registers a broker at once (one Redis function: atomic), choosing its id when none is
    /// given: the id already kept with `dir_token` (a restart takes its id back), else the lowest
    /// id that is neither live nor kept by another directory. The id is then kept with the token
    /// (keys `.bindings` dir token → id and `.owners` id → dir token, never expiring).
    /// errc::already_exists at once when another directory's live broker has the asked id. A
    /// live entry of the same token and place is this broker before a crash: taken over at
    /// once. One of the same token from another place (a copy of the data directory) is watched
    /// for half the ttl: the entry of a live process moves with its heartbeats (errc::conflict,
    /// the copy is refused); one that does not move is a dead process's, and is taken over.
    /// Redis unavailable: retried for up to the ttl. Returns the registry (not yet start()ed).
    static result<std::unique_ptr<broker_registry>> register_broker(client& c, std::string ns, registration r);

    /// Registers or refreshes this broker (expiry = server now + ttl). errc::already_exists
    /// while another live process holds the id.
    result<void> heartbeat();
    /// heartbeat(), retried while the id is held by another process (its entry expires within
    /// the ttl when that process is dead) or Redis is unavailable, for at most `wait`.
    result<void> join(std::chrono::milliseconds wait);
    /// The live brokers by id (expired ones pruned).
    result<std::vector<broker_info>> live();
    /// Removes this broker at once (clean shutdown), if the entry is still its own.
    result<void> leave();

    /// Heartbeats every `interval` on a background thread, and reads live() after each
    /// heartbeat into the cache below; failures are logged and counted, the thread goes on.
    /// stop() joins it (and does not leave()).
    void start(std::chrono::milliseconds interval);
    /// The live brokers as of the last successful live() (by the thread or a caller), without
    /// a round trip: what Metadata answers from. Empty before the first one.
    std::vector<broker_info> cached_live() const;
    /// Increases each time the cached set of live ids changes (a broker joined or died).
    uint64_t generation() const noexcept { return _generation.load(); }
    void stop();
    uint64_t heartbeat_failures() const noexcept { return _failures.load(); }

    int32_t id() const noexcept { return _id; }
    std::chrono::milliseconds ttl() const noexcept { return _ttl; }

private:
    broker_registry(client& c, std::string ns, int32_t id, std::string listeners, std::chrono::milliseconds ttl,
                    std::string token);

    client& _client;
    std::string _expiry_key, _listeners_key, _token_key;
    int32_t _id;
    std::string _id_text, _listeners, _token;
    std::chrono::milliseconds _ttl;
    std::atomic<uint64_t> _failures{0};
    std::atomic<uint64_t> _generation{0};
    mutable std::mutex _cache_mu;
    std::vector<broker_info> _cache;
    std::mutex _mu;
    std::condition_variable _cv;
    bool _stopping = false;
    std::thread _thread;
};

/// A lease held on a key: who, with which fencing epoch, until when.
struct lease {
    std::string key;
    std::string holder;
    int64_t epoch = 0;      ///< increases on every new holder (and on re-acquisition after expiry)
    int64_t expires_ms = 0; ///< server time
    /// Local steady-clock time until which the holder may act: the request's send time plus
    /// the ttl, which is never later than the server's expiry.
    std::chrono::steady_clock::time_point valid_until{};
};

/// What is stored at a lease key.
struct lease_state {
    std::string holder;     ///< empty: nobody
    int64_t epoch = 0;
    int64_t expires_ms = 0;
    int64_t server_now_ms = 0;
    bool held() const noexcept { return !holder.empty() && expires_ms > server_now_ms; }
};

/// Leases with a fencing epoch, for work that one broker at a time must do (a partition's
/// storage worker). A lease is a hash at a key the caller chooses (put it in the slot of the
/// data it guards, e.g. `<ns>{<topic>.<p>}.lease.offload`, so the caller's own Redis functions
/// can check `HGET key epoch` atomically with their writes). Fields: `holder`, `epoch`,
/// `expires` (server ms). The hash is never deleted, so epochs only grow.
///
/// Stateless apart from the client reference (the client must outlive it): thread-safe.
class lease_manager {
public:
    static result<std::unique_ptr<lease_manager>> create(client& c);

    /// Takes the lease when it is free, expired, or already this holder's (then it is renewed
    /// with the same epoch while unexpired). nullopt when another holder has it unexpired.
    result<std::optional<lease>> try_acquire(std::string_view key, std::string_view holder,
                                             std::chrono::milliseconds ttl);
    /// Extends a lease still held with the same epoch; errc::conflict when it expired or
    /// another holder took it (the caller must stop the guarded work).
    result<lease> renew(const lease& l, std::chrono::milliseconds ttl);
    /// Gives the lease up (only if still held with this epoch; otherwise nothing happens).
    result<void> release(const lease& l);
    /// What is stored now.
    result<lease_state> get(std::string_view key);

private:
    explicit lease_manager(client& c) : _client(c) {}
    client& _client;
};

/// Rendezvous (highest random weight) hashing: each item goes to the live broker with the
/// highest hash(item, broker). When a broker leaves, only its items move; when one joins, it
/// takes about 1/n of the items. Pure functions, deterministic across processes and builds.
uint64_t rendezvous_score(std::string_view item, int32_t broker) noexcept;
/// The owner of `item` among `brokers` (-1 when there is none).
int32_t rendezvous_owner(std::string_view item, std::span<const int32_t> brokers) noexcept;
/// The first `n` brokers for `item` in preference order (owner first).
std::vector<int32_t> rendezvous_order(std::string_view item, std::span<const int32_t> brokers, size_t n);
/// The item name used for a partition ("<topic>/<partition>"), so every broker hashes alike.
std::string partition_item(std::string_view topic, int32_t partition);
/// The item name used for a consumer group ("group:<id>").
std::string group_item(std::string_view group_id);

} // namespace floe::redis
