// request_handler's transaction APIs (KIP-98): AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// TxnOffsetCommit, DescribeTransactions, ListTransactions; InitProducerId with a transactional
// id. The state is the txn_coordinator's.

#include "kafka/handlers.h"
#include "kafka/messages_txn.h"
#include "kafka/txn_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace floe::kafka {

namespace {

template<typename Resp>
void respond_txn(byte_buffer& out, const request_header& h, const Resp& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}

/// PRODUCER_FENCED exists from these request versions on; older clients get
/// INVALID_PRODUCER_EPOCH (as Kafka answers them).
int16_t fenced_for(int16_t err, int16_t version, int16_t first_with_fenced) {
    if (err == int16_t(kerr::producer_fenced) && version < first_with_fenced)
        return int16_t(kerr::invalid_producer_epoch);
    return err;
}

} // namespace

bool request_handler::init_transactional(const connection_info&, const request_header& h, std::string_view txn_id,
                                         int32_t timeout_ms, int64_t producer_id, int16_t producer_epoch,
                                         byte_buffer& out) {
    init_producer_id_response resp;
    if (!_txns) {
        resp.error_code = int16_t(kerr::coordinator_not_available);
    } else {
        auto a = _txns->init_producer(txn_id, timeout_ms, producer_id, producer_epoch);
        resp.error_code = fenced_for(a.error, h.api_version, 4);
        resp.producer_id = a.producer_id;
        resp.producer_epoch = a.producer_epoch;
    }
    respond_txn(out, h, resp);
    return true;
}

