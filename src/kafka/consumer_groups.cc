#include "kafka/consumer_groups.h"

#include "kafka/protocol.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <regex>

namespace floe::kafka {

// ---------------- assignors ----------------

namespace cg_assignor {

bool known(std::string_view name) noexcept {
    return name == "uniform" || name == "range";
}

assignment uniform(std::span<const member_spec> members, const std::map<uuid, int32_t>& partitions,
                   const assignment& previous) {
    assignment out;
    std::map<std::string_view, const member_spec*> by_id;
    for (auto& m : members) {
        out[m.id];
        by_id[m.id] = &m;
    }
    if (members.empty()) return out;
    std::map<std::string_view, size_t> load;
    for (auto& m : members)
        load[m.id] = 0;
    auto subscribed = [&](std::string_view member, const uuid& topic) {
        auto it = by_id.find(member);
        return it != by_id.end() && it->second->topics.contains(topic);
    };
    // Partitions some member subscribes to, and how many members may take each topic.
    std::vector<std::pair<uuid, int32_t>> all;
    size_t eligible_total = 0;
    for (auto& [topic, count] : partitions) {
        bool any = false;
        for (auto& m : members)
            any = any || m.topics.contains(topic);
        if (!any) continue;
        for (int32_t p = 0; p < count; ++p)
            all.emplace_back(topic, p);
        eligible_total += size_t(count);
    }
    // A ceiling for keeping previous owners: the even share, rounded up.
    const size_t ceiling = (eligible_total + members.size() - 1) / members.size();
    std::set<std::pair<uuid, int32_t>> taken;
    // 1. Stickiness: previous owners keep partitions they still subscribe to, up to the share.
    for (auto& [id, parts] : previous) {
        if (!by_id.contains(id)) continue;
        for (auto& [topic, ps] : parts) {
            auto pc = partitions.find(topic);
            if (pc == partitions.end() || !subscribed(id, topic)) continue;
            for (auto p : ps) {
                if (p >= pc->second || load[id] >= ceiling) continue;
                if (!taken.insert({topic, p}).second) continue;
                out[id][topic].insert(p);
                ++load[id];
            }
        }
    }
    // 2. Every other partition to its least-loaded subscriber (ties: the lower member id).
    for (auto& tp : all) {
        if (taken.contains(tp)) continue;
        std::string_view best;
        for (auto& m : members) {
            if (!m.topics.contains(tp.first)) continue;
            if (best.empty() || load[m.id] < load[best]) best = m.id;
        }
        out[std::string(best)][tp.first].insert(tp.second);
        ++load[best];
        taken.insert(tp);
    }
    // 3. Balance: move a partition from the most to the least loaded member that may take it,
    // while that narrows the gap (bounded: each move lowers the sum of squared loads).
    for (size_t round = 0; round < eligible_total * members.size() + 1; ++round) {
        bool moved = false;
        std::vector<const member_spec*> order;
        for (auto& m : members)
            order.push_back(&m);
        std::sort(order.begin(), order.end(), [&](auto* a, auto* b) {
            return load[a->id] != load[b->id] ? load[a->id] > load[b->id] : a->id < b->id;
        });
        for (auto* hi : order) {
            for (auto it = order.rbegin(); it != order.rend() && !moved; ++it) {
                auto* lo = *it;
                if (load[hi->id] <= load[lo->id] + 1) break;
                auto& from = out[hi->id];
                for (auto t = from.begin(); t != from.end() && !moved; ++t) {
                    if (!lo->topics.contains(t->first) || t->second.empty()) continue;
                    int32_t p = *t->second.rbegin();
                    t->second.erase(p);
                    out[lo->id][t->first].insert(p);
                    --load[hi->id];
                    ++load[lo->id];
                    moved = true;
                }
            }
            if (moved) break;
        }
        if (!moved) break;
    }
    for (auto& [_, parts] : out)
        std::erase_if(parts, [](auto& kv) { return kv.second.empty(); });
    return out;
}

assignment range(std::span<const member_spec> members, const std::map<uuid, int32_t>& partitions) {
    assignment out;
    for (auto& m : members)
        out[m.id];
    for (auto& [topic, count] : partitions) {
        std::vector<std::string_view> subs;
        for (auto& m : members)
            if (m.topics.contains(topic)) subs.push_back(m.id);
        if (subs.empty()) continue;
        std::sort(subs.begin(), subs.end());
        const int32_t n = int32_t(subs.size());
        const int32_t base = count / n, extra = count % n;
        int32_t next = 0;
        for (int32_t i = 0; i < n; ++i) {
            int32_t take = base + (i < extra ? 1 : 0);
            for (int32_t k = 0; k < take; ++k)
                out[std::string(subs[size_t(i)])][topic].insert(next++);
        }
    }
    return out;
}

} // namespace cg_assignor

// ---------------- coordinator ----------------

namespace {

using tp = std::pair<uuid, int32_t>;

cg_partitions minus(const cg_partitions& a, const cg_partitions& b) {
    cg_partitions out;
    for (auto& [t, ps] : a) {
        auto it = b.find(t);
        for (auto p : ps)
            if (it == b.end() || !it->second.contains(p)) out[t].insert(p);
    }
    return out;
}

bool empty(const cg_partitions& a) {
    for (auto& [_, ps] : a)
        if (!ps.empty()) return false;
    return true;
}

bool intersects(const cg_partitions& a, const cg_partitions& b) {
    for (auto& [t, ps] : a) {
        auto it = b.find(t);
        if (it == b.end()) continue;
        for (auto p : ps)
            if (it->second.contains(p)) return true;
    }
    return false;
}

cg_partitions normalized(cg_partitions a) {
    std::erase_if(a, [](auto& kv) { return kv.second.empty(); });
    return a;
}

cg_partitions from_wire(const std::vector<cg_topic_partitions>& v) {
    cg_partitions out;
    for (auto& t : v)
        for (auto p : t.partitions)
            out[t.topic_id].insert(p);
    return out;
}

std::vector<cg_topic_partitions> to_wire(const cg_partitions& a) {
    std::vector<cg_topic_partitions> out;
    for (auto& [t, ps] : a) {
        if (ps.empty()) continue;
        out.push_back({t, std::vector<int32_t>(ps.begin(), ps.end())});
    }
    return out;
}

std::string new_member_id() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}

// The static-member leave epoch and the leave epoch.
constexpr int32_t k_leave = -1;
constexpr int32_t k_static_leave = -2;

} // namespace

