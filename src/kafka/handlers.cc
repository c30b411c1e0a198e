#include "kafka/handlers.h"
#include "kafka/messages_cgroup.h"

#include "base/metrics.h"
#include "kafka/cluster.h"
#include "kafka/fetch_sessions.h"
#include "kafka/messages.h"
#include "log/remote_tier.h"

#include "kafka/asio_compat.h"
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace floe::kafka {

namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

asio::awaitable<void> sleep_for(clock::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(use_tuple);
}

int16_t kerr_of(const error& e) {
    switch (e.code()) {
    case errc::not_found: return int16_t(kerr::unknown_topic_or_partition);
    case errc::out_of_range: return int16_t(kerr::offset_out_of_range);
    case errc::corrupt: return int16_t(kerr::corrupt_message);
    case errc::io_error: return int16_t(kerr::kafka_storage_error);
    case errc::shutting_down: return int16_t(kerr::not_leader_or_follower);
    case errc::timeout: return int16_t(kerr::request_timed_out);
    // A local tier that cannot reach its store right now (Redis down): retriable for clients.
    case errc::unavailable: return int16_t(kerr::kafka_storage_error);
    case errc::invalid_argument: return int16_t(kerr::invalid_config);
    case errc::unsupported: return int16_t(kerr::invalid_config);
    case errc::already_exists: return int16_t(kerr::topic_already_exists);
    default: return int16_t(kerr::unknown_server_error);
    }
}

int16_t kerr_of(log::append_status s) {
    using log::append_status;
    switch (s) {
    case append_status::ok:
    case append_status::duplicate: return 0;
    case append_status::corrupt: return int16_t(kerr::corrupt_message);
    case append_status::message_too_large: return int16_t(kerr::message_too_large);
    case append_status::invalid_record: return int16_t(kerr::invalid_record);
    case append_status::out_of_order_sequence: return int16_t(kerr::out_of_order_sequence_number);
    case append_status::invalid_producer_epoch: return int16_t(kerr::invalid_producer_epoch);
    // A mirror topic is read-only for producers: the clients' non-retriable "not authorized"
    // error, with a message naming the mirror.
    case append_status::mirror_read_only: return int16_t(kerr::topic_authorization_failed);
    case append_status::below_log_end: return int16_t(kerr::invalid_record);
    }
    return int16_t(kerr::unknown_server_error);
}

/// Completion of an acks=all wait, signalled from the log's flusher thread onto the
/// connection's strand.
struct durable_wait {
    explicit durable_wait(asio::any_io_executor ex) : timer(ex) {}
    asio::steady_timer timer;
    bool done = false;
    result<void> outcome;
};

} // namespace

// ====================== producer_id_allocator ======================

namespace {

/// The embedded producer id allocator (see producer_id_allocator::open).
class file_producer_id_allocator final : public producer_id_allocator {
public:
    explicit file_producer_id_allocator(std::filesystem::path dir) : _dir(std::move(dir)) {}
    result<void> init() {
        std::ifstream in(_dir / "producer_ids");
        int64_t next = 0;
        if (in) in >> next;
        _next = _limit = std::max<int64_t>(next, 1000);
        return reserve_block();
    }
    result<int64_t> next() override {
        std::lock_guard lk(_mu);
        if (_next >= _limit) FLOE_TRY(reserve_block());
        return _next++;
    }

private:
    result<void> reserve_block() {
        constexpr int64_t block = 1000;
        int64_t limit = _next + block;
        auto tmp = _dir / "producer_ids.tmp";
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return fail(errc::io_error, "open {}: {}", tmp.string(), std::strerror(errno));
        auto text = fmt::format("{}\n", limit);
        bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size()) && ::fsync(fd) == 0;
        ::close(fd);
        if (!ok) return fail(errc::io_error, "write {}", tmp.string());
        std::error_code ec;
        std::filesystem::rename(tmp, _dir / "producer_ids", ec);
        if (ec) return fail(errc::io_error, "rename {}: {}", tmp.string(), ec.message());
        _limit = limit;
        return {};
    }
    std::mutex _mu;
    std::filesystem::path _dir;
    int64_t _next = 0;
    int64_t _limit = 0;
};

} // namespace

result<std::unique_ptr<producer_id_allocator>> producer_id_allocator::open(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(errc::io_error, "create {}: {}", dir.string(), ec.message());
    auto a = std::make_unique<file_producer_id_allocator>(dir);
    FLOE_TRY(a->init());
    return std::unique_ptr<producer_id_allocator>(std::move(a));
}

// ====================== request_handler ======================

request_handler::request_handler(const broker_options& opts, std::string advertised_host,
                                 int32_t advertised_port, log::local_tier& logs,
                                 group_coordinator& groups, producer_id_allocator& pids)
    : _opts(opts), _host(std::move(advertised_host)), _port(advertised_port), _logs(logs),
      _groups(groups), _pids(pids) {}

std::vector<broker_endpoint> request_handler::cluster_brokers(const connection_info& c) const {
    auto self = self_endpoint(c);
    if (!_cluster) return {self};
    return _cluster->brokers(c.listener, self);
}

int32_t request_handler::partition_leader(std::string_view topic, int32_t partition) const {
    return _cluster ? _cluster->partition_leader(topic, partition) : _opts.node_id;
}

int32_t request_handler::coordinator_of(std::string_view key, bool txn) const {
    return _cluster ? _cluster->coordinator(key, txn) : _opts.node_id;
}

std::optional<int64_t> request_handler::earliest_remote(const std::string& topic, int32_t partition, bool recent_ok,
                                                        bool* unavailable) {
    auto r = recent_ok ? _opts.remote->recent_start_offset(topic, partition, std::chrono::seconds(1))
                       : _opts.remote->start_offset(topic, partition);
    if (!r) {
        // recent_ok: only the answer's log start offset is at stake (at or above the local
        // start), on every Fetch at the tail; the remote reader has reported the cause already.
        if (recent_ok)
            spdlog::debug("remote log start of {}-{} unavailable: {}", topic, partition, r.error().message());
        else
            spdlog::warn("remote log start of {}-{} unavailable: {}", topic, partition, r.error().message());
        if (unavailable) *unavailable = true;
        return std::nullopt;
    }
    return *r;
}

std::optional<std::pair<int64_t, int64_t>> request_handler::remote_offset_for_timestamp(
    const std::string& topic, int32_t partition, int64_t ts, int64_t local_start) {
    auto r = _opts.remote->offset_for_timestamp(topic, partition, ts, local_start);
    if (!r || !*r) return std::nullopt;
    return std::pair{(*r)->offset, (*r)->timestamp};
}

bool request_handler::may_wait(const request_header& h, bytes_view body) noexcept {
    switch (api_key(h.api_key)) {
    case api_key::fetch:
    case api_key::join_group:
    case api_key::sync_group: return true;
    case api_key::produce: {
        // Only acks=all waits (for fsync); acks=0/1 answers stay batched with their neighbours.
        kreader r(body, h.flexible);
        if (!r.nstr()) return true;
        auto acks = r.i16();
        return !acks || *acks == -1;
    }
    default: return false;
    }
}

namespace {
struct kafka_metrics {
    metrics::family<metrics::counter>& requests;
    metrics::family<metrics::histogram>& latency;
    metrics::counter& bytes_in;
    metrics::counter& bytes_out;
    metrics::family<metrics::counter>& records_in;
    metrics::family<metrics::counter>& records_out;
    static kafka_metrics& get() {
        auto& r = metrics::registry::instance();
        static kafka_metrics m{
            r.counter_family("floe_kafka_requests_total", "Kafka requests handled, by API.", {"api"}),
            r.histogram_family("floe_kafka_request_duration_seconds",
                               "Time from a decoded Kafka request to its encoded answer, by API.", {"api"}),
            r.counter_family("floe_kafka_bytes_in_total", "Bytes of Kafka request bodies received.").with({}),
            r.counter_family("floe_kafka_bytes_out_total", "Bytes of Kafka responses sent, fetched records included.")
                .with({}),
            r.counter_family("floe_kafka_records_in_total", "Records appended by Produce, by topic.", {"topic"}),
            r.counter_family("floe_kafka_records_out_total",
                             "Records sent by Fetch at or above the fetch offset (either tier), by topic.", {"topic"}),
        };
        return m;
    }
};
} // namespace

asio::awaitable<bool> request_handler::handle(const connection_info& conn, const request_header& h,
                                              std::span<uint8_t> body, byte_buffer& out,
                                              std::vector<file_splice>* splices) {
    auto& m = kafka_metrics::get();
    auto t0 = std::chrono::steady_clock::now();
    size_t out_before = out.size(), splices_before = splices ? splices->size() : 0;
    bool ok = co_await dispatch(conn, h, body, out, splices);
    std::string api(api_name(h.api_key));
    m.requests.with({api}).inc();
    m.latency.with({api}).observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    m.bytes_in.inc(body.size());
    uint64_t sent = out.size() - out_before;
    if (splices)
        for (size_t i = splices_before; i < splices->size(); ++i) sent += (*splices)[i].slice.length;
    m.bytes_out.inc(sent);
    co_return ok;
}

