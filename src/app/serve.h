#pragma once

#include "config/settings.h"

namespace floe::app {

/// `floe serve`: starts every component in dependency order, waits for SIGINT/SIGTERM, then
/// stops them in reverse order. Returns the process exit code.
int serve(const config::settings& s);

} // namespace floe::app
