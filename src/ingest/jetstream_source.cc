#include "ingest/jetstream_source.h"

#include "config/units.h"
#include "ingest/mirror_policy.h"
#include "log/batch_builder.h"

#include <nats/nats.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace floe::ingest {

namespace {
int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}
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

struct jetstream_source::impl {
    jetstream_source& self;
    explicit impl(jetstream_source& s) : self(s) {}

    std::string topic, stream, subject, mirror_of;
    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    natsSubscription* sub = nullptr;
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
    int64_t budget = 0;
    int64_t purged_to = 0;           // offsets below this were purged from the stream
    int64_t stream_last = 0;         // the stream's last sequence, last seen
    int64_t last_purge_ms = 0;
    log::batch_builder builder; // reused by append(): keeps its buffers
    byte_buffer batch_bytes;
    std::map<int64_t, std::string> pending_acks; // work-queue: offset -> reply subject, not yet acked
    bool paused = false;

    mutable std::mutex mu;
    source_status st;

    void set_error(std::string msg) {
        std::lock_guard g(mu);
        if (st.last_error != msg) {
            spdlog::warn("ingest {}: {}", st.name, msg);
            ++st.errors;
        }
        st.last_error = std::move(msg);
        st.last_error_ms = now_ms();
        st.state = "error";
    }
    void set_running() {
        std::lock_guard g(mu);
        st.state = "running";
        st.last_error.clear();
    }

    void disconnect() {
        if (sub) natsSubscription_Destroy(sub);
        sub = nullptr;
        if (js) jsCtx_Destroy(js);
        js = nullptr;
        if (nc) natsConnection_Destroy(nc);
        nc = nullptr;
    }

