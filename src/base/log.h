#pragma once

#include "base/result.h"

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

namespace floe {

enum class log_format { text, json };

result<log_format> parse_log_format(std::string_view s);
result<spdlog::level::level_enum> parse_log_level(std::string_view s);

/// Sets up the process-wide logger on stderr: a human format (coloured on a terminal) or one
/// JSON object per line ({"ts","level","logger","msg"}), for log shippers. Call once at start-up,
/// before threads start; later calls replace the sink.
void init_logging(log_format format, spdlog::level::level_enum level);

/// Escapes a string for inclusion in a JSON string literal.
std::string json_escape(std::string_view s);

} // namespace floe
