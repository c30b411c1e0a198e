#include "ingest/jetstream_source.h"

#include "base/clock.h"
#include "config/units.h"
#include "ingest/mirror_policy.h"
#include "ingest/nats_subscription.h"
#include "log/batch_builder.h"

#include <nats/nats.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace floe::ingest {

namespace {
constexpr int fetch_batch = 512;
constexpr int64_t fetch_timeout_ms = 500;
// libnats 3.4.1 can leave a pull subscription that no longer receives messages after a fetch
// timeout (fixed upstream in 3.6.1): when the stream is ahead of the mirror and fetches bring
// nothing for this long, the subscription is recreated at the mirror's log end.
constexpr int64_t stall_ms = 3000;
constexpr int64_t info_interval_ms = 1000;
// A fetch that reports a timeout well before its own timeout got the 408 status of an earlier,
// expired pull request (libnats 3.4.1 does not tell its requests apart; fixed in 3.6.1 by a
// per-fetch reply subject): it is not a timeout of this fetch, so fetch again at once. After
// this many in a row the subscription (and its inbox) is recreated.
constexpr int early_timeouts_before_resubscribe = 20;
constexpr int64_t purge_interval_ms = 200;
// Work-queue streams: messages are acked only once committed to Iceberg, which may take long.
constexpr int64_t workqueue_ack_wait_ns = 3600ll * 1'000'000'000;
constexpr int64_t workqueue_max_ack_pending = 1'000'000;
constexpr int64_t paused_sleep_ms = 100;
} // namespace

bool parse_ack_subject(std::string_view reply, uint64_t& sseq, int64_t& ts_ns) {
    constexpr std::string_view prefix = "$JS.ACK.";
    if (!reply.starts_with(prefix)) return false;
    reply.remove_prefix(prefix.size());
    std::string_view tok[12];
    size_t n = 0;
    while (n < 12) {
        auto dot = reply.find('.');
        tok[n++] = reply.substr(0, dot);
        if (dot == std::string_view::npos) break;
        reply.remove_prefix(dot + 1);
        if (n == 12) return false; // more tokens than either form has
    }
    size_t seq_at, ts_at;
    if (n == 7) seq_at = 3, ts_at = 5;
    else if (n >= 9) seq_at = 5, ts_at = 7;
    else return false;
    auto num = [](std::string_view t, uint64_t& v) {
        if (t.empty() || t.size() > 19) return false;
        v = 0;
        for (char c : t) {
            if (c < '0' || c > '9') return false;
            v = v * 10 + uint64_t(c - '0');
        }
        return true;
    };
    uint64_t ts = 0;
    if (!num(tok[seq_at], sseq) || !num(tok[ts_at], ts)) return false;
    ts_ns = int64_t(ts);
    return true;
}

namespace {

// What a stream holds, by its name: a KV bucket (KV_<bucket>), an object store bucket
// (OBJ_<bucket>) or anything else. Decides how a message becomes a record (key, value, headers).
enum class stream_kind { plain, kv, obj };

stream_kind kind_of(std::string_view stream) {
    if (stream.starts_with("KV_") && stream.size() > 3) return stream_kind::kv;
    if (stream.starts_with("OBJ_") && stream.size() > 4) return stream_kind::obj;
    return stream_kind::plain;
}

// Base64 "URL" alphabet, with or without padding (object store meta subjects encode the name).
std::optional<std::string> base64url_decode(std::string_view in) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '-' || c == '+') v = 62;
        else if (c == '_' || c == '/') v = 63;
        else if (c == '=') break;
        else return std::nullopt;
        acc = (acc << 6) | uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(char((acc >> bits) & 0xff));
        }
    }
    return out;
}

} // namespace

// Connects to the source's server (url and credentials of its settings).
static result<void> connect_to(const config::settings::ingest_source& cfg, const std::string* label, natsConnection*& nc,
                    jsCtx*& js) {
    natsOptions* o = nullptr;
    auto fin = [&](natsStatus s, std::string_view what) -> result<void> {
        if (o) natsOptions_Destroy(o);
        return fail(errc::unavailable, "{} {}: {}", what, cfg.get("url"), natsStatus_GetText(s));
    };
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK) s = natsOptions_SetURL(o, cfg.get("url").c_str());
    if (s == NATS_OK && !cfg.get("user").empty())
        s = natsOptions_SetUserInfo(o, cfg.get("user").c_str(), cfg.get("password").c_str());
    if (s == NATS_OK && !cfg.get("token").empty()) s = natsOptions_SetToken(o, cfg.get("token").c_str());
    if (s == NATS_OK && !cfg.get("creds-file").empty())
        s = natsOptions_SetUserCredentialsFromFiles(o, cfg.get("creds-file").c_str(), nullptr);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, -1);
    // libnats' default asynchronous error handler (a slow consumer, a server error on the
    // connection) prints raw lines to stderr; through Floe's logger they stay one JSON
    // object a line with --log-format json. Called on libnats' thread; `label` (the source's
    // name) outlives the connection (it is destroyed before its owner goes).
    if (s == NATS_OK)
        s = natsOptions_SetErrorHandler(
            o,
            [](natsConnection* c, natsSubscription*, natsStatus err, void* closure) {
                const char* last = nullptr;
                if (c) natsConnection_GetLastError(c, &last);
                spdlog::warn("ingest {}: nats: {}{}{}", *static_cast<const std::string*>(closure),
                             natsStatus_GetText(err), last && *last ? ": " : "", last ? last : "");
            },
            const_cast<std::string*>(label));
    if (s != NATS_OK) return fin(s, "options for");
    s = natsConnection_Connect(&nc, o);
    if (s != NATS_OK) return fin(s, "connecting to");
    natsOptions_Destroy(o);
    o = nullptr;
    s = natsConnection_JetStream(&js, nc, nullptr);
    if (s != NATS_OK) {
        natsConnection_Destroy(nc);
        nc = nullptr;
        return fin(s, "JetStream context on");
    }
    return {};
}