asio::awaitable<bool> request_handler::dispatch(const connection_info& conn, const request_header& h,
                                                std::span<uint8_t> body, byte_buffer& out,
                                                std::vector<file_splice>* splices) {
    bytes_view b(body.data(), body.size());
    switch (api_key(h.api_key)) {
    case api_key::api_versions: {
        size_t start = begin_response(out, h);
        kwriter w(out, h.flexible);
        encode(w, h.api_version, api_versions_response{});
        finish_response(out, start);
        co_return true;
    }
    case api_key::produce: co_return co_await produce(conn, h, body, out);
    case api_key::fetch: co_return co_await fetch(conn, h, b, out, splices);
    case api_key::join_group: co_return co_await join_group(conn, h, b, out);
    case api_key::sync_group: co_return co_await sync_group(conn, h, b, out);
    case api_key::metadata: co_return metadata(conn, h, b, out);
    case api_key::list_offsets: co_return list_offsets(conn, h, b, out);
    case api_key::create_topics: co_return create_topics(conn, h, b, out);
    case api_key::delete_topics: co_return delete_topics(conn, h, b, out);
    case api_key::describe_configs: co_return describe_configs(conn, h, b, out);
    case api_key::alter_configs: co_return alter_configs(conn, h, b, out, false);
    case api_key::incremental_alter_configs: co_return alter_configs(conn, h, b, out, true);
    case api_key::find_coordinator: co_return find_coordinator(conn, h, b, out);
    case api_key::heartbeat: co_return heartbeat(conn, h, b, out);
    case api_key::leave_group: co_return leave_group(conn, h, b, out);
    case api_key::offset_commit: co_return offset_commit(conn, h, b, out);
    case api_key::consumer_group_heartbeat: co_return consumer_group_heartbeat(conn, h, b, out);
    case api_key::consumer_group_describe: co_return consumer_group_describe(conn, h, b, out);
    case api_key::offset_fetch: co_return offset_fetch(conn, h, b, out);
    case api_key::list_groups: co_return list_groups(conn, h, b, out);
    case api_key::describe_groups: co_return describe_groups(conn, h, b, out);
    case api_key::delete_groups: co_return delete_groups(conn, h, b, out);
    case api_key::init_producer_id: co_return init_producer_id(conn, h, b, out);
    case api_key::describe_cluster: co_return describe_cluster(conn, h, b, out);
    case api_key::add_partitions_to_txn:
    case api_key::add_offsets_to_txn:
    case api_key::end_txn:
    case api_key::txn_offset_commit:
    case api_key::describe_transactions:
    case api_key::list_transactions: co_return dispatch_txn(conn, h, b, out); // txn_handlers.cc
    case api_key::describe_user_scram_credentials: co_return describe_user_scram_credentials(conn, h, b, out);
    case api_key::alter_user_scram_credentials: co_return alter_user_scram_credentials(conn, h, b, out);
    case api_key::describe_acls: co_return describe_acls(conn, h, b, out);
    case api_key::create_acls: co_return create_acls(conn, h, b, out);
    case api_key::delete_acls: co_return delete_acls(conn, h, b, out);
    default: co_return dispatch_admin(conn, h, b, out); // admin_handlers.cc
    }
}

#define DECODE_OR_CLOSE(var, fn)                                                                 \
    kreader _rd(body, h.flexible);                                                               \
    auto _dec = fn(_rd, h.api_version);                                                          \
    if (!_dec) {                                                                                 \
        spdlog::debug("malformed {} v{}: {}", api_name(h.api_key), h.api_version, _dec.error()); \
        return false;                                                                            \
    }                                                                                            \
    [[maybe_unused]] auto& var = *_dec;

template<typename Resp>
static void respond(byte_buffer& out, const request_header& h, const Resp& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}

// ---------------- Produce ----------------

asio::awaitable<bool> request_handler::produce(const connection_info& c, const request_header& h, std::span<uint8_t> body,
                                               byte_buffer& out) {
    kreader rd(bytes_view(body.data(), body.size()), h.flexible);
    auto dec = decode_produce(rd, h.api_version);
    if (!dec) {
        spdlog::debug("malformed Produce v{}: {}", h.api_version, dec.error());
        co_return false;
    }
    auto& req = *dec;
    produce_response resp;
    resp.topics.reserve(req.topics.size());
    struct pending_ack {
        produce_response::partition* part;
        std::shared_ptr<log::local_partition> log;
        kafka_offset last;
    };
    std::vector<pending_ack> waits;
    bool bad_acks = req.acks != 0 && req.acks != 1 && req.acks != -1;
    byte_buffer scratch;
    bool appended = false;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = t.name;
        rt.partitions.reserve(t.partitions.size());
        std::optional<log::topic_info> info;
        const bool may_write = allowed(c, acl_operation::write, acl_resource::topic, t.name);
        for (auto& p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p.index;
            if (bad_acks) {
                rp.error_code = int16_t(kerr::invalid_required_acks);
                continue;
            }
            if (req.transactional_id &&
                !allowed(c, acl_operation::write, acl_resource::transactional_id, *req.transactional_id)) {
                rp.error_code = int16_t(kerr::transactional_id_authorization_failed);
                continue;
            }
            if (!may_write) {
                rp.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            auto plog = _logs.partition(t.name, p.index);
            if (!plog) {
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
                continue;
            }
            if (!p.records || p.records->empty()) {
                rp.error_code = int16_t(kerr::invalid_record);
                continue;
            }
            auto cfg = plog->config();
            auto valid = validate_records(*p.records,
                                          batch_limits{cfg.max_message_bytes, 64u << 20, cfg.compacted(),
                                                       req.transactional_id.has_value()},
                                          scratch);
            if (!valid) {
                rp.error_code = int16_t(valid.error().code);
                rp.error_message = valid.error().message;
                for (auto& [i, m] : valid.error().record_errors)
                    rp.record_errors.push_back({i, m});
                spdlog::debug("produce {}-{} refused: {}", t.name, p.index, valid.error().message);
                continue;
            }
            // Transactional batches belong to the open transaction that added this partition.
            if (auto te = check_transactional_produce(req.transactional_id, *p.records, std::string(t.name),
                                                      p.index)) {
                rp.error_code = te;
                continue;
            }
            // The records view points into the connection's own frame buffer: patch in place.
            std::span<uint8_t> mut(const_cast<uint8_t*>(p.records->data()), p.records->size());
            auto ar = plog->append(mut);
            if (!ar) {
                rp.error_code = kerr_of(ar.error());
                rp.error_message = ar.error().message();
                continue;
            }
            rp.error_code = kerr_of(ar->status);
            rp.log_start_offset = ar->log_start_offset();
            if (rp.error_code != 0) {
                rp.error_message = ar->message;
                continue;
            }
            rp.base_offset = ar->base_offset();
            rp.log_append_time = ar->log_append_time_ms;
            if (ar->status == log::append_status::ok)
                kafka_metrics::get().records_in.with({std::string(t.name)}).inc(
                    uint64_t(ar->last_offset() - ar->base_offset() + 1));
            appended = true;
            if (req.acks == -1) waits.push_back({&rp, plog, ar->last_offset});
        }
    }
    if (appended) _appends.fetch_add(1, std::memory_order_release);
    if (!waits.empty()) {
        auto ex = co_await asio::this_coro::executor;
        auto deadline = clock::now() + std::chrono::milliseconds(std::max(req.timeout_ms, 1));
        for (auto& w : waits) {
            auto dw = std::make_shared<durable_wait>(ex);
            dw->timer.expires_at(deadline);
            w.log->when_durable(w.last, [dw, ex](result<void> r) {
                asio::post(ex, [dw, r = std::move(r)]() mutable {
                    dw->outcome = std::move(r);
                    dw->done = true;
                    dw->timer.cancel();
                });
            });
            if (!dw->done) co_await dw->timer.async_wait(use_tuple);
            if (!dw->done) {
                w.part->error_code = int16_t(kerr::request_timed_out);
            } else if (!dw->outcome) {
                w.part->error_code = kerr_of(dw->outcome.error());
                w.part->error_message = dw->outcome.error().message();
            }
        }
    }
    if (req.acks == 0) co_return true; // acks=0: the client expects no response at all
    respond(out, h, resp);
    co_return true;
}

// ---------------- Fetch ----------------

