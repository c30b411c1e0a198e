#include "log/cleaner.h"

#include "base/metrics.h"
#include "base/varint.h"
#include "log/compression.h"
#include "log/fs_util.h"
#include "log/offset_map.h"
#include "log/records.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace floe::log {

namespace fs = std::filesystem;

namespace {

struct cleaner_metrics {
    metrics::counter& runs;
    metrics::counter& segments;
    metrics::counter& bytes_read;
    metrics::counter& bytes_written;
    metrics::counter& records_removed;
    metrics::counter& tombstones_removed;
    metrics::gauge& last_run_seconds;
    metrics::gauge& max_dirty_ratio;

    static cleaner_metrics& get() {
        auto& r = metrics::registry::instance();
        static cleaner_metrics m{
            r.counter_family("floe_log_cleaner_runs_total",
                             "Cleaner passes that rewrote a compacted partition.").with({}),
            r.counter_family("floe_log_cleaner_segments_rewritten_total",
                             "Segments the cleaner replaced by their compacted copy.").with({}),
            r.counter_family("floe_log_cleaner_bytes_read_total",
                             "Segment bytes the cleaner read (key maps and rewrites).").with({}),
            r.counter_family("floe_log_cleaner_bytes_written_total",
                             "Bytes of compacted segments the cleaner wrote.").with({}),
            r.counter_family("floe_log_cleaner_records_removed_total",
                             "Records removed by compaction (superseded, keyless, expired tombstones).")
                .with({}),
            r.counter_family("floe_log_cleaner_tombstones_removed_total",
                             "Tombstones removed once their delete horizon passed.").with({}),
            r.gauge_family("floe_log_cleaner_last_run_seconds",
                           "Duration of the cleaner's last pass over a partition.").with({}),
            r.gauge_family("floe_log_cleaner_max_dirty_ratio",
                           "Largest dirty ratio seen among compacted partitions in the last round.")
                .with({}),
        };
        return m;
    }
};

int64_t parse_offset_file(const fs::path& p, int64_t fallback) {
    auto b = read_file(p);
    if (!b) return fallback;
    auto txt = as_chars(*b);
    while (!txt.empty() && (txt.back() == '\n' || txt.back() == ' ')) txt.remove_suffix(1);
    int64_t v = 0;
    auto [ptr, err] = std::from_chars(txt.data(), txt.data() + txt.size(), v);
    if (err != std::errc() || ptr != txt.data() + txt.size() || v < 0) return fallback;
    return v;
}

// Reads the batches of a segment file in bounded chunks, calling fn(header, bytes, position) for
// each. fn returns result<void>; the bytes are valid during the call only.
template<typename Fn>
result<void> for_each_segment_batch(int fd, uint64_t size, Fn&& fn) {
    constexpr size_t chunk = 4u << 20;
    byte_buffer buf;
    uint64_t pos = 0;
    while (pos < size) {
        size_t n = size_t(std::min<uint64_t>(chunk, size - pos));
        buf.resize(n);
        FLOE_TRY(pread_exact(fd, buf.data(), n, pos));
        size_t at = 0;
        while (at < n) {
            auto rest = bytes_view(buf.data() + at, n - at);
            if (rest.size() < batch_layout::header_size) break;
            auto h = FLOE_TRY(parse_batch_header(rest));
            if (h.size_bytes() > rest.size()) {
                if (at == 0) { // a batch larger than the chunk: read it whole
                    if (pos + h.size_bytes() > size)
                        return fail(errc::corrupt, "batch at {} runs past the segment", pos);
                    byte_buffer big(h.size_bytes());
                    FLOE_TRY(pread_exact(fd, big.data(), big.size(), pos));
                    FLOE_TRY(fn(h, bytes_view(big), pos));
                    at = big.size();
                }
                break;
            }
            FLOE_TRY(fn(h, rest.first(h.size_bytes()), pos + at));
            at += h.size_bytes();
        }
        if (at == 0) return fail(errc::corrupt, "segment truncated at {}", pos);
        pos += at;
    }
    return {};
}

struct open_fd {
    int fd = -1;
    open_fd() = default;
    open_fd(const open_fd&) = delete;
    open_fd& operator=(const open_fd&) = delete;
    ~open_fd() { close(); }
    void close() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

result<void> open_readonly(const fs::path& p, open_fd& f) {
    f.fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) return fail(errc::io_error, "open {}: {}", p.string(), std::strerror(errno));
    return {};
}

// The cleaned copy of one segment, written only once something in it changes (an unchanged
// segment costs no write): the unchanged batches before the first change are copied from the
// source then, and the rest streams through a bounded buffer.
struct cleaned_copy {
    fs::path path;
    int src = -1;
    std::function<void(uint64_t)> on_write; // bytes written (throttling)
    open_fd dst;
    byte_buffer pending;
    uint64_t written = 0;
    bool changed = false;

