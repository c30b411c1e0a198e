#pragma once
// Internal to the redis module and its test fixtures: hiredis's reply tree as a redis::reply.

#include "redis/client.h"

#include <hiredis/hiredis.h>

namespace floe::redis {

/// Deep copy of a hiredis reply (the caller still frees `r`).
reply from_hiredis(const redisReply* r);

} // namespace floe::redis