asio::awaitable<bool> request_handler::fetch(const connection_info& c, const request_header& h, bytes_view body,
                                             byte_buffer& out, std::vector<file_splice>* splices) {
    kreader rd(body, h.flexible);
    auto dec = decode_fetch(rd, h.api_version);
    if (!dec) {
        spdlog::debug("malformed Fetch v{}: {}", h.api_version, dec.error());
        co_return false;
    }
    auto& req = *dec;
    const int16_t v = h.api_version;
    // KIP-227: an incremental request becomes the session's whole partition set (fetch_sessions.h).
    auto session = _sessions.begin(req, v);
    if (session.error != 0) {
        size_t start = begin_response(out, h);
        kwriter w(out, h.flexible);
        encode_fetch_response_start(w, v, session.error, 0);
        encode_fetch_response_end(w, v);
        finish_response(out, start);
        co_return true;
    }
    struct part_read {
        fetch_partition_header hdr;
        log::read_result data;
        byte_buffer remote; ///< batches rebuilt from the remote tier (offsets below the local start)
        uint64_t records = 0; ///< records at or above the fetch offset in what is sent
    };
    struct topic_read {
        std::string name;
        uuid id;
        std::vector<part_read> parts;
    };
    std::vector<topic_read> reads;
    auto deadline = clock::now() + std::chrono::milliseconds(std::max(req.max_wait_ms, 0));
    // The broker's own caps apply over the client's: see floe.kafka.fetch-max-bytes/-records.
    size_t max_total = std::min(size_t(std::max(req.max_bytes, 0)), _opts.fetch_max_bytes);
    for (;;) {
        uint64_t seen = _appends.load(std::memory_order_acquire);
        reads.clear();
        size_t total = 0;
        uint64_t records = 0; ///< records at or above the fetch offsets so far in this answer
        bool any_error = false;
        // One partition's records (or error) into `pr`. True when the local read found its
        // offset trimmed after the tier was chosen and `last_try` is false: the caller calls again
        // and the choice is made with the new local start. Adds to total/records/any_error only
        // for the answer it settles on.
        auto read_partition = [&](const log::topic_info& info, log::local_partition& plog,
                                  const fetch_request::partition& p, part_read& pr, bool last_try) -> bool {
            log::read_options ro;
            ro.max_bytes = std::min<size_t>(size_t(std::max(p.max_bytes, 0)),
                                            max_total > total ? max_total - total : 0);
            ro.min_one_batch = total == 0;
            // Offsets are contiguous, so the record cap is an offset bound (whole batches: one
            // starting below it is sent whole).
            uint64_t records_left =
                _opts.fetch_max_records > records ? _opts.fetch_max_records - records : 0;
            int64_t room = int64_t(std::min<uint64_t>(records_left, uint64_t(INT64_MAX)));
            ro.max_offset = kafka_offset(
                p.fetch_offset > INT64_MAX - room ? INT64_MAX : p.fetch_offset + room);
            const bool committed_only = req.isolation_level == 1;
            // Offsets below the local log start of a tiered topic come from Iceberg.
            bool tiered = _opts.remote && info.config.remote_storage_enable;
            std::optional<int64_t> remote_start;
            int64_t local_start = 0;
            std::optional<error> local_down; // the local tier cannot reach its store (Redis down)
            // The last stable offset from the same read as the local start (on the Redis tier each
            // is a round trip per partition and Fetch); asked for separately when not tiered.
            std::optional<kafka_offset> stable;
            if (tiered) {
                if (auto o = plog.current_offsets()) {
                    local_start = o->log_start();
                    stable = o->last_stable;
                } else {
                    local_down = std::move(o).error();
                }
            }
            // Below the local start the remote tier must be asked as it is now; at or above
            // it, the remote start only fills in the answer's log start offset, and a copy up
            // to a second old spares the catalog a query per partition per Fetch.
            bool remote_down = false;
            if (tiered)
                remote_start = earliest_remote(info.name, p.index, !local_down && p.fetch_offset >= local_start,
                                               &remote_down);
            if (local_down) {
                // Without the local tier its start and end are unknown: what the remote tier
                // holds from the fetch offset on is served (it holds only committed records,
                // so read_committed needs no cap); anything else is a retriable error.
                auto known = plog.known_offsets();
                pr.hdr.high_watermark = known.high_watermark();
                pr.hdr.last_stable_offset = known.last_stable();
                pr.hdr.log_start_offset = remote_start.value_or(known.log_start());
                if (!remote_down && remote_start && p.fetch_offset >= *remote_start) {
                    if (records_left == 0) return false; // the answer is full: next Fetch
                    auto rr = _opts.remote->read(info.name, p.index, p.fetch_offset, (*ro.max_offset)(),
                                                 ro.min_one_batch ? std::max<size_t>(ro.max_bytes, 1) : ro.max_bytes);
                    if (rr && rr->records > 0) {
                        pr.hdr.high_watermark = std::max(pr.hdr.high_watermark, rr->next_offset);
                        pr.hdr.last_stable_offset = std::max(pr.hdr.last_stable_offset, rr->next_offset);
                        total += rr->batches.size();
                        records += rr->records;
                        pr.records = rr->records;
                        pr.remote = std::move(rr->batches);
                        return false;
                    }
                    if (!rr)
                        spdlog::warn("tiered fetch of {}-{} at offset {} failed: {}", info.name, p.index,
                                     p.fetch_offset, rr.error().message());
                }
                spdlog::debug("fetch of {}-{} at offset {}: {}", info.name, p.index, p.fetch_offset,
                              local_down->message());
                pr.hdr.error_code = kerr_of(*local_down);
                any_error = true;
                return false;
            }
            // read_committed: nothing at or above the last stable offset (KIP-98).
            if (committed_only)
                ro.max_offset =
                    std::min(*ro.max_offset, stable.value_or(plog.last_stable_offset()));
            if (tiered && remote_down && p.fetch_offset < local_start) {
                // Below the local start and the remote tier cannot say what it holds: a
                // retriable error, never OFFSET_OUT_OF_RANGE (a client would reset past data).
                auto offs = plog.offsets();
                pr.hdr.high_watermark = offs.high_watermark();
                pr.hdr.last_stable_offset = offs.last_stable();
                pr.hdr.log_start_offset = offs.log_start();
                pr.hdr.error_code = int16_t(kerr::kafka_storage_error);
                any_error = true;
                return false;
            }
            if (tiered && p.fetch_offset < local_start && remote_start && p.fetch_offset >= *remote_start) {
                auto offs = plog.offsets();
                pr.hdr.high_watermark = offs.high_watermark();
                pr.hdr.last_stable_offset = offs.last_stable();
                pr.hdr.log_start_offset = *remote_start;
                if (records_left == 0) return false; // the answer is full: next Fetch
                auto rr = _opts.remote->read(info.name, p.index, p.fetch_offset,
                                             std::min(local_start, (*ro.max_offset)()),
                                             ro.min_one_batch ? std::max<size_t>(ro.max_bytes, 1) : ro.max_bytes);
                if (!rr) {
                    spdlog::warn("tiered fetch of {}-{} at offset {} failed: {}", info.name, p.index,
                                 p.fetch_offset, rr.error().message());
                    pr.hdr.error_code = int16_t(kerr::kafka_storage_error);
                    any_error = true;
                    return false;
                }
                if (rr->records > 0) {
                    total += rr->batches.size();
                    records += rr->records;
                    pr.records = rr->records;
                    pr.remote = std::move(rr->batches);
                    return false;
                }
                // Nothing remote from this offset up to the local start (a gap: aborted or
                // control records never become rows): the local log answers from its start.
            }
            int64_t read_at = p.fetch_offset;
            if (tiered && remote_start && p.fetch_offset < local_start && p.fetch_offset >= *remote_start) {
                read_at = local_start;
                // The record cap counts from where the records are.
                ro.max_offset = std::max(*ro.max_offset, kafka_offset(read_at > INT64_MAX - room ? INT64_MAX
                                                                                                  : read_at + room));
                if (committed_only) ro.max_offset = std::min(*ro.max_offset, plog.last_stable_offset());
            }
            auto rr = plog.read(kafka_offset(read_at), ro);
            if (!rr) {
                // Out of range: the answer reports the offsets as they are; another failure
                // (the store unreachable) reports the last ones known instead of asking again.
                const bool out_of_range = rr.error().code() == errc::out_of_range;
                auto offs = out_of_range ? plog.offsets() : plog.known_offsets();
                // Trimmed: the local start moved past `read_at` after it was read above (the
                // storage worker deleted offloaded segments in between), so what was asked for is
                // in the remote tier now. Never OFFSET_OUT_OF_RANGE for it (a client would reset
                // to its default offset and read from 0 again): the caller decides again with the
                // new start. Trimmed a second time in a row: an empty answer, sent at once; the
                // next Fetch at this offset decides afresh.
                const bool trimmed = tiered && out_of_range && read_at >= local_start && read_at < offs.log_start();
                if (trimmed && !last_try) return true;
                pr.hdr.error_code = trimmed ? int16_t(0) : kerr_of(rr.error());
                pr.hdr.high_watermark = offs.high_watermark();
                pr.hdr.last_stable_offset = offs.last_stable();
                pr.hdr.log_start_offset = remote_start ? std::min(*remote_start, offs.log_start()) : offs.log_start();
                any_error = true;
                return false;
            }
            pr.hdr.high_watermark = rr->offsets.high_watermark();
            pr.hdr.last_stable_offset = rr->offsets.last_stable();
            pr.hdr.log_start_offset = rr->offsets.log_start();
            if (committed_only && !rr->slices.empty()) {
                // The aborted transactions the sent batches overlap: the client drops
                // their records (Kafka's aborted transaction index, answered per Fetch).
                auto aborted = plog.aborted_transactions(
                    kafka_offset(p.fetch_offset), rr->slices.back().last_offset + 1);
                if (!aborted.empty()) {
                    pr.hdr.aborted.emplace();
                    for (auto& a : aborted) pr.hdr.aborted->push_back({a.producer_id, a.first_offset});
                }
            }
            if (remote_start) pr.hdr.log_start_offset = std::min(pr.hdr.log_start_offset, *remote_start);
            total += rr->total_bytes;
            for (auto& sl : rr->slices)
                if (sl.last_offset() >= p.fetch_offset)
                    pr.records += uint64_t(sl.last_offset() - std::max(sl.first_offset(), p.fetch_offset) + 1);
            records += pr.records;
            pr.data = std::move(*rr);
            return false;
        };
        for (auto& t : req.topics) {
            auto& tr = reads.emplace_back();
            std::optional<log::topic_info> info =
                v >= 13 ? _logs.topic(t.topic_id) : _logs.topic(t.name);
            tr.name = std::string(t.name);
            tr.id = t.topic_id;
            if (info) {
                tr.name = info->name;
                tr.id = info->id;
            }
            const bool may_read =
                (!info && v >= 13) || allowed(c, acl_operation::read, acl_resource::topic, tr.name);
            for (auto& p : t.partitions) {
                auto& pr = tr.parts.emplace_back();
                pr.hdr.index = p.index;
                if (!may_read) {
                    pr.hdr.error_code = int16_t(kerr::topic_authorization_failed);
                    any_error = true;
                    continue;
                }
                std::shared_ptr<log::local_partition> plog;
                if (info) plog = _logs.partition(info->name, p.index);
                if (!plog) {
                    pr.hdr.error_code = int16_t(v >= 13 && !info ? kerr::unknown_topic_id
                                                                 : kerr::unknown_topic_or_partition);
                    any_error = true;
                    continue;
                }
                // A tiered partition's local start can move between deciding which tier serves the
                // offset and reading it (the storage worker trims offloaded segments at any
                // moment): a local read that finds its offset trimmed decides once more, with the
                // start as it is then, so the same Fetch serves the records from the remote tier.
                for (int attempt = 0; attempt < 2; ++attempt)
                    if (!read_partition(*info, *plog, p, pr, attempt == 1)) break;
            }
        }
        // Answer as soon as anything is there (or an error is): waiting for min_bytes beyond the
        // first batch only adds latency on a single node.
        if (total > 0 || any_error || req.min_bytes <= 0 || clock::now() >= deadline) break;
        // Long poll: wait for an append anywhere (cheap check) or the deadline.
        while (clock::now() < deadline && _appends.load(std::memory_order_acquire) == seen)
            co_await sleep_for(std::min<clock::duration>(deadline - clock::now(), 5ms));
        if (clock::now() >= deadline && _appends.load(std::memory_order_acquire) == seen) break;
    }
    if (session.session_id != 0) { // an incremental answer lists only partitions with news
        for (auto& tr : reads)
            std::erase_if(tr.parts, [&](const part_read& pr) {
                return !_sessions.include(session, tr.name, tr.id, pr.hdr,
                                          !pr.remote.empty() || pr.data.total_bytes > 0);
            });
        std::erase_if(reads, [](const topic_read& tr) { return tr.parts.empty(); });
    }
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode_fetch_response_start(w, v, 0, reads.size(), session.session_id);
    size_t spliced = 0;
    for (auto& tr : reads) {
        encode_fetch_topic_start(w, v, tr.name, tr.id, tr.parts.size());
        for (auto& pr : tr.parts) {
            size_t at = out.size();
            if (!pr.remote.empty()) {
                encode_fetch_partition_start(w, v, pr.hdr, pr.remote.size());
                out.insert(out.end(), pr.remote.begin(), pr.remote.end());
                encode_fetch_partition_end(w, v);
                continue;
            }
            encode_fetch_partition_start(w, v, pr.hdr, pr.data.total_bytes);
            if (pr.data.total_bytes > 0) {
                // Batches a backend holds in memory (no file to sendfile) take the copy path.
                bool from_files = std::ranges::none_of(pr.data.slices, [](auto& sl) { return sl.in_memory(); });
                if (splices && from_files) {
                    // Zero copy: the connection sends these ranges with sendfile(2).
                    for (auto& sl : pr.data.slices) {
                        if (sl.length == 0) continue;
                        splices->push_back({out.size(), sl});
                        spliced += sl.length;
                    }
                } else {
                    out.reserve(out.size() + pr.data.total_bytes);
                    auto c = pr.data.copy_to(out);
                    if (!c) {
                        // Could not read the segment: answer this partition with an error.
                        out.resize(at);
                        pr.records = 0;
                        auto hdr = pr.hdr;
                        hdr.error_code = int16_t(kerr::kafka_storage_error);
                        encode_fetch_partition_start(w, v, hdr, 0);
                    }
                }
            }
            encode_fetch_partition_end(w, v);
        }
        encode_fetch_topic_end(w, v);
    }
    encode_fetch_response_end(w, v);
    finish_response(out, start, spliced);
    for (auto& tr : reads) {
        uint64_t n = 0;
        for (auto& pr : tr.parts) n += pr.records;
        if (n) kafka_metrics::get().records_out.with({tr.name}).inc(n);
    }
    co_return true;
}

