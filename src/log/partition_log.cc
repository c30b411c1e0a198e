#include "log/partition_log.h"

#include "base/crc32c.h"
#include "base/varint.h"
#include "log/fs_util.h"
#include "log/segment_scanner.h"
#include "log/txn_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace floe::log {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// small pieces

file_handle::~file_handle() {
    if (_fd >= 0) ::close(_fd);
}

result<void> file_slice::copy_to(byte_buffer& out) const {
    if (memory) {
        if (position + length > memory->size())
            return fail(errc::io_error, "in-memory slice [{}, +{}) past its buffer of {} bytes", position, length,
                        memory->size());
        out.insert(out.end(), memory->begin() + ptrdiff_t(position), memory->begin() + ptrdiff_t(position + length));
        return {};
    }
    size_t at = out.size();
    out.resize(at + length);
    auto r = pread_exact(file->fd(), out.data() + at, length, position);
    if (!r) out.resize(at);
    return r;
}

result<void> read_result::copy_to(byte_buffer& out) const {
    out.reserve(out.size() + total_bytes);
    for (auto& s : slices) FLOE_TRY(s.copy_to(out));
    return {};
}

std::string_view to_string(append_status s) noexcept {
    switch (s) {
    case append_status::ok: return "ok";
    case append_status::duplicate: return "duplicate";
    case append_status::corrupt: return "corrupt";
    case append_status::message_too_large: return "message_too_large";
    case append_status::invalid_record: return "invalid_record";
    case append_status::out_of_order_sequence: return "out_of_order_sequence";
    case append_status::invalid_producer_epoch: return "invalid_producer_epoch";
    case append_status::mirror_read_only: return "mirror_read_only";
    case append_status::below_log_end: return "below_log_end";
    }
    return "?";
}

namespace {

constexpr uint32_t index_magic = 0x464C4958;    // "FLIX"
constexpr uint32_t timeindex_magic = 0x464C5449; // "FLTI"
constexpr uint32_t snapshot_magic = 0x464C5053;  // "FLPS"
constexpr uint32_t txn_snapshot_magic = 0x464C5458; // "FLTX"

std::string segment_stem(int64_t base) { return fmt::format("{:020}", base); }

struct index_entry {
    int64_t offset;    // base offset of the batch at `position`
    uint64_t position;
};
// All batches before `position` have max timestamp <= `max_ts_before`.
struct time_entry {
    int64_t max_ts_before;
    int64_t offset;
    uint64_t position;
};

// Big-endian helpers over a growing buffer / a reader.
void put_u32(byte_buffer& b, uint32_t v) { byte_writer(b).put_be(v); }
void put_i64(byte_buffer& b, int64_t v) { byte_writer(b).put_be(v); }

int64_t now_of(clock_source* c) { return c->now_ms(); }

} // namespace

// ---------------------------------------------------------------------------------------------
// segment

namespace {
struct segment {
    int64_t base = 0;
    int64_t next = 0;
    uint64_t size = 0; // bytes of whole, written batches
    std::shared_ptr<file_handle> fh;
    std::vector<index_entry> index;
    std::vector<time_entry> tindex;
    uint64_t bytes_since_index = 0;
    uint64_t bytes_since_time = 0;
    int64_t first_ts = -1;
    int64_t max_ts = -1;
    int64_t max_ts_offset = -1;
    int64_t created_ms = 0;
    uint32_t batches = 0;
    bool sealed = false;
    fs::path log_path, index_path, time_path;

    void note_batch(const record_batch_header& h, uint64_t pos, int64_t interval) {
        uint64_t sz = h.size_bytes();
        if (pos > 0 && int64_t(bytes_since_index) >= interval) {
            index.push_back({h.base_offset, pos});
            bytes_since_index = 0;
        }
        bytes_since_index += sz;
        if (pos > 0 && int64_t(bytes_since_time) >= interval) {
            tindex.push_back({max_ts, h.base_offset, pos});
            bytes_since_time = 0;
        }
        bytes_since_time += sz;
        // A cleaned batch with tombstones holds its delete horizon there, not a record's time.
        if (!(h.attributes & batch_attr::delete_horizon) && h.base_timestamp >= 0
            && (first_ts < 0 || h.base_timestamp < first_ts))
            first_ts = h.base_timestamp;
        if (h.max_timestamp > max_ts) {
            max_ts = h.max_timestamp;
            max_ts_offset = h.last_offset();
        }
        ++batches;
    }

    void reset_indexes() {
        index.clear();
        tindex.clear();
        bytes_since_index = bytes_since_time = 0;
        first_ts = max_ts = max_ts_offset = -1;
        batches = 0;
    }

    segment_info info() const {
        segment_info s;
        s.id = segment_id(base);
        s.base_offset = kafka_offset(base);
        s.next_offset = kafka_offset(next);
        s.size_bytes = size;
        s.first_timestamp_ms = first_ts;
        s.max_timestamp_ms = max_ts;
        s.created_ms = created_ms;
        s.batch_count = batches;
        s.sealed = sealed;
        s.path = log_path;
        return s;
    }

    // Index file: magic, version, log size, next offset, batches, first ts, max ts,
    // max ts offset, created ms, n entries, entries (rel offset u32, position u32), crc32c.
    byte_buffer encode_index() const {
        byte_buffer b;
        b.reserve(64 + index.size() * 8);
        put_u32(b, index_magic);
        put_u32(b, 1);
        put_i64(b, int64_t(size));
        put_i64(b, next);
        put_u32(b, batches);
        put_i64(b, first_ts);
        put_i64(b, max_ts);
        put_i64(b, max_ts_offset);
        put_i64(b, created_ms);
        put_u32(b, uint32_t(index.size()));
        for (auto& e : index) {
            put_u32(b, uint32_t(e.offset - base));
            put_u32(b, uint32_t(e.position));
        }
        put_u32(b, crc32c(b));
        return b;
    }
    // Time index file: magic, version, n, entries (ts i64, rel offset u32, position u32), crc.
    byte_buffer encode_timeindex() const {
        byte_buffer b;
        b.reserve(16 + tindex.size() * 16);
        put_u32(b, timeindex_magic);
        put_u32(b, 1);
        put_u32(b, uint32_t(tindex.size()));
        for (auto& e : tindex) {
            put_i64(b, e.max_ts_before);
            put_u32(b, uint32_t(e.offset - base));
            put_u32(b, uint32_t(e.position));
        }
        put_u32(b, crc32c(b));
        return b;
    }

    // Loads both index files; false (and indexes untouched) when missing or not matching the
    // log file exactly, so the caller rebuilds them by scanning.
    bool load_indexes(uint64_t file_size, std::string& why) {
        auto ib = read_file(index_path);
        auto tb = read_file(time_path);
        if (!ib || !tb) {
            why = "index files missing";
            return false;
        }
        auto check_crc = [](const byte_buffer& b) {
            if (b.size() < 4) return false;
            uint32_t stored = (uint32_t(b[b.size() - 4]) << 24) | (uint32_t(b[b.size() - 3]) << 16)
                              | (uint32_t(b[b.size() - 2]) << 8) | uint32_t(b[b.size() - 1]);
            return crc32c(bytes_view(b.data(), b.size() - 4)) == stored;
        };
        if (!check_crc(*ib) || !check_crc(*tb)) {
            why = "index checksum mismatch";
            return false;
        }
        byte_reader r(bytes_view(ib->data(), ib->size() - 4));
        auto parsed = [&]() -> result<bool> {
            if (FLOE_TRY(r.be<uint32_t>()) != index_magic || FLOE_TRY(r.be<uint32_t>()) != 1)
                return false;
            int64_t sz = FLOE_TRY(r.be<int64_t>());
            int64_t nx = FLOE_TRY(r.be<int64_t>());
            uint32_t nb = FLOE_TRY(r.be<uint32_t>());
            int64_t fts = FLOE_TRY(r.be<int64_t>());
            int64_t mts = FLOE_TRY(r.be<int64_t>());
            int64_t mto = FLOE_TRY(r.be<int64_t>());
            int64_t cms = FLOE_TRY(r.be<int64_t>());
            uint32_t n = FLOE_TRY(r.be<uint32_t>());
            if (uint64_t(sz) != file_size || nx < base || r.remaining() != size_t(n) * 8)
                return false;
            std::vector<index_entry> idx;
            idx.reserve(n);
            for (uint32_t i = 0; i < n; ++i) {
                uint32_t ro = FLOE_TRY(r.be<uint32_t>());
                uint32_t pos = FLOE_TRY(r.be<uint32_t>());
                if (pos >= file_size || base + ro >= nx) return false;
                if (!idx.empty() && (pos <= idx.back().position || base + ro <= idx.back().offset))
                    return false;
                idx.push_back({base + int64_t(ro), pos});
            }
            byte_reader t(bytes_view(tb->data(), tb->size() - 4));
            if (FLOE_TRY(t.be<uint32_t>()) != timeindex_magic || FLOE_TRY(t.be<uint32_t>()) != 1)
                return false;
            uint32_t tn = FLOE_TRY(t.be<uint32_t>());
            if (t.remaining() != size_t(tn) * 16) return false;
            std::vector<time_entry> tix;
            tix.reserve(tn);
            for (uint32_t i = 0; i < tn; ++i) {
                int64_t ts = FLOE_TRY(t.be<int64_t>());
                uint32_t ro = FLOE_TRY(t.be<uint32_t>());
                uint32_t pos = FLOE_TRY(t.be<uint32_t>());
                if (pos >= file_size || base + ro >= nx) return false;
                if (!tix.empty() && pos <= tix.back().position) return false;
                tix.push_back({ts, base + int64_t(ro), pos});
            }
            size = uint64_t(sz);
            next = nx;
            batches = nb;
            first_ts = fts;
            max_ts = mts;
            max_ts_offset = mto;
            created_ms = cms;
            index = std::move(idx);
            tindex = std::move(tix);
            return true;
        }();
        if (!parsed || !*parsed) {
            why = "index content does not match the log file";
            return false;
        }
        return true;
    }

