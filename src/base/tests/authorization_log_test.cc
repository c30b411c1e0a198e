#include "base/authorization_log.h"
#include "base/metrics.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

namespace floe {
namespace {

using namespace std::chrono_literals;

/// The counter's value in /metrics for these labels (0 when absent).
uint64_t denied_count(std::string_view source) {
    auto text = metrics::registry::instance().render();
    auto key = fmt::format("floe_authorization_denied_total{{source=\"{}\",resource_type=\"TOPIC\",operation=\"READ\"}} ",
                           source);
    auto at = text.find(key);
    return at == std::string::npos ? 0 : std::stoull(text.substr(at + key.size()));
}

TEST(AuthorizationLog, LogsRateLimitedAndCountsEveryDenial) {
    std::ostringstream lines;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(lines);
    auto previous = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
    spdlog::set_level(spdlog::level::info);
    denial_log_limit().reset({.per_window = 5, .window = 200ms});
    const auto before = denied_count("test");

    for (int i = 0; i < 40; ++i)
        report_denied({.source = "test", .principal = "User:bob", .host = "10.1.2.3", .operation = "READ",
                       .resource_type = "TOPIC", .resource_name = "orders\nforged line", .detail = "GET /v1/x"});
    auto first = lines.str();
    EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 5) << first; // 5 lines, 35 held back
    EXPECT_NE(first.find("authorization denied: User:bob from 10.1.2.3 may not READ TOPIC 'orders\\x0aforged line' "
                         "(test: GET /v1/x)"),
              std::string::npos)
        << first;
    EXPECT_EQ(denied_count("test"), before + 40); // every denial counted

    std::this_thread::sleep_for(250ms); // the next window
    report_denied({.source = "test", .principal = "User:bob", .host = "10.1.2.3", .operation = "READ",
                   .resource_type = "TOPIC", .resource_name = "orders"});
    auto next = lines.str().substr(first.size());
    EXPECT_NE(next.find("[35 more denials not logged before this one"), std::string::npos) << next;

    denial_log_limit().reset({});
    spdlog::set_default_logger(previous);
}

} // namespace
} // namespace floe
