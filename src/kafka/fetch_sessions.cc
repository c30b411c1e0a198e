#include "kafka/fetch_sessions.h"

namespace floe::kafka {

int16_t sessionless_fetch_error(const fetch_request& req) noexcept {
    if (req.session_id != 0) return int16_t(kerr::fetch_session_id_not_found);
    if (req.session_epoch > 0) return int16_t(kerr::invalid_fetch_session_epoch);
    return 0;
}

} // namespace floe::kafka