// ---------------- Metadata ----------------

bool request_handler::metadata(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_metadata);
    metadata_response resp;
    resp.brokers = cluster_brokers(conn);
    resp.cluster_id = _opts.cluster_id;
    // Kafka names the lowest live broker id controller; any broker answers what it would.
    resp.controller_id = std::ranges::min(resp.brokers, {}, &broker_endpoint::node_id).node_id;
    if (req.include_cluster_authorized_operations)
        resp.cluster_authorized_operations =
            authorized_operations(conn, acl_resource::cluster, k_cluster_resource_name, k_cluster_all_ops);
    auto may_describe = [&](std::string_view topic, bool quiet = false) {
        return allowed(conn, acl_operation::describe, acl_resource::topic, topic, quiet);
    };
    auto add = [&](const log::topic_info& t) {
        auto& rt = resp.topics.emplace_back();
        rt.name = t.name;
        rt.topic_id = t.id;
        if (req.include_topic_authorized_operations)
            rt.authorized_operations = authorized_operations(conn, acl_resource::topic, t.name, k_topic_all_ops);
        for (int32_t i = 0; i < t.partitions; ++i) {
            auto& p = rt.partitions.emplace_back(metadata_response::partition{0, i, partition_leader(t.name, i), 0, {}});
            // Replicas: the leader, then the next live brokers by id, as many as the topic's
            // factor (at most the live ones). Each holds nothing of its own: all serve the
            // shared tier, so all are in sync.
            if (t.replication_factor > 1 && resp.brokers.size() > 1) {
                std::vector<int32_t> ids;
                for (auto& b : resp.brokers) ids.push_back(b.node_id);
                std::ranges::sort(ids);
                auto at = std::ranges::find(ids, p.leader);
                size_t start = at == ids.end() ? 0 : size_t(at - ids.begin());
                if (at == ids.end()) p.replicas.push_back(p.leader);
                for (size_t k = 0; k < ids.size() && p.replicas.size() < size_t(t.replication_factor); ++k)
                    p.replicas.push_back(ids[(start + k) % ids.size()]);
            }
        }
    };
    if (req.all_topics) {
        // Kafka lists only the topics the principal may describe.
        for (auto& t : _logs.topics())
            if (may_describe(t.name, /*quiet=*/true)) add(t);
    } else {
        for (auto& rq : req.topics) {
            std::optional<log::topic_info> t;
            bool collides = false;
            if (rq.name) t = _logs.topic(*rq.name);
            else if (!rq.topic_id.is_nil()) t = _logs.topic(rq.topic_id);
            if (t && !may_describe(t->name)) {
                auto& rt = resp.topics.emplace_back();
                rt.name = rq.name ? std::string(*rq.name) : std::string();
                rt.topic_id = rq.topic_id;
                rt.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            // Auto-creation needs CREATE on the cluster or the topic (Kafka's rule).
            // A refusal is logged when auto-creation would have happened (the first produce to
            // a new topic without CREATE: what the operator needs to see).
            const bool would_create = _opts.auto_create_topics && req.allow_auto_topic_creation;
            bool may_create = rq.name && !t &&
                              (allowed_on_cluster(conn, acl_operation::create, /*quiet=*/true) ||
                               allowed(conn, acl_operation::create, acl_resource::topic, *rq.name, !would_create));
            if (!t && rq.name && !may_create && !may_describe(*rq.name, would_create)) {
                auto& rt = resp.topics.emplace_back();
                rt.name = std::string(*rq.name);
                rt.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            if (!t && rq.name && may_create && _opts.auto_create_topics && req.allow_auto_topic_creation) {
                if (log::local_tier::validate_topic_name(*rq.name)) {
                    auto c = _logs.create_topic(*rq.name, -1);
                    if (c) {
                        spdlog::info("auto-created topic {} ({} partitions)", c->name, c->partitions);
                        t = *c;
                    } else if (c.error().code() == errc::already_exists) {
                        t = _logs.topic(*rq.name);
                        // Not the name itself: it collides with another topic's table name.
                        if (!t) {
                            spdlog::warn("not auto-creating topic: {}", c.error().message());
                            collides = true;
                        }
                    }
                }
            }
            if (t) {
                add(*t);
                continue;
            }
            auto& rt = resp.topics.emplace_back();
            rt.name = rq.name ? std::string(*rq.name) : std::string();
            rt.topic_id = rq.topic_id;
            bool bad_name = collides || (rq.name && !log::local_tier::validate_topic_name(*rq.name));
            rt.error_code = int16_t(bad_name ? kerr::invalid_topic_exception
                                   : rq.name ? kerr::unknown_topic_or_partition
                                             : kerr::unknown_topic_id);
        }
    }
    respond(out, h, resp);
    return true;
}

// ---------------- ListOffsets ----------------

bool request_handler::list_offsets(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_list_offsets);
    list_offsets_response resp;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = t.name;
        const bool may_describe = allowed(c, acl_operation::describe, acl_resource::topic, t.name);
        for (auto& p : t.partitions) {
            auto& rp = rt.partitions.emplace_back();
            rp.index = p.index;
            if (!may_describe) {
                rp.error_code = int16_t(kerr::topic_authorization_failed);
                continue;
            }
            auto plog = _logs.partition(t.name, p.index);
            if (!plog) {
                rp.error_code = int16_t(kerr::unknown_topic_or_partition);
                continue;
            }
            auto cur = plog->current_offsets();
            auto info = _logs.topic(t.name);
            std::optional<int64_t> remote_start;
            bool remote_down = false;
            if (_opts.remote && info && info->config.remote_storage_enable)
                remote_start = earliest_remote(info->name, p.index, false, &remote_down);
            if (!cur) {
                // The local tier cannot reach its store (Redis down): the log end is unknown, so
                // latest and max-timestamp are a retriable error; earliest is the remote log
                // start and a time the remote tier holds is answered from it (its records come
                // before any the local tier alone holds).
                if (p.timestamp == -2 && remote_start) rp.offset = *remote_start;
                else if (auto hit = p.timestamp >= 0 && remote_start
                                        ? remote_offset_for_timestamp(std::string(t.name), p.index, p.timestamp,
                                                                      INT64_MAX)
                                        : std::nullopt) {
                    rp.offset = hit->first;
                    rp.timestamp = hit->second;
                } else rp.error_code = kerr_of(cur.error());
                continue;
            }
            auto offs = *cur;
            if (remote_down && p.timestamp != -1 && p.timestamp != -3) {
                // Earliest or by time depends on the remote tier: retriable, never the local
                // start (a consumer from the beginning would skip what Iceberg holds).
                rp.error_code = int16_t(kerr::kafka_storage_error);
            } else if (p.timestamp == -1) {
                rp.offset = req.isolation_level == 1 ? offs.last_stable() : offs.high_watermark();
            } else if (p.timestamp == -2) {
                rp.offset = offs.log_start();
                // KIP-405: earliest is the remote log start when older data lives in Iceberg.
                if (remote_start && *remote_start < rp.offset) rp.offset = *remote_start;
            } else if (p.timestamp == -3) {
                if (auto m = plog->max_timestamp()) {
                    rp.offset = m->offset();
                    rp.timestamp = m->timestamp_ms;
                }
            } else if (p.timestamp < 0) {
                rp.error_code = int16_t(kerr::invalid_request);
            } else if (auto hit = remote_start ? remote_offset_for_timestamp(std::string(t.name), p.index, p.timestamp,
                                                                              offs.log_start())
                                               : std::nullopt) {
                rp.offset = hit->first;
                rp.timestamp = hit->second;
            } else {
                auto l = plog->offset_for_timestamp(p.timestamp);
                if (!l) rp.error_code = kerr_of(l.error());
                else if (*l) {
                    // Never below the log start (DeleteRecords may have moved it into a segment).
                    rp.offset = std::max((*l)->offset(), offs.log_start());
                    rp.timestamp = (*l)->timestamp_ms;
                }
            }
        }
    }
    respond(out, h, resp);
    return true;
}

