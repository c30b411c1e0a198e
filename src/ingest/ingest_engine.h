#pragma once

#include "base/result.h"
#include "config/settings.h"
#include "ingest/jetstream_source.h"
#include "ingest/kafka_source.h"
#include "log/local_tier.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace floe::ingest {

/// Every configured ingest source (floe.ingest.sources.*), started and stopped together.
/// Threads: start/stop from one thread; status() from any.
class ingest_engine {
public:
    ingest_engine(const config::settings& s, log::local_tier& logs, ingest_hooks hooks = {});
    ~ingest_engine();
    /// Starts every source; the first that cannot start stops start-up (its error names it).
    /// Registers the floe_ingest_* metrics (computed at scrape time from status()).
    result<void> start();
    void stop();
    std::vector<source_status> status() const;
    bool empty() const noexcept { return _kafka.empty() && _jetstream.empty(); }

private:
    std::vector<std::unique_ptr<kafka_source>> _kafka;
    std::vector<std::unique_ptr<jetstream_source>> _jetstream;
    uint64_t _collector = 0; ///< floe_ingest_* metrics, registered while started
};

} // namespace floe::ingest
