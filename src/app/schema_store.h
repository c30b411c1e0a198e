#pragma once
// The schema registry's log (schema::registry_log) on each local tier:
// - embedded: `<data-dir>/schemas/schemas.log`, a kafka::framed_log (CRC-framed records, one
//   write + fdatasync per record before the answer, a torn tail cut at open). One process per
//   data directory (floe.lock), so the process's own count of records is the log's length.
// - Redis: the list `{<namespace>:schemas}:log`; a Lua script appends only when LLEN equals the
//   writer's position (atomic on the server), so brokers sharing the Redis namespace never
//   allocate one id twice; durability is Redis's (appendfsync as configured, see the README).
// Adapters live here, like the cluster adapters, so the schema module depends on neither kafka
// nor redis.

#include "schema/store.h"

#include <filesystem>
#include <memory>

namespace floe::redis {
class client;
}

namespace floe::app {

result<std::unique_ptr<schema::registry_log>> open_file_schema_log(const std::filesystem::path& dir);
std::unique_ptr<schema::registry_log> make_redis_schema_log(std::shared_ptr<redis::client> client, std::string ns);

} // namespace floe::app
