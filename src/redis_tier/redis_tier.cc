#include "redis_tier/redis_tier.h"

#include "base/clock.h"
#include "log/batch_builder.h"
#include "log/compression.h"
#include "log/record_batch_header.h"
#include "log/records.h"
#include "redis_tier/functions_lua.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <set>
#include <mutex>
#include <shared_mutex>
#include <thread>

namespace floe::redis_tier {

using namespace floe::log;

std::string_view library_version() noexcept { return functions_lua_version; }

namespace {

constexpr std::string_view k_library = "floe_tier";

int64_t now_ms() { return system_clock_source::instance().now_ms(); }

int64_t to_i64(std::string_view s, int64_t d = 0) {
    int64_t v = d;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() ? v : d;
}

/// Redis errors reach Kafka as retriable errors: errc::unavailable / errc::timeout stay what they
/// are (KAFKA_STORAGE_ERROR / REQUEST_TIMED_OUT), anything else the server said is io_error.
error tier_error(const error& e, std::string_view what) {
    auto code = e.code() == errc::unavailable || e.code() == errc::timeout ? e.code() : errc::io_error;
    return error(code, fmt::format("redis local tier: {}: {}", what, e.message()));
}

/// Header encoding of one record in the stream's `headers` field: for each header
/// "<key length>:<key><value length>:<value>", a null value written as "-:". Text headers stay
/// readable in redis-cli; any bytes round-trip.
void encode_headers(const std::vector<header_view>& hs, std::string& out) {
    out.clear();
    for (auto& h : hs) {
        fmt::format_to(std::back_inserter(out), "{}:", h.key.size());
        out.append(h.key);
        if (!h.value) {
            out.append("-:");
            continue;
        }
        fmt::format_to(std::back_inserter(out), "{}:", h.value->size());
        out.append(*h.value);
    }
}

result<void> decode_headers(std::string_view in, std::vector<batch_builder::header>& out) {
    out.clear();
    auto take_len = [&](std::optional<size_t>& len) -> result<void> {
        auto c = in.find(':');
        if (c == std::string_view::npos) return fail(errc::corrupt, "headers field: missing ':'");
        auto digits = in.substr(0, c);
        in.remove_prefix(c + 1);
        if (digits == "-") {
            len.reset();
            return {};
        }
        size_t v = 0;
        auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || v > in.size())
            return fail(errc::corrupt, "headers field: bad length '{}'", digits);
        len = v;
        return {};
    };
    while (!in.empty()) {
        std::optional<size_t> kl, vl;
        FLOE_TRY(take_len(kl));
        if (!kl) return fail(errc::corrupt, "headers field: null key");
        auto key = in.substr(0, *kl);
        in.remove_prefix(*kl);
        FLOE_TRY(take_len(vl));
        std::optional<std::string_view> val;
        if (vl) {
            val = in.substr(0, *vl);
            in.remove_prefix(*vl);
        }
        out.push_back({key, val});
    }
    return {};
}

/// One record as read back from a stream entry (views into the reply's bytes).
struct entry_record {
    int64_t offset = -1;
    int64_t timestamp = -1;
    std::string_view id;
    std::optional<std::string_view> key, value;
    std::string_view headers;
};

/// The next entry of an XRANGE answer read in place: [id, [field, value, ...]]. Anything else
/// (another shape, an entry without its offset) is errc::corrupt.
result<entry_record> next_entry(redis::resp_reader& rd) {
    if (FLOE_TRY(rd.next_array()) != 2) return fail(errc::corrupt, "stream entry is not [id, fields]");
    entry_record r;
    r.id = FLOE_TRY(rd.next_string());
    size_t n = FLOE_TRY(rd.next_array());
    if (n % 2) return fail(errc::corrupt, "stream entry {} has an odd number of field items", r.id);
    for (size_t i = 0; i < n; i += 2) {
        auto k = FLOE_TRY(rd.next_string());
        auto v = FLOE_TRY(rd.next_string());
        // Fields in the order the append function writes them, each compared once.
        if (k == "offset") r.offset = redis::parse_decimal(v).value_or(-1);
        else if (k == "timestamp") r.timestamp = redis::parse_decimal(v).value_or(-1);
        else if (k == "key") r.key = v;
        else if (k == "value") r.value = v;
        else if (k == "headers") r.headers = v;
    }
    if (r.offset < 0) return fail(errc::corrupt, "stream entry {} has no offset field", r.id);
    return r;
}

/// What every partition of one tier shares: the client and the options (namespace, replicas).
struct tier_state {
    std::shared_ptr<redis::client> c;
    options opts;
};

/// One partition of the Redis tier. Holds only names and the topic config; every offset, marker
/// and segment lives in Redis (another broker may append), so each call asks it.
class redis_partition final : public local_partition, public std::enable_shared_from_this<redis_partition> {
public:
    redis_partition(std::shared_ptr<tier_state> st, topic_partition tp, uuid id, topic_config cfg, bool mirror = false)
        : _st(std::move(st)), _tp(std::move(tp)), _id(id), _mirror(mirror), _cfg(std::move(cfg)) {
        auto tag = partition_tag(_st->opts.ns, _tp.topic, _tp.partition);
        _meta = tag + ":meta";
        _stream = tag + ":stream";
        _idx = tag + ":idx";
        _prod = tag + ":producers";
        _segs = tag + ":segments";
        _lease = tag + ":lease";
    }

    std::vector<std::string> keys() const { return {_meta, _stream, _idx, _prod, _segs}; }

    void close() { _closed = true; }

    result<append_result> append(std::span<uint8_t> records, const append_options& opts) override {
        if (_mirror) {
            append_result r;
            r.status = append_status::mirror_read_only;
            r.message = fmt::format("topic {} is a read-only mirror of an ingest source", _tp.topic);
            return r;
        }
        return write(records, opts.crc_checked, false);
    }

