#include "kafka/txn_coordinator.h"

#include "kafka/handlers.h"
#include "kafka/protocol.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace floe::kafka {

namespace {

constexpr uint8_t rec_txn = 1; // the whole state of one transactional id

int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

byte_buffer encode_txn(const txn_metadata& m) {
    byte_buffer b;
    kwriter w(b, false);
    w.i8(int8_t(rec_txn));
    w.str(m.transactional_id);
    w.i64(m.producer_id);
    w.i16(m.producer_epoch);
    w.i32(m.timeout_ms);
    w.i8(int8_t(m.status));
    w.i64(m.start_ms);
    w.i64(m.update_ms);
    w.i32(int32_t(m.partitions.size()));
    for (auto& tp : m.partitions) {
        w.str(tp.topic);
        w.i32(tp.partition);
    }
    w.i32(int32_t(m.groups.size()));
    for (auto& g : m.groups) w.str(g);
    w.i32(int32_t(m.pending_offsets.size()));
    for (auto& [g, entries] : m.pending_offsets) {
        w.str(g);
        w.i32(int32_t(entries.size()));
        for (auto& [k, c] : entries) {
            w.str(k.first);
            w.i32(k.second);
            w.i64(c.offset);
            w.i32(c.leader_epoch);
            w.nstr(c.metadata ? std::optional<std::string_view>(*c.metadata) : std::nullopt);
        }
    }
    w.i16(m.last_producer_epoch);
    // Since the markers were left to the partitions' group commit: entries not known durable.
    // A record without this trailer (older files) has none.
    int32_t n = 0;
    for (auto& f : m.markers) n += f.durable() ? 0 : 1;
    w.i32(n);
    for (auto& f : m.markers) {
        if (f.durable()) continue;
        w.i8(f.commit ? 1 : 0);
        w.i64(f.producer_id);
        w.i16(f.producer_epoch);
        w.i32(int32_t(f.offsets.size()));
        for (auto& [tp, off] : f.offsets) {
            w.str(tp.topic);
            w.i32(tp.partition);
            w.i64(off);
        }
    }
    return b;
}

result<txn_metadata> decode_txn(bytes_view payload) {
    kreader r(payload, false);
    if (uint8_t(FLOE_TRY(r.i8())) != rec_txn) return fail(errc::corrupt, "record type");
    txn_metadata m;
    m.transactional_id = std::string(FLOE_TRY(r.str()));
    m.producer_id = FLOE_TRY(r.i64());
    m.producer_epoch = FLOE_TRY(r.i16());
    m.timeout_ms = FLOE_TRY(r.i32());
    auto st = FLOE_TRY(r.i8());
    if (st < 0 || st > int8_t(txn_status::complete_abort)) return fail(errc::corrupt, "state {}", st);
    m.status = txn_status(st);
    m.start_ms = FLOE_TRY(r.i64());
    m.update_ms = FLOE_TRY(r.i64());
    int32_t n = FLOE_TRY(r.i32());
    if (n < 0 || size_t(n) > r.remaining() / 6) return fail(errc::corrupt, "partitions");
    for (int32_t i = 0; i < n; ++i) {
        log::topic_partition tp;
        tp.topic = std::string(FLOE_TRY(r.str()));
        tp.partition = FLOE_TRY(r.i32());
        m.partitions.insert(std::move(tp));
    }
    n = FLOE_TRY(r.i32());
    if (n < 0 || size_t(n) > r.remaining() / 2) return fail(errc::corrupt, "groups");
    for (int32_t i = 0; i < n; ++i) m.groups.insert(std::string(FLOE_TRY(r.str())));
    n = FLOE_TRY(r.i32());
    if (n < 0 || size_t(n) > r.remaining() / 6) return fail(errc::corrupt, "pending groups");
    for (int32_t i = 0; i < n; ++i) {
        auto& g = m.pending_offsets[std::string(FLOE_TRY(r.str()))];
        int32_t k = FLOE_TRY(r.i32());
        if (k < 0 || size_t(k) > r.remaining() / 20) return fail(errc::corrupt, "pending offsets");
        for (int32_t j = 0; j < k; ++j) {
            offset_store::key key;
            key.first = std::string(FLOE_TRY(r.str()));
            key.second = FLOE_TRY(r.i32());
            offset_store::committed c;
            c.offset = FLOE_TRY(r.i64());
            c.leader_epoch = FLOE_TRY(r.i32());
            if (auto md = FLOE_TRY(r.nstr())) c.metadata = std::string(*md);
            g[std::move(key)] = std::move(c);
        }
    }
    m.last_producer_epoch = FLOE_TRY(r.i16());
    if (r.remaining() != 0) {
        n = FLOE_TRY(r.i32());
        if (n < 0 || size_t(n) > r.remaining() / 15) return fail(errc::corrupt, "markers");
        for (int32_t i = 0; i < n; ++i) {
            auto& f = m.markers.emplace_back();
            f.commit = FLOE_TRY(r.i8()) != 0;
            f.producer_id = FLOE_TRY(r.i64());
            f.producer_epoch = FLOE_TRY(r.i16());
            int32_t k = FLOE_TRY(r.i32());
            if (k < 0 || size_t(k) > r.remaining() / 14) return fail(errc::corrupt, "marker offsets");
            for (int32_t j = 0; j < k; ++j) {
                log::topic_partition tp;
                tp.topic = std::string(FLOE_TRY(r.str()));
                tp.partition = FLOE_TRY(r.i32());
                f.offsets[std::move(tp)] = FLOE_TRY(r.i64());
            }
        }
    }
    if (r.remaining() != 0) return fail(errc::corrupt, "trailing bytes");
    return m;
}

} // namespace

