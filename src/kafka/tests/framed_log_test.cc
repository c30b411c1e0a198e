// framed_log: a failed append (disk full: a partial write) must not leave a torn record in the
// middle of the file, where the next open would stop and cut every record appended after it.
// Found by the chaos run with a full disk (tests/chaos, seed 8): the transactions log lost 211,590
// bytes of later records at the next start.

#include "kafka/framed_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>
#include <filesystem>
#include <string>
#include <vector>

using namespace floe;
using namespace floe::kafka;

namespace {

struct FramedLogTest : ::testing::Test {
    std::filesystem::path dir;
    void SetUp() override {
        dir = std::filesystem::temp_directory_path() /
              fmt::format("floe-framed-log-{}-{}", ::getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
    }
    void TearDown() override { std::filesystem::remove_all(dir); }

    std::unique_ptr<framed_log> open(std::vector<std::string>& seen) {
        seen.clear();
        auto l = framed_log::open(
            dir / "state.log", "test log",
            [&](bytes_view p) {
                seen.emplace_back(reinterpret_cast<const char*>(p.data()), p.size());
                return true;
            },
            [&] {
                std::vector<byte_buffer> out;
                for (auto& s : seen) out.emplace_back(s.begin(), s.end());
                return out;
            });
        EXPECT_TRUE(l.has_value());
        return l ? std::move(*l) : nullptr;
    }
};

bytes_view view(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

/// Lowers the file size limit so that the next write stops part way (EFBIG), as a full disk does.
struct file_size_limit {
    rlimit old{};
    explicit file_size_limit(rlim_t bytes) {
        ::signal(SIGXFSZ, SIG_IGN);
        ::getrlimit(RLIMIT_FSIZE, &old);
        rlimit l = old;
        l.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &l);
    }
    ~file_size_limit() { ::setrlimit(RLIMIT_FSIZE, &old); }
};

} // namespace

TEST_F(FramedLogTest, AFailedAppendLeavesNoTornRecordBeforeLaterOnes) {
    std::vector<std::string> seen;
    auto log = open(seen);
    ASSERT_TRUE(log);
    ASSERT_TRUE(log->append(view("first")).has_value());
    const auto size = std::filesystem::file_size(dir / "state.log");
    {
        file_size_limit limit(size + 20); // the next record's header and 12 of its 100 bytes fit
        auto r = log->append(view(std::string(100, 'x')));
        ASSERT_FALSE(r.has_value()) << "the write past the limit must fail";
    }
    EXPECT_EQ(std::filesystem::file_size(dir / "state.log"), size) << "the partial record must be cut at once";
    ASSERT_TRUE(log->append(view("third")).has_value()) << "the log goes on once there is room again";
    log.reset();
    auto again = open(seen);
    ASSERT_TRUE(again);
    EXPECT_EQ(seen, (std::vector<std::string>{"first", "third"}));
}

TEST_F(FramedLogTest, ReopenedLogKeepsEveryRecord) {
    std::vector<std::string> seen;
    auto log = open(seen);
    ASSERT_TRUE(log);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(log->append(view(fmt::format("r{}", i))).has_value());
    log.reset();
    auto again = open(seen);
    ASSERT_EQ(seen.size(), 50u);
    EXPECT_EQ(seen.back(), "r49");
}

TEST_F(FramedLogTest, OneSyncCoversEveryRecordWrittenBeforeIt) {
    // Group commit: records written by several owners (transactional ids) before one sync are
    // all made durable by it; a later sync of an earlier record costs no fdatasync.
    std::vector<std::string> seen;
    auto log = open(seen);
    ASSERT_TRUE(log);
    auto a = log->write(view("a"));
    auto b = log->write(view("bb"));
    ASSERT_TRUE(a.has_value());
    ASSERT_TRUE(b.has_value());
    EXPECT_LT(*a, *b);
    EXPECT_EQ(log->syncs(), 0u);
    ASSERT_TRUE(log->sync(*b).has_value());
    EXPECT_EQ(log->syncs(), 1u);
    ASSERT_TRUE(log->sync(*a).has_value());
    EXPECT_EQ(log->syncs(), 1u) << "already durable";
    auto c = log->write(view("ccc"));
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(log->sync(*c).has_value());
    EXPECT_EQ(log->syncs(), 2u);
    log.reset();
    auto again = open(seen);
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "bb", "ccc"}));
}

TEST_F(FramedLogTest, ConcurrentWritersEachSeeTheirRecordDurable) {
    // Writers serialise write() (as the owner's lock does) and sync without it, concurrently.
    std::vector<std::string> seen;
    auto log = open(seen);
    ASSERT_TRUE(log);
    std::mutex owner;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 25; ++i) {
                result<uint64_t> end;
                {
                    std::lock_guard lk(owner);
                    end = log->write(view(fmt::format("t{}-{}", t, i)));
                }
                if (!end || !log->sync(*end)) ++failures;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_LE(log->syncs(), 100u);
    log.reset();
    auto again = open(seen);
    EXPECT_EQ(seen.size(), 100u);
}