    /// Produce and mirror appends: validates every batch, then one FCALL floe_tier_append.
    result<append_result> write(std::span<uint8_t> records, bool crc_checked, bool mirror) {
        if (_closed) return fail(errc::shutting_down, "partition {}-{} closed", _tp.topic, _tp.partition);
        auto cfg = config();
        append_result res;
        auto reject = [&](append_status s, std::string msg) {
            res.status = s;
            res.message = std::move(msg);
            return res;
        };
        // Pass 1: validate every batch and collect the arguments of the one server-side call.
        std::vector<std::string> args;
        args.reserve(6 + 64);
        args.push_back(std::to_string(now_ms()));
        args.push_back(std::to_string(cfg.segment_bytes));
        args.push_back(std::to_string(cfg.segment_ms));
        args.push_back(cfg.message_timestamp_type == timestamp_type::log_append_time ? "1" : "0");
        args.push_back(std::to_string(records.size()));
        args.emplace_back(); // batch count, below
        args.emplace_back(); // null flags, below
        args.push_back(mirror ? "1" : "0");
        std::string flags;
        // Each record's value is an argument of its own (a view into the request, or into its
        // decompressed batch); key, headers and timestamp of every record go into one argument,
        // each as a 4-byte little-endian length and its bytes (functions.lua reads them with
        // struct.unpack). README.md says why.
        std::string blob;
        std::vector<std::string_view> values;
        auto put = [&blob](std::string_view v) {
            const uint32_t n = uint32_t(v.size());
            const char len[4] = {char(n), char(n >> 8), char(n >> 16), char(n >> 24)};
            blob.append(len, 4);
            blob.append(v);
        };
        std::vector<size_t> batch_starts;
        // Decompressed batches stay until the call: values are passed as views into them.
        std::deque<byte_buffer> decompressed;
        std::vector<header_view> hs;
        std::string hbuf;
        size_t nbatches = 0;
        bool idempotent = true; ///< every batch has a producer id (a retried call is recognised)
        std::optional<append_result> bad;
        int64_t prev_last = -1;
        auto walked = for_each_batch(bytes_view(records.data(), records.size()), mirror || !crc_checked,
                                     [&](const record_batch_header& h, bytes_view b) {
            if (mirror && (h.base_offset < 0 || h.base_offset <= prev_last)) {
                bad = reject(append_status::invalid_record,
                             fmt::format("batch base offset {} not above the previous batch's last offset {}",
                                         h.base_offset, prev_last));
                return false;
            }
            prev_last = h.last_offset();
            if (h.is_transactional() || h.is_control()) {
                // No transaction state here (no LSO, no aborted index): never store records
                // whose visibility would depend on one. (Ingest mirrors rebuild batches from
                // committed records, so they never carry any.)
                spdlog::warn("redis local tier: {}-{}: transactional batch of producer {} refused: "
                             "transactions are not supported on floe.local.type=redis",
                             _tp.topic, _tp.partition, h.producer_id);
                bad = reject(append_status::invalid_record,
                             "transactional produce is not supported on floe.local.type=redis");
                return false;
            }
            if (h.size_bytes() > size_t(cfg.max_message_bytes)) {
                bad = reject(append_status::message_too_large,
                             fmt::format("batch of {} bytes > max.message.bytes {}", h.size_bytes(),
                                         cfg.max_message_bytes));
                return false;
            }
            if (h.record_count != h.last_offset_delta + 1 || h.record_count <= 0) {
                bad = reject(append_status::invalid_record,
                             fmt::format("batch with {} records and last offset delta {}", h.record_count,
                                         h.last_offset_delta));
                return false;
            }
            bytes_view data = b.subspan(batch_layout::header_size);
            if (h.compression() != compression_codec::none) {
                auto& scratch = decompressed.emplace_back();
                if (auto d = decompress(h.compression(), data, scratch, 64u << 20); !d) {
                    bad = reject(append_status::corrupt, d.error().message());
                    return false;
                }
                data = scratch;
            }
            int64_t min_ts = INT64_MAX, max_ts = -1;
            auto walked_records = for_each_record_body(h, data, [&](int32_t, bytes_view body) -> result<void> {
                auto v = FLOE_TRY(decode_record(h, body, hs));
                flags.push_back(char('0' + (v.key ? 1 : 0) + (v.value ? 2 : 0)));
                encode_headers(hs, hbuf);
                put(v.key ? *v.key : std::string_view());
                values.push_back(v.value ? *v.value : std::string_view());
                put(hbuf);
                char ts[24];
                auto end = std::to_chars(ts, ts + sizeof ts, v.timestamp).ptr;
                put(std::string_view(ts, size_t(end - ts)));
                min_ts = std::min(min_ts, v.timestamp);
                max_ts = std::max(max_ts, v.timestamp);
                return {};
            });
            if (!walked_records) {
                bad = reject(append_status::corrupt, walked_records.error().message());
                return false;
            }
            idempotent = idempotent && !mirror && h.has_producer_id();
            args.push_back(std::to_string(mirror ? -1 : h.producer_id));
            args.push_back(std::to_string(h.producer_epoch));
            args.push_back(std::to_string(h.base_sequence));
            args.push_back(std::to_string(h.has_producer_id() ? h.last_sequence() : -1));
            args.push_back(std::to_string(h.record_count));
            args.push_back(std::to_string(min_ts == INT64_MAX ? -1 : min_ts));
            args.push_back(std::to_string(max_ts));
            args.push_back(std::to_string(h.base_offset));
            batch_starts.push_back(size_t(b.data() - records.data()));
            ++nbatches;
            return true;
        });
        if (bad) return *bad;
        if (!walked) return reject(append_status::corrupt, walked.error().message());
        if (*walked != records.size() || nbatches == 0)
            return reject(append_status::corrupt, "trailing bytes after the last batch");
        args[5] = std::to_string(nbatches);
        args[6] = std::move(flags);
        args.push_back(std::move(blob));

        auto ks = keys();
        std::vector<std::string_view> kv(ks.begin(), ks.end()), av(args.begin(), args.end());
        av.insert(av.end(), values.begin(), values.end());
        auto rep = _st->c->fcall("floe_tier_append", kv, av);
        if (!rep && redis::outcome_unknown(rep.error())) {
            // The connection was lost mid-call (Redis crashed or failed over): the append may have
            // run. Answering an error that says it did not (KAFKA_STORAGE_ERROR) would let an
            // idempotent client re-send the records under a new epoch (librdkafka bumps it when
            // another partition's request comes back out of order), adding them twice. For
            // idempotent batches the function recognises its own batch (a duplicate sequence
            // answers the first offsets), so calling again until Redis answers settles it; else,
            // or when Redis stays away, the answer is "may have been written" (REQUEST_TIMED_OUT).
            if (idempotent) {
                auto until = std::chrono::steady_clock::now() + _st->opts.redis.command_timeout;
                while (!rep && std::chrono::steady_clock::now() < until) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    rep = _st->c->fcall("floe_tier_append", kv, av);
                }
            }
            if (!rep)
                return fail(errc::timeout, "redis local tier: append to {}-{}: the connection to Redis was lost during "
                            "the call, the records may or may not have been written: {}", _tp.topic, _tp.partition,
                            rep.error().message());
        }
        if (!rep) return fail(tier_error(rep.error(), fmt::format("append to {}-{}", _tp.topic, _tp.partition)));
        if (!rep->is_array() || rep->size() != 5)
            return fail(errc::io_error, "redis local tier: unexpected append answer {}", rep->debug_string());
        auto& status = (*rep)[0].str();
        res.base_offset = kafka_offset(to_i64((*rep)[1].str(), -1));
        res.last_offset = kafka_offset(to_i64((*rep)[2].str(), -1));
        res.log_start_offset = kafka_offset(to_i64((*rep)[3].str(), 0));
        res.log_append_time_ms = to_i64((*rep)[4].str(), -1);
        if (status == "ok") {
            if (mirror) return res; // the batches carry the source's offsets already
            // As the embedded log does: the request's batches now carry their offsets.
            int64_t next = res.base_offset();
            for (size_t at : batch_starts) {
                auto h = parse_batch_header(bytes_view(records.data() + at, records.size() - at));
                if (!h) break;
                std::span<uint8_t> batch(records.data() + at, h->size_bytes());
                patch_base_offset(batch, next);
                if (res.log_append_time_ms >= 0) patch_log_append_time(batch, res.log_append_time_ms);
                next += h->record_count;
            }
            return res;
        }
        if (status == "duplicate") {
            res.status = append_status::duplicate;
            return res;
        }
        if (status == "out_of_order_sequence") return reject(append_status::out_of_order_sequence, "out of order sequence");
        if (status == "invalid_producer_epoch") return reject(append_status::invalid_producer_epoch, "stale producer epoch");
        if (status == "below_log_end")
            return reject(append_status::below_log_end, fmt::format("{}-{}: batch below the log end", _tp.topic, _tp.partition));
        if (status == "invalid_record") return reject(append_status::invalid_record, "duplicate idempotent batch inside a multi-batch append");
        return fail(errc::io_error, "redis local tier: unknown append status '{}'", status);
    }

