#include "app/restore.h"

#include "app/storage.h"

#include "base/base64.h"
#include "format/parquet/compression.h"
#include "iceberg/catalog.h"
#include "lake/iceberg_lake.h"
#include "lake/table_reader.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace floe::app {

std::string restore_id(const std::string& table_id, int32_t partition, int64_t offset) {
    return fmt::format("floe:{}:{}:{}", table_id, partition, offset);
}

std::optional<std::pair<int32_t, int64_t>> parse_restore_id(std::string_view id, const std::string& table_id) {
    auto prefix = fmt::format("floe:{}:", table_id);
    if (!id.starts_with(prefix)) return std::nullopt;
    id.remove_prefix(prefix.size());
    auto colon = id.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= id.size()) return std::nullopt;
    int64_t p = 0, o = 0;
    for (char c : id.substr(0, colon)) {
        if (c < '0' || c > '9' || p > INT32_MAX / 10) return std::nullopt;
        p = p * 10 + (c - '0');
    }
    for (char c : id.substr(colon + 1)) {
        if (c < '0' || c > '9' || o > INT64_MAX / 10 - 10) return std::nullopt;
        o = o * 10 + (c - '0');
    }
    return std::pair<int32_t, int64_t>{int32_t(p), o};
}

std::optional<int64_t> parse_restore_time(std::string_view t) {
    if (t.empty()) return std::nullopt;
    if (std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        if (t.size() > 18) return std::nullopt;
        return std::stoll(std::string(t));
    }
    std::tm tm{};
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, n = 0;
    std::string text(t);
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6) return std::nullopt;
    std::string_view rest = t.substr(size_t(n));
    int64_t ms = 0;
    if (rest.starts_with(".")) {
        rest.remove_prefix(1);
        int digits = 0;
        while (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
            if (digits < 3) ms = ms * 10 + (rest[0] - '0');
            ++digits;
            rest.remove_prefix(1);
        }
        if (digits == 0) return std::nullopt;
        for (; digits < 3; ++digits) ms *= 10;
    }
    if (rest != "Z" && rest != "+00:00") return std::nullopt;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return int64_t(timegm(&tm)) * 1000 + ms;
}

namespace {

using steady = std::chrono::steady_clock;

/// Headers a restore writes itself, never copied from a row: the restore's own id, the
/// original time, and JetStream publish preconditions that held when the message was first
/// published but would refuse the replay (Nats-Expected-*).
bool dropped_header(std::string_view k) {
    return k == "Nats-Msg-Id" || k == "Floe-Original-Timestamp" || k == "Floe-Restore-Id"
        || k.starts_with("Nats-Expected-") || k.starts_with("Floe-Obj-");
}

/// Where restored messages go. One per run, used from the main thread; the client libraries'
/// callbacks (acks, delivery reports) only touch the atomic counters and the error under _mu.
class restore_target {
public:
    virtual ~restore_target() = default;
    /// Connects and checks the stream/topic; the error's code says which exit: not_found → 3.
    virtual result<void> open() = 0;
    /// Per partition, the first offset not yet in the target (newest restore id of this table
    /// found there, plus one). Partitions absent: nothing of theirs found.
    virtual result<std::map<int32_t, int64_t>> resume_points(const std::string& table_id) = 0;
    /// Queues one row (blocks while the client's queue is full).
    virtual result<void> send(const parquet::message_record& r, const std::string& id) = 0;
    /// Waits until every queued message is acknowledged.
    virtual result<void> finish() = 0;
    virtual std::string describe() const = 0;
    /// Refuses a table with partitions the target has not (before anything is sent).
    virtual result<void> accepts_partitions(int32_t highest) { return {}; }

    std::atomic<int64_t> acked{0}, duplicates{0}, failed{0};

protected:
    void note_error(std::string e) {
        std::lock_guard g(_mu);
        if (_first_error.empty()) _first_error = std::move(e);
    }
    std::string first_error() {
        std::lock_guard g(_mu);
        return _first_error;
    }
    std::mutex _mu;
    std::string _first_error;
};

// ---------------------------------------------------------------------------------------------
// JetStream (libnats)

enum class js_kind { plain, kv, obj };

class jetstream_target final : public restore_target {
public:
    jetstream_target(std::string url, std::string stream) : _url(std::move(url)), _stream(std::move(stream)) {
        if (_stream.starts_with("KV_") && _stream.size() > 3) {
            _kind = js_kind::kv;
            _kv_prefix = fmt::format("$KV.{}.", _stream.substr(3));
        } else if (_stream.starts_with("OBJ_") && _stream.size() > 4) {
            _kind = js_kind::obj;
            _obj_chunks = fmt::format("$O.{}.C.", _stream.substr(4));
            _obj_meta = fmt::format("$O.{}.M.", _stream.substr(4));
        }
    }
    ~jetstream_target() override {
        if (_js) jsCtx_Destroy(_js);
        if (_nc) natsConnection_Destroy(_nc);
        if (_opts) natsOptions_Destroy(_opts);
    }

