#include "app/cli.h"
#include "app/restore.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace floe::app {
namespace {

TEST(RestoreId, RoundTripsAndBelongsToOneTable) {
    auto id = restore_id("floe.nats_ORDERS", 3, 1234567890123);
    EXPECT_EQ(id, "floe:floe.nats_ORDERS:3:1234567890123");
    auto got = parse_restore_id(id, "floe.nats_ORDERS");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->first, 3);
    EXPECT_EQ(got->second, 1234567890123);
    // Another table's id, or a table whose name extends this one's, is not this table's.
    EXPECT_FALSE(parse_restore_id(id, "floe.nats_ORDER"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS2:0:1", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id(id, "floe.nats_ORDERS2"));
    // Ids a producer set itself are left alone.
    EXPECT_FALSE(parse_restore_id("order-17", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS:0:", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS::5", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS:0:5x", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS:-1:5", "floe.nats_ORDERS"));
    EXPECT_FALSE(parse_restore_id("floe:floe.nats_ORDERS:0:99999999999999999999", "floe.nats_ORDERS"));
}

TEST(RestoreTime, EpochMillisAndIso8601) {
    EXPECT_EQ(parse_restore_time("0"), 0);
    EXPECT_EQ(parse_restore_time("1796272338467"), 1796272338467);
    EXPECT_EQ(parse_restore_time("1970-01-01T00:00:00Z"), 0);
    EXPECT_EQ(parse_restore_time("2026-12-03T04:00:00Z"), 1796270400000);
    EXPECT_EQ(parse_restore_time("2026-12-03T04:00:00.25Z"), 1796270400250);
    EXPECT_EQ(parse_restore_time("2026-12-03T04:00:00.123456789Z"), 1796270400123);
    EXPECT_EQ(parse_restore_time("2026-12-03T04:00:00+00:00"), 1796270400000);
    EXPECT_FALSE(parse_restore_time(""));
    EXPECT_FALSE(parse_restore_time("2026-12-03T04:00:00")); // no zone: ambiguous
    EXPECT_FALSE(parse_restore_time("2026-12-03T04:00:00+02:00"));
    EXPECT_FALSE(parse_restore_time("2026-13-03T04:00:00Z"));
    EXPECT_FALSE(parse_restore_time("yesterday"));
    EXPECT_FALSE(parse_restore_time("2026-12-03T04:00:00.Z"));
}

command_line parse(std::initializer_list<const char*> args) {
    std::vector<const char*> argv{"floe"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_command_line(int(argv.size()), argv.data());
}

TEST(RestoreCommandLine, TakesTheContractNames) {
    auto cl = parse({"restore", "--table", "nats.ORDERS", "--from-offset", "10", "--to-ts", "2026-12-03T04:00:00Z",
                     "--to", "nats://127.0.0.1:4222", "--stream", "ORDERS", "--set", "floe.data-dir=/tmp/x"});
    ASSERT_FALSE(cl.exit_code);
    EXPECT_EQ(cl.command, "restore");
    EXPECT_EQ(cl.restore.table, "nats.ORDERS");
    EXPECT_EQ(cl.restore.from_offset, 10);
    EXPECT_FALSE(cl.restore.to_offset);
    EXPECT_EQ(cl.restore.to_ts, "2026-12-03T04:00:00Z");
    EXPECT_EQ(cl.restore.to, "nats://127.0.0.1:4222");
    EXPECT_EQ(cl.restore.stream, "ORDERS");
    EXPECT_EQ(cl.sets, std::vector<std::string>{"floe.data-dir=/tmp/x"});
    auto k = parse({"restore", "--table", "t", "--to", "kafka://h:9092", "--topic", "T", "--from-offset", "0"});
    ASSERT_FALSE(k.exit_code);
    EXPECT_EQ(k.restore.topic, "T");
    EXPECT_EQ(k.restore.from_offset, 0);
}

TEST(RestoreCommandLine, RefusesBothBoundsOfOneEnd) {
    EXPECT_EQ(parse({"restore", "--table", "t", "--to", "kafka://h:1", "--topic", "T", "--from-offset", "1",
                     "--from-ts", "5"})
                  .exit_code,
              2);
    EXPECT_EQ(parse({"restore", "--to", "kafka://h:1", "--topic", "T"}).exit_code, 2); // --table required
}

} // namespace
} // namespace floe::app
