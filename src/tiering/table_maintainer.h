#pragma once

#include "base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace floe::tiering {

/// A table's state as maintenance last measured it (the numbers of its floe_table_* gauges) and
/// how the last run of each kind of maintenance ended.
struct table_state {
    size_t data_files = 0;
    size_t small_data_files = 0;
    double avg_data_file_bytes = 0;
    size_t snapshots = 0;
    int64_t metadata_bytes = 0;
    int64_t measured_at_ms = 0;  ///< system clock
    struct run {
        std::string kind;  ///< compact, manifests, expire, orphans
        int64_t at_ms = 0;
        double seconds = 0;
        bool ok = true;
        std::string detail;  ///< what it did, or the error
    };
    std::vector<run> last_runs;  ///< one per kind that has run, in pass order
};

/// Table maintenance (compaction, snapshot expiry, orphan cleanup) as the storage worker runs it
/// on a schedule. Declared here, beside its caller, so tiering does not depend on the module
/// that implements it (maintenance; app wires the two together).
class table_maintainer {
public:
    virtual ~table_maintainer() = default;
    /// One pass over the table of `topic`. Called on the worker's thread while it holds the
    /// lease, after the tick's offload and retention; a long pass delays the next tick.
    virtual result<void> maintain(const std::string& topic) = 0;
    /// The table's state for `topic` (what /v1/topics shows): as the last pass left it, or
    /// measured now (and the gauges set) when none has run yet; nullopt when the topic has no
    /// table. Thread-safe: called from HTTP threads while a pass runs.
    virtual result<std::optional<table_state>> state(const std::string& topic) = 0;
};

} // namespace floe::tiering
