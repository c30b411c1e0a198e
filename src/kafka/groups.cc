#include "kafka/groups.h"

#include "base/uuid.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace floe::kafka {

// ====================== offset_store ======================

namespace {

enum : uint8_t { rec_commit = 1, rec_delete_group = 2, rec_delete_offset = 3 };

void put_str(byte_buffer& b, std::string_view s) {
    kwriter w(b, false);
    w.str(s);
}

void encode_commit(byte_buffer& b, std::string_view group, const offset_store::key& k,
                   const offset_store::committed& c) {
    b.push_back(rec_commit);
    put_str(b, group);
    put_str(b, k.first);
    kwriter w(b, false);
    w.i32(k.second);
    w.i64(c.offset);
    w.i32(c.leader_epoch);
    w.nstr(c.metadata ? std::optional<std::string_view>(*c.metadata) : std::nullopt);
}

} // namespace

result<std::unique_ptr<offset_store>> offset_store::open(const std::filesystem::path& dir) {
    return std::unique_ptr<offset_store>(FLOE_TRY(file_offset_store::open(dir)));
}

std::optional<offset_store::committed> offset_store::get(std::string_view group, const key& k) const {
    auto all = load(group);
    if (!all) {
        spdlog::warn("group {} offsets: {}", group, all.error());
        return std::nullopt;
    }
    auto it = all->find(k);
    if (it == all->end()) return std::nullopt;
    return it->second;
}

std::map<offset_store::key, offset_store::committed> offset_store::all(std::string_view group) const {
    auto all = load(group);
    if (!all) {
        spdlog::warn("group {} offsets: {}", group, all.error());
        return {};
    }
    return std::move(*all);
}

std::vector<std::string> offset_store::groups() const {
    auto l = list();
    if (!l) {
        spdlog::warn("listing groups with committed offsets: {}", l.error());
        return {};
    }
    return std::move(*l);
}

bool offset_store::has_group(std::string_view group) const {
    auto c = contains(group);
    if (!c) {
        spdlog::warn("group {} offsets: {}", group, c.error());
        return false;
    }
    return *c;
}

result<std::unique_ptr<file_offset_store>> file_offset_store::open(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(errc::io_error, "create {}: {}", dir.string(), ec.message());
    auto path = dir / "offsets.log";
    std::unique_ptr<file_offset_store> s(new file_offset_store());
    auto replay = [&](bytes_view payload) {
        kreader k(payload, false);
        auto apply = [&]() -> result<void> {
            uint8_t type = uint8_t(FLOE_TRY(k.i8()));
            std::string group(FLOE_TRY(k.str()));
            if (type == rec_delete_group) {
                s->_groups.erase(group);
                return {};
            }
            std::string topic(FLOE_TRY(k.str()));
            int32_t part = FLOE_TRY(k.i32());
            if (type == rec_delete_offset) { // OffsetDelete
                if (auto g = s->_groups.find(group); g != s->_groups.end()) {
                    g->second.erase({topic, part});
                    if (g->second.empty()) s->_groups.erase(g);
                }
                return {};
            }
            committed c;
            c.offset = FLOE_TRY(k.i64());
            c.leader_epoch = FLOE_TRY(k.i32());
            auto md = FLOE_TRY(k.nstr());
            if (md) c.metadata = std::string(*md);
            s->_groups[group][{topic, part}] = std::move(c);
            return {};
        };
        // A record is one commit request: several entries back to back.
        while (k.remaining() > 0)
            if (!apply()) return false;
        return true;
    };
    auto compacted = [&] {
        std::vector<byte_buffer> out;
        for (auto& [g, entries] : s->_groups) {
            byte_buffer payload;
            for (auto& [k, c] : entries) encode_commit(payload, g, k, c);
            if (!payload.empty()) out.push_back(std::move(payload));
        }
        return out;
    };
    size_t records = 0;
    s->_log = FLOE_TRY(framed_log::open(path, "offsets log", replay, compacted, &records));
    spdlog::info("offsets log {}: {} records, {} groups", path.string(), records,
                 s->_groups.size());
    return s;
}

file_offset_store::~file_offset_store() = default;

result<void> file_offset_store::append_record(const byte_buffer& payload) {
    return _log->append(payload);
}

result<int64_t> offset_store::claim(std::string_view) { return 0; }

