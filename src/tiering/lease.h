#pragma once

#include "base/clock.h"
#include "base/result.h"

#include <filesystem>
#include <string>

namespace floe::tiering {

/// The storage worker's right to offload. One holder at a time; it must renew before
/// `duration` passes or another broker may take over. Today a file in the data dir (one
/// broker per data dir); brokers sharing a hot tier will hold it in Redis or the catalog.
class lease {
public:
    virtual ~lease() = default;
    /// Takes or renews the lease; false when another live holder has it.
    virtual result<bool> acquire() = 0;
    virtual void release() = 0;
};

/// A lease file "<owner> <expiry ms>", replaced atomically under an flock(2) so two processes
/// on one machine cannot both hold it.
class file_lease final : public lease {
public:
    file_lease(std::filesystem::path path, std::string owner, std::chrono::milliseconds duration,
               clock_source& clock);
    result<bool> acquire() override;
    void release() override;

private:
    std::filesystem::path _path;
    std::string _owner;
    std::chrono::milliseconds _duration;
    clock_source& _clock;
};

} // namespace floe::tiering