/// One stream mirrored into one one-partition topic, on its own thread and connection (see the
/// class comment of jetstream_source). Owned by jetstream_source::impl; start() spawns the
/// thread, stop() joins it; `st` is read under `mu` from any thread.
struct stream_mirror {
    config::settings::ingest_source cfg; ///< the source's settings with this stream's overrides
    log::local_tier& logs;
    ingest_hooks hooks;
    std::string durable; ///< the work-queue consumer's name

    stream_mirror(config::settings::ingest_source c, log::local_tier& l, ingest_hooks h, std::string durable_name)
        : cfg(std::move(c)), logs(l), hooks(std::move(h)), durable(std::move(durable_name)) {}
    ~stream_mirror() {
        stop();
        disconnect();
    }

    std::string topic, stream, subject, mirror_of;
    stream_kind kind = stream_kind::plain;
    std::string kv_prefix;                      // "$KV.<bucket>."
    std::string obj_chunks, obj_meta;           // "$O.<bucket>.C.", "$O.<bucket>.M."
    std::string bound_consumer;                 // a consumer made by add_consumer(), deleted with the sub
    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    natsSubscription* sub = nullptr;
    subscription_graveyard retired; // subscriptions dropped, destroyed once the read loop is past them
    std::shared_ptr<log::local_partition> plog;
    std::thread thread;
    std::atomic<bool> stopping{false};
    int64_t last_progress_ms = 0;
    int64_t last_info_ms = 0;
    int early_timeouts = 0;

    // mode=offload and thresholds
    bool offload = false;
    bool workqueue = false;          // the stream's retention is WorkQueue: ack, not purge
    seal_thresholds limits;
    segment_sealer sealer;           // follows the active segment for the thresholds
    bool at_end = false;             // the last fetch timed out with nothing (for idle-seal)
    int64_t budget = 0;
    int64_t purged_to = 0;           // offsets below this were purged from the stream
    int64_t stream_last = 0;         // the stream's last sequence, last seen
    int64_t last_purge_ms = 0;
    log::batch_builder builder; // reused by append(): keeps its buffers
    byte_buffer batch_bytes;
    std::map<int64_t, std::string> pending_acks; // work-queue: offset -> reply subject, not yet acked
    bool paused = false;
    // nats-server 2.9 moves every consumer of a stream past messages it has not delivered yet
    // when the stream is purged by subject (an object store put or overwrite, a KV purge:
    // rollups), so a limits stream's consumer can skip messages still in the stream. That can
    // happen to a consumer made a moment ago too (between its creation at the mirror's end and
    // its first fetch), so no jump is trusted: every one is checked against the stream, and the
    // messages still there are read directly (fill_gap). Only deleted or purged sequences stay
    // gaps.
    int64_t gaps_filled = 0; // messages a consumer skipped and fill_gap read, so far
    mutable std::mutex mu;
    source_status st;

    void set_error(std::string msg) {
        std::lock_guard g(mu);
        if (st.last_error != msg) {
            spdlog::warn("ingest {}: {}", st.name, msg);
            ++st.errors;
        }
        st.last_error = std::move(msg);
        st.last_error_ms = system_clock_source::instance().now_ms();
        st.state = "error";
    }
    void set_running() {
        std::lock_guard g(mu);
        st.state = "running";
        st.last_error.clear();
    }

    // Destroys the pull subscription (through `retired`: messages and pull statuses for it may
    // still be arriving, and libnats 3.4.1 must not free it under its read loop) and a consumer
    // add_consumer() made for it (best effort: its inactive threshold removes it anyway).
    void drop_sub() {
        retired.retire(nc, sub);
        if (!bound_consumer.empty() && js) {
            jsErrCode ec = jsErrCode(0);
            (void)js_DeleteConsumer(js, stream.c_str(), bound_consumer.c_str(), nullptr, &ec);
        }
        bound_consumer.clear();
    }

    void disconnect() {
        drop_sub();
        if (js) jsCtx_Destroy(js);
        js = nullptr;
        if (nc) natsConnection_Destroy(nc);
        nc = nullptr;
        retired.destroy_all(); // the read loop was joined by natsConnection_Destroy
    }

    result<void> connect() { return connect_to(cfg, &cfg.name, nc, js); }

    // The stream's last sequence (as an offset end: last seq), or an error naming the stream.
    result<int64_t> stream_end(std::string* only_subject = nullptr) {
        jsStreamInfo* si = nullptr;
        jsErrCode ec = jsErrCode(0);
        natsStatus s = js_GetStreamInfo(&si, js, stream.c_str(), nullptr, &ec);
        if (s != NATS_OK)
            return fail(errc::unavailable, "stream {} on {}: {} (JetStream error {})", stream, cfg.get("url"),
                        natsStatus_GetText(s), int(ec));
        int64_t last = int64_t(si->State.LastSeq);
        stream_last = last;
        if (only_subject && si->Config && si->Config->SubjectsLen == 1) *only_subject = si->Config->Subjects[0];
        if (si->Config) workqueue = si->Config->Retention == js_WorkQueuePolicy;
        jsStreamInfo_Destroy(si);
        return last;
    }

