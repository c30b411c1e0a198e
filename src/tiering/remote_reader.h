#pragma once

#include "base/bytes.h"
#include "base/lru_cache.h"
#include "lake/table_reader.h"
#include "log/remote_tier.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace floe::tiering {

using lake::is_stream_key_of;

/// Serves Kafka reads below the local log start from the remote tier: finds the data files by
/// the offset bounds in the manifests, reads their rows and rebuilds record batches with the
/// original offsets, timestamps, keys, values and headers. Decoded files are kept in an LRU
/// cache bounded by bytes, plus the file each stream is being read from (sequential readers).
/// Only rows of the asked topic's partition are returned: files are chosen by their manifest
/// partition value (stream_key) and every row's stream_key is checked again.
/// A planned file gone by the time it is opened (compaction replaced it, expiry deleted it) makes
/// every read and lookup plan again from the catalog's current metadata (a few times at most).
/// Thread-safe (one lock around planning and the cache; file reads happen outside it).
class remote_reader final : public log::remote_tier {
public:
    explicit remote_reader(lake::iceberg_lake& lake, size_t cache_bytes = 64u << 20);

    // log::remote_tier: what the Kafka front end reads below the local log start.
    result<read_result> read(const std::string& topic, int32_t partition, int64_t offset, int64_t limit,
                             size_t max_bytes) override;
    result<std::optional<int64_t>> start_offset(const std::string& topic, int32_t partition) override;
    result<std::optional<int64_t>> recent_start_offset(const std::string& topic, int32_t partition,
                                                       std::chrono::milliseconds max_age) override;
    result<std::optional<ts_hit>> offset_for_timestamp(const std::string& topic, int32_t partition, int64_t ts,
                                                        int64_t limit) override;

    /// Records of the topic whose key equals `key`, from the remote tier: files pruned by the
    /// manifests' key bounds, row groups by statistics and bloom filter. With `all` false, only
    /// the newest match of each partition (files searched newest first).
    result<std::vector<parquet::message_record>> find_by_key(const std::string& topic, std::string_view key,
                                                             bool all, parquet::lookup_stats* stats = nullptr);
    /// Up to `limit` records of topic/partition with offsets in [offset, below), in order, read
    /// through the files' page indexes (only the pages holding them): for lookups of a few
    /// records. Sequential consumers use read(), which decodes and caches whole files.
    result<std::vector<parquet::message_record>> read_rows(const std::string& topic, int32_t partition,
                                                           int64_t offset, int64_t below, size_t limit);
    /// Records with timestamp in [from_ts, to_ts], offset order per partition, at most `limit`.
    result<std::vector<parquet::message_record>> find_by_time(const std::string& topic, int32_t partition,
                                                              int64_t from_ts, int64_t to_ts, int64_t below_offset,
                                                              size_t limit);

    /// The DeleteRecords floor of a partition (log::local_partition::records_start): no method
    /// returns a record below it, and start_offset() is never below it. `floe serve` sets it from
    /// the local log once the broker is up; unset, nothing is hidden.
    using floor_fn = std::function<int64_t(const std::string& topic, int32_t partition)>;
    void set_records_floor(floor_fn f);

    /// What the local tier says of a partition: its offload marker (every offset below it was
    /// offloaded) and its first local offset. nullopt when it cannot tell (its store is down).
    struct tier_marks {
        int64_t offloaded = 0;
        int64_t local_start = 0;
    };
    using marks_fn = std::function<std::optional<tier_marks>(const std::string& topic, int32_t partition)>;
    /// `floe serve` sets it from the local log. With it, every read below the local start first
    /// checks that the table holds what the marker says was offloaded: offsets at or above the
    /// table's committed position, below both the marker and the local start (and not below the
    /// DeleteRecords floor) are in neither tier, and then start_offset(), read(), read_rows(),
    /// find_by_time() and check_history() fail with errc::unavailable naming the table (Kafka
    /// answers KAFKA_STORAGE_ERROR, HTTP 503), never "nothing there".
    void set_tier_marks(marks_fn f);
    /// The check above for one partition (ok when there is no marks_fn or it cannot tell).
    result<void> check_history(const std::string& topic, int32_t partition);
    /// Partitions found missing history, checked again now, as messages naming each table
    /// (/readyz). A partition leaves the list once its table holds the history again, or
    /// DeleteRecords gave it up.
    std::vector<std::string> history_gaps();

    struct cache_stats {
        uint64_t hits = 0, misses = 0;
        size_t bytes = 0, files = 0;
    };
    cache_stats stats() const;

private:
    using rows_ptr = std::shared_ptr<const std::vector<parquet::message_record>>;
    // One attempt of each lookup from one plan; the public methods plan again when a planned file
    // is gone (replaced by compaction, deleted by expiry) before it was opened.
    result<std::vector<parquet::message_record>> find_by_key_once(const std::string& topic, std::string_view key,
                                                                  bool all, parquet::lookup_stats* stats);
    result<std::vector<parquet::message_record>> read_rows_once(const std::string& topic, int32_t partition,
                                                                int64_t offset, int64_t below, size_t limit);
    result<std::vector<parquet::message_record>> find_by_time_once(const std::string& topic, int32_t partition,
                                                                   int64_t from_ts, int64_t to_ts,
                                                                   int64_t below_offset, size_t limit);
    result<std::optional<ts_hit>> offset_for_timestamp_once(const std::string& topic, int32_t partition, int64_t ts,
                                                            int64_t limit);
    lake::table_reader& reader_for(const std::string& topic);
    result<rows_ptr> rows_of(lake::table_reader& r, const lake::planned_file& f);
    /// A data file kept open (footer, page indexes and its reader's buffers) for lookups.
    struct open_file {
        std::mutex mu; ///< a message_reader serves one call at a time
        byte_buffer storage;
        std::optional<parquet::message_reader> reader;
    };
    result<std::shared_ptr<open_file>> opened(lake::table_reader& r, const lake::planned_file& f);

    lake::iceberg_lake& _lake;
    size_t _cache_limit;
    mutable std::mutex _mu;
    std::map<std::string, std::unique_ptr<lake::table_reader>> _readers;
    lru_cache<std::string, rows_ptr> _cache; ///< decoded files by URI, weighed in bytes
    /// The file each stream was last read from, kept even when larger than the cache: a
    /// consumer reading sequentially through one big file must not decode it again per fetch.
    /// Together bounded by 4x the cache size (the least recently used stream's file goes first;
    /// the newest is always kept).
    struct current_file {
        std::string uri;
        rows_ptr rows;
        size_t bytes = 0;
        uint64_t used = 0;
    };
    std::map<std::string, current_file> _current;
    size_t _current_bytes = 0;
    uint64_t _use_clock = 0;
    cache_stats _stats;
    struct known_start {
        std::optional<int64_t> offset;
        std::optional<error> gap; ///< check_history failed
        std::chrono::steady_clock::time_point at;
    };
    std::map<std::pair<std::string, int32_t>, known_start> _starts;
    floor_fn _floor;
    marks_fn _marks;
    struct gap {
        std::string topic;
        int32_t partition = 0;
        std::string what;
    };
    std::map<std::string, gap> _gaps; ///< by stream key: what check_history found missing
    int64_t floor_of(const std::string& topic, int32_t partition);
    static constexpr size_t max_open_files = 64;
    lru_cache<std::string, std::shared_ptr<open_file>> _open{max_open_files}; ///< by URI, one each
};

} // namespace floe::tiering
