#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "base/uuid.h"

#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <cstdint>
#include <optional>
#include <string_view>

namespace floe::kafka {

/// Kafka API keys Floe serves. Values are the wire numbers.
enum class api_key : int16_t {
    produce = 0,
    fetch = 1,
    list_offsets = 2,
    metadata = 3,
    offset_commit = 8,
    offset_fetch = 9,
    find_coordinator = 10,
    join_group = 11,
    heartbeat = 12,
    leave_group = 13,
    sync_group = 14,
    describe_groups = 15,
    list_groups = 16,
    sasl_handshake = 17,
    api_versions = 18,
    create_topics = 19,
    delete_topics = 20,
    delete_records = 21,
    init_producer_id = 22,
    describe_acls = 29,
    create_acls = 30,
    delete_acls = 31,
    add_partitions_to_txn = 24,
    add_offsets_to_txn = 25,
    end_txn = 26,
    txn_offset_commit = 28,
    describe_configs = 32,
    alter_configs = 33,
    describe_log_dirs = 35,
    sasl_authenticate = 36,
    create_partitions = 37,
    delete_groups = 42,
    elect_leaders = 43,
    incremental_alter_configs = 44,
    offset_delete = 47,
    describe_user_scram_credentials = 50,
    alter_user_scram_credentials = 51,
    describe_cluster = 60,
    describe_producers = 61,
    describe_transactions = 65,
    list_transactions = 66,
    consumer_group_heartbeat = 68,
    consumer_group_describe = 69,
};

/// Kafka protocol error codes used by Floe (only at the protocol edge).
enum class kerr : int16_t {
    none = 0,
    offset_out_of_range = 1,
    corrupt_message = 2,
    unknown_topic_or_partition = 3,
    invalid_fetch_size = 4,
    leader_not_available = 5,
    not_leader_or_follower = 6,
    request_timed_out = 7,
    message_too_large = 10,
    coordinator_load_in_progress = 14,
    coordinator_not_available = 15,
    not_coordinator = 16,
    invalid_topic_exception = 17,
    record_list_too_large = 18,
    not_enough_replicas = 19,
    invalid_required_acks = 21,
    illegal_generation = 22,
    inconsistent_group_protocol = 23,
    invalid_group_id = 24,
    unknown_member_id = 25,
    invalid_session_timeout = 26,
    rebalance_in_progress = 27,
    topic_authorization_failed = 29,
    group_authorization_failed = 30,
    cluster_authorization_failed = 31,
    invalid_timestamp = 32,
    unsupported_sasl_mechanism = 33,
    illegal_sasl_state = 34,
    unsupported_version = 35,
    topic_already_exists = 36,
    invalid_partitions = 37,
    invalid_replication_factor = 38,
    invalid_replica_assignment = 39,
    invalid_config = 40,
    not_controller = 41,
    invalid_request = 42,
    unsupported_for_message_format = 43,
    policy_violation = 44,
    out_of_order_sequence_number = 45,
    duplicate_sequence_number = 46,
    invalid_producer_epoch = 47,
    invalid_txn_state = 48,
    invalid_producer_id_mapping = 49,
    invalid_transaction_timeout = 50,
    concurrent_transactions = 51,
    transaction_coordinator_fenced = 52,
    transactional_id_authorization_failed = 53,
    security_disabled = 54,
    operation_not_attempted = 55,
    producer_fenced = 90,
    transactional_id_not_found = 105,
    unknown_server_error = -1,
    group_id_not_found = 69,
    non_empty_group = 68,
    unknown_producer_id = 59,
    kafka_storage_error = 56,
    sasl_authentication_failed = 58,
    resource_not_found = 91,
    duplicate_resource = 92,
    unacceptable_credential = 93,
    unsupported_compression_type = 76,
    unknown_topic_id = 100,
    member_id_required = 79,
    fenced_instance_id = 82,
    invalid_record = 87,
    inconsistent_topic_id = 103,
    fetch_session_id_not_found = 70,
    invalid_fetch_session_epoch = 71,
    election_not_needed = 84,
    group_subscribed_to_topic = 86,
    group_max_size_reached = 81,
    fenced_member_epoch = 110,
    unreleased_instance_id = 111,
    unsupported_assignor = 112,
    stale_member_epoch = 113,
    invalid_regular_expression = 114,
};

/// Version range Floe advertises for one API.
struct api_range {
    api_key key;
    int16_t min;
    int16_t max;
    int16_t first_flexible; ///< first version using compact types and tagged fields
};

/// Every API Floe serves, in ApiVersions order. Anything not here is not advertised.
std::span<const api_range> supported_apis() noexcept;
/// The range for `key`, or nullptr when Floe does not serve it.
const api_range* find_api(int16_t key) noexcept;
std::string_view api_name(int16_t key) noexcept;

using floe::uuid;

/// Reads Kafka primitive types over untrusted bytes, switching between classic and flexible
/// (compact, tagged) encodings. Views returned point into the input, which must outlive them.
/// Every length is checked against the bytes left before anything is allocated.
class kreader {
public:
    kreader(bytes_view data, bool flexible) : _r(data), _flex(flexible) {}