// One process writes this store, and a commit is validated and written on the request's own
// thread: nothing can arrive late from another coordinator, so the fence is not needed.
result<void> file_offset_store::commit(std::string_view group,
                                  std::span<const std::pair<key, committed>> entries,
                                  const commit_fence&) {
    if (entries.empty()) return {};
    byte_buffer payload;
    for (auto& [k, c] : entries) encode_commit(payload, group, k, c);
    std::lock_guard lk(_mu);
    FLOE_TRY(append_record(payload));
    auto& g = _groups[std::string(group)];
    for (auto& [k, c] : entries) g[k] = c;
    return {};
}

result<std::map<offset_store::key, offset_store::committed>> file_offset_store::load(std::string_view group) const {
    std::lock_guard lk(_mu);
    auto g = _groups.find(group);
    if (g == _groups.end()) return std::map<key, committed>{};
    return g->second;
}

result<std::vector<std::string>> file_offset_store::list() const {
    std::lock_guard lk(_mu);
    std::vector<std::string> out;
    for (auto& [g, _] : _groups) out.push_back(g);
    return out;
}

result<bool> file_offset_store::contains(std::string_view group) const {
    std::lock_guard lk(_mu);
    return _groups.contains(group);
}

result<void> file_offset_store::delete_group(std::string_view group) {
    byte_buffer payload;
    payload.push_back(rec_delete_group);
    put_str(payload, group);
    std::lock_guard lk(_mu);
    FLOE_TRY(append_record(payload));
    if (auto it = _groups.find(group); it != _groups.end()) _groups.erase(it);
    return {};
}

result<void> file_offset_store::delete_offsets(std::string_view group, std::span<const key> keys) {
    byte_buffer payload;
    for (auto& k : keys) {
        payload.push_back(rec_delete_offset);
        put_str(payload, group);
        put_str(payload, k.first);
        kwriter(payload, false).i32(k.second);
    }
    if (payload.empty()) return {};
    std::lock_guard lk(_mu);
    FLOE_TRY(append_record(payload));
    if (auto g = _groups.find(group); g != _groups.end()) {
        for (auto& k : keys) g->second.erase(k);
        if (g->second.empty()) _groups.erase(g);
    }
    return {};
}

// ====================== group_coordinator ======================

namespace {

enum group_state : int { st_empty, st_preparing, st_completing, st_stable, st_dead };

using protocol_list = std::vector<std::pair<std::string, byte_buffer>>;

bool same_protocols(const protocol_list& have, const join_group_request& req) {
    if (have.size() != req.protocols.size()) return false;
    for (size_t i = 0; i < have.size(); ++i) {
        auto& p = req.protocols[i];
        if (have[i].first != p.name) return false;
        if (!std::equal(have[i].second.begin(), have[i].second.end(), p.metadata.begin(),
                        p.metadata.end()))
            return false;
    }
    return true;
}

join_group_response join_error(int16_t err, std::string_view member_id) {
    join_group_response r;
    r.error_code = err;
    r.member_id = std::string(member_id);
    return r;
}

sync_group_response sync_error(int16_t err) {
    sync_group_response r;
    r.error_code = err;
    return r;
}

/// The partitions of a "consumer" protocol assignment (version, [topic, [partition]], user
/// data: the layout every Kafka consumer client uses), or nullopt if the bytes are not one.
std::optional<std::set<std::pair<std::string, int32_t>>> consumer_assignment(bytes_view bytes) {
    kreader r(bytes, false);
    auto parse = [&]() -> result<std::set<std::pair<std::string, int32_t>>> {
        std::set<std::pair<std::string, int32_t>> out;
        FLOE_TRY(r.i16()); // version
        int32_t topics = FLOE_TRY(r.array_len(4));
        for (int32_t t = 0; t < topics; ++t) {
            std::string topic(FLOE_TRY(r.str()));
            int32_t parts = FLOE_TRY(r.array_len(4));
            for (int32_t p = 0; p < parts; ++p) out.emplace(topic, FLOE_TRY(r.i32()));
        }
        return out;
    };
    auto got = parse();
    if (!got) return std::nullopt;
    return std::move(*got);
}

} // namespace

std::string_view group_state_name(int s) noexcept {
    switch (s) {
    case st_empty: return "Empty";
    case st_preparing: return "PreparingRebalance";
    case st_completing: return "CompletingRebalance";
    case st_stable: return "Stable";
    default: return "Dead";
    }
}