    result<void> write_indexes() const {
        FLOE_TRY(write_file_atomic(index_path, encode_index(), false));
        FLOE_TRY(write_file_atomic(time_path, encode_timeindex(), false));
        return {};
    }
};

result<std::unique_ptr<segment>> open_segment_file(const fs::path& dir, int64_t base, bool create) {
    auto s = std::make_unique<segment>();
    s->base = s->next = base;
    auto stem = segment_stem(base);
    s->log_path = dir / (stem + ".log");
    s->index_path = dir / (stem + ".index");
    s->time_path = dir / (stem + ".timeindex");
    int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
    int fd = ::open(s->log_path.c_str(), flags, 0644);
    if (fd < 0)
        return fail(errc::io_error, "open {}: {}", s->log_path.string(), std::strerror(errno));
    s->fh = std::make_shared<file_handle>(fd);
    return s;
}

uint64_t file_size_of(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return 0;
    return uint64_t(st.st_size);
}

// The 27 leading header bytes: base offset, length, epoch, magic, crc, attributes,
// lastOffsetDelta. Enough to walk a segment and know each batch's offsets.
struct batch_peek {
    int64_t base;
    int32_t length;
    int32_t last_delta;
    uint64_t size() const { return batch_layout::log_overhead + uint64_t(length); }
    int64_t last() const { return base + last_delta; }
};

result<batch_peek> peek_batch(int fd, uint64_t pos, uint64_t limit) {
    if (pos + batch_layout::header_size > limit)
        return fail(errc::corrupt, "batch header at {} runs past {}", pos, limit);
    uint8_t b[27];
    FLOE_TRY(pread_exact(fd, b, sizeof b, pos));
    auto pre = FLOE_TRY(parse_batch_prefix(bytes_view(b, sizeof b)));
    int32_t delta = int32_t((uint32_t(b[23]) << 24) | (uint32_t(b[24]) << 16)
                            | (uint32_t(b[25]) << 8) | uint32_t(b[26]));
    batch_peek p{pre.base_offset, pre.batch_length, delta};
    if (p.length < batch_layout::min_batch_length || pos + p.size() > limit || delta < 0)
        return fail(errc::corrupt, "bad batch at {} (length {}, limit {})", pos, p.length, limit);
    return p;
}

// Idempotent-producer bookkeeping shared by append and replay.
void apply_producer_batch(std::map<int64_t, producer_state>& m, const record_batch_header& h,
                          int64_t first_offset) {
    if (!h.has_producer_id()) return;
    auto& st = m[h.producer_id];
    st.producer_id = h.producer_id;
    if (h.producer_epoch != st.epoch) {
        st.epoch = h.producer_epoch;
        st.recent.clear();
    }
    if (h.is_control()) return; // a transaction marker carries no sequence
    st.recent.push_back({h.base_sequence, h.last_sequence(), first_offset,
                         first_offset + h.last_offset_delta, h.max_timestamp});
    if (st.recent.size() > producer_state::max_recent) st.recent.erase(st.recent.begin());
}

} // namespace

// ---------------------------------------------------------------------------------------------
// impl

struct partition_log::impl {
    mutable std::mutex mu;      // segments, offsets, producers, waiters, config, flags
    std::mutex flush_mu;        // one fsync round at a time
    std::vector<std::unique_ptr<segment>> segs; // oldest first; back() is active, never empty
    std::vector<segment*> sealing; // rolled, waiting for flush() to fsync and seal them
    std::map<int64_t, producer_state> producers;
    partition_txn_state txns; // open and aborted transactions (txn_state.h)
    std::vector<std::pair<int64_t, std::function<void(result<void>)>>> waiters;
    int64_t durable_end = 0;
    int64_t offloaded = 0;
    int64_t floor = 0; // DeleteRecords: no reader sees offsets below this
    int64_t unflushed_msgs = 0;
    int64_t last_flush_ms = 0;
    bool flush_requested = false;
    bool closed = false;
    bool failed = false;
    topic_config cfg;
    clock_source* clock = nullptr;

    segment& active() { return *segs.back(); }
    const segment& active() const { return *segs.back(); }
    int64_t log_start() const { return std::max(segs.front()->base, floor); }
    int64_t log_end() const { return segs.back()->next; }
};

partition_log::partition_log(partition_log_options opts)
    : _opts(std::move(opts)), _impl(std::make_unique<impl>()) {
    _impl->cfg = _opts.config;
    _impl->clock = _opts.clock ? _opts.clock : &system_clock_source::instance();
}

partition_log::~partition_log() {
    if (!_impl->closed) (void)close();
}

// ---------------------------------------------------------------------------------------------
// open / recovery

