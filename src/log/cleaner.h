#pragma once
// The log cleaner: compaction of partitions whose cleanup.policy holds "compact". It rewrites
// sealed segments keeping only the latest record of each key (Kafka's log compaction), through
// one narrow hook of partition_log (replace_sealed_segment). See the README's "Compaction".

#include "base/clock.h"
#include "base/result.h"
#include "log/partition_log.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace floe::log {

struct cleaner_options {
    /// Bytes read plus written per second, all partitions of one pass together
    /// (log.cleaner.io.max.bytes.per.second); 0 = unthrottled.
    uint64_t io_max_bytes_per_second = 0;
    /// Memory for the key map of one pass (log.cleaner.dedupe.buffer.size): the dirty section
    /// cleaned in one pass ends at the segment whose keys would pass it (at least one segment).
    size_t dedupe_buffer_bytes = 128u << 20;
    clock_source* clock = nullptr;           ///< nullptr = system clock
    const std::atomic<bool>* stop = nullptr; ///< set on shutdown: a pass stops between segments
};

/// What one pass over one partition did (or why it did nothing).
struct clean_stats {
    bool cleaned = false;       ///< a pass ran (the dirty ratio or max.compaction.lag.ms asked)
    std::string skipped;        ///< why nothing ran, when !cleaned
    double dirty_ratio = 0;     ///< dirty bytes / cleanable bytes before the pass
    size_t segments_rewritten = 0;
    uint64_t bytes_read = 0;
    uint64_t bytes_written = 0;
    uint64_t records_read = 0;
    uint64_t records_removed = 0;
    uint64_t tombstones_removed = 0;
    int64_t first_dirty = 0;    ///< the checkpoint before the pass
    int64_t cleaned_up_to = 0;  ///< the checkpoint after it: offsets below are clean
};

/// Compacts partitions. One instance per log_manager (one pass at a time; a pass over a
/// partition is not run concurrently with another over the same partition). clean() runs on
/// its caller's thread, plus one reader thread of its own while it maps keys (joined before it
/// returns); throttle() is called from one of them at a time. Metrics:
/// floe_log_cleaner_* (see README).
///
/// A pass over a compacted partition:
///  - cleanable: sealed segments from the log start (never the active one), stopping at the
///    first one still within min.compaction.lag.ms, or (remote.storage.enable) not wholly below
///    the offload marker: the Iceberg table gets every record before the cleaner drops any;
///  - dirty: the cleanable segments at or above the checkpoint (<dir>/cleaner_checkpoint). A
///    pass runs when dirty / cleanable bytes >= min.cleanable.dirty.ratio, or a dirty segment
///    holds a record older than max.compaction.lag.ms;
///  - the latest offset of each key in the dirty segments is collected (keyed by a 128-bit keyed
///    digest, see offset_map.h; with, per dirty batch, how many of its records are still
///    their key's latest, so that the rewrite drops wholly superseded batches and copies wholly
///    kept ones without decoding them again), then every cleanable
///    segment up to the end of the dirty section is rewritten without the records a later
///    offset of the same key supersedes, and without keyless records. Tombstones (null values)
///    stay until their batch's delete horizon (set when first cleaned: now +
///    delete.retention.ms, in the batch's base timestamp with the delete-horizon attribute, as
///    Kafka does) has passed. A batch keeps its base offset, last offset delta, producer id,
///    epoch and base sequence, codec and attributes; one left without records is dropped unless
///    it is its producer's last batch in the log (its header stays, so idempotence survives).
///    Control batches are kept as they are;
///  - each rewritten segment is written to <base>.log.cleaning.tmp, fsynced, and swapped in by
///    partition_log::replace_sealed_segment; the checkpoint is written (atomically) after the
///    last swap. A crash at any point leaves each segment old or new, either being valid.
class log_cleaner {
public:
    explicit log_cleaner(cleaner_options opts);

    /// One pass over one partition (no-op unless its cleanup.policy holds compact).
    result<clean_stats> clean(partition_log& p);

    /// Sets floe_log_cleaner_max_dirty_ratio after a round over all compacted partitions.
    static void note_round(double max_dirty_ratio);

    /// The checkpoint of a partition directory: offsets below it have been cleaned (0 if none).
    static int64_t read_checkpoint(const std::filesystem::path& partition_dir);

private:
    cleaner_options _opts;
    clock_source* _clock;
    std::chrono::steady_clock::time_point _window_start;
    uint64_t _window_bytes = 0;

    void throttle(uint64_t bytes);
    bool stopping() const noexcept { return _opts.stop && _opts.stop->load(); }
};

} // namespace floe::log
