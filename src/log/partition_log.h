#pragma once

#include "base/bytes.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/result.h"
#include "base/uuid.h"
#include "log/local_tier.h"
#include "log/record_batch_header.h"
#include "log/topic_config.h"
#include "log/txn_state.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace floe::log {

/// What recovery found on open: how much of a torn tail was cut and which indexes were rebuilt.
struct recovery_report {
    size_t segments = 0;
    size_t batches_scanned = 0;
    uint64_t truncated_bytes = 0;   ///< bytes cut from the tail of the last segment(s)
    size_t indexes_rebuilt = 0;
    std::string detail;             ///< what was cut and why (also logged)
};

/// Collects fsync requests from many partitions and serves them on flusher threads, so
/// concurrent acks=all producers share fsyncs (group commit). Owned by log_manager.
class flush_scheduler {
public:
    virtual ~flush_scheduler() = default;
    virtual void request_flush(std::shared_ptr<class partition_log> p) = 0;
};

struct partition_log_options {
    std::filesystem::path dir;       ///< this partition's directory (created if missing)
    topic_partition tp;
    uuid topic_id;
    topic_config config;
    clock_source* clock = nullptr;   ///< nullptr = system clock
    flush_scheduler* flusher = nullptr; ///< nullptr = when_durable fsyncs inline
    /// A mirror of an ingest source: written only by mirror_append (the source's offsets, gaps
    /// allowed), append() refuses. Recovery then accepts gaps between batches.
    bool mirror = false;
};

/// The local log of one partition: a sequence of segment files, the last one active.
///
/// Files in `dir`: `<20-digit base offset>.log` (record batches as received, offsets patched),
/// `.index` (segment summary + sparse entries: relative offset, position, one per
/// index.interval.bytes) and `.timeindex` (max timestamp before a position, relative offset,
/// position), both CRC'd and written when the segment is sealed; `offloaded` (the
/// offloaded-up-to marker), `log_start` (the DeleteRecords floor, once it has moved),
/// `producers.snapshot` (idempotence state, written on close; the log after it is replayed on
/// open).
///
/// Threads: every method is thread-safe. One mutex (`impl::mu`) serialises appends, rolls,
/// retention and index updates; reads hold it only to pick segments and positions from in-memory
/// indexes, then do their I/O outside it on shared file handles. fsync (and sealing of rolled
/// segments) runs outside it under `impl::flush_mu`, so appends continue while a group commit
/// is in progress.
class partition_log : public local_partition, public std::enable_shared_from_this<partition_log> {
public:
    /// Opens (creating if missing) and recovers the partition: scans the tail segment, cuts a
    /// torn or corrupt tail at the last valid batch (CRC-32C), rebuilds missing/bad indexes,
    /// restores producer state.
    static result<std::shared_ptr<partition_log>> open(partition_log_options opts);
    ~partition_log();

    /// Appends the batches in `records` (one or more whole RecordBatch v2, back to back, as in a
    /// Produce request). Patches them in place: baseOffset := next offset, and for
    /// LogAppendTime topics the timestamp-type bit, maxTimestamp := now and the CRC. All or
    /// nothing: every batch is validated (CRC, size <= max.message.bytes, idempotent sequence)
    /// before any is written. Rolls first when the active segment would exceed segment.bytes or
    /// is older than segment.ms. Returns errc::io_error on write failure (the partition then
    /// refuses appends until reopened), errc::shutting_down after close.
    result<append_result> append(std::span<uint8_t> records, const append_options& opts = {});

    /// The ingest path of a mirror partition: appends whole RecordBatch v2 batches at the base
    /// offsets they carry (the source's offsets; nothing is patched, so every CRC is checked
    /// and stays valid). Offsets only go forward: each batch must start at or above the log end
    /// and above the previous batch's last offset; a gap between them stays a gap (the log end
    /// becomes the last batch's last offset + 1). A batch must hold contiguous records
    /// (recordCount == lastOffsetDelta + 1). Refuses with `below_log_end` when the first batch
    /// starts below the log end (a replay after a crash: nothing is appended twice), and on a
    /// partition not opened as a mirror with `mirror_read_only`. All or nothing, like append().
    result<append_result> mirror_append(bytes_view records);
    bool is_mirror() const noexcept { return _opts.mirror; }

    /// Whole batches starting with the one containing `offset`. errc::out_of_range when
    /// `offset` < log start (the tiered read path takes over) or > log end.
    result<read_result> read(kafka_offset offset, const read_options& opts = {}) const;

    /// ListOffsets by time: the first record with timestamp >= `ts` (exact for uncompressed
    /// batches, the batch's base offset for compressed ones), nullopt if none.
    result<std::optional<timestamp_lookup>> offset_for_timestamp(int64_t ts) const;
    /// The header of the batch holding `offset` (read from the segment, not the whole batch);
    /// nullopt at or past the log end. errc::out_of_range below the log start.
    result<std::optional<record_batch_header>> batch_header_at(kafka_offset offset) const;
    /// ListOffsets MAX_TIMESTAMP (-3): the batch holding the largest timestamp.
    std::optional<timestamp_lookup> max_timestamp() const;

    partition_offsets offsets() const;
    /// The first offset readers may see: the local tier's first segment, or the DeleteRecords
    /// floor when that is higher.
    kafka_offset log_start_offset() const;
    /// DeleteRecords (KIP-107): records below `offset` are gone for every reader, in both tiers
    /// (remote readers clamp to records_start()). Persisted (`log_start` file) before returning;
    /// never moves backwards. Local segments wholly below it are removed by apply_retention
    /// (tiered topics: once offloaded; the table keeps its rows as history until remote
    /// retention). errc::out_of_range when `offset` > log end. Returns the new log start.
    result<kafka_offset> delete_records_before(kafka_offset offset);
    /// The DeleteRecords floor (0 when never moved): what the remote tier may serve from.
    kafka_offset records_start() const;
    kafka_offset log_end_offset() const;