result<std::shared_ptr<partition_log>> partition_log::open(partition_log_options opts) {
    std::error_code ec;
    fs::create_directories(opts.dir, ec);
    if (ec) return fail(errc::io_error, "create {}: {}", opts.dir.string(), ec.message());
    auto p = std::make_shared<partition_log>(std::move(opts));
    auto& I = *p->_impl;
    auto& rep = p->_recovery;
    const auto& dir = p->_opts.dir;
    const int64_t now = now_of(I.clock);
    const std::string name = fmt::format("{}-{}", p->_opts.tp.topic, p->_opts.tp.partition);

    // Collect segment base offsets from *.log names; drop stray temp files.
    std::vector<int64_t> bases;
    for (auto& e : fs::directory_iterator(dir, ec)) {
        auto fn = e.path().filename().string();
        if (fn.ends_with(".tmp")) {
            fs::remove(e.path(), ec);
            continue;
        }
        if (!fn.ends_with(".log") || fn.size() != 24) continue;
        int64_t b = 0;
        auto [ptr, err] = std::from_chars(fn.data(), fn.data() + 20, b);
        if (err == std::errc() && ptr == fn.data() + 20) bases.push_back(b);
    }
    if (ec) return fail(errc::io_error, "list {}: {}", dir.string(), ec.message());
    std::sort(bases.begin(), bases.end());

    std::map<int64_t, producer_state> snap;
    int64_t snap_offset = -1;
    if (auto sb = read_file(dir / "producers.snapshot")) {
        auto decode = [&]() -> result<void> {
            if (sb->size() < 4) return fail(errc::corrupt, "short");
            auto body = bytes_view(sb->data(), sb->size() - 4);
            byte_reader crc_r(bytes_view(sb->data() + sb->size() - 4, 4));
            if (FLOE_TRY(crc_r.be<uint32_t>()) != crc32c(body)) return fail(errc::corrupt, "crc");
            byte_reader r(body);
            if (FLOE_TRY(r.be<uint32_t>()) != snapshot_magic) return fail(errc::corrupt, "magic");
            int64_t off = FLOE_TRY(r.be<int64_t>());
            uint32_t n = FLOE_TRY(r.be<uint32_t>());
            if (size_t(n) > r.remaining() / 11) return fail(errc::corrupt, "count");
            for (uint32_t i = 0; i < n; ++i) {
                producer_state st;
                st.producer_id = FLOE_TRY(r.be<int64_t>());
                st.epoch = FLOE_TRY(r.be<int16_t>());
                uint8_t k = FLOE_TRY(r.u8());
                if (k > producer_state::max_recent) return fail(errc::corrupt, "recent");
                for (uint8_t j = 0; j < k; ++j) {
                    producer_batch_meta m;
                    m.first_seq = FLOE_TRY(r.be<int32_t>());
                    m.last_seq = FLOE_TRY(r.be<int32_t>());
                    m.first_offset = FLOE_TRY(r.be<int64_t>());
                    m.last_offset = FLOE_TRY(r.be<int64_t>());
                    m.timestamp = FLOE_TRY(r.be<int64_t>());
                    st.recent.push_back(m);
                }
                snap[st.producer_id] = std::move(st);
            }
            snap_offset = off;
            return {};
        }();
        if (!decode) {
            spdlog::warn("log {}: ignoring unreadable producer snapshot: {}", name,
                         decode.error().message());
            snap.clear();
            snap_offset = -1;
        }
    }

    // The cleaner writes its checkpoint before it first replaces a segment: from then on
    // batches may skip offsets (records removed) and segments may end below the next one's base.
    const bool gaps = p->_opts.mirror || fs::exists(dir / cleaner_checkpoint_file, ec);

    // Transaction state at the same clean close (a separate file: older data dirs lack it).
    std::optional<partition_txn_state> txn_snap;
    int64_t txn_snap_offset = -1;
    if (auto tb = read_file(dir / "transactions.snapshot")) {
        auto decode = [&]() -> result<void> {
            if (tb->size() < 4) return fail(errc::corrupt, "short");
            auto body = bytes_view(tb->data(), tb->size() - 4);
            byte_reader crc_r(bytes_view(tb->data() + tb->size() - 4, 4));
            if (FLOE_TRY(crc_r.be<uint32_t>()) != crc32c(body)) return fail(errc::corrupt, "crc");
            byte_reader r(body);
            if (FLOE_TRY(r.be<uint32_t>()) != txn_snapshot_magic) return fail(errc::corrupt, "magic");
            txn_snap_offset = FLOE_TRY(r.be<int64_t>());
            txn_snap = FLOE_TRY(partition_txn_state::decode(r));
            return {};
        }();
        if (!decode) {
            spdlog::warn("log {}: ignoring unreadable transaction snapshot: {}", name,
                         decode.error().message());
            txn_snap.reset();
            txn_snap_offset = -1;
        }
    }

    // Open segments; all but the last are trusted if their index files match, else scanned.
    std::vector<std::unique_ptr<segment>> segs;
    for (size_t i = 0; i < bases.size(); ++i) {
        auto s = FLOE_TRY(open_segment_file(dir, bases[i], false));
        uint64_t fsize = file_size_of(s->fh->fd());
        bool last = (i + 1 == bases.size());
        std::string why;
        // Offsets chain from segment to segment; a mirror's may skip forward (source gaps), and
        // so may a compacted partition's once the cleaner has rewritten a segment.
        auto chains = [&](int64_t next, int64_t following) {
            return gaps ? next <= following : next == following;
        };
        bool trusted = !last && s->load_indexes(fsize, why)
                       && (i + 1 >= bases.size() || chains(s->next, bases[i + 1]));
        if (trusted) {
            s->sealed = true;
            segs.push_back(std::move(s));
            ++rep.segments;
            continue;
        }
        // Scan: rebuilds the in-memory indexes and finds the valid prefix.
        s->reset_indexes();
        int64_t first_batch_ts = -1;
        segment* sp = s.get();
        int64_t interval = I.cfg.index_interval_bytes;
        auto out = FLOE_TRY(scan_segment_file(
            s->fh->fd(), fsize, s->base, [&](const record_batch_header& h, uint64_t pos) {
                sp->note_batch(h, pos, interval);
                if (first_batch_ts < 0) first_batch_ts = h.max_timestamp;
            }, gaps));
        rep.batches_scanned += out.batches;
        ++rep.segments;
        s->size = out.valid_bytes;
        s->next = out.next_offset;
        s->created_ms = (first_batch_ts > 0 && first_batch_ts < now) ? first_batch_ts : now;
        bool cut = out.valid_bytes < fsize;
        bool chain_broken = !last && !chains(s->next, bases[i + 1]);
        if (cut) {
            std::string msg = fmt::format(
                "log {}: segment {} cut from {} to {} bytes ({} bytes dropped, next offset {}): {}",
                name, s->log_path.filename().string(), fsize, out.valid_bytes,
                fsize - out.valid_bytes, out.next_offset, out.stop_reason);
            spdlog::warn("{}", msg);
            rep.truncated_bytes += fsize - out.valid_bytes;
            if (!rep.detail.empty()) rep.detail += "; ";
            rep.detail += msg;
            if (::ftruncate(s->fh->fd(), off_t(out.valid_bytes)) != 0)
                return fail(errc::io_error, "truncate {}: {}", s->log_path.string(),
                            std::strerror(errno));
            if (::fdatasync(s->fh->fd()) != 0)
                return fail(errc::io_error, "fsync {}: {}", s->log_path.string(),
                            std::strerror(errno));
        }
        if (!last && !chain_broken && !cut) {
            // A sealed segment whose index was missing or stale: rebuild the files.
            spdlog::info("log {}: rebuilt index of {} ({})", name,
                         s->log_path.filename().string(), why);
            ++rep.indexes_rebuilt;
            s->sealed = true;
            FLOE_TRY(s->write_indexes());
            segs.push_back(std::move(s));
            continue;
        }
        if (!last) {
            // The chain breaks inside an older segment: keep the valid prefix, drop the rest.
            uint64_t dropped = 0;
            for (size_t j = i + 1; j < bases.size(); ++j) {
                auto stem = dir / segment_stem(bases[j]);
                dropped += fs::file_size(fs::path(stem.string() + ".log"), ec);
                fs::remove(fs::path(stem.string() + ".log"), ec);
                fs::remove(fs::path(stem.string() + ".index"), ec);
                fs::remove(fs::path(stem.string() + ".timeindex"), ec);
            }
            std::string msg = fmt::format(
                "log {}: offsets break after {} in {}; removed {} later segment(s) ({} bytes)",
                name, s->next, s->log_path.filename().string(), bases.size() - i - 1, dropped);
            spdlog::warn("{}", msg);
            rep.truncated_bytes += dropped;
            if (!rep.detail.empty()) rep.detail += "; ";
            rep.detail += msg;
            fs::remove(s->index_path, ec);
            fs::remove(s->time_path, ec);
            segs.push_back(std::move(s));
            break;
        }
        // The active segment: its index files are rewritten at the next seal.
        fs::remove(s->index_path, ec);
        fs::remove(s->time_path, ec);
        segs.push_back(std::move(s));
    }
    if (segs.empty()) {
        auto s = FLOE_TRY(open_segment_file(dir, 0, true));
        s->created_ms = now;
        segs.push_back(std::move(s));
        FLOE_TRY(fsync_dir(dir));
    }
    if (segs.back()->batches == 0) segs.back()->created_ms = now;
    if (::fdatasync(segs.back()->fh->fd()) != 0)
        return fail(errc::io_error, "fsync {}: {}", segs.back()->log_path.string(),
                    std::strerror(errno));
    I.segs = std::move(segs);
    I.durable_end = I.log_end();
    I.last_flush_ms = now;

    // Producer state: the snapshot if it is not ahead of the (possibly cut) log, then replay.
    int64_t replay_from = I.log_start();
    if (snap_offset >= 0 && snap_offset <= I.log_end()) {
        I.producers = std::move(snap);
        replay_from = std::max(snap_offset, replay_from);
    }
    // The snapshot describes this run's starting log only: remove it, so that after a crash
    // (log possibly cut and then appended past its offset again) it cannot be mistaken for
    // the state of a different history. close() writes a fresh one.
    fs::remove(dir / "producers.snapshot", ec);
    // Transaction state: the snapshot of the same close, else a replay of the whole local log
    // (open transactions and aborted ones are found from their batches and markers).
    int64_t txn_replay_from = I.log_start();
    if (txn_snap && txn_snap_offset >= 0 && txn_snap_offset == snap_offset
        && txn_snap_offset <= I.log_end()) {
        I.txns = std::move(*txn_snap);
        txn_replay_from = std::max(txn_snap_offset, txn_replay_from);
    }
    fs::remove(dir / "transactions.snapshot", ec);
    const int64_t scan_from = std::min(replay_from, txn_replay_from);
    byte_buffer control;
    for (auto& s : I.segs) {
        if (s->next <= scan_from) continue;
        uint64_t pos = 0;
        for (auto& e : s->index)
            if (e.offset <= scan_from) pos = e.position;
        while (pos < s->size) {
            uint8_t hb[batch_layout::header_size];
            FLOE_TRY(pread_exact(s->fh->fd(), hb, sizeof hb, pos));
            auto h = FLOE_TRY_CTX(parse_batch_header(bytes_view(hb, sizeof hb)),
                                  "replaying producer state of {}", name);
            if (h.base_offset >= replay_from) apply_producer_batch(I.producers, h, h.base_offset);
            if (h.base_offset >= txn_replay_from && h.is_transactional()) {
                std::optional<txn_marker> marker;
                if (h.is_control() && h.size_bytes() <= 4096) {
                    control.resize(h.size_bytes());
                    FLOE_TRY(pread_exact(s->fh->fd(), control.data(), control.size(), pos));
                    auto m = parse_txn_marker(h, control);
                    if (m) marker = *m;
                    else spdlog::warn("log {}: unreadable control batch at offset {}: {}", name,
                                      h.base_offset, m.error().message());
                }
                I.txns.apply_replayed(h, marker, txn_replay_from);
            }
            pos += h.size_bytes();
        }
    }
    I.txns.end_replay();
    I.txns.trim_below(I.log_start());

    // Offloaded marker.
    if (auto ob = read_file(dir / "offloaded")) {
        auto txt = as_chars(*ob);
        while (!txt.empty() && (txt.back() == '\n' || txt.back() == ' ')) txt.remove_suffix(1);
        int64_t v = 0;
        auto [ptr, err] = std::from_chars(txt.data(), txt.data() + txt.size(), v);
        if (err == std::errc() && ptr == txt.data() + txt.size() && v >= 0) I.offloaded = v;
        else spdlog::warn("log {}: ignoring unreadable offloaded marker", name);
    }
    // DeleteRecords floor. A torn tail cut below it (records acknowledged with acks=1 but never
    // fsynced) leaves the floor at the log end, so new appends start at or above it.
    if (auto fb = read_file(dir / "log_start")) {
        auto txt = as_chars(*fb);
        while (!txt.empty() && (txt.back() == '\n' || txt.back() == ' ')) txt.remove_suffix(1);
        int64_t v = 0;
        auto [ptr, err] = std::from_chars(txt.data(), txt.data() + txt.size(), v);
        if (err == std::errc() && ptr == txt.data() + txt.size() && v >= 0)
            I.floor = std::min(v, I.log_end());
        else spdlog::warn("log {}: ignoring unreadable log_start marker", name);
    }
    return p;
}

