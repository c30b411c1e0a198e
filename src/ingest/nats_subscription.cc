#include "ingest/nats_subscription.h"

namespace floe::ingest {

void subscription_graveyard::retire(natsConnection* nc, natsSubscription*& sub, int64_t round_trip_timeout_ms) {
    if (sub) {
        // The read loop stops finding it here. On a JetStream subscription whose consumer libnats
        // created, this also deletes that consumer (natsSubscription_Destroy would leave it to the
        // server's inactivity timeout).
        (void)natsSubscription_Unsubscribe(sub);
        _subs.push_back(sub);
        sub = nullptr;
    }
    if (_subs.empty() || !nc || natsConnection_IsClosed(nc)) return;
    if (natsConnection_FlushTimeout(nc, round_trip_timeout_ms) != NATS_OK) return;
    destroy_all();
}

void subscription_graveyard::destroy_all() {
    for (auto* s : _subs) natsSubscription_Destroy(s);
    _subs.clear();
}

} // namespace floe::ingest