    std::string describe() const override { return fmt::format("JetStream stream {} at {}", _stream, _url); }

    result<void> open() override {
        natsOptions_Create(&_opts);
        natsOptions_SetURL(_opts, _url.c_str());
        natsOptions_SetTimeout(_opts, 5000);
        natsOptions_SetMaxReconnect(_opts, 60);
        natsOptions_SetReconnectWait(_opts, 500);
        natsOptions_SetErrorHandler(
            _opts, [](natsConnection*, natsSubscription*, natsStatus, void*) {}, nullptr); // reported by acks
        if (auto st = natsConnection_Connect(&_nc, _opts); st != NATS_OK)
            return fail(errc::unavailable, "cannot reach NATS at {}: {}", _url, natsStatus_GetText(st));
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Wait = 10000;
        jo.PublishAsync.MaxPending = 4096;
        jo.PublishAsync.AckHandler = &jetstream_target::on_ack;
        jo.PublishAsync.AckHandlerClosure = this;
        if (auto st = natsConnection_JetStream(&_js, _nc, &jo); st != NATS_OK)
            return fail(errc::unavailable, "JetStream context at {}: {}", _url, natsStatus_GetText(st));
        jsStreamInfo* si = nullptr;
        jsErrCode jerr = jsErrCode(0);
        auto st = js_GetStreamInfo(&si, _js, _stream.c_str(), nullptr, &jerr);
        if (st == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr)
            return fail(errc::not_found,
                        "no stream {} at {}: create it first (its subjects, storage and duplicate window: see "
                        "README.md, \"Restore\")",
                        _stream, _url);
        if (st != NATS_OK)
            return fail(errc::unavailable, "stream {} at {}: {} (JetStream error {})", _stream, _url,
                        natsStatus_GetText(st), int(jerr));
        _first_seq = si->State.FirstSeq;
        _last_seq = si->State.LastSeq;
        _msgs = si->State.Msgs;
        _dup_window_ms = si->Config ? si->Config->Duplicates / 1'000'000 : 0;
        jsStreamInfo_Destroy(si);
        return {};
    }

    result<std::map<int32_t, int64_t>> resume_points(const std::string& table_id) override {
        // The newest restore id of this table among the stream's last 1,000 messages: the
        // restore publishes in order on one connection, so everything before it is there.
        std::map<int32_t, int64_t> out;
        if (_msgs == 0) return out;
        uint64_t lowest = _last_seq >= scan_window ? _last_seq - scan_window + 1 : 1;
        lowest = std::max<uint64_t>(lowest, _first_seq);
        for (uint64_t seq = _last_seq; seq >= lowest && seq > 0; --seq) {
            natsMsg* m = nullptr;
            jsErrCode jerr = jsErrCode(0);
            auto st = js_GetMsg(&m, _js, _stream.c_str(), seq, nullptr, &jerr);
            if (st == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) continue; // deleted
            if (st != NATS_OK)
                return fail(errc::unavailable, "reading message {} of stream {}: {}", seq, _stream,
                            natsStatus_GetText(st));
            const char* id = nullptr;
            std::optional<std::pair<int32_t, int64_t>> got;
            if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK && id) got = parse_restore_id(id, table_id);
            natsMsg_Destroy(m);
            if (got) {
                // Partitions go one after another: those below are whole.
                out[got->first] = got->second + 1;
                for (int32_t p = 0; p < got->first; ++p) out[p] = INT64_MAX;
                return out;
            }
        }
        if (_msgs > 0)
            std::fprintf(stderr,
                         "floe restore: stream %s holds %llu message(s), none of the last %llu restored from this "
                         "table: starting from the beginning (Nats-Msg-Id drops what the duplicate window, %lld ms, "
                         "still remembers)\n",
                         _stream.c_str(), (unsigned long long)_msgs, (unsigned long long)(_last_seq - lowest + 1),
                         (long long)_dup_window_ms);
        return out;
    }

