#include "kafka/messages_admin.h"
#include "kafka/messages_security.h"

namespace floe::kafka {

namespace {

/// Reads an array of `fn`-decoded elements (a null array decodes as empty), reserving at most
/// what the bytes left could hold. Returns the raw length (-1 for null).
template<typename Vec, typename Fn>
result<int32_t> read_items(kreader& r, Vec& out, Fn&& fn, size_t min_elem = 1) {
    int32_t n = FLOE_TRY(r.array_len(min_elem));
    if (n <= 0) return n;
    out.reserve(size_t(n));
    for (int32_t i = 0; i < n; ++i)
        FLOE_TRY(fn(out.emplace_back()));
    return n;
}

result<void> read_int32s(kreader& r, std::vector<int32_t>& out) {
    FLOE_TRY(read_items(
        r, out,
        [&](int32_t& x) -> result<void> {
            x = FLOE_TRY(r.i32());
            return {};
        },
        4));
    return {};
}

std::optional<std::string_view> view(const std::optional<std::string>& s) {
    if (!s) return std::nullopt;
    return std::string_view(*s);
}

/// The common shape {name, [int32 partitions], tags}.
template<typename Topic>
result<int32_t> read_topic_partitions(kreader& r, std::vector<Topic>& topics) {
    return read_items(r, topics, [&](Topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_int32s(r, t.partitions));
        FLOE_TRY(r.tags());
        return {};
    });
}

} // namespace

// ---------------- CreatePartitions ----------------

result<create_partitions_request> decode_create_partitions(kreader& r, int16_t) {
    create_partitions_request c;
    FLOE_TRY(read_items(r, c.topics, [&](create_partitions_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        t.count = FLOE_TRY(r.i32());
        int32_t na = FLOE_TRY(r.array_len());
        t.has_assignments = na >= 0;
        t.assignment_count = std::max(na, 0);
        for (int32_t i = 0; i < na; ++i) {
            int32_t nb = FLOE_TRY(r.array_len(4));
            for (int32_t k = 0; k < nb; ++k)
                FLOE_TRY(r.i32());
            FLOE_TRY(r.tags());
        }
        FLOE_TRY(r.tags());
        return {};
    }));
    c.timeout_ms = FLOE_TRY(r.i32());
    c.validate_only = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return c;
}

void encode(kwriter& w, int16_t, const create_partitions_response& r) {
    w.i32(0);
    w.array_len(r.results.size());
    for (auto& e : r.results) {
        w.str(e.name);
        w.i16(e.error_code);
        w.nstr(view(e.error_message));
        w.tags();
    }
    w.tags();
}

// ---------------- DeleteRecords ----------------

result<delete_records_request> decode_delete_records(kreader& r, int16_t) {
    delete_records_request d;
    FLOE_TRY(read_items(r, d.topics, [&](delete_records_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_items(
            r, t.partitions,
            [&](delete_records_request::partition& p) -> result<void> {
                p.index = FLOE_TRY(r.i32());
                p.offset = FLOE_TRY(r.i64());
                FLOE_TRY(r.tags());
                return {};
            },
            12));
        FLOE_TRY(r.tags());
        return {};
    }));
    d.timeout_ms = FLOE_TRY(r.i32());
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t, const delete_records_response& r) {
    w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i64(p.low_watermark);
            w.i16(p.error_code);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

// ---------------- OffsetDelete ----------------

result<offset_delete_request> decode_offset_delete(kreader& r, int16_t) {
    offset_delete_request o;
    o.group_id = FLOE_TRY(r.str());
    FLOE_TRY(read_items(r, o.topics, [&](offset_delete_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_items(
            r, t.partitions,
            [&](int32_t& p) -> result<void> {
                p = FLOE_TRY(r.i32());
                FLOE_TRY(r.tags());
                return {};
            },
            4));
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return o;
}

void encode(kwriter& w, int16_t, const offset_delete_response& r) {
    w.i16(r.error_code);
    w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
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

// ---------------- DescribeLogDirs ----------------

result<describe_log_dirs_request> decode_describe_log_dirs(kreader& r, int16_t) {
    describe_log_dirs_request d;
    int32_t n = FLOE_TRY(read_topic_partitions(r, d.topics));
    d.all_topics = n < 0;
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t v, const describe_log_dirs_response& r) {
    w.i32(0);
    if (v >= 3) w.i16(r.error_code);
    w.array_len(r.results.size());
    for (auto& d : r.results) {
        w.i16(d.error_code);
        w.str(d.path);
        w.array_len(d.topics.size());
        for (auto& t : d.topics) {
            w.str(t.name);
            w.array_len(t.partitions.size());
            for (auto& p : t.partitions) {
                w.i32(p.index);
                w.i64(p.size);
                w.i64(p.offset_lag);
                w.boolean(p.is_future);
                w.tags();
            }
            w.tags();
        }
        if (v >= 4) {
            w.i64(d.total_bytes);
            w.i64(d.usable_bytes);
        }
        w.tags();
    }
    w.tags();
}

// ---------------- ElectLeaders ----------------

result<elect_leaders_request> decode_elect_leaders(kreader& r, int16_t v) {
    elect_leaders_request e;
    if (v >= 1) e.election_type = FLOE_TRY(r.i8());
    int32_t n = FLOE_TRY(read_topic_partitions(r, e.topics));
    e.all_partitions = n < 0;
    e.timeout_ms = FLOE_TRY(r.i32());
    FLOE_TRY(r.tags());
    return e;
}

void encode(kwriter& w, int16_t v, const elect_leaders_response& r) {
    w.i32(0);
    if (v >= 1) w.i16(r.error_code);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i16(p.error_code);
            w.nstr(view(p.error_message));
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

// ---------------- DescribeProducers ----------------

result<describe_producers_request> decode_describe_producers(kreader& r, int16_t) {
    describe_producers_request d;
    FLOE_TRY(read_topic_partitions(r, d.topics));
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t, const describe_producers_response& r) {
    w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i16(p.error_code);
            w.nstr(view(p.error_message));
            w.array_len(p.producers.size());
            for (auto& s : p.producers) {
                w.i64(s.producer_id);
                w.i32(s.producer_epoch);
                w.i32(s.last_sequence);
                w.i64(s.last_timestamp);
                w.i32(s.coordinator_epoch);
                w.i64(s.current_txn_start_offset);
                w.tags();
            }
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<void> decode_any_admin(int16_t api, int16_t v, kreader& r) {
    switch (api_key(api)) {
    case api_key::create_partitions:
        FLOE_TRY(decode_create_partitions(r, v));
        return {};
    case api_key::delete_records:
        FLOE_TRY(decode_delete_records(r, v));
        return {};
    case api_key::offset_delete:
        FLOE_TRY(decode_offset_delete(r, v));
        return {};
    case api_key::describe_log_dirs:
        FLOE_TRY(decode_describe_log_dirs(r, v));
        return {};
    case api_key::elect_leaders:
        FLOE_TRY(decode_elect_leaders(r, v));
        return {};
    case api_key::describe_producers:
        FLOE_TRY(decode_describe_producers(r, v));
        return {};
    default:
        break;
    }
    return decode_any_security(api, v, r);
}

} // namespace floe::kafka
