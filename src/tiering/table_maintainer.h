#pragma once

#include "base/result.h"

#include <string>

namespace floe::tiering {

/// Table maintenance (compaction, snapshot expiry, orphan cleanup) as the storage worker runs it
/// on a schedule. Declared here, beside its caller, so tiering does not depend on the module
/// that implements it (maintenance; app wires the two together).
class table_maintainer {
public:
    virtual ~table_maintainer() = default;
    /// One pass over the table of `topic`. Called on the worker's thread while it holds the
    /// lease, after the tick's offload and retention; a long pass delays the next tick.
    virtual result<void> maintain(const std::string& topic) = 0;
};

} // namespace floe::tiering
