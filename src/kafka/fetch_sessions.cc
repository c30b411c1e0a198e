#include "kafka/fetch_sessions.h"

#include <algorithm>
#include <random>

namespace floe::kafka {

namespace {
constexpr int32_t k_final_epoch = -1;
constexpr int32_t k_initial_epoch = 0;
} // namespace

size_t fetch_session_cache::size() const {
    std::lock_guard g(_mu);
    return _sessions.size();
}

fetch_session_cache::part* fetch_session_cache::find(session& s, std::string_view name,
                                                     const uuid& id, int32_t index) {
    for (auto& p : s.parts)
        if (p.index == index && p.topic_id == id && p.name == name) return &p;
    return nullptr;
}

void fetch_session_cache::evict_locked(std::chrono::steady_clock::time_point now) {
    for (auto it = _sessions.begin(); it != _sessions.end();)
        it = now - it->second->used > _opts.idle_eviction ? _sessions.erase(it) : std::next(it);
    while (_sessions.size() >= std::max<size_t>(_opts.max_sessions, 1)) {
        auto oldest = std::min_element(_sessions.begin(), _sessions.end(), [](auto& a, auto& b) {
            return a.second->used < b.second->used;
        });
        _sessions.erase(oldest);
    }
}

int32_t fetch_session_cache::new_id_locked() {
    if (_seed == 0x9e3779b97f4a7c15ull) _seed ^= std::random_device{}();
    for (;;) {
        _seed = _seed * 6364136223846793005ull + 1442695040888963407ull;
        auto id = int32_t((_seed >> 33) & 0x7fffffff);
        if (id != 0 && !_sessions.contains(id)) return id;
    }
}

fetch_session_cache::context fetch_session_cache::begin(fetch_request& req, int16_t version) {
    context ctx;
    if (version < 7) return ctx; // no sessions before Fetch v7
    const bool full = req.session_epoch == k_initial_epoch || req.session_epoch == k_final_epoch;
    const bool v13 = version >= 13;
    auto now = std::chrono::steady_clock::now();
    std::lock_guard g(_mu);
    if (full) {
        if (req.session_id != 0) _sessions.erase(req.session_id); // close (and maybe reopen)
        if (req.session_epoch == k_final_epoch) return ctx;       // sessionless full fetch
        evict_locked(now);
        auto s = std::make_shared<session>();
        s->used = now;
        for (auto& t : req.topics)
            for (auto& p : t.partitions)
                s->parts.push_back({v13 ? std::string() : std::string(t.name),
                                    v13 ? t.topic_id : uuid{}, p.index, p.fetch_offset,
                                    p.log_start_offset, p.max_bytes});
        ctx.session_id = new_id_locked();
        _sessions[ctx.session_id] = std::move(s);
        return ctx;
    }
    if (req.session_id == 0) {
        ctx.error = int16_t(kerr::invalid_fetch_session_epoch);
        return ctx;
    }
    auto it = _sessions.find(req.session_id);
    if (it == _sessions.end()) {
        ctx.error = int16_t(kerr::fetch_session_id_not_found);
        return ctx;
    }
    auto& s = *it->second;
    if (req.session_epoch != s.next_epoch) {
        ctx.error = int16_t(kerr::invalid_fetch_session_epoch);
        return ctx;
    }
    s.next_epoch = s.next_epoch == INT32_MAX ? 1 : s.next_epoch + 1;
    s.used = now;
    // The request's partitions are new or have a new fetch offset; forgotten ones leave.
    for (auto& t : req.topics)
        for (auto& p : t.partitions) {
            std::string name = v13 ? std::string() : std::string(t.name);
            uuid id = v13 ? t.topic_id : uuid{};
            if (auto* have = find(s, name, id, p.index)) {
                have->fetch_offset = p.fetch_offset;
                have->log_start_offset = p.log_start_offset;
                have->max_bytes = p.max_bytes;
            } else {
                s.parts.push_back({std::move(name), id, p.index, p.fetch_offset, p.log_start_offset,
                                   p.max_bytes});
            }
        }
    for (auto& f : req.forgotten)
        for (auto idx : f.partitions)
            std::erase_if(s.parts, [&](const part& p) {
                return p.index == idx && (v13 ? p.topic_id == f.topic_id : p.name == f.name);
            });
    // Rewrite the request into the whole session, grouped by topic in session order.
    ctx.session_id = req.session_id;
    ctx.incremental = true;
    req.topics.clear();
    for (auto& p : s.parts) {
        auto t =
            std::find_if(req.topics.begin(), req.topics.end(), [&](const fetch_request::topic& x) {
                return v13 ? x.topic_id == p.topic_id : x.name == p.name;
            });
        if (t == req.topics.end()) {
            auto& nt = req.topics.emplace_back();
            nt.name = ctx.names.emplace_back(p.name);
            nt.topic_id = p.topic_id;
            t = req.topics.end() - 1;
        }
        t->partitions.push_back({p.index, p.fetch_offset, p.log_start_offset, p.max_bytes});
    }
    return ctx;
}

bool fetch_session_cache::include(const context& ctx, std::string_view topic, const uuid& topic_id,
                                  const fetch_partition_header& hdr, bool has_records) {
    if (ctx.session_id == 0) return true;
    std::lock_guard g(_mu);
    auto it = _sessions.find(ctx.session_id);
    if (it == _sessions.end()) return true; // evicted meanwhile: report everything
    // Sessions key partitions as the client named them: by id from v13, else by name.
    part* p = nullptr;
    for (auto& q : it->second->parts)
        if (q.index == hdr.index
            && (q.topic_id.is_nil() ? q.name == topic : q.topic_id == topic_id)) {
            p = &q;
            break;
        }
    if (!p) return true;
    bool changed = p->high_watermark != hdr.high_watermark
                   || p->last_stable != hdr.last_stable_offset
                   || p->log_start != hdr.log_start_offset;
    p->high_watermark = hdr.high_watermark;
    p->last_stable = hdr.last_stable_offset;
    p->log_start = hdr.log_start_offset;
    return !ctx.incremental || has_records || hdr.error_code != 0 || changed;
}

} // namespace floe::kafka