// ---------------------------------------------------------------------------------------------
// append

namespace {
// Idempotence check of one batch against a producer's state (Kafka's ProducerAppendInfo rules).
append_status check_producer(const producer_state* st, const record_batch_header& h,
                             const producer_batch_meta** dup) {
    if (!st) return append_status::ok; // unknown producer: any sequence starts it
    if (h.producer_epoch < st->epoch) return append_status::invalid_producer_epoch;
    if (h.is_control()) return append_status::ok; // a marker: epoch checked, no sequence
    if (h.producer_epoch != st->epoch) {
        return (h.base_sequence == 0 || st->epoch < 0) ? append_status::ok
                                                       : append_status::out_of_order_sequence;
    }
    for (auto& m : st->recent) {
        if (m.first_seq == h.base_sequence && m.last_seq == h.last_sequence()) {
            *dup = &m;
            return append_status::duplicate;
        }
    }
    if (st->recent.empty()) return append_status::ok;
    int32_t last = st->last_seq();
    bool in_seq = h.base_sequence == last + 1 || (h.base_sequence == 0 && last == INT32_MAX);
    return in_seq ? append_status::ok : append_status::out_of_order_sequence;
}
} // namespace

result<append_result> partition_log::append(std::span<uint8_t> records,
                                            const append_options& opts) {
    auto& I = *_impl;
    append_result res;
    auto reject = [&](append_status s, std::string msg) {
        res.status = s;
        res.message = std::move(msg);
        return res;
    };
    if (records.empty()) return reject(append_status::invalid_record, "empty record set");
    if (_opts.mirror)
        return reject(append_status::mirror_read_only,
                      fmt::format("topic {} is a read-only mirror of an ingest source", tp().topic));

    // Parse and check every batch before taking the lock (CRC work stays outside it).
    struct parsed {
        record_batch_header h;
        size_t pos;
    };
    parsed one[1];
    std::vector<parsed> many;
    std::span<parsed> batches;
    int32_t max_bytes;
    {
        std::lock_guard g(I.mu);
        max_bytes = I.cfg.max_message_bytes;
    }
    {
        size_t pos = 0;
        size_t n = 0;
        while (pos < records.size()) {
            auto rest = bytes_view(records.data() + pos, records.size() - pos);
            auto h = parse_batch_header(rest);
            if (!h) return reject(append_status::corrupt, h.error().message());
            if (h->size_bytes() > rest.size())
                return reject(append_status::corrupt,
                              fmt::format("batch at byte {} needs {} bytes, {} left", pos,
                                          h->size_bytes(), rest.size()));
            if (h->size_bytes() > size_t(std::max(max_bytes, 0)))
                return reject(append_status::message_too_large,
                              fmt::format("batch of {} bytes exceeds max.message.bytes {}",
                                          h->size_bytes(), max_bytes));
            if (!opts.crc_checked && compute_batch_crc(rest.first(h->size_bytes())) != h->crc)
                return reject(append_status::corrupt,
                              fmt::format("batch at byte {} fails its CRC", pos));
            if (h->record_count <= 0 || h->last_offset_delta != h->record_count - 1)
                return reject(append_status::invalid_record,
                              fmt::format("batch at byte {}: {} records but last offset delta {}",
                                          pos, h->record_count, h->last_offset_delta));
            if (h->is_control() != opts.marker.has_value())
                return reject(append_status::invalid_record,
                              opts.marker ? "not a control batch"
                                              : "control batches are written by the coordinator only");
            if (n == 0) one[0] = {*h, pos};
            else {
                if (n == 1) many.push_back(one[0]);
                many.push_back({*h, pos});
            }
            ++n;
            pos += h->size_bytes();
        }
        batches = n == 1 ? std::span<parsed>(one) : std::span<parsed>(many);
    }

    bool want_flush = false;
    {
        std::unique_lock g(I.mu);
        if (I.closed) return fail(errc::shutting_down, "partition {}-{} is closed", tp().topic,
                                  tp().partition);
        if (I.failed)
            return fail(errc::io_error, "partition {}-{} failed an earlier write", tp().topic,
                        tp().partition);
        const int64_t now = now_of(I.clock);

        // Idempotence: checks against state updated batch by batch (a staged copy of the
        // touched producers when there are several batches).
        std::map<int64_t, producer_state> staged;
        for (size_t i = 0; i < batches.size(); ++i) {
            auto& h = batches[i].h;
            if (!h.has_producer_id()) continue;
            const producer_state* st = nullptr;
            if (auto it = staged.find(h.producer_id); it != staged.end()) st = &it->second;
            else if (auto jt = I.producers.find(h.producer_id); jt != I.producers.end())
                st = &jt->second;
            const producer_batch_meta* dup = nullptr;
            auto s = check_producer(st, h, &dup);
            if (s == append_status::duplicate) {
                if (batches.size() != 1)
                    return reject(append_status::invalid_record,
                                  "duplicate idempotent batch inside a multi-batch append");
                res.status = append_status::duplicate;
                res.base_offset = kafka_offset(dup->first_offset);
                res.last_offset = kafka_offset(dup->last_offset);
                res.log_start_offset = kafka_offset(I.log_start());
                res.log_append_time_ms =
                    I.cfg.message_timestamp_type == timestamp_type::log_append_time
                        ? dup->timestamp
                        : -1;
                return res;
            }
            if (s != append_status::ok)
                return reject(s, fmt::format("producer {} epoch {} sequence {}: {}",
                                             h.producer_id, h.producer_epoch, h.base_sequence,
                                             to_string(s)));
            if (batches.size() > 1) {
                if (!staged.contains(h.producer_id))
                    staged[h.producer_id] = st ? *st : producer_state{};
                apply_producer_batch(staged, h, 0);
            }
        }

        // Roll first if this append would overflow the segment or the segment is too old.
        auto* act = &I.active();
        if (act->batches > 0
            && (act->size + records.size() > uint64_t(I.cfg.segment_bytes)
                || now - act->created_ms >= I.cfg.effective_roll_ms())) {
            FLOE_TRY(roll_locked());
            act = &I.active();
            want_flush = true; // seal the old segment soon
        }

        // Assign offsets (and LogAppendTime) in place; the CRC does not cover baseOffset.
        const bool lat = I.cfg.message_timestamp_type == timestamp_type::log_append_time;
        int64_t next = act->next;
        res.base_offset = kafka_offset(next);
        for (auto& b : batches) {
            auto bytes = records.subspan(b.pos, b.h.size_bytes());
            patch_base_offset(bytes, next);
            b.h.base_offset = next;
            if (lat) {
                patch_log_append_time(bytes, now);
                b.h.max_timestamp = now;
                b.h.attributes |= batch_attr::log_append_time;
            }
            next += b.h.last_offset_delta + 1;
        }

        uint64_t at = act->size;
        if (auto w = pwrite_all(act->fh->fd(), records, at); !w) {
            // Leave no partial batch behind; if even that fails, refuse further appends.
            if (::ftruncate(act->fh->fd(), off_t(at)) != 0) I.failed = true;
            return fail(std::move(w).error().with_context("appending to {}",
                                                          act->log_path.string()));
        }
        if (act->batches == 0) act->created_ms = now;
        for (auto& b : batches) {
            act->note_batch(b.h, at + b.pos, I.cfg.index_interval_bytes);
            apply_producer_batch(I.producers, b.h, b.h.base_offset);
            I.txns.apply(b.h, opts.marker);
        }
        act->size = at + records.size();
        act->next = next;
        res.last_offset = kafka_offset(next - 1);
        res.log_append_time_ms = lat ? now : -1;
        res.log_start_offset = kafka_offset(I.log_start());

        I.unflushed_msgs += next - res.base_offset();
        if (I.unflushed_msgs >= I.cfg.flush_messages || now - I.last_flush_ms >= I.cfg.flush_ms)
            want_flush = true;
    }
    if (want_flush) {
        if (_opts.flusher) schedule_flush();
        else FLOE_TRY(flush());
    }
    return res;
}