    result<void> send(const parquet::message_record& r, const std::string& id) override {
        if (auto e = first_error(); !e.empty()) return fail(errc::unavailable, "{}", e);
        std::string subject;
        if (!r.key) return fail(errc::invalid_argument, "offset {} has no key, so no subject to publish to", r.offset);
        bool meta = false;
        if (r.headers)
            for (auto& h : *r.headers)
                if (h.key == "Floe-Obj-Name") meta = true;
        switch (_kind) {
        case js_kind::plain: subject = *r.key; break;
        case js_kind::kv: subject = _kv_prefix + *r.key; break;
        case js_kind::obj: {
            if (!meta) {
                subject = _obj_chunks + *r.key;
                break;
            }
            auto b = base64_encode(std::span(reinterpret_cast<const uint8_t*>(r.key->data()), r.key->size()));
            for (auto& c : b) c = c == '+' ? '-' : c == '/' ? '_' : c;
            subject = _obj_meta + b;
            break;
        }
        }
        // What NATS cannot carry (a Kafka table's keys and headers may hold anything): refused
        // by name rather than sent to break the connection's protocol stream.
        if (subject.empty() || subject.find_first_of(" \t\r\n") != std::string::npos || subject.starts_with(".")
            || subject.ends_with(".") || subject.find("..") != std::string::npos)
            return fail(errc::invalid_argument, "offset {}: '{}' is not a NATS subject", r.offset, subject);
        if (r.headers)
            for (auto& h : *r.headers)
                if (h.key.find_first_of(" :\r\n") != std::string::npos
                    || (h.value && h.value->find_first_of("\r\n") != std::string::npos))
                    return fail(errc::invalid_argument, "offset {}: header '{}' cannot be a NATS header (line break, "
                                "or a space or colon in its name)", r.offset, h.key);
        natsMsg* m = nullptr;
        const std::string& data = r.value ? *r.value : _empty;
        if (auto st = natsMsg_Create(&m, subject.c_str(), nullptr, data.data(), int(data.size())); st != NATS_OK)
            return fail(errc::invalid_argument, "offset {}: subject '{}': {}", r.offset, subject, natsStatus_GetText(st));
        if (r.headers)
            for (auto& h : *r.headers) {
                if (h.key.empty()) continue;
                if (h.key == "Nats-Msg-Id") {
                    natsMsgHeader_Add(m, "Floe-Original-Msg-Id", h.value ? h.value->c_str() : "");
                    continue;
                }
                if (dropped_header(h.key)) continue;
                natsMsgHeader_Add(m, h.key.c_str(), h.value ? h.value->c_str() : "");
            }
        natsMsgHeader_Set(m, "Nats-Msg-Id", id.c_str());
        auto ts = fmt::format("{}", r.message_ts);
        natsMsgHeader_Set(m, "Floe-Original-Timestamp", ts.c_str());
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = 30000; // how long PublishAsync waits while 4,096 are in flight
        auto st = js_PublishMsgAsync(_js, &m, &po);
        if (m) natsMsg_Destroy(m); // not taken on failure
        if (st != NATS_OK)
            return fail(errc::unavailable, "publishing offset {} to {}: {}", r.offset, _stream, natsStatus_GetText(st));
        return {};
    }

    result<void> finish() override {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = 60000;
        auto st = js_PublishAsyncComplete(_js, &po);
        if (auto e = first_error(); !e.empty()) return fail(errc::unavailable, "{}", e);
        if (st != NATS_OK)
            return fail(errc::unavailable, "waiting for the stream's acknowledgements: {}", natsStatus_GetText(st));
        return {};
    }

private:
    static constexpr uint64_t scan_window = 1000;

    static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
        auto* self = static_cast<jetstream_target*>(closure);
        if (pa) {
            self->acked.fetch_add(1, std::memory_order_relaxed);
            if (pa->Duplicate) self->duplicates.fetch_add(1, std::memory_order_relaxed);
        } else if (pae) {
            self->failed.fetch_add(1, std::memory_order_relaxed);
            const char* id = nullptr;
            natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
            self->note_error(fmt::format("publishing {} to {}: {} (JetStream error {})", id ? id : "?",
                                         self->_stream, pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err),
                                         int(pae->ErrCode)));
        }
        natsMsg_Destroy(msg);
    }

    std::string _url, _stream;
    js_kind _kind = js_kind::plain;
    std::string _kv_prefix, _obj_chunks, _obj_meta;
    const std::string _empty;
    natsOptions* _opts = nullptr;
    natsConnection* _nc = nullptr;
    jsCtx* _js = nullptr;
    uint64_t _first_seq = 0, _last_seq = 0, _msgs = 0;
    int64_t _dup_window_ms = 0;
};

// ---------------------------------------------------------------------------------------------
// Kafka (librdkafka): any Kafka, Floe included

