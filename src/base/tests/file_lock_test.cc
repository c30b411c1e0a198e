#include "base/file_lock.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace floe {
namespace {

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        char tmpl[] = "/tmp/floe-lock-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~temp_dir() { std::filesystem::remove_all(path); }
};

TEST(FileLock, SecondHolderIsRefusedAndToldWhoHoldsIt) {
    temp_dir d;
    auto p = d.path / "floe.lock";
    auto first = file_lock::acquire(p, "kafka=127.0.0.1:1 http=127.0.0.1:2");
    ASSERT_TRUE(first) << first.error().message();
    // flock belongs to the open file description: a second open in this process conflicts too.
    auto second = file_lock::acquire(p, "kafka=127.0.0.1:3");
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code(), errc::unavailable);
    auto pid = fmt::format("pid={} kafka=127.0.0.1:1 http=127.0.0.1:2", ::getpid());
    EXPECT_NE(second.error().message().find(pid), std::string::npos) << second.error().message();
    EXPECT_NE(second.error().message().find(p.string()), std::string::npos);
    // The refused attempt did not touch the holder's line.
    EXPECT_EQ(*file_lock::read_holder(p), pid);

    ASSERT_TRUE(first->describe("kafka=127.0.0.1:9"));
    EXPECT_EQ(*file_lock::read_holder(p), fmt::format("pid={} kafka=127.0.0.1:9", ::getpid()));

    *first = std::move(*file_lock::acquire(d.path / "other.lock", "")); // releases floe.lock
    auto third = file_lock::acquire(p, "again");
    ASSERT_TRUE(third) << third.error().message();
    EXPECT_EQ(*file_lock::read_holder(p), fmt::format("pid={} again", ::getpid()));
}

TEST(FileLock, KilledHolderReleasesTheLock) {
    temp_dir d;
    auto p = d.path / "floe.lock";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto l = file_lock::acquire(p, "child");
        char c = l ? 'y' : 'n';
        (void)::write(ready[1], &c, 1);
        for (;;) ::pause();
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    auto refused = file_lock::acquire(p, "parent");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find(fmt::format("pid={} child", child)), std::string::npos)
        << refused.error().message();
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    auto taken = file_lock::acquire(p, "parent");
    ASSERT_TRUE(taken) << taken.error().message();
}

TEST(FileLock, UnwritableDirectoryIsAnIoError) {
    auto r = file_lock::acquire("/nonexistent-dir-for-floe/floe.lock", "");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::io_error);
}

} // namespace
} // namespace floe