struct consumer_group_coordinator::member {
    std::string id;
    std::optional<std::string> instance_id;
    std::optional<std::string> rack_id;
    std::string client_id, client_host;
    int32_t epoch = 0;
    int32_t previous_epoch = -1;
    std::vector<std::string> topic_names;
    std::optional<std::string> regex;
    std::optional<std::regex> compiled;
    std::optional<std::string> assignor;
    int32_t rebalance_timeout_ms = 300000;
    cg_partitions assigned; ///< given to the member, owned by it
    cg_partitions revoking; ///< owned by it until it acks the revocation
    std::optional<cg_partitions> last_sent;
    bool left_static = false;
    clock::time_point deadline;
    std::optional<clock::time_point> revoke_deadline;
};

struct consumer_group_coordinator::group {
    std::string name;
    int64_t claimed = 0; ///< the coordinator epoch from offset_store::claim (0: not claimed)
    int32_t epoch = 0;
    int32_t assignment_epoch = 0;
    std::string assignor = "uniform";
    std::map<std::string, member, std::less<>> members;
    cg_assignor::assignment target;
    std::map<tp, std::string>
        owner; ///< partition -> the member that owns it (assigned or revoking)
    std::map<std::string, std::pair<uuid, int32_t>>
        metadata; ///< subscribed topics as last resolved
};

/// Kafka's consumer group states: Empty, Assigning (the target is behind the group epoch),
/// Reconciling (a member is not at its target yet), Stable.
std::string consumer_group_coordinator::state_name(group& g) {
    if (g.members.empty()) return "Empty";
    if (g.assignment_epoch != g.epoch) return "Assigning";
    for (auto& [id, m] : g.members)
        if (m.epoch != g.assignment_epoch || !empty(m.revoking)
            || m.assigned != normalized(g.target[id]))
            return "Reconciling";
    return "Stable";
}

consumer_group_coordinator::consumer_group_coordinator(options opts) : _opts(std::move(opts)) {}
consumer_group_coordinator::~consumer_group_coordinator() = default;

