#include "kafka/messages_cgroup.h"

namespace floe::kafka {

namespace {

template<typename Vec, typename Fn>
result<void> read_elems(kreader& r, Vec& out, Fn&& fn, size_t min_elem = 1) {
    int32_t n = FLOE_TRY(r.array_len(min_elem));
    if (n <= 0) return {};
    out.reserve(size_t(n));
    for (int32_t i = 0; i < n; ++i)
        FLOE_TRY(fn(out.emplace_back()));
    return {};
}

std::optional<std::string_view> opt_view(const std::optional<std::string>& s) {
    if (!s) return std::nullopt;
    return std::string_view(*s);
}

void write_partitions(kwriter& w, std::span<const int32_t> parts) {
    w.array_len(parts.size());
    for (auto p : parts)
        w.i32(p);
}

void write_described(kwriter& w,
                     const std::vector<consumer_group_describe_response::topic_partitions>& a) {
    // Assignment struct: TopicPartitions array, then the struct's tags.
    w.array_len(a.size());
    for (auto& t : a) {
        w.id(t.topic_id);
        w.str(t.topic_name);
        write_partitions(w, t.partitions);
        w.tags();
    }
    w.tags();
}

} // namespace

result<consumer_group_heartbeat_request> decode_consumer_group_heartbeat(kreader& r, int16_t v) {
    consumer_group_heartbeat_request q;
    q.group_id = FLOE_TRY(r.str());
    q.member_id = FLOE_TRY(r.str());
    q.member_epoch = FLOE_TRY(r.i32());
    q.instance_id = FLOE_TRY(r.nstr());
    q.rack_id = FLOE_TRY(r.nstr());
    q.rebalance_timeout_ms = FLOE_TRY(r.i32());
    {
        int32_t n = FLOE_TRY(r.array_len());
        if (n >= 0) {
            auto& names = q.subscribed_topic_names.emplace();
            names.reserve(size_t(n));
            for (int32_t i = 0; i < n; ++i)
                names.push_back(FLOE_TRY(r.str()));
        }
    }
    if (v >= 1) q.subscribed_topic_regex = FLOE_TRY(r.nstr());
    q.server_assignor = FLOE_TRY(r.nstr());
    {
        int32_t n = FLOE_TRY(r.array_len(17));
        if (n >= 0) {
            auto& owned = q.owned.emplace();
            owned.reserve(size_t(n));
            for (int32_t i = 0; i < n; ++i) {
                auto& t = owned.emplace_back();
                t.topic_id = FLOE_TRY(r.id());
                FLOE_TRY(read_elems(
                    r, t.partitions,
                    [&](int32_t& p) -> result<void> {
                        p = FLOE_TRY(r.i32());
                        return {};
                    },
                    4));
                FLOE_TRY(r.tags());
            }
        }
    }
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const consumer_group_heartbeat_response& r) {
    w.i32(0); // throttle
    w.i16(r.error_code);
    w.nstr(opt_view(r.error_message));
    w.nstr(opt_view(r.member_id));
    w.i32(r.member_epoch);
    w.i32(r.heartbeat_interval_ms);
    if (!r.assignment) {
        w.i8(-1); // a null struct
    } else {
        w.i8(1);
        w.array_len(r.assignment->size());
        for (auto& t : *r.assignment) {
            w.id(t.topic_id);
            write_partitions(w, t.partitions);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<consumer_group_describe_request> decode_consumer_group_describe(kreader& r, int16_t) {
    consumer_group_describe_request q;
    FLOE_TRY(read_elems(r, q.group_ids, [&](std::string_view& s) -> result<void> {
        s = FLOE_TRY(r.str());
        return {};
    }));
    q.include_authorized_operations = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const consumer_group_describe_response& r) {
    w.i32(0); // throttle
    w.array_len(r.groups.size());
    for (auto& g : r.groups) {
        w.i16(g.error_code);
        w.nstr(opt_view(g.error_message));
        w.str(g.group_id);
        w.str(g.group_state);
        w.i32(g.group_epoch);
        w.i32(g.assignment_epoch);
        w.str(g.assignor_name);
        w.array_len(g.members.size());
        for (auto& m : g.members) {
            w.str(m.member_id);
            w.nstr(opt_view(m.instance_id));
            w.nstr(opt_view(m.rack_id));
            w.i32(m.member_epoch);
            w.str(m.client_id);
            w.str(m.client_host);
            w.array_len(m.subscribed_topic_names.size());
            for (auto& n : m.subscribed_topic_names)
                w.str(n);
            w.nstr(opt_view(m.subscribed_topic_regex));
            write_described(w, m.assignment);
            write_described(w, m.target_assignment);
            w.tags();
        }
        w.i32(g.authorized_operations);
        w.tags();
    }
    w.tags();
}

std::optional<result<void>> decode_any_cgroup(int16_t api, int16_t v, kreader& r) {
    auto check = [](auto&& dec) -> result<void> {
        if (!dec) return fail(dec.error());
        return {};
    };
    switch (api_key(api)) {
    case api_key::consumer_group_heartbeat:
        return check(decode_consumer_group_heartbeat(r, v));
    case api_key::consumer_group_describe:
        return check(decode_consumer_group_describe(r, v));
    default:
        return std::nullopt;
    }
}

} // namespace floe::kafka