    result<void> connect() {
        natsOptions* o = nullptr;
        auto fin = [&](natsStatus s, std::string_view what) -> result<void> {
            if (o) natsOptions_Destroy(o);
            return fail(errc::unavailable, "{} {}: {}", what, self._cfg.get("url"), natsStatus_GetText(s));
        };
        natsStatus s = natsOptions_Create(&o);
        if (s == NATS_OK) s = natsOptions_SetURL(o, self._cfg.get("url").c_str());
        if (s == NATS_OK && !self._cfg.get("user").empty())
            s = natsOptions_SetUserInfo(o, self._cfg.get("user").c_str(), self._cfg.get("password").c_str());
        if (s == NATS_OK && !self._cfg.get("token").empty()) s = natsOptions_SetToken(o, self._cfg.get("token").c_str());
        if (s == NATS_OK && !self._cfg.get("creds-file").empty())
            s = natsOptions_SetUserCredentialsFromFiles(o, self._cfg.get("creds-file").c_str(), nullptr);
        if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, -1);
        // libnats' default asynchronous error handler (a slow consumer, a server error on the
        // connection) prints raw lines to stderr; through Floe's logger they stay one JSON
        // object a line with --log-format json. Called on libnats' thread; the impl outlives
        // the connection (disconnect() runs before it goes).
        if (s == NATS_OK)
            s = natsOptions_SetErrorHandler(
                o,
                [](natsConnection* c, natsSubscription*, natsStatus err, void* closure) {
                    const char* last = nullptr;
                    if (c) natsConnection_GetLastError(c, &last);
                    spdlog::warn("ingest {}: nats: {}{}{}", static_cast<impl*>(closure)->self._cfg.name,
                                 natsStatus_GetText(err), last && *last ? ": " : "", last ? last : "");
                },
                this);
        if (s != NATS_OK) return fin(s, "options for");
        s = natsConnection_Connect(&nc, o);
        if (s != NATS_OK) return fin(s, "connecting to");
        natsOptions_Destroy(o);
        o = nullptr;
        s = natsConnection_JetStream(&js, nc, nullptr);
        if (s != NATS_OK) return fin(s, "JetStream context on");
        return {};
    }

    // The stream's last sequence (as an offset end: last seq), or an error naming the stream.
    result<int64_t> stream_end(std::string* only_subject = nullptr) {
        jsStreamInfo* si = nullptr;
        jsErrCode ec = jsErrCode(0);
        natsStatus s = js_GetStreamInfo(&si, js, stream.c_str(), nullptr, &ec);
        if (s != NATS_OK)
            return fail(errc::unavailable, "stream {} on {}: {} (JetStream error {})", stream, self._cfg.get("url"),
                        natsStatus_GetText(s), int(ec));
        int64_t last = int64_t(si->State.LastSeq);
        stream_last = last;
        if (only_subject && si->Config && si->Config->SubjectsLen == 1) *only_subject = si->Config->Subjects[0];
        if (si->Config) workqueue = si->Config->Retention == js_WorkQueuePolicy;
        jsStreamInfo_Destroy(si);
        return last;
    }

    result<void> subscribe() {
        if (sub) natsSubscription_Destroy(sub);
        sub = nullptr;
        std::string only;
        FLOE_TRY(stream_end(&only));
        std::string subj = subject.empty() ? only : subject;
        if (subj.empty())
            return fail(errc::invalid_argument,
                        "stream {} has several subjects: set floe.ingest.sources.{}.filter-subject", stream,
                        self._cfg.name);
        if (workqueue && !offload)
            return fail(errc::invalid_argument,
                        "stream {} is a work queue: acknowledging removes messages, so it can only be mirrored "
                        "with floe.ingest.sources.{}.mode=offload",
                        stream, self._cfg.name);
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream.c_str();
        int64_t end = plog->log_end_offset()();
        jsErrCode ec = jsErrCode(0);
        natsStatus s = NATS_OK;
        std::string durable = "floe-" + self._cfg.name;
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
            s = js_PullSubscribe(&sub, js, subj.c_str(), durable.c_str(), nullptr, &so, &ec);
        } else {
            so.Config.AckPolicy = js_AckAll;
            so.Config.MaxAckPending = 20000;
            if (end > 0) {
                so.Config.DeliverPolicy = js_DeliverByStartSequence;
                so.Config.OptStartSeq = uint64_t(end) + 1;
            } else {
                so.Config.DeliverPolicy = js_DeliverAll;
            }
            s = js_PullSubscribe(&sub, js, subj.c_str(), nullptr, nullptr, &so, &ec);
        }
        if (s != NATS_OK)
            return fail(errc::unavailable, "pull consumer on stream {} subject {}: {} (JetStream error {})", stream,
                        subj, natsStatus_GetText(s), int(ec));
        early_timeouts = 0;
        purged_to = 0; // purge again after any reconnection: a restarted server may have lost one
        if (workqueue)
            spdlog::info("ingest {}: mirroring work queue {} ({}) into {}-0 from its first message not acked (durable "
                         "consumer {}; the mirror holds up to sequence {})",
                         self._cfg.name, stream, subj, topic, durable, end);
        else
            spdlog::info("ingest {}: mirroring stream {} ({}) into {}-0 from sequence {}", self._cfg.name, stream, subj,
                         topic, end > 0 ? end + 1 : 1);
        last_progress_ms = now_ms();
        return {};
    }

    result<void> ensure_topic() {
        auto info = self._logs.topic(topic);
        // Mirrors go to the lake unless the source says remote-storage=false (config refuses
        // that with mode=offload, which only removes what Iceberg holds).
        if (!info)
            info = FLOE_TRY_CTX(self._logs.create_topic(topic, 1, mirror_overrides(self._cfg), false, mirror_of),
                                "creating mirror topic {}", topic);
        else if (info->mirror_of != mirror_of)
            return fail(errc::already_exists, "topic {} exists and is not the mirror of source {}", topic, self._cfg.name);
        else
            info = FLOE_TRY(align_mirror_tiering(self._logs, *info, self._cfg));
        if (offload && !info->config.remote_storage_enable)
            return fail(errc::invalid_argument,
                        "mode=offload needs the mirror topic {} to go to Iceberg: set its remote.storage.enable=true",
                        topic);
        plog = self._logs.partition(topic, 0);
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

    // Appends one fetched list at the messages' sequences - 1, then acks the last one.
    result<void> append(natsMsgList& list) {
        auto& b = builder;
        auto& bytes = batch_bytes;
        bytes.clear();
        bool open = false;
        int64_t last = -1, last_ts = -1, n = 0;
        const int64_t floor = plog->log_end_offset()();
        natsMsg* last_msg = nullptr;
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
            last_msg = m;
            if (workqueue)
                if (const char* reply = natsMsg_GetReply(m)) pending_acks[off] = reply;
            if (off < floor || off <= last) continue;
            std::vector<std::string> store;
            std::vector<log::batch_builder::header> hdrs;
            const char** keys = nullptr;
            int nk = 0;
            if (natsMsgHeader_Keys(m, &keys, &nk) == NATS_OK) {
                size_t total = 0;
                std::vector<std::pair<const char*, std::vector<std::string>>> kv;
                for (int k = 0; k < nk; ++k) {
                    const char** vals = nullptr;
                    int nv = 0;
                    std::vector<std::string> vs;
                    if (natsMsgHeader_Values(m, keys[k], &vals, &nv) == NATS_OK) {
                        for (int v = 0; v < nv; ++v) vs.emplace_back(vals[v]);
                        free(static_cast<void*>(vals));
                    }
                    total += vs.size();
                    kv.emplace_back(keys[k], std::move(vs));
                }
                store.reserve(total * 2);
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
            b.add(off, ts, subj, data, hdrs);
            last = off;
            last_ts = ts;
            ++n;
        }
        if (open) FLOE_TRY(b.finish(bytes));
        if (!bytes.empty()) {
            auto r = FLOE_TRY(plog->mirror_append(bytes));
            if (r.status != log::append_status::ok)
                return fail(errc::internal, "appending to {}-0: {}: {}", topic, log::to_string(r.status), r.message);
            if (limits.any()) sealer.appended(*plog, n, now_ms());
            std::lock_guard g(mu);
            auto& ps = st.partitions.front();
            ps.records += n;
            ps.last_record_ts = last_ts;
            ps.local_end = last + 1;
            ps.source_end = std::max(ps.source_end, last + 1);
            last_progress_ms = now_ms();
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
        auto r = sealer.maybe_seal(*plog, limits, now);
        if (!r) {
            set_error(r.error().message());
            return;
        }
        if (!*r) return;
        spdlog::info("ingest {}: segment {} of {}-0 sealed by {} ({} messages, {} bytes)", self._cfg.name, (*r)->id,
                     topic, (*r)->why, (*r)->messages, (*r)->bytes);
        if (self._hooks.sealed) self._hooks.sealed();
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
        spdlog::debug("ingest {}: stream {} purged below sequence {} (committed to Iceberg)", self._cfg.name, stream,
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
                         self._cfg.name, bytes, topic, budget);
            ++st.pauses;
        } else if (!over && paused) {
            spdlog::info("ingest {}: {} bytes not yet in Iceberg, consumption resumes", self._cfg.name, bytes);
        }
        paused = over;
        st.paused = over;
        if (over) st.state = "paused";
        else if (st.state == "paused") st.state = "running";
        return over;
    }

    // Shorter fetches with a short max-age, so a segment is sealed close to its age.
    int64_t fetch_timeout() const {
        return limits.max_age_ms > 0 ? std::clamp<int64_t>(limits.max_age_ms / 4, 50, fetch_timeout_ms)
                                     : fetch_timeout_ms;
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
            maybe_seal(now_ms());
            settle_offload(now_ms());
            if (over_budget()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(paused_sleep_ms));
                last_progress_ms = now_ms(); // not a stall: nothing was asked for
            } else {
                natsMsgList list{};
                jsErrCode ec = jsErrCode(0);
                const int64_t t0 = now_ms();
                natsStatus s = natsSubscription_Fetch(&list, sub, fetch_batch, fetch_timeout(), &ec);
                if (s == NATS_OK) {
                    early_timeouts = 0;
                    auto r = append(list);
                    natsMsgList_Destroy(&list);
                    if (!r) {
                        set_error(r.error().message());
                        // Start again at the mirror's end: nothing is skipped or doubled.
                        natsSubscription_Destroy(sub);
                        sub = nullptr;
                        continue;
                    }
                    if (!paused) set_running();
                } else if (s == NATS_TIMEOUT) {
                    if (now_ms() - t0 >= fetch_timeout() / 2) early_timeouts = 0; // a real timeout
                    else if (++early_timeouts >= early_timeouts_before_resubscribe) {
                        spdlog::info("ingest {}: {} fetches in a row ended at once with a timeout (stale pull "
                                     "statuses, libnats < 3.6.1): recreating the pull consumer",
                                     self._cfg.name, early_timeouts);
                        natsSubscription_Destroy(sub);
                        sub = nullptr;
                        continue;
                    }
                } else {
                    natsMsgList_Destroy(&list);
                    set_error(fmt::format("fetching from stream {}: {}", stream, natsStatus_GetText(s)));
                    natsSubscription_Destroy(sub);
                    sub = nullptr;
                    continue;
                }
            }
            auto now = now_ms();
            if (now - last_info_ms >= info_interval_ms) {
                last_info_ms = now;
                auto end = stream_end();
                if (!end) {
                    // Subscribe again once the stream answers (and purge again: a server that
                    // restarted may have lost a purge it acknowledged).
                    set_error(end.error().message());
                    natsSubscription_Destroy(sub);
                    sub = nullptr;
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
                                 self._cfg.name, stream, *end, local, now - last_progress_ms);
                    natsSubscription_Destroy(sub);
                    sub = nullptr;
                }
            }
        }
        if (plog) (void)plog->flush();
    }
};