struct group_coordinator::member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    std::string protocol_type;
    protocol_list protocols;
    int32_t session_timeout_ms = 10000;
    int32_t rebalance_timeout_ms = 60000;
    clock::time_point last_seen;
    /// The JoinGroup in flight (empty: none) and its ticket.
    join_callback join_waiter;
    uint64_t join_ticket = 0;
    /// The SyncGroup waiting for the leader's assignment (empty: none) and its ticket.
    sync_callback sync_waiter;
    uint64_t sync_ticket = 0;
    byte_buffer assignment;

    bool supports(std::string_view protocol) const {
        return std::any_of(protocols.begin(), protocols.end(),
                           [&](auto& p) { return p.first == protocol; });
    }
    /// A member with a request in flight is waiting for us, not silent: it does not expire.
    bool waiting() const { return bool(join_waiter) || bool(sync_waiter); }
    void answer_join(join_group_response r) {
        auto cb = std::move(join_waiter);
        join_waiter = nullptr;
        cb(std::move(r));
    }
    void answer_sync(sync_group_response r) {
        auto cb = std::move(sync_waiter);
        sync_waiter = nullptr;
        cb(std::move(r));
    }
};

struct group_coordinator::group {
    std::string name;
    int64_t claimed = 0; ///< the coordinator epoch from offset_store::claim (0: not claimed)
    int state = st_empty;
    int32_t generation = 0;
    std::string protocol_type;
    std::string protocol_name;
    std::string leader;
    std::vector<std::unique_ptr<member>> members; ///< join order
    clock::time_point rebalance_deadline;
    clock::time_point initial_deadline;

    member* find(std::string_view id) {
        for (auto& m : members)
            if (m->id == id) return m.get();
        return nullptr;
    }
    member* find_instance(std::string_view instance_id) {
        for (auto& m : members)
            if (m->instance_id && *m->instance_id == instance_id) return m.get();
        return nullptr;
    }
};

group_coordinator::group_coordinator(offset_store& offsets, options opts)
    : _offsets(offsets), _opts(opts), _consumer(opts.consumer) {}

bool group_coordinator::classic_has_members(std::string_view name) {
    std::lock_guard lk(_mu);
    group* g = find(name);
    return g && !g->members.empty();
}

group_coordinator::~group_coordinator() = default;

group_coordinator::group* group_coordinator::find(std::string_view name) {
    auto it = _groups.find(name);
    return it == _groups.end() ? nullptr : it->second.get();
}

int16_t group_coordinator::check_member(group* g, std::string_view member_id,
                                        std::optional<std::string_view> instance_id,
                                        member*& out) {
    out = nullptr;
    if (!g) return int16_t(kerr::unknown_member_id);
    if (instance_id) {
        member* s = g->find_instance(*instance_id);
        if (!s) return int16_t(kerr::unknown_member_id);
        // Another process took this instance id over: this one is fenced for good.
        if (s->id != member_id) return int16_t(kerr::fenced_instance_id);
        out = s;
        return 0;
    }
    out = g->find(member_id);
    return out ? 0 : int16_t(kerr::unknown_member_id);
}

uint64_t group_coordinator::park_join(member& m, join_callback cb) {
    if (m.join_waiter) m.answer_join(join_error(int16_t(kerr::rebalance_in_progress), m.id));
    m.join_waiter = std::move(cb);
    m.join_ticket = ++_tickets;
    return m.join_ticket;
}

uint64_t group_coordinator::park_sync(member& m, sync_callback cb) {
    if (m.sync_waiter) m.answer_sync(sync_error(int16_t(kerr::rebalance_in_progress)));
    m.sync_waiter = std::move(cb);
    m.sync_ticket = ++_tickets;
    return m.sync_ticket;
}

void group_coordinator::prepare_rebalance(group& g, clock::time_point now) {
    if (g.state == st_preparing) return;
    bool was_empty = g.state == st_empty;
    g.state = st_preparing;
    int32_t max_rebalance = 0;
    for (auto& m : g.members) {
        max_rebalance = std::max(max_rebalance, m->rebalance_timeout_ms);
        // The generation they wait to be assigned in is over: they must rejoin. JoinGroups in
        // flight stay: those members count as joined for the next generation.
        if (m->sync_waiter) m->answer_sync(sync_error(int16_t(kerr::rebalance_in_progress)));
    }
    g.rebalance_deadline = now + std::chrono::milliseconds(std::max(max_rebalance, 1000));
    // A new group waits a moment so members starting together land in one generation.
    g.initial_deadline = was_empty ? now + _opts.initial_rebalance_delay : now;
}

