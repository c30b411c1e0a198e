#pragma once

#include "base/result.h"
#include "config/settings.h"
#include "log/local_tier.h"

#include <cstdint>
#include <optional>

namespace floe::ingest {

/// A source's seal thresholds (`max-age`, `max-messages`, `max-bytes`; 0 = not set): whichever
/// comes first seals a mirror partition's active segment, which the storage worker then lands in
/// Iceberg. Without any, the topic's segment.ms / segment.bytes decide.
/// Any of them set to 0 (`immediate`) seals after every append: each message lands in Iceberg as
/// soon as it arrives, at the price of one small data file and one commit per fetch.
///
/// `idle-seal` (off unless set) adds one more: a segment is also sealed once its source partition
/// has nothing more for the mirror (the source says so: Kafka's end of partition, a JetStream
/// fetch that found nothing) and nothing was appended for that long. A backlog then lands as soon
/// as it is copied, instead of waiting out max-age or segment.ms; the price is a commit per burst
/// for a source that comes in bursts.
struct seal_thresholds {
    int64_t max_age_ms = 0;
    int64_t max_messages = 0;
    int64_t max_bytes = 0;
    int64_t idle_ms = -1;   ///< idle-seal; -1: not set
    bool immediate = false; ///< a threshold set to 0
    bool any() const noexcept {
        return immediate || max_age_ms > 0 || max_messages > 0 || max_bytes > 0 || idle_ms >= 0;
    }
    /// Read from a source's settings (validated by config already); errors name the setting.
    static result<seal_thresholds> of(const config::settings::ingest_source& cfg);
};

/// What segment_sealer::maybe_seal sealed, for the log line.
struct sealed_segment {
    const char* why = "";   ///< "max-age", "max-messages", "max-bytes", "idle-seal" or "threshold 0"
    int64_t id = 0;
    int64_t messages = 0;
    uint64_t bytes = 0;
};

/// Follows one mirror partition's active segment for the thresholds, from its first append in
/// this process (a segment found at start is counted from then). Owned by the source's thread.
class segment_sealer {
public:
    /// `added` records were just appended to `p` (0: just look at the active segment).
    void appended(const log::local_partition& p, int64_t added, int64_t now_ms);
    /// Seals `p`'s active segment when a threshold is reached; nullopt when nothing was due.
    /// `at_source_end`: the source has nothing more for this partition right now (for idle-seal).
    result<std::optional<sealed_segment>> maybe_seal(log::local_partition& p, const seal_thresholds& t,
                                                     int64_t now_ms, bool at_source_end = false);

private:
    int64_t _seg_id = -1;   ///< the active segment being followed
    int64_t _first_ms = 0;  ///< when its first record was appended (or it was first seen)
    int64_t _last_ms = 0;   ///< when its last record was appended (or it was first seen)
    int64_t _msgs = 0;
};

/// Whether a source's mirror topics go to Iceberg: its `remote-storage` setting, true unless set
/// to false. Landing in the lake is what ingest is for, so a mirror topic is created with
/// remote.storage.enable=true whatever floe.topic-defaults say; `remote-storage: false` keeps a
/// source's mirrors local (remote.storage.enable=false, bounded by local retention).
bool mirrors_to_lake(const config::settings::ingest_source& cfg);

/// The overrides a source creates its mirror topics with (remote.storage.enable as above).
log::config_map mirror_overrides(const config::settings::ingest_source& cfg);

/// For an existing mirror topic of the source: turns remote.storage.enable on when the source
/// lands its mirrors and the topic does not (a mirror created before mirrors were tiered by
/// default, or altered since); returns the topic as it is now. A mirror already going to the lake
/// while the source says `remote-storage: false` stays so, with a warning: as in Kafka, remote
/// storage is not turned off under data the table holds.
result<log::topic_info> align_mirror_tiering(log::local_tier& logs, log::topic_info info,
                                             const config::settings::ingest_source& cfg);

} // namespace floe::ingest