class kafka_target final : public restore_target {
public:
    kafka_target(std::string bootstrap, std::string topic) : _bootstrap(std::move(bootstrap)), _topic(std::move(topic)) {}
    ~kafka_target() override {
        if (_rkt) rd_kafka_topic_destroy(_rkt);
        if (_rk) rd_kafka_destroy(_rk);
    }
    std::string describe() const override { return fmt::format("Kafka topic {} at {}", _topic, _bootstrap); }

    result<void> open() override {
        char err[512];
        auto* conf = rd_kafka_conf_new();
        auto set = [&](const char* k, const std::string& v) -> result<void> {
            if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
                return fail(errc::invalid_argument, "librdkafka {}={}: {}", k, v, err);
            return {};
        };
        FLOE_TRY(set("bootstrap.servers", _bootstrap));
        FLOE_TRY(set("enable.idempotence", "true"));
        FLOE_TRY(set("acks", "all"));
        FLOE_TRY(set("linger.ms", "5"));
        FLOE_TRY(set("client.id", "floe-restore"));
        FLOE_TRY(set("allow.auto.create.topics", "false"));
        FLOE_TRY(set("log_level", "3")); // errors only, under the restore's own prefix
        rd_kafka_conf_set_log_cb(conf, &kafka_target::on_log);
        rd_kafka_conf_set_opaque(conf, this);
        rd_kafka_conf_set_dr_msg_cb(conf, &kafka_target::on_delivery);
        _rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        if (!_rk) return fail(errc::invalid_argument, "librdkafka producer: {}", err);
        _rkt = rd_kafka_topic_new(_rk, _topic.c_str(), nullptr);
        const rd_kafka_metadata_t* md = nullptr;
        auto e = rd_kafka_metadata(_rk, 0, _rkt, &md, 5000);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            return fail(errc::unavailable, "cannot reach Kafka at {}: {}", _bootstrap, rd_kafka_err2str(e));
        std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> hold(md, rd_kafka_metadata_destroy);
        if (md->topic_cnt != 1 || md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
            return fail(errc::not_found, "no topic {} at {}: create it first, with at least the table's partitions",
                        _topic, _bootstrap);
        if (md->topics[0].err)
            return fail(errc::unavailable, "topic {} at {}: {}", _topic, _bootstrap, rd_kafka_err2str(md->topics[0].err));
        _partitions = md->topics[0].partition_cnt;
        return {};
    }

    result<void> accepts_partitions(int32_t highest) override {
        if (highest >= _partitions)
            return fail(errc::invalid_argument,
                        "the table has partitions up to {} and topic {} has {}: give the topic at least {} (each "
                        "record goes to the partition of the same number)",
                        highest, _topic, _partitions, highest + 1);
        return {};
    }

    result<std::map<int32_t, int64_t>> resume_points(const std::string& table_id) override {
        // The idempotent producer keeps a partition's records in order without duplicates
        // within one process; across processes, the newest Floe-Restore-Id of this table in the
        // partition's last 1,000 records says where the previous run stopped.
        std::map<int32_t, int64_t> out;
        char err[512];
        auto* conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "bootstrap.servers", _bootstrap.c_str(), err, sizeof err);
        rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
        rd_kafka_conf_set(conf, "isolation.level", "read_uncommitted", err, sizeof err);
        rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
        rd_kafka_conf_set_log_cb(conf, &kafka_target::on_log);
        // Partitions are assigned, not subscribed: the group only lets librdkafka poll (nothing
        // is committed).
        rd_kafka_conf_set(conf, "group.id", "floe-restore", err, sizeof err);
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
        auto* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
        if (!c) return fail(errc::invalid_argument, "librdkafka consumer: {}", err);
        std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> hold(c, rd_kafka_destroy);
        for (int32_t p = 0; p < _partitions; ++p) {
            int64_t lo = 0, hi = 0;
            auto e = rd_kafka_query_watermark_offsets(c, _topic.c_str(), p, &lo, &hi, 10000);
            if (e) return fail(errc::unavailable, "offsets of {}-{}: {}", _topic, p, rd_kafka_err2str(e));
            if (hi <= lo) continue;
            auto* parts = rd_kafka_topic_partition_list_new(1);
            rd_kafka_topic_partition_list_add(parts, _topic.c_str(), p)->offset = std::max(lo, hi - scan_window);
            e = rd_kafka_assign(c, parts);
            rd_kafka_topic_partition_list_destroy(parts);
            if (e) return fail(errc::unavailable, "reading {}-{}: {}", _topic, p, rd_kafka_err2str(e));
            auto deadline = steady::now() + std::chrono::seconds(15);
            bool done = false;
            while (!done) {
                if (steady::now() > deadline)
                    return fail(errc::unavailable, "reading the last records of {}-{}: no end in 15 s", _topic, p);
                auto* m = rd_kafka_consumer_poll(c, 200);
                if (!m) continue;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                    done = true;
                } else if (m->err) {
                    auto what = std::string(rd_kafka_message_errstr(m));
                    rd_kafka_message_destroy(m);
                    return fail(errc::unavailable, "reading {}-{}: {}", _topic, p, what);
                } else {
                    rd_kafka_headers_t* hs = nullptr;
                    const void* v = nullptr;
                    size_t n = 0;
                    if (rd_kafka_message_headers(m, &hs) == RD_KAFKA_RESP_ERR_NO_ERROR
                        && rd_kafka_header_get_last(hs, "Floe-Restore-Id", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR && v)
                        if (auto got = parse_restore_id(std::string_view(static_cast<const char*>(v), n), table_id))
                            out[got->first] = std::max(out[got->first], got->second + 1);
                    if (m->offset + 1 >= hi) done = true;
                }
                rd_kafka_message_destroy(m);
            }
            rd_kafka_assign(c, nullptr);
        }
        return out;
    }

