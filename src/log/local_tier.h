#pragma once
// The local tier as its users see it: the kafka module (Produce, Fetch, ListOffsets, admin
// requests), the storage worker (offload, retention, rolls), the HTTP lookups and the ingest
// mirrors reach a partition's recent records only through `local_tier` and `local_partition`,
// so the embedded segment log (log_manager / partition_log) and other backends (Redis Streams)
// are interchangeable under them. The value types they exchange are declared here too.
//
// Every backend passes the conformance suite in log/testing/local_tier_conformance.{h,cc}.
// Implementations are thread-safe (the broker calls from many asio threads).

#include "base/bytes.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/result.h"
#include "base/uuid.h"
#include "log/record_batch_header.h"
#include "log/topic_config.h"
#include "log/txn_state.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::log {

/// A topic name and partition number.
struct topic_partition {
    std::string topic;
    int32_t partition = 0;
    auto operator<=>(const topic_partition&) const = default;
};

/// An open, read-only view of a segment file that stays valid while any holder keeps it, even
/// after the segment is deleted by retention (the inode lives until the last fd closes).
/// Thread-safe: only pread/sendfile on a fixed fd.
class file_handle {
public:
    explicit file_handle(int fd) noexcept : _fd(fd) {}
    ~file_handle();
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;
    int fd() const noexcept { return _fd; }

private:
    int _fd;
};

/// A byte range holding whole record batches, for Fetch. Either of a segment file (`file` set:
/// hand `fd()`, `position`, `length` to sendfile(2), or call `copy_to` to pread them) or of a
/// buffer in memory (`memory` set: a backend that rebuilds batches, e.g. from Redis stream
/// entries; `position` is then an index into it and there is no fd to sendfile).
struct file_slice {
    std::shared_ptr<const file_handle> file;
    uint64_t position = 0;
    uint32_t length = 0;
    kafka_offset first_offset{0}; ///< base offset of the first batch in the range
    kafka_offset last_offset{0};  ///< last offset of the last batch in the range
    std::shared_ptr<const byte_buffer> memory; ///< set instead of `file` for in-memory batches

    bool in_memory() const noexcept { return memory != nullptr; }
    int fd() const noexcept { return file->fd(); }
    /// Appends the bytes of the range to `out` (pread, or a copy of the memory range).
    /// errc::io_error on failure.
    result<void> copy_to(byte_buffer& out) const;
};

/// Offsets of a partition at one instant. Single replica: high watermark == log end offset;
/// the last stable offset is the first offset of the oldest open transaction (else the HW).
struct partition_offsets {
    kafka_offset log_start{0};  ///< first offset still in the local log
    kafka_offset log_end{0};    ///< next offset to be assigned
    kafka_offset high_watermark{0};
    kafka_offset last_stable{0};
    kafka_offset durable_end{0}; ///< offsets below this are fsynced
};

struct read_options {
    /// Byte budget of the answer. Whole batches only; with `min_one_batch` the first batch is
    /// returned even when larger than the budget (KIP-74), so a consumer always progresses.
    size_t max_bytes = 1 << 20;
    bool min_one_batch = true;
    /// Exclusive upper bound on offsets returned; nullopt means the high watermark.
    std::optional<kafka_offset> max_offset;
};

struct read_result {
    /// In offset order, spanning one or more segments; their concatenation is whole batches,
    /// the first containing the requested offset (it may start before it, as Kafka's does).
    /// Empty when the offset is the log end.
    std::vector<file_slice> slices;
    size_t total_bytes = 0;
    partition_offsets offsets;

    /// Concatenates every slice into `out` (pread). For callers that cannot sendfile.
    result<void> copy_to(byte_buffer& out) const;
};