    bool flexible() const noexcept { return _flex; }
    size_t remaining() const noexcept { return _r.remaining(); }
    size_t position() const noexcept { return _r.position(); }
    bytes_view rest() const noexcept { return _r.rest(); }

    result<int8_t> i8() { return int8_t(FLOE_TRY(_r.u8())); }
    result<bool> boolean() { return FLOE_TRY(_r.u8()) != 0; }
    result<int16_t> i16() { return _r.be<int16_t>(); }
    result<int32_t> i32() { return _r.be<int32_t>(); }
    result<int64_t> i64() { return _r.be<int64_t>(); }
    result<uint64_t> uvarint();
    result<uuid> id();

    /// A non-nullable string (a null one decodes as empty).
    result<std::string_view> str();
    result<std::optional<std::string_view>> nstr();
    /// Bytes (a null value decodes as empty).
    result<bytes_view> bytes();
    result<std::optional<bytes_view>> nbytes();
    /// Array element count; -1 for a null array. Bounded by the bytes left (each element takes
    /// at least `min_elem` bytes), so callers may reserve this many elements.
    result<int32_t> array_len(size_t min_elem = 1);
    /// Skips the tagged-field section (flexible versions only; a no-op otherwise).
    result<void> tags();

private:
    result<int64_t> length32_or_compact(bool is_array);
    byte_reader _r;
    bool _flex;
};

/// Writes Kafka primitive types into a growing buffer, classic or flexible. Not thread-safe.
class kwriter {
public:
    kwriter(byte_buffer& out, bool flexible) : _out(out), _flex(flexible) {}

    bool flexible() const noexcept { return _flex; }
    byte_buffer& buffer() noexcept { return _out; }

    void i8(int8_t v) { _out.push_back(uint8_t(v)); }
    void boolean(bool v) { _out.push_back(v ? 1 : 0); }
    void i16(int16_t v) { put(uint16_t(v)); }
    void i32(int32_t v) { put(uint32_t(v)); }
    void i64(int64_t v) { put(uint64_t(v)); }
    void uvarint(uint64_t v);
    void id(const uuid& u) { _out.insert(_out.end(), u.bytes.begin(), u.bytes.end()); }
    void str(std::string_view s);
    void nstr(std::optional<std::string_view> s);
    void bytes(bytes_view b);
    void nbytes(std::optional<bytes_view> b);
    void array_len(size_t n);
    void null_array();
    /// An empty tagged-field section (flexible versions only).
    void tags() {
        if (_flex) _out.push_back(0);
    }

private:
    template<typename T>
    void put(T v) {
        v = std::byteswap(v);
        size_t at = _out.size();
        _out.resize(at + sizeof(T));
        std::memcpy(_out.data() + at, &v, sizeof(T));
    }
    byte_buffer& _out;
    bool _flex;
};

/// A decoded request header (v0-v2). `client_id` views into the frame.
struct request_header {
    int16_t api_key = 0;
    int16_t api_version = 0;
    int32_t correlation_id = 0;
    std::optional<std::string_view> client_id;
    /// True when the API/version pair is one Floe serves.
    bool supported = false;
    bool flexible = false;
};

/// Decodes the header at the start of a request frame (the bytes after the size prefix). For a
/// served API the header version follows the body's flexibility (v2 flexible, v1 classic); for
/// anything else only api key, version and correlation id are read (enough to answer with
/// UNSUPPORTED_VERSION). On success `body` is left at the first body byte.
result<request_header> decode_request_header(bytes_view frame, bytes_view& body);

/// Starts a response frame in `out`: a size placeholder and the response header. The header is
/// v1 (with tags) for flexible responses, except ApiVersions which always uses v0.
/// Returns the frame start for finish_response.
size_t begin_response(byte_buffer& out, const request_header& h);
/// Patches the size prefix of the frame started at `start`. `spliced` counts bytes that belong
/// to the frame but are sent from files (sendfile) rather than held in `out`.
void finish_response(byte_buffer& out, size_t start, size_t spliced = 0);

} // namespace floe::kafka