join_group_response group_coordinator::join_answer(const group& g, const member& m,
                                                   bool with_members) const {
    join_group_response r;
    r.generation_id = g.generation;
    r.protocol_type = g.protocol_type;
    r.protocol_name = g.protocol_name;
    r.leader = g.leader;
    r.member_id = m.id;
    if (with_members) {
        for (auto& o : g.members) {
            join_group_response::member jm;
            jm.member_id = o->id;
            jm.group_instance_id = o->instance_id;
            for (auto& [name, md] : o->protocols)
                if (name == g.protocol_name) jm.metadata = md;
            r.members.push_back(std::move(jm));
        }
    }
    return r;
}

void group_coordinator::maybe_complete(group& g, clock::time_point now) {
    if (g.state != st_preparing) return;
    bool all_joined = std::all_of(g.members.begin(), g.members.end(),
                                  [](auto& m) { return bool(m->join_waiter); });
    if (!((all_joined && now >= g.initial_deadline) || now >= g.rebalance_deadline)) return;
    // Members that did not rejoin in time are out (nothing of theirs is waiting: a SyncGroup
    // was answered when the rebalance began).
    std::erase_if(g.members, [&](auto& m) {
        if (m->join_waiter) return false;
        spdlog::info("group {}: member {} did not rejoin in time", g.name, m->id);
        return true;
    });
    ++g.generation;
    if (g.members.empty()) {
        g.state = st_empty;
        g.leader.clear();
        g.protocol_name.clear();
        return;
    }
    // Pick the first protocol of the leader's preference list that every member supports
    // (join() refuses members that share none with the rest).
    if (!g.find(g.leader)) g.leader = g.members.front()->id;
    auto* leader = g.find(g.leader);
    g.protocol_name.clear();
    for (auto& [name, _] : leader->protocols) {
        if (std::all_of(g.members.begin(), g.members.end(),
                        [&](auto& m) { return m->supports(name); })) {
            g.protocol_name = name;
            break;
        }
    }
    g.state = st_completing;
    for (auto& m : g.members) {
        m->assignment.clear();
        m->last_seen = now; // the session restarts with the answer
        m->answer_join(join_answer(g, *m, m->id == g.leader));
    }
    spdlog::info("group {}: generation {} with {} members, leader {}, protocol {}", g.name,
                 g.generation, g.members.size(), g.leader, g.protocol_name);
}

void group_coordinator::remove_member(group& g, std::string id, clock::time_point now,
                                      int16_t err) {
    auto it = std::find_if(g.members.begin(), g.members.end(),
                           [&](auto& m) { return m->id == id; });
    if (it == g.members.end()) return;
    if ((*it)->join_waiter) (*it)->answer_join(join_error(err, id));
    if ((*it)->sync_waiter) (*it)->answer_sync(sync_error(err));
    g.members.erase(it);
    if (g.leader == id) g.leader.clear();
    if (g.members.empty()) {
        if (g.state != st_empty) ++g.generation;
        g.state = st_empty;
        g.leader.clear();
        g.protocol_name.clear();
        return;
    }
    if (g.state == st_preparing) maybe_complete(g, now);
    else prepare_rebalance(g, now);
}