    result<append_result> mirror_append(bytes_view records) override {
        if (!_mirror) {
            append_result r;
            r.status = append_status::mirror_read_only;
            r.message = fmt::format("{}-{} is not a mirror partition", _tp.topic, _tp.partition);
            return r;
        }
        if (records.empty()) {
            append_result r;
            r.status = append_status::invalid_record;
            r.message = "empty record set";
            return r;
        }
        // Nothing is patched for a mirror: the span is only read.
        return write(std::span<uint8_t>(const_cast<uint8_t*>(records.data()), records.size()), false, true);
    }
    bool is_mirror() const noexcept override { return _mirror; }

    /// One round trip: offsets and up to `count` entries from `offset` on, as the answer's
    /// RESP bytes: `entries` is positioned on the first of `count` entries (views into `bytes`).
    struct raw_read {
        int64_t log_start = 0, next = 0;
        redis::raw_reply bytes;
        redis::resp_reader entries{std::string_view()};
        size_t count = 0;
    };

    /// Remembers the entry id of the record before `next_offset`, so that a sequential reader's
    /// next read skips the offset index (a few per partition).
    void remember(int64_t next_offset, std::string_view id) const {
        std::lock_guard g(_mu);
        _hints[next_offset] = std::string(id);
        while (_hints.size() > 64) _hints.erase(_hints.begin());
    }

    /// The entries are read with XRANGE in one pipelined round trip with HMGET of the offsets
    /// (no Lua, the RESP bytes parsed in place). Its start: a sequential reader's next offset
    /// is remembered (`remember`) with the id of the entry before it; any other offset asks
    /// floe_tier_read for the entry id first (offset index), one more round trip.
    result<raw_read> read_entries(int64_t offset, int64_t count) const {
        auto where = [&] { return fmt::format("read of {}-{}", _tp.topic, _tp.partition); };
        auto bad = [&](const error& e) {
            return fail(errc::io_error, "redis local tier: {}: unexpected answer: {}", where(), e.message());
        };
        auto outside = [&](int64_t ls, int64_t next) {
            return fail(errc::out_of_range, "offset {} of {}-{} outside [{}, {}]", offset, _tp.topic, _tp.partition,
                        ls, next);
        };
        std::string from;
        {
            std::lock_guard g(_mu);
            if (auto it = _hints.find(offset); it != _hints.end()) from = "(" + it->second;
        }
        raw_read r;
        if (from.empty()) {
            auto off = std::to_string(offset);
            std::string_view keys[] = {_meta, _idx}, args[] = {off};
            auto rep = _st->c->fcall_raw("floe_tier_read", keys, args);
            if (!rep) return fail(tier_error(rep.error(), where()));
            auto rd = rep->reader();
            std::string_view status;
            auto parsed = [&]() -> result<void> {
                if (FLOE_TRY(rd.next_array()) != 4) return fail(errc::corrupt, "floe_tier_read answered other than 4 items");
                status = FLOE_TRY(rd.next_string());
                r.log_start = FLOE_TRY(rd.next_integer());
                r.next = FLOE_TRY(rd.next_integer());
                from = FLOE_TRY(rd.next_string());
                return {};
            }();
            if (!parsed) return bad(parsed.error());
            if (status == "out_of_range") return outside(r.log_start, r.next);
            if (from.empty()) return r; // the log end: nothing to read
        }
        auto cnt = std::to_string(count);
        std::vector<std::vector<std::string_view>> cmds{{"HMGET", _meta, "start", "floor", "next"},
                                                        {"XRANGE", _stream, from, "+", "COUNT", cnt}};
        auto rep = _st->c->pipeline_raw(_meta, cmds);
        if (!rep) return fail(tier_error(rep.error(), where()));
        for (auto& x : *rep)
            if (x.is_error()) return fail(errc::io_error, "redis local tier: {}: {}", where(), x.error_text());
        auto m = (*rep)[0].reader();
        auto parsed = [&]() -> result<void> {
            if (FLOE_TRY(m.next_array()) != 3) return fail(errc::corrupt, "HMGET answered other than 3 items");
            std::optional<std::string_view> v[3];
            for (auto& x : v) x = FLOE_TRY(m.next_nullable_string());
            r.log_start = std::max(to_i64(v[0].value_or("0")), to_i64(v[1].value_or("0")));
            r.next = to_i64(v[2].value_or("0"));
            r.bytes = (*rep)[1];
            r.entries = r.bytes.reader();
            r.count = FLOE_TRY(r.entries.next_array());
            return {};
        }();
        if (!parsed) return bad(parsed.error());
        // Offsets read with the entries: a trim between the two round trips is seen here.
        if (offset < r.log_start || offset > r.next) return outside(r.log_start, r.next);
        return r;
    }

    partition_offsets offsets_of(int64_t start, int64_t next) const {
        partition_offsets o;
        o.log_start = kafka_offset(start);
        o.log_end = o.high_watermark = o.last_stable = o.durable_end = kafka_offset(next);
        return o;
    }

    /// Batches rebuilt from stream entries: at most `max_records` records per batch, the whole
    /// answer within `max_bytes` (the first batch is always whole when `min_one`).
    result<read_result> read(kafka_offset offset, const read_options& opts) const override {
        const size_t budget = opts.max_bytes;
        int64_t limit = opts.max_offset ? (*opts.max_offset)() : INT64_MAX;
        // Entries to ask for: what the budget holds at the size records of this partition had
        // in the last read, within bounds. Before any read the size is unknown: a few entries
        // only (records may be up to max.message.bytes each, and XRANGE counts entries, not bytes).
        const size_t seen = _record_bytes.load(std::memory_order_relaxed);
        int64_t want = seen ? int64_t(std::clamp<size_t>(budget / std::max<size_t>(16, seen) + 1, 1, 16000))
                            : int64_t(std::clamp<size_t>(budget / 100 + 1, 1, 64));
        if (limit != INT64_MAX) want = std::max<int64_t>(1, std::min(want, limit - offset()));
        auto raw = FLOE_TRY(read_entries(offset(), want));
        read_result out;
        out.offsets = offsets_of(raw.log_start, raw.next);
        if (raw.count == 0) return out;
        auto buf = std::make_shared<byte_buffer>();
        buf->reserve(std::min<size_t>(budget, raw.bytes.bytes().size()) + 1024);
        batch_builder b;
        std::vector<batch_builder::header> hs;
        const bool lat = config().message_timestamp_type == timestamp_type::log_append_time;
        constexpr size_t max_batch_records = 1000, max_batch_bytes = 256u << 10;
        auto finish = [&]() -> result<bool> {
            if (b.records() == 0) return true;
            size_t at = buf->size();
            FLOE_TRY(b.finish(*buf));
            if (lat) {
                auto h = FLOE_TRY(parse_batch_header(bytes_view(buf->data() + at, buf->size() - at)));
                patch_log_append_time(std::span<uint8_t>(buf->data() + at, buf->size() - at), h.max_timestamp);
            }
            if (buf->size() > budget && !(at == 0 && opts.min_one_batch)) {
                buf->resize(at);
                return false;
            }
            return true;
        };
        bool open = false;
        bool full = false;
        int64_t expect = offset();
        // The last record of each finished batch (and its entry id): where the answer ends.
        int64_t kept_last = -1, open_last = -1, records = 0, open_records = 0;
        std::string_view kept_id, open_id;
        auto close_batch = [&]() -> result<bool> {
            auto kept = FLOE_TRY(finish());
            open = false;
            if (kept) {
                kept_last = open_last;
                kept_id = open_id;
                records += open_records;
            }
            open_records = 0;
            return kept;
        };
        for (size_t i = 0; i < raw.count; ++i) {
            auto r = FLOE_TRY_CTX(next_entry(raw.entries), "{}-{}: read at {}", _tp.topic, _tp.partition, offset());
            if (r.offset < expect) continue; // below the asked offset
            expect = r.offset;                // a mirror's gaps are skipped (never in produced topics)
            if (r.offset >= limit) break;
            // About what the record adds to a batch (varints aside).
            const size_t est = 24 + (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0) + r.headers.size();
            if (open && (b.records() >= max_batch_records || b.records_bytes() >= max_batch_bytes
                         || buf->size() + batch_layout::header_size + b.records_bytes() + est > budget)) {
                auto kept = FLOE_TRY(close_batch());
                if (!kept || buf->size() + batch_layout::header_size + est > budget) {
                    full = true;
                    break;
                }
            }
            if (!open) {
                b.begin(r.offset);
                open = true;
            }
            if (r.headers.empty()) hs.clear();
            else FLOE_TRY_CTX(decode_headers(r.headers, hs), "{}-{} offset {}", _tp.topic, _tp.partition, r.offset);
            b.add(r.offset, r.timestamp, r.key, r.value, hs);
            open_last = r.offset;
            open_id = r.id;
            ++open_records;
            ++expect;
        }
        if (open && !full) FLOE_TRY(close_batch()); // a last batch that does not fit is dropped
        if (buf->empty()) return out;
        remember(kept_last + 1, kept_id);
        _record_bytes.store(size_t(buf->size() / size_t(std::max<int64_t>(records, 1))) + 1, std::memory_order_relaxed);
        // Offsets of what was kept: the first batch's base offset and the last record.
        auto first = FLOE_TRY(parse_batch_header(bytes_view(*buf)));
        file_slice sl;
        sl.memory = buf;
        sl.position = 0;
        sl.length = uint32_t(buf->size());
        sl.first_offset = kafka_offset(first.base_offset);
        sl.last_offset = kafka_offset(kept_last);
        out.total_bytes = buf->size();
        out.slices.push_back(std::move(sl));
        return out;
    }