/// What Produce needs back, and why an append was refused (mapped to Kafka error codes by the
/// kafka module: corrupt -> CORRUPT_MESSAGE, message_too_large -> MESSAGE_TOO_LARGE,
/// invalid_record -> INVALID_RECORD, out_of_order_sequence -> OUT_OF_ORDER_SEQUENCE_NUMBER,
/// invalid_producer_epoch -> INVALID_PRODUCER_EPOCH, duplicate -> NONE with the original offsets,
/// mirror_read_only -> TOPIC_AUTHORIZATION_FAILED).
enum class append_status : uint8_t {
    ok,
    duplicate,              ///< an idempotent retry of a batch already in the log: not re-appended
    corrupt,                ///< a batch is truncated, malformed or fails its CRC
    message_too_large,      ///< a batch is larger than max.message.bytes
    invalid_record,         ///< e.g. magic != 2, or several idempotent batches mixed badly
    out_of_order_sequence,  ///< idempotent producer skipped or reordered sequences
    invalid_producer_epoch, ///< idempotent producer with a stale (fenced) epoch
    mirror_read_only,       ///< append() on a mirror partition: only mirror_append writes it
    below_log_end,          ///< mirror_append of a batch below the log end (already mirrored)
};
std::string_view to_string(append_status s) noexcept;

struct append_result {
    append_status status = append_status::ok;
    kafka_offset base_offset{-1}; ///< first offset assigned (or of the original, on duplicate)
    kafka_offset last_offset{-1};
    int64_t log_append_time_ms = -1; ///< set for LogAppendTime topics, else -1
    kafka_offset log_start_offset{0};
    std::string message; ///< why, when status is not ok/duplicate
};

/// Per producer id: what idempotent-producer checks need. Last few batches kept for
/// duplicate detection, as Kafka keeps 5 (max.in.flight for idempotence).
struct producer_batch_meta {
    int32_t first_seq = -1;
    int32_t last_seq = -1;
    int64_t first_offset = -1;
    int64_t last_offset = -1;
    int64_t timestamp = -1;
};
struct producer_state {
    int64_t producer_id = -1;
    int16_t epoch = -1;
    std::vector<producer_batch_meta> recent; ///< oldest first, at most `max_recent`
    static constexpr size_t max_recent = 5;
    int32_t last_seq() const noexcept { return recent.empty() ? -1 : recent.back().last_seq; }
    int64_t last_timestamp() const noexcept { return recent.empty() ? -1 : recent.back().timestamp; }
};

struct append_options {
    /// The caller already checked every batch's CRC-32C (e.g. while validating the Produce
    /// request): skip the second pass over the bytes. Headers and sizes are still checked.
    bool crc_checked = false;
    /// Set only by append_txn_marker: the records are one control batch holding this marker.
    /// Otherwise control batches are refused (invalid_record).
    std::optional<txn_marker> marker;
};

/// One segment as the storage worker and retention see it.
struct segment_info {
    segment_id id{0};              ///< == base offset
    kafka_offset base_offset{0};
    kafka_offset next_offset{0};   ///< one past the last offset; == base_offset when empty
    uint64_t size_bytes = 0;
    int64_t first_timestamp_ms = -1; ///< smallest batch base timestamp seen (-1 if empty)
    int64_t max_timestamp_ms = -1;   ///< largest batch max timestamp seen (-1 if empty)
    int64_t created_ms = 0;          ///< when the segment was rolled in (drives segment.ms)
    uint32_t batch_count = 0;
    bool sealed = false;             ///< no more appends; immutable on disk and fsynced
    std::filesystem::path path;      ///< the .log file
    kafka_offset last_offset() const noexcept { return next_offset - 1; }
    bool empty() const noexcept { return next_offset == base_offset; }
};

/// The storage worker's lease epoch on a partition (tiering::partition_leases), passed with the
/// writes only the lease holder may do: moving the offload marker and local retention. A backend
/// that keeps the partition's lease beside its data (Redis: a hash in the partition's hash slot)
/// checks the epoch atomically with the write and refuses a stale one with errc::conflict, so a
/// paused former holder moves nothing. nullopt: unfenced (the embedded log, one broker per data
/// dir, holds a global lease and ignores it).
using offload_fence = std::optional<int64_t>;

struct timestamp_lookup {
    kafka_offset offset{-1};
    int64_t timestamp_ms = -1;
};


