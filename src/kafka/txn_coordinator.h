#pragma once

// The transaction coordinator (KIP-98) of a single broker: transactional ids, their producer
// id and epoch, the partitions and groups of the open transaction, and the markers that end it.

#include "base/result.h"
#include "kafka/groups.h"
#include "log/local_tier.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace floe::kafka {

class producer_id_allocator;

/// Kafka's transaction states (DescribeTransactions/ListTransactions spell them as Kafka does).
enum class txn_status : uint8_t {
    empty = 0,
    ongoing = 1,
    prepare_commit = 2,
    prepare_abort = 3,
    complete_commit = 4,
    complete_abort = 5,
};
std::string_view to_string(txn_status s) noexcept;
std::optional<txn_status> txn_status_from(std::string_view name) noexcept;

/// The markers of a transaction that ended: appended to its partitions, not known durable yet.
/// Kept (and persisted with the id's state) until every one is, so that a restart appends again
/// a marker the crash lost.
struct txn_markers {
    bool commit = false;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    std::map<log::topic_partition, int64_t> offsets; ///< the marker's offset in each partition
    /// Markers not yet reported durable by their partition (when_durable); not persisted. Null
    /// until watched.
    std::shared_ptr<std::atomic<int>> undurable;
    /// Appended by this process, not watched yet (not persisted): tick watches it, by when the
    /// next records' acks=all fsync has usually covered the marker already, so the marker costs
    /// no fsync of its own. False for an entry read back at open (checked, then watched).
    bool appended = false;
    bool durable() const noexcept { return undurable && undurable->load(std::memory_order_acquire) == 0; }
};

/// One transactional id's state, as persisted (every change is one record of the whole value).
struct txn_metadata {
    std::string transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    /// The epoch before the coordinator bumped it by itself (timeout or fencing abort): a
    /// KIP-360 InitProducerId naming it may still recover the producer (as Kafka allows).
    int16_t last_producer_epoch = -1;
    int32_t timeout_ms = 60000;
    txn_status status = txn_status::empty;
    std::set<log::topic_partition> partitions; ///< of the open transaction
    std::set<std::string, std::less<>> groups; ///< AddOffsetsToTxn
    int64_t start_ms = -1;                     ///< wall clock: the transaction's first addition
    int64_t update_ms = 0;
    /// TxnOffsetCommit offsets, applied to the group's committed offsets on commit only.
    std::map<std::string, std::map<offset_store::key, offset_store::committed>> pending_offsets;
    /// Ended transactions whose markers are not known durable (oldest first).
    std::vector<txn_markers> markers;
};

/// Thread-safe: one mutex guards the state; the fsyncs of the hot path (AddPartitionsToTxn,
/// AddOffsetsToTxn, TxnOffsetCommit, EndTxn) run outside it, so the records of every
/// transactional id written meanwhile share one fdatasync (group commit, `framed_log::sync`).
/// Durable: `<dir>/transactions.log` holds framed, CRC'd records, each the whole state of one
/// transactional id, durable before any answer depends on it; compacted (last record per id) and
/// cut at a torn tail on open.
///
/// Ending a transaction (as Kafka does): the prepare state (PrepareCommit/PrepareAbort) is made
/// durable and EndTxn is answered; the markers are appended to the transaction's partitions on
/// the way (no fsync: each partition's group commit makes them durable with the next records),
/// the staged offsets go to the offset store (commit), and the id moves to CompleteCommit/
/// CompleteAbort with a `txn_markers` entry naming each marker's offset, persisted with the
/// id's state (without an fsync of its own: the next durable record carries it). The entry goes
/// once every partition reports its marker durable. The next transaction of the id may start at
/// once; its AddPartitionsToTxn record is durable before any of its records are written, so a
/// restart always finds either the prepare state (the next transaction cannot have begun:
/// every marker is appended again) or the entries with their offsets. At open, a marker of an
/// entry is appended again where the partition still has the producer's transaction open from
/// an offset at or below the marker's (the crash lost it); a later open transaction of the
/// producer is the next one, whose marker is not due. A prepare state whose markers could not
/// be written (disk full) is finished by `tick`. An open transaction older than its timeout is
/// aborted by `tick` with the epoch bumped, which fences its producer; after a restart the start
/// time (wall clock, persisted) still counts.
///
/// Error codes are Kafka's, returned as int16; PRODUCER_FENCED is returned whatever the
/// request version (the handlers turn it into INVALID_PRODUCER_EPOCH for old versions).
class txn_coordinator {
public:
    struct options {
        std::filesystem::path dir;          ///< holds transactions.log
        int32_t max_timeout_ms = 900000;     ///< transaction.max.timeout.ms
    };
    static result<std::unique_ptr<txn_coordinator>> open(options opts, log::local_tier& logs,
                                                         offset_store& offsets,
                                                         producer_id_allocator& pids);
    ~txn_coordinator();