result<append_result> partition_log::mirror_append(bytes_view records) {
    auto& I = *_impl;
    append_result res;
    auto reject = [&](append_status s, std::string msg) {
        res.status = s;
        res.message = std::move(msg);
        return res;
    };
    if (!_opts.mirror)
        return reject(append_status::mirror_read_only,
                      fmt::format("{}-{} is not a mirror partition", tp().topic, tp().partition));
    if (records.empty()) return reject(append_status::invalid_record, "empty record set");

    struct parsed {
        record_batch_header h;
        size_t pos;
    };
    std::vector<parsed> batches;
    int32_t max_bytes;
    {
        std::lock_guard g(I.mu);
        max_bytes = I.cfg.max_message_bytes;
    }
    // Every batch checked before any is written (CRC work outside the lock).
    for (size_t pos = 0; pos < records.size();) {
        auto rest = bytes_view(records.data() + pos, records.size() - pos);
        auto h = parse_batch_header(rest);
        if (!h) return reject(append_status::corrupt, h.error().message());
        if (h->size_bytes() > rest.size())
            return reject(append_status::corrupt,
                          fmt::format("batch at byte {} needs {} bytes, {} left", pos,
                                      h->size_bytes(), rest.size()));
        if (h->size_bytes() > size_t(std::max(max_bytes, 0)))
            return reject(append_status::message_too_large,
                          fmt::format("batch of {} bytes exceeds max.message.bytes {}",
                                      h->size_bytes(), max_bytes));
        if (compute_batch_crc(rest.first(h->size_bytes())) != h->crc)
            return reject(append_status::corrupt, fmt::format("batch at byte {} fails its CRC", pos));
        if (h->record_count <= 0 || h->last_offset_delta != h->record_count - 1)
            return reject(append_status::invalid_record,
                          fmt::format("batch at byte {}: {} records but last offset delta {}", pos,
                                      h->record_count, h->last_offset_delta));
        if (h->base_offset < 0)
            return reject(append_status::invalid_record,
                          fmt::format("batch at byte {}: negative base offset {}", pos,
                                      h->base_offset));
        if (!batches.empty() && h->base_offset <= batches.back().h.last_offset())
            return reject(append_status::invalid_record,
                          fmt::format("batch at byte {}: base offset {} not above the previous "
                                      "batch's last offset {}",
                                      pos, h->base_offset, batches.back().h.last_offset()));
        batches.push_back({*h, pos});
        pos += h->size_bytes();
    }

    bool want_flush = false;
    {
        std::unique_lock g(I.mu);
        if (I.closed) return fail(errc::shutting_down, "partition {}-{} is closed", tp().topic,
                                  tp().partition);
        if (I.failed)
            return fail(errc::io_error, "partition {}-{} failed an earlier write", tp().topic,
                        tp().partition);
        const int64_t now = now_of(I.clock);
        const int64_t first = batches.front().h.base_offset;
        const int64_t last = batches.back().h.last_offset();
        res.log_start_offset = kafka_offset(I.log_start());
        if (first < I.log_end())
            return reject(append_status::below_log_end,
                          fmt::format("{}-{}: batch at offset {} is below the log end {}",
                                      tp().topic, tp().partition, first, I.log_end()));

        auto* act = &I.active();
        // Index entries hold offsets relative to the segment base in 32 bits.
        const bool too_far = last - act->base > int64_t(INT32_MAX);
        if (act->batches > 0
            && (too_far || act->size + records.size() > uint64_t(I.cfg.segment_bytes)
                || now - act->created_ms >= I.cfg.effective_roll_ms())) {
            FLOE_TRY(roll_locked());
            act = &I.active();
            want_flush = true;
        }
        if (act->batches == 0 && first > act->base) {
            // An empty active segment is re-based at the first mirrored offset, so a mirror
            // starting above 0 (or resuming past a gap) has a segment named after its data.
            auto old = act->log_path;
            auto s = FLOE_TRY(open_segment_file(_opts.dir, first, true));
            s->created_ms = now;
            I.segs.back() = std::move(s);
            std::error_code ec;
            fs::remove(old, ec);
            FLOE_TRY(fsync_dir(_opts.dir));
            act = &I.active();
        }

        uint64_t at = act->size;
        if (auto w = pwrite_all(act->fh->fd(), records, at); !w) {
            if (::ftruncate(act->fh->fd(), off_t(at)) != 0) I.failed = true;
            return fail(std::move(w).error().with_context("appending to {}",
                                                          act->log_path.string()));
        }
        if (act->batches == 0) act->created_ms = now;
        for (auto& b : batches) act->note_batch(b.h, at + b.pos, I.cfg.index_interval_bytes);
        act->size = at + records.size();
        act->next = last + 1;
        res.base_offset = kafka_offset(first);
        res.last_offset = kafka_offset(last);
        int64_t n = 0;
        for (auto& b : batches) n += b.h.record_count;
        I.unflushed_msgs += n;
        if (I.unflushed_msgs >= I.cfg.flush_messages || now - I.last_flush_ms >= I.cfg.flush_ms)
            want_flush = true;
    }
    if (want_flush) {
        if (_opts.flusher) schedule_flush();
        else FLOE_TRY(flush());
    }
    return res;
}

void partition_log::schedule_flush() {
    {
        std::lock_guard g(_impl->mu);
        if (_impl->flush_requested) return;
        _impl->flush_requested = true;
    }
    _opts.flusher->request_flush(shared_from_this());
}