    /// Scans records from `from` until `stop` says so (chunks of entries).
    result<void> scan(int64_t from, const std::function<bool(const entry_record&)>& fn) const {
        int64_t at = from;
        for (;;) {
            auto raw = read_entries(at, 1000);
            if (!raw && raw.error().code() == errc::out_of_range && at < from + 1) {
                // Started below the start: go on from the start.
                auto o = offsets();
                if (at >= o.log_start()) return fail(std::move(raw).error());
                at = o.log_start();
                continue;
            }
            if (!raw) return fail(std::move(raw).error());
            if (raw->count == 0) return {};
            std::string_view last_id;
            for (size_t i = 0; i < raw->count; ++i) {
                auto r = FLOE_TRY(next_entry(raw->entries));
                if (r.offset < at) continue;
                if (!fn(r)) return {};
                at = r.offset + 1;
                last_id = r.id;
            }
            if (!last_id.empty()) remember(at, last_id);
            if (at >= raw->next) return {};
        }
    }

    result<std::optional<timestamp_lookup>> offset_for_timestamp(int64_t ts) const override {
        // Segments whose max timestamp is below `ts` hold nothing for it: start at the first
        // one that may.
        int64_t from = offsets().log_start();
        for (auto& s : segments()) {
            if (s.max_timestamp_ms >= ts || s.empty()) break;
            from = s.next_offset();
        }
        std::optional<timestamp_lookup> hit;
        FLOE_TRY(scan(from, [&](const entry_record& r) {
            if (r.timestamp >= ts) {
                hit = timestamp_lookup{kafka_offset(r.offset), r.timestamp};
                return false;
            }
            return true;
        }));
        return hit;
    }

    result<std::optional<record_batch_header>> batch_header_at(kafka_offset offset) const override {
        auto rd = FLOE_TRY(read(offset, {.max_bytes = 1, .min_one_batch = true}));
        if (rd.slices.empty()) return std::optional<record_batch_header>();
        byte_buffer b;
        FLOE_TRY(rd.copy_to(b));
        return std::optional<record_batch_header>(FLOE_TRY(parse_batch_header(b)));
    }