    // A pull consumer on the whole stream (no filter: a stream of several subjects, as an object
    // store's chunks and metadata), made here and bound by name: libnats 3.4.1 subscribes by
    // one subject only.
    natsStatus add_consumer(jsSubOptions& so, jsErrCode& ec) {
        jsConsumerConfig cc = so.Config;
        cc.FilterSubject = nullptr;
        if (!cc.Durable) cc.InactiveThreshold = 60ll * 1'000'000'000; // a crashed process's consumer goes
        jsConsumerInfo* ci = nullptr;
        natsStatus s = js_AddConsumer(&ci, js, stream.c_str(), &cc, nullptr, &ec);
        if (s != NATS_OK) return s;
        std::string name = ci->Name;
        jsConsumerInfo_Destroy(ci);
        so.Consumer = name.c_str();
        s = js_PullSubscribe(&sub, js, ">", name.c_str(), nullptr, &so, &ec);
        if (s == NATS_OK && !cc.Durable) bound_consumer = name;
        return s;
    }

    result<void> subscribe() {
        drop_sub();
        std::string only;
        FLOE_TRY(stream_end(&only));
        std::string subj = subject.empty() ? only : subject;
        if (workqueue && !offload)
            return fail(errc::invalid_argument,
                        "stream {} is a work queue: acknowledging removes messages, so it can only be mirrored "
                        "with floe.ingest.sources.{}.mode=offload",
                        stream, cfg.name);
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream.c_str();
        int64_t end = plog->log_end_offset()();
        jsErrCode ec = jsErrCode(0);
        natsStatus s = NATS_OK;
        if (workqueue) {
            // A durable consumer acked explicitly, once each message is in Iceberg. It is made
            // afresh at every (re)subscription from the first message still in the stream (the
            // ones not acked yet): a consumer left by a crashed process would keep their
            // deliveries pending for the whole ack wait. Messages already mirrored are only
            // acked when committed.
            jsErrCode dec = jsErrCode(0);
            (void)js_DeleteConsumer(js, stream.c_str(), durable.c_str(), nullptr, &dec);
            pending_acks.clear();
            so.Config.Durable = durable.c_str();
            so.Config.AckPolicy = js_AckExplicit;
            so.Config.AckWait = workqueue_ack_wait_ns;
            so.Config.MaxAckPending = workqueue_max_ack_pending;
            so.Config.DeliverPolicy = js_DeliverAll;
            s = subj.empty() ? add_consumer(so, ec)
                             : js_PullSubscribe(&sub, js, subj.c_str(), durable.c_str(), nullptr, &so, &ec);
        } else {
            so.Config.AckPolicy = js_AckAll;
            so.Config.MaxAckPending = 20000;
            if (end > 0) {
                so.Config.DeliverPolicy = js_DeliverByStartSequence;
                so.Config.OptStartSeq = uint64_t(end) + 1;
            } else {
                so.Config.DeliverPolicy = js_DeliverAll;
            }
            s = subj.empty() ? add_consumer(so, ec) : js_PullSubscribe(&sub, js, subj.c_str(), nullptr, nullptr, &so, &ec);
        }
        if (s != NATS_OK)
            return fail(errc::unavailable, "pull consumer on stream {} subject {}: {} (JetStream error {})", stream,
                        subj.empty() ? "(all)" : subj, natsStatus_GetText(s), int(ec));
        early_timeouts = 0;
        purged_to = 0; // purge again after any reconnection: a restarted server may have lost one
        if (workqueue)
            spdlog::info("ingest {}: mirroring work queue {} ({}) into {}-0 from its first message not acked (durable "
                         "consumer {}; the mirror holds up to sequence {})",
                         cfg.name, stream, subj, topic, durable, end);
        else
            spdlog::info("ingest {}: mirroring stream {} ({}) into {}-0 from sequence {}", cfg.name, stream,
                         subj.empty() ? "all subjects" : subj, topic, end > 0 ? end + 1 : 1);
        last_progress_ms = system_clock_source::instance().now_ms();
        return {};
    }

    result<void> ensure_topic() {
        auto info = logs.topic(topic);
        // Mirrors go to the lake unless the source says remote-storage=false (config refuses
        // that with mode=offload, which only removes what Iceberg holds).
        if (!info)
            info = FLOE_TRY_CTX(logs.create_topic(topic, 1, mirror_overrides(cfg), false, mirror_of),
                                "creating mirror topic {}", topic);
        else if (info->mirror_of != mirror_of)
            return fail(errc::already_exists, "topic {} exists and is not the mirror of source {}", topic, cfg.name);
        else
            info = FLOE_TRY(align_mirror_tiering(logs, *info, cfg));
        if (offload && !info->config.remote_storage_enable)
            return fail(errc::invalid_argument,
                        "mode=offload needs the mirror topic {} to go to Iceberg: set its remote.storage.enable=true",
                        topic);
        plog = logs.partition(topic, 0);
        if (!plog) return fail(errc::not_found, "mirror topic {} has no partition 0", topic);
        std::lock_guard g(mu);
        if (st.partitions.empty()) {
            partition_status ps;
            ps.source_topic = stream;
            ps.local_topic = topic;
            st.partitions.push_back(ps);
        }
        return {};
    }