/// A topic as the metadata store keeps it.
struct topic_info {
    std::string name;
    uuid id;
    int32_t partitions = 0;
    config_map overrides;   ///< per-topic settings (DescribeConfigs source DYNAMIC_TOPIC_CONFIG)
    topic_config config;    ///< effective: defaults overlaid with overrides
    /// Non-empty for a mirror topic: the ingest source it mirrors (e.g. "kafka:orders"). Its
    /// partitions are opened as mirrors: written only by local_partition::mirror_append, Produce
    /// refused. Persisted in topics.json ("mirror_of").
    std::string mirror_of;
    /// The replication factor asked at creation (1 unless CreateTopics asked more). The data is
    /// in the local tier, which every broker sharing it reads: on a shared tier (Redis) with N
    /// brokers, Metadata names that many of the live ones as replicas. Persisted by the Redis tier.
    int16_t replication_factor = 1;
};

/// IncrementalAlterConfigs operation (Kafka's OpType: 0 set, 1 delete, 2 append, 3 subtract).
struct config_op {
    enum class kind : uint8_t { set = 0, remove = 1, append = 2, subtract = 3 };
    std::string key;
    kind op = kind::set;
    std::string value;
};


/// IncrementalAlterConfigs on a topic's overrides: applies `ops` in order (append/subtract on
/// list keys, starting from the key's default when not overridden). errc::invalid_argument for
/// an unknown key or append/subtract on a non-list key. Values are validated by the caller
/// (resolve_topic_config). Shared by every backend.
result<config_map> apply_config_ops(config_map overrides, std::span<const config_op> ops);

/// One partition of the local tier. Offsets are contiguous (mirror partitions: increasing, with
/// the source's gaps; compacted partitions: with the gaps the cleaner leaves); the high
/// watermark is the log end (single replica), the last stable offset the start of the oldest
/// open transaction. A backend without transactions refuses transactional batches and markers
/// and reports no open or aborted transactions (LSO == high watermark).
/// Every method is thread-safe. Handles are shared_ptr: one kept across a topic deletion stays
/// valid, its appends then fail with errc::shutting_down.
class local_partition {
public:
    virtual ~local_partition() = default;

    /// Appends the batches in `records` (whole RecordBatch v2, back to back, as in a Produce
    /// request), patching them in place (baseOffset; LogAppendTime: attributes, maxTimestamp,
    /// CRC). All or nothing: every batch is validated (CRC, size, idempotent producer sequence
    /// and epoch) before any is written. errc::io_error / errc::unavailable when the store
    /// fails (retriable for the producer), errc::shutting_down after close.
    virtual result<append_result> append(std::span<uint8_t> records, const append_options& opts = {}) = 0;
    /// The ingest path of a mirror partition: batches at the offsets they carry (see
    /// partition_log::mirror_append). `mirror_read_only` unless is_mirror().
    virtual result<append_result> mirror_append(bytes_view records) = 0;
    virtual bool is_mirror() const noexcept = 0;

    /// Whole batches starting with the one containing `offset`. errc::out_of_range when
    /// `offset` < log start (the tiered read path takes over) or > log end.
    virtual result<read_result> read(kafka_offset offset, const read_options& opts = {}) const = 0;
    /// ListOffsets by time: the first record with timestamp >= `ts` (exact for uncompressed
    /// batches, the batch's base offset for compressed ones), nullopt if none.
    virtual result<std::optional<timestamp_lookup>> offset_for_timestamp(int64_t ts) const = 0;
    /// The header of the batch holding `offset`; nullopt at or past the log end.
    /// errc::out_of_range below the log start.
    virtual result<std::optional<record_batch_header>> batch_header_at(kafka_offset offset) const = 0;
    /// ListOffsets MAX_TIMESTAMP (-3): the batch holding the largest timestamp.
    virtual std::optional<timestamp_lookup> max_timestamp() const = 0;