// Starts a new active segment. The old one is sealed (fsynced, index files written, then
// marked sealed) by the next flush(), off the append path: a crash before that leaves it
// without index files, so recovery scans it.
result<void> partition_log::roll_locked() {
    auto& I = *_impl;
    auto& act = I.active();
    if (act.batches == 0) return {};
    auto s = FLOE_TRY(open_segment_file(_opts.dir, act.next, true));
    FLOE_TRY(fsync_dir(_opts.dir));
    I.sealing.push_back(&act);
    s->created_ms = now_of(I.clock);
    I.segs.push_back(std::move(s));
    return {};
}

result<void> partition_log::roll() {
    {
        std::lock_guard g(_impl->mu);
        if (_impl->closed) return fail(errc::shutting_down, "partition closed");
        FLOE_TRY(roll_locked());
    }
    return flush(); // the caller (storage worker) wants the segment sealed on return
}

result<bool> partition_log::maybe_roll_by_time() {
    {
        std::lock_guard g(_impl->mu);
        auto& I = *_impl;
        if (I.closed) return false;
        auto& act = I.active();
        if (act.batches == 0 || now_of(I.clock) - act.created_ms < I.cfg.effective_roll_ms()) return false;
        FLOE_TRY(roll_locked());
    }
    FLOE_TRY(flush());
    return true;
}

// ---------------------------------------------------------------------------------------------
// durability

result<void> partition_log::flush() {
    auto& I = *_impl;
    std::lock_guard fg(I.flush_mu);
    std::shared_ptr<file_handle> fh;
    int64_t target;
    std::vector<segment*> to_seal;
    {
        std::lock_guard g(I.mu);
        I.flush_requested = false;
        fh = I.active().fh;
        target = I.log_end();
        to_seal = I.sealing;
    }
    result<void> r;
    // Rolled segments no longer change (only `sealed` does, under mu), and retention never
    // deletes an unsealed one, so they are read here without the lock.
    for (auto* s : to_seal) {
        if (::fdatasync(s->fh->fd()) != 0) {
            r = fail(errc::io_error, "fsync {}: {}", s->log_path.string(), std::strerror(errno));
            break;
        }
        if (auto w = s->write_indexes(); !w) {
            r = std::move(w);
            break;
        }
    }
    // Always fsync, even if `target` looks durable: a roll may have fsynced an older file
    // while this one still holds dirty pages of an earlier round that failed.
    if (r && ::fdatasync(fh->fd()) != 0)
        r = fail(errc::io_error, "fsync {}-{}: {}", tp().topic, tp().partition,
                 std::strerror(errno));
    std::vector<std::pair<int64_t, std::function<void(result<void>)>>> ready;
    {
        std::lock_guard g(I.mu);
        if (r) {
            for (auto* s : to_seal) s->sealed = true;
            std::erase_if(I.sealing, [&](segment* s) {
                return std::find(to_seal.begin(), to_seal.end(), s) != to_seal.end();
            });
            I.durable_end = std::max(I.durable_end, target);
            I.unflushed_msgs = 0;
            I.last_flush_ms = now_of(I.clock);
        }
        auto keep = I.waiters.begin();
        for (auto it = I.waiters.begin(); it != I.waiters.end(); ++it) {
            if (!r || it->first < I.durable_end) ready.push_back(std::move(*it));
            else *keep++ = std::move(*it);
        }
        I.waiters.erase(keep, I.waiters.end());
    }
    for (auto& [off, fn] : ready) fn(r);
    return r;
}

void partition_log::when_durable(kafka_offset last_offset,
                                 std::function<void(result<void>)> done) {
    auto& I = *_impl;
    {
        std::lock_guard g(I.mu);
        if (last_offset() >= I.durable_end) {
            I.waiters.emplace_back(last_offset(), std::move(done));
            done = nullptr;
        }
    }
    if (done) {
        done(result<void>{});
        return;
    }
    if (_opts.flusher) schedule_flush();
    else (void)flush();
}

bool partition_log::needs_time_flush() const {
    std::lock_guard g(_impl->mu);
    auto& I = *_impl;
    return !I.closed && I.unflushed_msgs > 0
           && now_of(I.clock) - I.last_flush_ms >= I.cfg.flush_ms;
}

// ---------------------------------------------------------------------------------------------
// read

result<read_result> partition_log::read(kafka_offset offset, const read_options& opts) const {
    auto& I = *_impl;
    read_result out;
    std::shared_ptr<file_handle> fh;
    uint64_t start_hint = 0, seg_size = 0, end_hint = 0;
    int64_t seg_next = 0, max_off = 0, end_hint_offset = 0;
    {
        std::lock_guard g(I.mu);
        out.offsets.log_start = kafka_offset(I.log_start());
        out.offsets.log_end = out.offsets.high_watermark = kafka_offset(I.log_end());
        out.offsets.last_stable = kafka_offset(I.txns.last_stable(I.log_end()));
        out.offsets.durable_end = kafka_offset(I.durable_end);
        if (offset() < I.log_start() || offset() > I.log_end())
            return fail(errc::out_of_range, "offset {} outside [{}, {}] of {}-{}", offset(),
                        I.log_start(), I.log_end(), tp().topic, tp().partition);
        max_off = std::min(opts.max_offset ? (*opts.max_offset)() : I.log_end(), I.log_end());
        if (offset() >= max_off) return out;
        // The segment holding `offset`: the last whose base <= offset.
        auto it = std::upper_bound(I.segs.begin(), I.segs.end(), offset(),
                                   [](int64_t o, const auto& s) { return o < s->base; });
        auto sit = it - 1;
        // In a mirror or a compacted log, `offset` may fall in a gap between segments (and
        // cleaned segments may be empty): read from the next one holding anything above it.
        while ((offset() >= (*sit)->next || (*sit)->batches == 0) && std::next(sit) != I.segs.end())
            ++sit;
        auto& s = **sit;
        if (offset() >= s.next) return out; // only possible for an empty active segment
        fh = s.fh;
        seg_size = s.size;
        seg_next = s.next;
        auto ie = std::upper_bound(s.index.begin(), s.index.end(), offset(),
                                   [](int64_t o, const index_entry& e) { return o < e.offset; });
        if (ie != s.index.begin()) start_hint = (ie - 1)->position;
        // For the end: the last index entry within the byte budget counted from start_hint
        // (refined below once the exact start is known) and below max_off. The index is sorted
        // by position and by offset alike, so both bounds are binary searches (a record cap far
        // below a large byte budget must not walk back over thousands of entries).
        uint64_t budget_end = start_hint + opts.max_bytes;
        auto je = std::upper_bound(s.index.begin(), s.index.end(), budget_end,
                                   [](uint64_t p, const index_entry& e) { return p < e.position; });
        je = std::min(je, std::lower_bound(s.index.begin(), s.index.end(), max_off,
                                           [](const index_entry& e, int64_t o) { return e.offset < o; }));
        if (je != s.index.begin()) {
            end_hint = (je - 1)->position;
            end_hint_offset = (je - 1)->offset;
        }
    }

    // Find the batch containing `offset`.
    uint64_t pos = start_hint;
    batch_peek first{};
    for (;;) {
        if (pos >= seg_size)
            return fail(errc::internal, "offset {} not found in segment of {}-{}", offset(),
                        tp().topic, tp().partition);
        first = FLOE_TRY(peek_batch(fh->fd(), pos, seg_size));
        if (first.last() >= offset()) break;
        pos += first.size();
    }
    const uint64_t start = pos;
    const uint64_t budget_end = start + opts.max_bytes;
    uint64_t end = start;
    int64_t last_off = -1;
    if (max_off >= seg_next && budget_end >= seg_size) {
        end = seg_size;
        last_off = seg_next - 1;
    } else {
        uint64_t walk = std::max(start, end_hint <= budget_end ? end_hint : start);
        end = walk;
        // Batches between start and an index entry at `walk` fit the budget and are below
        // max_off; walk on from there.
        while (walk < seg_size) {
            auto b = FLOE_TRY(peek_batch(fh->fd(), walk, seg_size));
            if (b.base >= max_off || walk + b.size() > budget_end) break;
            walk += b.size();
            end = walk;
            last_off = b.last();
        }
        if (end > start && last_off < 0) {
            // Jumped straight to the index entry at `end` and nothing after it fit: offsets
            // are contiguous, so the batch before it ends just below the entry's offset.
            last_off = end_hint_offset - 1;
        }
        if (end == start && opts.min_one_batch) {
            end = start + first.size();
            last_off = first.last();
        }
    }
    if (end > start) {
        out.slices.push_back(file_slice{fh, start, uint32_t(end - start), kafka_offset(first.base),
                                        kafka_offset(last_off)});
        out.total_bytes = end - start;
    }
    return out;
}

