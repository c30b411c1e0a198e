#pragma once

// The transaction part of a partition's state (KIP-98), kept apart from partition_log so that
// it can move behind the local-tier interface: which producers have a transaction open on the
// partition (and from which offset), which transactions were aborted (the aborted-transaction
// index read_committed consumers are given), and the last stable offset both imply.

#include "base/bytes.h"
#include "base/result.h"
#include "log/record_batch_header.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace floe::log {

/// A transaction aborted on this partition: records of `producer_id` at offsets in
/// [first_offset, last_offset] are not committed data (last_offset is the abort marker's).
struct aborted_txn {
    int64_t producer_id = -1;
    int64_t first_offset = -1;
    int64_t last_offset = -1;
    bool operator==(const aborted_txn&) const = default;
};

/// Whether batch `h` belongs to one of the `aborted` transactions (a transactional data batch of
/// that producer within its offsets): its records are not committed data.
bool in_aborted_transaction(const record_batch_header& h, std::span<const aborted_txn> aborted) noexcept;

/// The type of a transaction marker (a control record's key: version int16 0, type int16).
enum class txn_marker : int16_t { abort = 0, commit = 1 };

/// A control batch of one marker record ending `producer_id`'s transaction, as a coordinator
/// writes it (base offset 0, patched on append; base sequence -1).
byte_buffer build_txn_marker_batch(int64_t producer_id, int16_t producer_epoch, txn_marker m,
                                   int32_t coordinator_epoch, int64_t timestamp_ms);
/// The marker of a control batch (whole batch bytes); nullopt when it is not a transaction
/// marker (an unknown control type). errc::corrupt when the record does not decode.
result<std::optional<txn_marker>> parse_txn_marker(const record_batch_header& h, bytes_view batch);

/// Open and aborted transactions of one partition. Not thread-safe: partition_log guards it
/// with its own mutex. Rebuilt on open from a snapshot (clean close) or by replaying the log.
class partition_txn_state {
public:
    /// Applies one appended (or replayed) batch whose base offset is assigned. `marker` is the
    /// marker of a control batch. A transactional batch opens a transaction for its producer
    /// unless one is open; a marker closes it (an abort adds it to the aborted index).
    void apply(const record_batch_header& h, std::optional<txn_marker> marker);
    /// apply() for a replay of the log from `replay_start` on open: an abort marker whose
    /// transaction began before the replayed range (its first batches are in segments already
    /// gone) covers the producer's batches from its previous marker, or from `replay_start`.
    void apply_replayed(const record_batch_header& h, std::optional<txn_marker> marker,
                        int64_t replay_start);
    /// Ends a replay (forgets the markers it remembered).
    void end_replay() { _replay_markers.clear(); }
    /// First offset a read_committed reader may not see: the first offset of the oldest open
    /// transaction, else `log_end`.
    int64_t last_stable(int64_t log_end) const noexcept;
    /// Aborted transactions that overlap [from, to): what a read_committed Fetch of that range
    /// is told, oldest first.
    std::vector<aborted_txn> aborted_in(int64_t from, int64_t to) const;
    /// Forgets aborted transactions wholly below `offset` (retention moved the log start).
    void trim_below(int64_t offset);
    /// producer id -> first offset of its open transaction.
    const std::map<int64_t, int64_t>& open() const noexcept { return _open; }
    const std::vector<aborted_txn>& aborted() const noexcept { return _aborted; }
    void clear() {
        _open.clear();
        _aborted.clear();
    }

    /// Snapshot body (written with the producer snapshot at clean close).
    void encode(byte_buffer& out) const;
    static result<partition_txn_state> decode(byte_reader& r);

private:
    std::map<int64_t, int64_t> _open;
    std::vector<aborted_txn> _aborted; ///< in marker order, so last_offset increases
    std::map<int64_t, int64_t> _replay_markers; ///< during a replay: pid -> its last marker's offset
};

} // namespace floe::log