jetstream_source::jetstream_source(config::settings::ingest_source cfg, log::local_tier& logs, ingest_hooks hooks)
    : _cfg(std::move(cfg)), _logs(logs), _hooks(std::move(hooks)), _impl(std::make_unique<impl>(*this)) {
    _impl->st.name = _cfg.name;
    _impl->st.type = "jetstream";
    _impl->st.max_local_bytes = max_local_bytes_of(_cfg);
    _impl->st.state = "stopped";
}

jetstream_source::~jetstream_source() { stop(); }

result<void> jetstream_source::start() {
    auto& I = *_impl;
    I.stream = _cfg.get("stream");
    I.topic = _cfg.get("topic", I.stream);
    I.subject = _cfg.get("filter-subject");
    I.mirror_of = "jetstream:" + _cfg.name;
    I.offload = _cfg.get("mode", "duplicate") == "offload";
    I.budget = max_local_bytes_of(_cfg);
    I.limits = FLOE_TRY(seal_thresholds::of(_cfg));
    FLOE_TRY_CTX(log::local_tier::validate_topic_name(I.topic), "setting 'floe.ingest.sources.{}.topic'", _cfg.name);
    {
        std::lock_guard g(I.mu);
        I.st.state = "starting";
    }
    I.thread = std::thread([this] {
        // Named for profiles and top -H (15 characters at most).
        ::pthread_setname_np(::pthread_self(), fmt::format("ingest:{}", _cfg.name).substr(0, 15).c_str());
        _impl->run();
    });
    spdlog::info("ingest {}: jetstream source {} stream={} topic={} mode={} max-age={} max-messages={} max-bytes={} "
                 "max-local-bytes={}",
                 _cfg.name, _cfg.get("url"), I.stream, I.topic, I.offload ? "offload" : "duplicate",
                 _cfg.get("max-age", "-"), _cfg.get("max-messages", "-"), _cfg.get("max-bytes", "-"), I.budget);
    return {};
}

void jetstream_source::stop() {
    auto& I = *_impl;
    if (!I.thread.joinable()) return;
    I.stopping = true;
    I.thread.join();
    I.disconnect();
    std::lock_guard g(I.mu);
    I.st.state = "stopped";
}

source_status jetstream_source::status() const {
    source_status out;
    {
        std::lock_guard g(_impl->mu);
        out = _impl->st;
    }
    fill_local_positions(_logs, out);
    return out;
}

} // namespace floe::ingest
