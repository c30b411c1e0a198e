#include "tiering/remote_reader.h"

#include "base/log.h"
#include "base/metrics.h"
#include "log/batch_builder.h"
#include "tiering/storage_worker.h"

#include <algorithm>
#include <future>

namespace floe::tiering {
namespace {

size_t approx_bytes(const std::vector<parquet::message_record>& rows) {
    size_t n = rows.size() * sizeof(parquet::message_record);
    for (auto& r : rows) {
        n += r.stream_key.size() + r.message_id.size() + (r.key ? r.key->size() : 0)
             + (r.value ? r.value->size() : 0);
        if (r.headers)
            for (auto& h : *r.headers) n += h.key.size() + (h.value ? h.value->size() : 0) + 32;
    }
    return n;
}

int64_t kafka_ts(const parquet::message_record& r) {
    return r.kafka_timestamp >= 0 ? r.kafka_timestamp : r.message_ts;
}

auto& tiered_reads() {
    static auto& f = metrics::registry::instance().counter_family(
        "floe_tiered_reads_total", "Reads served from the remote (Iceberg) tier.", {"kind"});
    return f;
}

/// Runs a read that plans its files and then opens them, again (from a new plan) when a planned
/// file is gone: compaction replaced it and expiry deleted it between the plan and the open.
/// Each plan asks the catalog for the current metadata, so the next attempt names the files of
/// a newer version; a few attempts at most (a file missing without a commit stays an error).
template <class F>
auto replanning(const char* what, F&& body) -> decltype(body()) {
    constexpr int kAttempts = 4;
    for (int attempt = 1;; ++attempt) {
        auto r = body();
        if (r || r.error().code() != errc::not_found || attempt == kAttempts) return r;
        spdlog::debug("{}: a planned data file is gone ({}); planning again", what, r.error().message());
    }
}

} // namespace

remote_reader::remote_reader(lake::iceberg_lake& lake, size_t cache_bytes)
    : _lake(lake), _cache_limit(cache_bytes), _cache(cache_bytes) {}

void remote_reader::set_records_floor(floor_fn f) {
    std::lock_guard g(_mu);
    _floor = std::move(f);
}

int64_t remote_reader::floor_of(const std::string& topic, int32_t partition) {
    floor_fn f;
    {
        std::lock_guard g(_mu);
        f = _floor;
    }
    return f ? f(topic, partition) : 0;
}

void remote_reader::set_tier_marks(marks_fn f) {
    std::lock_guard g(_mu);
    _marks = std::move(f);
}

result<void> remote_reader::check_history(const std::string& topic, int32_t partition) {
    marks_fn f;
    {
        std::lock_guard g(_mu);
        f = _marks;
    }
    if (!f) return {};
    // The marks first, the table after: a commit lands before its marker moves, so a table
    // read later holds at least what the marker read earlier says (no false alarm in a race).
    auto marks = f(topic, partition);
    if (!marks) return {};
    auto key = stream_key_for(topic, partition);
    auto committed = FLOE_TRY(reader_for(topic).committed_position(key));
    const int64_t from = std::max(committed, floor_of(topic, partition));
    const int64_t to = std::min(marks->offloaded, marks->local_start);
    std::lock_guard g(_mu);
    if (from >= to) {
        _gaps.erase(key);
        return {};
    }
    auto table = fmt::format("{}.{}", _lake.options().ns, lake::table_name_for_topic(topic));
    auto what = fmt::format("table {} misses offsets {}..{} of {}", table, from, to - 1, key);
    if (!_gaps.contains(key))
        spdlog::error("tiered reads: {}: it holds {} only below offset {} but the local marker says {} was offloaded "
                      "(another writer, another lake, a restored catalog or a forked table); reads of them answer a "
                      "retriable error until the table holds them",
                      table, key, committed, marks->offloaded);
    _gaps[key] = gap{topic, partition, what};
    return fail(errc::unavailable, "{} (the local marker says {} was offloaded); retry once the table holds them",
                what, marks->offloaded);
}

std::vector<std::string> remote_reader::history_gaps() {
    std::vector<gap> known;
    {
        std::lock_guard g(_mu);
        for (auto& [k, v] : _gaps) known.push_back(v);
    }
    std::vector<std::string> out;
    for (auto& k : known) {
        auto r = check_history(k.topic, k.partition);
        if (r) continue;
        out.push_back(r.error().code() == errc::unavailable ? k.what
                                                            : fmt::format("{} (checking again: {})", k.what, r.error().message()));
    }
    return out;
}

lake::table_reader& remote_reader::reader_for(const std::string& topic) {
    std::lock_guard g(_mu);
    auto& r = _readers[topic];
    if (!r) r = std::make_unique<lake::table_reader>(_lake, topic);
    return *r;
}

remote_reader::cache_stats remote_reader::stats() const {
    std::lock_guard g(_mu);
    auto s = _stats;
    s.bytes = _cache.weight();
    s.files = _cache.size();
    return s;
}

result<remote_reader::rows_ptr> remote_reader::rows_of(lake::table_reader& r, const lake::planned_file& f) {
    {
        std::lock_guard g(_mu);
        if (auto c = _current.find(f.stream_key); c != _current.end() && c->second.uri == f.uri) {
            ++_stats.hits;
            c->second.used = ++_use_clock;
            return c->second.rows;
        }
        if (auto hit = _cache.get(f.uri)) {
            ++_stats.hits;
            return *hit;
        }
        ++_stats.misses;
    }
    auto rows = std::make_shared<const std::vector<parquet::message_record>>(FLOE_TRY(r.read_file(f)));
    size_t bytes = approx_bytes(*rows);
    std::lock_guard g(_mu);
    auto& cur = _current[f.stream_key];
    _current_bytes = _current_bytes - cur.bytes + bytes;
    cur = {f.uri, rows, bytes, ++_use_clock};
    while (_current_bytes > 4 * _cache_limit && _current.size() > 1) {
        auto oldest = std::min_element(_current.begin(), _current.end(),
                                       [](auto& a, auto& b) { return a.second.used < b.second.used; });
        _current_bytes -= oldest->second.bytes;
        _current.erase(oldest);
    }
    _cache.put(f.uri, rows, bytes);
    return rows;
}

result<remote_reader::read_result> remote_reader::read(const std::string& topic, int32_t partition,
                                                       int64_t offset, int64_t limit, size_t max_bytes) {
    read_result out;
    out.next_offset = offset;
    if (offset >= limit || offset < floor_of(topic, partition)) return out;
    FLOE_TRY(check_history(topic, partition));
    auto& r = reader_for(topic);
    auto key = stream_key_for(topic, partition);
    auto files = FLOE_TRY(r.files_for_offsets(key, offset, limit));
    log::batch_builder b;
    std::vector<log::batch_builder::header> headers;
    constexpr size_t batch_records = 1000, batch_bytes = 1u << 20;
    bool open = false;
    auto flush = [&]() -> result<void> {
        if (open && b.records() > 0) FLOE_TRY(b.finish(out.batches));
        open = false;
        return {};
    };
    // A planned file may be gone when it is opened (compaction replaced it, expiry deleted it):
    // the plan is made again from the catalog's current metadata and the next offset (a few
    // times at most, max_replans: each new plan names the files of the newest version).
    //
    // When the read spans several files, the next ones (at most kReadAhead, and only while the
    // files before them are smaller than the byte budget, so probably needed) are read on other
    // threads while this one is decoded into batches. Results are taken in plan order, so the
    // output is the same as reading them one after the other.
    constexpr size_t kReadAhead = 2;
    std::vector<std::future<result<rows_ptr>>> ahead(files.size());
    auto read_ahead = [&](size_t i) {
        int64_t before = 0;
        for (size_t j = i + 1; j < files.size() && j <= i + kReadAhead; ++j) {
            before += std::max<int64_t>(files[j - 1].file_size, 0);
            if (before >= static_cast<int64_t>(max_bytes)) break;
            if (!ahead[j].valid())
                ahead[j] = std::async(std::launch::async, [this, &r, f = files[j]] { return rows_of(r, f); });
        }
    };
    // Emits one row into the batches; false once the byte budget is reached.
    auto emit = [&](const parquet::message_record& row) -> result<bool> {
        if (open && (b.records() >= batch_records || b.records_bytes() >= batch_bytes)) {
            FLOE_TRY(flush());
            if (out.batches.size() >= max_bytes) return false;
        }
        if (!open) {
            b.begin(row.offset);
            open = true;
        }
        headers.clear();
        if (row.headers)
            for (auto& h : *row.headers)
                headers.push_back({h.key, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt});
        auto opt = [](const std::optional<std::string>& s) {
            return s ? std::optional<std::string_view>(*s) : std::nullopt;
        };
        b.add(row.offset, kafka_ts(row), opt(row.key), opt(row.value), headers);
        out.next_offset = row.offset + 1;
        ++out.records;
        return true;
    };
    // Each replan reads the newest version's files; a table rewritten again between the plan and
    // the open (maintenance every few ms, as a test does it) costs one more.
    constexpr int max_replans = 8;
    int replans = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        auto& f = files[i];
        read_ahead(i);
        // Files whose offsets interleave with this one's (a typed table's file and its dead-letter
        // table's: each record is in one of them) are read together and merged by offset.
        size_t last = i;
        for (int64_t reach = f.max_offset; last + 1 < files.size() && files[last + 1].min_offset <= reach;) {
            ++last;
            reach = std::max(reach, files[last].max_offset);
        }
        std::vector<rows_ptr> group;
        std::optional<error> failed;
        for (size_t j = i; j <= last; ++j) {
            auto rows = ahead[j].valid() ? ahead[j].get() : rows_of(r, files[j]);
            if (!rows) {
                failed = std::move(rows).error();
                break;
            }
            group.push_back(std::move(*rows));
        }
        if (failed && failed->code() == errc::not_found && replans < max_replans) {
            ++replans;
            ahead.clear(); // waits for the reads still running
            files = FLOE_TRY(r.files_for_offsets(key, out.next_offset, limit));
            ahead.resize(files.size());
            i = size_t(-1);  // from the first file of the new plan
            continue;
        }
        if (failed) return std::unexpected(std::move(*failed).with_context("tiered read of {} at offset {}", key, offset));
        std::vector<const parquet::message_record*> merged;
        for (auto& rows : group)
            for (auto& row : *rows)
                // (a row of another topic's stream in a shared table is skipped)
                if (row.stream_key == key && row.offset >= out.next_offset && row.offset < limit) merged.push_back(&row);
        if (group.size() > 1)
            std::sort(merged.begin(), merged.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
        bool more = true;
        for (auto* row : merged) {
            if (row->offset < out.next_offset) continue; // the same offset twice (a replay between its commits)
            if (!(more = FLOE_TRY(emit(*row)))) break;
        }
        if (!more || out.batches.size() >= max_bytes) break;
        i = last;
    }
    FLOE_TRY(flush());
    if (out.records) tiered_reads().with({"fetch"}).inc();
    return out;
}

result<std::shared_ptr<remote_reader::open_file>> remote_reader::opened(lake::table_reader& r,
                                                                        const lake::planned_file& f) {
    {
        std::lock_guard g(_mu);
        if (auto hit = _open.get(f.uri)) return *hit;
    }
    auto of = std::make_shared<open_file>();
    of->reader.emplace(FLOE_TRY(r.open_file(f, of->storage)));
    std::lock_guard g(_mu);
    if (auto hit = _open.get(f.uri)) return *hit; // opened meanwhile
    _open.put(f.uri, of); // an evicted file stays open for callers still holding it
    return of;
}

result<std::vector<parquet::message_record>> remote_reader::find_by_key(const std::string& topic,
                                                                      std::string_view key, bool all,
                                                                      parquet::lookup_stats* stats) {
    return replanning("key lookup", [&] { return find_by_key_once(topic, key, all, stats); });
}

result<std::vector<parquet::message_record>> remote_reader::find_by_key_once(const std::string& topic,
                                                                           std::string_view key, bool all,
                                                                           parquet::lookup_stats* stats) {
    auto& r = reader_for(topic);
    auto files = FLOE_TRY(r.files());
    // Newest first within each stream, so a single-record lookup stops at its first hit.
    std::sort(files.begin(), files.end(), [](auto& a, auto& b) {
        return std::tie(a.stream_key, b.max_offset) < std::tie(b.stream_key, a.max_offset);
    });
    std::vector<parquet::message_record> out;
    std::string done_stream;
    parquet::lookup_stats total;
    for (auto& f : files) {
        if (!is_stream_key_of(topic, f.stream_key)) continue; // another topic's file in a shared table
        if (!all && f.stream_key == done_stream) continue;
        if (!f.may_contain_key(key)) continue;
        auto of = FLOE_TRY_CTX(opened(r, f), "key lookup in {}", f.uri);
        parquet::lookup_stats st;
        std::vector<parquet::message_record> found;
        {
            std::lock_guard g(of->mu);
            found = FLOE_TRY_CTX(of->reader->find_by_key(key, &st), "key lookup in {}", f.uri);
        }
        total += st;
        std::erase_if(found, [&](const parquet::message_record& m) {
            return m.stream_key != stream_key_for(topic, m.partition) || m.offset < floor_of(topic, m.partition);
        });
        if (found.empty()) continue;
        if (all) {
            for (auto& m : found) out.push_back(std::move(m));
        } else {
            auto newest = std::max_element(found.begin(), found.end(),
                                           [](auto& a, auto& b) { return a.offset < b.offset; });
            out.push_back(std::move(*newest));
            done_stream = f.stream_key;
        }
    }
    if (stats) *stats = total;
    tiered_reads().with({"key_lookup"}).inc();
    return out;
}

result<std::vector<parquet::message_record>> remote_reader::read_rows(const std::string& topic, int32_t partition,
                                                                    int64_t offset, int64_t below, size_t limit) {
    if (offset < below && limit > 0) FLOE_TRY(check_history(topic, partition));
    return replanning("offset lookup", [&] { return read_rows_once(topic, partition, offset, below, limit); });
}

result<std::vector<parquet::message_record>> remote_reader::read_rows_once(const std::string& topic,
                                                                         int32_t partition, int64_t offset,
                                                                         int64_t below, size_t limit) {
    std::vector<parquet::message_record> out;
    offset = std::max(offset, floor_of(topic, partition));
    if (offset >= below || limit == 0) return out;
    auto& r = reader_for(topic);
    auto key = stream_key_for(topic, partition);
    auto files = FLOE_TRY(r.files_for_offsets(key, offset, below));
    std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.min_offset < b.min_offset; });
    int64_t next = offset;
    for (auto& f : files) {
        if (out.size() >= limit) break;
        auto of = FLOE_TRY_CTX(opened(r, f), "reading {} at offset {}", key, next);
        size_t before = out.size();
        {
            std::lock_guard g(of->mu);
            FLOE_TRY_CTX(of->reader->read_offset_range(next, limit - out.size(), out), "reading {} at offset {} in {}",
                         key, next, f.uri);
        }
        auto foreign = [&](auto& m) { return m.stream_key != key; };
        if (std::any_of(out.begin() + std::ptrdiff_t(before), out.end(), foreign)) {
            // Another stream's rows in this file (never written by Floe, which writes one stream
            // per file) took part of the budget: take this file's rows from a whole read instead.
            out.resize(before);
            auto rows = FLOE_TRY_CTX(rows_of(r, f), "reading {} at offset {}", key, next);
            for (auto& m : *rows)
                if (!foreign(m) && m.offset >= next && m.offset < below && out.size() < limit) out.push_back(m);
        }
        // Rows at or past `below` belong to the local tier.
        while (out.size() > before && out.back().offset >= below) out.pop_back();
        if (out.size() > before) next = out.back().offset + 1;
    }
    if (!out.empty()) tiered_reads().with({"lookup"}).inc();
    return out;
}