std::string_view to_string(txn_status s) noexcept {
    switch (s) {
    case txn_status::empty: return "Empty";
    case txn_status::ongoing: return "Ongoing";
    case txn_status::prepare_commit: return "PrepareCommit";
    case txn_status::prepare_abort: return "PrepareAbort";
    case txn_status::complete_commit: return "CompleteCommit";
    case txn_status::complete_abort: return "CompleteAbort";
    }
    return "Unknown";
}

std::optional<txn_status> txn_status_from(std::string_view name) noexcept {
    for (int i = 0; i <= int(txn_status::complete_abort); ++i)
        if (to_string(txn_status(i)) == name) return txn_status(i);
    return std::nullopt;
}

result<std::unique_ptr<txn_coordinator>> txn_coordinator::open(options opts, log::local_tier& logs,
                                                               offset_store& offsets,
                                                               producer_id_allocator& pids) {
    std::error_code ec;
    std::filesystem::create_directories(opts.dir, ec);
    if (ec) return fail(errc::io_error, "create {}: {}", opts.dir.string(), ec.message());
    auto dir = opts.dir;
    auto path = dir / "transactions.log";
    std::unique_ptr<txn_coordinator> c(new txn_coordinator(std::move(opts), logs, offsets, pids));
    auto replay = [&](bytes_view payload) {
        auto m = decode_txn(payload);
        if (!m) return false;
        auto id = m->transactional_id;
        c->_txns[id] = std::move(*m);
        return true;
    };
    // Compacted: the last state of every id.
    auto compacted = [&] {
        std::vector<byte_buffer> out;
        for (auto& [id, m] : c->_txns) out.push_back(encode_txn(m));
        return out;
    };
    size_t records = 0;
    c->_log = FLOE_TRY(framed_log::open(path, "transactions log", replay, compacted, &records));
    // Before any request: a marker the crash lost is appended again while the producer's
    // transaction is still the open one on its partition (the next one cannot have begun there).
    size_t in_flight = 0;
    for (auto& [id, m] : c->_txns) {
        in_flight += m.markers.size();
        c->recover_markers(m);
    }
    if (in_flight > 0) spdlog::info("transactions log: {} ended transactions' markers checked", in_flight);
    size_t open_txns = 0;
    for (auto& [id, m] : c->_txns)
        if (m.status != txn_status::empty && m.status != txn_status::complete_commit
            && m.status != txn_status::complete_abort)
            ++open_txns;
    spdlog::info("transactions log {}: {} records, {} transactional ids, {} unfinished", path.string(),
                 records, c->_txns.size(), open_txns);
    return c;
}

