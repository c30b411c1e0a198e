#pragma once
// Test helper shared by the lake tests: a directory of the running test's own, and a lake on a
// SQLite catalog and a file:// warehouse inside it.

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "lake/iceberg_lake.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string_view>

namespace floe::lake::testing {

/// `<tmp>/<prefix>-<pid>-<test name>`, emptied and created.
inline std::filesystem::path fresh_test_dir(std::string_view prefix) {
    auto dir = std::filesystem::temp_directory_path()
               / fmt::format("{}-{}-{}", prefix, ::getpid(),
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

/// A lake on `dir`/catalog.db and file://`dir`/warehouse (the warehouse of `o` is set here).
inline std::unique_ptr<iceberg_lake> open_test_lake(const std::filesystem::path& dir, lake_options o = {}) {
    auto cat = iceberg::open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    EXPECT_TRUE(cat) << cat.error();
    if (!cat) return nullptr;
    o.warehouse = "file://" + (dir / "warehouse").string();
    return std::make_unique<iceberg_lake>(std::shared_ptr<iceberg::catalog>(std::move(*cat)),
                                          std::make_shared<iceberg::local_file_io>(), o);
}

} // namespace floe::lake::testing
