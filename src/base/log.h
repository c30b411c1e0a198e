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

/// A syslog severity (0 emerg .. 7 debug), as librdkafka's log callback passes it, as a Floe log
/// level: 0-2 critical, 3 error, 4 warn, 5-6 info, 7 and above debug. Libraries that log on their
/// own are routed through Floe's logger with it, so --log-format json stays one object a line.
spdlog::level::level_enum level_from_syslog(int severity) noexcept;

/// Escapes a string for inclusion in a JSON string literal.
std::string json_escape(std::string_view s);

} // namespace floe
