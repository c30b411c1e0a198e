#include "ingest/jetstream_source.h"

#include "log/batch_builder.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
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
} // namespace

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
        if (only_subject && si->Config && si->Config->SubjectsLen == 1) *only_subject = si->Config->Subjects[0];
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
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream.c_str();
        so.Config.AckPolicy = js_AckAll;
        so.Config.MaxAckPending = 20000;
        int64_t end = plog->log_end_offset()();
        if (end > 0) {
            so.Config.DeliverPolicy = js_DeliverByStartSequence;
            so.Config.OptStartSeq = uint64_t(end) + 1;
        } else {
            so.Config.DeliverPolicy = js_DeliverAll;
        }
        jsErrCode ec = jsErrCode(0);
        natsStatus s = js_PullSubscribe(&sub, js, subj.c_str(), nullptr, nullptr, &so, &ec);
        if (s != NATS_OK)
            return fail(errc::unavailable, "pull consumer on stream {} subject {}: {} (JetStream error {})", stream,
                        subj, natsStatus_GetText(s), int(ec));
        spdlog::info("ingest {}: mirroring stream {} ({}) into {}-0 from sequence {}", self._cfg.name, stream, subj,
                     topic, end > 0 ? end + 1 : 1);
        last_progress_ms = now_ms();
        return {};
    }

    result<void> ensure_topic() {
        auto info = self._logs.topic(topic);
        if (!info) info = FLOE_TRY_CTX(self._logs.create_topic(topic, 1, {}, false, mirror_of), "creating mirror topic {}", topic);
        else if (info->mirror_of != mirror_of)
            return fail(errc::already_exists, "topic {} exists and is not the mirror of source {}", topic, self._cfg.name);
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
        log::batch_builder b;
        byte_buffer bytes;
        bool open = false;
        int64_t last = -1, last_ts = -1, n = 0;
        const int64_t floor = plog->log_end_offset()();
        natsMsg* last_msg = nullptr;
        for (int i = 0; i < list.Count; ++i) {
            natsMsg* m = list.Msgs[i];
            jsMsgMetaData* md = nullptr;
            if (natsMsg_GetMetaData(&md, m) != NATS_OK) continue; // not a stream message (status)
            int64_t off = int64_t(md->Sequence.Stream) - 1;
            int64_t ts = md->Timestamp / 1'000'000;
            jsMsgMetaData_Destroy(md);
            last_msg = m;
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
            std::lock_guard g(mu);
            auto& ps = st.partitions.front();
            ps.records += n;
            ps.last_record_ts = last_ts;
            ps.local_end = last + 1;
            ps.source_end = std::max(ps.source_end, last + 1);
            last_progress_ms = now_ms();
        }
        // Acknowledged only once appended (duplicate mode keeps the messages in NATS anyway).
        if (last_msg) natsMsg_Ack(last_msg, nullptr);
        return {};
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
            natsMsgList list{};
            jsErrCode ec = jsErrCode(0);
            natsStatus s = natsSubscription_Fetch(&list, sub, fetch_batch, fetch_timeout_ms, &ec);
            if (s == NATS_OK) {
                auto r = append(list);
                natsMsgList_Destroy(&list);
                if (!r) {
                    set_error(r.error().message());
                    // Start again at the mirror's end: nothing is skipped or doubled.
                    natsSubscription_Destroy(sub);
                    sub = nullptr;
                    continue;
                }
                set_running();
            } else if (s != NATS_TIMEOUT) {
                natsMsgList_Destroy(&list);
                set_error(fmt::format("fetching from stream {}: {}", stream, natsStatus_GetText(s)));
                natsSubscription_Destroy(sub);
                sub = nullptr;
                continue;
            }
            auto now = now_ms();
            if (now - last_info_ms >= info_interval_ms) {
                last_info_ms = now;
                auto end = stream_end();
                if (!end) {
                    set_error(end.error().message());
                    continue;
                }
                int64_t local = plog->log_end_offset()();
                {
                    std::lock_guard g(mu);
                    st.partitions.front().source_end = *end;
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

jetstream_source::jetstream_source(config::settings::ingest_source cfg, log::local_tier& logs)
    : _cfg(std::move(cfg)), _logs(logs), _impl(std::make_unique<impl>(*this)) {
    _impl->st.name = _cfg.name;
    _impl->st.type = "jetstream";
    _impl->st.state = "stopped";
}

jetstream_source::~jetstream_source() { stop(); }

result<void> jetstream_source::start() {
    auto& I = *_impl;
    I.stream = _cfg.get("stream");
    I.topic = _cfg.get("topic", I.stream);
    I.subject = _cfg.get("filter-subject");
    I.mirror_of = "jetstream:" + _cfg.name;
    FLOE_TRY_CTX(log::local_tier::validate_topic_name(I.topic), "setting 'floe.ingest.sources.{}.topic'", _cfg.name);
    {
        std::lock_guard g(I.mu);
        I.st.state = "starting";
    }
    I.thread = std::thread([this] { _impl->run(); });
    spdlog::info("ingest {}: jetstream source {} stream={} topic={} mode=duplicate", _cfg.name, _cfg.get("url"),
                 I.stream, I.topic);
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
