#pragma once

#include "config/settings.h"
#include "lake/iceberg_lake.h"
#include "tiering/table_maintainer.h"

#include <memory>

#include <optional>
#include <string>
#include <vector>

namespace floe::app {

struct maintain_request {
    std::optional<std::string> table;       ///< a topic or <namespace>.<table>; all tables when unset
    bool dry_run = false;
    std::optional<std::string> older_than;  ///< duration text: snapshot age (expire), margin (orphans)
    /// compact, manifests, expire, orphans; empty: all four, in that order. "reencrypt"
    /// (--reencrypt) only when asked.
    std::vector<std::string> actions;
};

/// `floe maintain`: runs table maintenance on demand against the configured catalog and
/// warehouse, under the storage worker's lease (refused while a live `floe serve` on the same
/// data directory holds it). Prints a plan (dry run) or a result table. Returns the exit code.
int maintain(const config::settings& s, const maintain_request& req);

/// The storage worker's scheduled maintenance (floe.maintenance.*), nullptr when
/// floe.maintenance.enabled is false. Must not outlive `lake`.
std::unique_ptr<tiering::table_maintainer> make_scheduled_maintainer(const config::settings& s,
                                                                     lake::iceberg_lake& lake);

} // namespace floe::app
