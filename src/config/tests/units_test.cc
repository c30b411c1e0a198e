#include "config/units.h"

#include <gtest/gtest.h>

namespace floe::config {
namespace {

TEST(Units, Sizes) {
    EXPECT_EQ(*parse_size("128MB"), 128'000'000);
    EXPECT_EQ(*parse_size("1GiB"), 1ll << 30);
    EXPECT_EQ(*parse_size("64kib"), 65536);
    EXPECT_EQ(*parse_size("4096"), 4096);
    EXPECT_EQ(*parse_size("10 B"), 10);
    EXPECT_EQ(*parse_size("2T"), 2ll << 40);
    for (auto bad : {"", "MB", "-1MB", "1.5GB", "12 parsecs", "99999999999999999999",
                     "9000000000GiB"}) {
        auto r = parse_size(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code(), errc::invalid_argument);
    }
    EXPECT_NE(parse_size("3 furlongs").error().message().find("unknown unit 'furlongs'"),
              std::string::npos);
}

TEST(Units, Durations) {
    using std::chrono::milliseconds;
    EXPECT_EQ(*parse_duration("500ms"), milliseconds(500));
    EXPECT_EQ(*parse_duration("10s"), milliseconds(10'000));
    EXPECT_EQ(*parse_duration("1m"), milliseconds(60'000));
    EXPECT_EQ(*parse_duration("2h"), milliseconds(7'200'000));
    EXPECT_EQ(*parse_duration("7d"), milliseconds(604'800'000));
    EXPECT_EQ(*parse_duration("0"), milliseconds(0));
    auto no_unit = parse_duration("10");
    ASSERT_FALSE(no_unit);
    EXPECT_NE(no_unit.error().message().find("needs a unit"), std::string::npos);
    for (auto bad : {"", "s", "1w", "-5s", "1.5s", "10 fortnights", "99999999999999999d"})
        EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(Units, BoolsIntsAddresses) {
    EXPECT_TRUE(*parse_bool("true"));
    EXPECT_TRUE(*parse_bool("YES"));
    EXPECT_FALSE(*parse_bool("off"));
    EXPECT_FALSE(parse_bool("maybe"));
    EXPECT_EQ(*parse_int("-2"), -2);
    EXPECT_EQ(*parse_int("+7"), 7);
    EXPECT_FALSE(parse_int("7x"));
    EXPECT_FALSE(parse_int("99999999999999999999"));
    auto hp = parse_host_port("127.0.0.1:9092");
    ASSERT_TRUE(hp);
    EXPECT_EQ(hp->host, "127.0.0.1");
    EXPECT_EQ(hp->port, 9092);
    auto v6 = parse_host_port("[::1]:0");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->to_string(), "[::1]:0");
    for (auto bad : {"localhost", ":9092", "host:", "host:65536", "host:-1", "::1:9092", "[::1]"})
        EXPECT_FALSE(parse_host_port(bad)) << bad;
}

TEST(Units, Formatting) {
    EXPECT_EQ(format_size(128'000'000), "128MB");
    EXPECT_EQ(format_size(1ll << 30), "1GiB");
    EXPECT_EQ(format_size(1000), "1KB");
    EXPECT_EQ(format_size(1023), "1023B");
    EXPECT_EQ(format_duration(std::chrono::milliseconds(10'000)), "10s");
    EXPECT_EQ(format_duration(std::chrono::milliseconds(1500)), "1500ms");
    EXPECT_EQ(format_duration(std::chrono::milliseconds(604'800'000)), "7d");
}

} // namespace
} // namespace floe::config