txn_coordinator::~txn_coordinator() = default;

result<void> txn_coordinator::persist(const txn_metadata& m) {
    return _log->append(encode_txn(m));
}

result<uint64_t> txn_coordinator::write(const txn_metadata& m) {
    return _log->write(encode_txn(m));
}

bool txn_coordinator::sync_unlocked(std::unique_lock<std::mutex>& lk, uint64_t end, std::string_view txn_id) {
    lk.unlock();
    auto r = _log->sync(end);
    lk.lock();
    if (!r) spdlog::error("transactional id {}: {}", txn_id, r.error());
    return bool(r);
}

void txn_coordinator::watch(txn_markers& f) {
    f.undurable = std::make_shared<std::atomic<int>>(int(f.offsets.size()));
    for (auto& [tp, off] : f.offsets) {
        auto p = _logs.partition(tp);
        if (!p) { // deleted topic: nothing left to wait for
            f.undurable->fetch_sub(1, std::memory_order_acq_rel);
            continue;
        }
        // Called from the partition's flusher: only counts down. A failed fsync makes the count
        // negative for good: tick watches the entry again (the marker stays in the state until
        // a flush succeeds, and a restart checks it).
        p->when_durable(kafka_offset{off}, [n = f.undurable](result<void> r) {
            if (r) n->fetch_sub(1, std::memory_order_acq_rel);
            else n->store(-1'000'000, std::memory_order_release);
        });
    }
}

void txn_coordinator::recover_markers(txn_metadata& m) {
    bool appended = false;
    for (auto& f : m.markers) {
        if (f.undurable || f.appended) continue; // watched or to be: written by this process
        bool ok = true;
        for (auto& [tp, off] : f.offsets) {
            auto p = _logs.partition(tp);
            if (!p) continue;
            auto open = p->open_transactions();
            auto it = open.find(f.producer_id);
            // Open from an offset past the marker's: the producer's next transaction (whose
            // AddPartitionsToTxn record followed this entry's), so the marker is there.
            if (it == open.end() || it->second > off) continue;
            auto r = p->append_txn_marker(f.producer_id, f.producer_epoch,
                                          f.commit ? log::txn_marker::commit : log::txn_marker::abort, 0);
            if (!r || r->status != log::append_status::ok) {
                spdlog::warn("transactional id {}: appending again the {} marker on {}-{} lost by a crash: {}",
                             m.transactional_id, f.commit ? "commit" : "abort", tp.topic, tp.partition,
                             r ? r->message : r.error().message());
                ok = false;
                break;
            }
            spdlog::info("transactional id {}: appended again the {} marker on {}-{} (lost by a crash)",
                         m.transactional_id, f.commit ? "commit" : "abort", tp.topic, tp.partition);
            off = r->last_offset();
            appended = true;
        }
        if (ok) watch(f);
    }
    if (appended) (void)write(m); // the new offsets; the next durable record carries them anyway
}

int16_t txn_coordinator::check_producer(const txn_metadata* m, int64_t producer_id,
                                        int16_t producer_epoch) {
    if (!m || m->producer_id != producer_id) return int16_t(kerr::invalid_producer_id_mapping);
    if (producer_epoch != m->producer_epoch) return int16_t(kerr::producer_fenced);
    return 0;
}