    // A KV or object store message as a record (src/ingest/README.md, "Stream kinds"). KV: the
    // key is the KV key, a DEL or PURGE (KV-Operation header, kept) a tombstone. Object store: a
    // chunk's key is the object's NUID, its metadata's key the object's name; both carry the
    // NUID (Floe-Obj-Nuid), the metadata the name (Floe-Obj-Name) too. Anything else as is.
    void shape(natsMsg* m, std::string_view subj, std::string_view data, std::optional<std::string_view>& key,
               std::optional<std::string_view>& value, std::deque<std::string>& store,
               std::vector<log::batch_builder::header>& hdrs) {
        auto add_header = [&](std::string_view k, std::string v) {
            store.push_back(std::move(v));
            hdrs.push_back({k, std::string_view(store.back())});
        };
        if (kind == stream_kind::kv) {
            if (!subj.starts_with(kv_prefix)) return;
            key = subj.substr(kv_prefix.size());
            const char* op = nullptr;
            if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op
                && (std::string_view(op) == "DEL" || std::string_view(op) == "PURGE"))
                value = std::nullopt;
            return;
        }
        if (subj.starts_with(obj_chunks)) {
            key = subj.substr(obj_chunks.size());
            add_header("Floe-Obj-Nuid", std::string(*key));
        } else if (subj.starts_with(obj_meta)) {
            std::string name, nuid;
            bool deleted = false;
            try {
                auto j = nlohmann::json::parse(data);
                name = j.value("name", std::string());
                nuid = j.value("nuid", std::string());
                deleted = j.value("deleted", false);
            } catch (const std::exception&) {
                // Not JSON: keep the subject's encoded name below.
            }
            if (name.empty())
                if (auto n = base64url_decode(subj.substr(obj_meta.size()))) name = std::move(*n);
            store.push_back(name);
            key = std::string_view(store.back());
            add_header("Floe-Obj-Name", std::move(name));
            if (!nuid.empty()) add_header("Floe-Obj-Nuid", std::move(nuid));
            if (deleted) add_header("Floe-Obj-Deleted", "true");
        }
    }

    // The first message of the stream at sequence >= seq (on the mirror's subject filter, if
    // any), by the stream's message-get API; nullptr when there is none. Sequences a consumer
    // jumped over are checked with it.
    result<natsMsg*> next_stored(uint64_t seq) {
        const std::string api = fmt::format("$JS.API.STREAM.MSG.GET.{}", stream);
        for (;;) { // again only when the message found was purged before it could be read
            nlohmann::json req{{"seq", seq}, {"next_by_subj", subject.empty() ? std::string(">") : subject}};
            const std::string body = req.dump();
            natsMsg* reply = nullptr;
            natsStatus s = natsConnection_Request(&reply, nc, api.c_str(), body.data(), int(body.size()), 5000);
            if (s != NATS_OK)
                return fail(errc::unavailable, "reading stream {} from sequence {}: {}", stream, seq,
                            natsStatus_GetText(s));
            std::string text(natsMsg_GetData(reply), size_t(natsMsg_GetDataLength(reply)));
            natsMsg_Destroy(reply);
            uint64_t found = 0;
            try {
                auto j = nlohmann::json::parse(text);
                if (j.contains("error")) {
                    if (j["error"].value("code", 0) == 404) return nullptr; // no message at or after seq
                    return fail(errc::unavailable, "reading stream {} from sequence {}: {}", stream, seq,
                                j["error"].value("description", text));
                }
                found = j.at("message").at("seq").get<uint64_t>();
            } catch (const std::exception&) {
                return fail(errc::unavailable, "reading stream {} from sequence {}: unexpected answer {}", stream,
                            seq, text.substr(0, 200));
            }
            natsMsg* m = nullptr;
            jsErrCode ec = jsErrCode(0);
            s = js_GetMsg(&m, js, stream.c_str(), found, nullptr, &ec);
            if (s == NATS_NOT_FOUND || ec == jsErrCode(10037)) { // purged meanwhile: the next one
                seq = found + 1;
                continue;
            }
            if (s != NATS_OK)
                return fail(errc::unavailable, "reading sequence {} of stream {}: {} (JetStream error {})", found,
                            stream, natsStatus_GetText(s), int(ec));
            return m;
        }
    }

    // Appends one fetched list at the messages' sequences - 1, then acks the last one. A jump
    // over sequences is checked (see gaps_filled): the messages still in the stream within it
    // are read directly and appended in order.
    result<void> append(natsMsgList& list) {
        auto& b = builder;
        auto& bytes = batch_bytes;
        bytes.clear();
        bool open = false;
        int64_t last = -1, last_ts = -1, n = 0;
        const int64_t floor = plog->log_end_offset()();
        natsMsg* last_msg = nullptr;
        // One message's header text (a deque: views into it stay valid as it grows) and headers,
        // reused across the list: b.add copies them.
        std::deque<std::string> store;
        std::vector<log::batch_builder::header> hdrs;
        auto add = [&](natsMsg* m, int64_t off, int64_t ts) -> result<void> {
            store.clear();
            hdrs.clear();
            const char** keys = nullptr;
            int nk = 0;
            if (natsMsgHeader_Keys(m, &keys, &nk) == NATS_OK) {
                std::vector<std::pair<const char*, std::vector<std::string>>> kv;
                for (int k = 0; k < nk; ++k) {
                    const char** vals = nullptr;
                    int nv = 0;
                    std::vector<std::string> vs;
                    if (natsMsgHeader_Values(m, keys[k], &vals, &nv) == NATS_OK) {
                        for (int v = 0; v < nv; ++v) vs.emplace_back(vals[v]);
                        free(static_cast<void*>(vals));
                    }
                    kv.emplace_back(keys[k], std::move(vs));
                }
                for (auto& [k, vs] : kv)
                    for (auto& v : vs) {
                        store.emplace_back(k);
                        auto& ks = store.back();
                        store.push_back(v);
                        hdrs.push_back({ks, std::string_view(store.back())});
                    }
                free(static_cast<void*>(keys));
            }
            if (open && off != last + 1) {
                FLOE_TRY(b.finish(bytes));
                open = false;
            }
            if (!open) {
                b.begin(off);
                open = true;
            }
            std::string_view subj = natsMsg_GetSubject(m);
            std::string_view data(natsMsg_GetData(m), size_t(natsMsg_GetDataLength(m)));
            std::optional<std::string_view> key = subj, value = data;
            if (kind != stream_kind::plain) shape(m, subj, data, key, value, store, hdrs);
            b.add(off, ts, key, value, hdrs);
            last = off;
            last_ts = ts;
            ++n;
            return {};
        };
        // Reads the messages still in the stream at offsets [from, to) and appends them.
        auto fill_gap = [&](int64_t from, int64_t to) -> result<void> {
            int64_t filled = 0;
            for (uint64_t seq = uint64_t(from) + 1; seq <= uint64_t(to);) {
                natsMsg* m = FLOE_TRY(next_stored(seq));
                if (!m) break;
                const uint64_t got = natsMsg_GetSequence(m);
                if (got > uint64_t(to)) {
                    natsMsg_Destroy(m);
                    break;
                }
                auto r = add(m, int64_t(got) - 1, natsMsg_GetTime(m) / 1'000'000);
                natsMsg_Destroy(m);
                FLOE_TRY(std::move(r));
                ++filled;
                seq = got + 1;
            }
            if (filled > 0) {
                gaps_filled += filled;
                spdlog::info("ingest {}: stream {} delivered sequence {} where {} was due, and {} messages in between "
                             "are still in the stream (a purge by subject moves nats-server 2.9 consumers past them): "
                             "read them directly ({} so far)",
                             cfg.name, stream, to + 1, from + 1, filled, gaps_filled);
            }
            return {};
        };
        for (int i = 0; i < list.Count; ++i) {
            natsMsg* m = list.Msgs[i];
            uint64_t sseq = 0;
            int64_t ts_ns = 0;
            const char* ack = natsMsg_GetReply(m);
            if (!ack || !parse_ack_subject(ack, sseq, ts_ns)) {
                jsMsgMetaData* md = nullptr;
                if (natsMsg_GetMetaData(&md, m) != NATS_OK) continue; // not a stream message (status)
                sseq = md->Sequence.Stream;
                ts_ns = md->Timestamp;
                jsMsgMetaData_Destroy(md);
            }
            int64_t off = int64_t(sseq) - 1;
            int64_t ts = ts_ns / 1'000'000;
            const int64_t due = last >= 0 ? last + 1 : floor;
            if (!workqueue && off > due) FLOE_TRY(fill_gap(due, off));
            last_msg = m;
            if (workqueue)
                if (const char* reply = natsMsg_GetReply(m)) pending_acks[off] = reply;
            if (off < floor || off <= last) continue;
            FLOE_TRY(add(m, off, ts));
        }
        if (open) FLOE_TRY(b.finish(bytes));
        if (!bytes.empty()) {
            auto r = FLOE_TRY(plog->mirror_append(bytes));
            if (r.status != log::append_status::ok)
                return fail(errc::internal, "appending to {}-0: {}: {}", topic, log::to_string(r.status), r.message);
            if (limits.any()) sealer.appended(*plog, n, system_clock_source::instance().now_ms());
            std::lock_guard g(mu);
            auto& ps = st.partitions.front();
            ps.records += n;
            ps.last_record_ts = last_ts;
            ps.local_end = last + 1;
            ps.source_end = std::max(ps.source_end, last + 1);
            last_progress_ms = system_clock_source::instance().now_ms();
        }
        // Acknowledged only once appended (duplicate mode keeps the messages in NATS anyway);
        // a work queue's messages are acked one by one once in Iceberg (settle_offload).
        if (last_msg && !workqueue) natsMsg_Ack(last_msg, nullptr);
        return {};
    }

    // Seals the active segment when a threshold is reached (whichever comes first), so the
    // storage worker lands it in Iceberg.
    void maybe_seal(int64_t now) {
        if (!limits.any() || !plog) return;
        auto r = sealer.maybe_seal(*plog, limits, now, at_end);
        if (!r) {
            set_error(r.error().message());
            return;
        }
        if (!*r) return;
        spdlog::info("ingest {}: segment {} of {}-0 sealed by {} ({} messages, {} bytes)", cfg.name, (*r)->id,
                     topic, (*r)->why, (*r)->messages, (*r)->bytes);
        if (hooks.sealed) hooks.sealed();
    }

    // mode=offload: removes from the stream what the table has committed (the partition's
    // offloaded-up-to marker moves only after an Iceberg commit): a purge up to it on a limits
    // (or interest) stream, acks of the messages below it on a work queue.
    void settle_offload(int64_t now) {
        if (!offload || !plog || !js) return;
        // The stream's last message stays until a later one arrives, even once committed: a
        // nats-server 2.9 file store emptied entirely and then killed hard can come back with
        // its sequences reset (nats-server PRs 2753, 6789, 7676), and new messages would then
        // reuse sequences the mirror already holds.
        const int64_t marker = std::min(plog->offloaded_up_to()(), stream_last - 1);
        if (workqueue) {
            bool sent = false;
            while (!pending_acks.empty() && pending_acks.begin()->first < marker) {
                auto& reply = pending_acks.begin()->second;
                if (natsConnection_PublishString(nc, reply.c_str(), "+ACK") != NATS_OK) break;
                pending_acks.erase(pending_acks.begin());
                sent = true;
            }
            if (sent) (void)natsConnection_FlushTimeout(nc, 2000);
            purged_to = std::max(purged_to, marker);
            return;
        }
        if (marker <= purged_to || now - last_purge_ms < purge_interval_ms) return;
        last_purge_ms = now;
        jsOptions o;
        jsOptions_Init(&o);
        if (!subject.empty()) o.Stream.Purge.Subject = subject.c_str();
        o.Stream.Purge.Sequence = uint64_t(marker) + 1; // sequences up to marker = offsets below it
        jsErrCode ec = jsErrCode(0);
        natsStatus s = js_PurgeStream(js, stream.c_str(), &o, &ec);
        if (s != NATS_OK) {
            set_error(fmt::format("purging stream {} below sequence {}: {} (JetStream error {})", stream, marker + 1,
                                  natsStatus_GetText(s), int(ec)));
            return;
        }
        spdlog::debug("ingest {}: stream {} purged below sequence {} (committed to Iceberg)", cfg.name, stream,
                      marker + 1);
        purged_to = marker;
    }

    // Backpressure: true (and the state says so) while the mirror holds more bytes not yet in
    // Iceberg than the budget.
    bool over_budget() {
        int64_t bytes = plog ? unoffloaded_bytes(*plog) : 0;
        bool over = bytes > budget;
        std::lock_guard g(mu);
        st.local_bytes = bytes;
        if (over && !paused) {
            spdlog::warn("ingest {}: {} bytes of {}-0 not yet in Iceberg, above max-local-bytes={}: consumption "
                         "paused until the lake catches up",
                         cfg.name, bytes, topic, budget);
            ++st.pauses;
        } else if (!over && paused) {
            spdlog::info("ingest {}: {} bytes not yet in Iceberg, consumption resumes", cfg.name, bytes);
        }
        paused = over;
        st.paused = over;
        if (over) st.state = "paused";
        else if (st.state == "paused") st.state = "running";
        return over;
    }

    // Shorter fetches with a short max-age, so a segment is sealed close to its age, and with
    // idle-seal, so the end of the stream is seen within about that long.
    int64_t fetch_timeout() const {
        if (limits.immediate) return 50;
        int64_t t = limits.max_age_ms > 0 ? std::clamp<int64_t>(limits.max_age_ms / 4, 50, fetch_timeout_ms)
                                          : fetch_timeout_ms;
        if (limits.idle_ms >= 0) t = std::min(t, std::max<int64_t>(limits.idle_ms, 50));
        return t;
    }

    void run() {
        int64_t backoff = 200;
        while (!stopping.load()) {
            if (!nc || !sub) {
                auto r = [&]() -> result<void> {
                    if (!nc) FLOE_TRY(connect());
                    FLOE_TRY(ensure_topic());
                    FLOE_TRY(subscribe());
                    return {};
                }();
                if (!r) {
                    set_error(r.error().message());
                    if (sub == nullptr && nc && !natsConnection_IsClosed(nc)) {
                        // connected but no consumer: keep the connection, retry the rest
                    } else {
                        disconnect();
                    }
                    for (int64_t w = 0; w < backoff && !stopping.load(); w += 50)
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    backoff = std::min<int64_t>(backoff * 2, 5000);
                    continue;
                }
                backoff = 200;
                set_running();
            }
            maybe_seal(system_clock_source::instance().now_ms());
            settle_offload(system_clock_source::instance().now_ms());
            if (over_budget()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(paused_sleep_ms));
                last_progress_ms = system_clock_source::instance().now_ms(); // not a stall: nothing was asked for
            } else {
                natsMsgList list{};
                jsErrCode ec = jsErrCode(0);
                const int64_t t0 = system_clock_source::instance().now_ms();
                natsStatus s = natsSubscription_Fetch(&list, sub, fetch_batch, fetch_timeout(), &ec);
                if (s == NATS_OK) {
                    early_timeouts = 0;
                    at_end = false;
                    auto r = append(list);
                    natsMsgList_Destroy(&list);
                    if (!r) {
                        set_error(r.error().message());
                        // Start again at the mirror's end: nothing is skipped or doubled.
                        drop_sub();
                        continue;
                    }
                    if (!paused) set_running();
                } else if (s == NATS_TIMEOUT) {
                    // a real timeout: the consumer has nothing more for now
                    if (system_clock_source::instance().now_ms() - t0 >= fetch_timeout() / 2) {
                        early_timeouts = 0;
                        at_end = true;
                    } else if (++early_timeouts >= early_timeouts_before_resubscribe) {
                        spdlog::info("ingest {}: {} fetches in a row ended at once with a timeout (stale pull "
                                     "statuses, libnats < 3.6.1): recreating the pull consumer",
                                     cfg.name, early_timeouts);
                        drop_sub();
                        continue;
                    }
                } else {
                    natsMsgList_Destroy(&list);
                    set_error(fmt::format("fetching from stream {}: {}", stream, natsStatus_GetText(s)));
                    drop_sub();
                    continue;
                }
            }
            auto now = system_clock_source::instance().now_ms();
            if (now - last_info_ms >= info_interval_ms) {
                last_info_ms = now;
                auto end = stream_end();
                if (!end) {
                    // Subscribe again once the stream answers (and purge again: a server that
                    // restarted may have lost a purge it acknowledged).
                    set_error(end.error().message());
                    drop_sub();
                    continue;
                }
                int64_t local = plog->log_end_offset()();
                {
                    std::lock_guard g(mu);
                    st.partitions.front().source_end = *end;
                }
                if (*end < local) {
                    // Sequences the mirror holds were handed out again: the server lost messages
                    // it had acknowledged. New messages at those sequences cannot be mirrored at
                    // their sequence; say so loudly (mirroring goes on above the mirror's end).
                    set_error(fmt::format("stream {} went back: its last sequence is {} but the mirror holds sequences "
                                          "up to {}; the server lost acknowledged messages (a hard kill of a "
                                          "nats-server file store?) and messages now published at sequences {}..{} "
                                          "are not mirrored",
                                          stream, *end, local, *end + 1, local));
                }
                if (*end > local && now - last_progress_ms > stall_ms) {
                    spdlog::info("ingest {}: stream {} is at {} and the mirror at {} with no message for {} ms: "
                                 "recreating the pull consumer",
                                 cfg.name, stream, *end, local, now - last_progress_ms);
                    drop_sub();
                }
            }
        }
        if (plog) (void)plog->flush();
    }

    // Reads the (per-stream) settings and spawns the thread. Errors name the setting.
    result<void> start(std::string stream_name, std::string topic_name) {
        stream = std::move(stream_name);
        topic = std::move(topic_name);
        subject = cfg.get("filter-subject");
        mirror_of = "jetstream:" + cfg.name;
        offload = cfg.get("mode", "duplicate") == "offload";
        budget = max_local_bytes_of(cfg);
        limits = FLOE_TRY(seal_thresholds::of(cfg));
        kind = kind_of(stream);
        if (kind == stream_kind::kv) kv_prefix = fmt::format("$KV.{}.", stream.substr(3));
        if (kind == stream_kind::obj) {
            obj_chunks = fmt::format("$O.{}.C.", stream.substr(4));
            obj_meta = fmt::format("$O.{}.M.", stream.substr(4));
        }
        FLOE_TRY_CTX(log::local_tier::validate_topic_name(topic), "the mirror topic of stream {} (source {})", stream,
                     cfg.name);
        {
            std::lock_guard g(mu);
            st.name = cfg.name;
            st.type = "jetstream";
            st.max_local_bytes = budget;
            st.state = "starting";
        }
        thread = std::thread([this] {
            // Named for profiles and top -H (15 characters at most).
            ::pthread_setname_np(::pthread_self(), fmt::format("ingest:{}", cfg.name).substr(0, 15).c_str());
            run();
        });
        spdlog::info("ingest {}: jetstream source {} stream={} ({}) topic={} mode={} max-age={} max-messages={} "
                     "max-bytes={} idle-seal={} max-local-bytes={}",
                     cfg.name, cfg.get("url"), stream,
                     kind == stream_kind::kv ? "KV bucket" : kind == stream_kind::obj ? "object store" : "stream", topic,
                     offload ? "offload" : "duplicate", cfg.get("max-age", "-"), cfg.get("max-messages", "-"),
                     cfg.get("max-bytes", "-"), cfg.get("idle-seal", "-"), budget);
        return {};
    }

    void stop() {
        if (!thread.joinable()) return;
        stopping = true;
        thread.join();
        disconnect();
        std::lock_guard g(mu);
        st.state = "stopped";
    }

    source_status status() const {
        std::lock_guard g(mu);
        return st;
    }
};

