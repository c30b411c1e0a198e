#include "iceberg/file_io.h"
#include "iceberg/tests/test_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace floe;
using namespace floe::iceberg;

TEST(iceberg_file_io, uris) {
    EXPECT_EQ(*local_path("file:///a/b"), "/a/b");
    EXPECT_EQ(*local_path("file:/a/b"), "/a/b");
    EXPECT_EQ(*local_path("/a/b"), "/a/b");
    EXPECT_EQ(local_path("s3://bucket/x").error().code(), errc::unsupported);
    EXPECT_FALSE(local_path("relative/x"));
    EXPECT_EQ(file_uri("/x/y"), "file:///x/y");
}

TEST(iceberg_file_io, write_create_new_read_list_remove) {
    test_util::temp_dir d;
    local_file_io io;
    auto uri = file_uri(d.str() + "/a/b/c.json");
    ASSERT_TRUE(io.write(uri, as_bytes("one")));
    EXPECT_EQ(as_chars(*io.read(uri)), "one");
    ASSERT_TRUE(io.write(uri, as_bytes("two")));  // replaces
    EXPECT_EQ(as_chars(*io.read(uri)), "two");
    auto again = io.create_new(uri, as_bytes("three"));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists);
    EXPECT_EQ(as_chars(*io.read(uri)), "two");  // untouched
    ASSERT_TRUE(io.create_new(file_uri(d.str() + "/a/b/d.json"), as_bytes("four")));
    auto listed = io.list(file_uri(d.str() + "/a/"));
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 2u);  // no temp files left behind
    EXPECT_EQ((*listed)[0], uri);
    EXPECT_TRUE(*io.exists(uri));
    ASSERT_TRUE(io.remove(uri));
    ASSERT_TRUE(io.remove(uri));  // idempotent
    EXPECT_FALSE(*io.exists(uri));
    auto missing = io.read(uri);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found);
    EXPECT_NE(missing.error().message().find("c.json"), std::string::npos);
}

TEST(iceberg_file_io, concurrent_create_new_has_one_winner) {
    test_util::temp_dir d;
    local_file_io io;
    auto uri = file_uri(d.str() + "/v2.metadata.json");
    std::atomic<int> wins{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; ++i)
        ts.emplace_back([&, i] {
            if (io.create_new(uri, as_bytes(std::to_string(i)))) ++wins;
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(wins.load(), 1);
}