result<std::vector<parquet::message_record>> remote_reader::find_by_time(const std::string& topic, int32_t partition,
                                                                       int64_t from_ts, int64_t to_ts,
                                                                       int64_t below_offset, size_t limit) {
    FLOE_TRY(check_history(topic, partition));
    return replanning("time lookup",
                      [&] { return find_by_time_once(topic, partition, from_ts, to_ts, below_offset, limit); });
}

result<std::vector<parquet::message_record>> remote_reader::find_by_time_once(const std::string& topic,
                                                                            int32_t partition, int64_t from_ts,
                                                                            int64_t to_ts, int64_t below_offset,
                                                                            size_t limit) {
    auto& r = reader_for(topic);
    auto key = stream_key_for(topic, partition);
    auto files = FLOE_TRY(r.files_for_time(key, from_ts, to_ts));
    std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.min_offset < b.min_offset; });
    std::vector<parquet::message_record> out;
    const int64_t floor = floor_of(topic, partition);
    for (auto& f : files) {
        if (f.min_offset >= below_offset || out.size() >= limit) break;
        auto rows = FLOE_TRY(rows_of(r, f));
        for (auto& row : *rows) {
            if (row.stream_key != key || row.offset < floor) continue;
            if (row.offset >= below_offset || out.size() >= limit) break;
            auto ts = kafka_ts(row);
            if (ts >= from_ts && ts <= to_ts) out.push_back(row);
        }
    }
    if (!out.empty()) tiered_reads().with({"time_range"}).inc();
    return out;
}

