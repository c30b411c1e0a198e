#pragma once

#include <string>
#include <vector>

namespace floe::app {

/// Runs the `floe` command line; returns the process exit code.
/// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid settings.
int run_cli(int argc, char** argv);

} // namespace floe::app
