#include "log/cleaner.h"

#include "base/metrics.h"
#include "base/varint.h"
#include "log/batch_builder.h"
#include "log/compression.h"
#include "log/fs_util.h"
#include "log/records.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

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

// What the cleaner needs of a record to decide its fate: offset, key, whether the value is
// null. Parsed from the front of the body only (headers are not walked); the full decode happens
// for records that stay, when a batch is re-encoded.
struct record_key {
    int64_t offset = 0;
    std::optional<std::string_view> key;
    bool tombstone = false;
};

result<record_key> peek_record_key(const record_batch_header& h, bytes_view body) {
    byte_reader r(body);
    FLOE_TRY(r.u8()); // attributes
    FLOE_TRY(read_varint(r)); // timestamp delta
    record_key out;
    out.offset = h.base_offset + FLOE_TRY(read_varint(r));
    if (out.offset < h.base_offset || out.offset > h.last_offset())
        return fail(errc::corrupt, "offset {} outside the batch", out.offset);
    int64_t klen = FLOE_TRY(read_varint(r));
    if (klen >= 0) out.key = as_chars(FLOE_TRY(r.bytes(size_t(klen))));
    else if (klen != -1) return fail(errc::corrupt, "key length {}", klen);
    out.tombstone = FLOE_TRY(read_varint(r)) == -1;
    return out;
}

// The records of a batch after decompression (the view points into `batch` or `scratch`).
result<bytes_view> plain_records(const record_batch_header& h, bytes_view batch,
                                 byte_buffer& scratch) {
    auto body = batch.subspan(batch_layout::header_size);
    if (h.compression() == compression_codec::none) return body;
    FLOE_TRY(decompress(h.compression(), body, scratch, 256u << 20));
    return bytes_view(scratch);
}

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

    // 1. The latest offset of each key in the dirty section (bounded by the dedupe buffer).
    std::unordered_map<std::string, int64_t> latest;
    size_t map_bytes = 0;
    size_t end_seg = first_dirty; // exclusive: segments [0, end_seg) get rewritten
    byte_buffer scratch;
    std::vector<header_view> headers;
    std::string keybuf;
    for (size_t i = first_dirty; i < n_cleanable; ++i) {
        if (stopping()) break;
        if (i > first_dirty && map_bytes >= _opts.dedupe_buffer_bytes) break;
        auto& s = segs[i];
        open_fd f;
        if (auto r = open_readonly(s.path, f); !r) {
            st.skipped = fmt::format("segment gone while mapping: {}", r.error().message());
            return st;
        }
        FLOE_TRY(for_each_segment_batch(f.fd, s.size_bytes, [&](const record_batch_header& h,
                                                                 bytes_view b, uint64_t) -> result<void> {
            throttle(b.size());
            if (h.is_control() || h.record_count == 0 || is_aborted(h)) return {};
            auto plain = FLOE_TRY(plain_records(h, b, scratch));
            return for_each_record_body(h, plain, [&](int32_t, bytes_view body) -> result<void> {
                auto rec = FLOE_TRY(peek_record_key(h, body));
                if (!rec.key) return {};
                keybuf.assign(*rec.key);
                auto [it, fresh] = latest.try_emplace(keybuf, rec.offset);
                if (fresh) map_bytes += rec.key->size() + 64;
                else it->second = std::max(it->second, rec.offset);
                return {};
            });
        }));
        st.bytes_read += s.size_bytes;
        end_seg = i + 1;
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

    // 2. Rewrite every segment up to the end of the dirty section.
    batch_builder builder;
    byte_buffer rebuilt;
    std::vector<bool> keep;
    std::vector<batch_builder::header> hs;
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
            const bool aborted_batch = is_aborted(h);
            const bool has_horizon = h.attributes & batch_attr::delete_horizon;
            const bool horizon_passed = has_horizon && now >= h.base_timestamp;
            auto plain = FLOE_TRY(plain_records(h, b, scratch));
            // Pass 1: which records stay.
            keep.assign(size_t(h.record_count), false);
            bool kept_tombstone = false;
            int32_t dropped = 0, kept = 0;
            FLOE_TRY(for_each_record_body(h, plain, [&](int32_t i, bytes_view body) -> result<void> {
                auto rec = FLOE_TRY(peek_record_key(h, body));
                // Keyless records have no place in a compacted log, aborted ones in none.
                bool k = rec.key.has_value() && !aborted_batch;
                if (k) {
                    keybuf.assign(*rec.key);
                    auto it = latest.find(keybuf);
                    if (it != latest.end() && it->second > rec.offset) k = false;
                }
                if (k && rec.tombstone && horizon_passed) {
                    k = false;
                    ++tombstones;
                }
                keep[size_t(i)] = k;
                if (!k) ++dropped;
                else {
                    ++kept;
                    if (rec.tombstone) kept_tombstone = true;
                }
                return {};
            }));
            removed += uint64_t(dropped);
            const bool set_horizon = kept_tombstone && !has_horizon;
            if (dropped == 0 && !set_horizon) return copy.keep(b);
            if (!copy.changed) FLOE_TRY(copy.begin_change(pos));
            if (kept == 0) {
                if (!producers_last_batch()) return {}; // the whole batch goes
                // Its producer's last batch: the header stays, with no records (Kafka's rule).
                rebuilt.assign(b.begin(), b.begin() + batch_layout::header_size);
                auto e = std::span<uint8_t>(rebuilt);
                put_be32(e, batch_layout::batch_length, uint32_t(batch_layout::min_batch_length));
                put_be16(e, batch_layout::attributes,
                         uint16_t(h.attributes & ~batch_attr::compression_mask));
                put_be32(e, batch_layout::record_count, 0);
                put_be32(e, batch_layout::crc, compute_batch_crc(e));
                return copy.append(rebuilt);
            }
            // Pass 2: re-encode what stays. A batch holding tombstones carries its delete
            // horizon in the base timestamp (set now if it had none), as Kafka's does.
            const bool horizon = kept_tombstone || has_horizon;
            builder.begin(h.base_offset, h.compression(), h.producer_id, h.producer_epoch,
                          h.base_sequence,
                          horizon ? std::optional<int64_t>(has_horizon ? h.base_timestamp : new_horizon)
                                  : std::nullopt);
            FLOE_TRY(for_each_record_body(h, plain, [&](int32_t i, bytes_view body) -> result<void> {
                if (!keep[size_t(i)]) return {};
                auto rec = FLOE_TRY(decode_record(h, body, headers));
                hs.clear();
                for (auto& hv : headers) hs.push_back({hv.key, hv.value});
                builder.add(rec.offset, rec.timestamp, rec.key, rec.value, hs);
                return {};
            }));
            rebuilt.clear();
            FLOE_TRY(builder.finish(rebuilt));
            auto e = std::span<uint8_t>(rebuilt);
            // Same offsets span, leader epoch and attributes as the original batch.
            put_be32(e, batch_layout::partition_leader_epoch, uint32_t(h.partition_leader_epoch));
            int16_t attrs = h.attributes;
            if (horizon) attrs |= batch_attr::delete_horizon;
            put_be16(e, batch_layout::attributes, uint16_t(attrs));
            put_be32(e, batch_layout::last_offset_delta, uint32_t(h.last_offset_delta));
            if (h.is_log_append_time()) put_be64(e, batch_layout::max_timestamp, uint64_t(h.max_timestamp));
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
