#pragma once

#include <nats/nats.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace floe::ingest {

/// Destroys libnats subscriptions without racing the connection's read loop.
///
/// libnats 3.4.1 (Debian 12) finds an incoming message's subscription under the connection's lock,
/// then lets go of the lock and uses the subscription without holding a reference (fixed upstream
/// in 3.5.0, nats.c issue 637). natsSubscription_Destroy in that window frees the subscription
/// under the read loop, which then locks and appends to freed memory: a crash, or heap corruption
/// seen later as `malloc(): invalid size (unsorted)`. A JetStream mirror recreates its pull
/// subscription while messages and pull statuses for it are still arriving, so it hit this.
///
/// retire() unsubscribes (from then on the read loop no longer finds the subscription), then
/// waits for a PING/PONG round trip on the connection: the read loop handles its input in order,
/// so once the PONG is read it is past any message it had started on. Only then is the
/// subscription destroyed. When the round trip fails (the connection is down), the subscription
/// is kept until a later retire()'s round trip succeeds, or until destroy_all(), which the owner
/// calls once the connection is destroyed (natsConnection_Destroy joins the read loop).
///
/// Owned and used by one thread (the mirror's); not thread-safe.
class subscription_graveyard {
public:
    subscription_graveyard() = default;
    subscription_graveyard(const subscription_graveyard&) = delete;
    subscription_graveyard& operator=(const subscription_graveyard&) = delete;
    /// Destroys what is left (destroy_all): only after the connection is destroyed.
    ~subscription_graveyard() { destroy_all(); }

    /// Unsubscribes `sub` (sets it to nullptr) and destroys it, and any kept before, once a round
    /// trip on `nc` proves the read loop is past them. With nc == nullptr nothing is destroyed.
    void retire(natsConnection* nc, natsSubscription*& sub, int64_t round_trip_timeout_ms = 2000);
    /// Destroys every subscription kept: call after natsConnection_Destroy of their connection.
    void destroy_all();
    /// Subscriptions unsubscribed and not yet destroyed.
    size_t kept() const { return _subs.size(); }

private:
    std::vector<natsSubscription*> _subs;
};

} // namespace floe::ingest
