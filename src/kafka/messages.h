#pragma once

// Request and response models of every API Floe serves, with their codecs. Requests are decoded
// from untrusted bytes (string_view / bytes_view fields point into the request frame, which must
// outlive the decoded value); responses are encoded for the version the client asked for.
// Fields a version does not carry are skipped on decode and not written on encode; only what
// Floe uses is kept from requests, but every field is consumed so the layout stays right.

#include "kafka/protocol.h"

#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::kafka {

using opt_sv = std::optional<std::string_view>;

/// Kafka's authorized-operations bitfields (bit n = AclOperation n) when no authorizer is
/// configured: every operation that applies to the resource type. `k_ops_not_requested` is
/// Kafka's answer when the client did not ask.
constexpr int32_t k_ops_not_requested = INT32_MIN;
// Topic: read, write, create, delete, alter, describe, describe_configs, alter_configs.
constexpr int32_t k_topic_all_ops =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
// Cluster: create, alter, describe, cluster_action, describe_configs, alter_configs,
// idempotent_write.
constexpr int32_t k_cluster_all_ops =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
constexpr int32_t k_group_all_ops = (1 << 3) | (1 << 6) | (1 << 8); // read delete describe


// ---------------- ApiVersions ----------------
struct api_versions_response {
    int16_t error_code = 0;
};
void encode(kwriter& w, int16_t v, const api_versions_response& r);

// ---------------- Metadata ----------------
struct metadata_request {
    bool all_topics = false; ///< null topic array (v1+) or empty array at v0
    struct topic {
        uuid topic_id;
        opt_sv name;
    };
    std::vector<topic> topics;
    bool allow_auto_topic_creation = true;
    bool include_cluster_authorized_operations = false; ///< v8-10
    bool include_topic_authorized_operations = false;   ///< v8+
};
result<metadata_request> decode_metadata(kreader& r, int16_t v);

struct broker_endpoint {
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
};
struct metadata_response {
    std::vector<broker_endpoint> brokers;
    std::string cluster_id;
    int32_t controller_id = 0;
    struct partition {
        int16_t error_code = 0;
        int32_t index = 0;
        int32_t leader = 0;
        int32_t leader_epoch = 0;
        /// Replicas and in-sync replicas listed (the leader first); empty: the leader alone.
        std::vector<int32_t> replicas;
    };
    struct topic {
        int16_t error_code = 0;
        std::string name;
        uuid topic_id;
        std::vector<partition> partitions;
        int32_t authorized_operations = k_ops_not_requested;
    };
    std::vector<topic> topics;
    int32_t cluster_authorized_operations = k_ops_not_requested;
};
void encode(kwriter& w, int16_t v, const metadata_response& r);