    /// fsyncs everything appended so far (data, then indexes). Blocking.
    result<void> flush();
    /// Calls `done` once every offset <= `last_offset` is fsynced: immediately if already so,
    /// else from the flusher thread after the next group commit. `done` must be cheap (post to
    /// an executor); it must not call back into this partition under a lock of its own.
    void when_durable(kafka_offset last_offset, std::function<void(result<void>)> done);

    /// Rolls the active segment (if not empty) and seals it (fsync + index files) before
    /// returning. Appends roll by themselves; this is for the storage worker.
    result<void> roll();
    /// Rolls when the active segment is older than segment.ms. Called by housekeeping.
    result<bool> maybe_roll_by_time();

    std::vector<segment_info> segments() const;
    /// Sealed segments only, oldest first: what the storage worker may offload.
    std::vector<segment_info> sealed_segments() const;

    /// Tiering marker: every offset < `next` is safely in the remote tier. Persisted
    /// crash-safely. Never moves backwards (a smaller value is ignored).
    /// `fence` is ignored: one broker per data dir (the storage worker holds a global lease).
    result<void> set_offloaded_up_to(kafka_offset next, offload_fence fence = std::nullopt);
    kafka_offset offloaded_up_to() const;
    /// Moves the marker back to `next` (never below the local log start): the remote tier was
    /// found not to hold what the marker claims, so those offsets must be offloaded again.
    result<void> rewind_offloaded_up_to(kafka_offset next, offload_fence fence = std::nullopt);

    /// Deletes whole sealed segments past local retention (time: segment max timestamp older
    /// than now - retention; size: total above the limit). With remote.storage.enable, only
    /// segments entirely below offloaded_up_to, and below `remote_covers` (the position the
    /// remote tier itself reports; nullopt: unknown, so nothing goes), may go. Returns the
    /// deleted segments.
    result<std::vector<segment_info>> apply_retention(std::optional<kafka_offset> remote_covers,
                                                      offload_fence fence = std::nullopt);

    /// The log cleaner's swap (log/cleaner.h): replaces the sealed, non-active segment starting
    /// at `base`, still `expected_size` bytes long (as the cleaner read it), by `cleaned`: a file
    /// of whole batches, written and fsynced by the cleaner, holding a subset of the segment's
    /// records at their offsets (batches may skip offsets). Index files are removed, the file
    /// renamed over the segment, the directory fsynced and the indexes rebuilt; readers
    /// holding the old file keep reading it. false (and `cleaned` removed) when the segment is
    /// gone or not as the cleaner saw it. Recovery accepts gaps once the partition directory
    /// holds `cleaner_checkpoint_file`, which the cleaner writes before its first swap.
    result<bool> replace_sealed_segment(kafka_offset base, uint64_t expected_size,
                                        const std::filesystem::path& cleaned);
    /// The cleaner's checkpoint in the partition directory: the first offset not yet cleaned.
    static constexpr const char* cleaner_checkpoint_file = "cleaner_checkpoint";
    // ---- transactions (KIP-98); the state lives in partition_txn_state (txn_state.h) ----
    /// Appends the control batch ending `producer_id`'s transaction on this partition (COMMIT
    /// or ABORT), as the transaction coordinator does. The marker's epoch must not be below the
    /// producer's (invalid_producer_epoch); it becomes the producer's epoch, so a bumped epoch
    /// fences the old producer here too. Durable once when_durable says so.
    bool supports_transactions() const noexcept { return true; }
    result<append_result> append_txn_marker(int64_t producer_id, int16_t producer_epoch,
                                            txn_marker m, int32_t coordinator_epoch);
    /// First offset of the oldest open transaction, else the high watermark: what
    /// read_committed readers see up to (exclusive), and what offload never passes.
    kafka_offset last_stable_offset() const;
    /// Aborted transactions overlapping [from, to), for read_committed Fetch answers and for
    /// the storage worker (which drops their records).
    std::vector<aborted_txn> aborted_transactions(kafka_offset from, kafka_offset to) const;
    /// producer id -> first offset of its open transaction here.
    std::map<int64_t, int64_t> open_transactions() const;

    /// Idempotent-producer state (copies).
    std::optional<producer_state> producer(int64_t producer_id) const;
    std::vector<producer_state> producers() const;

    void update_config(const topic_config& cfg);
    topic_config config() const;
    const topic_partition& tp() const noexcept { return _opts.tp; }
    const uuid& topic_id() const noexcept { return _opts.topic_id; }
    const std::filesystem::path& dir() const noexcept { return _opts.dir; }
    const recovery_report& last_recovery() const noexcept { return _recovery; }

    /// Flushes, writes the producer snapshot, closes files. Further appends fail with
    /// errc::shutting_down. Idempotent.
    result<void> close();
    /// Closes and removes the directory (DeleteTopics).
    result<void> remove();

    /// True when flush.ms has passed since the last fsync with data unflushed (flusher thread).
    bool needs_time_flush() const;

    struct impl;

    /// Use open(); public only for make_shared.
    explicit partition_log(partition_log_options opts);

private:
    result<void> roll_locked(); // requires _impl->mu
    void schedule_flush();

    partition_log_options _opts;
    recovery_report _recovery;
    std::unique_ptr<impl> _impl;
};

} // namespace floe::log