// ---------------- Topics ----------------

bool request_handler::create_topics(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_create_topics);
    create_topics_response resp;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = std::string(t.name);
        auto error = [&](kerr code, std::string msg) {
            rt.error_code = int16_t(code);
            rt.error_message = std::move(msg);
        };
        if (!allowed_on_cluster(c, acl_operation::create) &&
            !allowed(c, acl_operation::create, acl_resource::topic, t.name)) {
            error(kerr::topic_authorization_failed, "Authorization failed.");
            continue;
        }
        if (auto ok = log::local_tier::validate_topic_name(t.name); !ok) {
            error(kerr::invalid_topic_exception, ok.error().message());
            continue;
        }
        // The data lives in the local tier, which every broker sharing it serves: a factor up to
        // the live brokers is accepted (Metadata names that many as replicas), more is refused,
        // as Kafka refuses more replicas than brokers. Alone, a broker takes 1 (or -1, the default).
        const int32_t live = int32_t(cluster_brokers(c).size());
        if (!t.has_assignments && (t.replication_factor == 0 || t.replication_factor < -1 || t.replication_factor > live)) {
            error(kerr::invalid_replication_factor,
                  t.replication_factor > live
                      ? fmt::format("Replication factor: {} larger than available brokers: {}.", t.replication_factor, live)
                      : fmt::format("Replication factor must be larger than 0, or -1 to use the default value."));
            continue;
        }
        const int16_t factor = t.has_assignments || t.replication_factor == -1 ? int16_t(1) : t.replication_factor;
        int32_t parts = t.has_assignments ? t.assignment_count : t.num_partitions;
        if (parts == 0 || parts < -1) {
            error(kerr::invalid_partitions, fmt::format("{} partitions", parts));
            continue;
        }
        log::config_map overrides;
        bool bad = false;
        for (auto& c : t.configs) {
            if (!c.value) continue;
            auto ok = log::validate_topic_config(c.name, *c.value);
            if (ok) ok = log::check_config_keys(c.name, *c.value, _opts.topic_capabilities);
            if (!ok) {
                error(kerr::invalid_config, ok.error().message());
                bad = true;
                break;
            }
            overrides[std::string(c.name)] = std::string(*c.value);
        }
        if (bad) continue;
        auto created = _logs.create_topic(t.name, parts, overrides, req.validate_only, {}, factor);
        if (!created) {
            // already_exists without a topic of this name: the name collides with another
            // topic's (Kafka's InvalidTopicException for '.'/'_' collisions).
            auto code = created.error().code() != errc::already_exists ? kerr::invalid_config
                        : _logs.topic(t.name)                           ? kerr::topic_already_exists
                                                                        : kerr::invalid_topic_exception;
            if (code == kerr::invalid_topic_exception)
                spdlog::warn("CreateTopics: refusing {}", created.error().message());
            error(code, created.error().message());
            continue;
        }
        if (!req.validate_only) spdlog::info("created topic {} ({} partitions)", created->name, created->partitions);
        rt.topic_id = created->id;
        rt.num_partitions = created->partitions;
        rt.replication_factor = created->replication_factor;
        rt.configs = describe_topic_configs(*created, nullptr, false);
    }
    respond(out, h, resp);
    return true;
}

bool request_handler::delete_topics(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_delete_topics);
    delete_topics_response resp;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        std::optional<log::topic_info> info;
        if (t.name) info = _logs.topic(*t.name);
        else info = _logs.topic(t.topic_id);
        if (t.name) rt.name = std::string(*t.name);
        rt.topic_id = t.topic_id;
        if (!info) {
            rt.error_code = int16_t(t.name ? kerr::unknown_topic_or_partition : kerr::unknown_topic_id);
            continue;
        }
        rt.name = info->name;
        rt.topic_id = info->id;
        if (!allowed(c, acl_operation::remove, acl_resource::topic, info->name)) {
            rt.error_code = int16_t(kerr::topic_authorization_failed);
            continue;
        }
        auto d = _logs.delete_topic(info->name);
        if (!d) {
            rt.error_code = kerr_of(d.error());
            rt.error_message = d.error().message();
        } else {
            spdlog::info("deleted topic {}", info->name);
        }
    }
    respond(out, h, resp);
    return true;
}

