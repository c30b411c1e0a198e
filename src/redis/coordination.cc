#include "redis/coordination.h"

#include "base/random.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace floe::redis {

namespace {

// Lua 5.1 in Redis 7. Times are the server's (TIME); numbers up to 2^53 are exact, and
// milliseconds since the epoch print without an exponent (13-14 digits, "%.14g").
constexpr std::string_view coordination_lua = R"LUA(
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- KEYS: expiry zset, listeners hash, token hash. ARGV: id, token, listeners, ttl_ms.
redis.register_function('floe_coord_broker_heartbeat', function(keys, args)
  local id, token, info, ttl = args[1], args[2], args[3], tonumber(args[4])
  if not id or id == '' or not token or token == '' or not info or not ttl or ttl <= 0 then
    return redis.error_reply('ERR floe_coord_broker_heartbeat: bad arguments')
  end
  local now = now_ms()
  local exp = redis.call('ZSCORE', keys[1], id)
  if exp and tonumber(exp) > now then
    local owner = redis.call('HGET', keys[3], id)
    if owner and owner ~= token then
      return redis.error_reply('FLOE_BROKER_ID_TAKEN broker id ' .. id .. ' is registered by another live process')
    end
  end
  redis.call('ZADD', keys[1], now + ttl, id)
  redis.call('HSET', keys[2], id, info)
  redis.call('HSET', keys[3], id, token)
  return now + ttl
end)

-- Registers a broker whose id is kept with its data directory's token (dir token).
-- KEYS: expiry zset, listeners hash, token hash (id -> instance), bindings hash (dir token -> id),
-- owners hash (id -> dir token). ARGV: id ('' = the id bound to the dir token, else the lowest id
-- neither live nor bound to another directory), dir token, instance ('<dir token>/<random>'),
-- listeners, ttl_ms, takeover ('' or the expiry of a same-directory entry seen not to move),
-- place ('' or '<dir token>/<place>/': the instance prefix of this data directory at this path on
-- this host; the caller holds the directory's lock, so a live entry with it is this broker's
-- previous life, taken over at once).
-- {'OK', id, expiry} | {'TAKEN', id, expiry, now} (another directory's live broker has the id) |
-- {'SAME_DIR', id, expiry, now} (a live entry of this directory by another process: a copy of the
-- directory, or this broker before a crash; the caller watches whether it still heartbeats).
redis.register_function('floe_coord_broker_register', function(keys, args)
  local want, dir, inst, info, ttl, takeover = args[1], args[2], args[3], args[4], tonumber(args[5]), args[6]
  local place = args[7] or ''
  if not want or not dir or dir == '' or not inst or inst == '' or not info or not ttl or ttl <= 0 then
    return redis.error_reply('ERR floe_coord_broker_register: bad arguments')
  end
  local now = now_ms()
  local function live_holder(id)
    local exp = redis.call('ZSCORE', keys[1], id)
    if exp and tonumber(exp) > now then return redis.call('HGET', keys[3], id) or '', tonumber(exp) end
    return nil, 0
  end
  local function dir_of(holder)
    local i = string.find(holder, '/', 1, true)
    if i then return string.sub(holder, 1, i - 1) end
    return holder
  end
  local function previous_life(holder)
    return place ~= '' and string.sub(holder, 1, #place) == place
  end
  local bound = redis.call('HGET', keys[4], dir)
  if bound then
    local h, bexp = live_holder(bound)
    -- Whatever id is asked, this directory's own entry must not be live in another process.
    if h and h ~= inst and dir_of(h) == dir and not previous_life(h) and tonumber(takeover) ~= bexp then
      return {'SAME_DIR', bound, bexp, now}
    end
    -- Taken meanwhile by a broker of another directory (an explicit id): pick another.
    if h and h ~= inst and dir_of(h) ~= dir then bound = nil end
  end
  local id = want
  if id == '' then
    if bound then
      id = bound
    else
      local i = 0
      while true do
        local s = tostring(i)
        local owner = redis.call('HGET', keys[5], s)
        if (not owner or owner == dir) and not live_holder(s) then
          id = s
          break
        end
        i = i + 1
      end
    end
  end
  local h, exp = live_holder(id)
  if h and h ~= inst then
    if dir_of(h) ~= dir then return {'TAKEN', id, exp, now} end
    if not previous_life(h) and tonumber(takeover) ~= exp then return {'SAME_DIR', id, exp, now} end
  end
  local old = redis.call('HGET', keys[5], id)
  if old and old ~= dir then redis.call('HDEL', keys[4], old) end
  local prev = redis.call('HGET', keys[4], dir)
  if prev and prev ~= id then redis.call('HDEL', keys[5], prev) end
  redis.call('HSET', keys[4], dir, id)
  redis.call('HSET', keys[5], id, dir)
  redis.call('ZADD', keys[1], now + ttl, id)
  redis.call('HSET', keys[2], id, info)
  redis.call('HSET', keys[3], id, inst)
  return {'OK', id, now + ttl}
end)

-- KEYS: expiry zset, listeners hash, token hash. Returns {now, id, listeners, expiry, ...}.
redis.register_function('floe_coord_broker_list', function(keys, args)
  local now = now_ms()
  local dead = redis.call('ZRANGEBYSCORE', keys[1], '-inf', now)
  for _, id in ipairs(dead) do
    redis.call('ZREM', keys[1], id)
    redis.call('HDEL', keys[2], id)
    redis.call('HDEL', keys[3], id)
  end
  local live = redis.call('ZRANGEBYSCORE', keys[1], '(' .. now, '+inf', 'WITHSCORES')
  local out = {now}
  for i = 1, #live, 2 do
    out[#out + 1] = live[i]
    out[#out + 1] = redis.call('HGET', keys[2], live[i]) or ''
    out[#out + 1] = live[i + 1]
  end
  return out
end)

-- KEYS: expiry zset, listeners hash, token hash. ARGV: id, token. 1 if removed.
redis.register_function('floe_coord_broker_leave', function(keys, args)
  if redis.call('HGET', keys[3], args[1]) ~= args[2] then return 0 end
  redis.call('ZREM', keys[1], args[1])
  redis.call('HDEL', keys[2], args[1])
  redis.call('HDEL', keys[3], args[1])
  return 1
end)

local function lease_read(key)
  local cur = redis.call('HMGET', key, 'holder', 'epoch', 'expires')
  return cur[1] or '', tonumber(cur[2] or '0') or 0, tonumber(cur[3] or '0') or 0
end

-- KEYS: lease hash. ARGV: holder, ttl_ms. {1|0, holder, epoch, expires, now}.
redis.register_function('floe_coord_lease_acquire', function(keys, args)
  local me, ttl = args[1], tonumber(args[2])
  if not me or me == '' or not ttl or ttl <= 0 then
    return redis.error_reply('ERR floe_coord_lease_acquire: bad arguments')
  end
  local now = now_ms()
  local holder, epoch, expires = lease_read(keys[1])
  if holder ~= '' and holder ~= me and expires > now then
    return {0, holder, epoch, expires, now}
  end
  if holder ~= me or expires <= now then epoch = epoch + 1 end
  redis.call('HSET', keys[1], 'holder', me, 'epoch', epoch, 'expires', now + ttl)
  return {1, me, epoch, now + ttl, now}
end)

-- KEYS: lease hash. ARGV: holder, epoch, ttl_ms. {holder, epoch, expires, now} or FLOE_LEASE_LOST.
redis.register_function('floe_coord_lease_renew', function(keys, args)
  local me, my_epoch, ttl = args[1], tonumber(args[2]), tonumber(args[3])
  if not me or me == '' or not my_epoch or not ttl or ttl <= 0 then
    return redis.error_reply('ERR floe_coord_lease_renew: bad arguments')
  end
  local now = now_ms()
  local holder, epoch, expires = lease_read(keys[1])
  if holder ~= me or epoch ~= my_epoch or expires <= now then
    return redis.error_reply('FLOE_LEASE_LOST ' .. keys[1] .. ' is held by "' .. holder .. '" with epoch ' ..
      epoch .. (expires <= now and ' (expired)' or ''))
  end
  redis.call('HSET', keys[1], 'expires', now + ttl)
  return {me, epoch, now + ttl, now}
end)

-- KEYS: lease hash. ARGV: holder, epoch. 1 if released.
redis.register_function('floe_coord_lease_release', function(keys, args)
  local holder, epoch = lease_read(keys[1])
  if holder ~= args[1] or epoch ~= tonumber(args[2]) then return 0 end
  redis.call('HSET', keys[1], 'holder', '', 'expires', 0)
  return 1
end)

-- KEYS: lease hash. {holder, epoch, expires, now}.
redis.register_function{function_name='floe_coord_lease_get', flags={'no-writes'}, callback=function(keys, args)
  local holder, epoch, expires = lease_read(keys[1])
  return {holder, epoch, expires, now_ms()}
end}
)LUA";

// The text after a function's error code ("FLOE_LEASE_LOST detail" -> "detail").
std::string_view detail_of(const floe::error& e, std::string_view code) {
    std::string_view m = e.message();
    if (m.starts_with(code)) m.remove_prefix(code.size());
    while (m.starts_with(' ')) m.remove_prefix(1);
    return m;
}

std::string random_token() { return fmt::format("{:016x}{:016x}", os_random64(), os_random64()); }

} // namespace

result<void> load_coordination_library(client& c) {
    return c.load_library("floe_coord", coordination_lua, coordination_library_version);
}

// ---- broker registry -------------------------------------------------------------------------

broker_registry::broker_registry(client& c, std::string ns, int32_t id, std::string listeners,
                                 std::chrono::milliseconds ttl, std::string token)
    : _client(c), _id(id), _id_text(std::to_string(id)), _listeners(std::move(listeners)),
      _token(token.empty() ? random_token() : std::move(token)), _ttl(ttl) {
    auto base = fmt::format("{}{{{}.brokers}}", ns, ns);
    _expiry_key = base + ".expiry";
    _listeners_key = base + ".listeners";
    _token_key = base + ".token";
}

result<std::unique_ptr<broker_registry>> broker_registry::create(client& c, std::string ns, int32_t id,
                                                                 std::string listeners, std::chrono::milliseconds ttl,
                                                                 std::string instance_token) {
    if (id < 0) return fail(errc::invalid_argument, "broker id {} is negative", id);
    if (ttl.count() <= 0) return fail(errc::invalid_argument, "broker registry ttl must be positive");
    if (ns.find_first_of("{}") != std::string::npos)
        return fail(errc::invalid_argument, "namespace '{}' must not contain '{{' or '}}'", ns);
    FLOE_TRY(load_coordination_library(c));
    return std::unique_ptr<broker_registry>(
        new broker_registry(c, std::move(ns), id, std::move(listeners), ttl, std::move(instance_token)));
}

result<std::unique_ptr<broker_registry>> broker_registry::register_broker(client& c, std::string ns, registration reg) {
    if (reg.id && *reg.id < 0) return fail(errc::invalid_argument, "broker id {} is negative", *reg.id);
    if (reg.ttl.count() <= 0) return fail(errc::invalid_argument, "broker registry ttl must be positive");
    if (reg.dir_token.empty() || reg.dir_token.find('/') != std::string::npos)
        return fail(errc::invalid_argument, "a data directory token must be non-empty and without '/'");
    if (ns.find_first_of("{}") != std::string::npos)
        return fail(errc::invalid_argument, "namespace '{}' must not contain '{{' or '}}'", ns);
    FLOE_TRY(load_coordination_library(c));
    auto base = fmt::format("{}{{{}.brokers}}", ns, ns);
    const std::vector<std::string> keys{base + ".expiry", base + ".listeners", base + ".token", base + ".bindings",
                                        base + ".owners"};
    // '<dir token>/<place hash>/<random>': the prefix up to the random part names this data
    // directory at this path on this host (FNV-1a of reg.place: no '/' in it).
    std::string prefix;
    if (!reg.place.empty()) {
        uint64_t h = 14695981039346656037ull;
        for (unsigned char ch : reg.place) h = (h ^ ch) * 1099511628211ull;
        prefix = fmt::format("{}/{:016x}/", reg.dir_token, h);
    }
    const auto instance = prefix.empty() ? fmt::format("{}/{}", reg.dir_token, random_token()) : prefix + random_token();
    const auto want = reg.id ? std::to_string(*reg.id) : std::string();
    const auto ttl_text = std::to_string(reg.ttl.count());
    const auto start = std::chrono::steady_clock::now();
    const auto pause = std::clamp(reg.ttl / 20, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
    std::optional<int64_t> watched;                  // the expiry of the same-directory entry first seen
    std::chrono::steady_clock::time_point watched_at; // when it was first seen
    std::string takeover;
    for (;;) {
        auto r = c.fcall("floe_coord_broker_register", {keys[0], keys[1], keys[2], keys[3], keys[4]},
                         {want, reg.dir_token, instance, reg.listeners, ttl_text, takeover, prefix});
        if (!r) {
            if (r.error().retryable() && std::chrono::steady_clock::now() - start < reg.ttl) {
                std::this_thread::sleep_for(pause);
                continue;
            }
            return std::unexpected(std::move(r).error().with_context("registering in the broker registry"));
        }
        if (!r->is_array() || r->size() < 3)
            return fail(errc::internal, "floe_coord_broker_register answered {}", r->debug_string());
        const auto status = (*r)[0].str();
        const auto id_text = (*r)[1].str();
        int32_t id = -1;
        try {
            id = static_cast<int32_t>(std::stol(id_text));
        } catch (const std::exception&) {
            return fail(errc::internal, "floe_coord_broker_register answered id '{}'", id_text);
        }
        const int64_t expiry = FLOE_TRY((*r)[2].as_integer());
        if (status == "OK") {
            auto out = std::unique_ptr<broker_registry>(
                new broker_registry(c, std::move(ns), id, std::move(reg.listeners), reg.ttl, instance));
            return out;
        }
        if (r->size() < 4) return fail(errc::internal, "floe_coord_broker_register answered {}", r->debug_string());
        const int64_t now = FLOE_TRY((*r)[3].as_integer());
        if (status == "TAKEN")
            return fail(errc::already_exists,
                        "broker {} is live, registered from another data directory (if that broker is dead, its "
                        "registration lapses in {} ms)",
                        id, std::max<int64_t>(0, expiry - now));
        if (status != "SAME_DIR")
            return fail(errc::internal, "floe_coord_broker_register answered {}", r->debug_string());
        // A live entry of this very directory, by another process. A live process heartbeats
        // every third of the ttl, which moves the expiry; a dead one's stays where it was.
        auto t = std::chrono::steady_clock::now();
        if (watched && *watched != expiry)
            return fail(errc::conflict,
                        "broker {} is live with this data directory's token: another process runs from a copy of "
                        "this data directory",
                        id);
        if (!watched) {
            watched = expiry;
            watched_at = t;
        }
        if (t - watched_at >= reg.ttl / 2) {
            takeover = std::to_string(*watched); // not moved for half the ttl: a dead process's entry
            continue;
        }
        std::this_thread::sleep_for(pause);
    }
}

result<void> broker_registry::join(std::chrono::milliseconds wait) {
    auto until = std::chrono::steady_clock::now() + wait;
    auto pause = std::clamp(_ttl / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(500));
    while (true) {
        auto r = heartbeat();
        if (r || (r.error().code() != errc::already_exists && !r.error().retryable())) return r;
        if (std::chrono::steady_clock::now() + pause >= until)
            return std::unexpected(std::move(r).error().with_context("broker {} joining for {} ms", _id, wait.count()));
        std::this_thread::sleep_for(pause);
    }
}

broker_registry::~broker_registry() { stop(); }

result<void> broker_registry::heartbeat() {
    auto ttl = std::to_string(_ttl.count());
    auto r = _client.fcall("floe_coord_broker_heartbeat", {_expiry_key, _listeners_key, _token_key},
                           {_id_text, _token, _listeners, ttl});
    if (!r) {
        if (server_error_is(r.error(), "FLOE_BROKER_ID_TAKEN"))
            return fail(errc::already_exists, "{}", detail_of(r.error(), "FLOE_BROKER_ID_TAKEN"));
        return std::unexpected(std::move(r).error());
    }
    return {};
}

result<std::vector<broker_info>> broker_registry::live() {
    auto r = FLOE_TRY(_client.fcall("floe_coord_broker_list", {_expiry_key, _listeners_key, _token_key}, {}));
    if (!r.is_array() || r.size() % 3 != 1)
        return fail(errc::internal, "floe_coord_broker_list answered {}", r.debug_string());
    std::vector<broker_info> out;
    for (size_t i = 1; i + 2 < r.size(); i += 3) {
        broker_info b;
        auto id = FLOE_TRY(r[i].as_integer());
        if (id < 0 || id > INT32_MAX) continue;
        b.id = static_cast<int32_t>(id);
        b.listeners = r[i + 1].str();
        b.expires_ms = FLOE_TRY(r[i + 2].as_integer());
        out.push_back(std::move(b));
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.id < b.id; });
    {
        std::lock_guard lk(_cache_mu);
        bool changed = out.size() != _cache.size();
        for (size_t i = 0; !changed && i < out.size(); ++i)
            changed = out[i].id != _cache[i].id || out[i].listeners != _cache[i].listeners;
        _cache = out;
        if (changed) _generation.fetch_add(1);
    }
    return out;
}

std::vector<broker_info> broker_registry::cached_live() const {
    std::lock_guard lk(_cache_mu);
    return _cache;
}

result<void> broker_registry::leave() {
    FLOE_TRY(_client.fcall("floe_coord_broker_leave", {_expiry_key, _listeners_key, _token_key}, {_id_text, _token}));
    return {};
}

void broker_registry::start(std::chrono::milliseconds interval) {
    std::lock_guard lk(_mu);
    if (_thread.joinable()) return;
    _stopping = false;
    _thread = std::thread([this, interval] {
        std::unique_lock lk(_mu);
        while (!_stopping) {
            lk.unlock();
            if (auto r = heartbeat(); !r) {
                _failures.fetch_add(1, std::memory_order_relaxed);
                spdlog::warn("broker {}: registry heartbeat failed: {}", _id, r.error());
            } else if (auto l = live(); !l) {
                spdlog::warn("broker {}: reading the live brokers failed: {}", _id, l.error());
            }
            lk.lock();
            _cv.wait_for(lk, interval, [this] { return _stopping; });
        }
    });
}

void broker_registry::stop() {
    std::thread t;
    {
        std::lock_guard lk(_mu);
        _stopping = true;
        t = std::move(_thread);
    }
    _cv.notify_all();
    if (t.joinable()) t.join();
}

// ---- leases ----------------------------------------------------------------------------------

result<std::unique_ptr<lease_manager>> lease_manager::create(client& c) {
    FLOE_TRY(load_coordination_library(c));
    return std::unique_ptr<lease_manager>(new lease_manager(c));
}

result<std::optional<lease>> lease_manager::try_acquire(std::string_view key, std::string_view holder,
                                                        std::chrono::milliseconds ttl) {
    if (holder.empty()) return fail(errc::invalid_argument, "lease holder must not be empty");
    if (ttl.count() <= 0) return fail(errc::invalid_argument, "lease ttl must be positive");
    auto sent = std::chrono::steady_clock::now();
    auto ttl_text = std::to_string(ttl.count());
    auto r = FLOE_TRY(_client.fcall("floe_coord_lease_acquire", {key}, {holder, ttl_text}));
    if (!r.is_array() || r.size() != 5)
        return fail(errc::internal, "floe_coord_lease_acquire answered {}", r.debug_string());
    if (FLOE_TRY(r[0].as_integer()) == 0) return std::nullopt;
    lease l;
    l.key = std::string(key);
    l.holder = std::string(holder);
    l.epoch = FLOE_TRY(r[2].as_integer());
    l.expires_ms = FLOE_TRY(r[3].as_integer());
    l.valid_until = sent + ttl;
    return l;
}

result<lease> lease_manager::renew(const lease& l, std::chrono::milliseconds ttl) {
    if (ttl.count() <= 0) return fail(errc::invalid_argument, "lease ttl must be positive");
    auto sent = std::chrono::steady_clock::now();
    auto epoch = std::to_string(l.epoch), ttl_text = std::to_string(ttl.count());
    auto r = _client.fcall("floe_coord_lease_renew", {l.key}, {l.holder, epoch, ttl_text});
    if (!r) {
        if (server_error_is(r.error(), "FLOE_LEASE_LOST"))
            return fail(errc::conflict, "lease lost: {}", detail_of(r.error(), "FLOE_LEASE_LOST"));
        return std::unexpected(std::move(r).error());
    }
    if (!r->is_array() || r->size() != 4)
        return fail(errc::internal, "floe_coord_lease_renew answered {}", r->debug_string());
    lease out = l;
    out.expires_ms = FLOE_TRY((*r)[2].as_integer());
    out.valid_until = sent + ttl;
    return out;
}

result<void> lease_manager::release(const lease& l) {
    auto epoch = std::to_string(l.epoch);
    FLOE_TRY(_client.fcall("floe_coord_lease_release", {l.key}, {l.holder, epoch}));
    return {};
}

result<lease_state> lease_manager::get(std::string_view key) {
    auto r = FLOE_TRY(_client.fcall("floe_coord_lease_get", {key}, {}));
    if (!r.is_array() || r.size() != 4)
        return fail(errc::internal, "floe_coord_lease_get answered {}", r.debug_string());
    lease_state s;
    s.holder = r[0].str();
    s.epoch = FLOE_TRY(r[1].as_integer());
    s.expires_ms = FLOE_TRY(r[2].as_integer());
    s.server_now_ms = FLOE_TRY(r[3].as_integer());
    return s;
}

// ---- rendezvous hashing ----------------------------------------------------------------------

namespace {
constexpr uint64_t mix(uint64_t x) noexcept { // splitmix64 finaliser
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}
} // namespace

uint64_t rendezvous_score(std::string_view item, int32_t broker) noexcept {
    uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a 64 over the item, then mixed with the broker
    for (unsigned char c : item) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return mix(mix(h) ^ (static_cast<uint64_t>(static_cast<uint32_t>(broker)) * 0x9e3779b97f4a7c15ULL));
}

int32_t rendezvous_owner(std::string_view item, std::span<const int32_t> brokers) noexcept {
    int32_t best = -1;
    uint64_t best_score = 0;
    for (auto b : brokers) {
        auto s = rendezvous_score(item, b);
        if (best < 0 || s > best_score || (s == best_score && b < best)) {
            best = b;
            best_score = s;
        }
    }
    return best;
}

std::vector<int32_t> rendezvous_order(std::string_view item, std::span<const int32_t> brokers, size_t n) {
    std::vector<std::pair<uint64_t, int32_t>> scored;
    scored.reserve(brokers.size());
    for (auto b : brokers) scored.emplace_back(rendezvous_score(item, b), b);
    std::sort(scored.begin(), scored.end(), [](auto& a, auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
    std::vector<int32_t> out;
    for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
    return out;
}

std::string partition_item(std::string_view topic, int32_t partition) { return fmt::format("{}/{}", topic, partition); }
std::string group_item(std::string_view group_id) { return fmt::format("group:{}", group_id); }

} // namespace floe::redis
