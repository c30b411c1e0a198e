#include "base/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <unistd.h>

namespace floe {
namespace {

/// %* in the JSON pattern: the message, escaped for a JSON string.
class json_message_flag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        auto escaped = json_escape(std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(escaped.data(), escaped.data() + escaped.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<json_message_flag>();
    }
};

} // namespace

result<log_format> parse_log_format(std::string_view s) {
    if (s == "text") return log_format::text;
    if (s == "json") return log_format::json;
    return fail(errc::invalid_argument, "log format '{}' is not one of text, json", s);
}

result<spdlog::level::level_enum> parse_log_level(std::string_view s) {
    for (auto l : {spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
                   spdlog::level::warn, spdlog::level::err, spdlog::level::critical,
                   spdlog::level::off}) {
        auto name = spdlog::level::to_string_view(l);
        if (std::string_view(name.data(), name.size()) == s) return l;
    }
    if (s == "warning") return spdlog::level::warn;
    if (s == "error") return spdlog::level::err;
    return fail(errc::invalid_argument,
                "log level '{}' is not one of trace, debug, info, warn, error, critical, off", s);
}

spdlog::level::level_enum level_from_syslog(int severity) noexcept {
    if (severity <= 2) return spdlog::level::critical;
    if (severity == 3) return spdlog::level::err;
    if (severity == 4) return spdlog::level::warn;
    if (severity <= 6) return spdlog::level::info;
    return spdlog::level::debug;
}

std::string json_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) out += fmt::format("\\u{:04x}", c);
            else out += static_cast<char>(c);
        }
    }
    return out;
}

void init_logging(log_format format, spdlog::level::level_enum level) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
        format == log_format::text && isatty(STDERR_FILENO) ? spdlog::color_mode::automatic
                                                            : spdlog::color_mode::never);
    auto logger = std::make_shared<spdlog::logger>("floe", sink);
    if (format == log_format::json) {
        auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
        f->add_flag<json_message_flag>('*').set_pattern(
            R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","thread":%t,"msg":"%*"})");
        logger->set_formatter(std::move(f));
    } else {
        logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %v");
    }
    logger->set_level(level);
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(std::move(logger));
}

} // namespace floe
