#pragma once

// Request and response models, with their codecs, of the KIP-848 consumer group APIs:
// ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69). Same conventions as messages.h:
// views point into the request frame; every field of the asked version is consumed on decode
// and written on encode. Both APIs are flexible from version 0.

#include "kafka/messages.h"

namespace floe::kafka {

/// Partitions of one topic, named by topic id (the heartbeat's TopicPartitions).
struct cg_topic_partitions {
    uuid topic_id;
    std::vector<int32_t> partitions;
};

// ---------------- ConsumerGroupHeartbeat (68) ----------------
struct consumer_group_heartbeat_request {
    std::string_view group_id;
    std::string_view member_id;
    int32_t member_epoch = 0;
    std::optional<std::string_view> instance_id;
    std::optional<std::string_view> rack_id;
    int32_t rebalance_timeout_ms = -1;
    /// null: unchanged since the last heartbeat.
    std::optional<std::vector<std::string_view>> subscribed_topic_names;
    std::optional<std::string_view> subscribed_topic_regex; ///< v1+; null: unchanged
    std::optional<std::string_view> server_assignor;
    /// null: unchanged since the last heartbeat; else the partitions the member owns.
    std::optional<std::vector<cg_topic_partitions>> owned;
};
result<consumer_group_heartbeat_request> decode_consumer_group_heartbeat(kreader& r, int16_t v);

struct consumer_group_heartbeat_response {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::optional<std::string> member_id;
    int32_t member_epoch = 0;
    int32_t heartbeat_interval_ms = 0;
    /// null: unchanged; else the partitions the member may use now.
    std::optional<std::vector<cg_topic_partitions>> assignment;
};
void encode(kwriter& w, int16_t v, const consumer_group_heartbeat_response& r);

// ---------------- ConsumerGroupDescribe (69) ----------------
struct consumer_group_describe_request {
    std::vector<std::string_view> group_ids;
    bool include_authorized_operations = false;
};
result<consumer_group_describe_request> decode_consumer_group_describe(kreader& r, int16_t v);

struct consumer_group_describe_response {
    struct topic_partitions {
        uuid topic_id;
        std::string topic_name;
        std::vector<int32_t> partitions;
    };
    struct member {
        std::string member_id;
        std::optional<std::string> instance_id;
        std::optional<std::string> rack_id;
        int32_t member_epoch = 0;
        std::string client_id;
        std::string client_host;
        std::vector<std::string> subscribed_topic_names;
        std::optional<std::string> subscribed_topic_regex;
        std::vector<topic_partitions> assignment;
        std::vector<topic_partitions> target_assignment;
    };
    struct group {
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        std::string group_id;
        std::string group_state;
        int32_t group_epoch = 0;
        int32_t assignment_epoch = 0;
        std::string assignor_name;
        std::vector<member> members;
        int32_t authorized_operations = INT32_MIN;
    };
    std::vector<group> groups;
};
void encode(kwriter& w, int16_t v, const consumer_group_describe_response& r);

/// decode_any for these APIs; nullopt when `api` is not one of them.
std::optional<result<void>> decode_any_cgroup(int16_t api, int16_t v, kreader& r);

} // namespace floe::kafka
