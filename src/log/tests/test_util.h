#pragma once

#include <filesystem>
#include <string>
#include <cstdlib>

namespace floe::log::testing {

/// A fresh directory, removed when the object goes away. On /dev/shm when it exists: the
/// tests simulate crashes by cutting and damaging files, so they need fsync's ordering, not its
/// cost (hundreds of reopen cases would otherwise spend seconds in fsync on a busy disk).
struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        std::error_code ec;
        auto base = std::filesystem::is_directory("/dev/shm", ec)
                        ? std::filesystem::path("/dev/shm")
                        : std::filesystem::temp_directory_path();
        std::string tmpl = (base / "floe-log-XXXXXX").string();
        path = ::mkdtemp(tmpl.data());
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

} // namespace floe::log::testing