bool request_handler::describe_configs(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_describe_configs);
    describe_configs_response resp;
    for (auto& r : req.resources) {
        auto& rr = resp.results.emplace_back();
        rr.type = r.type;
        rr.name = std::string(r.name);
        if (r.type == int8_t(resource_type::topic) &&
            !allowed(c, acl_operation::describe_configs, acl_resource::topic, r.name)) {
            rr.error_code = int16_t(kerr::topic_authorization_failed);
            rr.error_message = "Topic authorization failed.";
            continue;
        }
        if (r.type == int8_t(resource_type::broker) && !allowed_on_cluster(c, acl_operation::describe_configs)) {
            rr.error_code = int16_t(kerr::cluster_authorization_failed);
            rr.error_message = "Cluster authorization failed.";
            continue;
        }
        if (r.type == int8_t(resource_type::topic)) {
            auto info = _logs.topic(r.name);
            if (!info) {
                rr.error_code = int16_t(kerr::unknown_topic_or_partition);
                rr.error_message = fmt::format("topic {} does not exist", r.name);
                continue;
            }
            rr.configs = describe_topic_configs(*info, r.all_keys ? nullptr : &r.keys,
                                                req.include_documentation, req.include_synonyms);
        } else if (r.type == int8_t(resource_type::broker)) {
            // admin_handlers.cc
            describe_broker_configs(r, req.include_documentation, req.include_synonyms, rr);
        } else {
            rr.error_code = int16_t(kerr::invalid_request);
            rr.error_message = fmt::format("resource type {} not supported", r.type);
        }
    }
    respond(out, h, resp);
    return true;
}

bool request_handler::alter_configs(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out,
                                    bool incremental) {
    kreader rd(body, h.flexible);
    auto dec = incremental ? decode_incremental_alter_configs(rd, h.api_version)
                           : decode_alter_configs(rd, h.api_version);
    if (!dec) return false;
    auto& req = *dec;
    alter_configs_response resp;
    for (auto& r : req.resources) {
        auto& rr = resp.resources.emplace_back();
        rr.type = r.type;
        rr.name = std::string(r.name);
        if (r.type == int8_t(resource_type::topic) &&
            !allowed(c, acl_operation::alter_configs, acl_resource::topic, r.name)) {
            rr.error_code = int16_t(kerr::topic_authorization_failed);
            rr.error_message = "Topic authorization failed.";
            continue;
        }
        if (r.type == int8_t(resource_type::broker) && !allowed_on_cluster(c, acl_operation::alter_configs)) {
            rr.error_code = int16_t(kerr::cluster_authorization_failed);
            rr.error_message = "Cluster authorization failed.";
            continue;
        }
        if (r.type == int8_t(resource_type::broker)) {
            alter_broker_configs(r, incremental, req.validate_only, rr); // admin_handlers.cc
            continue;
        }
        if (r.type != int8_t(resource_type::topic)) {
            rr.error_code = int16_t(kerr::invalid_request);
            rr.error_message = fmt::format("resource type {} cannot be altered", r.type);
            continue;
        }
        // Keys a config names are checked here, outside the local tier's locks (a KMS probe).
        result<void> keys_ok;
        for (auto& c : r.configs)
            if (keys_ok && c.value && (!incremental || c.op == 0 || c.op == 2))
                keys_ok = log::check_config_keys(c.name, *c.value, _opts.topic_capabilities);
        if (!keys_ok) {
            rr.error_code = int16_t(kerr::invalid_config);
            rr.error_message = keys_ok.error().message();
            continue;
        }
        result<log::topic_info> done = fail(errc::internal, "unset");
        if (incremental) {
            std::vector<log::config_op> ops;
            bool bad = false;
            for (auto& c : r.configs) {
                if (c.op < 0 || c.op > 3) {
                    bad = true;
                    break;
                }
                ops.push_back({std::string(c.name), log::config_op::kind(c.op),
                               c.value ? std::string(*c.value) : std::string()});
            }
            if (bad) {
                rr.error_code = int16_t(kerr::invalid_request);
                rr.error_message = "unknown config operation";
                continue;
            }
            done = _logs.incremental_alter_topic_config(r.name, ops, req.validate_only);
        } else {
            log::config_map m;
            for (auto& c : r.configs)
                if (c.value) m[std::string(c.name)] = std::string(*c.value);
            done = _logs.alter_topic_config(r.name, m, req.validate_only);
        }
        if (!done) {
            rr.error_code = done.error().code() == errc::not_found
                                ? int16_t(kerr::unknown_topic_or_partition)
                                : int16_t(kerr::invalid_config);
            rr.error_message = done.error().message();
        }
    }
    respond(out, h, resp);
    return true;
}

// ---------------- Groups ----------------

bool request_handler::find_coordinator(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_find_coordinator);
    find_coordinator_response resp;
    for (auto k : req.keys) {
        // Key type 0: a group (DESCRIBE on it); 1: a transactional id (DESCRIBE on it).
        bool txn = req.key_type == 1;
        if (!allowed(conn, acl_operation::describe, txn ? acl_resource::transactional_id : acl_resource::group, k)) {
            resp.coordinators.push_back({std::string(k), -1, std::string(), -1,
                                         int16_t(txn ? kerr::transactional_id_authorization_failed
                                                     : kerr::group_authorization_failed)});
            continue;
        }
        auto id = coordinator_of(k, txn);
        auto brokers = cluster_brokers(conn);
        auto it = std::ranges::find(brokers, id, &broker_endpoint::node_id);
        if (it == brokers.end()) { // its broker has no such listener, or just left
            resp.coordinators.push_back({std::string(k), -1, std::string(), -1,
                                         int16_t(kerr::coordinator_not_available)});
            continue;
        }
        resp.coordinators.push_back({std::string(k), it->node_id, it->host, it->port, 0});
    }
    respond(out, h, resp);
    return true;
}

namespace {

/// An answer the group coordinator hands from whichever thread completes a rebalance to a
/// JoinGroup/SyncGroup waiting on its connection's strand: the value is stored under a mutex,
/// and the wait is woken by cancelling its timer on the strand (asio timers are not
/// thread-safe). Owned by the waiting request (and by the posted wake-up while it is queued);
/// the coordinator's callback holds it weakly, so a callback kept by the coordinator after the
/// request is gone (io threads stopped) neither keeps a timer alive past its io_context nor
/// touches freed memory.
template<typename T>
struct group_answer : std::enable_shared_from_this<group_answer<T>> {
    explicit group_answer(asio::any_io_executor e) : ex(std::move(e)), timer(ex) {}
    asio::any_io_executor ex;
    asio::steady_timer timer;
    std::mutex mu;
    std::optional<T> value;

    std::function<void(T)> callback() {
        return [weak = this->weak_from_this()](T v) {
            auto self = weak.lock();
            if (!self) return;
            {
                std::lock_guard lk(self->mu);
                self->value = std::move(v);
            }
            asio::post(self->ex, [self] { self->timer.cancel(); });
        };
    }
    bool ready() {
        std::lock_guard lk(mu);
        return value.has_value();
    }
    std::optional<T> take() {
        std::lock_guard lk(mu);
        return std::exchange(value, std::nullopt);
    }
    /// Waits until the answer arrives or `deadline` passes. The cancel a callback posts runs
    /// on this strand only once this coroutine is suspended, so it cannot be missed.
    asio::awaitable<std::optional<T>> wait(clock::time_point deadline) {
        timer.expires_at(deadline);
        while (!ready() && clock::now() < deadline) co_await timer.async_wait(use_tuple);
        co_return take();
    }
};

} // namespace

asio::awaitable<bool> request_handler::join_group(const connection_info& c,
                                                  const request_header& h, bytes_view body,
                                                  byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto dec = decode_join_group(rd, h.api_version);
    if (!dec) co_return false;
    auto& req = *dec;
    if (!allowed(c, acl_operation::read, acl_resource::group, req.group_id)) {
        join_group_response denied;
        denied.error_code = int16_t(kerr::group_authorization_failed);
        denied.member_id = std::string(req.member_id);
        respond(out, h, denied);
        co_return true;
    }
    if (!coordinates(req.group_id)) {
        join_group_response moved;
        moved.error_code = int16_t(kerr::not_coordinator);
        moved.member_id = std::string(req.member_id);
        respond(out, h, moved);
        co_return true;
    }
    // This broker's state of the group holds a coordinator epoch claimed in the offset store.
    if (auto claimed = _groups.claim(req.group_id, /*consumer=*/false); !claimed) {
        spdlog::warn("JoinGroup of group {}: {}", req.group_id, claimed.error());
        join_group_response unavailable;
        unavailable.error_code = int16_t(kerr::coordinator_not_available);
        unavailable.member_id = std::string(req.member_id);
        respond(out, h, unavailable);
        co_return true;
    }
    auto answer = std::make_shared<group_answer<join_group_response>>(
        co_await asio::this_coro::executor);
    auto r = _groups.join(req, h.client_id.value_or(""), c.client_host, clock::now(),
                          answer->callback());
    if (r.pending) {
        // Bounded: the coordinator completes the rebalance by its rebalance timeout.
        auto deadline = clock::now()
                        + std::chrono::milliseconds(std::max(req.rebalance_timeout_ms, 1000)) + 5s;
        auto got = co_await answer->wait(deadline);
        // Gave up: withdraw the request, unless its answer was given meanwhile.
        if (!got && !_groups.cancel_join(req.group_id, r.response.member_id, r.ticket, clock::now()))
            got = answer->take();
        std::string member = r.response.member_id;
        if (got) {
            r.response = std::move(*got);
        } else {
            r.response = {};
            r.response.error_code = int16_t(kerr::rebalance_in_progress);
            r.response.member_id = member;
        }
    }
    respond(out, h, r.response);
    co_return true;
}

