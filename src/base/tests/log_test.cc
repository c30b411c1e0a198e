#include "base/log.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

TEST(Log, ParseFormatAndLevel) {
    EXPECT_EQ(*parse_log_format("json"), log_format::json);
    EXPECT_EQ(*parse_log_format("text"), log_format::text);
    EXPECT_FALSE(parse_log_format("xml"));
    EXPECT_EQ(*parse_log_level("debug"), spdlog::level::debug);
    EXPECT_EQ(*parse_log_level("warning"), spdlog::level::warn);
    auto bad = parse_log_level("loud");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("loud"), std::string::npos);
}

TEST(Log, JsonEscape) {
    EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(Log, SyslogSeverities) {
    // librdkafka passes syslog severities: %3|...|FAIL| is an error, %7 debug.
    EXPECT_EQ(level_from_syslog(0), spdlog::level::critical);
    EXPECT_EQ(level_from_syslog(2), spdlog::level::critical);
    EXPECT_EQ(level_from_syslog(3), spdlog::level::err);
    EXPECT_EQ(level_from_syslog(4), spdlog::level::warn);
    EXPECT_EQ(level_from_syslog(5), spdlog::level::info);
    EXPECT_EQ(level_from_syslog(6), spdlog::level::info);
    EXPECT_EQ(level_from_syslog(7), spdlog::level::debug);
}

} // namespace
} // namespace floe