result<std::optional<int64_t>> remote_reader::start_offset(const std::string& topic, int32_t partition) {
    if (auto whole = check_history(topic, partition); !whole) {
        // Remembered like a start, so Fetches at the local tier's end do not ask the catalog
        // each time (recent_start_offset).
        if (whole.error().code() == errc::unavailable) {
            std::lock_guard g(_mu);
            _starts[{topic, partition}] = {std::nullopt, whole.error(), std::chrono::steady_clock::now()};
        }
        return std::unexpected(std::move(whole).error());
    }
    auto start = FLOE_TRY(reader_for(topic).start_offset(stream_key_for(topic, partition)));
    if (start) start = std::max(*start, floor_of(topic, partition));
    std::lock_guard g(_mu);
    _starts[{topic, partition}] = {start, std::nullopt, std::chrono::steady_clock::now()};
    return start;
}

result<std::optional<int64_t>> remote_reader::recent_start_offset(const std::string& topic, int32_t partition,
                                                                  std::chrono::milliseconds max_age) {
    {
        std::lock_guard g(_mu);
        auto it = _starts.find({topic, partition});
        if (it != _starts.end() && std::chrono::steady_clock::now() - it->second.at <= max_age) {
            if (it->second.gap) return std::unexpected(*it->second.gap);
            return it->second.offset;
        }
    }
    return start_offset(topic, partition);
}

