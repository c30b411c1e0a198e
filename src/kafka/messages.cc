#include "kafka/messages.h"
#include "kafka/messages_txn.h"

#include "kafka/messages_admin.h"
#include "kafka/messages_cgroup.h"

namespace floe::kafka {

namespace {

/// Decodes an array whose elements are read by `fn(i)`, reserving at most what the bytes left
/// could hold. A null array decodes as empty.
template<typename Vec, typename Fn>
result<void> read_array(kreader& r, Vec& out, Fn&& fn, size_t min_elem = 1) {
    int32_t n = FLOE_TRY(r.array_len(min_elem));
    if (n <= 0) return {};
    out.reserve(size_t(n));
    for (int32_t i = 0; i < n; ++i) FLOE_TRY(fn(out.emplace_back()));
    return {};
}

result<std::vector<std::string_view>> read_string_array(kreader& r) {
    std::vector<std::string_view> out;
    FLOE_TRY(read_array(r, out, [&](std::string_view& s) -> result<void> {
        s = FLOE_TRY(r.str());
        return {};
    }));
    return out;
}

void write_int32_array(kwriter& w, std::span<const int32_t> v) {
    w.array_len(v.size());
    for (auto x : v) w.i32(x);
}

std::optional<std::string_view> view(const std::optional<std::string>& s) {
    if (!s) return std::nullopt;
    return std::string_view(*s);
}

} // namespace

// ---------------- ApiVersions ----------------

void encode(kwriter& w, int16_t v, const api_versions_response& r) {
    w.i16(r.error_code);
    auto apis = supported_apis();
    w.array_len(apis.size());
    for (auto& a : apis) {
        w.i16(int16_t(a.key));
        w.i16(a.min);
        w.i16(a.max);
        w.tags();
    }
    if (v >= 1) w.i32(0);
    w.tags();
}

// ---------------- Metadata ----------------

result<metadata_request> decode_metadata(kreader& r, int16_t v) {
    metadata_request m;
    int32_t n = FLOE_TRY(r.array_len());
    if (n < 0 || (n == 0 && v == 0)) m.all_topics = true;
    if (n > 0) {
        m.topics.reserve(size_t(n));
        for (int32_t i = 0; i < n; ++i) {
            auto& t = m.topics.emplace_back();
            if (v >= 10) t.topic_id = FLOE_TRY(r.id());
            if (v >= 10) t.name = FLOE_TRY(r.nstr());
            else t.name = FLOE_TRY(r.str());
            FLOE_TRY(r.tags());
        }
    }
    if (v >= 4) m.allow_auto_topic_creation = FLOE_TRY(r.boolean());
    if (v >= 8 && v <= 10) m.include_cluster_authorized_operations = FLOE_TRY(r.boolean());
    if (v >= 8) m.include_topic_authorized_operations = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return m;
}

void encode(kwriter& w, int16_t v, const metadata_response& r) {
    if (v >= 3) w.i32(0);
    w.array_len(r.brokers.size());
    for (auto& b : r.brokers) {
        w.i32(b.node_id);
        w.str(b.host);
        w.i32(b.port);
        if (v >= 1) w.nstr(std::nullopt);
        w.tags();
    }
    if (v >= 2) w.nstr(r.cluster_id);
    if (v >= 1) w.i32(r.controller_id);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.i16(t.error_code);
        w.str(t.name);
        if (v >= 10) w.id(t.topic_id);
        if (v >= 1) w.boolean(false);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i16(p.error_code);
            w.i32(p.index);
            w.i32(p.leader);
            if (v >= 7) w.i32(p.leader_epoch);
            int32_t leader_only[1] = {p.leader};
            std::span<const int32_t> replicas = p.replicas.empty() ? std::span<const int32_t>(leader_only)
                                                                   : std::span<const int32_t>(p.replicas);
            write_int32_array(w, replicas);
            write_int32_array(w, replicas);
            if (v >= 5) w.array_len(0);
            w.tags();
        }
        if (v >= 8) w.i32(t.authorized_operations);
        w.tags();
    }
    if (v >= 8 && v <= 10) w.i32(r.cluster_authorized_operations);
    w.tags();
}