    /// The offsets now. A backend that cannot reach its store answers the last ones it read.
    virtual partition_offsets offsets() const = 0;
    /// offsets() as the store has them now, or why not: errc::unavailable / errc::timeout when
    /// a backend cannot reach its store (Redis down). Readers of a tiered topic then serve what
    /// the remote tier holds instead of failing the partition. The embedded log always answers.
    virtual result<partition_offsets> current_offsets() const { return offsets(); }
    /// The offsets last read from the store, without asking it (for answers given while it is
    /// unreachable).
    virtual partition_offsets known_offsets() const { return offsets(); }
    /// The first offset readers may see: the first local record, or the DeleteRecords floor
    /// when that is higher.
    virtual kafka_offset log_start_offset() const = 0;
    /// DeleteRecords (KIP-107): persisted before returning, never moves backwards.
    /// errc::out_of_range when `offset` > log end. Returns the new log start.
    virtual result<kafka_offset> delete_records_before(kafka_offset offset) = 0;
    /// The DeleteRecords floor (0 when never moved): what the remote tier may serve from.
    virtual kafka_offset records_start() const = 0;
    virtual kafka_offset log_end_offset() const = 0;

    /// Makes everything appended so far durable as the backend defines it. Blocking.
    virtual result<void> flush() = 0;
    /// Calls `done` once every offset <= `last_offset` is durable (acks=all): at once if already
    /// so, else from a backend thread. `done` must be cheap (post to an executor).
    virtual void when_durable(kafka_offset last_offset, std::function<void(result<void>)> done) = 0;

    /// Seals the active segment (if not empty) before returning: for the storage worker.
    virtual result<void> roll() = 0;
    /// Rolls when the active segment is older than segment.ms. Housekeeping / storage worker.
    virtual result<bool> maybe_roll_by_time() = 0;
    virtual std::vector<segment_info> segments() const = 0;
    /// Sealed segments only, oldest first: what the storage worker may offload.
    virtual std::vector<segment_info> sealed_segments() const = 0;

    /// Tiering marker: every offset < `next` is safely in the remote tier. Persisted; never
    /// moves backwards (a smaller value is ignored). With a `fence` that is not the partition's
    /// current lease epoch: errc::conflict and nothing moves (see offload_fence).
    virtual result<void> set_offloaded_up_to(kafka_offset next, offload_fence fence = std::nullopt) = 0;
    virtual kafka_offset offloaded_up_to() const = 0;
    /// Moves the marker back to `next` (never below the local log start): the remote tier was
    /// found not to hold what the marker claims. Fenced as set_offloaded_up_to.
    virtual result<void> rewind_offloaded_up_to(kafka_offset next, offload_fence fence = std::nullopt) = 0;
    /// Deletes whole sealed segments past local retention; with remote.storage.enable only
    /// those entirely below offloaded_up_to and below `remote_covers` (nullopt: nothing goes).
    /// Fenced as set_offloaded_up_to (a stale epoch deletes nothing: errc::conflict).
    virtual result<std::vector<segment_info>> apply_retention(std::optional<kafka_offset> remote_covers,
                                                              offload_fence fence = std::nullopt) = 0;

    // ---- transactions (KIP-98) ----
    /// False for a backend that keeps no transactions: the kafka module then refuses
    /// AddPartitionsToTxn (UNSUPPORTED_FOR_MESSAGE_FORMAT) and append() refuses transactional
    /// batches (invalid_record).
    virtual bool supports_transactions() const noexcept = 0;
    /// Appends the control batch ending `producer_id`'s transaction on this partition (COMMIT
    /// or ABORT), as the transaction coordinator does. The marker's epoch must not be below the
    /// producer's (invalid_producer_epoch). Durable once when_durable says so. A backend without
    /// transactions answers errc::unsupported.
    virtual result<append_result> append_txn_marker(int64_t producer_id, int16_t producer_epoch, txn_marker m,
                                                    int32_t coordinator_epoch) = 0;
    /// First offset of the oldest open transaction, else the high watermark: what
    /// read_committed readers see up to (exclusive), and what offload never passes.
    virtual kafka_offset last_stable_offset() const = 0;
    /// Aborted transactions overlapping [from, to), for read_committed Fetch answers and for
    /// the storage worker (which drops their records).
    virtual std::vector<aborted_txn> aborted_transactions(kafka_offset from, kafka_offset to) const = 0;
    /// producer id -> first offset of its open transaction here.
    virtual std::map<int64_t, int64_t> open_transactions() const = 0;

    /// Idempotent-producer state (copies).
    virtual std::optional<producer_state> producer(int64_t producer_id) const = 0;
    virtual std::vector<producer_state> producers() const = 0;