result<void> txn_coordinator::complete(txn_metadata& m) {
    bool commit = m.status == txn_status::prepare_commit;
    auto marker = commit ? log::txn_marker::commit : log::txn_marker::abort;
    txn_markers f{.commit = commit, .producer_id = m.producer_id, .producer_epoch = m.producer_epoch};
    for (auto& tp : m.partitions) {
        auto p = _logs.partition(tp);
        if (!p) continue; // deleted topic: nothing left to mark
        // A retry after a failure here appends a second marker where the first went: it changes
        // nothing (the transaction is closed there, and the next cannot begin while prepared).
        auto r = p->append_txn_marker(m.producer_id, m.producer_epoch, marker, 0);
        if (!r) return fail(std::move(r).error().with_context("marker on {}-{}", tp.topic, tp.partition));
        if (r->status != log::append_status::ok)
            return fail(errc::internal, "marker on {}-{} refused: {}", tp.topic, tp.partition,
                        r->message);
        f.offsets[tp] = r->last_offset();
    }
    if (commit)
        for (auto& [g, entries] : m.pending_offsets) {
            std::vector<std::pair<offset_store::key, offset_store::committed>> v(entries.begin(),
                                                                                  entries.end());
            FLOE_TRY(_offsets.commit(g, v));
        }
    std::erase_if(m.markers, [](const txn_markers& e) { return e.durable(); });
    if (!f.offsets.empty()) {
        f.appended = true; // watched by the next tick, off the path of the next transaction
        m.markers.push_back(std::move(f));
    }
    m.status = commit ? txn_status::complete_commit : txn_status::complete_abort;
    m.partitions.clear();
    m.groups.clear();
    m.pending_offsets.clear();
    m.start_ms = -1;
    m.update_ms = wall_ms();
    // Not synced: if this record is lost, the prepare state before it is (the next transaction's
    // first record is synced and carries the markers' offsets), and every marker is appended
    // again. A failed write (disk full) is the same.
    if (auto w = write(m); !w)
        spdlog::warn("transactional id {}: recording the {} state: {}", m.transactional_id,
                     to_string(m.status), w.error());
    return {};
}

result<void> txn_coordinator::abort_fencing(txn_metadata& m, int64_t now_ms) {
    if (m.producer_epoch >= INT16_MAX - 1) {
        // Kafka would move to a new producer id here; the old one's markers still need an epoch
        // at least the producer's, so abort with the current epoch and move on.
        m.status = txn_status::prepare_abort;
    } else {
        m.last_producer_epoch = m.producer_epoch;
        ++m.producer_epoch;
        m.status = txn_status::prepare_abort;
    }
    m.update_ms = now_ms;
    FLOE_TRY(persist(m));
    return complete(m);
}