    result<void> send(const parquet::message_record& r, const std::string& id) override {
        if (auto e = first_error(); !e.empty()) return fail(errc::unavailable, "{}", e);
        if (r.partition >= _partitions)
            return fail(errc::invalid_argument, "partition {} of the table: topic {} has {} partition(s)", r.partition,
                        _topic, _partitions);
        auto* hs = rd_kafka_headers_new(r.headers ? r.headers->size() + 1 : 1);
        if (r.headers)
            for (auto& h : *r.headers) {
                if (h.key == "Floe-Restore-Id") continue;
                rd_kafka_header_add(hs, h.key.data(), ssize_t(h.key.size()), h.value ? h.value->data() : nullptr,
                                    h.value ? ssize_t(h.value->size()) : 0);
            }
        rd_kafka_header_add(hs, "Floe-Restore-Id", -1, id.data(), ssize_t(id.size()));
        void* key = r.key ? const_cast<char*>(r.key->data()) : nullptr;
        size_t key_len = r.key ? r.key->size() : 0;
        void* value = r.value ? const_cast<char*>(r.value->data()) : nullptr;
        size_t value_len = r.value ? r.value->size() : 0;
        for (;;) {
            auto e = rd_kafka_producev(
                _rk, RD_KAFKA_V_RKT(_rkt), RD_KAFKA_V_PARTITION(r.partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
                RD_KAFKA_V_TIMESTAMP(r.message_ts), RD_KAFKA_V_HEADERS(hs), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(_rk, 50);
                if (auto err = first_error(); !err.empty()) {
                    rd_kafka_headers_destroy(hs);
                    return fail(errc::unavailable, "{}", err);
                }
                continue;
            }
            rd_kafka_headers_destroy(hs);
            return fail(errc::unavailable, "producing offset {} to {}: {}", r.offset, _topic, rd_kafka_err2str(e));
        }
        rd_kafka_poll(_rk, 0);
        return {};
    }

    result<void> finish() override {
        auto e = rd_kafka_flush(_rk, 60000);
        char fatal[512];
        if (rd_kafka_fatal_error(_rk, fatal, sizeof fatal))
            return fail(errc::unavailable, "the idempotent producer stopped: {}", fatal);
        if (auto err = first_error(); !err.empty()) return fail(errc::unavailable, "{}", err);
        if (e) return fail(errc::unavailable, "waiting for {}'s acknowledgements: {}", _topic, rd_kafka_err2str(e));
        return {};
    }

private:
    static constexpr int64_t scan_window = 1000;

    static void on_log(const rd_kafka_t*, int level, const char* fac, const char* buf) {
        std::fprintf(stderr, "floe restore: librdkafka %s: %s\n", fac, buf);
    }

    static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
        auto* self = static_cast<kafka_target*>(opaque);
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            self->acked.fetch_add(1, std::memory_order_relaxed);
        } else {
            self->failed.fetch_add(1, std::memory_order_relaxed);
            self->note_error(fmt::format("producing to {}-{}: {}", self->_topic, m->partition, rd_kafka_err2str(m->err)));
        }
    }

    std::string _bootstrap, _topic;
    rd_kafka_t* _rk = nullptr;
    rd_kafka_topic_t* _rkt = nullptr;
    int32_t _partitions = 0;
};

// ---------------------------------------------------------------------------------------------

