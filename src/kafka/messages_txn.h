#pragma once

// Codecs of the transaction APIs (KIP-98): AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// TxnOffsetCommit, DescribeTransactions, ListTransactions. InitProducerId is in messages.h.
// Request views point into the frame, which must outlive them.

#include "kafka/protocol.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::kafka {

// ---------------- AddPartitionsToTxn (24) v0-3 ----------------
struct add_partitions_to_txn_request {
    std::string_view transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    struct topic {
        std::string_view name;
        std::vector<int32_t> partitions;
    };
    std::vector<topic> topics;
};
result<add_partitions_to_txn_request> decode_add_partitions_to_txn(kreader& r, int16_t v);
struct add_partitions_to_txn_response {
    struct partition {
        int32_t index = 0;
        int16_t error_code = 0;
    };
    struct topic {
        std::string name;
        std::vector<partition> partitions;
    };
    std::vector<topic> results;
};
void encode(kwriter& w, int16_t v, const add_partitions_to_txn_response& r);

// ---------------- AddOffsetsToTxn (25) v0-3 ----------------
struct add_offsets_to_txn_request {
    std::string_view transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    std::string_view group_id;
};
result<add_offsets_to_txn_request> decode_add_offsets_to_txn(kreader& r, int16_t v);

// ---------------- EndTxn (26) v0-3 ----------------
struct end_txn_request {
    std::string_view transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    bool committed = false;
};
result<end_txn_request> decode_end_txn(kreader& r, int16_t v);

/// AddOffsetsToTxn and EndTxn answer {throttle, error} (+ tags).
struct txn_error_response {
    int16_t error_code = 0;
};
void encode(kwriter& w, int16_t v, const txn_error_response& r);

// ---------------- TxnOffsetCommit (28) v0-3 ----------------
struct txn_offset_commit_request {
    std::string_view transactional_id;
    std::string_view group_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t generation_id = -1;
    std::string_view member_id;
    std::optional<std::string_view> group_instance_id;
    struct partition {
        int32_t index = 0;
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string_view> metadata;
    };
    struct topic {
        std::string_view name;
        std::vector<partition> partitions;
    };
    std::vector<topic> topics;
};
result<txn_offset_commit_request> decode_txn_offset_commit(kreader& r, int16_t v);
/// Same layout as AddPartitionsToTxn's answer.
using txn_offset_commit_response = add_partitions_to_txn_response;

// ---------------- DescribeTransactions (65) v0 ----------------
struct describe_transactions_request {
    std::vector<std::string_view> transactional_ids;
};
result<describe_transactions_request> decode_describe_transactions(kreader& r, int16_t v);
struct describe_transactions_response {
    struct state {
        int16_t error_code = 0;
        std::string transactional_id;
        std::string state;
        int32_t timeout_ms = 0;
        int64_t start_time_ms = -1;
        int64_t producer_id = -1;
        int32_t producer_epoch = -1;
        struct topic {
            std::string name;
            std::vector<int32_t> partitions;
        };
        std::vector<topic> topics;
    };
    std::vector<state> states;
};
void encode(kwriter& w, int16_t v, const describe_transactions_response& r);

// ---------------- ListTransactions (66) v0-1 ----------------
struct list_transactions_request {
    std::vector<std::string_view> state_filters;
    std::vector<int64_t> producer_id_filters;
    int64_t duration_filter_ms = -1; ///< v1+
};
result<list_transactions_request> decode_list_transactions(kreader& r, int16_t v);
struct list_transactions_response {
    int16_t error_code = 0;
    std::vector<std::string> unknown_state_filters;
    struct state {
        std::string transactional_id;
        int64_t producer_id = -1;
        std::string state;
    };
    std::vector<state> states;
};
void encode(kwriter& w, int16_t v, const list_transactions_response& r);

/// decode_any for these APIs; nullopt when `api` is not one of them.
std::optional<result<void>> decode_any_txn(int16_t api, int16_t v, kreader& r);

} // namespace floe::kafka