    struct init_answer {
        int16_t error = 0;
        int64_t producer_id = -1;
        int16_t producer_epoch = -1;
    };
    /// InitProducerId with a transactional id: a new id gets a fresh producer id (epoch 0);
    /// a known one gets its epoch bumped (an open transaction is aborted first, with the bumped
    /// epoch, so the previous producer is fenced). `producer_id`/`epoch` >= 0 (KIP-360, v3+)
    /// must name the current producer.
    init_answer init_producer(std::string_view txn_id, int32_t timeout_ms, int64_t producer_id,
                              int16_t producer_epoch);
    /// AddPartitionsToTxn: error per partition, in `parts` order.
    std::vector<int16_t> add_partitions(std::string_view txn_id, int64_t producer_id,
                                        int16_t producer_epoch,
                                        const std::vector<log::topic_partition>& parts);
    int16_t add_offsets(std::string_view txn_id, int64_t producer_id, int16_t producer_epoch,
                        std::string_view group);
    int16_t end_txn(std::string_view txn_id, int64_t producer_id, int16_t producer_epoch, bool commit);
    /// TxnOffsetCommit: staged until the transaction commits. One error for all entries.
    int16_t txn_offset_commit(std::string_view txn_id, std::string_view group, int64_t producer_id,
                              int16_t producer_epoch,
                              const std::vector<std::pair<offset_store::key, offset_store::committed>>& entries);
    /// Whether a transactional Produce of `producer_id`/`epoch` to `tp` belongs to the open
    /// transaction (0), else INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING or
    /// INVALID_TXN_STATE.
    int16_t check_produce(std::string_view txn_id, int64_t producer_id, int16_t producer_epoch,
                          const log::topic_partition& tp);

    std::optional<txn_metadata> describe(std::string_view txn_id) const;
    std::vector<txn_metadata> list() const;

    /// Completes transactions left in a prepare state and aborts open ones past their timeout.
    /// Called every 100 ms by the broker.
    void tick(int64_t now_ms);

private:
    txn_coordinator(options o, log::local_tier& logs, offset_store& offsets, producer_id_allocator& pids)
        : _opts(std::move(o)), _logs(logs), _offsets(offsets), _pids(pids) {}
    result<void> persist(const txn_metadata& m);       // write + sync; requires _mu
    result<uint64_t> write(const txn_metadata& m);     // no sync; requires _mu
    /// Sync of a record `m`'s caller wrote under _mu, with _mu released (the caller holds `lk`):
    /// the group commit. Logs a failure.
    bool sync_unlocked(std::unique_lock<std::mutex>& lk, uint64_t end, std::string_view txn_id);
    /// Appends the markers of `m` (in a prepare state, durable), applies its staged offsets
    /// (commit) and completes it, the markers left to their partitions' group commit. Requires _mu.
    result<void> complete(txn_metadata& m);
    /// Appends again the markers of `m.markers` entries read back at open that a crash lost, then
    /// watches them. Requires _mu.
    void recover_markers(txn_metadata& m);
    /// Asks each marker's partition to report it durable (`f.undurable` counts down).
    void watch(txn_markers& f);
    /// Aborts an open transaction with the epoch bumped. Requires _mu.
    result<void> abort_fencing(txn_metadata& m, int64_t now_ms);
    /// 0, or the error of a request naming `m` with this producer id and epoch.
    static int16_t check_producer(const txn_metadata* m, int64_t producer_id, int16_t producer_epoch);

    options _opts;
    log::local_tier& _logs;
    offset_store& _offsets;
    producer_id_allocator& _pids;
    mutable std::mutex _mu;
    std::unique_ptr<framed_log> _log;
    std::map<std::string, txn_metadata, std::less<>> _txns;
    std::map<std::string, int64_t, std::less<>> _last_warned; ///< tick's failures, by id (wall ms)
    /// Ids whose prepare record is being synced (_mu released): tick and InitProducerId leave
    /// them alone.
    std::set<std::string, std::less<>> _preparing;
};

} // namespace floe::kafka