std::string with_commas(int64_t n) {
    // Built forward rather than with string::insert, which g++ 12 at -O3 flags with a false
    // -Wrestrict (an error under FLOE_WERROR).
    auto digits = fmt::format("{}", n);
    size_t sign = n < 0 ? 1 : 0;
    std::string out(digits, 0, sign);
    for (size_t i = sign; i < digits.size(); ++i) {
        if (i > sign && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

/// The partition a stream key names ("<topic>-<p>"), else nullopt (Redis stream keys).
std::optional<int32_t> partition_of(const std::string& stream_key) {
    auto dash = stream_key.rfind('-');
    if (dash == std::string::npos || dash + 1 == stream_key.size() || stream_key.size() - dash > 10) return std::nullopt;
    int32_t p = 0;
    for (size_t i = dash + 1; i < stream_key.size(); ++i) {
        char c = stream_key[i];
        if (c < '0' || c > '9') return std::nullopt;
        p = p * 10 + (c - '0');
    }
    return p;
}

/// Counts, rate and the once-a-second progress line.
struct progress {
    int64_t total = 0;   ///< rows in range by the manifests (an upper bound: files are read whole)
    int64_t sent = 0, skipped = 0;
    steady::time_point start = steady::now(), last_line = steady::now();
    int64_t sent_at_last = 0;

    void tick(const restore_target& t, bool force = false) {
        auto now = steady::now();
        if (!force && now - last_line < std::chrono::seconds(1)) return;
        double dt = std::chrono::duration<double>(now - last_line).count();
        double rate = dt > 0 ? double(sent - sent_at_last) / dt : 0;
        std::fprintf(stderr, "floe restore: %s sent (%s acknowledged), %s of about %s rows read, %.0f msg/s\n",
                     with_commas(sent).c_str(), with_commas(t.acked.load()).c_str(),
                     with_commas(sent + skipped).c_str(), with_commas(total).c_str(), rate);
        last_line = now;
        sent_at_last = sent;
    }
};

} // namespace

int run_restore(const config::settings& s, const restore_request& req) {
    auto usage = [](std::string msg) {
        std::fprintf(stderr, "floe restore: %s\n", msg.c_str());
        return int(restore_usage);
    };
    if (req.from_offset && req.from_ts) return usage("give --from-offset or --from-ts, not both");
    if (req.to_offset && req.to_ts) return usage("give --to-offset or --to-ts, not both");
    int64_t from_ts = INT64_MIN, to_ts = INT64_MAX;
    if (req.from_ts) {
        auto t = parse_restore_time(*req.from_ts);
        if (!t) return usage(fmt::format("--from-ts {}: give epoch milliseconds or ISO-8601 UTC (2026-12-03T04:00:00Z)", *req.from_ts));
        from_ts = *t;
    }
    if (req.to_ts) {
        auto t = parse_restore_time(*req.to_ts);
        if (!t) return usage(fmt::format("--to-ts {}: give epoch milliseconds or ISO-8601 UTC (2026-12-03T04:00:00Z)", *req.to_ts));
        to_ts = *t;
    }
    const int64_t from_off = req.from_offset.value_or(0), to_off = req.to_offset.value_or(INT64_MAX);
    if (from_off < 0 || to_off < from_off || to_ts < from_ts) return usage("the range is empty (from after to)");
    if (req.max_rate < 0) return usage("--max-rate must be positive");

    std::unique_ptr<restore_target> target;
    if (req.to.starts_with("nats://") || req.to.starts_with("tls://")) {
        if (req.stream.empty()) return usage("--to nats://... needs --stream S");
        if (!req.topic.empty()) return usage("--topic goes with --to kafka://...");
        target = std::make_unique<jetstream_target>(req.to, req.stream);
    } else if (req.to.starts_with("kafka://")) {
        if (req.topic.empty()) return usage("--to kafka://... needs --topic T");
        if (!req.stream.empty()) return usage("--stream goes with --to nats://...");
        auto servers = req.to.substr(8);
        while (servers.ends_with("/")) servers.pop_back();
        target = std::make_unique<kafka_target>(servers, req.topic);
    } else {
        return usage(fmt::format("--to {}: give nats://host:port (with --stream) or kafka://host:port (with --topic)",
                                 req.to));
    }

    // The lake, as floe tables files opens it.
    auto ns = s.get_string("floe.namespace");
    auto storage = make_file_io(s);
    if (!storage) {
        std::fprintf(stderr, "floe restore: %s\n", storage.error().message().c_str());
        return restore_usage;
    }
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        std::fprintf(stderr, "floe restore: cannot open the %s catalog: %s\n",
                     s.get_string("floe.storage.remote.catalog.type").c_str(), cat.error().message().c_str());
        return restore_failed;
    }
    std::shared_ptr<iceberg::catalog> catalog(std::move(*cat));
    lake::lake_options lo;
    lo.warehouse = s.get_string("floe.storage.remote.path");
    lo.ns = ns;
    lake::iceberg_lake lake(catalog, storage->io, lo);
    bool by_table = req.table.starts_with(ns + ".");
    std::string table = by_table ? req.table.substr(ns.size() + 1) : lake::table_name_for_topic(req.table);
    auto loc = catalog->metadata_location({ns, table});
    if (!loc) {
        std::fprintf(stderr, "floe restore: catalog: %s\n", loc.error().message().c_str());
        return restore_failed;
    }
    if (!*loc) {
        std::fprintf(stderr, "floe restore: no table %s.%s%s (nothing offloaded yet, or not a topic)\n", ns.c_str(),
                     table.c_str(), by_table ? "" : fmt::format(" for topic '{}'", req.table).c_str());
        return restore_not_found;
    }
    const std::string table_id = ns + "." + table;
    // A topic's reader also reads a typed table's dead letters: every record of the topic.
    auto reader_ptr = by_table ? std::make_unique<lake::table_reader>(lake, table, table)
                               : std::make_unique<lake::table_reader>(lake, req.table);
    auto& reader = *reader_ptr;
    auto files = reader.files();
    if (!files) {
        std::fprintf(stderr, "floe restore: planning %s: %s\n", table_id.c_str(), files.error().message().c_str());
        return restore_failed;
    }

    if (auto r = target->open(); !r) {
        std::fprintf(stderr, "floe restore: %s\n", r.error().message().c_str());
        return r.error().code() == errc::not_found ? restore_not_found
               : r.error().code() == errc::invalid_argument ? restore_usage
                                                             : restore_failed;
    }
    auto resume = target->resume_points(table_id);
    if (!resume) {
        std::fprintf(stderr, "floe restore: %s\n", resume.error().message().c_str());
        return restore_failed;
    }
    for (auto& [p, next] : *resume)
        if (next != INT64_MAX)
            std::fprintf(stderr, "floe restore: %s already holds partition %d up to offset %lld: resuming after it\n",
                         target->describe().c_str(), p, (long long)(next - 1));

    // Files by stream key, the stream keys by partition (JetStream: one after another).
    std::map<std::pair<int64_t, std::string>, std::vector<lake::planned_file>> streams;
    for (auto& f : *files) {
        auto p = partition_of(f.stream_key);
        streams[{p ? *p : INT32_MAX, f.stream_key}].push_back(f);
    }
    int32_t highest = -1;
    for (auto& [k, fs] : streams)
        if (auto p = partition_of(k.second)) highest = std::max(highest, *p);
    if (auto ok = target->accepts_partitions(highest); !ok) {
        std::fprintf(stderr, "floe restore: %s\n", ok.error().message().c_str());
        return restore_usage;
    }
    progress prog;
    auto first_needed = [&](std::optional<int32_t> p) -> int64_t {
        int64_t from = from_off;
        if (p)
            if (auto it = resume->find(*p); it != resume->end()) from = std::max(from, it->second);
        return from;
    };
    for (auto& [k, fs] : streams) {
        auto p = partition_of(k.second);
        for (auto& f : fs)
            if (f.max_offset >= first_needed(p) && f.min_offset <= to_off && f.max_ts >= from_ts && f.min_ts <= to_ts)
                prog.total += f.record_count;
    }
    std::fprintf(stderr, "floe restore: %s (%zu data file(s), about %s rows in range) into %s\n", table_id.c_str(),
                 files->size(), with_commas(prog.total).c_str(), target->describe().c_str());

    const auto started = steady::now();
    int64_t skipped_resume = 0;
    std::map<int32_t, int64_t> last_sent; // per partition: the highest offset sent (duplicate rows in the table are sent once)
    auto emit = [&](const parquet::message_record& r) -> result<void> {
        int64_t from = first_needed(r.partition);
        if (r.offset < from_off || r.offset > to_off || r.message_ts < from_ts || r.message_ts > to_ts) {
            ++prog.skipped;
            return {};
        }
        if (r.offset < from) {
            ++prog.skipped;
            ++skipped_resume;
            return {};
        }
        if (auto it = last_sent.find(r.partition); it != last_sent.end() && r.offset <= it->second) {
            ++prog.skipped;
            return {};
        }
        if (req.max_rate > 0) {
            auto due = started + std::chrono::duration<double>(double(prog.sent) / req.max_rate);
            if (due > steady::now()) std::this_thread::sleep_until(due);
        }
        FLOE_TRY(target->send(r, restore_id(table_id, r.partition, r.offset)));
        last_sent[r.partition] = r.offset;
        ++prog.sent;
        prog.tick(*target);
        return {};
    };

    // Rows are read (Parquet decode) on a second thread while this one publishes: a queue of
    // at most two batches (row groups) between them.
    using batch = std::vector<parquet::message_record>;
    auto read_all = [&](const std::function<bool(batch&&)>& sink) -> result<void> {
        for (auto& [k, fs] : streams) {
            auto p = partition_of(k.second);
            std::vector<lake::planned_file> wanted;
            for (auto& f : fs)
                if (f.max_offset >= first_needed(p) && f.min_offset <= to_off && f.max_ts >= from_ts
                    && f.min_ts <= to_ts)
                    wanted.push_back(f);
            std::stable_sort(wanted.begin(), wanted.end(),
                             [](auto& a, auto& b) { return a.min_offset < b.min_offset; });
            // Files whose offset ranges overlap (a typed table's rows and its dead letters) are
            // read together and their rows sorted; any other file is streamed by row group.
            for (size_t i = 0; i < wanted.size();) {
                size_t j = i + 1;
                int64_t hi = wanted[i].max_offset;
                while (j < wanted.size() && wanted[j].min_offset <= hi) hi = std::max(hi, wanted[j++].max_offset);
                if (j == i + 1) {
                    byte_buffer buf;
                    auto rd = FLOE_TRY(reader.open_file(wanted[i], buf));
                    for (;;) {
                        batch rows;
                        if (!FLOE_TRY(rd.next_row_group(rows))) break;
                        if (!sink(std::move(rows))) return {};
                    }
                } else {
                    batch rows;
                    for (size_t f = i; f < j; ++f) {
                        auto more = FLOE_TRY(reader.read_file(wanted[f]));
                        std::move(more.begin(), more.end(), std::back_inserter(rows));
                    }
                    std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
                    if (!sink(std::move(rows))) return {};
                }
                i = j;
            }
        }
        return {};
    };
    struct {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<batch> q;
        bool done = false, stop = false;
        std::optional<error> err;
    } feed;
    std::thread read_thread([&] {
        auto r = read_all([&](batch&& b) {
            std::unique_lock g(feed.mu);
            feed.cv.wait(g, [&] { return feed.q.size() < 2 || feed.stop; });
            if (feed.stop) return false;
            feed.q.push_back(std::move(b));
            feed.cv.notify_all();
            return true;
        });
        std::lock_guard g(feed.mu);
        if (!r) feed.err = std::move(r).error();
        feed.done = true;
        feed.cv.notify_all();
    });
    auto run = [&]() -> result<void> {
        for (;;) {
            batch b;
            {
                std::unique_lock g(feed.mu);
                feed.cv.wait(g, [&] { return !feed.q.empty() || feed.done; });
                if (feed.q.empty()) {
                    if (feed.err) return fail(*feed.err);
                    break;
                }
                b = std::move(feed.q.front());
                feed.q.pop_front();
                feed.cv.notify_all();
            }
            for (auto& r : b) FLOE_TRY(emit(r));
        }
        return target->finish();
    };
    auto r = run();
    {
        std::lock_guard g(feed.mu);
        feed.stop = true;
        feed.cv.notify_all();
    }
    read_thread.join();
    prog.tick(*target, true);
    double secs = std::chrono::duration<double>(steady::now() - started).count();
    if (!r) {
        std::fprintf(stderr,
                     "floe restore: stopped: %s\nfloe restore: %s sent, %s acknowledged; run the same command again "
                     "to go on (it resumes after the last message the target holds)\n",
                     r.error().message().c_str(), with_commas(prog.sent).c_str(),
                     with_commas(target->acked.load()).c_str());
        return r.error().code() == errc::invalid_argument ? restore_usage : restore_failed;
    }
    std::printf("restored %s message(s) from %s into %s in %.2f s (%.0f msg/s); %s already there (resumed), %s dropped "
                "as duplicates by the target, %s out of range\n",
                with_commas(prog.sent).c_str(), table_id.c_str(), target->describe().c_str(), secs,
                secs > 0 ? double(prog.sent) / secs : 0.0, with_commas(skipped_resume).c_str(),
                with_commas(target->duplicates.load()).c_str(), with_commas(prog.skipped - skipped_resume).c_str());
    return restore_done;
}

} // namespace floe::app