asio::awaitable<bool> request_handler::sync_group(const connection_info& c, const request_header& h, bytes_view body,
                                                  byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto dec = decode_sync_group(rd, h.api_version);
    if (!dec) co_return false;
    auto& req = *dec;
    if (!allowed(c, acl_operation::read, acl_resource::group, req.group_id)) {
        sync_group_response denied;
        denied.error_code = int16_t(kerr::group_authorization_failed);
        respond(out, h, denied);
        co_return true;
    }
    if (!coordinates(req.group_id)) {
        sync_group_response moved;
        moved.error_code = int16_t(kerr::not_coordinator);
        respond(out, h, moved);
        co_return true;
    }
    auto answer = std::make_shared<group_answer<sync_group_response>>(
        co_await asio::this_coro::executor);
    auto r = _groups.sync(req, clock::now(), answer->callback());
    if (r.pending) {
        // The leader's SyncGroup, a new rebalance or the leader's session expiry answers it.
        auto got = co_await answer->wait(clock::now() + 60s);
        if (!got && !_groups.cancel_sync(req.group_id, req.member_id, r.ticket, clock::now()))
            got = answer->take();
        if (got) {
            r.response = std::move(*got);
        } else {
            r.response = {};
            r.response.error_code = int16_t(kerr::rebalance_in_progress);
        }
    }
    respond(out, h, r.response);
    co_return true;
}

bool request_handler::heartbeat(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_heartbeat);
    error_only_response resp{!allowed(c, acl_operation::read, acl_resource::group, req.group_id)
                                 ? int16_t(kerr::group_authorization_failed)
                             : !coordinates(req.group_id) ? int16_t(kerr::not_coordinator)
                                                          : _groups.heartbeat(req, clock::now())};
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode_heartbeat(w, h.api_version, resp);
    finish_response(out, start);
    return true;
}

bool request_handler::leave_group(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_leave_group);
    if (!allowed(c, acl_operation::read, acl_resource::group, req.group_id)) {
        leave_group_response denied;
        denied.error_code = int16_t(kerr::group_authorization_failed);
        respond(out, h, denied);
        return true;
    }
    if (!coordinates(req.group_id)) {
        leave_group_response moved;
        moved.error_code = int16_t(kerr::not_coordinator);
        respond(out, h, moved);
        return true;
    }
    respond(out, h, _groups.leave(req, h.api_version, clock::now()));
    return true;
}

bool request_handler::offset_commit(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_offset_commit);
    offset_commit_response resp;
    std::vector<group_coordinator::topic_partition> committing;
    for (auto& t : req.topics)
        for (auto& p : t.partitions) committing.emplace_back(t.name, p.index);
    // Kafka: READ on the group (every partition refused), then READ on each topic.
    const bool group_ok = allowed(c, acl_operation::read, acl_resource::group, req.group_id);
    int16_t err = !group_ok                   ? int16_t(kerr::group_authorization_failed)
                  : !coordinates(req.group_id) ? int16_t(kerr::not_coordinator)
                                               : INT16_MIN;
    // Who validated the commit, for the store's fence (offset_store::commit_fence).
    offset_store::commit_fence fence;
    bool consumer_group = false;
    if (err == INT16_MIN) {
        // A consumer group (KIP-848) checks member epochs; otherwise the classic generation.
        auto cg = _groups.consumer().validate_commit(req.group_id, req.member_id, req.generation_id, h.api_version,
                                                     &fence.coordinator);
        consumer_group = cg.has_value();
        err = cg ? *cg
                 : _groups.validate_commit(req.group_id, req.member_id, req.generation_id, req.group_instance_id,
                                           committing, &fence.coordinator);
        const bool simple = req.generation_id < 0 && req.member_id.empty();
        fence.what = simple ? offset_store::commit_fence::kind::simple : offset_store::commit_fence::kind::member;
        fence.generation = simple ? -1 : req.generation_id;
    }
    std::vector<std::pair<offset_store::key, offset_store::committed>> entries;
    for (auto& t : req.topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = t.name;
        const bool topic_ok = !group_ok || allowed(c, acl_operation::read, acl_resource::topic, t.name);
        for (auto& p : t.partitions) {
            int16_t e = topic_ok ? err : int16_t(kerr::topic_authorization_failed);
            if (e == 0 && !_logs.partition(t.name, p.index))
                e = int16_t(kerr::unknown_topic_or_partition);
            rt.partitions.push_back({p.index, e});
            if (e == 0)
                entries.push_back({{std::string(t.name), p.index},
                                   {p.offset, p.leader_epoch,
                                    p.metadata ? std::optional<std::string>(*p.metadata)
                                               : std::nullopt}});
        }
    }
    if (!entries.empty()) {
        auto c = _groups.offsets().commit(req.group_id, entries, fence);
        int16_t failed = 0;
        if (c) {
            // A simple commit claimed the group anew: this broker's empty states of it are stale.
            if (fence.what == offset_store::commit_fence::kind::simple) _groups.drop_claim(req.group_id, std::nullopt);
        } else if (c.error().code() == errc::conflict) {
            // A newer coordinator claimed the group: this broker's state of it is stale. Its
            // members look the coordinator up again and rejoin.
            spdlog::warn("offset commit for group {}: {}", req.group_id, c.error());
            _groups.drop_claim(req.group_id, fence.coordinator);
            failed = int16_t(kerr::not_coordinator);
        } else if (c.error().code() == errc::invalid_argument) {
            // A partition was committed under a newer generation: this commit is from the past.
            spdlog::warn("offset commit for group {}: {}", req.group_id, c.error());
            failed = int16_t(consumer_group ? kerr::stale_member_epoch : kerr::illegal_generation);
        } else {
            spdlog::error("offset commit for group {}: {}", req.group_id, c.error());
            failed = int16_t(kerr::coordinator_not_available);
        }
        if (failed)
            for (auto& t : resp.topics)
                for (auto& p : t.partitions)
                    if (p.error_code == 0) p.error_code = failed;
    }
    respond(out, h, resp);
    return true;
}

namespace {
std::vector<cg_topic> cg_topics(const log::local_tier& logs) {
    std::vector<cg_topic> out;
    for (auto& t : logs.topics()) out.push_back({t.name, t.id, t.partitions});
    return out;
}
} // namespace

bool request_handler::consumer_group_heartbeat(const connection_info& c, const request_header& h, bytes_view body,
                                               byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_consumer_group_heartbeat);
    consumer_group_heartbeat_response resp;
    resp.member_epoch = req.member_epoch;
    if (!allowed(c, acl_operation::read, acl_resource::group, req.group_id)) {
        resp.error_code = int16_t(kerr::group_authorization_failed);
    } else if (!coordinates(req.group_id)) {
        resp.error_code = int16_t(kerr::not_coordinator);
    } else if (_groups.classic_has_members(req.group_id)) {
        // Kafka: a non-empty group of the other protocol is not found as a consumer group.
        resp.error_code = int16_t(kerr::group_id_not_found);
        resp.error_message = fmt::format("Group {} is not a consumer group.", req.group_id);
    } else if (auto claimed = req.member_epoch == 0 ? _groups.claim(req.group_id, /*consumer=*/true) : result<void>{};
               !claimed) {
        // A member joining: this broker's state of the group holds a claimed coordinator epoch.
        spdlog::warn("ConsumerGroupHeartbeat of group {}: {}", req.group_id, claimed.error());
        resp.error_code = int16_t(kerr::coordinator_not_available);
    } else {
        auto topics = cg_topics(_logs);
        // Only topics the principal may describe count for its subscription (Kafka: regex
        // matches are filtered by DESCRIBE on the topic).
        std::erase_if(topics, [&](const cg_topic& t) {
            return !allowed(c, acl_operation::describe, acl_resource::topic, t.name, /*quiet=*/true);
        });
        resp = _groups.consumer().heartbeat(req, h.api_version, h.client_id.value_or(""), c.client_host, topics,
                                            clock::now());
    }
    respond(out, h, resp);
    return true;
}

template<typename Entry, typename Ids, typename Describe>
void request_handler::describe_each_group(const connection_info& c, const Ids& ids, bool include_ops,
                                          std::vector<Entry>& into, Describe describe) {
    for (std::string_view g : ids) {
        const bool may = allowed(c, acl_operation::describe, acl_resource::group, g);
        if (!may || !coordinates(g)) {
            auto& refused = into.emplace_back();
            refused.group_id = std::string(g);
            refused.error_code = int16_t(may ? kerr::not_coordinator : kerr::group_authorization_failed);
            continue;
        }
        into.push_back(describe(g));
        if (include_ops) into.back().authorized_operations = authorized_operations(c, acl_resource::group, g, k_group_all_ops);
    }
}