txn_coordinator::init_answer txn_coordinator::init_producer(std::string_view txn_id, int32_t timeout_ms,
                                                            int64_t producer_id, int16_t producer_epoch) {
    init_answer a;
    if (timeout_ms <= 0 || timeout_ms > _opts.max_timeout_ms) {
        a.error = int16_t(kerr::invalid_transaction_timeout);
        return a;
    }
    std::lock_guard lk(_mu);
    auto it = _txns.find(txn_id);
    const int64_t now = wall_ms();
    if (it == _txns.end()) {
        if (producer_id >= 0) { // KIP-360 recovery of an id this coordinator never knew
            a.error = int16_t(kerr::invalid_producer_id_mapping);
            return a;
        }
        auto id = _pids.next();
        if (!id) {
            spdlog::error("producer id allocation: {}", id.error());
            a.error = int16_t(kerr::coordinator_not_available);
            return a;
        }
        txn_metadata m;
        m.transactional_id = std::string(txn_id);
        m.producer_id = *id;
        m.producer_epoch = 0;
        m.timeout_ms = timeout_ms;
        m.update_ms = now;
        if (auto p = persist(m); !p) {
            spdlog::error("transactional id {}: {}", txn_id, p.error());
            a.error = int16_t(kerr::coordinator_not_available);
            return a;
        }
        a.producer_id = m.producer_id;
        a.producer_epoch = m.producer_epoch;
        _txns.emplace(m.transactional_id, std::move(m));
        return a;
    }
    auto& m = it->second;
    // KIP-360: the producer names itself; its epoch may be the one before a bump the
    // coordinator made on its own (a timeout abort), which Kafka lets it recover from.
    if (producer_id >= 0
        && (producer_id != m.producer_id
            || (producer_epoch != m.producer_epoch
                && (m.last_producer_epoch < 0 || producer_epoch != m.last_producer_epoch)))) {
        a.error = int16_t(kerr::producer_fenced);
        return a;
    }
    if (_preparing.contains(txn_id)) {
        a.error = int16_t(kerr::concurrent_transactions);
        return a;
    }
    result<void> done;
    if (m.status == txn_status::prepare_commit || m.status == txn_status::prepare_abort)
        done = complete(m);
    if (done && m.status == txn_status::ongoing) {
        // A new producer instance: the previous one's transaction is aborted, and the epoch
        // bump of that abort fences it everywhere (coordinator and partitions).
        spdlog::info("transactional id {}: aborting the open transaction of epoch {} (new producer)",
                     txn_id, m.producer_epoch);
        done = abort_fencing(m, now);
        m.last_producer_epoch = -1; // fenced for good: the old instance cannot recover
    } else if (done) {
        if (m.producer_epoch >= INT16_MAX - 1) {
            auto id = _pids.next();
            if (!id) done = fail(id.error());
            else {
                m.producer_id = *id;
                m.producer_epoch = 0;
            }
        } else {
            ++m.producer_epoch;
        }
        m.last_producer_epoch = -1;
        m.status = txn_status::empty;
    }
    if (done) {
        m.timeout_ms = timeout_ms;
        m.update_ms = now;
        done = persist(m);
    }
    if (!done) {
        spdlog::error("transactional id {}: {}", txn_id, done.error());
        a.error = int16_t(kerr::coordinator_not_available);
        return a;
    }
    a.producer_id = m.producer_id;
    a.producer_epoch = m.producer_epoch;
    return a;
}

std::vector<int16_t> txn_coordinator::add_partitions(std::string_view txn_id, int64_t producer_id,
                                                     int16_t producer_epoch,
                                                     const std::vector<log::topic_partition>& parts) {
    std::vector<int16_t> errs(parts.size(), 0);
    auto all = [&](int16_t e) {
        std::fill(errs.begin(), errs.end(), e);
        return errs;
    };
    std::unique_lock lk(_mu);
    auto it = _txns.find(txn_id);
    auto* m = it == _txns.end() ? nullptr : &it->second;
    if (auto e = check_producer(m, producer_id, producer_epoch)) return all(e);
    if (m->status == txn_status::prepare_commit || m->status == txn_status::prepare_abort)
        return all(int16_t(kerr::concurrent_transactions));
    bool unknown = false;
    for (size_t i = 0; i < parts.size(); ++i) {
        auto p = _logs.partition(parts[i]);
        if (!p) {
            errs[i] = int16_t(kerr::unknown_topic_or_partition);
            unknown = true;
        } else if (!p->supports_transactions()) {
            // The local tier cannot keep transactions (e.g. floe.local.type=redis): refuse
            // before any transactional record is written, as Kafka does for a topic whose
            // message format cannot hold them.
            spdlog::warn("transactional id {}: {}-{} refused: the local tier does not support transactions",
                         txn_id, parts[i].topic, parts[i].partition);
            errs[i] = int16_t(kerr::unsupported_for_message_format);
            unknown = true;
        }
    }
    if (unknown) {
        for (auto& e : errs)
            if (e == 0) e = int16_t(kerr::operation_not_attempted);
        return errs;
    }
    bool changed = m->status != txn_status::ongoing;
    for (auto& tp : parts) changed |= !m->partitions.contains(tp);
    if (!changed) return errs;
    auto before = *m;
    if (m->status != txn_status::ongoing) {
        m->status = txn_status::ongoing;
        m->start_ms = wall_ms();
    }
    m->partitions.insert(parts.begin(), parts.end());
    m->update_ms = wall_ms();
    auto w = write(*m);
    if (!w) {
        spdlog::error("transactional id {}: {}", txn_id, w.error());
        *m = std::move(before);
        return all(int16_t(kerr::coordinator_not_available));
    }
    // A failed sync stops the log (nothing later is acknowledged; a restart reads what is on
    // disk), so the state is not put back.
    if (!sync_unlocked(lk, *w, txn_id)) return all(int16_t(kerr::coordinator_not_available));
    return errs;
}