consumer_group_coordinator::group* consumer_group_coordinator::find(std::string_view name) {
    auto it = _groups.find(name);
    return it == _groups.end() ? nullptr : it->second.get();
}

void consumer_group_coordinator::remove_member(group& g, const std::string& id) {
    std::erase_if(g.owner, [&](auto& kv) { return kv.second == id; });
    g.target.erase(id);
    g.members.erase(id);
    ++g.epoch;
}

void consumer_group_coordinator::resolve_and_assign(group& g, std::span<const cg_topic> topics,
                                                    bool bump) {
    // The topics any member subscribes to, by name or regex, that exist now.
    std::map<std::string, std::pair<uuid, int32_t>> meta;
    std::map<std::string, std::set<uuid>> per_member;
    for (auto& [id, m] : g.members) {
        auto& mine = per_member[id];
        for (auto& t : topics) {
            bool wanted = std::find(m.topic_names.begin(), m.topic_names.end(), t.name)
                          != m.topic_names.end();
            if (!wanted && m.compiled) wanted = std::regex_match(t.name, *m.compiled);
            if (!wanted) continue;
            mine.insert(t.id);
            meta[t.name] = {t.id, t.partitions};
        }
    }
    if (meta != g.metadata) {
        g.metadata = std::move(meta);
        bump = true;
    }
    if (bump) ++g.epoch;
    if (g.assignment_epoch == g.epoch && !g.target.empty()) return;
    // The assignor most members ask for; the default when none does.
    std::map<std::string, int> votes;
    for (auto& [_, m] : g.members)
        if (m.assignor) ++votes[*m.assignor];
    g.assignor = _opts.default_assignor;
    int best = 0;
    for (auto& [name, n] : votes)
        if (n > best) best = n, g.assignor = name;
    std::vector<cg_assignor::member_spec> specs;
    for (auto& [id, m] : g.members)
        specs.push_back({id, per_member[id]});
    std::map<uuid, int32_t> parts;
    for (auto& [_, v] : g.metadata)
        parts[v.first] = v.second;
    g.target = g.assignor == "range" ? cg_assignor::range(specs, parts)
                                     : cg_assignor::uniform(specs, parts, g.target);
    g.assignment_epoch = g.epoch;
}

void consumer_group_coordinator::reconcile(group& g, member& m) {
    if (!empty(m.revoking)) return; // waiting for the member to ack the revocation
    const auto& target = g.target[m.id];
    auto revoke = normalized(minus(m.assigned, target));
    if (!empty(revoke)) {
        m.assigned = normalized(minus(m.assigned, revoke));
        m.revoking = std::move(revoke);
        m.revoke_deadline =
            clock::now() + std::chrono::milliseconds(std::max(m.rebalance_timeout_ms, 1000));
        return;
    }
    if (m.epoch != g.assignment_epoch) {
        m.previous_epoch = m.epoch;
        m.epoch = g.assignment_epoch;
    }
    // Give every target partition no other member owns.
    for (auto& [t, ps] : target)
        for (auto p : ps) {
            auto& o = g.owner[{t, p}];
            if (o.empty() || o == m.id) {
                o = m.id;
                m.assigned[t].insert(p);
            }
        }
    std::erase_if(g.owner, [](auto& kv) { return kv.second.empty(); });
}