namespace {
// How often a source of several streams lists the server's streams (new ones are mirrored,
// gone ones stopped), and how many streams one source mirrors at most.
constexpr int64_t stream_list_interval_ms = 2000;
constexpr size_t max_streams_per_source = 1000;

// A topic name from a stream name: characters a topic name cannot hold become '_'.
std::string topic_of(std::string_view prefix, std::string_view stream) {
    std::string t(prefix);
    for (char c : stream)
        t.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_');
    return t;
}
} // namespace

/// The source: one stream_mirror per stream. With `stream`, one mirror started at start(); with
/// `streams`, a listing thread that starts and stops mirrors as streams come and go.
struct jetstream_source::impl {
    jetstream_source& self;
    explicit impl(jetstream_source& s) : self(s) {}

    bool many = false;
    std::string selector_text;
    std::optional<topic_selector> selector; // nullopt with many: every stream ("*")
    std::thread lister;
    std::atomic<bool> stopping{false};

    mutable std::mutex mu; // guards mirrors, list_error, listed
    std::map<std::string, std::unique_ptr<stream_mirror>> mirrors;
    std::string list_error;
    bool listed = false;
    int64_t list_errors = 0;

    // The source's settings for one stream: its overrides applied, the override keys dropped.
    config::settings::ingest_source settings_for(const std::string& stream) const {
        auto c = self._cfg;
        const std::string mine = "overrides." + stream + ".";
        for (auto it = c.values.begin(); it != c.values.end();)
            if (it->first.starts_with("overrides.")) it = c.values.erase(it);
            else ++it;
        for (auto& [k, v] : self._cfg.values)
            if (k.starts_with(mine)) c.values[k.substr(mine.size())] = v;
        return c;
    }