int16_t txn_coordinator::add_offsets(std::string_view txn_id, int64_t producer_id, int16_t producer_epoch,
                                     std::string_view group) {
    std::unique_lock lk(_mu);
    auto it = _txns.find(txn_id);
    auto* m = it == _txns.end() ? nullptr : &it->second;
    if (auto e = check_producer(m, producer_id, producer_epoch)) return e;
    if (m->status == txn_status::prepare_commit || m->status == txn_status::prepare_abort)
        return int16_t(kerr::concurrent_transactions);
    if (m->status == txn_status::ongoing && m->groups.contains(group)) return 0;
    auto before = *m;
    if (m->status != txn_status::ongoing) {
        m->status = txn_status::ongoing;
        m->start_ms = wall_ms();
    }
    m->groups.insert(std::string(group));
    m->update_ms = wall_ms();
    auto w = write(*m);
    if (!w) {
        spdlog::error("transactional id {}: {}", txn_id, w.error());
        *m = std::move(before);
        return int16_t(kerr::coordinator_not_available);
    }
    return sync_unlocked(lk, *w, txn_id) ? 0 : int16_t(kerr::coordinator_not_available);
}

int16_t txn_coordinator::txn_offset_commit(
    std::string_view txn_id, std::string_view group, int64_t producer_id, int16_t producer_epoch,
    const std::vector<std::pair<offset_store::key, offset_store::committed>>& entries) {
    std::unique_lock lk(_mu);
    auto it = _txns.find(txn_id);
    auto* m = it == _txns.end() ? nullptr : &it->second;
    if (auto e = check_producer(m, producer_id, producer_epoch)) return e;
    if (m->status != txn_status::ongoing || !m->groups.contains(group))
        return int16_t(kerr::invalid_txn_state);
    if (entries.empty()) return 0;
    auto before = *m;
    auto& g = m->pending_offsets[std::string(group)];
    for (auto& [k, c] : entries) g[k] = c;
    m->update_ms = wall_ms();
    auto w = write(*m);
    if (!w) {
        spdlog::error("transactional id {}: {}", txn_id, w.error());
        *m = std::move(before);
        return int16_t(kerr::coordinator_not_available);
    }
    return sync_unlocked(lk, *w, txn_id) ? 0 : int16_t(kerr::coordinator_not_available);
}