consumer_group_heartbeat_response
consumer_group_coordinator::heartbeat(const consumer_group_heartbeat_request& req, int16_t version,
                                      std::string_view client_id, std::string_view client_host,
                                      std::span<const cg_topic> topics, clock::time_point now) {
    consumer_group_heartbeat_response resp;
    auto error = [&](kerr e, std::string msg) {
        resp.error_code = int16_t(e);
        resp.error_message = std::move(msg);
        resp.member_epoch = req.member_epoch;
        return resp;
    };
    if (req.group_id.empty()) return error(kerr::invalid_request, "GroupId can't be empty.");
    if (version >= 1 && req.member_id.empty())
        return error(kerr::invalid_request, "MemberId can't be empty.");
    if (req.instance_id && req.instance_id->empty())
        return error(kerr::invalid_request, "InstanceId can't be empty.");
    if (req.member_epoch < k_static_leave)
        return error(kerr::invalid_request, "MemberEpoch is invalid.");
    if (req.member_epoch == 0 && !req.subscribed_topic_names && !req.subscribed_topic_regex)
        return error(kerr::invalid_request,
                     "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.");
    if (req.server_assignor && !cg_assignor::known(*req.server_assignor))
        return error(
            kerr::unsupported_assignor,
            fmt::format("ServerAssignor {} is not supported. Supported assignors: uniform, range.",
                        *req.server_assignor));
    std::optional<std::regex> compiled;
    if (req.subscribed_topic_regex && !req.subscribed_topic_regex->empty()) {
        try {
            compiled.emplace(std::string(*req.subscribed_topic_regex), std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            return error(kerr::invalid_regular_expression,
                         fmt::format("SubscribedTopicRegex {} is not a valid regular expression.",
                                     *req.subscribed_topic_regex));
        }
    }

    std::lock_guard lk(_mu);
    group* g = find(req.group_id);
    if (!g) {
        if (req.member_epoch != 0) return error(kerr::unknown_member_id, "Unknown group.");
        auto ng = std::make_unique<group>();
        ng->name = std::string(req.group_id);
        ng->assignor = _opts.default_assignor;
        g = ng.get();
        _groups.emplace(ng->name, std::move(ng));
    }
    std::string member_id(req.member_id);
    if (member_id.empty()) member_id = new_member_id(); // v0: the coordinator names the member

    auto it = g->members.find(member_id);
    // Leaving.
    if (req.member_epoch == k_leave || req.member_epoch == k_static_leave) {
        resp.member_id = member_id;
        resp.member_epoch = req.member_epoch;
        if (it == g->members.end()) return resp; // already gone: nothing to do
        if (req.member_epoch == k_static_leave && it->second.instance_id) {
            // Kept with its assignment until the session times out or the instance returns.
            it->second.left_static = true;
            it->second.previous_epoch = it->second.epoch;
            it->second.epoch = k_static_leave;
            it->second.deadline = now + _opts.session_timeout;
        } else {
            remove_member(*g, member_id);
        }
        return resp;
    }

    // Every change one heartbeat brings (a new member, its subscription, new topics) is one
    // new group epoch.
    bool bump = false;
    if (req.member_epoch == 0) {
        bool took_over = false;
        if (req.instance_id) {
            // A static member: the instance id names at most one member.
            auto prev = std::find_if(g->members.begin(), g->members.end(), [&](auto& kv) {
                return kv.second.instance_id == *req.instance_id;
            });
            if (prev != g->members.end() && prev->first != member_id) {
                if (!prev->second.left_static)
                    return error(
                        kerr::unreleased_instance_id,
                        fmt::format("Static member {} with instance id {} is still in the group.",
                                    prev->first, *req.instance_id));
                // The instance is back under a new member id: it takes over the old member's
                // epoch and partitions, without a new group epoch.
                member taken = std::move(prev->second);
                std::string old_id = prev->first;
                g->members.erase(prev);
                taken.id = member_id;
                taken.left_static = false;
                taken.last_sent.reset();
                taken.epoch = taken.previous_epoch;
                for (auto& [_, o] : g->owner)
                    if (o == old_id) o = member_id;
                if (auto t = g->target.find(old_id); t != g->target.end()) {
                    auto parts = std::move(t->second);
                    g->target.erase(t);
                    g->target[member_id] = std::move(parts);
                }
                it = g->members.insert_or_assign(member_id, std::move(taken)).first;
                took_over = true;
            }
        }
        if (it == g->members.end()) {
            if (g->members.size() >= _opts.max_size)
                return error(kerr::group_max_size_reached, "The group is full.");
            member m;
            m.id = member_id;
            if (req.instance_id) m.instance_id = std::string(*req.instance_id);
            it = g->members.emplace(member_id, std::move(m)).first;
            bump = true;
        } else if (!took_over) {
            // A known member joining again has lost its state: it owns nothing now.
            auto& m = it->second;
            std::erase_if(g->owner, [&](auto& kv) { return kv.second == m.id; });
            m.assigned.clear();
            m.revoking.clear();
            m.revoke_deadline.reset();
            m.epoch = 0;
            m.last_sent.reset();
        }
    } else {
        if (it == g->members.end())
            return error(kerr::unknown_member_id,
                         fmt::format("Member {} is not a member of group {}.", member_id, g->name));
        auto& m = it->second;
        if (req.member_epoch != m.epoch) {
            bool lost_answer = req.member_epoch == m.previous_epoch
                               && (!req.owned || empty(minus(from_wire(*req.owned), m.assigned)));
            if (!lost_answer)
                return error(kerr::fenced_member_epoch,
                             fmt::format("The member epoch {} is not the current one ({}).",
                                         req.member_epoch, m.epoch));
            m.last_sent.reset(); // answer again in full
        }
    }

    member& m = it->second;
    m.client_id = std::string(client_id);
    m.client_host = std::string(client_host);
    m.deadline = now + _opts.session_timeout;
    m.left_static = false;
    if (req.rack_id) m.rack_id = std::string(*req.rack_id);
    if (req.rebalance_timeout_ms > 0) m.rebalance_timeout_ms = req.rebalance_timeout_ms;
    bool changed = false;
    if (req.subscribed_topic_names) {
        std::vector<std::string> names(req.subscribed_topic_names->begin(),
                                       req.subscribed_topic_names->end());
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        if (names != m.topic_names) m.topic_names = std::move(names), changed = true;
    }
    if (req.subscribed_topic_regex) {
        std::optional<std::string> rx;
        if (!req.subscribed_topic_regex->empty()) rx = std::string(*req.subscribed_topic_regex);
        if (rx != m.regex) {
            m.regex = rx;
            m.compiled = std::move(compiled);
            changed = true;
        }
    }
    if (req.server_assignor && m.assignor != *req.server_assignor) {
        m.assignor = std::string(*req.server_assignor);
        changed = true;
    }
    bump = bump || changed;

    // The ack of a revocation: owned partitions reported without the revoked ones.
    if (req.owned && !empty(m.revoking)) {
        auto owned = from_wire(*req.owned);
        if (!intersects(owned, m.revoking)) {
            for (auto& [t, ps] : m.revoking)
                for (auto p : ps)
                    if (auto o = g->owner.find({t, p}); o != g->owner.end() && o->second == m.id)
                        g->owner.erase(o);
            m.revoking.clear();
            m.revoke_deadline.reset();
        }
    }

    resolve_and_assign(*g, topics, bump);
    reconcile(*g, m);

    resp.member_id = member_id;
    resp.member_epoch = m.epoch;
    resp.heartbeat_interval_ms = int32_t(_opts.heartbeat_interval.count());
    const bool owned_differs =
        req.owned && normalized(from_wire(*req.owned)) != normalized(m.assigned);
    if (req.member_epoch == 0 || !m.last_sent || *m.last_sent != m.assigned || owned_differs) {
        resp.assignment = to_wire(m.assigned);
        m.last_sent = m.assigned;
    }
    return resp;
}

consumer_group_describe_response::group
consumer_group_coordinator::describe(std::string_view name, std::span<const cg_topic> topics) {
    consumer_group_describe_response::group out;
    out.group_id = std::string(name);
    std::lock_guard lk(_mu);
    group* g = find(name);
    if (!g) {
        out.error_code = int16_t(kerr::group_id_not_found);
        out.error_message = fmt::format("Group {} not found.", name);
        return out;
    }
    auto described = [&](const cg_partitions& a) {
        std::vector<consumer_group_describe_response::topic_partitions> v;
        for (auto& [t, ps] : a) {
            if (ps.empty()) continue;
            std::string tname;
            for (auto& tt : topics)
                if (tt.id == t) tname = tt.name;
            v.push_back({t, tname, std::vector<int32_t>(ps.begin(), ps.end())});
        }
        return v;
    };
    out.group_state = state_name(*g);
    out.group_epoch = g->epoch;
    out.assignment_epoch = g->assignment_epoch;
    out.assignor_name = g->assignor;
    for (auto& [id, m] : g->members) {
        auto& d = out.members.emplace_back();
        d.member_id = id;
        d.instance_id = m.instance_id;
        d.rack_id = m.rack_id;
        d.member_epoch = m.epoch;
        d.client_id = m.client_id;
        d.client_host = m.client_host;
        d.subscribed_topic_names = m.topic_names;
        d.subscribed_topic_regex = m.regex;
        d.assignment = described(m.assigned);
        d.target_assignment = described(g->target[id]);
    }
    return out;
}

std::optional<int16_t> consumer_group_coordinator::validate_commit(std::string_view name,
                                                                   std::string_view member_id,
                                                                   int32_t epoch, int16_t version,
                                                                   int64_t* claimed) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    if (!g) return std::nullopt;
    if (claimed) *claimed = g->claimed;
    // Without a member (admin clients, manual assignment): only while the group is empty.
    if (epoch < 0 && member_id.empty())
        return g->members.empty() ? int16_t(0) : int16_t(kerr::unknown_member_id);
    auto it = g->members.find(member_id);
    if (it == g->members.end()) return int16_t(kerr::unknown_member_id);
    if (version < 9) return int16_t(kerr::unsupported_version);
    if (epoch != it->second.epoch) return int16_t(kerr::stale_member_epoch);
    return int16_t(0);
}