namespace {
// Finds the first record with timestamp >= ts in an uncompressed batch.
std::optional<timestamp_lookup> scan_records(bytes_view batch, const record_batch_header& h,
                                             int64_t ts) {
    byte_reader r(batch.subspan(batch_layout::header_size));
    for (int32_t i = 0; i < h.record_count; ++i) {
        auto len = read_varint(r);
        if (!len || *len < 0 || size_t(*len) > r.remaining()) return std::nullopt;
        auto rec = *r.bytes(size_t(*len));
        byte_reader rr(rec);
        if (!rr.u8()) return std::nullopt;
        auto tsd = read_varint(rr);
        auto od = read_varint(rr);
        if (!tsd || !od) return std::nullopt;
        if (h.base_timestamp + *tsd >= ts)
            return timestamp_lookup{kafka_offset(h.base_offset + *od), h.base_timestamp + *tsd};
    }
    return std::nullopt;
}
} // namespace

result<std::optional<record_batch_header>> partition_log::batch_header_at(kafka_offset offset) const {
    if (offset() >= log_end_offset()()) return std::optional<record_batch_header>();
    auto rd = FLOE_TRY(read(offset, {.max_bytes = 1, .min_one_batch = true}));
    if (rd.slices.empty()) return std::optional<record_batch_header>();
    auto& sl = rd.slices.front();
    uint8_t hdr[batch_layout::header_size];
    FLOE_TRY(pread_exact(sl.fd(), hdr, sizeof hdr, sl.position));
    return std::optional<record_batch_header>(FLOE_TRY(parse_batch_header(bytes_view(hdr, sizeof hdr))));
}

result<std::optional<timestamp_lookup>> partition_log::offset_for_timestamp(int64_t ts) const {
    auto& I = *_impl;
    std::shared_ptr<file_handle> fh;
    uint64_t pos = 0, size = 0;
    {
        std::lock_guard g(I.mu);
        const segment* found = nullptr;
        for (auto& s : I.segs)
            if (s->batches > 0 && s->max_ts >= ts) {
                found = s.get();
                break;
            }
        if (!found) return std::optional<timestamp_lookup>{};
        fh = found->fh;
        size = found->size;
        for (auto& e : found->tindex) {
            if (e.max_ts_before < ts) pos = e.position;
            else break;
        }
    }
    byte_buffer buf;
    while (pos < size) {
        uint8_t hb[batch_layout::header_size];
        FLOE_TRY(pread_exact(fh->fd(), hb, sizeof hb, pos));
        auto h = FLOE_TRY(parse_batch_header(bytes_view(hb, sizeof hb)));
        if (h.max_timestamp >= ts) {
            if (h.is_log_append_time())
                return std::optional<timestamp_lookup>(
                    timestamp_lookup{kafka_offset(h.base_offset), h.max_timestamp});
            if (h.compression() == compression_codec::none) {
                buf.resize(h.size_bytes());
                FLOE_TRY(pread_exact(fh->fd(), buf.data(), buf.size(), pos));
                if (auto f = scan_records(buf, h, ts)) return std::optional<timestamp_lookup>(*f);
            }
            return std::optional<timestamp_lookup>(timestamp_lookup{
                kafka_offset(h.base_offset),
                h.base_timestamp >= ts ? h.base_timestamp : h.max_timestamp});
        }
        pos += h.size_bytes();
    }
    return std::optional<timestamp_lookup>{};
}

std::optional<timestamp_lookup> partition_log::max_timestamp() const {
    std::lock_guard g(_impl->mu);
    std::optional<timestamp_lookup> best;
    for (auto& s : _impl->segs)
        if (s->batches > 0 && (!best || s->max_ts > best->timestamp_ms))
            best = timestamp_lookup{kafka_offset(s->max_ts_offset), s->max_ts};
    return best;
}

// ---------------------------------------------------------------------------------------------
// offsets, segments, retention

partition_offsets partition_log::offsets() const {
    std::lock_guard g(_impl->mu);
    partition_offsets o;
    o.log_start = kafka_offset(_impl->log_start());
    o.log_end = o.high_watermark = kafka_offset(_impl->log_end());
    o.last_stable = kafka_offset(_impl->txns.last_stable(_impl->log_end()));
    o.durable_end = kafka_offset(_impl->durable_end);
    return o;
}
kafka_offset partition_log::log_start_offset() const {
    std::lock_guard g(_impl->mu);
    return kafka_offset(_impl->log_start());
}
kafka_offset partition_log::records_start() const {
    std::lock_guard g(_impl->mu);
    return kafka_offset(_impl->floor);
}

result<kafka_offset> partition_log::delete_records_before(kafka_offset offset) {
    auto& I = *_impl;
    std::lock_guard g(I.mu);
    if (I.closed) return fail(errc::shutting_down, "partition closed");
    if (offset() < 0 || offset() > I.log_end())
        return fail(errc::out_of_range, "offset {} outside [0, {}] of {}-{}", offset(), I.log_end(),
                    tp().topic, tp().partition);
    if (offset() > I.floor) {
        auto txt = fmt::format("{}\n", offset());
        FLOE_TRY(write_file_atomic(_opts.dir / "log_start", as_bytes(txt)));
        I.floor = offset();
        spdlog::info("log {}-{}: log start moved to {} (DeleteRecords)", tp().topic, tp().partition,
                     offset());
    }
    return kafka_offset(I.log_start());
}

kafka_offset partition_log::log_end_offset() const {
    std::lock_guard g(_impl->mu);
    return kafka_offset(_impl->log_end());
}

std::vector<segment_info> partition_log::segments() const {
    std::lock_guard g(_impl->mu);
    std::vector<segment_info> v;
    v.reserve(_impl->segs.size());
    for (auto& s : _impl->segs) v.push_back(s->info());
    return v;
}

std::vector<segment_info> partition_log::sealed_segments() const {
    std::lock_guard g(_impl->mu);
    std::vector<segment_info> v;
    for (auto& s : _impl->segs)
        if (s->sealed) v.push_back(s->info());
    return v;
}

result<void> partition_log::set_offloaded_up_to(kafka_offset next, offload_fence) {
    auto& I = *_impl;
    std::lock_guard g(I.mu);
    if (next() <= I.offloaded) return {};
    auto txt = fmt::format("{}\n", next());
    FLOE_TRY(write_file_atomic(_opts.dir / "offloaded", as_bytes(txt)));
    I.offloaded = next();
    return {};
}

kafka_offset partition_log::offloaded_up_to() const {
    std::lock_guard g(_impl->mu);
    return kafka_offset(_impl->offloaded);
}

result<void> partition_log::rewind_offloaded_up_to(kafka_offset next, offload_fence) {
    auto& I = *_impl;
    std::lock_guard g(I.mu);
    int64_t start = I.segs.empty() ? next() : I.segs.front()->base;
    int64_t to = std::max(next(), start);
    if (to >= I.offloaded) return {};
    auto txt = fmt::format("{}\n", to);
    FLOE_TRY(write_file_atomic(_opts.dir / "offloaded", as_bytes(txt)));
    I.offloaded = to;
    return {};
}