    result<std::map<std::string, std::string>> meta() const {
        auto rep = _st->c->command({"HGETALL", _meta});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("metadata of {}-{}", _tp.topic, _tp.partition)));
        std::map<std::string, std::string> m;
        for (size_t i = 0; i + 1 < rep->size(); i += 2) m[(*rep)[i].str()] = (*rep)[i + 1].str();
        return m;
    }
    static int64_t field(const std::map<std::string, std::string>& m, const char* k, int64_t d = 0) {
        auto it = m.find(k);
        return it == m.end() ? d : to_i64(it->second, d);
    }

    std::optional<timestamp_lookup> max_timestamp() const override {
        auto m = meta();
        if (!m) return std::nullopt;
        int64_t off = field(*m, "max_ts_off", -1);
        if (off < 0 || off < offsets().log_start()) return std::nullopt;
        return timestamp_lookup{kafka_offset(off), field(*m, "max_ts", -1)};
    }

    partition_offsets offsets() const override {
        auto o = current_offsets();
        return o ? *o : known_offsets();
    }
    /// The three fields the offsets come from (HMGET, not HGETALL of the ~15 fields of the
    /// metadata: a Fetch asks for them once per partition, so this is a per-request cost).
    result<partition_offsets> current_offsets() const override {
        auto rep = _st->c->command({"HMGET", _meta, "start", "floor", "next"});
        if (!rep)
            return fail(
                tier_error(rep.error(), fmt::format("offsets of {}-{}", _tp.topic, _tp.partition)));
        if (!rep->is_array() || rep->size() != 3)
            return fail(errc::io_error, "redis local tier: unexpected offsets answer {}",
                        rep->debug_string());
        auto num = [&](size_t i) {
            return (*rep)[i].is_string() ? to_i64((*rep)[i].str(), 0) : int64_t(0);
        };
        const int64_t start = num(0), floor = num(1), next = num(2);
        auto o = offsets_of(std::max(start, floor), next);
        std::lock_guard g(_mu);
        _last_offsets = o;
        _last_floor = floor;
        return o;
    }
    partition_offsets known_offsets() const override {
        std::lock_guard g(_mu);
        return _last_offsets;
    }
    kafka_offset log_start_offset() const override { return offsets().log_start; }
    kafka_offset log_end_offset() const override { return offsets().log_end; }
    kafka_offset records_start() const override {
        // Redis unreachable: the floor last read, so that the remote tier keeps hiding what
        // DeleteRecords removed while it serves reads alone.
        auto m = meta();
        std::lock_guard g(_mu);
        if (m) _last_floor = field(*m, "floor");
        return kafka_offset(_last_floor);
    }

    result<std::string> marker(std::string_view op, int64_t v, offload_fence fence = std::nullopt) {
        auto val = std::to_string(v);
        auto rep = fence ? _st->c->fcall("floe_tier_marker", {_meta, _lease}, {op, val, std::to_string(*fence)})
                         : _st->c->fcall("floe_tier_marker", {_meta}, {op, val});
        if (!rep) {
            if (redis::server_error_is(rep.error(), "FLOE_RANGE")) return fail(errc::out_of_range, "{}", rep.error().message());
            if (redis::server_error_is(rep.error(), "FLOE_FENCED"))
                return fail(errc::conflict, "{} of {}-{} refused: {}", op, _tp.topic, _tp.partition, rep.error().message());
            return fail(tier_error(rep.error(), fmt::format("{} of {}-{}", op, _tp.topic, _tp.partition)));
        }
        return std::string(rep->str());
    }

    result<kafka_offset> delete_records_before(kafka_offset offset) override {
        auto r = FLOE_TRY(marker("floor", offset()));
        return kafka_offset(to_i64(r));
    }

    result<void> flush() override { return wait_replicas(); }

    result<void> wait_replicas() {
        if (_st->opts.min_replicas <= 0) return {};
        auto n = std::to_string(_st->opts.min_replicas), t = std::to_string(_st->opts.wait_timeout.count());
        std::vector<std::vector<std::string>> cmds{{"WAIT", n, t}};
        auto rep = _st->c->pipeline(_meta, cmds);
        if (!rep) return fail(tier_error(rep.error(), "WAIT"));
        auto acked = (*rep)[0].as_integer();
        if (!acked) return fail(tier_error(acked.error(), "WAIT"));
        if (*acked < _st->opts.min_replicas)
            return fail(errc::unavailable, "redis local tier: {} of {} replicas acknowledged within {} ms", *acked,
                        _st->opts.min_replicas, _st->opts.wait_timeout.count());
        return {};
    }

    void when_durable(kafka_offset, std::function<void(result<void>)> done) override {
        if (_st->opts.min_replicas <= 0) {
            done({});
            return;
        }
        // WAIT blocks a connection: off the caller's thread.
        std::thread([self = shared_from_this(), done = std::move(done)] { done(self->wait_replicas()); }).detach();
    }

    result<void> roll() override {
        auto now = std::to_string(now_ms());
        auto rep = _st->c->fcall("floe_tier_roll", {_meta, _segs}, {now});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("roll of {}-{}", _tp.topic, _tp.partition)));
        return {};
    }
    result<bool> maybe_roll_by_time() override {
        auto now = std::to_string(now_ms()), ms = std::to_string(config().segment_ms);
        auto rep = _st->c->fcall("floe_tier_roll", {_meta, _segs}, {now, ms});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("roll of {}-{}", _tp.topic, _tp.partition)));
        return rep->integer() == 1;
    }

    static segment_info parse_segment(std::string_view e) {
        int64_t v[7] = {0, 0, 0, -1, -1, 0, 0};
        size_t i = 0;
        while (i < 7 && !e.empty()) {
            auto c = e.find(',');
            v[i++] = to_i64(e.substr(0, c));
            if (c == std::string_view::npos) break;
            e.remove_prefix(c + 1);
        }
        segment_info s;
        s.id = segment_id(v[0]);
        s.base_offset = kafka_offset(v[0]);
        s.next_offset = kafka_offset(v[1]);
        s.size_bytes = uint64_t(v[2]);
        s.first_timestamp_ms = v[3];
        s.max_timestamp_ms = v[4];
        s.created_ms = v[5];
        s.batch_count = uint32_t(v[6]);
        s.sealed = true;
        return s;
    }

    std::vector<segment_info> sealed_segments() const override {
        auto rep = _st->c->command({"LRANGE", _segs, "0", "-1"});
        std::vector<segment_info> out;
        if (!rep) return out;
        for (auto& e : rep->elements()) out.push_back(parse_segment(e.str()));
        return out;
    }
    std::vector<segment_info> segments() const override {
        auto out = sealed_segments();
        auto m = meta();
        if (!m) return out;
        segment_info a;
        a.base_offset = kafka_offset(field(*m, "seg_base"));
        a.id = segment_id(a.base_offset());
        a.next_offset = kafka_offset(field(*m, "next"));
        a.size_bytes = uint64_t(field(*m, "seg_bytes"));
        a.first_timestamp_ms = field(*m, "seg_first_ts", -1);
        a.max_timestamp_ms = field(*m, "seg_max_ts", -1);
        a.created_ms = field(*m, "seg_created");
        a.batch_count = uint32_t(field(*m, "seg_batches"));
        a.sealed = false;
        out.push_back(a);
        return out;
    }

    result<void> set_offloaded_up_to(kafka_offset next, offload_fence fence) override {
        FLOE_TRY(marker("offloaded", next(), fence));
        return {};
    }
    kafka_offset offloaded_up_to() const override {
        auto m = meta();
        return kafka_offset(m ? field(*m, "offloaded") : 0);
    }
    result<void> rewind_offloaded_up_to(kafka_offset next, offload_fence fence) override {
        FLOE_TRY(marker("rewind", next(), fence));
        return {};
    }

    result<std::vector<segment_info>> apply_retention(std::optional<kafka_offset> remote_covers,
                                                      offload_fence fence) override {
        auto cfg = config();
        auto sealed = sealed_segments();
        auto m = FLOE_TRY(meta());
        const int64_t offloaded = field(m, "offloaded"), floor = field(m, "floor");
        const int64_t limit_ms = cfg.effective_local_retention_ms(), limit_bytes = cfg.effective_local_retention_bytes();
        uint64_t total = uint64_t(field(m, "seg_bytes"));
        for (auto& s : sealed) total += s.size_bytes;
        const int64_t now = now_ms();
        size_t n = 0;
        int64_t upto = 0;
        for (auto& s : sealed) {
            bool by_floor = s.next_offset() <= floor;
            bool by_time = limit_ms >= 0 && s.max_timestamp_ms >= 0 && s.max_timestamp_ms < now - limit_ms;
            bool by_size = limit_bytes >= 0 && total > uint64_t(limit_bytes);
            if (!by_floor && !by_time && !by_size) break;
            if (cfg.remote_storage_enable
                && (s.next_offset() > offloaded || !remote_covers || s.next_offset() > (*remote_covers)()))
                break;
            total -= s.size_bytes;
            upto = s.next_offset();
            ++n;
        }
        std::vector<segment_info> gone(sealed.begin(), sealed.begin() + ptrdiff_t(n));
        if (n == 0) return gone;
        auto nn = std::to_string(n), up = std::to_string(upto);
        auto rep = fence ? _st->c->fcall("floe_tier_trim", {_meta, _stream, _idx, _segs, _lease},
                                         {nn, up, std::to_string(*fence)})
                         : _st->c->fcall("floe_tier_trim", {_meta, _stream, _idx, _segs}, {nn, up});
        if (!rep) {
            if (redis::server_error_is(rep.error(), "FLOE_STALE")) return std::vector<segment_info>{};
            if (redis::server_error_is(rep.error(), "FLOE_FENCED"))
                return fail(errc::conflict, "retention of {}-{} refused: {}", _tp.topic, _tp.partition,
                            rep.error().message());
            return fail(tier_error(rep.error(), fmt::format("retention of {}-{}", _tp.topic, _tp.partition)));
        }
        return gone;
    }

    static std::optional<producer_state> parse_producer(int64_t pid, std::string_view v) {
        producer_state st;
        st.producer_id = pid;
        bool first = true;
        while (!v.empty()) {
            auto c = v.find(';');
            auto part = v.substr(0, c);
            v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
            if (first) {
                st.epoch = int16_t(to_i64(part, -1));
                first = false;
                continue;
            }
            int64_t x[5] = {};
            for (int i = 0; i < 5; ++i) {
                auto d = part.find(',');
                x[i] = to_i64(part.substr(0, d));
                part = d == std::string_view::npos ? std::string_view() : part.substr(d + 1);
            }
            st.recent.push_back({int32_t(x[0]), int32_t(x[1]), x[2], x[3], x[4]});
        }
        return st;
    }

    std::optional<producer_state> producer(int64_t producer_id) const override {
        auto rep = _st->c->command({"HGET", _prod, std::to_string(producer_id)});
        if (!rep || !rep->is_string()) return std::nullopt;
        return parse_producer(producer_id, rep->str());
    }
    std::vector<producer_state> producers() const override {
        std::vector<producer_state> out;
        auto rep = _st->c->command({"HGETALL", _prod});
        if (!rep) return out;
        for (size_t i = 0; i + 1 < rep->size(); i += 2)
            if (auto p = parse_producer(to_i64((*rep)[i].str()), (*rep)[i + 1].str())) out.push_back(*p);
        return out;
    }

    // Transactions are not implemented on this tier (README): refused at AddPartitionsToTxn
    // and in append(); so no transaction is ever open, nothing is aborted, LSO == HW.
    bool supports_transactions() const noexcept override { return false; }
    result<append_result> append_txn_marker(int64_t producer_id, int16_t, txn_marker, int32_t) override {
        spdlog::warn("redis local tier: {}-{}: transaction marker of producer {} refused", _tp.topic,
                     _tp.partition, producer_id);
        return fail(errc::unsupported, "transactions are not supported on floe.local.type=redis");
    }
    kafka_offset last_stable_offset() const override { return offsets().high_watermark; }
    std::vector<aborted_txn> aborted_transactions(kafka_offset, kafka_offset) const override { return {}; }
    std::map<int64_t, int64_t> open_transactions() const override { return {}; }

    topic_config config() const override {
        std::lock_guard g(_mu);
        return _cfg;
    }
    void update_config(topic_config c) {
        std::lock_guard g(_mu);
        _cfg = std::move(c);
    }
    const topic_partition& tp() const noexcept override { return _tp; }
    const uuid& topic_id() const noexcept override { return _id; }