bool request_handler::consumer_group_describe(const connection_info& c, const request_header& h, bytes_view body,
                                              byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_consumer_group_describe);
    consumer_group_describe_response resp;
    auto topics = cg_topics(_logs);
    describe_each_group(c, req.group_ids, req.include_authorized_operations, resp.groups,
                        [&](std::string_view g) { return _groups.consumer().describe(g, topics); });
    respond(out, h, resp);
    return true;
}

bool request_handler::offset_fetch(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_offset_fetch);
    offset_fetch_response resp;
    for (auto& g : req.groups) {
        auto& rg = resp.groups.emplace_back();
        rg.group_id = std::string(g.group_id);
        if (!allowed(conn, acl_operation::describe, acl_resource::group, g.group_id)) {
            rg.error_code = int16_t(kerr::group_authorization_failed);
            continue;
        }
        auto may_describe = [&](std::string_view topic, bool quiet = false) {
            return allowed(conn, acl_operation::describe, acl_resource::topic, topic, quiet);
        };
        // Not this broker's group, or its offsets unreadable: the error for the group (v2+) and
        // for each partition asked (v0-1 have no group error).
        auto group_error = [&](int16_t err) {
            rg.error_code = err;
            for (auto& t : g.topics) {
                auto& rt = rg.topics.emplace_back();
                rt.name = std::string(t.name);
                for (auto p : t.partitions) rt.partitions.push_back({p, -1, -1, std::string(), err});
            }
        };
        if (!coordinates(g.group_id)) {
            group_error(int16_t(kerr::not_coordinator));
            continue;
        }
        // KIP-848 members name themselves (v9+): a stale epoch is refused as Kafka does.
        if (auto e = _groups.consumer().validate_fetch(g.group_id, g.member_id, g.member_epoch); e && *e) {
            group_error(*e);
            continue;
        }
        auto stored = _groups.offsets().load(g.group_id);
        if (!stored) {
            spdlog::warn("offset fetch for group {}: {}", g.group_id, stored.error());
            group_error(int16_t(kerr::coordinator_not_available));
            continue;
        }
        if (g.all_topics) {
            // Kafka leaves out the topics the principal may not describe.
            std::map<std::string, offset_fetch_response::topic> by_topic;
            for (auto& [k, c] : *stored) {
                if (!may_describe(k.first, /*quiet=*/true)) continue; // a filter: not logged
                auto& t = by_topic[k.first];
                t.name = k.first;
                t.partitions.push_back({k.second, c.offset, c.leader_epoch, c.metadata, 0});
            }
            for (auto& [_, t] : by_topic) rg.topics.push_back(std::move(t));
            continue;
        }
        for (auto& t : g.topics) {
            auto& rt = rg.topics.emplace_back();
            rt.name = std::string(t.name);
            if (!may_describe(t.name)) {
                for (auto p : t.partitions)
                    rt.partitions.push_back({p, -1, -1, std::string(), int16_t(kerr::topic_authorization_failed)});
                continue;
            }
            for (auto p : t.partitions) {
                auto c = stored->find({rt.name, p});
                if (c != stored->end())
                    rt.partitions.push_back({p, c->second.offset, c->second.leader_epoch, c->second.metadata, 0});
                else rt.partitions.push_back({p, -1, -1, std::string(), 0});
            }
        }
    }
    respond(out, h, resp);
    return true;
}

bool request_handler::list_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_list_groups);
    auto resp = _groups.list(req);
    // Each broker lists the groups it coordinates (admin clients ask every broker).
    std::erase_if(resp.groups, [&](auto& g) { return !coordinates(g.group_id); });
    // DESCRIBE on the cluster lists every group; otherwise the groups the principal may describe.
    if (!allowed_on_cluster(c, acl_operation::describe, /*quiet=*/true))
        std::erase_if(resp.groups, [&](auto& g) {
            return !allowed(c, acl_operation::describe, acl_resource::group, g.group_id, /*quiet=*/true);
        });
    respond(out, h, resp);
    return true;
}

namespace {

// A KIP-848 consumer group as DescribeGroups shows it, as Kafka does, so that tools speaking
// only the classic API (kafka-consumer-groups --describe, AdminClient.describeConsumerGroups on
// older clients) see its members: protocol type "consumer", the assignor as the protocol, and
// each member's subscription and owned partitions in the classic consumer protocol's layout
// (ConsumerProtocolSubscription / ConsumerProtocolAssignment, version 0).
describe_groups_response::group as_classic(const consumer_group_describe_response::group& cg) {
    describe_groups_response::group out;
    out.group_id = cg.group_id;
    out.state = cg.group_state;
    out.protocol_type = "consumer";
    out.protocol_data = cg.assignor_name;
    for (auto& m : cg.members) {
        auto& dm = out.members.emplace_back();
        dm.member_id = m.member_id;
        dm.group_instance_id = m.instance_id;
        dm.client_id = m.client_id;
        dm.client_host = m.client_host;
        kwriter sub(dm.metadata, false);
        sub.i16(0);
        sub.array_len(m.subscribed_topic_names.size());
        for (auto& t : m.subscribed_topic_names) sub.str(t);
        sub.nbytes(std::nullopt);
        kwriter asg(dm.assignment, false);
        asg.i16(0);
        asg.array_len(m.assignment.size());
        for (auto& tp : m.assignment) {
            asg.str(tp.topic_name);
            asg.array_len(tp.partitions.size());
            for (auto p : tp.partitions) asg.i32(p);
        }
        asg.nbytes(std::nullopt);
    }
    return out;
}

} // namespace

bool request_handler::describe_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_describe_groups);
    describe_groups_response resp;
    auto topics = cg_topics(_logs);
    describe_each_group(c, req.groups, req.include_authorized_operations, resp.groups, [&](std::string_view g) {
        if (auto cg = _groups.consumer().describe(g, topics); cg.error_code == 0) return as_classic(cg);
        return _groups.describe(g);
    });
    respond(out, h, resp);
    return true;
}

bool request_handler::delete_groups(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_delete_groups);
    delete_groups_response resp;
    for (auto g : req.groups)
        resp.results.push_back({std::string(g), !allowed(c, acl_operation::remove, acl_resource::group, g)
                                                    ? int16_t(kerr::group_authorization_failed)
                                                : !coordinates(g) ? int16_t(kerr::not_coordinator)
                                                                  : _groups.delete_group(g)});
    respond(out, h, resp);
    return true;
}

// ---------------- Producers / cluster ----------------

bool request_handler::init_producer_id(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_init_producer_id);
    init_producer_id_response resp;
    if (req.transactional_id && !req.transactional_id->empty()) {
        if (!allowed(c, acl_operation::write, acl_resource::transactional_id, *req.transactional_id)) {
            resp.error_code = int16_t(kerr::transactional_id_authorization_failed);
            respond(out, h, resp);
            return true;
        }
        return init_transactional(c, h, *req.transactional_id, req.transaction_timeout_ms, req.producer_id,
                                  req.producer_epoch, out); // txn_handlers.cc
    }
    if (!may_write_idempotently(c)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed);
    } else if (req.producer_id >= 0) {
        // KIP-360: a producer re-initialising after an error keeps its id with a bumped epoch.
        resp.producer_id = req.producer_id;
        resp.producer_epoch = int16_t(req.producer_epoch < 0 ? 0 : req.producer_epoch + 1);
        if (resp.producer_epoch == INT16_MAX) {
            auto id = _pids.next();
            if (!id) resp.error_code = int16_t(kerr::coordinator_not_available);
            else {
                resp.producer_id = *id;
                resp.producer_epoch = 0;
            }
        }
    } else {
        auto id = _pids.next();
        if (!id) {
            spdlog::error("producer id allocation: {}", id.error());
            resp.error_code = int16_t(kerr::coordinator_not_available);
        } else {
            resp.producer_id = *id;
            resp.producer_epoch = 0;
        }
    }
    respond(out, h, resp);
    return true;
}

bool request_handler::describe_cluster(const connection_info& conn, const request_header& h, bytes_view body, byte_buffer& out) {
    DECODE_OR_CLOSE(req, decode_describe_cluster);
    describe_cluster_response resp;
    if (!allowed_on_cluster(conn, acl_operation::describe)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed);
        respond(out, h, resp);
        return true;
    }
    resp.cluster_id = _opts.cluster_id;
    resp.brokers = cluster_brokers(conn);
    resp.controller_id = std::ranges::min(resp.brokers, {}, &broker_endpoint::node_id).node_id;
    if (req.include_cluster_authorized_operations)
        resp.cluster_authorized_operations =
            authorized_operations(conn, acl_resource::cluster, k_cluster_resource_name, k_cluster_all_ops);
    respond(out, h, resp);
    return true;
}

} // namespace floe::kafka
