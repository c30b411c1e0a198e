#include "ingest/kafka_source.h"

#include "base/log.h"
#include "base/clock.h"
#include "config/units.h"
#include "ingest/mirror_policy.h"
#include "log/batch_builder.h"

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <set>

namespace floe::ingest {

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return std::string(s);
}

// Records of one partition collected in one poll round, cut into batches of contiguous offsets.
struct pending_batches {
    log::batch_builder builder;
    byte_buffer bytes;
    bool open = false;
    int64_t last = -1;
    int64_t last_ts = -1;
    int64_t floor = -1; ///< the mirror's log end when the round's first record came (-1: not yet)
    size_t records = 0;
};

constexpr size_t max_batch_bytes = 512 * 1024;
constexpr int64_t metadata_interval_ms = 5000;
constexpr int64_t commit_interval_ms = 2000;

} // namespace

result<topic_selector> topic_selector::parse(std::string_view spec) {
    topic_selector t;
    if (spec.starts_with("^")) {
        try {
            t._re = std::make_shared<const std::regex>(std::string(spec));
        } catch (const std::regex_error& e) {
            return fail(errc::invalid_argument, "'{}' is not a valid regular expression: {}", spec, e.what());
        }
        return t;
    }
    size_t pos = 0;
    while (pos <= spec.size()) {
        auto comma = spec.find(',', pos);
        auto item = trim(spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos));
        if (!item.empty()) t._names.push_back(std::move(item));
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    if (t._names.empty()) return fail(errc::invalid_argument, "'{}' names no topic", spec);
    return t;
}

bool topic_selector::matches(std::string_view topic) const {
    if (!_re) return std::find(_names.begin(), _names.end(), topic) != _names.end();
    if (topic.starts_with("__")) return false;
    return std::regex_match(topic.begin(), topic.end(), *_re);
}

struct kafka_source::impl {
    kafka_source& self;
    explicit impl(kafka_source& s) : self(s) {}

    topic_selector selector;
    std::string prefix;
    std::string group_id;
    std::string mirror_of;
    rd_kafka_t* rk = nullptr;
    rd_kafka_queue_t* cq = nullptr; ///< the consumer group's queue (messages and rebalances)
    std::vector<rd_kafka_message_t*> msgs = std::vector<rd_kafka_message_t*>(1000);
    std::thread thread;
    std::atomic<bool> stopping{false};

    mutable std::mutex mu; // status
    source_status st;

