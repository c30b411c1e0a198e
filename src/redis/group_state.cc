#include "redis/group_state.h"

#include <algorithm>
#include <charconv>

namespace floe::redis {

namespace {

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

result<void> group_offsets::commit(std::string_view group, std::span<const std::pair<key, committed>> entries) {
    if (entries.empty()) return {};
    FLOE_TRY(_client.command({"SADD", _groups_key, group}));
    std::vector<std::string> owned;
    owned.reserve(entries.size() * 2);
    for (auto& [k, c] : entries) {
        owned.push_back(field_of(k));
        owned.push_back(value_of(c));
    }
    auto gk = group_key(group);
    std::vector<std::string_view> args{"HSET", gk};
    for (auto& s : owned) args.push_back(s);
    FLOE_TRY(_client.command(std::span<const std::string_view>(args)));
    return {};
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
