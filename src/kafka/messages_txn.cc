#include "kafka/messages_txn.h"

namespace floe::kafka {

namespace {

template<typename Vec, typename Fn>
result<void> read_items(kreader& r, Vec& out, Fn&& fn, size_t min_elem = 1) {
    int32_t n = FLOE_TRY(r.array_len(min_elem));
    if (n <= 0) return {};
    out.reserve(size_t(n));
    for (int32_t i = 0; i < n; ++i) FLOE_TRY(fn(out.emplace_back()));
    return {};
}

result<void> read_strings(kreader& r, std::vector<std::string_view>& out) {
    return read_items(r, out, [&](std::string_view& s) -> result<void> {
        s = FLOE_TRY(r.str());
        return {};
    });
}

} // namespace

result<add_partitions_to_txn_request> decode_add_partitions_to_txn(kreader& r, int16_t) {
    add_partitions_to_txn_request q;
    q.transactional_id = FLOE_TRY(r.str());
    q.producer_id = FLOE_TRY(r.i64());
    q.producer_epoch = FLOE_TRY(r.i16());
    FLOE_TRY(read_items(r, q.topics, [&](add_partitions_to_txn_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_items(r, t.partitions, [&](int32_t& p) -> result<void> {
            p = FLOE_TRY(r.i32());
            return {};
        }, 4));
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const add_partitions_to_txn_response& r) {
    w.i32(0);
    w.array_len(r.results.size());
    for (auto& t : r.results) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i16(p.error_code);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<add_offsets_to_txn_request> decode_add_offsets_to_txn(kreader& r, int16_t) {
    add_offsets_to_txn_request q;
    q.transactional_id = FLOE_TRY(r.str());
    q.producer_id = FLOE_TRY(r.i64());
    q.producer_epoch = FLOE_TRY(r.i16());
    q.group_id = FLOE_TRY(r.str());
    FLOE_TRY(r.tags());
    return q;
}

result<end_txn_request> decode_end_txn(kreader& r, int16_t) {
    end_txn_request q;
    q.transactional_id = FLOE_TRY(r.str());
    q.producer_id = FLOE_TRY(r.i64());
    q.producer_epoch = FLOE_TRY(r.i16());
    q.committed = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const txn_error_response& r) {
    w.i32(0);
    w.i16(r.error_code);
    w.tags();
}

result<txn_offset_commit_request> decode_txn_offset_commit(kreader& r, int16_t v) {
    txn_offset_commit_request q;
    q.transactional_id = FLOE_TRY(r.str());
    q.group_id = FLOE_TRY(r.str());
    q.producer_id = FLOE_TRY(r.i64());
    q.producer_epoch = FLOE_TRY(r.i16());
    if (v >= 3) {
        q.generation_id = FLOE_TRY(r.i32());
        q.member_id = FLOE_TRY(r.str());
        q.group_instance_id = FLOE_TRY(r.nstr());
    }
    FLOE_TRY(read_items(r, q.topics, [&](txn_offset_commit_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_items(r, t.partitions, [&](txn_offset_commit_request::partition& p) -> result<void> {
            p.index = FLOE_TRY(r.i32());
            p.offset = FLOE_TRY(r.i64());
            if (v >= 2) p.leader_epoch = FLOE_TRY(r.i32());
            p.metadata = FLOE_TRY(r.nstr());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return q;
}

result<describe_transactions_request> decode_describe_transactions(kreader& r, int16_t) {
    describe_transactions_request q;
    FLOE_TRY(read_strings(r, q.transactional_ids));
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const describe_transactions_response& r) {
    w.i32(0);
    w.array_len(r.states.size());
    for (auto& s : r.states) {
        w.i16(s.error_code);
        w.str(s.transactional_id);
        w.str(s.state);
        w.i32(s.timeout_ms);
        w.i64(s.start_time_ms);
        w.i64(s.producer_id);
        w.i32(s.producer_epoch);
        w.array_len(s.topics.size());
        for (auto& t : s.topics) {
            w.str(t.name);
            w.array_len(t.partitions.size());
            for (auto p : t.partitions) w.i32(p);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<list_transactions_request> decode_list_transactions(kreader& r, int16_t v) {
    list_transactions_request q;
    FLOE_TRY(read_strings(r, q.state_filters));
    FLOE_TRY(read_items(r, q.producer_id_filters, [&](int64_t& id) -> result<void> {
        id = FLOE_TRY(r.i64());
        return {};
    }, 8));
    if (v >= 1) q.duration_filter_ms = FLOE_TRY(r.i64());
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const list_transactions_response& r) {
    w.i32(0);
    w.i16(r.error_code);
    w.array_len(r.unknown_state_filters.size());
    for (auto& s : r.unknown_state_filters) w.str(s);
    w.array_len(r.states.size());
    for (auto& s : r.states) {
        w.str(s.transactional_id);
        w.i64(s.producer_id);
        w.str(s.state);
        w.tags();
    }
    w.tags();
}

std::optional<result<void>> decode_any_txn(int16_t api, int16_t v, kreader& r) {
    auto check = [](auto&& dec) -> result<void> {
        if (!dec) return fail(dec.error());
        return {};
    };
    switch (api_key(api)) {
    case api_key::add_partitions_to_txn: return check(decode_add_partitions_to_txn(r, v));
    case api_key::add_offsets_to_txn: return check(decode_add_offsets_to_txn(r, v));
    case api_key::end_txn: return check(decode_end_txn(r, v));
    case api_key::txn_offset_commit: return check(decode_txn_offset_commit(r, v));
    case api_key::describe_transactions: return check(decode_describe_transactions(r, v));
    case api_key::list_transactions: return check(decode_list_transactions(r, v));
    default: return std::nullopt;
    }
}

} // namespace floe::kafka