    struct assigned {
        std::shared_ptr<log::local_partition> log;
        int64_t committed = -1; // last offset committed to the source group
        segment_sealer sealer = {}; // the active segment, for the seal thresholds
        bool at_end = false; // librdkafka reported the partition's end, nothing consumed since
    };
    std::map<std::pair<std::string, int32_t>, assigned> parts; // owned partitions; consumer thread only
    std::map<std::pair<std::string, int32_t>, pending_batches> pend; // this poll round's records
    std::vector<std::string> subscribed; // source topics the consumer is subscribed to
    int64_t last_metadata_ms = 0;
    int64_t last_commit_ms = 0;
    int64_t budget = default_max_local_bytes;
    bool paused = false;
    seal_thresholds limits;
    std::set<std::string> aligned; // mirror topics whose tiering was checked against remote-storage

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
        st.state = paused ? "paused" : "running";
        st.last_error.clear();
    }

    result<void> create_consumer() {
        char err[512];
        rd_kafka_conf_t* conf = rd_kafka_conf_new();
        auto set = [&](const std::string& k, const std::string& v, const std::string& setting) -> result<void> {
            if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
                rd_kafka_conf_destroy(conf);
                return fail(errc::invalid_argument, "invalid setting '{}': {}", setting, err);
            }
            return {};
        };
        auto key = [&](std::string_view k) { return fmt::format("floe.ingest.sources.{}.{}", self._cfg.name, k); };
        FLOE_TRY(set("bootstrap.servers", self._cfg.get("bootstrap-servers"), key("bootstrap-servers")));
        FLOE_TRY(set("group.id", group_id, key("group-id")));
        FLOE_TRY(set("enable.auto.commit", "false", key("group-id")));
        FLOE_TRY(set("enable.auto.offset.store", "false", key("group-id")));
        // End-of-partition events only for idle-seal (they say the source has nothing more).
        FLOE_TRY(set("enable.partition.eof", limits.idle_ms >= 0 ? "true" : "false", key("idle-seal")));
        FLOE_TRY(set("auto.offset.reset", self._cfg.get("start", "earliest"), key("start")));
        FLOE_TRY(set("client.id", "floe-ingest-" + self._cfg.name, key("group-id")));
        // A deep prefetch queue: librdkafka 2.0 postpones a partition's next fetch by 1 s each
        // time its queue is above queued.min.messages (100,000 by default), which capped a
        // mirror at about 100,000 records/s.
        FLOE_TRY(set("queued.min.messages", "1000000", key("group-id")));
        FLOE_TRY(set("queued.max.messages.kbytes", "262144", key("group-id")));
        // New source partitions and topics are seen within seconds (librdkafka's default is 5 min).
        FLOE_TRY(set("topic.metadata.refresh.interval.ms", std::to_string(metadata_interval_ms), key("group-id")));
        for (auto& [k, v] : self._cfg.values)
            if (k.starts_with("librdkafka.")) FLOE_TRY(set(k.substr(11), v, key(k)));
        rd_kafka_conf_set_opaque(conf, this);
        // librdkafka's own log lines ("%3|...|FAIL|...") go through Floe's logger, tagged with
        // the source, instead of raw to stderr (they would break --log-format json). Called from
        // librdkafka's threads while the handle lives, which the impl outlives.
        rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t* h, int level, const char* fac, const char* buf) {
            auto* me = static_cast<impl*>(rd_kafka_opaque(h));
            spdlog::log(level_from_syslog(level), "ingest {}: librdkafka {}: {}", me ? me->self._cfg.name : "?",
                        fac ? fac : "", buf ? buf : "");
        });
        rd_kafka_conf_set_rebalance_cb(conf, [](rd_kafka_t* h, rd_kafka_resp_err_t e,
                                                rd_kafka_topic_partition_list_t* l, void* opaque) {
            static_cast<impl*>(opaque)->rebalance(h, e, l);
        });
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
        if (!rk) {
            rd_kafka_conf_destroy(conf);
            return fail(errc::invalid_argument, "source {}: cannot create a Kafka consumer: {}", self._cfg.name, err);
        }
        rd_kafka_poll_set_consumer(rk);
        cq = rd_kafka_queue_get_consumer(rk);
        return {};
    }

    // Where an owned partition's mirror resumes: its own log end, or the table's committed
    // position when higher (another instance owned the partition and offloaded past this one's
    // mirror); 0 when both are 0 (then the group's committed offset, else `start`). The table is
    // only asked for mirrors that go to the lake; when it cannot be asked, the log end is used
    // (the lake writer drops rows below its committed position, so nothing lands twice).
    int64_t resume_offset(const std::string& local, int32_t p, log::local_partition& plog) {
        int64_t from = plog.log_end_offset()();
        if (plog.config().remote_storage_enable && self._hooks.lake_position) {
            if (auto t = self._hooks.lake_position(local, p); !t)
                set_error(fmt::format("reading the committed position of {}-{} from its table: {} (resuming from the "
                                      "mirror's end {})",
                                      local, p, t.error().message(), from));
            else if (*t > from) {
                spdlog::info("ingest {}: {}-{}: the table holds up to offset {}, past the mirror's end {}: resuming "
                             "there",
                             self._cfg.name, local, p, *t, from);
                from = *t;
            }
        }
        return from;
    }

    // The mirror topic of source topic `name` with at least `count` partitions (created, grown).
    result<void> ensure_mirror(const std::string& name, int32_t count) {
        auto local = prefix + name;
        auto info = self._logs.topic(local);
        if (!info) {
            FLOE_TRY_CTX(self._logs.create_topic(local, count, mirror_overrides(self._cfg), false, mirror_of),
                         "creating mirror topic {}", local);
            aligned.insert(local);
            spdlog::info("ingest {}: mirror topic {} created for {} ({} partitions{})", self._cfg.name, local, name,
                         count, mirrors_to_lake(self._cfg) ? ", to Iceberg" : ", local only");
            return {};
        }
        if (info->mirror_of != mirror_of) {
            return fail(errc::already_exists,
                        "topic {} exists and is not the mirror of source {} ({}); delete it or set a topic-prefix", local,
                        self._cfg.name, info->mirror_of.empty() ? "a plain topic" : "mirror of " + info->mirror_of);
        }
        if (!aligned.contains(local)) {
            FLOE_TRY(align_mirror_tiering(self._logs, *info, self._cfg));
            aligned.insert(local);
        }
        if (info->partitions < count) {
            FLOE_TRY_CTX(self._logs.create_partitions(local, count), "growing mirror topic {}", local);
            spdlog::info("ingest {}: mirror topic {} grown to {} partitions", self._cfg.name, local, count);
        }
        return {};
    }

    // Group rebalance (librdkafka calls it from a poll on this thread, or from close at stop).
    // Assigned partitions start at resume_offset(); revoked ones get what this round gathered
    // appended and their progress committed first, then are no longer written here: a mirror
    // partition is only written by the instance that currently owns the source partition.
    void rebalance(rd_kafka_t* h, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* l) {
        const bool cooperative = std::string_view(rd_kafka_rebalance_protocol(h)) == "COOPERATIVE";
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
            // Only partitions with a mirror are assigned; the others stay unconsumed (the error
            // says why) until the next rebalance.
            rd_kafka_topic_partition_list_t* ok = rd_kafka_topic_partition_list_new(l->cnt);
            for (int i = 0; i < l->cnt; ++i) {
                auto& tp = l->elems[i];
                std::string name = tp.topic;
                auto local = prefix + name;
                if (auto r = ensure_mirror(name, tp.partition + 1); !r) {
                    set_error(r.error().message());
                    continue;
                }
                auto plog = self._logs.partition(local, tp.partition);
                if (!plog) continue;
                int64_t from = resume_offset(local, tp.partition, *plog);
                rd_kafka_topic_partition_list_add(ok, name.c_str(), tp.partition)->offset =
                    from > 0 ? from : RD_KAFKA_OFFSET_STORED;
                partition_status ps;
                ps.source_topic = name;
                ps.local_topic = local;
                ps.partition = tp.partition;
                ps.local_end = plog->log_end_offset()();
                ps.offloaded = plog->offloaded_up_to()();
                {
                    std::lock_guard g(mu);
                    std::erase_if(st.partitions, [&](auto& x) { return x.source_topic == name && x.partition == tp.partition; });
                    st.partitions.push_back(ps);
                }
                parts[{name, tp.partition}] = assigned{plog, -1};
                forget_route();
                spdlog::info("ingest {}: owns {}-{}: mirroring into {}-{} from {}", self._cfg.name, name, tp.partition,
                             local, tp.partition,
                             from > 0 ? fmt::format("offset {}", from)
                                      : std::string("the group's committed offset or start=") +
                                            self._cfg.get("start", "earliest"));
            }
            if (cooperative) {
                if (auto* e = rd_kafka_incremental_assign(h, ok)) {
                    set_error(fmt::format("assign: {}", rd_kafka_error_string(e)));
                    rd_kafka_error_destroy(e);
                }
            } else if (auto e = rd_kafka_assign(h, ok); e != RD_KAFKA_RESP_ERR_NO_ERROR) {
                set_error(fmt::format("assign: {}", rd_kafka_err2str(e)));
            }
            if (paused) rd_kafka_pause_partitions(h, ok);
            rd_kafka_topic_partition_list_destroy(ok);
            return;
        }
        // Revoked (or lost, or an error): what was gathered goes to the mirror first.
        flush_pending();
        commit_progress(true);
        for (int i = 0; i < l->cnt; ++i) {
            std::pair<std::string, int32_t> k{l->elems[i].topic, l->elems[i].partition};
            if (parts.erase(k)) spdlog::info("ingest {}: no longer owns {}-{}", self._cfg.name, k.first, k.second);
            forget_route();
            std::lock_guard g(mu);
            std::erase_if(st.partitions, [&](auto& x) { return x.source_topic == k.first && x.partition == k.second; });
        }
        if (cooperative && err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
            if (auto* e = rd_kafka_incremental_unassign(h, l)) rd_kafka_error_destroy(e);
        } else {
            rd_kafka_assign(h, nullptr);
        }
    }

    // Finds the source topics, creates or grows their mirrors and subscribes the consumer group
    // to them (rebalance() then assigns this instance's partitions).
    void refresh_metadata() {
        const rd_kafka_metadata_t* md = nullptr;
        auto e = rd_kafka_metadata(rk, 1, nullptr, &md, 5000);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
            set_error(fmt::format("metadata from {}: {}", self._cfg.get("bootstrap-servers"), rd_kafka_err2str(e)));
            return;
        }
        std::vector<std::string> problems;
        std::vector<std::string> topics;
        size_t matched = 0;
        for (int i = 0; i < md->topic_cnt; ++i) {
            auto& t = md->topics[i];
            std::string name = t.topic;
            if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR || !selector.matches(name) || t.partition_cnt <= 0) continue;
            ++matched;
            if (auto r = ensure_mirror(name, t.partition_cnt); !r) {
                problems.push_back(r.error().message());
                continue;
            }
            topics.push_back(name);
        }
        rd_kafka_metadata_destroy(md);
        std::sort(topics.begin(), topics.end());
        if (!topics.empty() && topics != subscribed) {
            // The group splits the partitions of these topics between the Floe instances that
            // mirror this source; rebalance() receives this instance's share.
            rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(int(topics.size()));
            for (auto& t : topics) rd_kafka_topic_partition_list_add(l, t.c_str(), RD_KAFKA_PARTITION_UA);
            if (auto e2 = rd_kafka_subscribe(rk, l); e2 != RD_KAFKA_RESP_ERR_NO_ERROR)
                problems.push_back(fmt::format("subscribe: {}", rd_kafka_err2str(e2)));
            else {
                spdlog::info("ingest {}: subscribed to {} in group {}", self._cfg.name, fmt::join(topics, ","), group_id);
                subscribed = topics;
            }
            rd_kafka_topic_partition_list_destroy(l);
        }
        if (matched == 0)
            problems.push_back(fmt::format("no topic of {} matches topics={}", self._cfg.get("bootstrap-servers"),
                                           self._cfg.get("topics")));
        if (!problems.empty()) set_error(fmt::format("{}", fmt::join(problems, "; ")));
        else set_running();
    }

    // Backpressure: pauses every owned partition while the mirrors hold more bytes not yet in
    // Iceberg than the budget, resumes them once below (polling goes on: group membership).
    void apply_budget() {
        int64_t bytes = 0;
        for (auto& [k, a] : parts) bytes += unoffloaded_bytes(*a.log);
        const bool over = bytes > budget;
        if (over != paused) {
            rd_kafka_topic_partition_list_t* l = nullptr;
            if (rd_kafka_assignment(rk, &l) == RD_KAFKA_RESP_ERR_NO_ERROR && l) {
                if (over) rd_kafka_pause_partitions(rk, l);
                else rd_kafka_resume_partitions(rk, l);
                rd_kafka_topic_partition_list_destroy(l);
            }
            if (over)
                spdlog::warn("ingest {}: {} bytes not yet in Iceberg, above max-local-bytes={}: consumption paused "
                             "until the lake catches up",
                             self._cfg.name, bytes, budget);
            else spdlog::info("ingest {}: {} bytes not yet in Iceberg, consumption resumes", self._cfg.name, bytes);
        }
        std::lock_guard g(mu);
        if (over && !paused) ++st.pauses;
        paused = over;
        st.paused = over;
        st.local_bytes = bytes;
        if (over && st.state == "running") st.state = "paused";
        else if (!over && st.state == "paused") st.state = "running";
    }

    void refresh_status() {
        std::lock_guard g(mu);
        for (auto& ps : st.partitions) {
            auto it = parts.find({ps.source_topic, ps.partition});
            if (it == parts.end()) continue;
            ps.local_end = it->second.log->log_end_offset()();
            ps.offloaded = it->second.log->offloaded_up_to()();
            int64_t lo = -1, hi = -1;
            if (rd_kafka_get_watermark_offsets(rk, ps.source_topic.c_str(), ps.partition, &lo, &hi)
                    == RD_KAFKA_RESP_ERR_NO_ERROR
                && hi >= 0)
                ps.source_end = hi;
        }
    }

    // Commits progress to the source group, for monitoring: the mirror's durable end, or for a
    // mirror that goes to the lake its offloaded marker (what the table holds). Never read back
    // while the mirror or the table has data; with an empty mirror and an empty table it is
    // where a partition starts, and then everything below it is in the table already.
    void commit_progress(bool flush = false) {
        rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(int(parts.size()));
        for (auto& [k, a] : parts) {
            // A mirror that goes to the lake reports its offloaded marker (durable already), so
            // the periodic commit does not fsync on this thread: that stalls consumption, and
            // librdkafka 2.0 backs a partition's fetches off for 1 s whenever its queue is full
            // meanwhile. Other mirrors are fsynced first (their flush.ms may be unbounded).
            const bool tiered = a.log->config().remote_storage_enable;
            if (flush || !tiered)
                if (auto f = a.log->flush(); !f) {
                    set_error(fmt::format("fsync of {}-{}: {}", a.log->tp().topic, k.second, f.error().message()));
                    continue;
                }
            int64_t end = tiered ? a.log->offloaded_up_to()() : a.log->offsets().durable_end();
            if (end <= 0 || end == a.committed) continue;
            rd_kafka_topic_partition_list_add(l, k.first.c_str(), k.second)->offset = end;
            a.committed = end;
        }
        if (l->cnt > 0) rd_kafka_commit(rk, l, 1);
        rd_kafka_topic_partition_list_destroy(l);
    }

    // Appends what one poll round gathered, partition by partition.
    void flush_pending() {
        for (auto& [k, pb] : pend) {
            if (pb.open) {
                if (auto f = pb.builder.finish(pb.bytes); !f) {
                    set_error(fmt::format("building a batch for {}-{}: {}", k.first, k.second, f.error().message()));
                    pb.bytes.clear();
                }
                pb.open = false;
            }
            auto ait = parts.find(k);
            if (pb.bytes.empty() || ait == parts.end()) {
                pb.bytes.clear();
                pb.records = 0;
                continue;
            }
            auto& a = ait->second;
            auto r = a.log->mirror_append(pb.bytes);
            if (!r) {
                set_error(fmt::format("appending to {}-{}: {}", a.log->tp().topic, k.second, r.error().message()));
                // The consumer must not run ahead of the log: rewind to the mirror's end.
                seek_to_local_end(k, a);
            } else if (r->status != log::append_status::ok) {
                set_error(fmt::format("appending to {}-{}: {}: {}", a.log->tp().topic, k.second,
                                      log::to_string(r->status), r->message));
                seek_to_local_end(k, a);
            } else {
                if (limits.any())
                    a.sealer.appended(*a.log, int64_t(pb.records), system_clock_source::instance().now_ms());
                std::lock_guard g(mu);
                for (auto& ps : st.partitions)
                    if (ps.source_topic == k.first && ps.partition == k.second) {
                        ps.records += int64_t(pb.records);
                        ps.last_record_ts = pb.last_ts;
                        ps.local_end = r->last_offset() + 1;
                    }
            }
            pb.bytes.clear();
            pb.records = 0;
        }
    }

    // Seals each owned partition's active segment once a threshold (max-age, max-messages,
    // max-bytes) is reached, so the storage worker lands it in Iceberg.
    void seal_due() {
        if (!limits.any()) return;
        bool any = false;
        const auto now = system_clock_source::instance().now_ms();
        for (auto& [k, a] : parts) {
            auto r = a.sealer.maybe_seal(*a.log, limits, now, a.at_end);
            if (!r) {
                set_error(r.error().message());
                continue;
            }
            if (!*r) continue;
            any = true;
            spdlog::info("ingest {}: segment {} of {}-{} sealed by {} ({} messages, {} bytes)", self._cfg.name,
                         (*r)->id, a.log->tp().topic, k.second, (*r)->why, (*r)->messages, (*r)->bytes);
        }
        if (any && self._hooks.sealed) self._hooks.sealed();
    }

    void seek_to_local_end(const std::pair<std::string, int32_t>& k, assigned& a) {
        rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, k.first.c_str(), k.second)->offset = a.log->log_end_offset()();
        if (auto* e = rd_kafka_seek_partitions(rk, l, 5000)) rd_kafka_error_destroy(e);
        rd_kafka_topic_partition_list_destroy(l);
    }

    // The owned partition and this round's batches of a message's partition: one lookup per
    // run of messages of the same partition (a consumed batch is mostly one partition), not a
    // topic-name string and two map lookups per message. Forgotten whenever parts or pend change.
    struct route {
        rd_kafka_topic_t* rkt = nullptr;
        int32_t partition = -1;
        assigned* a = nullptr;
        pending_batches* pb = nullptr;
    } cached;
    void forget_route() { cached = {}; }

    // librdkafka's end of partition (idle-seal only): the consumer has fetched up to the source
    // partition's high watermark; cleared by the partition's next message.
    void reached_end(rd_kafka_message_t* m) {
        if (!m->rkt) return;
        auto it = parts.find({rd_kafka_topic_name(m->rkt), m->partition});
        if (it != parts.end()) it->second.at_end = true;
    }

    void add_message(rd_kafka_message_t* m) {
        if (m->rkt != cached.rkt || m->partition != cached.partition) {
            std::pair<std::string, int32_t> k{rd_kafka_topic_name(m->rkt), m->partition};
            auto ait = parts.find(k);
            cached = {m->rkt, m->partition, ait == parts.end() ? nullptr : &ait->second,
                      ait == parts.end() ? nullptr : &pend[k]};
        }
        if (!cached.a) return;
        cached.a->at_end = false;
        auto& pb = *cached.pb;
        int64_t off = m->offset;
        // Never below what the mirror (or this round) already holds: a replay adds nothing.
        if (pb.floor < 0) pb.floor = cached.a->log->log_end_offset()(); // only this thread appends
        int64_t floor = std::max(pb.floor, pb.last + 1);
        if (off < floor) return;
        rd_kafka_timestamp_type_t tst;
        int64_t ts = rd_kafka_message_timestamp(m, &tst);
        if (ts < 0) ts = system_clock_source::instance().now_ms();
        std::vector<std::string> hstore;
        std::vector<log::batch_builder::header> hdrs;
        rd_kafka_headers_t* h = nullptr;
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h) {
            size_t n = rd_kafka_header_cnt(h);
            hstore.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const char* name;
                const void* val;
                size_t size;
                if (rd_kafka_header_get_all(h, i, &name, &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) break;
                hstore.emplace_back(name);
                hdrs.push_back({hstore.back(), val ? std::optional<std::string_view>(std::string_view(
                                                        static_cast<const char*>(val), size))
                                                    : std::nullopt});
            }
            // hstore never reallocates after reserve: the views stay valid.
        }
        bool cut = pb.open && (off != pb.last + 1 || pb.builder.records_bytes() >= max_batch_bytes);
        if (cut) {
            if (auto f = pb.builder.finish(pb.bytes); !f)
                set_error(fmt::format("building a batch for {}-{}: {}", rd_kafka_topic_name(m->rkt), m->partition,
                                      f.error().message()));
            pb.open = false;
        }
        if (!pb.open) {
            pb.builder.begin(off);
            pb.open = true;
        }
        std::optional<std::string_view> key, value;
        if (m->key) key = std::string_view(static_cast<const char*>(m->key), m->key_len);
        if (m->payload) value = std::string_view(static_cast<const char*>(m->payload), m->len);
        pb.builder.add(off, ts, key, value, hdrs);
        pb.last = off;
        pb.last_ts = ts;
        ++pb.records;
    }

    void run() {
        while (!stopping.load()) {
            auto now = system_clock_source::instance().now_ms();
            if (now - last_metadata_ms >= metadata_interval_ms) {
                last_metadata_ms = now;
                refresh_metadata();
            }
            pend.clear();
            forget_route();
            size_t bytes = 0;
            auto round_end = system_clock_source::instance().now_ms() + 100;
            while (!stopping.load() && bytes < 4 * max_batch_bytes) {
                auto left = round_end - system_clock_source::instance().now_ms();
                if (left <= 0) break;
                // Messages in batches from the consumer queue: one queue lock and wake-up per
                // batch, not per message. Rebalances are still served here (by rebalance()).
                ssize_t n = rd_kafka_consume_batch_queue(cq, int(left), msgs.data(), msgs.size());
                for (ssize_t i = 0; i < n; ++i) {
                    rd_kafka_message_t* m = msgs[size_t(i)];
                    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        reached_end(m);
                    } else if (m->err) {
                        set_error(fmt::format("consuming {}: {}",
                                              m->rkt ? rd_kafka_topic_name(m->rkt) : self._cfg.get("bootstrap-servers"),
                                              rd_kafka_message_errstr(m)));
                    } else {
                        add_message(m);
                        bytes += m->len + m->key_len;
                    }
                    rd_kafka_message_destroy(m);
                }
            }
            flush_pending();
            seal_due();
            apply_budget();
            if (system_clock_source::instance().now_ms() - last_commit_ms >= commit_interval_ms) {
                last_commit_ms = system_clock_source::instance().now_ms();
                commit_progress();
                refresh_status();
            }
        }
        // Durable before the consumer goes: the mirror's end is the resume point.
        commit_progress(true);
    }
};