    result<std::unique_ptr<stream_mirror>> make_mirror(const std::string& stream) {
        auto c = settings_for(stream);
        std::string topic = many ? c.get("topic", topic_of(c.get("topic-prefix"), stream))
                                 : c.get("topic", c.get("topic-prefix") + stream);
        // The work-queue consumer: "floe-<source>" for a one-stream source, as it always was.
        std::string durable = many ? topic_of("floe-" + self._cfg.name + "-", stream) : "floe-" + self._cfg.name;
        auto m = std::make_unique<stream_mirror>(std::move(c), self._logs, self._hooks, std::move(durable));
        FLOE_TRY(m->start(stream, topic));
        return m;
    }

    bool wanted(const std::string& stream) const { return !selector || selector->matches(stream); }

    // One listing round: mirrors for new matching streams, stops those of streams gone.
    void list_round(jsCtx* js) {
        jsStreamNamesList* names = nullptr;
        jsErrCode ec = jsErrCode(0);
        natsStatus s = js_StreamNames(&names, js, nullptr, &ec);
        std::vector<std::string> found;
        if (s == NATS_OK && names)
            for (int i = 0; i < names->Count; ++i)
                if (names->List[i] && wanted(names->List[i])) found.emplace_back(names->List[i]);
        if (names) jsStreamNamesList_Destroy(names);
        if (s != NATS_OK && s != NATS_NOT_FOUND) { // NOT_FOUND: no stream at all
            std::lock_guard g(mu);
            auto msg = fmt::format("listing the streams of {}: {} (JetStream error {})", self._cfg.get("url"),
                                   natsStatus_GetText(s), int(ec));
            if (msg != list_error) {
                spdlog::warn("ingest {}: {}", self._cfg.name, msg);
                ++list_errors;
            }
            list_error = std::move(msg);
            return;
        }
        std::sort(found.begin(), found.end());
        if (found.size() > max_streams_per_source) {
            spdlog::warn("ingest {}: {} streams match '{}', mirroring the first {} by name", self._cfg.name,
                         found.size(), selector_text, max_streams_per_source);
            found.resize(max_streams_per_source);
        }
        std::vector<std::unique_ptr<stream_mirror>> gone;
        {
            std::lock_guard g(mu);
            list_error.clear();
            listed = true;
            for (auto it = mirrors.begin(); it != mirrors.end();)
                if (!std::binary_search(found.begin(), found.end(), it->first)) {
                    spdlog::info("ingest {}: stream {} is gone: its mirror {} stops (the topic and table stay)",
                                 self._cfg.name, it->first, it->second->topic);
                    gone.push_back(std::move(it->second));
                    it = mirrors.erase(it);
                } else {
                    ++it;
                }
        }
        gone.clear(); // joins their threads, outside the lock
        for (auto& name : found) {
            {
                std::lock_guard g(mu);
                if (mirrors.contains(name)) continue;
            }
            auto m = make_mirror(name);
            std::lock_guard g(mu);
            if (!m) {
                auto msg = fmt::format("stream {}: {}", name, m.error().message());
                if (msg != list_error) {
                    spdlog::warn("ingest {}: {}", self._cfg.name, msg);
                    ++list_errors;
                }
                list_error = std::move(msg);
                continue;
            }
            spdlog::info("ingest {}: stream {} matches '{}': mirrored into {}", self._cfg.name, name, selector_text,
                         (*m)->topic);
            mirrors.emplace(name, std::move(*m));
        }
    }