private:
    std::shared_ptr<tier_state> _st;
    topic_partition _tp;
    uuid _id;
    bool _mirror = false;
    mutable std::mutex _mu;
    topic_config _cfg;
    mutable partition_offsets _last_offsets;
    mutable int64_t _last_floor = 0; ///< the DeleteRecords floor last read (under _mu)
    mutable std::map<int64_t, std::string> _hints; ///< next offset -> id of the entry before it (under _mu)
    mutable std::atomic<size_t> _record_bytes{0}; ///< batch bytes per record in the last read (0: none yet)
    std::atomic<bool> _closed{false};
    std::string _meta, _stream, _idx, _prod, _segs;
    std::string _lease; ///< the storage worker's lease (fencing); never deleted, so epochs only grow
};

/// resolve_topic_config, refusing what this tier does not implement: compacted topics
/// (cleanup.policy with compact) need the log cleaner, which works on segment files only.
result<topic_config> resolve_redis_topic_config(const config_map& defaults, const config_map& overrides) {
    auto c = FLOE_TRY(resolve_topic_config(defaults, overrides));
    if (c.compacted()) {
        spdlog::warn("redis local tier: refused cleanup.policy={}: compacted topics are not supported",
                     c.cleanup_policy);
        return fail(errc::unsupported,
                    "cleanup.policy={} is not supported on floe.local.type=redis (no log cleaner for Redis "
                    "streams): use cleanup.policy=delete, or floe.local.type=embedded",
                    c.cleanup_policy);
    }
    return c;
}

/// The topic store in Redis: hash `{<ns>}:topics` (name -> JSON: id, partitions, overrides,
/// mirror_of) and string `{<ns>}:topic-defaults` (JSON of the dynamic broker-level defaults).
class redis_tier final : public local_tier {
public:
    explicit redis_tier(std::shared_ptr<tier_state> st) : _st(std::move(st)) {
        _topics_key = fmt::format("{{{}}}:topics", _st->opts.ns);
        _defaults_key = fmt::format("{{{}}}:topic-defaults", _st->opts.ns);
        _version_key = fmt::format("{{{}}}:topics-version", _st->opts.ns);
    }
    ~redis_tier() override { stop_refresh(); }

    result<void> load() {
        FLOE_TRY_CTX(resolve_redis_topic_config(_st->opts.topic_defaults, {}), "floe.topic-defaults");
        auto snap = FLOE_TRY(read_snapshot());
        std::unique_lock g(_mu);
        apply_locked(std::move(snap));
        return {};
    }

    /// Re-reads the topics when another broker changed them (the version counter moved), or
    /// always with `force`. Cheap when nothing changed: one GET.
    result<void> refresh(bool force) {
        if (!force) {
            auto v = _st->c->command({"GET", _version_key});
            if (!v) return fail(tier_error(v.error(), "reading the topics version"));
            int64_t version = v->is_string() ? std::strtoll(v->str().c_str(), nullptr, 10) : 0;
            std::shared_lock g(_mu);
            if (version == _applied_version) return {};
        }
        auto snap = FLOE_TRY(read_snapshot());
        std::unique_lock g(_mu);
        // A snapshot older than a change this broker made itself would undo it: the next one
        // (which has it) is applied instead.
        if (snap.version < _local_version) return {};
        apply_locked(std::move(snap));
        return {};
    }

    /// Topics created, deleted or altered by other brokers show up here within `interval`.
    void start_refresh(std::chrono::milliseconds interval) {
        _refresher = std::thread([this, interval] {
            std::unique_lock lk(_refresh_mu);
            while (!_refresh_stop) {
                lk.unlock();
                if (auto r = refresh(false); !r) spdlog::debug("redis local tier: topic refresh: {}", r.error());
                lk.lock();
                _refresh_cv.wait_for(lk, interval, [this] { return _refresh_stop; });
            }
        });
    }
    void stop_refresh() {
        {
            std::lock_guard lk(_refresh_mu);
            _refresh_stop = true;
        }
        _refresh_cv.notify_all();
        if (_refresher.joinable()) _refresher.join();
    }