std::optional<int16_t> consumer_group_coordinator::validate_fetch(
    std::string_view name, std::optional<std::string_view> member_id, int32_t epoch) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    if (!g) return std::nullopt;
    if (!member_id) return int16_t(0);
    auto it = g->members.find(*member_id);
    if (it == g->members.end()) return int16_t(kerr::unknown_member_id);
    if (epoch != it->second.epoch) return int16_t(kerr::stale_member_epoch);
    return int16_t(0);
}

bool consumer_group_coordinator::has_members(std::string_view name) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    return g && !g->members.empty();
}

std::vector<std::pair<std::string, std::string>> consumer_group_coordinator::list() {
    std::lock_guard lk(_mu);
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& [name, g] : _groups)
        out.emplace_back(name, state_name(*g));
    return out;
}

int16_t consumer_group_coordinator::delete_group(std::string_view name) {
    std::lock_guard lk(_mu);
    auto it = _groups.find(name);
    if (it == _groups.end()) return int16_t(kerr::group_id_not_found);
    if (!it->second->members.empty()) return int16_t(kerr::non_empty_group);
    _groups.erase(it);
    return 0;
}

std::optional<int64_t> consumer_group_coordinator::claimed(std::string_view name) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    return g ? std::optional<int64_t>(g->claimed) : std::nullopt;
}