group_coordinator::join_result group_coordinator::join(const join_group_request& req,
                                                       std::string_view client_id,
                                                       std::string_view client_host,
                                                       clock::time_point now, join_callback cb) {
    join_result out;
    auto& r = out.response;
    r.member_id = std::string(req.member_id);
    if (req.group_id.empty()) {
        r.error_code = int16_t(kerr::invalid_group_id);
        return out;
    }
    if (req.session_timeout_ms < _opts.min_session_timeout_ms
        || req.session_timeout_ms > _opts.max_session_timeout_ms) {
        r.error_code = int16_t(kerr::invalid_session_timeout);
        return out;
    }
    if (req.protocols.empty() || req.protocol_type.empty()) {
        r.error_code = int16_t(kerr::inconsistent_group_protocol);
        return out;
    }
    // Lock order: this mutex, then the consumer groups' (never the other way).
    std::lock_guard lk(_mu);
    if (_consumer.has_members(req.group_id)) {
        r.error_code = int16_t(kerr::inconsistent_group_protocol);
        return out;
    }
    auto& slot = _groups[std::string(req.group_id)];
    if (!slot) {
        slot = std::make_unique<group>();
        slot->name = std::string(req.group_id);
    }
    group& g = *slot;
    if (g.state == st_dead) g.state = st_empty;
    if (!g.members.empty() && g.protocol_type != req.protocol_type) {
        r.error_code = int16_t(kerr::inconsistent_group_protocol);
        return out;
    }
    // The member must share a protocol with every other member.
    bool fits = std::any_of(req.protocols.begin(), req.protocols.end(), [&](auto& p) {
        return std::all_of(g.members.begin(), g.members.end(), [&](auto& o) {
            bool self = req.group_instance_id && o->instance_id == *req.group_instance_id;
            return self || o->id == req.member_id || o->supports(p.name);
        });
    });
    if (!fits) {
        r.error_code = int16_t(kerr::inconsistent_group_protocol);
        return out;
    }

    member* m = nullptr;
    bool changed = false;
    // Set when a static member comes back under a new member id: the leader id to report.
    std::optional<std::string> static_rejoin_leader;
    if (req.group_instance_id && req.member_id.empty()) {
        if (member* s = g.find_instance(*req.group_instance_id)) {
            // A restart (or a second process) with this instance id: it takes the member over
            // and the old member id is fenced.
            std::string old_id = s->id;
            if (s->join_waiter)
                s->answer_join(join_error(int16_t(kerr::fenced_instance_id), old_id));
            if (s->sync_waiter) s->answer_sync(sync_error(int16_t(kerr::fenced_instance_id)));
            static_rejoin_leader = g.leader;
            s->id = fmt::format("{}-{}", client_id.empty() ? "member" : client_id,
                                uuid::random().to_string());
            if (g.leader == old_id) g.leader = s->id;
            spdlog::info("group {}: static member {} rejoins as {} (was {})", g.name,
                         *req.group_instance_id, s->id, old_id);
            m = s;
        }
    } else if (!req.member_id.empty()) {
        member* found = nullptr;
        if (int16_t err = check_member(&g, req.member_id, req.group_instance_id, found)) {
            r.error_code = err;
            return out;
        }
        m = found;
        changed = !same_protocols(m->protocols, req);
    }
    if (!m) {
        auto nm = std::make_unique<member>();
        nm->id = fmt::format("{}-{}", client_id.empty() ? "member" : client_id,
                             uuid::random().to_string());
        nm->instance_id = req.group_instance_id ? std::optional<std::string>(*req.group_instance_id)
                                                : std::nullopt;
        m = nm.get();
        g.members.push_back(std::move(nm));
        changed = true;
    }
    m->client_id = std::string(client_id);
    m->client_host = std::string(client_host);
    m->protocol_type = std::string(req.protocol_type);
    m->protocols.clear();
    for (auto& p : req.protocols)
        m->protocols.emplace_back(std::string(p.name),
                                  byte_buffer(p.metadata.begin(), p.metadata.end()));
    m->session_timeout_ms = req.session_timeout_ms;
    m->rebalance_timeout_ms = req.rebalance_timeout_ms > 0 ? req.rebalance_timeout_ms
                                                          : req.session_timeout_ms;
    m->last_seen = now;
    g.protocol_type = std::string(req.protocol_type);

    if (static_rejoin_leader) {
        // As Kafka: in a Stable group whose protocol still fits, the member is answered with
        // the current generation and fetches its old assignment with SyncGroup; no rebalance.
        // It is told the old leader id, so it does not take itself for the leader and compute
        // an assignment a Stable group would not hand out.
        if (g.state == st_stable && m->supports(g.protocol_name)) {
            r = join_answer(g, *m, false);
            r.leader = *static_rejoin_leader;
            return out;
        }
        prepare_rebalance(g, now);
    } else {
        switch (g.state) {
        case st_completing:
            // Same protocols: a resent JoinGroup (lost answer); answer it again.
            if (!changed) {
                r = join_answer(g, *m, m->id == g.leader);
                return out;
            }
            prepare_rebalance(g, now);
            break;
        case st_stable:
            // The leader rejoining or changed metadata (e.g. cooperative owned partitions)
            // starts a rebalance; anyone else with unchanged metadata gets the current state.
            if (!changed && m->id != g.leader) {
                r = join_answer(g, *m, false);
                return out;
            }
            prepare_rebalance(g, now);
            break;
        default: prepare_rebalance(g, now); break;
        }
    }
    // Wait with the others. This join may be the last one the generation waited for: then the
    // answer arrives here at once.
    std::optional<join_group_response> at_once;
    park_join(*m, [&at_once](join_group_response a) { at_once = std::move(a); });
    maybe_complete(g, now);
    if (at_once) {
        r = std::move(*at_once);
        return out;
    }
    m->join_waiter = std::move(cb);
    out.pending = true;
    out.ticket = m->join_ticket;
    r.member_id = m->id;
    return out;
}