    result<topic_info> create_topic(std::string_view name, int32_t partitions, const config_map& overrides,
                                    bool validate_only, std::string_view mirror_of,
                                    int16_t replication_factor) override {
        FLOE_TRY(validate_topic_name(name));
        if (replication_factor < 1)
            return fail(errc::invalid_argument, "replication factor {}", replication_factor);
        if (partitions <= 0) partitions = _st->opts.default_partitions;
        if (partitions > 100000) return fail(errc::invalid_argument, "{} partitions is more than Floe allows", partitions);
        std::unique_lock g(_mu);
        topic_info t;
        t.name = std::string(name);
        t.partitions = partitions;
        t.overrides = overrides;
        t.mirror_of = std::string(mirror_of);
        t.replication_factor = replication_factor;
        t.config = FLOE_TRY(resolve_redis_topic_config(defaults_locked(), overrides));
        FLOE_TRY(check_topic_capabilities(t.config, _st->opts.capabilities));
        if (_topics.contains(name)) return fail(errc::already_exists, "topic {} exists", name);
        auto key = topic_collision_key(name);
        for (auto& [n, e] : _topics)
            if (topic_collision_key(n) == key)
                return fail(errc::already_exists,
                            "topic '{}' collides with existing topic '{}': names that differ only in '.', '-' or "
                            "'_' map to the same table ({})",
                            name, n, key);
        t.id = uuid::random();
        if (validate_only) return t;
        // Leftovers of an interrupted delete must not show up in the new topic.
        for (int32_t p = 0; p < partitions; ++p) FLOE_TRY(drop_partition_keys(t.name, p));
        auto rep = _st->c->command({"HSETNX", _topics_key, t.name, to_json(t)});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("creating topic {}", name)));
        if (rep->integer() == 0) {
            // Created by another broker: learn it now, so the caller finds it (auto-creation).
            g.unlock();
            (void)refresh(true);
            return fail(errc::already_exists, "topic {} exists (created by another broker)", name);
        }
        insert_locked(t);
        bump_locked();
        spdlog::info("redis local tier: created topic {} ({} partitions, id {})", t.name, partitions, t.id.to_string());
        return t;
    }

    result<void> delete_topic(std::string_view name) override {
        std::unique_lock g(_mu);
        auto it = _topics.find(name);
        if (it == _topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
        auto rep = _st->c->command({"HDEL", _topics_key, std::string(name)});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("deleting topic {}", name)));
        for (auto& p : it->second.parts) p->close();
        int32_t n = it->second.info.partitions;
        std::string topic(name);
        _by_id.erase(it->second.info.id);
        _topics.erase(it);
        bump_locked();
        for (int32_t p = 0; p < n; ++p)
            if (auto d = drop_partition_keys(topic, p); !d)
                spdlog::warn("redis local tier: removing data of {}-{}: {}", topic, p, d.error().message());
        return {};
    }

    result<topic_info> create_partitions(std::string_view name, int32_t total) override {
        std::unique_lock g(_mu);
        auto it = _topics.find(name);
        if (it == _topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
        auto t = it->second.info;
        if (total <= t.partitions)
            return fail(errc::invalid_argument, "topic {} has {} partitions; {} is not more", name, t.partitions, total);
        for (int32_t p = t.partitions; p < total; ++p) FLOE_TRY(drop_partition_keys(t.name, p));
        t.partitions = total;
        FLOE_TRY(store_locked(t));
        insert_locked(t);
        bump_locked();
        return t;
    }

    result<topic_info> alter_topic_config(std::string_view name, const config_map& overrides,
                                          bool validate_only) override {
        std::unique_lock g(_mu);
        auto it = _topics.find(name);
        if (it == _topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
        auto t = it->second.info;
        t.config = FLOE_TRY(resolve_redis_topic_config(defaults_locked(), overrides));
        FLOE_TRY(check_topic_capabilities(t.config, _st->opts.capabilities));
        t.overrides = overrides;
        if (validate_only) return t;
        FLOE_TRY(store_locked(t));
        it->second.info = t;
        for (auto& p : it->second.parts) p->update_config(t.config);
        bump_locked();
        return t;
    }

    result<topic_info> incremental_alter_topic_config(std::string_view name, std::span<const config_op> ops,
                                                      bool validate_only) override {
        config_map overrides;
        {
            std::shared_lock g(_mu);
            auto it = _topics.find(name);
            if (it == _topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
            overrides = it->second.info.overrides;
        }
        overrides = FLOE_TRY(apply_config_ops(std::move(overrides), ops));
        return alter_topic_config(name, overrides, validate_only);
    }

    std::optional<topic_info> topic(std::string_view name) const override {
        for (int attempt = 0;; ++attempt) {
            {
                std::shared_lock g(_mu);
                auto it = _topics.find(name);
                if (it != _topics.end()) return it->second.info;
            }
            if (attempt > 0 || !refresh_on_miss()) return std::nullopt;
        }
    }
    std::optional<topic_info> topic(const uuid& id) const override {
        std::shared_lock g(_mu);
        auto it = _by_id.find(id);
        if (it == _by_id.end()) return std::nullopt;
        return _topics.find(it->second)->second.info;
    }
    std::vector<topic_info> topics() const override {
        std::shared_lock g(_mu);
        std::vector<topic_info> v;
        for (auto& [n, e] : _topics) v.push_back(e.info);
        return v;
    }

    const config_map& topic_defaults() const noexcept override { return _st->opts.topic_defaults; }
    config_map dynamic_topic_defaults() const override {
        std::shared_lock g(_mu);
        return _dynamic;
    }
    result<void> set_dynamic_topic_defaults(const config_map& defaults, bool validate_only) override {
        std::unique_lock g(_mu);
        auto old = _dynamic;
        _dynamic = defaults;
        std::map<std::string, topic_config, std::less<>> resolved;
        auto check = [&]() -> result<void> {
            FLOE_TRY(check_topic_capabilities(FLOE_TRY(resolve_redis_topic_config(defaults_locked(), {})),
                                              _st->opts.capabilities));
            for (auto& [n, e] : _topics) {
                resolved[n] = FLOE_TRY(resolve_redis_topic_config(defaults_locked(), e.info.overrides));
                if (!e.info.config.encrypted()) FLOE_TRY(check_topic_capabilities(resolved[n], _st->opts.capabilities));
            }
            return {};
        };
        if (auto c = check(); !c || validate_only) {
            _dynamic = old;
            if (!c) return fail(std::move(c).error());
            return {};
        }
        nlohmann::json j = nlohmann::json::object();
        for (auto& [k, v] : defaults) j[k] = v;
        auto rep = _st->c->command({"SET", _defaults_key, j.dump()});
        if (!rep) {
            _dynamic = old;
            return fail(tier_error(rep.error(), "storing topic defaults"));
        }
        for (auto& [n, e] : _topics) {
            e.info.config = resolved[n];
            for (auto& p : e.parts) p->update_config(e.info.config);
        }
        bump_locked();
        return {};
    }

    std::filesystem::path log_dir() const override { return _st->opts.log_dir; }
    result<void> flush_all() override { return {}; }
    result<void> close() override {
        stop_refresh();
        std::unique_lock g(_mu);
        for (auto& [n, e] : _topics)
            for (auto& p : e.parts) p->close();
        return {};
    }

protected:
    std::shared_ptr<local_partition> find_partition(std::string_view topic, int32_t p) const override {
        for (int attempt = 0;; ++attempt) {
            {
                std::shared_lock g(_mu);
                auto it = _topics.find(topic);
                if (it != _topics.end() && p >= 0 && size_t(p) < it->second.parts.size())
                    return it->second.parts[size_t(p)];
            }
            if (attempt > 0 || !refresh_on_miss()) return nullptr;
        }
    }
    std::shared_ptr<local_partition> find_partition(const uuid& id, int32_t p) const override {
        std::shared_lock g(_mu);
        auto it = _by_id.find(id);
        if (it == _by_id.end()) return nullptr;
        auto& parts = _topics.find(it->second)->second.parts;
        if (p < 0 || size_t(p) >= parts.size()) return nullptr;
        return parts[size_t(p)];
    }

private:
    struct entry {
        topic_info info;
        std::vector<std::shared_ptr<redis_partition>> parts;
    };
    /// The topics and defaults as stored, read with their version in one atomic step.
    struct snapshot {
        int64_t version = 0;
        config_map dynamic;
        std::vector<topic_info> topics;
    };

    result<snapshot> read_snapshot() const {
        // One script, not MULTI/EXEC: a single command is redirected and retried as a whole on a
        // Redis Cluster (a MOVED inside MULTI aborts the transaction). The keys share a slot.
        static constexpr std::string_view read_topics =
            "return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('HGETALL', KEYS[3])}";
        auto rep = _st->c->command_for(_topics_key, {"EVAL", read_topics, "3", _version_key, _defaults_key, _topics_key});
        if (!rep) return fail(tier_error(rep.error(), "reading topics"));
        if (!rep->is_array() || rep->size() != 3)
            return fail(errc::internal, "reading topics: unexpected answer {}", rep->debug_string());
        auto& ex = *rep;
        snapshot out;
        if (ex[0].is_string()) out.version = std::strtoll(ex[0].str().c_str(), nullptr, 10);
        if (ex[1].is_string()) {
            auto j = nlohmann::json::parse(ex[1].str(), nullptr, false);
            if (j.is_object())
                for (auto& [k, v] : j.items()) out.dynamic[k] = v.get<std::string>();
        }
        config_map defaults = _st->opts.topic_defaults;
        for (auto& [k, v] : out.dynamic) defaults[k] = v;
        auto& all = ex[2];
        for (size_t i = 0; i + 1 < all.size(); i += 2) {
            auto j = nlohmann::json::parse(all[i + 1].str(), nullptr, false);
            if (!j.is_object()) return fail(errc::corrupt, "topic {} in {}: not JSON", all[i].str(), _topics_key);
            topic_info t;
            t.name = all[i].str();
            auto id = uuid::parse(j.value("id", ""));
            if (!id) return fail(errc::corrupt, "topic {}: bad id", t.name);
            t.id = *id;
            t.partitions = j.value("partitions", 0);
            t.mirror_of = j.value("mirror_of", "");
            t.replication_factor = j.value("replication_factor", int16_t(1));
            if (j.contains("overrides"))
                for (auto& [k, v] : j["overrides"].items()) t.overrides[k] = v.get<std::string>();
            t.config = FLOE_TRY_CTX(resolve_redis_topic_config(defaults, t.overrides), "topic {}", t.name);
            out.topics.push_back(std::move(t));
        }
        return out;
    }

    /// Makes the topics in memory what the snapshot says: new ones added, deleted ones closed
    /// and dropped, a name re-created with another id replaced, grown partition counts and
    /// changed configs applied to the open partitions.
    void apply_locked(snapshot snap) {
        _dynamic = std::move(snap.dynamic);
        std::set<std::string, std::less<>> seen;
        for (auto& t : snap.topics) {
            seen.insert(t.name);
            auto it = _topics.find(t.name);
            if (it != _topics.end() && it->second.info.id != t.id) {
                for (auto& p : it->second.parts) p->close();
                _by_id.erase(it->second.info.id);
                _topics.erase(it);
                it = _topics.end();
            }
            if (it == _topics.end()) {
                insert_locked(t);
                continue;
            }
            insert_locked(t); // adds partitions when the count grew
            for (auto& p : it->second.parts) p->update_config(t.config); // overrides or defaults may have changed
        }
        for (auto it = _topics.begin(); it != _topics.end();) {
            if (seen.contains(it->first)) {
                ++it;
                continue;
            }
            for (auto& p : it->second.parts) p->close();
            _by_id.erase(it->second.info.id);
            it = _topics.erase(it);
        }
        _applied_version = std::max(_applied_version, snap.version);
    }

    /// Every topic change ends here: the version other brokers poll moves on.
    void bump_locked() {
        auto r = _st->c->command({"INCR", _version_key});
        if (!r) {
            spdlog::warn("redis local tier: other brokers will see this topic change late: {}", r.error().message());
            return;
        }
        _local_version = std::max(_local_version, r->integer());
    }

    /// A lookup missed: maybe another broker just created the topic. At most one re-read per
    /// 100 ms for all misses together, so a client asking for a missing topic in a loop costs
    /// Redis little. True when a re-read happened.
    bool refresh_on_miss() const {
        auto now = std::chrono::steady_clock::now().time_since_epoch().count();
        auto last = _last_miss_refresh.load();
        if (now - last < std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::milliseconds(100)).count())
            return false;
        if (!_last_miss_refresh.compare_exchange_strong(last, now)) return false;
        // The topic cache is logically const: a lookup may fill it from Redis.
        return bool(const_cast<redis_tier*>(this)->refresh(false));
    }

    config_map defaults_locked() const {
        config_map m = _st->opts.topic_defaults;
        for (auto& [k, v] : _dynamic) m[k] = v;
        return m;
    }
    static std::string to_json(const topic_info& t) {
        nlohmann::json j;
        j["id"] = t.id.to_string();
        j["partitions"] = t.partitions;
        j["overrides"] = nlohmann::json::object();
        for (auto& [k, v] : t.overrides) j["overrides"][k] = v;
        if (!t.mirror_of.empty()) j["mirror_of"] = t.mirror_of;
        if (t.replication_factor != 1) j["replication_factor"] = t.replication_factor;
        return j.dump();
    }
    result<void> store_locked(const topic_info& t) {
        auto rep = _st->c->command({"HSET", _topics_key, t.name, to_json(t)});
        if (!rep) return fail(tier_error(rep.error(), fmt::format("storing topic {}", t.name)));
        return {};
    }
    void insert_locked(const topic_info& t) {
        auto& e = _topics[t.name];
        e.info = t;
        for (int32_t p = int32_t(e.parts.size()); p < t.partitions; ++p) {
            auto part = std::make_shared<redis_partition>(_st, topic_partition{t.name, p}, t.id, t.config,
                                                          !t.mirror_of.empty());
            e.parts.push_back(std::move(part));
        }
        _by_id[t.id] = t.name;
    }
    result<void> drop_partition_keys(const std::string& topic, int32_t p) {
        redis_partition tmp(_st, topic_partition{topic, p}, uuid{}, topic_config{});
        auto ks = tmp.keys();
        std::vector<std::string_view> args{"DEL"};
        for (auto& k : ks) args.push_back(k);
        auto rep = _st->c->command(std::span<const std::string_view>(args));
        if (!rep) return fail(tier_error(rep.error(), fmt::format("removing keys of {}-{}", topic, p)));
        return {};
    }

    std::shared_ptr<tier_state> _st;
    std::string _topics_key, _defaults_key, _version_key;
    mutable std::shared_mutex _mu;
    int64_t _applied_version = 0; ///< of the last snapshot applied (under _mu)
    int64_t _local_version = 0;   ///< the version after this broker's own last change (under _mu)
    mutable std::atomic<int64_t> _last_miss_refresh{0};
    std::mutex _refresh_mu;
    std::condition_variable _refresh_cv;
    bool _refresh_stop = false;
    std::thread _refresher;
    std::map<std::string, entry, std::less<>> _topics;
    std::map<uuid, std::string> _by_id;
    config_map _dynamic;
};

} // namespace

std::string partition_tag(std::string_view ns, std::string_view topic, int32_t partition) {
    return fmt::format("{{{}:{}:{}}}", ns, topic, partition);
}

std::string offload_lease_key(std::string_view ns, std::string_view topic, int32_t partition) {
    return partition_tag(ns, topic, partition) + ":lease";
}

result<std::unique_ptr<log::local_tier>> open(std::shared_ptr<redis::client> c, options o) {
    FLOE_TRY_CTX(c->load_library(k_library, functions_lua, functions_lua_version),
                 "loading the {} function library", k_library);
    auto st = std::make_shared<tier_state>();
    st->c = std::move(c);
    st->opts = std::move(o);
    auto t = std::make_unique<redis_tier>(st);
    FLOE_TRY(t->load());
    t->start_refresh(st->opts.topic_refresh_interval);
    return std::unique_ptr<log::local_tier>(std::move(t));
}

result<std::unique_ptr<log::local_tier>> open(options o) {
    auto c = FLOE_TRY_CTX(redis::client::connect(o.redis), "connecting to Redis");
    return open(std::shared_ptr<redis::client>(std::move(c)), std::move(o));
}

} // namespace floe::redis_tier
