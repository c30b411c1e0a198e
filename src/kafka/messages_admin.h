#pragma once

// Request and response models, with their codecs, of the admin APIs added for Kafka admin
// clients: CreatePartitions, DeleteRecords, OffsetDelete, DescribeLogDirs, ElectLeaders,
// DescribeProducers. Same conventions as messages.h: views point into the request frame; every
// field of the asked version is consumed on decode and written on encode.

#include "kafka/messages.h"

namespace floe::kafka {

// ---------------- CreatePartitions (37) ----------------
struct create_partitions_request {
    struct topic {
        std::string_view name;
        int32_t count = 0;
        bool has_assignments = false; ///< a non-null assignment array was sent
        int32_t assignment_count = 0;
    };
    std::vector<topic> topics;
    int32_t timeout_ms = 0;
    bool validate_only = false;
};
result<create_partitions_request> decode_create_partitions(kreader& r, int16_t v);

struct create_partitions_response {
    struct result_entry {
        std::string name;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const create_partitions_response& r);

// ---------------- DeleteRecords (21) ----------------
struct delete_records_request {
    struct partition {
        int32_t index = 0;
        int64_t offset = 0; ///< -1: the high watermark
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
    int32_t timeout_ms = 0;
};
result<delete_records_request> decode_delete_records(kreader& r, int16_t v);

struct delete_records_response {
    struct partition {
        int32_t index = 0;
        int64_t low_watermark = -1;
        int16_t error_code = 0;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const delete_records_response& r);

// ---------------- OffsetDelete (47) ----------------
struct offset_delete_request {
    std::string_view group_id;
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    std::vector<topic> topics;
};
result<offset_delete_request> decode_offset_delete(kreader& r, int16_t v);

struct offset_delete_response {
    int16_t error_code = 0;
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const offset_delete_response& r);

// ---------------- DescribeLogDirs (35) ----------------
struct describe_log_dirs_request {
    bool all_topics = false; ///< null topic array: every partition
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    std::vector<topic> topics;
};
result<describe_log_dirs_request> decode_describe_log_dirs(kreader& r, int16_t v);

struct describe_log_dirs_response {
    int16_t error_code = 0;
    struct partition {
        int32_t index = 0;
        int64_t size = 0;
        int64_t offset_lag = 0;
        bool is_future = false;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    struct dir {
        int16_t error_code = 0;
        std::string path;
        std::vector<topic> topics;
        int64_t total_bytes = -1;
        int64_t usable_bytes = -1;
    };
    std::vector<dir> results;
};
void encode(kwriter& w, int16_t v, const describe_log_dirs_response& r);

// ---------------- ElectLeaders (43) ----------------
struct elect_leaders_request {
    int8_t election_type = 0; ///< 0 preferred, 1 unclean (v1+)
    bool all_partitions = false;
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    std::vector<topic> topics;
    int32_t timeout_ms = 0;
};
result<elect_leaders_request> decode_elect_leaders(kreader& r, int16_t v);

struct elect_leaders_response {
    int16_t error_code = 0;
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const elect_leaders_response& r);

// ---------------- DescribeProducers (61) ----------------
struct describe_producers_request {
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    std::vector<topic> topics;
};
result<describe_producers_request> decode_describe_producers(kreader& r, int16_t v);

struct describe_producers_response {
    struct producer {
        int64_t producer_id = -1;
        int32_t producer_epoch = -1;
        int32_t last_sequence = -1;
        int64_t last_timestamp = -1;
        int32_t coordinator_epoch = -1;
        int64_t current_txn_start_offset = -1;
    };
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        std::vector<producer> producers;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
void encode(kwriter& w, int16_t v, const describe_producers_response& r);

/// decode_any for the APIs above; errc::unsupported for any other key.
result<void> decode_any_admin(int16_t api, int16_t version, kreader& r);

} // namespace floe::kafka