bool group_coordinator::cancel_join(std::string_view group_id, std::string_view member_id,
                                    uint64_t ticket, clock::time_point now) {
    std::lock_guard lk(_mu);
    group* g = find(group_id);
    member* m = g ? g->find(member_id) : nullptr;
    if (!m || !m->join_waiter || m->join_ticket != ticket) return false;
    m->join_waiter = nullptr;
    m->last_seen = now;
    return true;
}

group_coordinator::sync_result group_coordinator::sync(const sync_group_request& req,
                                                       clock::time_point now, sync_callback cb) {
    sync_result out;
    auto& r = out.response;
    std::lock_guard lk(_mu);
    group* g = find(req.group_id);
    member* m = nullptr;
    if (int16_t err = check_member(g, req.member_id, req.group_instance_id, m)) {
        r.error_code = err;
        return out;
    }
    m->last_seen = now;
    if (req.generation_id != g->generation) {
        r.error_code = int16_t(kerr::illegal_generation);
        return out;
    }
    if ((req.protocol_type && *req.protocol_type != g->protocol_type)
        || (req.protocol_name && *req.protocol_name != g->protocol_name)) {
        r.error_code = int16_t(kerr::inconsistent_group_protocol);
        return out;
    }
    auto answer = [&](const member& x) {
        sync_group_response a;
        a.protocol_type = g->protocol_type;
        a.protocol_name = g->protocol_name;
        a.assignment = x.assignment;
        return a;
    };
    switch (g->state) {
    case st_preparing: r.error_code = int16_t(kerr::rebalance_in_progress); return out;
    case st_stable: r = answer(*m); return out;
    case st_completing:
        if (m->id == g->leader) {
            // The leader's assignment: members it left out get an empty one.
            for (auto& x : g->members) x->assignment.clear();
            for (auto& a : req.assignments)
                if (auto* t = g->find(a.member_id))
                    t->assignment.assign(a.assignment.begin(), a.assignment.end());
            g->state = st_stable;
            for (auto& x : g->members)
                if (x->sync_waiter) x->answer_sync(answer(*x));
            spdlog::info("group {}: generation {} stable", g->name, g->generation);
            r = answer(*m);
            return out;
        }
        out.ticket = park_sync(*m, std::move(cb));
        out.pending = true;
        return out;
    default: r.error_code = int16_t(kerr::unknown_member_id); return out;
    }
}

bool group_coordinator::cancel_sync(std::string_view group_id, std::string_view member_id,
                                    uint64_t ticket, clock::time_point now) {
    std::lock_guard lk(_mu);
    group* g = find(group_id);
    member* m = g ? g->find(member_id) : nullptr;
    if (!m || !m->sync_waiter || m->sync_ticket != ticket) return false;
    m->sync_waiter = nullptr;
    m->last_seen = now;
    return true;
}

int16_t group_coordinator::heartbeat(const heartbeat_request& req, clock::time_point now) {
    std::lock_guard lk(_mu);
    group* g = find(req.group_id);
    member* m = nullptr;
    if (int16_t err = check_member(g, req.member_id, req.group_instance_id, m)) return err;
    m->last_seen = now;
    if (req.generation_id != g->generation) return int16_t(kerr::illegal_generation);
    if (g->state == st_preparing) return int16_t(kerr::rebalance_in_progress);
    return 0;
}

leave_group_response group_coordinator::leave(const leave_group_request& req, int16_t version,
                                              clock::time_point now) {
    leave_group_response out;
    std::lock_guard lk(_mu);
    group* g = find(req.group_id);
    for (auto& lm : req.members) {
        leave_group_response::member rm;
        rm.member_id = std::string(lm.member_id);
        if (lm.group_instance_id) rm.group_instance_id = std::string(*lm.group_instance_id);
        member* m = nullptr;
        if (!g) {
            rm.error_code = int16_t(kerr::unknown_member_id);
        } else if (lm.group_instance_id) {
            // v3+: by instance id; a member id, when given, must be the instance's current one.
            m = g->find_instance(*lm.group_instance_id);
            if (!m) rm.error_code = int16_t(kerr::unknown_member_id);
            else if (!lm.member_id.empty() && m->id != lm.member_id) {
                rm.error_code = int16_t(kerr::fenced_instance_id);
                m = nullptr;
            }
        } else {
            m = g->find(lm.member_id);
            if (!m) rm.error_code = int16_t(kerr::unknown_member_id);
        }
        if (m) {
            spdlog::info("group {}: member {} leaves", g->name, m->id);
            remove_member(*g, m->id, now, int16_t(kerr::unknown_member_id));
        }
        out.members.push_back(std::move(rm));
    }
    if (version < 3 && !out.members.empty()) out.error_code = out.members.front().error_code;
    return out;
}

