#pragma once

#include "config/settings.h"

#include <string>

namespace floe::app {

/// `floe dlq replay --topic T [--url U] [--token-file F]`: asks the running server to decode
/// topic T's dead letters again and move those that decode now into its typed table
/// (POST /v1/topics/T/dlq/replay on the admin plane, default http://<floe.http.listen>).
/// Prints what moved and what stays, by reason. Exit codes: 0 done, 1 the server cannot be
/// reached or the replay failed (run it again: a replay cut short is finished by the next),
/// 2 bad usage, 3 refused (no such topic, not typed, not authorized).
int run_dlq_replay(const config::settings& s, const std::string& topic, const std::string& url,
                   const std::string& token_file);

} // namespace floe::app