kafka_source::kafka_source(config::settings::ingest_source cfg, log::local_tier& logs, ingest_hooks hooks)
    : _cfg(std::move(cfg)), _logs(logs), _hooks(std::move(hooks)), _impl(std::make_unique<impl>(*this)) {
    _impl->st.name = _cfg.name;
    _impl->st.type = "kafka";
    _impl->st.max_local_bytes = max_local_bytes_of(_cfg);
    _impl->st.state = "stopped";
}

kafka_source::~kafka_source() { stop(); }

result<void> kafka_source::start() {
    auto& I = *_impl;
    I.selector = FLOE_TRY_CTX(topic_selector::parse(_cfg.get("topics")), "setting 'floe.ingest.sources.{}.topics'",
                              _cfg.name);
    I.prefix = _cfg.get("topic-prefix");
    I.group_id = _cfg.get("group-id", "floe-ingest-" + _cfg.name);
    I.mirror_of = "kafka:" + _cfg.name;
    I.budget = max_local_bytes_of(_cfg);
    I.limits = FLOE_TRY(seal_thresholds::of(_cfg));
    FLOE_TRY(I.create_consumer());
    {
        std::lock_guard g(I.mu);
        I.st.state = "starting";
    }
    I.thread = std::thread([this] {
        // Named for profiles and top -H (15 characters at most).
        ::pthread_setname_np(::pthread_self(), fmt::format("ingest:{}", _cfg.name).substr(0, 15).c_str());
        _impl->run();
    });
    spdlog::info("ingest {}: kafka source {} topics={} group={} remote-storage={} max-age={} max-messages={} "
                 "max-bytes={} idle-seal={}",
                 _cfg.name, _cfg.get("bootstrap-servers"), _cfg.get("topics"), I.group_id, mirrors_to_lake(_cfg),
                 _cfg.get("max-age", "-"), _cfg.get("max-messages", "-"), _cfg.get("max-bytes", "-"),
                 _cfg.get("idle-seal", "-"));
    return {};
}