int16_t group_coordinator::validate_commit(std::string_view group_id, std::string_view member_id,
                                           int32_t generation,
                                           std::optional<std::string_view> instance_id,
                                           std::span<const topic_partition> partitions,
                                           int64_t* claimed) {
    std::lock_guard lk(_mu);
    group* g = find(group_id);
    if (claimed) *claimed = g ? g->claimed : 0;
    if (generation < 0 && member_id.empty()) {
        // Simple (non-member) commits are allowed only when the group has no live members.
        if (g && !g->members.empty()) return int16_t(kerr::unknown_member_id);
        return 0;
    }
    member* m = nullptr;
    if (int16_t err = check_member(g, member_id, instance_id, m)) return err;
    if (generation == g->generation - 1 && generation >= 0) {
        // A member of the new generation committing under the previous one: it sent the commit
        // before it saw its JoinGroup answer (librdkafka pipelines OffsetCommit behind its
        // JoinGroup on one connection, and a connection's requests are served in order, so the
        // commit is judged only after the join completed). Refusing it makes librdkafka drop
        // its assignment as lost and re-read what it had processed. The previous generation's
        // ownership holds until the leader's assignment is handed out, and afterwards for the
        // partitions the member keeps (cooperative rebalancing), so the commit is accepted
        // while CompletingRebalance, or when the member still owns every partition in it.
        if (g->state == st_completing) return 0;
        if (g->state == st_stable && g->protocol_type == "consumer" && !partitions.empty()) {
            auto owned = consumer_assignment(m->assignment);
            if (owned && std::all_of(partitions.begin(), partitions.end(), [&](auto& p) {
                    return owned->contains({std::string(p.first), p.second});
                }))
                return 0;
        }
    }
    if (generation != g->generation) return int16_t(kerr::illegal_generation);
    // As Kafka: commits are accepted while Stable and while PreparingRebalance (members commit
    // what they processed before rejoining, e.g. on revocation); between the join answer and
    // the assignment (CompletingRebalance) a commit under the new generation is premature.
    if (g->state == st_completing) return int16_t(kerr::rebalance_in_progress);
    return 0;
}

list_groups_response group_coordinator::list(const list_groups_request& req) {
    list_groups_response out;
    std::map<std::string, list_groups_response::group> all;
    for (auto& name : _offsets.groups()) all[name] = {name, "consumer", "Empty"};
    // KIP-848 groups (protocol type "consumer" as Kafka lists them); a classic group of the same
    // id with members wins below (the two never both have members).
    for (auto& [name, state] : _consumer.list())
        if (state != "Empty" || !all.contains(name)) all[name] = {name, "consumer", state};
    std::lock_guard lk(_mu);
    for (auto& [name, g] : _groups) {
        if (g->state == st_dead) continue;
        all[name] = {name, g->protocol_type.empty() ? "consumer" : g->protocol_type,
                     std::string(group_state_name(g->state))};
    }
    for (auto& [name, e] : all) {
        if (!req.states_filter.empty()
            && std::find(req.states_filter.begin(), req.states_filter.end(), e.state)
                   == req.states_filter.end())
            continue;
        out.groups.push_back(std::move(e));
    }
    return out;
}

describe_groups_response::group group_coordinator::describe(std::string_view group_id) {
    describe_groups_response::group out;
    out.group_id = std::string(group_id);
    std::lock_guard lk(_mu);
    group* g = find(group_id);
    if (!g) {
        out.state = _offsets.has_group(group_id) ? "Empty" : "Dead";
        return out;
    }
    out.state = std::string(group_state_name(g->state));
    out.protocol_type = g->protocol_type;
    out.protocol_data = g->state == st_stable || g->state == st_completing ? g->protocol_name : "";
    for (auto& m : g->members) {
        describe_groups_response::member dm;
        dm.member_id = m->id;
        dm.group_instance_id = m->instance_id;
        dm.client_id = m->client_id;
        dm.client_host = m->client_host;
        for (auto& [name, md] : m->protocols)
            if (name == g->protocol_name) dm.metadata = md;
        dm.assignment = m->assignment;
        out.members.push_back(std::move(dm));
    }
    return out;
}