    void list_loop() {
        natsConnection* nc = nullptr;
        jsCtx* js = nullptr;
        int64_t last = 0;
        while (!stopping.load()) {
            auto now = system_clock_source::instance().now_ms();
            if (now - last >= stream_list_interval_ms) {
                last = now;
                if (!nc || natsConnection_IsClosed(nc)) {
                    if (js) jsCtx_Destroy(js);
                    if (nc) natsConnection_Destroy(nc);
                    js = nullptr;
                    nc = nullptr;
                    if (auto r = connect_to(self._cfg, &self._cfg.name, nc, js); !r) {
                        std::lock_guard g(mu);
                        if (list_error != r.error().message()) {
                            spdlog::warn("ingest {}: {}", self._cfg.name, r.error().message());
                            ++list_errors;
                        }
                        list_error = r.error().message();
                        continue;
                    }
                }
                list_round(js);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (js) jsCtx_Destroy(js);
        if (nc) natsConnection_Destroy(nc);
    }
};

jetstream_source::jetstream_source(config::settings::ingest_source cfg, log::local_tier& logs, ingest_hooks hooks)
    : _cfg(std::move(cfg)), _logs(logs), _hooks(std::move(hooks)), _impl(std::make_unique<impl>(*this)) {}

jetstream_source::~jetstream_source() { stop(); }

result<void> jetstream_source::start() {
    auto& I = *_impl;
    I.many = !_cfg.get("streams").empty();
    if (!I.many) {
        auto m = FLOE_TRY(I.make_mirror(_cfg.get("stream")));
        std::lock_guard g(I.mu);
        I.mirrors.emplace(_cfg.get("stream"), std::move(m));
        return {};
    }
    if (!_cfg.get("topic").empty())
        return fail(errc::invalid_argument,
                    "setting 'floe.ingest.sources.{}.topic' names one mirror topic, but the source has several "
                    "streams: use topic-prefix, or overrides.<stream>.topic",
                    _cfg.name);
    I.selector_text = _cfg.get("streams");
    if (I.selector_text != "*")
        I.selector = FLOE_TRY_CTX(topic_selector::parse(I.selector_text), "setting 'floe.ingest.sources.{}.streams'",
                                  _cfg.name);
    // Settings that every stream's mirror checks are checked once here, naming the setting.
    FLOE_TRY(seal_thresholds::of(_cfg));
    I.lister = std::thread([this] {
        ::pthread_setname_np(::pthread_self(), fmt::format("ingest:{}", _cfg.name).substr(0, 15).c_str());
        _impl->list_loop();
    });
    spdlog::info("ingest {}: jetstream source {} streams='{}' topic-prefix='{}' (streams listed every {} ms)",
                 _cfg.name, _cfg.get("url"), I.selector_text, _cfg.get("topic-prefix"), stream_list_interval_ms);
    return {};
}

void jetstream_source::stop() {
    auto& I = *_impl;
    I.stopping = true;
    if (I.lister.joinable()) I.lister.join();
    {
        std::lock_guard g(I.mu);
        for (auto& [n, m] : I.mirrors) m->stop();
    }
}

source_status jetstream_source::status() const {
    auto& I = *_impl;
    source_status out;
    out.name = _cfg.name;
    out.type = "jetstream";
    out.max_local_bytes = max_local_bytes_of(_cfg);
    out.state = "starting";
    bool any_error = false, any_paused = false, any_starting = false, any_stopped = false;
    std::lock_guard g(I.mu);
    for (auto& [n, m] : I.mirrors) {
        auto s = m->status();
        out.errors += s.errors;
        out.pauses += s.pauses;
        out.paused |= s.paused;
        if (s.state == "error") {
            any_error = true;
            if (out.last_error.empty() || s.last_error_ms > out.last_error_ms) {
                out.last_error = I.many ? fmt::format("stream {}: {}", n, s.last_error) : s.last_error;
                out.last_error_ms = s.last_error_ms;
            }
        }
        any_paused |= s.state == "paused";
        any_starting |= s.state == "starting";
        any_stopped |= s.state == "stopped";
        for (auto& p : s.partitions) out.partitions.push_back(p);
    }
    out.errors += I.list_errors;
    if (!I.list_error.empty()) {
        any_error = true;
        out.last_error = I.list_error;
    }
    if (any_error) out.state = "error";
    else if (any_paused) out.state = "paused";
    else if (any_starting || (I.many && !I.listed)) out.state = "starting";
    else if (any_stopped && !I.mirrors.empty()) out.state = "stopped";
    else out.state = "running";
    fill_local_positions(_logs, out);
    return out;
}

} // namespace floe::ingest