    virtual topic_config config() const = 0;
    virtual const topic_partition& tp() const noexcept = 0;
    virtual const uuid& topic_id() const noexcept = 0;
};

/// Every topic and partition of the local tier, and the topic metadata store (names, ids,
/// partition counts, config overrides, broker-level dynamic defaults). Thread-safe.
class local_tier {
public:
    virtual ~local_tier() = default;

    /// Checks a topic name: 1-249 chars of [a-zA-Z0-9._-], not "." or "..".
    static result<void> validate_topic_name(std::string_view name);
    /// The name under which topics collide: '.', '-' and ':' read as '_'. It is the rule that
    /// names a topic's Iceberg table (lake::table_name_for_topic, which must agree; a tiering
    /// test checks both), so two live topics never share a key: they would share one table.
    static std::string topic_collision_key(std::string_view name);

    /// Creates a topic (CreateTopics, auto-create). `partitions` <= 0 means the default count.
    /// errc::already_exists when the name, or a live topic's collision key equals this one's
    /// (the message names that topic), errc::invalid_argument (name, partitions, config).
    /// With `validate_only` nothing is written. A non-empty `mirror_of` creates a mirror topic.
    /// `replication_factor` is recorded as given (topic_info::replication_factor); the caller
    /// checks it against the live brokers.
    virtual result<topic_info> create_topic(std::string_view name, int32_t partitions,
                                            const config_map& overrides = {}, bool validate_only = false,
                                            std::string_view mirror_of = {}, int16_t replication_factor = 1) = 0;
    /// Removes the topic from the store (durably) and then its data. errc::not_found.
    virtual result<void> delete_topic(std::string_view name) = 0;
    /// Grows a topic to `total` partitions. errc::invalid_argument if not larger.
    virtual result<topic_info> create_partitions(std::string_view name, int32_t total) = 0;
    /// AlterConfigs: replaces all overrides of the topic.
    virtual result<topic_info> alter_topic_config(std::string_view name, const config_map& overrides,
                                                  bool validate_only = false) = 0;
    /// IncrementalAlterConfigs: applies the ops in order (append/subtract on list keys).
    virtual result<topic_info> incremental_alter_topic_config(std::string_view name,
                                                              std::span<const config_op> ops,
                                                              bool validate_only = false) = 0;

    virtual std::optional<topic_info> topic(std::string_view name) const = 0;
    virtual std::optional<topic_info> topic(const uuid& id) const = 0;
    virtual std::vector<topic_info> topics() const = 0;

    /// A partition, nullptr if the topic or partition does not exist. (Non-virtual so that a
    /// backend may offer a same-named accessor returning its own partition type.)
    std::shared_ptr<local_partition> partition(std::string_view topic, int32_t partition) const {
        return find_partition(topic, partition);
    }
    std::shared_ptr<local_partition> partition(const uuid& topic_id, int32_t partition) const {
        return find_partition(topic_id, partition);
    }
    std::shared_ptr<local_partition> partition(const topic_partition& tp) const {
        return find_partition(tp.topic, tp.partition);
    }

    /// floe.topic-defaults.* as configured at start-up (STATIC_BROKER_CONFIG).
    virtual const config_map& topic_defaults() const noexcept = 0;
    /// Broker-level topic defaults changed at run time (DYNAMIC_DEFAULT_BROKER_CONFIG).
    virtual config_map dynamic_topic_defaults() const = 0;
    /// Replaces the dynamic defaults and re-resolves every topic; changes nothing on error.
    virtual result<void> set_dynamic_topic_defaults(const config_map& defaults, bool validate_only = false) = 0;

    /// Where this broker keeps the local tier's files (DescribeLogDirs, log.dirs).
    virtual std::filesystem::path log_dir() const = 0;
    /// Makes every partition durable.
    virtual result<void> flush_all() = 0;
    /// Stops background work, flushes and closes every partition (SIGTERM path). Idempotent.
    virtual result<void> close() = 0;

protected:
    virtual std::shared_ptr<local_partition> find_partition(std::string_view topic, int32_t partition) const = 0;
    virtual std::shared_ptr<local_partition> find_partition(const uuid& topic_id, int32_t partition) const = 0;
};

} // namespace floe::log