    // The first change, at source position `pos`: everything before it is kept as it is.
    result<void> begin_change(uint64_t pos) {
        dst.fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (dst.fd < 0) return fail(errc::io_error, "create {}: {}", path.string(), std::strerror(errno));
        changed = true;
        byte_buffer buf;
        for (uint64_t at = 0; at < pos;) {
            size_t n = size_t(std::min<uint64_t>(pos - at, 4u << 20));
            buf.resize(n);
            FLOE_TRY(pread_exact(src, buf.data(), n, at));
            FLOE_TRY(append(buf));
            at += n;
        }
        return {};
    }
    result<void> keep(bytes_view batch) { return changed ? append(batch) : result<void>{}; }
    result<void> append(bytes_view b) {
        pending.insert(pending.end(), b.begin(), b.end());
        return pending.size() >= (4u << 20) ? flush() : result<void>{};
    }
    result<void> flush() {
        if (pending.empty()) return {};
        FLOE_TRY(pwrite_all(dst.fd, pending, written));
        written += pending.size();
        if (on_write) on_write(pending.size());
        pending.clear();
        return {};
    }
    result<void> finish() {
        FLOE_TRY(flush());
        if (::fdatasync(dst.fd) != 0)
            return fail(errc::io_error, "fsync {}: {}", path.string(), std::strerror(errno));
        return {};
    }
};

// One record of a batch as the cleaner reads it, parsed in place (nothing is copied): what
// decides its fate (offset, key, null value) and where its bytes after the timestamp delta
// start, so that a kept record is re-framed without decoding its value and headers.
struct record_ref {
    bytes_view body;      // the record after its length varint
    int64_t offset = 0;
    int64_t ts_delta = 0;
    size_t after_ts = 0;  // position in body after the timestamp delta
    bool has_key = false;
    bytes_view key;
    bool tombstone = false;
};

// A zigzag varint of at most 64 bits from [p, end); false when truncated or longer.
inline bool get_varint(const uint8_t*& p, const uint8_t* end, int64_t& out) noexcept {
    if (p != end && *p < 0x80) { // one byte: most lengths and deltas
        out = zigzag_decode(uint64_t(*p++));
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p == end) return false;
        uint8_t b = *p++;
        if (shift == 63 && (b & 0x7e) != 0) return false;
        v |= uint64_t(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            out = zigzag_decode(v);
            return true;
        }
    }
    return false;
}

bool parse_record(const record_batch_header& h, bytes_view body, record_ref& r) noexcept {
    const uint8_t* p = body.data();
    const uint8_t* end = p + body.size();
    if (p == end) return false;
    ++p; // attributes (unused in v2)
    int64_t off_delta = 0, klen = 0, vlen = 0;
    if (!get_varint(p, end, r.ts_delta)) return false;
    r.after_ts = size_t(p - body.data());
    if (!get_varint(p, end, off_delta)) return false;
    if (off_delta < 0 || off_delta > h.last_offset_delta) return false;
    r.offset = h.base_offset + off_delta;
    if (!get_varint(p, end, klen)) return false;
    r.has_key = klen >= 0;
    if (klen >= 0) {
        if (uint64_t(klen) > uint64_t(end - p)) return false;
        r.key = bytes_view(p, size_t(klen));
        p += klen;
    } else if (klen != -1) {
        return false;
    }
    if (!get_varint(p, end, vlen) || vlen < -1) return false;
    r.tombstone = vlen == -1;
    r.body = body;
    return true;
}