result<std::optional<remote_reader::ts_hit>> remote_reader::offset_for_timestamp(const std::string& topic,
                                                                                 int32_t partition, int64_t ts,
                                                                                 int64_t limit) {
    return replanning("offset for timestamp", [&] { return offset_for_timestamp_once(topic, partition, ts, limit); });
}

result<std::optional<remote_reader::ts_hit>> remote_reader::offset_for_timestamp_once(const std::string& topic,
                                                                                      int32_t partition, int64_t ts,
                                                                                      int64_t limit) {
    auto& r = reader_for(topic);
    auto key = stream_key_for(topic, partition);
    auto files = FLOE_TRY(r.files_for_time(key, ts, INT64_MAX));
    std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.min_offset < b.min_offset; });
    const int64_t floor = floor_of(topic, partition);
    for (auto& f : files) {
        if (f.min_offset >= limit) break;
        auto rows = FLOE_TRY(rows_of(r, f));
        for (auto& row : *rows)
            if (row.stream_key == key && row.offset >= floor && row.offset < limit && kafka_ts(row) >= ts) {
                tiered_reads().with({"list_offsets"}).inc();
                return std::optional<ts_hit>(ts_hit{row.offset, kafka_ts(row)});
            }
    }
    return std::optional<ts_hit>();
}

} // namespace floe::tiering
