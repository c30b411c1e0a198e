#pragma once

// Incremental fetch sessions (KIP-227). Floe declines every session: a Fetch that asks to open
// one (session id 0, epoch 0) is answered in full with session id 0, which KIP-227 defines as
// "no session created", so clients keep sending full fetches (every partition they want, each
// time). What remains is to refuse requests that presume a session Floe never created, with
// the errors clients recover from by falling back to a full fetch.

#include "kafka/messages.h"

namespace floe::kafka {

/// 0 when `req` can be answered as a full, sessionless fetch; otherwise the top-level error:
/// FETCH_SESSION_ID_NOT_FOUND for any non-zero session id, INVALID_FETCH_SESSION_EPOCH for
/// session id 0 with an incremental epoch (> 0). Epoch -1 (final/none) and 0 (initial) are
/// full fetches.
int16_t sessionless_fetch_error(const fetch_request& req) noexcept;

} // namespace floe::kafka