// Calls fn(index, record_ref) for each record of a batch's (decompressed) records section.
template<typename Fn>
result<void> for_each_record_ref(const record_batch_header& h, bytes_view data, Fn&& fn) {
    const uint8_t* p = data.data();
    const uint8_t* end = p + data.size();
    record_ref r;
    for (int32_t i = 0; i < h.record_count; ++i) {
        int64_t len = 0;
        if (!get_varint(p, end, len) || len < 0 || uint64_t(len) > uint64_t(end - p))
            return fail(errc::corrupt, "record {} of batch at offset {}: bad length", i, h.base_offset);
        if (!parse_record(h, bytes_view(p, size_t(len)), r))
            return fail(errc::corrupt, "record {} of batch at offset {}: malformed", i, h.base_offset);
        fn(i, r);
        p += len;
    }
    if (p != end)
        return fail(errc::corrupt, "batch at offset {}: {} bytes after {} records", h.base_offset,
                    size_t(end - p), h.record_count);
    return {};
}

// The records of a batch after decompression (the view points into `batch` or `dec`).
result<bytes_view> plain_records(const record_batch_header& h, bytes_view batch,
                                 batch_decompressor& dec) {
    return dec.decompress(h.compression(), batch.subspan(batch_layout::header_size), 256u << 20);
}

// What the map pass learned of one batch of the dirty section: how many of its records are
// still their key's latest (kept up to date as later offsets supersede them), and whether it
// holds records the rewrite must look at one by one even when all are latest.
struct batch_fate {
    int64_t base_offset = 0;
    int32_t live = 0;
    uint8_t flags = 0;
    static constexpr uint8_t has_tombstone = 1, has_keyless = 2, not_mapped = 4;
};

void put_be32(std::span<uint8_t> b, size_t at, uint32_t v) {
    b[at] = uint8_t(v >> 24);
    b[at + 1] = uint8_t(v >> 16);
    b[at + 2] = uint8_t(v >> 8);
    b[at + 3] = uint8_t(v);
}
void put_be16(std::span<uint8_t> b, size_t at, uint16_t v) {
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}
void put_be64(std::span<uint8_t> b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + size_t(i)] = uint8_t(v >> (56 - 8 * i));
}

} // namespace

log_cleaner::log_cleaner(cleaner_options opts)
    : _opts(opts), _clock(opts.clock ? opts.clock : &system_clock_source::instance()),
      _window_start(std::chrono::steady_clock::now()) {}

int64_t log_cleaner::read_checkpoint(const fs::path& dir) {
    return parse_offset_file(dir / partition_log::cleaner_checkpoint_file, 0);
}

void log_cleaner::note_round(double max_dirty_ratio) {
    cleaner_metrics::get().max_dirty_ratio.set(max_dirty_ratio);
}

void log_cleaner::throttle(uint64_t bytes) {
    if (_opts.io_max_bytes_per_second == 0) return;
    _window_bytes += bytes;
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - _window_start).count();
    double due = double(_window_bytes) / double(_opts.io_max_bytes_per_second);
    // Sleep off what is ahead of the budget, in slices so that shutdown is not held up.
    for (double ahead = due - elapsed; ahead > 0 && !stopping(); ahead -= 0.1)
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(ahead, 0.1)));
    if (elapsed > 5) { // a fresh window now and then: idle time is not credit
        _window_start = std::chrono::steady_clock::now();
        _window_bytes = 0;
    }
}

