#include "kafka/protocol.h"

#include "base/varint.h"

namespace floe::kafka {

namespace {
// Ranges as the issue asks; first_flexible from the Kafka message definitions.
constexpr api_range k_apis[] = {
    {api_key::produce, 3, 9, 9},
    {api_key::fetch, 4, 13, 12},
    {api_key::list_offsets, 1, 7, 6},
    {api_key::metadata, 0, 12, 9},
    {api_key::offset_commit, 0, 9, 8},
    {api_key::offset_fetch, 0, 9, 6},
    {api_key::find_coordinator, 0, 4, 3},
    {api_key::join_group, 0, 9, 6},
    {api_key::heartbeat, 0, 4, 4},
    {api_key::leave_group, 0, 5, 4},
    {api_key::sync_group, 0, 5, 4},
    {api_key::describe_groups, 0, 5, 5},
    {api_key::list_groups, 0, 4, 3},
    {api_key::sasl_handshake, 0, 1, 2}, // v0: raw SASL tokens follow the handshake
    {api_key::api_versions, 0, 3, 3},
    {api_key::create_topics, 2, 7, 5},
    {api_key::delete_topics, 1, 6, 4},
    {api_key::delete_records, 0, 2, 2},
    {api_key::init_producer_id, 0, 4, 2},
    {api_key::describe_acls, 0, 3, 2},
    {api_key::create_acls, 0, 3, 2},
    {api_key::delete_acls, 0, 3, 2},
    {api_key::add_partitions_to_txn, 0, 3, 3},
    {api_key::add_offsets_to_txn, 0, 3, 3},
    {api_key::end_txn, 0, 3, 3},
    {api_key::txn_offset_commit, 0, 3, 3},
    {api_key::describe_configs, 1, 4, 4},
    {api_key::alter_configs, 0, 2, 2},
    {api_key::describe_log_dirs, 0, 4, 2},
    {api_key::sasl_authenticate, 0, 2, 2},
    {api_key::create_partitions, 0, 3, 2},
    {api_key::delete_groups, 0, 2, 2},
    {api_key::elect_leaders, 0, 2, 2},
    {api_key::incremental_alter_configs, 0, 1, 1},
    {api_key::offset_delete, 0, 0, 1},
    {api_key::describe_user_scram_credentials, 0, 0, 0},
    {api_key::alter_user_scram_credentials, 0, 0, 0},
    {api_key::describe_cluster, 0, 1, 0},
    {api_key::describe_producers, 0, 0, 0},
    {api_key::describe_transactions, 0, 0, 0},
    {api_key::list_transactions, 0, 1, 0},
    {api_key::consumer_group_heartbeat, 0, 1, 0},
    {api_key::consumer_group_describe, 0, 0, 0},
};
} // namespace

std::span<const api_range> supported_apis() noexcept { return k_apis; }

const api_range* find_api(int16_t key) noexcept {
    for (auto& a : k_apis)
        if (int16_t(a.key) == key) return &a;
    return nullptr;
}

std::string_view api_name(int16_t key) noexcept {
    switch (api_key(key)) {
    case api_key::produce: return "Produce";
    case api_key::fetch: return "Fetch";
    case api_key::list_offsets: return "ListOffsets";
    case api_key::metadata: return "Metadata";
    case api_key::offset_commit: return "OffsetCommit";
    case api_key::offset_fetch: return "OffsetFetch";
    case api_key::find_coordinator: return "FindCoordinator";
    case api_key::join_group: return "JoinGroup";
    case api_key::heartbeat: return "Heartbeat";
    case api_key::leave_group: return "LeaveGroup";
    case api_key::sync_group: return "SyncGroup";
    case api_key::describe_groups: return "DescribeGroups";
    case api_key::list_groups: return "ListGroups";
    case api_key::api_versions: return "ApiVersions";
    case api_key::create_topics: return "CreateTopics";
    case api_key::delete_topics: return "DeleteTopics";
    case api_key::init_producer_id: return "InitProducerId";
    case api_key::describe_acls: return "DescribeAcls";
    case api_key::create_acls: return "CreateAcls";
    case api_key::delete_acls: return "DeleteAcls";
    case api_key::add_partitions_to_txn: return "AddPartitionsToTxn";
    case api_key::add_offsets_to_txn: return "AddOffsetsToTxn";
    case api_key::end_txn: return "EndTxn";
    case api_key::txn_offset_commit: return "TxnOffsetCommit";
    case api_key::describe_configs: return "DescribeConfigs";
    case api_key::alter_configs: return "AlterConfigs";
    case api_key::delete_groups: return "DeleteGroups";
    case api_key::incremental_alter_configs: return "IncrementalAlterConfigs";
    case api_key::describe_cluster: return "DescribeCluster";
    case api_key::delete_records: return "DeleteRecords";
    case api_key::describe_log_dirs: return "DescribeLogDirs";
    case api_key::create_partitions: return "CreatePartitions";
    case api_key::elect_leaders: return "ElectLeaders";
    case api_key::offset_delete: return "OffsetDelete";
    case api_key::describe_producers: return "DescribeProducers";
    case api_key::describe_transactions: return "DescribeTransactions";
    case api_key::list_transactions: return "ListTransactions";
    case api_key::consumer_group_heartbeat: return "ConsumerGroupHeartbeat";
    case api_key::consumer_group_describe: return "ConsumerGroupDescribe";
    case api_key::sasl_handshake: return "SaslHandshake";
    case api_key::sasl_authenticate: return "SaslAuthenticate";
    case api_key::describe_user_scram_credentials: return "DescribeUserScramCredentials";
    case api_key::alter_user_scram_credentials: return "AlterUserScramCredentials";
    }
    return "Unknown";
}

// ---- kreader ----

result<uint64_t> kreader::uvarint() { return read_uvarint(_r, 32); }

result<uuid> kreader::id() {
    auto b = FLOE_TRY(_r.bytes(16));
    uuid u;
    std::memcpy(u.bytes.data(), b.data(), 16);
    return u;
}

// Classic: int16 (strings) / int32 (bytes, arrays) length, -1 = null.
// Compact: uvarint N+1, 0 = null.
result<int64_t> kreader::length32_or_compact(bool is_array) {
    if (_flex) {
        uint64_t n = FLOE_TRY(read_uvarint(_r, 32));
        return int64_t(n) - 1;
    }
    return is_array ? int64_t(FLOE_TRY(_r.be<int32_t>())) : int64_t(FLOE_TRY(_r.be<int16_t>()));
}

result<std::optional<std::string_view>> kreader::nstr() {
    int64_t n = FLOE_TRY(length32_or_compact(false));
    if (n < 0) {
        if (n < -1) return fail(errc::corrupt, "negative string length {}", n);
        return std::optional<std::string_view>{};
    }
    auto b = FLOE_TRY(_r.bytes(size_t(n)));
    return std::optional<std::string_view>(as_chars(b));
}

result<std::string_view> kreader::str() {
    auto s = FLOE_TRY(nstr());
    return s ? *s : std::string_view{};
}

result<std::optional<bytes_view>> kreader::nbytes() {
    int64_t n = FLOE_TRY(length32_or_compact(true));
    if (n < 0) {
        if (n < -1) return fail(errc::corrupt, "negative bytes length {}", n);
        return std::optional<bytes_view>{};
    }
    return std::optional<bytes_view>(FLOE_TRY(_r.bytes(size_t(n))));
}

result<bytes_view> kreader::bytes() {
    auto b = FLOE_TRY(nbytes());
    return b ? *b : bytes_view{};
}

result<int32_t> kreader::array_len(size_t min_elem) {
    int64_t n = FLOE_TRY(length32_or_compact(true));
    if (n < -1) return fail(errc::corrupt, "negative array length {}", n);
    if (n > 0 && uint64_t(n) * std::max<size_t>(min_elem, 1) > _r.remaining())
        return fail(errc::corrupt, "array of {} elements cannot fit in {} bytes", n,
                    _r.remaining());
    return int32_t(n);
}

result<void> kreader::tags() {
    if (!_flex) return {};
    uint64_t n = FLOE_TRY(read_uvarint(_r, 32));
    if (n > _r.remaining()) return fail(errc::corrupt, "{} tagged fields in {} bytes", n, _r.remaining());
    for (uint64_t i = 0; i < n; ++i) {
        FLOE_TRY(read_uvarint(_r, 32)); // tag
        uint64_t size = FLOE_TRY(read_uvarint(_r, 32));
        FLOE_TRY(_r.skip(size_t(size)));
    }
    return {};
}

// ---- kwriter ----

void kwriter::uvarint(uint64_t v) { put_uvarint(_out, v); }

void kwriter::str(std::string_view s) {
    if (_flex) put_uvarint(_out, s.size() + 1);
    else put(uint16_t(s.size()));
    _out.insert(_out.end(), s.begin(), s.end());
}

void kwriter::nstr(std::optional<std::string_view> s) {
    if (s) return str(*s);
    if (_flex) _out.push_back(0);
    else put(uint16_t(0xFFFF));
}

void kwriter::bytes(bytes_view b) {
    if (_flex) put_uvarint(_out, b.size() + 1);
    else put(uint32_t(b.size()));
    _out.insert(_out.end(), b.begin(), b.end());
}

void kwriter::nbytes(std::optional<bytes_view> b) {
    if (b) return bytes(*b);
    null_array();
}

void kwriter::array_len(size_t n) {
    if (_flex) put_uvarint(_out, n + 1);
    else put(uint32_t(n));
}

void kwriter::null_array() {
    if (_flex) _out.push_back(0);
    else put(uint32_t(0xFFFFFFFF));
}

// ---- headers ----

result<request_header> decode_request_header(bytes_view frame, bytes_view& body) {
    byte_reader r(frame);
    request_header h;
    h.api_key = FLOE_TRY(r.be<int16_t>());
    h.api_version = FLOE_TRY(r.be<int16_t>());
    h.correlation_id = FLOE_TRY(r.be<int32_t>());
    const api_range* range = find_api(h.api_key);
    h.supported = range && h.api_version >= range->min && h.api_version <= range->max;
    if (!h.supported) {
        // Only key, version and correlation id are needed to answer UNSUPPORTED_VERSION; a
        // newer client's header layout may differ, so read no further.
        body = r.rest();
        return h;
    }
    h.flexible = h.api_version >= range->first_flexible;
    // client_id is a classic nullable string in header v1 and v2 alike.
    kreader kr(r.rest(), false);
    h.client_id = FLOE_TRY(kr.nstr());
    if (h.flexible) {
        kreader tr(kr.rest(), true);
        FLOE_TRY(tr.tags());
        body = tr.rest();
    } else {
        body = kr.rest();
    }
    return h;
}

size_t begin_response(byte_buffer& out, const request_header& h) {
    size_t start = out.size();
    kwriter w(out, false);
    w.i32(0);
    w.i32(h.correlation_id);
    if (h.flexible && h.api_key != int16_t(api_key::api_versions)) out.push_back(0);
    return start;
}

void finish_response(byte_buffer& out, size_t start, size_t spliced) {
    uint32_t n = std::byteswap(uint32_t(out.size() - start - 4 + spliced));
    std::memcpy(out.data() + start, &n, 4);
}

} // namespace floe::kafka
