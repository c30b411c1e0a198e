#pragma once

#include "config/settings.h"

#include <string>
#include <vector>

namespace floe::app {

/// `floe tables adopt NAME...`: makes the configured catalog the owner of tables whose location
/// holds metadata it does not know (written by another catalog, a restored catalog, a second
/// database), continuing from the newest metadata there. NAME is a topic or `<namespace>.<table>`.
/// Run it on purpose, with every other writer of those tables stopped. Returns the exit code.
int adopt_tables(const config::settings& s, const std::vector<std::string>& names);

} // namespace floe::app
