#include "redis/group_state.h"

#include <algorithm>
#include <charconv>

namespace floe::redis {

namespace {

// Lua 5.1 in Redis 7. KEYS[1] the offsets hash, KEYS[2] the fence hash (one slot, see
// group_state.h). A stamp is '<coordinator>,<generation>'; none reads as (0, -1).
constexpr std::string_view groups_lua = R"LUA(
local function stamp_of(v)
  if not v then return 0, -1 end
  local c, g = string.match(v, '^(%-?%d+),(%-?%d+)$')
  return tonumber(c) or 0, tonumber(g) or -1
end

-- KEYS: fence hash. The new coordinator epoch.
redis.register_function('floe_groups_claim', function(keys, args)
  return redis.call('HINCRBY', keys[1], 'coordinator', 1)
end)

-- KEYS: offsets hash, fence hash. ARGV: 'member' | 'simple', coordinator, generation, then
-- field, value pairs. 1, or FLOE_FENCED (a newer claim) / FLOE_STALE (a partition written by a
-- newer coordinator and generation); nothing is written then.
redis.register_function('floe_groups_commit', function(keys, args)
  local kind, c, g = args[1], tonumber(args[2]), tonumber(args[3])
  if (kind ~= 'member' and kind ~= 'simple') or not c or not g or #args < 5 or (#args - 3) % 2 ~= 0 then
    return redis.error_reply('ERR floe_groups_commit: bad arguments')
  end
  if kind == 'simple' then
    c, g = redis.call('HINCRBY', keys[2], 'coordinator', 1), -1
  else
    local current = tonumber(redis.call('HGET', keys[2], 'coordinator') or '0') or 0
    if c < current then
      return redis.error_reply('FLOE_FENCED commit of coordinator epoch ' .. c .. ', generation ' .. g ..
        ' refused: the group was claimed since with epoch ' .. current)
    end
    if c > current then redis.call('HSET', keys[2], 'coordinator', c) end
    for i = 4, #args, 2 do
      local sc, sg = stamp_of(redis.call('HGET', keys[2], args[i]))
      if sc > c or (sc == c and sg > g) then
        return redis.error_reply('FLOE_STALE commit of coordinator epoch ' .. c .. ', generation ' .. g ..
          ' refused: partition ' .. args[i] .. ' was committed by epoch ' .. sc .. ', generation ' .. sg)
      end
    end
  end
  local stamp = c .. ',' .. g
  for i = 4, #args, 2 do
    redis.call('HSET', keys[1], args[i], args[i + 1])
    redis.call('HSET', keys[2], args[i], stamp)
  end
  return 1
end)
)LUA";
constexpr std::string_view groups_library_version = "1";

std::string field_of(const group_offsets::key& k) { return fmt::format("{}:{}", k.second, k.first); }

std::string value_of(const group_offsets::committed& c) {
    return fmt::format("{},{},{}{}", c.offset, c.leader_epoch, c.metadata ? "+" : "-", c.metadata.value_or(""));
}

template <class T>
bool parse_int(std::string_view s, T& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

result<std::pair<group_offsets::key, group_offsets::committed>> decode(std::string_view field, std::string_view value) {
    std::pair<group_offsets::key, group_offsets::committed> out;
    auto colon = field.find(':');
    if (colon == std::string_view::npos || !parse_int(field.substr(0, colon), out.first.second))
        return fail(errc::corrupt, "group offset field '{}' is not <partition>:<topic>", field);
    out.first.first = std::string(field.substr(colon + 1));
    auto c1 = value.find(',');
    auto c2 = c1 == std::string_view::npos ? c1 : value.find(',', c1 + 1);
    if (c2 == std::string_view::npos || c2 + 1 >= value.size() ||
        !parse_int(value.substr(0, c1), out.second.offset) ||
        !parse_int(value.substr(c1 + 1, c2 - c1 - 1), out.second.leader_epoch) ||
        (value[c2 + 1] != '+' && value[c2 + 1] != '-'))
        return fail(errc::corrupt, "group offset value '{}' of {} is not <offset>,<epoch>,<metadata>", value, field);
    if (value[c2 + 1] == '+') out.second.metadata = std::string(value.substr(c2 + 2));
    return out;
}

} // namespace

group_offsets::group_offsets(client& c, std::string ns)
    : _client(c), _ns(std::move(ns)), _groups_key(fmt::format("{{{}}}:groups", _ns)) {}

std::string group_offsets::group_key(std::string_view group) const {
    return fmt::format("{}:offsets:{{{}:g:{}}}", _ns, _ns, group);
}

std::string group_offsets::fence_key(std::string_view group) const {
    return fmt::format("{}:offsets-fence:{{{}:g:{}}}", _ns, _ns, group);
}

result<void> group_offsets::load_functions() {
    if (_loaded.load(std::memory_order_acquire)) return {};
    FLOE_TRY(_client.load_library("floe_groups", groups_lua, groups_library_version));
    _loaded.store(true, std::memory_order_release);
    return {};
}

result<int64_t> group_offsets::claim(std::string_view group) {
    FLOE_TRY(load_functions());
    auto fk = fence_key(group);
    auto r = FLOE_TRY(_client.fcall("floe_groups_claim", {fk}, {}));
    return FLOE_TRY_CTX(r.as_integer(), "floe_groups_claim of group {}", group);
}

result<void> group_offsets::commit(std::string_view group, std::span<const std::pair<key, committed>> entries,
                                   const fence& f) {
    if (entries.empty()) return {};
    if (f.what != fence::kind::unchecked) FLOE_TRY(load_functions());
    FLOE_TRY(_client.command({"SADD", _groups_key, group}));
    std::vector<std::string> owned;
    owned.reserve(entries.size() * 2 + 2);
    owned.push_back(fmt::format("{}", f.coordinator));
    owned.push_back(fmt::format("{}", f.generation));
    for (auto& [k, c] : entries) {
        owned.push_back(field_of(k));
        owned.push_back(value_of(c));
    }
    auto gk = group_key(group);
    if (f.what == fence::kind::unchecked) {
        std::vector<std::string_view> args{"HSET", gk};
        for (size_t i = 2; i < owned.size(); ++i) args.push_back(owned[i]);
        FLOE_TRY(_client.command(std::span<const std::string_view>(args)));
        return {};
    }
    auto fk = fence_key(group);
    std::vector<std::string_view> keys{gk, fk};
    std::vector<std::string_view> args{f.what == fence::kind::simple ? "simple" : "member"};
    for (auto& s : owned) args.push_back(s);
    auto r = _client.fcall("floe_groups_commit", keys, args);
    if (r) return {};
    if (server_error_is(r.error(), "FLOE_FENCED"))
        return fail(errc::conflict, "group {}: {}", group, r.error().message());
    if (server_error_is(r.error(), "FLOE_STALE"))
        return fail(errc::invalid_argument, "group {}: {}", group, r.error().message());
    // Any other refusal (WRONGTYPE, a bad argument) is not "stale": keep it apart from FLOE_STALE.
    if (r.error().code() == errc::invalid_argument)
        return fail(errc::internal, "group {}: floe_groups_commit: {}", group, r.error().message());
    return std::unexpected(std::move(r).error());
}

result<std::map<group_offsets::key, group_offsets::committed>> group_offsets::load(std::string_view group) const {
    auto r = FLOE_TRY(_client.command({"HGETALL", group_key(group)}));
    std::map<key, committed> out;
    for (size_t i = 0; i + 1 < r.size(); i += 2) {
        auto e = FLOE_TRY(decode(r[i].str(), r[i + 1].str()));
        out.emplace(std::move(e.first), std::move(e.second));
    }
    return out;
}

result<std::vector<std::string>> group_offsets::groups() const {
    auto r = FLOE_TRY(_client.command({"SMEMBERS", _groups_key}));
    std::vector<std::string> out;
    for (auto& e : r.elements()) out.push_back(e.str());
    std::sort(out.begin(), out.end());
    return out;
}

result<bool> group_offsets::contains(std::string_view group) const {
    auto r = FLOE_TRY(_client.command({"EXISTS", group_key(group)}));
    return r.integer() > 0;
}

result<void> group_offsets::delete_group(std::string_view group) {
    FLOE_TRY(_client.command({"DEL", group_key(group)}));
    // The fence stays (epochs only grow) and moves on: a commit validated before the deletion
    // and arriving after it is refused instead of bringing the group back.
    FLOE_TRY(_client.command({"HINCRBY", fence_key(group), "coordinator", "1"}));
    FLOE_TRY(_client.command({"SREM", _groups_key, group}));
    return {};
}

result<void> group_offsets::delete_offsets(std::string_view group, std::span<const key> keys) {
    if (keys.empty()) return {};
    auto gk = group_key(group);
    std::vector<std::string> fields;
    for (auto& k : keys) fields.push_back(field_of(k));
    std::vector<std::string_view> args{"HDEL", gk};
    for (auto& f : fields) args.push_back(f);
    FLOE_TRY(_client.command(std::span<const std::string_view>(args)));
    // The last offset gone: the group has none left (a commit in between adds it back).
    if (!FLOE_TRY(contains(group))) FLOE_TRY(_client.command({"SREM", _groups_key, group}));
    return {};
}

producer_ids::producer_ids(client& c, std::string ns, int64_t block)
    : _client(c), _key(fmt::format("{{{}}}:producer-ids", ns)), _block(std::max<int64_t>(block, 1)) {}

result<int64_t> producer_ids::next() {
    std::lock_guard lk(_mu);
    if (_next >= _limit) {
        auto block = fmt::format("{}", _block);
        auto r = FLOE_TRY(_client.command({"INCRBY", _key, block}));
        auto end = FLOE_TRY(r.as_integer());
        _next = 1000 + end - _block;
        _limit = 1000 + end;
    }
    return _next++;
}

} // namespace floe::redis