void consumer_group_coordinator::create(std::string_view name, int64_t claimed) {
    std::lock_guard lk(_mu);
    if (find(name)) return;
    auto ng = std::make_unique<group>();
    ng->name = std::string(name);
    ng->assignor = _opts.default_assignor;
    ng->claimed = claimed;
    _groups.emplace(ng->name, std::move(ng));
}

bool consumer_group_coordinator::drop(std::string_view name, std::optional<int64_t> claimed) {
    std::lock_guard lk(_mu);
    auto it = _groups.find(name);
    if (it == _groups.end()) return false;
    if (claimed ? it->second->claimed != *claimed : (!it->second->members.empty() || it->second->claimed == 0))
        return false;
    if (claimed)
        spdlog::warn("consumer group {}: a newer coordinator claimed it (this state had epoch {}); {} member(s) "
                     "will join again",
                     name, *claimed, it->second->members.size());
    _groups.erase(it);
    return true;
}

void consumer_group_coordinator::tick(clock::time_point now) {
    std::lock_guard lk(_mu);
    for (auto& [name, g] : _groups) {
        std::vector<std::string> gone;
        for (auto& [id, m] : g->members) {
            if (m.deadline <= now) {
                spdlog::info("consumer group {}: member {} session timed out", name, id);
                gone.push_back(id);
            } else if (m.revoke_deadline && *m.revoke_deadline <= now) {
                spdlog::info("consumer group {}: member {} did not revoke in its rebalance timeout",
                             name, id);
                gone.push_back(id);
            }
        }
        for (auto& id : gone)
            remove_member(*g, id);
    }
}

cg_partitions consumer_group_coordinator::target_of(std::string_view name,
                                                    std::string_view member_id) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    if (!g) return {};
    auto it = g->target.find(std::string(member_id));
    return it == g->target.end() ? cg_partitions{} : normalized(it->second);
}

int32_t consumer_group_coordinator::group_epoch(std::string_view name) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    return g ? g->epoch : -1;
}

} // namespace floe::kafka