result<clean_stats> log_cleaner::clean(partition_log& p) {
    clean_stats st;
    const auto cfg = p.config();
    if (!cfg.compacted()) {
        st.skipped = "not compacted";
        return st;
    }
    const auto started = std::chrono::steady_clock::now();
    const int64_t now = _clock->now_ms();
    const auto name = fmt::format("{}-{}", p.tp().topic, p.tp().partition);
    auto segs = p.segments();
    if (segs.size() < 2) {
        st.skipped = "no sealed segment";
        return st;
    }
    const int64_t offloaded = p.offloaded_up_to()();
    // Transactions: nothing at or above the last stable offset is cleaned (an open transaction
    // may still commit or abort), and records of aborted transactions never count as a key's
    // latest value: they go, as Kafka's cleaner removes them.
    const int64_t stable = p.last_stable_offset()();
    // Cleanable: sealed segments from the start, never the active one, until one is still
    // within min.compaction.lag.ms, holds offsets at or above the last stable offset, or
    // (tiered) is not yet wholly in the table.
    size_t n_cleanable = 0;
    for (size_t i = 0; i + 1 < segs.size(); ++i) {
        auto& s = segs[i];
        if (!s.sealed) break;
        if (s.next_offset() > stable) break;
        if (cfg.remote_storage_enable && s.next_offset() > offloaded) break;
        int64_t newest = s.max_timestamp_ms >= 0 ? s.max_timestamp_ms : s.created_ms;
        if (cfg.min_compaction_lag_ms > 0 && now - newest < cfg.min_compaction_lag_ms) break;
        ++n_cleanable;
    }
    const int64_t checkpoint = read_checkpoint(p.dir());
    st.first_dirty = st.cleaned_up_to = checkpoint;
    if (n_cleanable == 0) {
        st.skipped = cfg.remote_storage_enable ? "no sealed segment offloaded and past min.compaction.lag.ms"
                                               : "no sealed segment past min.compaction.lag.ms";
        return st;
    }
    uint64_t clean_bytes = 0, dirty_bytes = 0;
    size_t first_dirty = n_cleanable;
    bool lag_due = false;
    for (size_t i = 0; i < n_cleanable; ++i) {
        auto& s = segs[i];
        if (s.base_offset() < checkpoint) {
            clean_bytes += s.size_bytes;
            continue;
        }
        if (first_dirty == n_cleanable) first_dirty = i;
        dirty_bytes += s.size_bytes;
        int64_t oldest = s.first_timestamp_ms >= 0 ? s.first_timestamp_ms : s.created_ms;
        if (cfg.max_compaction_lag_ms != INT64_MAX && now - oldest >= cfg.max_compaction_lag_ms)
            lag_due = true;
    }
    st.dirty_ratio = clean_bytes + dirty_bytes == 0
                         ? 0
                         : double(dirty_bytes) / double(clean_bytes + dirty_bytes);
    if (first_dirty == n_cleanable || dirty_bytes == 0) {
        st.skipped = "nothing dirty";
        return st;
    }
    if (st.dirty_ratio < cfg.min_cleanable_dirty_ratio && !lag_due) {
        st.skipped = fmt::format("dirty ratio {:.3f} below min.cleanable.dirty.ratio {}",
                                 st.dirty_ratio, cfg.min_cleanable_dirty_ratio);
        return st;
    }

    const auto aborted = p.aborted_transactions(kafka_offset(segs[0].base_offset()),
                                                kafka_offset(segs[n_cleanable - 1].next_offset()));
    auto is_aborted = [&](const record_batch_header& h) { return in_aborted_transaction(h, aborted); };

    // 1. The latest offset of each key in the dirty section (bounded by the dedupe buffer),
    // keyed by a digest of the key, and for each batch how many of its records stay latest.
    // Two threads: a reader reads the dirty segments in order, decompresses each batch once,
    // parses its records and digests their keys, a few units ahead (bounded queue); this thread
    // applies the digests to the map in log order and decides where the dirty section ends. The
    // reader only reads, and is joined before the map is used.
    const auto secret = digest_secret::random();
    offset_map latest;
    std::vector<batch_fate> fates;
    size_t end_seg = first_dirty; // exclusive: segments [0, end_seg) get rewritten
    batch_decompressor scratch;
    struct keyed_record {
        key_digest digest;
        int64_t offset;
    };
    constexpr size_t prefetch_distance = 16;
    auto map_bytes = [&] { return latest.memory_bytes() + fates.size() * sizeof(batch_fate); };
    struct map_unit {
        std::vector<batch_fate> fates;     // in log order; live is counted by the applier
        std::vector<uint32_t> ends;        // per batch: the end of its records in `keyed`
        std::vector<keyed_record> keyed;   // digest and offset of each keyed record
        size_t segment = 0;
        bool segment_done = false;         // the last unit of `segment`
        std::optional<error> failed;
        std::string gone;                  // a segment vanished: the pass is skipped
    };
    struct {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<map_unit> units;
        bool cancel = false, finished = false;
    } q;
    constexpr size_t max_units = 4, unit_records = 32768, unit_batches = 4096;
    auto reader = [&] {
        batch_decompressor dec;
        auto push = [&](map_unit&& u) {
            std::unique_lock lk(q.mu);
            q.cv.wait(lk, [&] { return q.cancel || q.units.size() < max_units; });
            if (q.cancel) return false;
            q.units.push_back(std::move(u));
            q.cv.notify_all();
            return true;
        };
        for (size_t i = first_dirty; i < n_cleanable; ++i) {
            if (stopping()) break;
            map_unit u;
            u.segment = i;
            open_fd f;
            if (auto r = open_readonly(segs[i].path, f); !r) {
                u.gone = fmt::format("segment gone while mapping: {}", r.error().message());
                push(std::move(u));
                break;
            }
            bool cancelled = false;
            auto walked = for_each_segment_batch(f.fd, segs[i].size_bytes, [&](const record_batch_header& h,
                                                                                bytes_view b, uint64_t) -> result<void> {
                throttle(b.size());
                batch_fate fate{h.base_offset, 0, 0};
                if (h.is_control() || h.record_count == 0 || is_aborted(h)) {
                    fate.flags = batch_fate::not_mapped;
                } else {
                    auto plain = FLOE_TRY(plain_records(h, b, dec));
                    FLOE_TRY(for_each_record_ref(h, plain, [&](int32_t, const record_ref& rec) {
                        if (rec.tombstone) fate.flags |= batch_fate::has_tombstone;
                        if (!rec.has_key) {
                            fate.flags |= batch_fate::has_keyless;
                            return;
                        }
                        u.keyed.push_back({digest_key(secret, rec.key), rec.offset});
                    }));
                }
                u.fates.push_back(fate);
                u.ends.push_back(uint32_t(u.keyed.size()));
                if (u.keyed.size() >= unit_records || u.fates.size() >= unit_batches) {
                    map_unit next;
                    next.segment = i;
                    std::swap(next, u);
                    if (!push(std::move(next))) {
                        cancelled = true;
                        return fail(errc::shutting_down, "map pass cancelled");
                    }
                }
                return {};
            });
            if (cancelled) break;
            if (!walked) {
                u.failed = std::move(walked).error();
                push(std::move(u));
                break;
            }
            u.segment_done = true;
            if (!push(std::move(u))) break;
        }
        std::lock_guard lk(q.mu);
        q.finished = true;
        q.cv.notify_all();
    };
    std::thread reader_thread(reader);
    auto stop_reader = [&] {
        {
            std::lock_guard lk(q.mu);
            q.cancel = true;
        }
        q.cv.notify_all();
        if (reader_thread.joinable()) reader_thread.join();
    };
    struct joined {
        decltype(stop_reader)& stop;
        ~joined() { stop(); }
    } join_reader{stop_reader};
    std::optional<error> map_failed;
    std::string map_gone;
    for (bool more = true; more;) {
        map_unit u;
        {
            std::unique_lock lk(q.mu);
            q.cv.wait(lk, [&] { return !q.units.empty() || q.finished; });
            if (q.units.empty()) break; // the reader is done
            u = std::move(q.units.front());
            q.units.pop_front();
            q.cv.notify_all();
        }
        if (u.failed) {
            map_failed = std::move(u.failed);
            break;
        }
        if (!u.gone.empty()) {
            map_gone = std::move(u.gone);
            break;
        }
        // The map updates, with the slots of the next digests prefetched.
        latest.reserve_more(u.keyed.size());
        for (size_t k = 0; k < std::min(u.keyed.size(), prefetch_distance); ++k)
            latest.prefetch(u.keyed[k].digest);
        size_t k = 0;
        for (size_t bi = 0; bi < u.fates.size(); ++bi) {
            FLOE_ASSERT(fates.size() < UINT32_MAX, "cleaner: too many batches in one pass");
            const auto ordinal = uint32_t(fates.size());
            fates.push_back(u.fates[bi]);
            int32_t live = 0;
            for (; k < u.ends[bi]; ++k) {
                if (k + prefetch_distance < u.keyed.size())
                    latest.prefetch(u.keyed[k + prefetch_distance].digest);
                uint32_t replaced = 0;
                bool fresh = false;
                if (!latest.put(u.keyed[k].digest, u.keyed[k].offset, ordinal, replaced, fresh))
                    continue;
                ++live;
                if (fresh) continue;
                if (replaced == ordinal) --live;
                else --fates[replaced].live;
            }
            fates[ordinal].live = live;
        }
        if (u.segment_done) {
            st.bytes_read += segs[u.segment].size_bytes;
            end_seg = u.segment + 1;
            // The dirty section ends here when the map is full (at least one segment).
            if (stopping() || map_bytes() >= _opts.dedupe_buffer_bytes) more = false;
        }
    }
    stop_reader();
    if (map_failed) return std::unexpected(std::move(*map_failed));
    if (!map_gone.empty()) {
        st.skipped = std::move(map_gone);
        return st;
    }
    if (end_seg == first_dirty) {
        st.skipped = "stopped";
        return st;
    }
    const int64_t dirty_end = segs[end_seg].base_offset(); // the next segment's base

    // Each producer's last batch (by its last offset) keeps its header even when emptied.
    std::unordered_map<int64_t, int64_t> producer_last;
    for (auto& ps : p.producers())
        if (!ps.recent.empty()) producer_last[ps.producer_id] = ps.recent.back().last_offset;

    // The checkpoint exists before the first swap: recovery then accepts offset gaps.
    if (!fs::exists(p.dir() / partition_log::cleaner_checkpoint_file)) {
        auto txt = fmt::format("{}\n", checkpoint);
        FLOE_TRY(write_file_atomic(p.dir() / partition_log::cleaner_checkpoint_file, as_bytes(txt)));
    }

    // When tombstones cleaned now may go (delete.retention.ms may be as large as INT64_MAX).
    const int64_t new_horizon = cfg.delete_retention_ms > INT64_MAX - now ? INT64_MAX
                                                                         : now + cfg.delete_retention_ms;

    // 2. Rewrite every segment up to the end of the dirty section. A batch of the dirty section
    // whose records were all superseded goes without being decompressed again; one whose records
    // all stay (no tombstone, no keyless record) is copied byte for byte. The others are read
    // record by record and the kept records re-framed: their bytes after the timestamp delta
    // (offset delta, key, value, headers) are copied as they are.
    struct kept_record {
        bytes_view body;
        size_t after_ts;
        int64_t timestamp;
    };
    std::vector<kept_record> kept_recs;
    std::vector<keyed_record> lookups; // digest and latest offset of each keyed record
    std::vector<header_view> header_scratch;
    byte_buffer records, rebuilt;
    size_t next_fate = 0;
    for (size_t i = 0; i < end_seg; ++i) {
        if (stopping()) return st; // checkpoint not moved: the next pass redoes the rest
        auto& s = segs[i];
        open_fd f;
        if (auto r = open_readonly(s.path, f); !r) {
            st.skipped = fmt::format("segment gone while cleaning: {}", r.error().message());
            return st;
        }
        cleaned_copy copy;
        copy.path = p.dir() / fmt::format("{:020}.log.cleaning.tmp", s.base_offset());
        copy.src = f.fd;
        copy.on_write = [&](uint64_t n) { throttle(n); };
        uint64_t removed = 0, tombstones = 0;
        auto rewritten = for_each_segment_batch(f.fd, s.size_bytes, [&](const record_batch_header& h,
                                                                         bytes_view b, uint64_t pos) -> result<void> {
            throttle(b.size());
            st.records_read += uint64_t(h.record_count);
            // The map pass saw the batches of the dirty section in this same order.
            const batch_fate* fate = nullptr;
            if (i >= first_dirty) {
                if (next_fate < fates.size() && fates[next_fate].base_offset == h.base_offset
                    && !(fates[next_fate].flags & batch_fate::not_mapped))
                    fate = &fates[next_fate];
                ++next_fate;
            }
            if (h.is_control()) return copy.keep(b);
            auto producers_last_batch = [&] {
                auto pl = producer_last.find(h.producer_id);
                return h.has_producer_id() && pl != producer_last.end() && pl->second == h.last_offset();
            };
            if (h.record_count == 0) { // an emptied batch kept for its producer's state
                if (producers_last_batch()) return copy.keep(b);
                if (!copy.changed) FLOE_TRY(copy.begin_change(pos));
                return {}; // its producer has written since: it goes
            }
            // No record of the batch stays: it goes, unless it is its producer's last batch,
            // whose header stays with no records (Kafka's rule).
            auto drop_all = [&]() -> result<void> {
                if (!copy.changed) FLOE_TRY(copy.begin_change(pos));
                if (!producers_last_batch()) return {};
                rebuilt.assign(b.begin(), b.begin() + batch_layout::header_size);
                auto e = std::span<uint8_t>(rebuilt);
                put_be32(e, batch_layout::batch_length, uint32_t(batch_layout::min_batch_length));
                put_be16(e, batch_layout::attributes,
                         uint16_t(h.attributes & ~batch_attr::compression_mask));
                put_be32(e, batch_layout::record_count, 0);
                put_be32(e, batch_layout::crc, compute_batch_crc(e));
                return copy.append(rebuilt);
            };
            // Aborted records go, in any section (they are never a key's latest value).
            if (is_aborted(h) || (fate && fate->live == 0)) {
                removed += uint64_t(h.record_count);
                return drop_all();
            }
            if (fate && fate->live == h.record_count
                && !(fate->flags & (batch_fate::has_tombstone | batch_fate::has_keyless)))
                return copy.keep(b);
            const bool has_horizon = h.attributes & batch_attr::delete_horizon;
            const bool horizon_passed = has_horizon && now >= h.base_timestamp;
            auto plain = FLOE_TRY(plain_records(h, b, scratch));
            // Which records stay.
            kept_recs.clear();
            bool kept_tombstone = false;
            int32_t dropped = 0;
            // The key map's answer for every record first (prefetched), then the decisions.
            lookups.clear();
            FLOE_TRY(for_each_record_ref(h, plain, [&](int32_t, const record_ref& rec) {
                if (!rec.has_key) return;
                auto d = digest_key(secret, rec.key);
                latest.prefetch(d);
                lookups.push_back({d, 0});
            }));
            for (auto& l : lookups) l.offset = latest.latest(l.digest);
            size_t next_lookup = 0;
            FLOE_TRY(for_each_record_ref(h, plain, [&](int32_t, const record_ref& rec) {
                // Keyless records have no place in a compacted log.
                bool k = rec.has_key && lookups[next_lookup++].offset <= rec.offset;
                if (k && rec.tombstone && horizon_passed) {
                    k = false;
                    ++tombstones;
                }
                if (!k) {
                    ++dropped;
                    return;
                }
                if (rec.tombstone) kept_tombstone = true;
                kept_recs.push_back({rec.body, rec.after_ts,
                                     h.is_log_append_time() ? h.max_timestamp
                                                            : h.base_timestamp + rec.ts_delta});
            }));
            removed += uint64_t(dropped);
            const bool set_horizon = kept_tombstone && !has_horizon;
            if (dropped == 0 && !set_horizon) return copy.keep(b);
            if (kept_recs.empty()) return drop_all();
            if (!copy.changed) FLOE_TRY(copy.begin_change(pos));
            // Re-frame what stays. A batch holding tombstones carries its delete horizon in the
            // base timestamp (set now if it had none), as Kafka's does; otherwise the base
            // timestamp is the first kept record's, and timestamp deltas follow it.
            const bool horizon = kept_tombstone || has_horizon;
            const int64_t base_ts = horizon ? (has_horizon ? h.base_timestamp : new_horizon)
                                            : kept_recs.front().timestamp;
            int64_t max_ts = -1;
            records.clear();
            for (auto& kr : kept_recs) {
                // A kept record is checked whole (headers included) before its bytes are copied
                // under a new CRC: a malformed one fails the pass, as a full decode would.
                FLOE_TRY(decode_record(h, kr.body, header_scratch));
                max_ts = std::max(max_ts, kr.timestamp);
                auto rest = kr.body.subspan(kr.after_ts);
                const int64_t ts_delta = int64_t(uint64_t(kr.timestamp) - uint64_t(base_ts));
                put_varint(records, int64_t(1 + uvarint_size(zigzag_encode(ts_delta)) + rest.size()));
                records.push_back(0); // attributes
                put_varint(records, ts_delta);
                records.insert(records.end(), rest.begin(), rest.end());
            }
            byte_buffer compressed;
            bytes_view body = records;
            if (h.compression() != compression_codec::none) {
                compressed = FLOE_TRY(compress(h.compression(), records));
                body = compressed;
            }
            // Same base offset, offsets span, leader epoch, producer fields and attributes as
            // the original batch (plus the delete-horizon bit when it holds tombstones).
            rebuilt.assign(b.begin(), b.begin() + batch_layout::header_size);
            rebuilt.insert(rebuilt.end(), body.begin(), body.end());
            auto e = std::span<uint8_t>(rebuilt);
            put_be32(e, batch_layout::batch_length,
                     uint32_t(batch_layout::header_size - batch_layout::log_overhead + body.size()));
            int16_t attrs = h.attributes;
            if (horizon) attrs |= batch_attr::delete_horizon;
            put_be16(e, batch_layout::attributes, uint16_t(attrs));
            put_be64(e, batch_layout::base_timestamp, uint64_t(base_ts));
            put_be64(e, batch_layout::max_timestamp,
                     uint64_t(h.is_log_append_time() ? h.max_timestamp : max_ts));
            put_be32(e, batch_layout::record_count, uint32_t(kept_recs.size()));
            put_be32(e, batch_layout::crc, compute_batch_crc(e));
            return copy.append(rebuilt);
        });
        std::error_code ec;
        if (rewritten && copy.changed) rewritten = copy.finish();
        if (!rewritten) {
            if (copy.changed) fs::remove(copy.path, ec);
            return fail(std::move(rewritten).error().with_context("cleaning {}", s.path.string()));
        }
        st.bytes_read += s.size_bytes;
        if (!copy.changed) continue;
        copy.dst.close();
        auto swapped = p.replace_sealed_segment(s.base_offset, s.size_bytes, copy.path);
        if (!swapped) fs::remove(copy.path, ec);
        if (!FLOE_TRY(std::move(swapped))) {
            st.skipped = fmt::format("segment {} changed while cleaning", s.base_offset());
            return st;
        }
        st.bytes_written += copy.written;
        st.records_removed += removed;
        st.tombstones_removed += tombstones;
        ++st.segments_rewritten;
        auto& m = cleaner_metrics::get();
        m.segments.inc();
        m.records_removed.inc(removed);
        m.tombstones_removed.inc(tombstones);
    }

    auto txt = fmt::format("{}\n", dirty_end);
    FLOE_TRY(write_file_atomic(p.dir() / partition_log::cleaner_checkpoint_file, as_bytes(txt)));
    st.cleaned = true;
    st.cleaned_up_to = dirty_end;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    auto& m = cleaner_metrics::get();
    m.runs.inc();
    m.bytes_read.inc(st.bytes_read);
    m.bytes_written.inc(st.bytes_written);
    m.last_run_seconds.set(secs);
    spdlog::info("log cleaner {}: cleaned offsets below {} (dirty ratio {:.3f}, {} segment(s) "
                 "rewritten, {} of {} records removed, {} tombstone(s) expired, {} -> {} bytes, "
                 "{:.3f}s)",
                 name, dirty_end, st.dirty_ratio, st.segments_rewritten, st.records_removed,
                 st.records_read, st.tombstones_removed, st.bytes_read, st.bytes_written, secs);
    return st;
}

} // namespace floe::log