int16_t group_coordinator::delete_group(std::string_view group_id) {
    // A consumer group (KIP-848) with members is not deleted; an empty one is forgotten here.
    if (_consumer.has_members(group_id)) return int16_t(kerr::non_empty_group);
    const bool consumer_group = _consumer.delete_group(group_id) == 0;
    {
        std::lock_guard lk(_mu);
        group* g = find(group_id);
        if (g && !g->members.empty()) return int16_t(kerr::non_empty_group);
    }
    auto stored = _offsets.contains(group_id);
    if (!stored) {
        spdlog::warn("deleting group {}: {}", group_id, stored.error());
        return int16_t(kerr::coordinator_not_available);
    }
    {
        std::lock_guard lk(_mu);
        group* g = find(group_id);
        if (g && !g->members.empty()) return int16_t(kerr::non_empty_group);
        if (!g && !*stored && !consumer_group) return int16_t(kerr::group_id_not_found);
        if (g) _groups.erase(_groups.find(group_id));
    }
    if (*stored)
        if (!_offsets.delete_group(group_id)) return int16_t(kerr::unknown_server_error);
    return 0;
}

result<void> group_coordinator::claim(std::string_view group_id, bool consumer) {
    // A classic JoinGroup for a KIP-848 group with members is refused by join(): claiming for it
    // would fence the consumer group's commits.
    if (!consumer && _consumer.has_members(group_id)) return {};
    auto has_state = [&] {
        if (consumer) return _consumer.claimed(group_id).has_value();
        std::lock_guard lk(_mu);
        return find(group_id) != nullptr;
    };
    if (has_state()) return {};
    std::lock_guard cl(_claim_mu);
    if (has_state()) return {}; // claimed by a request that held _claim_mu before this one
    const int64_t epoch = FLOE_TRY_CTX(_offsets.claim(group_id), "claiming group {}", group_id);
    if (consumer) {
        _consumer.create(group_id, epoch);
    } else {
        std::lock_guard lk(_mu);
        auto& slot = _groups[std::string(group_id)];
        if (!slot) {
            slot = std::make_unique<group>();
            slot->name = std::string(group_id);
        }
        slot->claimed = epoch;
    }
    if (epoch > 0) spdlog::info("group {}: coordinated here with epoch {}", group_id, epoch);
    return {};
}

size_t group_coordinator::drop_claim(std::string_view group_id, std::optional<int64_t> claimed) {
    size_t n = _consumer.drop(group_id, claimed) ? 1 : 0;
    std::lock_guard lk(_mu);
    auto it = _groups.find(group_id);
    if (it == _groups.end()) return n;
    auto& g = *it->second;
    if (claimed ? g.claimed != *claimed : (!g.members.empty() || g.claimed == 0)) return n;
    for (auto& m : g.members) {
        if (m->join_waiter) m->answer_join(join_error(int16_t(kerr::not_coordinator), m->id));
        if (m->sync_waiter) m->answer_sync(sync_error(int16_t(kerr::not_coordinator)));
    }
    if (claimed)
        spdlog::warn("group {}: a newer coordinator claimed it (this state had epoch {}); {} member(s) will rejoin",
                     group_id, *claimed, g.members.size());
    _groups.erase(it);
    return n + 1;
}

size_t group_coordinator::drop_groups(const std::function<bool(std::string_view)>& moved) {
    std::lock_guard lk(_mu);
    size_t n = 0;
    for (auto it = _groups.begin(); it != _groups.end();) {
        if (!moved(it->first)) {
            ++it;
            continue;
        }
        // Answered directly (not through remove_member): no rebalance starts on the way out.
        for (auto& m : it->second->members) {
            if (m->join_waiter) m->answer_join(join_error(int16_t(kerr::not_coordinator), m->id));
            if (m->sync_waiter) m->answer_sync(sync_error(int16_t(kerr::not_coordinator)));
        }
        spdlog::info("group {}: coordinated by another broker now; {} member(s) will rejoin there", it->first,
                     it->second->members.size());
        it = _groups.erase(it);
        ++n;
    }
    return n;
}

void group_coordinator::tick(clock::time_point now) {
    _consumer.tick(now);
    std::lock_guard lk(_mu);
    for (auto& [name, g] : _groups) {
        // Expire members whose session ran out. Members with a JoinGroup or SyncGroup in
        // flight are waiting for us, not silent (the rebalance timeout bounds those).
        std::vector<std::string> expired;
        for (auto& m : g->members)
            if (!m->waiting()
                && now - m->last_seen > std::chrono::milliseconds(m->session_timeout_ms))
                expired.push_back(m->id);
        for (auto& id : expired) {
            spdlog::info("group {}: member {} session expired", name, id);
            remove_member(*g, id, now, int16_t(kerr::unknown_member_id));
        }
        maybe_complete(*g, now);
    }
}

} // namespace floe::kafka