// ---------------- Produce ----------------
struct produce_request {
    opt_sv transactional_id;
    int16_t acks = 1;
    int32_t timeout_ms = 0;
    struct partition {
        int32_t index = 0;
        std::optional<bytes_view> records;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
result<produce_request> decode_produce(kreader& r, int16_t v);

struct produce_response {
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
        int64_t base_offset = -1;
        int64_t log_append_time = -1;
        int64_t log_start_offset = -1;
        /// KIP-467 (v8+): the records that made the batch be refused (index within its batch).
        struct record_error {
            int32_t batch_index = 0;
            std::optional<std::string> message;
        };
        std::vector<record_error> record_errors;
        std::optional<std::string> error_message;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const produce_response& r);

// ---------------- Fetch ----------------
struct fetch_request {
    int32_t max_wait_ms = 0;
    int32_t min_bytes = 0;
    int32_t max_bytes = 0x7fffffff;
    int8_t isolation_level = 0;
    int32_t session_id = 0;
    int32_t session_epoch = -1;
    struct partition {
        int32_t index = 0;
        int64_t fetch_offset = 0;
        int64_t log_start_offset = -1;
        int32_t max_bytes = 0;
    };
    struct topic {
        std::string_view name; ///< v4-12
        uuid topic_id;         ///< v13+
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
    struct forgotten_topic {
        std::string_view name; ///< v7-12
        uuid topic_id;         ///< v13+
        std::vector<int32_t> partitions;
    };
    std::vector<forgotten_topic> forgotten; ///< v7+: partitions leaving an incremental session
};
result<fetch_request> decode_fetch(kreader& r, int16_t v);

/// Fetch responses are encoded piecewise (records are appended straight from the log), so the
/// encoder is a set of steps rather than one model.
struct fetch_partition_header {
    int32_t index = 0;
    int16_t error_code = 0;
    int64_t high_watermark = -1;
    int64_t last_stable_offset = -1;
    int64_t log_start_offset = -1;
    struct aborted_txn {
        int64_t producer_id = -1;
        int64_t first_offset = -1;
    };
    /// read_committed answers: aborted transactions overlapping the records sent (empty for
    /// read_uncommitted).
    std::optional<std::vector<aborted_txn>> aborted;
};
void encode_fetch_response_start(kwriter& w, int16_t v, int16_t error_code, size_t topics,
                                 int32_t session_id = 0);
void encode_fetch_topic_start(kwriter& w, int16_t v, std::string_view name, const uuid& id,
                              size_t partitions);
/// Writes the partition fields up to and including the records length prefix; the caller then
/// appends exactly `records_size` bytes and calls encode_fetch_partition_end.
void encode_fetch_partition_start(kwriter& w, int16_t v, const fetch_partition_header& p,
                                  size_t records_size);
void encode_fetch_partition_end(kwriter& w, int16_t v);
void encode_fetch_topic_end(kwriter& w, int16_t v);
void encode_fetch_response_end(kwriter& w, int16_t v);

// ---------------- ListOffsets ----------------
struct list_offsets_request {
    int8_t isolation_level = 0;
    struct partition {
        int32_t index = 0;
        int64_t timestamp = -1;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
result<list_offsets_request> decode_list_offsets(kreader& r, int16_t v);

struct list_offsets_response {
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
        int64_t timestamp = -1;
        int64_t offset = -1;
        int32_t leader_epoch = 0;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const list_offsets_response& r);

// ---------------- CreateTopics ----------------
struct config_entry_in {
    std::string_view name;
    opt_sv value;
};
struct create_topics_request {
    struct topic {
        std::string_view name;
        int32_t num_partitions = -1;
        int16_t replication_factor = -1;
        bool has_assignments = false;
        int32_t assignment_count = 0;
        std::vector<config_entry_in> configs;
    };
    std::vector<topic> topics;
    int32_t timeout_ms = 0;
    bool validate_only = false;
};
result<create_topics_request> decode_create_topics(kreader& r, int16_t v);

struct config_synonym {
    std::string name;
    std::optional<std::string> value;
    int8_t source = 5;
};
struct config_entry_out {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    int8_t source = 5; ///< DEFAULT_CONFIG
    bool is_default = true;
    bool is_sensitive = false;
    int8_t config_type = 0; ///< ConfigType: 1 boolean, 2 string, 3 int, 5 long, 6 double, 7 list
    std::optional<std::string> documentation;
    std::vector<config_synonym> synonyms; ///< DescribeConfigs v1+ with include_synonyms
};
struct create_topics_response {
    struct topic {
        std::string name;
        uuid topic_id;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        int32_t num_partitions = -1;
        int16_t replication_factor = -1;
        std::vector<config_entry_out> configs;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const create_topics_response& r);

// ---------------- DeleteTopics ----------------
struct delete_topics_request {
    struct topic {
        opt_sv name;
        uuid topic_id;
    };
    std::vector<topic> topics;
    int32_t timeout_ms = 0;
};
result<delete_topics_request> decode_delete_topics(kreader& r, int16_t v);

struct delete_topics_response {
    struct topic {
        std::optional<std::string> name;
        uuid topic_id;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const delete_topics_response& r);

// ---------------- DescribeConfigs ----------------
enum class resource_type : int8_t { unknown = 0, topic = 2, broker = 4 };

struct describe_configs_request {
    struct resource {
        int8_t type = 0;
        std::string_view name;
        bool all_keys = true;
        std::vector<std::string_view> keys;
    };
    std::vector<resource> resources;
    bool include_synonyms = false;
    bool include_documentation = false;
};
result<describe_configs_request> decode_describe_configs(kreader& r, int16_t v);

struct describe_configs_response {
    struct result_entry {
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        int8_t type = 0;
        std::string name;
        std::vector<config_entry_out> configs;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const describe_configs_response& r);

// ---------------- AlterConfigs / IncrementalAlterConfigs ----------------
struct alter_configs_request {
    struct config {
        std::string_view name;
        int8_t op = 0; ///< incremental: 0 set, 1 delete, 2 append, 3 subtract; classic: set
        opt_sv value;
    };
    struct resource {
        int8_t type = 0;
        std::string_view name;
        std::vector<config> configs;
    };
    std::vector<resource> resources;
    bool validate_only = false;
};
result<alter_configs_request> decode_alter_configs(kreader& r, int16_t v);
result<alter_configs_request> decode_incremental_alter_configs(kreader& r, int16_t v);

struct alter_configs_response {
    struct resource {
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        int8_t type = 0;
        std::string name;
    };
    std::vector<resource> resources;
};
/// Same layout for AlterConfigs and IncrementalAlterConfigs.
void encode(kwriter& w, int16_t v, const alter_configs_response& r);

// ---------------- FindCoordinator ----------------
struct find_coordinator_request {
    int8_t key_type = 0;
    std::vector<std::string_view> keys; ///< one key before v4
};
result<find_coordinator_request> decode_find_coordinator(kreader& r, int16_t v);

struct find_coordinator_response {
    struct coordinator {
        std::string key;
        int32_t node_id = 0;
        std::string host;
        int32_t port = 0;
        int16_t error_code = 0;
    };
    std::vector<coordinator> coordinators; ///< exactly one before v4
};
void encode(kwriter& w, int16_t v, const find_coordinator_response& r);

// ---------------- JoinGroup ----------------
struct join_group_request {
    std::string_view group_id;
    int32_t session_timeout_ms = 0;
    int32_t rebalance_timeout_ms = -1;
    std::string_view member_id;
    opt_sv group_instance_id;
    std::string_view protocol_type;
    struct protocol {
        std::string_view name;
        bytes_view metadata;
    };
    std::vector<protocol> protocols;
};
result<join_group_request> decode_join_group(kreader& r, int16_t v);

struct join_group_response {
    int16_t error_code = 0;
    int32_t generation_id = -1;
    std::optional<std::string> protocol_type;
    std::optional<std::string> protocol_name;
    std::string leader;
    std::string member_id;
    struct member {
        std::string member_id;
        std::optional<std::string> group_instance_id;
        byte_buffer metadata;
    };
    std::vector<member> members;
};
void encode(kwriter& w, int16_t v, const join_group_response& r);

// ---------------- SyncGroup ----------------
struct sync_group_request {
    std::string_view group_id;
    int32_t generation_id = -1;
    std::string_view member_id;
    opt_sv group_instance_id;
    opt_sv protocol_type;
    opt_sv protocol_name;
    struct assignment {
        std::string_view member_id;
        bytes_view assignment;
    };
    std::vector<assignment> assignments;
};
result<sync_group_request> decode_sync_group(kreader& r, int16_t v);

struct sync_group_response {
    int16_t error_code = 0;
    std::optional<std::string> protocol_type;
    std::optional<std::string> protocol_name;
    byte_buffer assignment;
};
void encode(kwriter& w, int16_t v, const sync_group_response& r);

// ---------------- Heartbeat ----------------
struct heartbeat_request {
    std::string_view group_id;
    int32_t generation_id = -1;
    std::string_view member_id;
    opt_sv group_instance_id;
};
result<heartbeat_request> decode_heartbeat(kreader& r, int16_t v);
/// Heartbeat, and every response that is just throttle + error code.
struct error_only_response {
    int16_t error_code = 0;
};
void encode_heartbeat(kwriter& w, int16_t v, const error_only_response& r);

// ---------------- LeaveGroup ----------------
struct leave_group_request {
    std::string_view group_id;
    struct member {
        std::string_view member_id;
        opt_sv group_instance_id;
    };
    std::vector<member> members; ///< one (member_id only) before v3
};
result<leave_group_request> decode_leave_group(kreader& r, int16_t v);

struct leave_group_response {
    int16_t error_code = 0;
    struct member {
        std::string member_id;
        std::optional<std::string> group_instance_id;
        int16_t error_code = 0;
    };
    std::vector<member> members;
};
void encode(kwriter& w, int16_t v, const leave_group_response& r);

// ---------------- OffsetCommit ----------------
struct offset_commit_request {
    std::string_view group_id;
    int32_t generation_id = -1;
    std::string_view member_id;
    opt_sv group_instance_id;
    struct partition {
        int32_t index = 0;
        int64_t offset = 0;
        int32_t leader_epoch = -1;
        opt_sv metadata;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
result<offset_commit_request> decode_offset_commit(kreader& r, int16_t v);

struct offset_commit_response {
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const offset_commit_response& r);

// ---------------- OffsetFetch ----------------
struct offset_fetch_request {
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    struct group {
        std::string_view group_id;
        bool all_topics = false; ///< null topics: every committed offset of the group
        std::vector<topic> topics;
        std::optional<std::string_view> member_id; ///< v9+ (KIP-848 members)
        int32_t member_epoch = -1;                 ///< v9+
    };
    std::vector<group> groups; ///< exactly one before v8
    bool require_stable = false;
};
result<offset_fetch_request> decode_offset_fetch(kreader& r, int16_t v);

struct offset_fetch_response {
    struct partition {
        int32_t index = 0;
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string> metadata;
        int16_t error_code = 0;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    struct group {
        std::string group_id;
        std::vector<topic> topics;
        int16_t error_code = 0;
    };
    std::vector<group> groups; ///< exactly one before v8
};
void encode(kwriter& w, int16_t v, const offset_fetch_response& r);

// ---------------- ListGroups / DescribeGroups / DeleteGroups ----------------
struct list_groups_request {
    std::vector<std::string_view> states_filter;
};
result<list_groups_request> decode_list_groups(kreader& r, int16_t v);
struct list_groups_response {
    int16_t error_code = 0;
    struct group {
        std::string group_id;
        std::string protocol_type;
        std::string state;
    };
    std::vector<group> groups;
};
void encode(kwriter& w, int16_t v, const list_groups_response& r);

struct describe_groups_request {
    std::vector<std::string_view> groups;
    bool include_authorized_operations = false;
};
result<describe_groups_request> decode_describe_groups(kreader& r, int16_t v);
struct describe_groups_response {
    struct member {
        std::string member_id;
        std::optional<std::string> group_instance_id;
        std::string client_id;
        std::string client_host;
        byte_buffer metadata;
        byte_buffer assignment;
    };
    struct group {
        int16_t error_code = 0;
        std::string group_id;
        std::string state;
        std::string protocol_type;
        std::string protocol_data;
        std::vector<member> members;
        int32_t authorized_operations = k_ops_not_requested;
    };
    std::vector<group> groups;
};
void encode(kwriter& w, int16_t v, const describe_groups_response& r);

struct delete_groups_request {
    std::vector<std::string_view> groups;
};
result<delete_groups_request> decode_delete_groups(kreader& r, int16_t v);
struct delete_groups_response {
    struct result_entry {
        std::string group_id;
        int16_t error_code = 0;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const delete_groups_response& r);

// ---------------- InitProducerId ----------------
struct init_producer_id_request {
    opt_sv transactional_id;
    int32_t transaction_timeout_ms = 0;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
};
result<init_producer_id_request> decode_init_producer_id(kreader& r, int16_t v);
struct init_producer_id_response {
    int16_t error_code = 0;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
};
void encode(kwriter& w, int16_t v, const init_producer_id_response& r);

// ---------------- DescribeCluster ----------------
struct describe_cluster_request {
    bool include_cluster_authorized_operations = false;
    int8_t endpoint_type = 1;
};
result<describe_cluster_request> decode_describe_cluster(kreader& r, int16_t v);
struct describe_cluster_response {
    int16_t error_code = 0;
    std::string cluster_id;
    int32_t controller_id = 0;
    std::vector<broker_endpoint> brokers;
    int32_t cluster_authorized_operations = k_ops_not_requested;
};
void encode(kwriter& w, int16_t v, const describe_cluster_response& r);

/// Decodes the body of any served request just to check it is well formed (the fuzz target and
/// the server's early validation). Fails with errc::corrupt on malformed input.
result<void> decode_any(int16_t api, int16_t version, bool flexible, bytes_view body);

} // namespace floe::kafka