// ---------------- Produce ----------------

result<produce_request> decode_produce(kreader& r, int16_t v) {
    produce_request p;
    if (v >= 3) p.transactional_id = FLOE_TRY(r.nstr());
    p.acks = FLOE_TRY(r.i16());
    p.timeout_ms = FLOE_TRY(r.i32());
    FLOE_TRY(read_array(r, p.topics, [&](produce_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_array(r, t.partitions, [&](produce_request::partition& pp) -> result<void> {
            pp.index = FLOE_TRY(r.i32());
            pp.records = FLOE_TRY(r.nbytes());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return p;
}

void encode(kwriter& w, int16_t v, const produce_response& r) {
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i16(p.error_code);
            w.i64(p.base_offset);
            if (v >= 2) w.i64(p.log_append_time);
            if (v >= 5) w.i64(p.log_start_offset);
            if (v >= 8) {
                w.array_len(p.record_errors.size());
                for (auto& e : p.record_errors) {
                    w.i32(e.batch_index);
                    w.nstr(view(e.message));
                    w.tags();
                }
                w.nstr(view(p.error_message));
            }
            w.tags();
        }
        w.tags();
    }
    if (v >= 1) w.i32(0);
    w.tags();
}

// ---------------- Fetch ----------------

result<fetch_request> decode_fetch(kreader& r, int16_t v) {
    fetch_request f;
    if (v <= 14) FLOE_TRY(r.i32()); // replica id
    f.max_wait_ms = FLOE_TRY(r.i32());
    f.min_bytes = FLOE_TRY(r.i32());
    if (v >= 3) f.max_bytes = FLOE_TRY(r.i32());
    if (v >= 4) f.isolation_level = FLOE_TRY(r.i8());
    if (v >= 7) {
        f.session_id = FLOE_TRY(r.i32());
        f.session_epoch = FLOE_TRY(r.i32());
    }
    FLOE_TRY(read_array(r, f.topics, [&](fetch_request::topic& t) -> result<void> {
        if (v >= 13) t.topic_id = FLOE_TRY(r.id());
        else t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_array(r, t.partitions, [&](fetch_request::partition& p) -> result<void> {
            p.index = FLOE_TRY(r.i32());
            if (v >= 9) FLOE_TRY(r.i32()); // current leader epoch
            p.fetch_offset = FLOE_TRY(r.i64());
            if (v >= 12) FLOE_TRY(r.i32()); // last fetched epoch
            if (v >= 5) p.log_start_offset = FLOE_TRY(r.i64());
            p.max_bytes = FLOE_TRY(r.i32());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    if (v >= 7) {
        FLOE_TRY(read_array(r, f.forgotten, [&](fetch_request::forgotten_topic& t) -> result<void> {
            if (v >= 13) t.topic_id = FLOE_TRY(r.id());
            else t.name = FLOE_TRY(r.str());
            int32_t np = FLOE_TRY(r.array_len(4));
            if (np > 0) t.partitions.reserve(size_t(np));
            for (int32_t k = 0; k < np; ++k) t.partitions.push_back(FLOE_TRY(r.i32()));
            FLOE_TRY(r.tags());
            return {};
        }));
    }
    if (v >= 11) FLOE_TRY(r.str()); // rack id
    FLOE_TRY(r.tags());
    return f;
}

void encode_fetch_response_start(kwriter& w, int16_t v, int16_t error_code, size_t topics,
                                 int32_t session_id) {
    if (v >= 1) w.i32(0);
    if (v >= 7) {
        w.i16(error_code);
        w.i32(session_id); // 0: no incremental fetch session (fetch_sessions.h)
    }
    w.array_len(topics);
}

void encode_fetch_topic_start(kwriter& w, int16_t v, std::string_view name, const uuid& id,
                              size_t partitions) {
    if (v >= 13) w.id(id);
    else w.str(name);
    w.array_len(partitions);
}

void encode_fetch_partition_start(kwriter& w, int16_t v, const fetch_partition_header& p,
                                  size_t records_size) {
    w.i32(p.index);
    w.i16(p.error_code);
    w.i64(p.high_watermark);
    if (v >= 4) w.i64(p.last_stable_offset);
    if (v >= 5) w.i64(p.log_start_offset);
    if (v >= 4) { // aborted transactions (read_committed answers only)
        if (p.aborted) {
            w.array_len(p.aborted->size());
            for (auto& a : *p.aborted) {
                w.i64(a.producer_id);
                w.i64(a.first_offset);
                w.tags();
            }
        } else {
            w.array_len(0);
        }
    }
    if (v >= 11) w.i32(-1);     // preferred read replica
    if (w.flexible()) w.uvarint(records_size + 1);
    else w.i32(int32_t(records_size));
}

void encode_fetch_partition_end(kwriter& w, int16_t) { w.tags(); }
void encode_fetch_topic_end(kwriter& w, int16_t) { w.tags(); }
void encode_fetch_response_end(kwriter& w, int16_t) { w.tags(); }

// ---------------- ListOffsets ----------------

result<list_offsets_request> decode_list_offsets(kreader& r, int16_t v) {
    list_offsets_request l;
    FLOE_TRY(r.i32()); // replica id
    if (v >= 2) l.isolation_level = FLOE_TRY(r.i8());
    FLOE_TRY(read_array(r, l.topics, [&](list_offsets_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_array(r, t.partitions, [&](list_offsets_request::partition& p) -> result<void> {
            p.index = FLOE_TRY(r.i32());
            if (v >= 4) FLOE_TRY(r.i32());
            p.timestamp = FLOE_TRY(r.i64());
            if (v == 0) FLOE_TRY(r.i32());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    if (v >= 10) FLOE_TRY(r.i32());
    FLOE_TRY(r.tags());
    return l;
}

void encode(kwriter& w, int16_t v, const list_offsets_response& r) {
    if (v >= 2) w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (auto& p : t.partitions) {
            w.i32(p.index);
            w.i16(p.error_code);
            if (v == 0) {
                w.array_len(1);
                w.i64(p.offset);
            } else {
                w.i64(p.timestamp);
                w.i64(p.offset);
            }
            if (v >= 4) w.i32(p.leader_epoch);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

// ---------------- CreateTopics ----------------

result<create_topics_request> decode_create_topics(kreader& r, int16_t v) {
    create_topics_request c;
    FLOE_TRY(read_array(r, c.topics, [&](create_topics_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        t.num_partitions = FLOE_TRY(r.i32());
        t.replication_factor = FLOE_TRY(r.i16());
        int32_t na = FLOE_TRY(r.array_len());
        t.assignment_count = std::max(na, 0);
        t.has_assignments = na > 0;
        for (int32_t i = 0; i < na; ++i) {
            FLOE_TRY(r.i32());
            int32_t nb = FLOE_TRY(r.array_len(4));
            for (int32_t k = 0; k < nb; ++k) FLOE_TRY(r.i32());
            FLOE_TRY(r.tags());
        }
        FLOE_TRY(read_array(r, t.configs, [&](config_entry_in& e) -> result<void> {
            e.name = FLOE_TRY(r.str());
            e.value = FLOE_TRY(r.nstr());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    c.timeout_ms = FLOE_TRY(r.i32());
    if (v >= 1) c.validate_only = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return c;
}

void encode(kwriter& w, int16_t v, const create_topics_response& r) {
    if (v >= 2) w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        w.str(t.name);
        if (v >= 7) w.id(t.topic_id);
        w.i16(t.error_code);
        if (v >= 1) w.nstr(view(t.error_message));
        if (v >= 5) {
            w.i32(t.num_partitions);
            w.i16(t.replication_factor);
            w.array_len(t.configs.size());
            for (auto& c : t.configs) {
                w.str(c.name);
                w.nstr(view(c.value));
                w.boolean(c.read_only);
                w.i8(c.source);
                w.boolean(c.is_sensitive);
                w.tags();
            }
        }
        w.tags();
    }
    w.tags();
}

// ---------------- DeleteTopics ----------------

result<delete_topics_request> decode_delete_topics(kreader& r, int16_t v) {
    delete_topics_request d;
    if (v >= 6) {
        FLOE_TRY(read_array(r, d.topics, [&](delete_topics_request::topic& t) -> result<void> {
            t.name = FLOE_TRY(r.nstr());
            t.topic_id = FLOE_TRY(r.id());
            FLOE_TRY(r.tags());
            return {};
        }));
    } else {
        auto names = FLOE_TRY(read_string_array(r));
        for (auto n : names) d.topics.push_back({n, {}});
    }
    d.timeout_ms = FLOE_TRY(r.i32());
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t v, const delete_topics_response& r) {
    if (v >= 1) w.i32(0);
    w.array_len(r.topics.size());
    for (auto& t : r.topics) {
        if (v >= 6) w.nstr(view(t.name));
        else w.str(t.name ? std::string_view(*t.name) : std::string_view{});
        if (v >= 6) w.id(t.topic_id);
        w.i16(t.error_code);
        if (v >= 5) w.nstr(view(t.error_message));
        w.tags();
    }
    w.tags();
}

// ---------------- DescribeConfigs ----------------

result<describe_configs_request> decode_describe_configs(kreader& r, int16_t v) {
    describe_configs_request d;
    FLOE_TRY(read_array(r, d.resources, [&](describe_configs_request::resource& res) -> result<void> {
        res.type = FLOE_TRY(r.i8());
        res.name = FLOE_TRY(r.str());
        int32_t n = FLOE_TRY(r.array_len());
        res.all_keys = n < 0;
        for (int32_t i = 0; i < n; ++i) res.keys.push_back(FLOE_TRY(r.str()));
        FLOE_TRY(r.tags());
        return {};
    }));
    if (v >= 1) d.include_synonyms = FLOE_TRY(r.boolean());
    if (v >= 3) d.include_documentation = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t v, const describe_configs_response& r) {
    w.i32(0);
    w.array_len(r.results.size());
    for (auto& res : r.results) {
        w.i16(res.error_code);
        w.nstr(view(res.error_message));
        w.i8(res.type);
        w.str(res.name);
        w.array_len(res.configs.size());
        for (auto& c : res.configs) {
            w.str(c.name);
            w.nstr(view(c.value));
            w.boolean(c.read_only);
            if (v == 0) w.boolean(c.is_default);
            if (v >= 1) w.i8(c.source);
            w.boolean(c.is_sensitive);
            if (v >= 1) {
                w.array_len(c.synonyms.size());
                for (auto& sy : c.synonyms) {
                    w.str(sy.name);
                    w.nstr(view(sy.value));
                    w.i8(sy.source);
                    w.tags();
                }
            }
            if (v >= 3) {
                w.i8(c.config_type);
                w.nstr(view(c.documentation));
            }
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

// ---------------- AlterConfigs / IncrementalAlterConfigs ----------------

namespace {
result<alter_configs_request> decode_alter(kreader& r, bool incremental) {
    alter_configs_request a;
    FLOE_TRY(read_array(r, a.resources, [&](alter_configs_request::resource& res) -> result<void> {
        res.type = FLOE_TRY(r.i8());
        res.name = FLOE_TRY(r.str());
        FLOE_TRY(read_array(r, res.configs, [&](alter_configs_request::config& c) -> result<void> {
            c.name = FLOE_TRY(r.str());
            if (incremental) c.op = FLOE_TRY(r.i8());
            c.value = FLOE_TRY(r.nstr());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    a.validate_only = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return a;
}
} // namespace

result<alter_configs_request> decode_alter_configs(kreader& r, int16_t) {
    return decode_alter(r, false);
}
result<alter_configs_request> decode_incremental_alter_configs(kreader& r, int16_t) {
    return decode_alter(r, true);
}

void encode(kwriter& w, int16_t, const alter_configs_response& r) {
    w.i32(0);
    w.array_len(r.resources.size());
    for (auto& res : r.resources) {
        w.i16(res.error_code);
        w.nstr(view(res.error_message));
        w.i8(res.type);
        w.str(res.name);
        w.tags();
    }
    w.tags();
}

// ---------------- FindCoordinator ----------------

result<find_coordinator_request> decode_find_coordinator(kreader& r, int16_t v) {
    find_coordinator_request f;
    if (v <= 3) f.keys.push_back(FLOE_TRY(r.str()));
    if (v >= 1) f.key_type = FLOE_TRY(r.i8());
    if (v >= 4) f.keys = FLOE_TRY(read_string_array(r));
    FLOE_TRY(r.tags());
    return f;
}

void encode(kwriter& w, int16_t v, const find_coordinator_response& r) {
    if (v >= 1) w.i32(0);
    if (v <= 3) {
        find_coordinator_response::coordinator none;
        auto& c = r.coordinators.empty() ? none : r.coordinators.front();
        w.i16(c.error_code);
        if (v >= 1) w.nstr(std::nullopt);
        w.i32(c.node_id);
        w.str(c.host);
        w.i32(c.port);
    } else {
        w.array_len(r.coordinators.size());
        for (auto& c : r.coordinators) {
            w.str(c.key);
            w.i32(c.node_id);
            w.str(c.host);
            w.i32(c.port);
            w.i16(c.error_code);
            w.nstr(std::nullopt);
            w.tags();
        }
    }
    w.tags();
}

// ---------------- JoinGroup ----------------

result<join_group_request> decode_join_group(kreader& r, int16_t v) {
    join_group_request j;
    j.group_id = FLOE_TRY(r.str());
    j.session_timeout_ms = FLOE_TRY(r.i32());
    if (v >= 1) j.rebalance_timeout_ms = FLOE_TRY(r.i32());
    else j.rebalance_timeout_ms = j.session_timeout_ms;
    j.member_id = FLOE_TRY(r.str());
    if (v >= 5) j.group_instance_id = FLOE_TRY(r.nstr());
    j.protocol_type = FLOE_TRY(r.str());
    FLOE_TRY(read_array(r, j.protocols, [&](join_group_request::protocol& p) -> result<void> {
        p.name = FLOE_TRY(r.str());
        p.metadata = FLOE_TRY(r.bytes());
        FLOE_TRY(r.tags());
        return {};
    }));
    if (v >= 8) FLOE_TRY(r.nstr()); // reason
    FLOE_TRY(r.tags());
    return j;
}

void encode(kwriter& w, int16_t v, const join_group_response& r) {
    if (v >= 2) w.i32(0);
    w.i16(r.error_code);
    w.i32(r.generation_id);
    if (v >= 7) w.nstr(view(r.protocol_type));
    if (v >= 7) w.nstr(view(r.protocol_name));
    else w.str(r.protocol_name ? std::string_view(*r.protocol_name) : std::string_view{});
    w.str(r.leader);
    if (v >= 9) w.boolean(false);
    w.str(r.member_id);
    w.array_len(r.members.size());
    for (auto& m : r.members) {
        w.str(m.member_id);
        if (v >= 5) w.nstr(view(m.group_instance_id));
        w.bytes(m.metadata);
        w.tags();
    }
    w.tags();
}

// ---------------- SyncGroup ----------------

result<sync_group_request> decode_sync_group(kreader& r, int16_t v) {
    sync_group_request s;
    s.group_id = FLOE_TRY(r.str());
    s.generation_id = FLOE_TRY(r.i32());
    s.member_id = FLOE_TRY(r.str());
    if (v >= 3) s.group_instance_id = FLOE_TRY(r.nstr());
    if (v >= 5) {
        s.protocol_type = FLOE_TRY(r.nstr());
        s.protocol_name = FLOE_TRY(r.nstr());
    }
    FLOE_TRY(read_array(r, s.assignments, [&](sync_group_request::assignment& a) -> result<void> {
        a.member_id = FLOE_TRY(r.str());
        a.assignment = FLOE_TRY(r.bytes());
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return s;
}

void encode(kwriter& w, int16_t v, const sync_group_response& r) {
    if (v >= 1) w.i32(0);
    w.i16(r.error_code);
    if (v >= 5) {
        w.nstr(view(r.protocol_type));
        w.nstr(view(r.protocol_name));
    }
    w.bytes(r.assignment);
    w.tags();
}

// ---------------- Heartbeat ----------------

result<heartbeat_request> decode_heartbeat(kreader& r, int16_t v) {
    heartbeat_request h;
    h.group_id = FLOE_TRY(r.str());
    h.generation_id = FLOE_TRY(r.i32());
    h.member_id = FLOE_TRY(r.str());
    if (v >= 3) h.group_instance_id = FLOE_TRY(r.nstr());
    FLOE_TRY(r.tags());
    return h;
}

void encode_heartbeat(kwriter& w, int16_t v, const error_only_response& r) {
    if (v >= 1) w.i32(0);
    w.i16(r.error_code);
    w.tags();
}

// ---------------- LeaveGroup ----------------

result<leave_group_request> decode_leave_group(kreader& r, int16_t v) {
    leave_group_request l;
    l.group_id = FLOE_TRY(r.str());
    if (v <= 2) {
        l.members.push_back({FLOE_TRY(r.str()), std::nullopt});
    } else {
        FLOE_TRY(read_array(r, l.members, [&](leave_group_request::member& m) -> result<void> {
            m.member_id = FLOE_TRY(r.str());
            m.group_instance_id = FLOE_TRY(r.nstr());
            if (v >= 5) FLOE_TRY(r.nstr());
            FLOE_TRY(r.tags());
            return {};
        }));
    }
    FLOE_TRY(r.tags());
    return l;
}

void encode(kwriter& w, int16_t v, const leave_group_response& r) {
    if (v >= 1) w.i32(0);
    w.i16(r.error_code);
    if (v >= 3) {
        w.array_len(r.members.size());
        for (auto& m : r.members) {
            w.str(m.member_id);
            w.nstr(view(m.group_instance_id));
            w.i16(m.error_code);
            w.tags();
        }
    }
    w.tags();
}

// ---------------- OffsetCommit ----------------

result<offset_commit_request> decode_offset_commit(kreader& r, int16_t v) {
    offset_commit_request o;
    o.group_id = FLOE_TRY(r.str());
    if (v >= 1) {
        o.generation_id = FLOE_TRY(r.i32());
        o.member_id = FLOE_TRY(r.str());
    }
    if (v >= 7) o.group_instance_id = FLOE_TRY(r.nstr());
    if (v >= 2 && v <= 4) FLOE_TRY(r.i64());
    FLOE_TRY(read_array(r, o.topics, [&](offset_commit_request::topic& t) -> result<void> {
        t.name = FLOE_TRY(r.str());
        FLOE_TRY(read_array(r, t.partitions, [&](offset_commit_request::partition& p) -> result<void> {
            p.index = FLOE_TRY(r.i32());
            p.offset = FLOE_TRY(r.i64());
            if (v >= 6) p.leader_epoch = FLOE_TRY(r.i32());
            if (v == 1) FLOE_TRY(r.i64());
            p.metadata = FLOE_TRY(r.nstr());
            FLOE_TRY(r.tags());
            return {};
        }));
        FLOE_TRY(r.tags());
        return {};
    }));
    FLOE_TRY(r.tags());
    return o;
}

void encode(kwriter& w, int16_t v, const offset_commit_response& r) {
    if (v >= 3) w.i32(0);
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

// ---------------- OffsetFetch ----------------

namespace {
result<void> read_offset_fetch_topics(kreader& r, offset_fetch_request::group& g) {
    int32_t n = FLOE_TRY(r.array_len());
    g.all_topics = n < 0;
    if (n <= 0) return {};
    g.topics.reserve(size_t(n));
    for (int32_t i = 0; i < n; ++i) {
        auto& t = g.topics.emplace_back();
        t.name = FLOE_TRY(r.str());
        int32_t np = FLOE_TRY(r.array_len(4));
        if (np > 0) t.partitions.reserve(size_t(np));
        for (int32_t k = 0; k < np; ++k) t.partitions.push_back(FLOE_TRY(r.i32()));
        FLOE_TRY(r.tags());
    }
    return {};
}
} // namespace

result<offset_fetch_request> decode_offset_fetch(kreader& r, int16_t v) {
    offset_fetch_request o;
    if (v <= 7) {
        auto& g = o.groups.emplace_back();
        g.group_id = FLOE_TRY(r.str());
        FLOE_TRY(read_offset_fetch_topics(r, g));
    } else {
        FLOE_TRY(read_array(r, o.groups, [&](offset_fetch_request::group& g) -> result<void> {
            g.group_id = FLOE_TRY(r.str());
            if (v >= 9) {
                g.member_id = FLOE_TRY(r.nstr());
                g.member_epoch = FLOE_TRY(r.i32());
            }
            FLOE_TRY(read_offset_fetch_topics(r, g));
            FLOE_TRY(r.tags());
            return {};
        }));
    }
    if (v >= 7) o.require_stable = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return o;
}

void encode(kwriter& w, int16_t v, const offset_fetch_response& r) {
    if (v >= 3) w.i32(0);
    auto write_topics = [&](const std::vector<offset_fetch_response::topic>& topics) {
        w.array_len(topics.size());
        for (auto& t : topics) {
            w.str(t.name);
            w.array_len(t.partitions.size());
            for (auto& p : t.partitions) {
                w.i32(p.index);
                w.i64(p.offset);
                if (v >= 5) w.i32(p.leader_epoch);
                w.nstr(view(p.metadata));
                w.i16(p.error_code);
                w.tags();
            }
            w.tags();
        }
    };
    if (v <= 7) {
        offset_fetch_response::group none;
        auto& g = r.groups.empty() ? none : r.groups.front();
        write_topics(g.topics);
        if (v >= 2) w.i16(g.error_code);
    } else {
        w.array_len(r.groups.size());
        for (auto& g : r.groups) {
            w.str(g.group_id);
            write_topics(g.topics);
            w.i16(g.error_code);
            w.tags();
        }
    }
    w.tags();
}

// ---------------- ListGroups / DescribeGroups / DeleteGroups ----------------

result<list_groups_request> decode_list_groups(kreader& r, int16_t v) {
    list_groups_request l;
    if (v >= 4) l.states_filter = FLOE_TRY(read_string_array(r));
    if (v >= 5) FLOE_TRY(read_string_array(r));
    FLOE_TRY(r.tags());
    return l;
}

void encode(kwriter& w, int16_t v, const list_groups_response& r) {
    if (v >= 1) w.i32(0);
    w.i16(r.error_code);
    w.array_len(r.groups.size());
    for (auto& g : r.groups) {
        w.str(g.group_id);
        w.str(g.protocol_type);
        if (v >= 4) w.str(g.state);
        w.tags();
    }
    w.tags();
}

result<describe_groups_request> decode_describe_groups(kreader& r, int16_t v) {
    describe_groups_request d;
    d.groups = FLOE_TRY(read_string_array(r));
    if (v >= 3) d.include_authorized_operations = FLOE_TRY(r.boolean());
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t v, const describe_groups_response& r) {
    if (v >= 1) w.i32(0);
    w.array_len(r.groups.size());
    for (auto& g : r.groups) {
        w.i16(g.error_code);
        w.str(g.group_id);
        w.str(g.state);
        w.str(g.protocol_type);
        w.str(g.protocol_data);
        w.array_len(g.members.size());
        for (auto& m : g.members) {
            w.str(m.member_id);
            if (v >= 4) w.nstr(view(m.group_instance_id));
            w.str(m.client_id);
            w.str(m.client_host);
            w.bytes(m.metadata);
            w.bytes(m.assignment);
            w.tags();
        }
        if (v >= 3) w.i32(g.authorized_operations);
        w.tags();
    }
    w.tags();
}

result<delete_groups_request> decode_delete_groups(kreader& r, int16_t) {
    delete_groups_request d;
    d.groups = FLOE_TRY(read_string_array(r));
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t, const delete_groups_response& r) {
    w.i32(0);
    w.array_len(r.results.size());
    for (auto& g : r.results) {
        w.str(g.group_id);
        w.i16(g.error_code);
        w.tags();
    }
    w.tags();
}

// ---------------- InitProducerId ----------------

result<init_producer_id_request> decode_init_producer_id(kreader& r, int16_t v) {
    init_producer_id_request i;
    i.transactional_id = FLOE_TRY(r.nstr());
    i.transaction_timeout_ms = FLOE_TRY(r.i32());
    if (v >= 3) {
        i.producer_id = FLOE_TRY(r.i64());
        i.producer_epoch = FLOE_TRY(r.i16());
    }
    FLOE_TRY(r.tags());
    return i;
}

void encode(kwriter& w, int16_t, const init_producer_id_response& r) {
    w.i32(0);
    w.i16(r.error_code);
    w.i64(r.producer_id);
    w.i16(r.producer_epoch);
    w.tags();
}

// ---------------- DescribeCluster ----------------

result<describe_cluster_request> decode_describe_cluster(kreader& r, int16_t v) {
    describe_cluster_request d;
    d.include_cluster_authorized_operations = FLOE_TRY(r.boolean());
    if (v >= 1) d.endpoint_type = FLOE_TRY(r.i8());
    FLOE_TRY(r.tags());
    return d;
}

void encode(kwriter& w, int16_t v, const describe_cluster_response& r) {
    w.i32(0);
    w.i16(r.error_code);
    w.nstr(std::nullopt);
    if (v >= 1) w.i8(1);
    w.str(r.cluster_id);
    w.i32(r.controller_id);
    w.array_len(r.brokers.size());
    for (auto& b : r.brokers) {
        w.i32(b.node_id);
        w.str(b.host);
        w.i32(b.port);
        w.nstr(std::nullopt);
        w.tags();
    }
    w.i32(r.cluster_authorized_operations);
    w.tags();
}

// ---------------- any ----------------

result<void> decode_any(int16_t api, int16_t v, bool flexible, bytes_view body) {
    kreader r(body, flexible);
    switch (api_key(api)) {
    case api_key::api_versions:
        if (v >= 3) {
            FLOE_TRY(r.str());
            FLOE_TRY(r.str());
        }
        FLOE_TRY(r.tags());
        return {};
    case api_key::metadata: FLOE_TRY(decode_metadata(r, v)); return {};
    case api_key::produce: FLOE_TRY(decode_produce(r, v)); return {};
    case api_key::fetch: FLOE_TRY(decode_fetch(r, v)); return {};
    case api_key::list_offsets: FLOE_TRY(decode_list_offsets(r, v)); return {};
    case api_key::create_topics: FLOE_TRY(decode_create_topics(r, v)); return {};
    case api_key::delete_topics: FLOE_TRY(decode_delete_topics(r, v)); return {};
    case api_key::describe_configs: FLOE_TRY(decode_describe_configs(r, v)); return {};
    case api_key::alter_configs: FLOE_TRY(decode_alter_configs(r, v)); return {};
    case api_key::incremental_alter_configs:
        FLOE_TRY(decode_incremental_alter_configs(r, v));
        return {};
    case api_key::find_coordinator: FLOE_TRY(decode_find_coordinator(r, v)); return {};
    case api_key::join_group: FLOE_TRY(decode_join_group(r, v)); return {};
    case api_key::sync_group: FLOE_TRY(decode_sync_group(r, v)); return {};
    case api_key::heartbeat: FLOE_TRY(decode_heartbeat(r, v)); return {};
    case api_key::leave_group: FLOE_TRY(decode_leave_group(r, v)); return {};
    case api_key::offset_commit: FLOE_TRY(decode_offset_commit(r, v)); return {};
    case api_key::offset_fetch: FLOE_TRY(decode_offset_fetch(r, v)); return {};
    case api_key::list_groups: FLOE_TRY(decode_list_groups(r, v)); return {};
    case api_key::describe_groups: FLOE_TRY(decode_describe_groups(r, v)); return {};
    case api_key::delete_groups: FLOE_TRY(decode_delete_groups(r, v)); return {};
    case api_key::init_producer_id: FLOE_TRY(decode_init_producer_id(r, v)); return {};
    case api_key::describe_cluster: FLOE_TRY(decode_describe_cluster(r, v)); return {};
    default:
        if (auto t = decode_any_txn(api, v, r)) return *t;
        if (auto t = decode_any_cgroup(api, v, r)) return *t;
        return decode_any_admin(api, v, r);
    }
}

} // namespace floe::kafka
