#pragma once

#include "base/uuid.h"

#include <filesystem>
#include <string>

namespace floe::iceberg::test_util {

/// A fresh directory under the system temp dir, removed when the test ends.
class temp_dir {
public:
    temp_dir() : _path(std::filesystem::temp_directory_path() / ("floe-iceberg-" + uuid::random().to_string())) {
        std::filesystem::create_directories(_path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(_path, ec);
    }
    const std::filesystem::path& path() const { return _path; }
    std::string str() const { return _path.string(); }

private:
    std::filesystem::path _path;
};

} // namespace floe::iceberg::test_util