void kafka_source::stop() {
    auto& I = *_impl;
    if (!I.thread.joinable()) return;
    I.stopping = true;
    I.thread.join();
    rd_kafka_queue_destroy(I.cq); // before the close (librdkafka requires it)
    I.cq = nullptr;
    rd_kafka_consumer_close(I.rk);
    rd_kafka_destroy(I.rk);
    I.rk = nullptr;
    std::lock_guard g(I.mu);
    I.st.state = "stopped";
}

source_status kafka_source::status() const {
    source_status out;
    {
        std::lock_guard g(_impl->mu);
        out = _impl->st;
    }
    fill_local_positions(_logs, out);
    return out;
}

void fill_local_positions(const log::local_tier& logs, source_status& st) {
    int64_t bytes = 0;
    for (auto& ps : st.partitions)
        if (auto p = logs.partition(ps.local_topic, ps.partition)) {
            ps.local_end = p->log_end_offset()();
            ps.offloaded = p->offloaded_up_to()();
            bytes += unoffloaded_bytes(*p);
        }
    st.local_bytes = bytes;
}

int64_t max_local_bytes_of(const config::settings::ingest_source& cfg) {
    auto v = cfg.get("max-local-bytes");
    if (v.empty()) return default_max_local_bytes;
    auto r = config::parse_size(v);
    return r && *r > 0 ? *r : default_max_local_bytes;
}

int64_t unoffloaded_bytes(const log::local_partition& p) {
    if (!p.config().remote_storage_enable) return 0;
    const int64_t marker = p.offloaded_up_to()();
    int64_t n = 0;
    for (auto& seg : p.segments())
        if (!seg.empty() && seg.next_offset() > marker) n += int64_t(seg.size_bytes);
    return n;
}

int64_t lag_records(const partition_status& p) noexcept {
    if (p.source_end < 0) return -1;
    return std::max<int64_t>(0, p.source_end - p.local_end);
}

double lag_seconds(const partition_status& p, int64_t now) noexcept {
    auto lag = lag_records(p);
    if (lag == 0) return 0;
    if (p.last_record_ts < 0) return -1;
    return double(std::max<int64_t>(0, now - p.last_record_ts)) / 1000.0;
}

} // namespace floe::ingest