bool request_handler::dispatch_txn(const connection_info& c, const request_header& h, bytes_view body,
                                   byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto unavailable = int16_t(kerr::coordinator_not_available);
    // Kafka's authorizer: WRITE on the transactional id for every step of a transaction,
    // DESCRIBE on it to see it; WRITE on the topics added, READ on the group whose offsets go in.
    auto may_write_txn = [&](std::string_view id) {
        return allowed(c, acl_operation::write, acl_resource::transactional_id, id);
    };
    const auto txn_denied = int16_t(kerr::transactional_id_authorization_failed);
    switch (api_key(h.api_key)) {
    case api_key::add_partitions_to_txn: {
        auto req = decode_add_partitions_to_txn(rd, h.api_version);
        if (!req) return false;
        std::vector<log::topic_partition> parts;
        for (auto& t : req->topics)
            for (auto p : t.partitions) parts.push_back({std::string(t.name), p});
        std::vector<int16_t> errs(parts.size(), unavailable);
        bool denied = false;
        if (!may_write_txn(req->transactional_id)) {
            errs.assign(parts.size(), txn_denied);
            denied = true;
        } else {
            // A topic the principal may not write fails the whole request; the others are
            // answered OPERATION_NOT_ATTEMPTED, as Kafka does.
            for (size_t i = 0; i < parts.size(); ++i)
                if (!allowed(c, acl_operation::write, acl_resource::topic, parts[i].topic)) denied = true;
            if (denied)
                for (size_t i = 0; i < parts.size(); ++i)
                    errs[i] = allowed(c, acl_operation::write, acl_resource::topic, parts[i].topic)
                                  ? int16_t(kerr::operation_not_attempted)
                                  : int16_t(kerr::topic_authorization_failed);
        }
        if (_txns && !denied)
            errs = _txns->add_partitions(req->transactional_id, req->producer_id, req->producer_epoch, parts);
        add_partitions_to_txn_response resp;
        size_t i = 0;
        for (auto& t : req->topics) {
            auto& rt = resp.results.emplace_back();
            rt.name = std::string(t.name);
            for (auto p : t.partitions) rt.partitions.push_back({p, fenced_for(errs[i++], h.api_version, 2)});
        }
        respond_txn(out, h, resp);
        return true;
    }
    case api_key::add_offsets_to_txn: {
        auto req = decode_add_offsets_to_txn(rd, h.api_version);
        if (!req) return false;
        txn_error_response resp{unavailable};
        if (!may_write_txn(req->transactional_id)) resp.error_code = txn_denied;
        else if (!allowed(c, acl_operation::read, acl_resource::group, req->group_id))
            resp.error_code = int16_t(kerr::group_authorization_failed);
        else if (_txns)
            resp.error_code = fenced_for(
                _txns->add_offsets(req->transactional_id, req->producer_id, req->producer_epoch, req->group_id),
                h.api_version, 2);
        respond_txn(out, h, resp);
        return true;
    }
    case api_key::end_txn: {
        auto req = decode_end_txn(rd, h.api_version);
        if (!req) return false;
        txn_error_response resp{unavailable};
        if (!may_write_txn(req->transactional_id)) {
            resp.error_code = txn_denied;
        } else if (_txns) {
            resp.error_code = fenced_for(
                _txns->end_txn(req->transactional_id, req->producer_id, req->producer_epoch, req->committed),
                h.api_version, 2);
            if (resp.error_code == 0) _appends.fetch_add(1, std::memory_order_release); // wake read_committed polls
        }
        respond_txn(out, h, resp);
        return true;
    }
    case api_key::txn_offset_commit: {
        auto req = decode_txn_offset_commit(rd, h.api_version);
        if (!req) return false;
        txn_offset_commit_response resp;
        std::vector<std::pair<offset_store::key, offset_store::committed>> entries;
        int16_t err = _txns ? 0 : unavailable;
        if (!may_write_txn(req->transactional_id)) err = txn_denied;
        else if (!allowed(c, acl_operation::read, acl_resource::group, req->group_id))
            err = int16_t(kerr::group_authorization_failed);
        for (auto& t : req->topics)
            if (err == 0 && !allowed(c, acl_operation::read, acl_resource::topic, t.name))
                err = int16_t(kerr::topic_authorization_failed);
        // v3 carries the consumer's generation: a member that is no longer in the group
        // must not commit (Kafka's zombie-consumer fencing, KIP-447).
        if (err == 0 && h.api_version >= 3 && !req->member_id.empty()) {
            std::vector<group_coordinator::topic_partition> committing;
            for (auto& t : req->topics)
                for (auto& p : t.partitions) committing.emplace_back(t.name, p.index);
            err = _groups.validate_commit(req->group_id, req->member_id, req->generation_id,
                                          req->group_instance_id, committing);
        }
        for (auto& t : req->topics)
            for (auto& p : t.partitions)
                if (_logs.partition(t.name, p.index))
                    entries.push_back({{std::string(t.name), p.index},
                                       {p.offset, p.leader_epoch,
                                        p.metadata ? std::optional<std::string>(*p.metadata) : std::nullopt}});
        if (err == 0)
            err = fenced_for(_txns->txn_offset_commit(req->transactional_id, req->group_id, req->producer_id,
                                                      req->producer_epoch, entries),
                             h.api_version, 2);
        for (auto& t : req->topics) {
            auto& rt = resp.results.emplace_back();
            rt.name = std::string(t.name);
            for (auto& p : t.partitions) {
                int16_t e = err;
                if (!_logs.partition(t.name, p.index)) e = int16_t(kerr::unknown_topic_or_partition);
                rt.partitions.push_back({p.index, e});
            }
        }
        respond_txn(out, h, resp);
        return true;
    }
    case api_key::describe_transactions: {
        auto req = decode_describe_transactions(rd, h.api_version);
        if (!req) return false;
        describe_transactions_response resp;
        for (auto id : req->transactional_ids) {
            auto& s = resp.states.emplace_back();
            s.transactional_id = std::string(id);
            if (!allowed(c, acl_operation::describe, acl_resource::transactional_id, id)) {
                s.error_code = txn_denied;
                continue;
            }
            auto m = _txns ? _txns->describe(id) : std::nullopt;
            if (!m) {
                s.error_code = int16_t(_txns ? kerr::transactional_id_not_found : kerr::coordinator_not_available);
                continue;
            }
            s.state = std::string(to_string(m->status));
            s.timeout_ms = m->timeout_ms;
            s.start_time_ms = m->start_ms;
            s.producer_id = m->producer_id;
            s.producer_epoch = m->producer_epoch;
            for (auto& tp : m->partitions) {
                if (s.topics.empty() || s.topics.back().name != tp.topic) s.topics.push_back({tp.topic, {}});
                s.topics.back().partitions.push_back(tp.partition);
            }
        }
        respond_txn(out, h, resp);
        return true;
    }
    case api_key::list_transactions: {
        auto req = decode_list_transactions(rd, h.api_version);
        if (!req) return false;
        list_transactions_response resp;
        std::vector<txn_status> states;
        for (auto f : req->state_filters) {
            if (auto s = txn_status_from(f)) states.push_back(*s);
            else resp.unknown_state_filters.emplace_back(f);
        }
        const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
        if (!_txns) resp.error_code = unavailable;
        else
            for (auto& m : _txns->list()) {
                if (!req->state_filters.empty() && std::ranges::find(states, m.status) == states.end()) continue;
                if (!allowed(c, acl_operation::describe, acl_resource::transactional_id, m.transactional_id)) continue;
                if (!req->producer_id_filters.empty()
                    && std::ranges::find(req->producer_id_filters, m.producer_id) == req->producer_id_filters.end())
                    continue;
                // v1 (KIP-994): only transactions running longer than the duration.
                if (req->duration_filter_ms >= 0 && (m.start_ms < 0 || now - m.start_ms < req->duration_filter_ms))
                    continue;
                resp.states.push_back({m.transactional_id, m.producer_id, std::string(to_string(m.status))});
            }
        respond_txn(out, h, resp);
        return true;
    }
    default: return false;
    }
}

int16_t request_handler::check_transactional_produce(std::optional<std::string_view> txn_id,
                                                     bytes_view records, const std::string& topic,
                                                     int32_t partition) {
    // The producer fields of the first batch (validate_records checked that every batch of a
    // transactional request is transactional and they all parse).
    auto h = log::parse_batch_header(records);
    if (!h) return int16_t(kerr::corrupt_message);
    if (!txn_id) {
        return h->is_transactional() ? int16_t(kerr::transactional_id_not_found) : 0;
    }
    if (!h->is_transactional()) return int16_t(kerr::invalid_record);
    if (!_txns) return int16_t(kerr::coordinator_not_available);
    return _txns->check_produce(*txn_id, h->producer_id, h->producer_epoch, {topic, partition});
}

} // namespace floe::kafka