int16_t txn_coordinator::end_txn(std::string_view txn_id, int64_t producer_id, int16_t producer_epoch,
                                 bool commit) {
    std::unique_lock lk(_mu);
    auto it = _txns.find(txn_id);
    auto* m = it == _txns.end() ? nullptr : &it->second;
    if (auto e = check_producer(m, producer_id, producer_epoch)) return e;
    switch (m->status) {
    case txn_status::complete_commit: return commit ? 0 : int16_t(kerr::invalid_txn_state); // a retry
    case txn_status::complete_abort: return commit ? int16_t(kerr::invalid_txn_state) : 0;
    case txn_status::empty: return int16_t(kerr::invalid_txn_state);
    case txn_status::prepare_commit:
    case txn_status::prepare_abort: return int16_t(kerr::concurrent_transactions);
    case txn_status::ongoing: break;
    }
    m->status = commit ? txn_status::prepare_commit : txn_status::prepare_abort;
    m->update_ms = wall_ms();
    auto w = write(*m);
    if (!w) {
        spdlog::error("transactional id {}: {}", txn_id, w.error());
        m->status = txn_status::ongoing;
        return int16_t(kerr::coordinator_not_available);
    }
    // The sync runs without the lock (other ids' records share it); meanwhile the id is left
    // alone by tick and InitProducerId. The map never erases, so `m` stays valid.
    _preparing.insert(it->first);
    if (!sync_unlocked(lk, *w, txn_id)) {
        // The log refuses everything from now on: the id stays as it is until a restart, which
        // finds the prepare state on disk or not.
        return int16_t(kerr::coordinator_not_available);
    }
    _preparing.erase(it->first);
    // Prepared and durable: the outcome is decided and EndTxn is answered. The markers are
    // appended now, durable with their partitions' next group commit; a failure here (disk
    // full) leaves the prepare state, which tick() finishes.
    if (auto c = complete(*m); !c)
        spdlog::error("transactional id {}: completing {} (tick retries): {}", txn_id,
                      commit ? "commit" : "abort", c.error());
    return 0;
}

int16_t txn_coordinator::check_produce(std::string_view txn_id, int64_t producer_id,
                                       int16_t producer_epoch, const log::topic_partition& tp) {
    std::lock_guard lk(_mu);
    auto it = _txns.find(txn_id);
    if (it == _txns.end() || it->second.producer_id != producer_id)
        return int16_t(kerr::invalid_producer_id_mapping);
    auto& m = it->second;
    if (producer_epoch != m.producer_epoch) return int16_t(kerr::invalid_producer_epoch);
    if (m.status != txn_status::ongoing || !m.partitions.contains(tp)) return int16_t(kerr::invalid_txn_state);
    return 0;
}

std::optional<txn_metadata> txn_coordinator::describe(std::string_view txn_id) const {
    std::lock_guard lk(_mu);
    auto it = _txns.find(txn_id);
    if (it == _txns.end()) return std::nullopt;
    return it->second;
}

std::vector<txn_metadata> txn_coordinator::list() const {
    std::lock_guard lk(_mu);
    std::vector<txn_metadata> v;
    v.reserve(_txns.size());
    for (auto& [id, m] : _txns) v.push_back(m);
    return v;
}

void txn_coordinator::tick(int64_t now_ms) {
    std::lock_guard lk(_mu);
    for (auto& [id, m] : _txns) {
        if (_preparing.contains(id)) continue;
        std::erase_if(m.markers, [](const txn_markers& e) { return e.durable(); });
        for (auto& f : m.markers)
            if ((f.appended && !f.undurable) || (f.undurable && f.undurable->load(std::memory_order_acquire) < 0))
                watch(f);
        if (std::ranges::any_of(m.markers, [](const txn_markers& e) { return !e.undurable; }))
            recover_markers(m); // a marker the open could not append again
        result<void> r;
        if (m.status == txn_status::prepare_commit || m.status == txn_status::prepare_abort) {
            r = complete(m);
        } else if (m.status == txn_status::ongoing && m.start_ms >= 0
                   && now_ms - m.start_ms > int64_t(m.timeout_ms)) {
            spdlog::info("transactional id {}: aborting the transaction of producer {} epoch {} "
                         "open for {} ms (timeout {} ms)",
                         id, m.producer_id, m.producer_epoch, now_ms - m.start_ms, m.timeout_ms);
            r = abort_fencing(m, now_ms);
        }
        if (!r) {
            // Retried every tick; said at most every 10 s per id.
            if (now_ms - _last_warned[id] >= 10000) {
                spdlog::warn("transactional id {}: {} (retried)", id, r.error());
                _last_warned[id] = now_ms;
            }
        } else {
            _last_warned.erase(id);
        }
    }
}

} // namespace floe::kafka