result<std::vector<segment_info>> partition_log::apply_retention(std::optional<kafka_offset> remote_covers,
                                                                 offload_fence) {
    auto& I = *_impl;
    std::vector<std::unique_ptr<segment>> doomed;
    std::vector<segment_info> out;
    {
        std::lock_guard g(I.mu);
        if (I.closed) return out;
        const int64_t now = now_of(I.clock);
        const int64_t limit_ms = I.cfg.effective_local_retention_ms();
        const int64_t limit_bytes = I.cfg.effective_local_retention_bytes();
        uint64_t total = 0;
        for (auto& s : I.segs) total += s->size;
        while (I.segs.size() > 1 && I.segs.front()->sealed) {
            auto& s = *I.segs.front();
            // A segment without timestamps ages from when it was rolled in.
            int64_t age_ts = s.max_ts >= 0 ? s.max_ts : s.created_ms;
            // cleanup.policy=compact alone: the cleaner, not retention, bounds the log.
            const bool deletes = I.cfg.deletes();
            bool by_time = deletes && limit_ms >= 0 && now - age_ts > limit_ms;
            bool by_size = deletes && limit_bytes >= 0 && total - s.size >= uint64_t(limit_bytes);
            // Every record below the DeleteRecords floor (an emptied segment counts by its base).
            bool deleted = s.next <= I.floor && s.base < I.floor;
            if (!by_time && !by_size && !deleted) break;
            // Not offloaded yet, or the remote tier does not confirm it holds the segment.
            if (I.cfg.remote_storage_enable
                && (s.next > I.offloaded || !remote_covers || s.next > (*remote_covers)()))
                break;
            total -= s.size;
            out.push_back(s.info());
            doomed.push_back(std::move(I.segs.front()));
            I.segs.erase(I.segs.begin());
        }
        if (!doomed.empty()) I.txns.trim_below(I.log_start());
    }
    // Unlink outside the lock; readers holding a file_handle keep reading the inode.
    std::error_code ec;
    for (auto& s : doomed) {
        fs::remove(s->log_path, ec);
        fs::remove(s->index_path, ec);
        fs::remove(s->time_path, ec);
        spdlog::info("log {}-{}: retention deleted segment {} (offsets {}..{}, {} bytes)",
                     tp().topic, tp().partition, s->log_path.filename().string(), s->base,
                     s->next - 1, s->size);
    }
    if (!doomed.empty()) (void)fsync_dir(_opts.dir);
    return out;
}

// ---------------------------------------------------------------------------------------------
// the cleaner's swap

result<bool> partition_log::replace_sealed_segment(kafka_offset base, uint64_t expected_size,
                                                   const fs::path& cleaned) {
    auto& I = *_impl;
    std::error_code ec;
    // Scan the new file first (outside the lock): whole, CRC-valid batches from `base` on.
    auto fresh = FLOE_TRY(open_segment_file(_opts.dir, base(), false));
    {
        int fd = ::open(cleaned.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return fail(errc::io_error, "open {}: {}", cleaned.string(), std::strerror(errno));
        fresh->fh = std::make_shared<file_handle>(fd);
    }
    int64_t interval;
    {
        std::lock_guard g(I.mu);
        interval = I.cfg.index_interval_bytes;
    }
    const uint64_t fsize = file_size_of(fresh->fh->fd());
    segment* sp = fresh.get();
    auto out = FLOE_TRY(scan_segment_file(
        fresh->fh->fd(), fsize, base(),
        [&](const record_batch_header& h, uint64_t pos) { sp->note_batch(h, pos, interval); },
        /*allow_gaps=*/true));
    if (out.valid_bytes != fsize)
        return fail(errc::corrupt, "cleaned segment {} is not whole batches: {}", cleaned.string(),
                    out.stop_reason);
    fresh->size = fsize;
    fresh->next = out.next_offset;
    fresh->sealed = true;

    std::lock_guard g(I.mu);
    auto it = std::find_if(I.segs.begin(), I.segs.end(),
                           [&](const auto& s) { return s->base == base(); });
    bool same = !I.closed && it != I.segs.end() && std::next(it) != I.segs.end() && (*it)->sealed
                && (*it)->size == expected_size
                && std::find(I.sealing.begin(), I.sealing.end(), it->get()) == I.sealing.end();
    if (!same || out.next_offset > (*it)->next) {
        fs::remove(cleaned, ec);
        return false;
    }
    // Index files go first: a crash after the rename finds the new log without them and
    // rebuilds them by scanning; a crash before it finds the old log without them likewise.
    fs::remove((*it)->index_path, ec);
    fs::remove((*it)->time_path, ec);
    FLOE_TRY(fsync_dir(_opts.dir));
    if (::rename(cleaned.c_str(), (*it)->log_path.c_str()) != 0)
        return fail(errc::io_error, "rename {} over {}: {}", cleaned.string(),
                    (*it)->log_path.string(), std::strerror(errno));
    FLOE_TRY(fsync_dir(_opts.dir));
    fresh->created_ms = (*it)->created_ms;
    // Readers holding the old segment's file handle keep reading the old inode.
    *it = std::move(fresh);
    FLOE_TRY((*it)->write_indexes());
    return true;
}

// ---------------------------------------------------------------------------------------------
// transactions (the state itself is partition_txn_state, txn_state.h)

result<append_result> partition_log::append_txn_marker(int64_t producer_id, int16_t producer_epoch,
                                                       txn_marker m, int32_t coordinator_epoch) {
    auto batch = build_txn_marker_batch(producer_id, producer_epoch, m, coordinator_epoch,
                                        now_of(_impl->clock));
    append_options o;
    o.crc_checked = true;
    o.marker = m;
    return append(std::span<uint8_t>(batch.data(), batch.size()), o);
}

kafka_offset partition_log::last_stable_offset() const {
    std::lock_guard g(_impl->mu);
    return kafka_offset(_impl->txns.last_stable(_impl->log_end()));
}

std::vector<aborted_txn> partition_log::aborted_transactions(kafka_offset from, kafka_offset to) const {
    std::lock_guard g(_impl->mu);
    return _impl->txns.aborted_in(from(), to());
}

std::map<int64_t, int64_t> partition_log::open_transactions() const {
    std::lock_guard g(_impl->mu);
    return _impl->txns.open();
}

// ---------------------------------------------------------------------------------------------
// producers, config, close

std::optional<producer_state> partition_log::producer(int64_t producer_id) const {
    std::lock_guard g(_impl->mu);
    auto it = _impl->producers.find(producer_id);
    if (it == _impl->producers.end()) return std::nullopt;
    return it->second;
}

std::vector<producer_state> partition_log::producers() const {
    std::lock_guard g(_impl->mu);
    std::vector<producer_state> v;
    v.reserve(_impl->producers.size());
    for (auto& [id, st] : _impl->producers) v.push_back(st);
    return v;
}

void partition_log::update_config(const topic_config& cfg) {
    std::lock_guard g(_impl->mu);
    _impl->cfg = cfg;
}

topic_config partition_log::config() const {
    std::lock_guard g(_impl->mu);
    return _impl->cfg;
}

result<void> partition_log::close() {
    auto& I = *_impl;
    {
        std::lock_guard g(I.mu);
        if (I.closed) return {};
    }
    auto fr = flush();
    std::lock_guard g(I.mu);
    if (I.closed) return {};
    I.closed = true;
    // Waiters that raced with close get an answer too.
    auto waiters = std::move(I.waiters);
    I.waiters.clear();
    byte_buffer b;
    put_u32(b, snapshot_magic);
    put_i64(b, I.log_end());
    put_u32(b, uint32_t(I.producers.size()));
    for (auto& [id, st] : I.producers) {
        put_i64(b, id);
        byte_writer(b).put_be<int16_t>(st.epoch);
        b.push_back(uint8_t(st.recent.size()));
        for (auto& m : st.recent) {
            byte_writer(b).put_be<int32_t>(m.first_seq);
            byte_writer(b).put_be<int32_t>(m.last_seq);
            put_i64(b, m.first_offset);
            put_i64(b, m.last_offset);
            put_i64(b, m.timestamp);
        }
    }
    put_u32(b, crc32c(b));
    byte_buffer tb;
    put_u32(tb, txn_snapshot_magic);
    put_i64(tb, I.log_end());
    I.txns.encode(tb);
    put_u32(tb, crc32c(tb));
    // The transaction snapshot first: it is used only beside a producer snapshot of the same
    // log end, so a crash between the two writes falls back to a replay.
    auto sr = fr ? write_file_atomic(_opts.dir / "transactions.snapshot", tb) : result<void>{};
    if (sr) sr = fr ? write_file_atomic(_opts.dir / "producers.snapshot", b) : result<void>{};
    for (auto& [o, fn] : waiters)
        fn(fr ? result<void>(fail(errc::shutting_down, "partition closed")) : fr);
    if (!fr) return fr;
    return sr;
}

result<void> partition_log::remove() {
    (void)close();
    std::error_code ec;
    fs::remove_all(_opts.dir, ec);
    if (ec) return fail(errc::io_error, "remove {}: {}", _opts.dir.string(), ec.message());
    return {};
}

} // namespace floe::log
