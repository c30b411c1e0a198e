#include "http/lookups.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/lru_cache.h"
#include "http/admin.h"
#include "http/search_filter.h"
#include "http/time_order.h"
#include "lake/iceberg_lake.h"
#include "log/local_tier.h"
#include "log/topic_config.h"
#include "tiering/batch_records.h"
#include "tiering/remote_reader.h"
#include "tiering/storage_worker.h"
#include "tiering/table_maintainer.h"

#include <charconv>
#include <mutex>
#include <set>
#include <unordered_map>

namespace floe::http {
namespace {

std::string base64(std::string_view in) {
    static constexpr char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
        out += t[v >> 18];
        out += t[(v >> 12) & 63];
        out += t[(v >> 6) & 63];
        out += t[v & 63];
    }
    if (i + 1 == in.size()) {
        uint32_t v = uint8_t(in[i]) << 16;
        out += t[v >> 18];
        out += t[(v >> 12) & 63];
        out += "==";
    } else if (i + 2 == in.size()) {
        uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
        out += t[v >> 18];
        out += t[(v >> 12) & 63];
        out += t[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

bool valid_utf8(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        auto c = uint8_t(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        if (n == 1 && c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false; // controls: base64
        for (size_t k = 1; k < n; ++k)
            if ((uint8_t(s[i + k]) >> 6) != 2) return false;
        if (n == 2 && c < 0xC2) return false;                                  // overlong
        if (n == 3 && c == 0xE0 && uint8_t(s[i + 1]) < 0xA0) return false;    // overlong
        if (n == 3 && c == 0xED && uint8_t(s[i + 1]) >= 0xA0) return false;   // surrogates
        if (n == 4 && (c > 0xF4 || (c == 0xF0 && uint8_t(s[i + 1]) < 0x90) || (c == 0xF4 && uint8_t(s[i + 1]) >= 0x90)))
            return false;
        i += n;
    }
    return true;
}

/// "name":value,"name_encoding":"utf8"|"base64" (null values: "name":null).
void put_bytes_field(std::string& out, std::string_view name, const std::optional<std::string_view>& v,
                     bool force_base64) {
    if (!v) {
        out += fmt::format(R"("{}":null)", name);
        return;
    }
    bool text = !force_base64 && valid_utf8(*v);
    out += fmt::format(R"("{}":"{}","{}_encoding":"{}")", name, text ? json_escape(*v) : base64(*v), name,
                       text ? "utf8" : "base64");
}

struct record_out {
    int32_t partition = 0;
    int64_t offset = 0;
    int64_t timestamp = 0;
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    const char* tier = "local";
};

std::string render(const record_out& r, bool force_base64) {
    std::string out = fmt::format(R"({{"partition":{},"offset":{},"timestamp":{},"tier":"{}",)", r.partition,
                                  r.offset, r.timestamp, r.tier);
    auto opt = [](const std::optional<std::string>& s) {
        return s ? std::optional<std::string_view>(*s) : std::nullopt;
    };
    put_bytes_field(out, "key", opt(r.key), force_base64);
    out += ',';
    put_bytes_field(out, "value", opt(r.value), force_base64);
    out += R"(,"headers":[)";
    for (size_t i = 0; i < r.headers.size(); ++i) {
        if (i) out += ',';
        out += fmt::format(R"({{"key":"{}",)", json_escape(r.headers[i].first));
        put_bytes_field(out, "value", opt(r.headers[i].second), force_base64);
        out += '}';
    }
    out += "]}";
    return out;
}

record_out from_remote(const parquet::message_record& m) {
    record_out r;
    r.partition = m.partition;
    r.offset = m.offset;
    r.timestamp = m.kafka_timestamp >= 0 ? m.kafka_timestamp : m.message_ts;
    r.key = m.key;
    r.value = m.value;
    if (m.headers)
        for (auto& h : *m.headers) r.headers.emplace_back(h.key, h.value);
    r.tier = "remote";
    return r;
}

result<int64_t> int_param(const request& r, const std::string& name, std::optional<int64_t> dflt) {
    auto v = r.param(name);
    if (!v) {
        if (dflt) return *dflt;
        return fail(errc::invalid_argument, "missing parameter '{}'", name);
    }
    int64_t out = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || p != v->data() + v->size())
        return fail(errc::invalid_argument, "parameter '{}' must be an integer, got '{}'", name, *v);
    return out;
}

/// A parameter with a fixed set of values: absent gives `dflt`; anything else is a 400 that
/// lists the accepted values (so `all=maybe` is not quietly read as false).
result<std::string> choice_param(const request& r, const std::string& name,
                                 std::initializer_list<std::string_view> accepted, std::string_view dflt) {
    auto v = r.param(name);
    if (!v) return std::string(dflt);
    if (std::find(accepted.begin(), accepted.end(), *v) != accepted.end()) return *v;
    return fail(errc::invalid_argument, "parameter '{}' must be one of {}; got '{}'", name,
                fmt::join(accepted, ", "), *v);
}

/// `encoding`: "base64" forces base64 for keys, values and header values; "auto" (the default)
/// gives UTF-8 text where valid.
result<bool> force_base64_param(const request& r) {
    auto e = FLOE_TRY(choice_param(r, "encoding", {"auto", "base64"}, "auto"));
    return e == "base64";
}

record_out from_view(int32_t partition, const tiering::record_view& v, const char* tier) {
    record_out r;
    r.partition = partition;
    r.offset = v.offset;
    r.timestamp = v.timestamp;
    if (v.key) r.key = std::string(*v.key);
    if (v.value) r.value = std::string(*v.value);
    for (auto& hv : *v.headers)
        r.headers.emplace_back(std::string(hv.key),
                               hv.value ? std::optional<std::string>(std::string(*hv.value)) : std::nullopt);
    r.tier = tier;
    return r;
}

/// Decoded local batches, most recently used first, bounded by bytes: lookups of offsets in the
/// same batch pay its CRC check and decompression once. Keyed by topic id, partition and base
/// offset, so a topic deleted and created again never hits.
class batch_cache {
public:
    using batch_ptr = std::shared_ptr<const tiering::indexed_batch>;
    explicit batch_cache(size_t limit) : _lru(limit) {}

    batch_ptr get(const std::string& k) {
        std::lock_guard g(_mu);
        auto hit = _lru.get(k);
        return hit ? *hit : nullptr;
    }
    void put(const std::string& k, batch_ptr b) {
        size_t bytes = b->memory();
        std::lock_guard g(_mu);
        _lru.put(k, std::move(b), bytes);
    }

private:
    std::mutex _mu;
    lru_cache<std::string, batch_ptr> _lru; ///< weighed in bytes
};

/// Reads local records of a partition from `offset`, calling fn(record_out) -> bool (false:
/// stop). Reads at most `max_records` records. A start moved by retention ends the scan.
/// Committed data only, as a read_committed consumer and the Iceberg table see it: the scan
/// stops at the last stable offset and skips records of aborted transactions.
/// With a cache, one batch at a time through it (lookups of a few records); without, 1 MiB
/// chunks streamed (index building, long scans).
result<void> scan_local(log::local_partition& p, int64_t offset, size_t max_records,
                        const std::function<bool(record_out&&)>& fn, batch_cache* cache = nullptr) {
    size_t seen = 0;
    int64_t from = std::max(offset, p.log_start_offset()()), until = p.last_stable_offset()();
    if (!cache) {
        auto r = tiering::for_each_local_record(p, from, until, 1u << 20, 64u << 20,
                                                [&](const tiering::record_view& v) -> result<bool> {
                                                    ++seen;
                                                    return fn(from_view(p.tp().partition, v, "local"))
                                                           && seen < max_records;
                                                },
                                                /*committed_only=*/true);
        if (!r && r.error().code() == errc::out_of_range) return {};
        return r;
    }
    std::vector<tiering::header_view> headers;
    const auto aborted = from < until ? p.aborted_transactions(kafka_offset(from), kafka_offset(until))
                                      : std::vector<log::aborted_txn>{};
    for (int64_t next = from; next < until && seen < max_records;) {
        // The batch holding `next`: only its header is read here.
        auto rd = p.read(kafka_offset(next), {.max_bytes = 1, .min_one_batch = true, .max_offset = kafka_offset(until)});
        if (!rd && rd.error().code() == errc::out_of_range) return {};
        if (!rd) return fail(std::move(rd).error());
        if (rd->slices.empty()) break;
        auto& sl = rd->slices.front();
        auto k = fmt::format("{}/{}/{}", p.topic_id().to_string(), p.tp().partition, sl.first_offset());
        auto batch = cache->get(k);
        byte_buffer raw;
        if (!aborted.empty()) {
            FLOE_TRY(rd->copy_to(raw));
            auto h = FLOE_TRY(log::parse_batch_header(raw));
            if (log::in_aborted_transaction(h, aborted)) {
                if (sl.last_offset() < next) break; // no progress
                next = sl.last_offset() + 1;        // not committed data
                continue;
            }
        }
        if (!batch) {
            if (raw.empty()) FLOE_TRY(rd->copy_to(raw));
            batch = FLOE_TRY_CTX(tiering::indexed_batch::build(raw, 64u << 20), "{}-{} at offset {}", p.tp().topic,
                                 p.tp().partition, next);
            cache->put(k, batch);
        }
        size_t i = 0;
        auto first = FLOE_TRY_CTX(batch->at_or_after(next, i, headers), "{}-{} at offset {}", p.tp().topic,
                                  p.tp().partition, next);
        if (first) {
            ++seen;
            if (!fn(from_view(p.tp().partition, *first, "local"))) return {};
            for (++i; i < batch->size() && seen < max_records; ++i) {
                auto v = FLOE_TRY(batch->record(i, headers));
                ++seen;
                if (!fn(from_view(p.tp().partition, v, "local"))) return {};
            }
        }
        if (sl.last_offset() < next) break; // no progress
        next = sl.last_offset() + 1;
    }
    return {};
}

/// key -> offsets of one partition's local log, caught up incrementally.
struct partition_key_index {
    std::mutex mu;
    int64_t indexed_up_to = 0;
    std::unordered_map<std::string, std::vector<int64_t>> offsets;
};

} // namespace

struct lookup_service::impl {
    impl(log::local_tier& l, lake::iceberg_lake* lk, tiering::remote_reader* r, lookup_options o)
        : logs(l), lake(lk), remote(r), opts(o) {}
    log::local_tier& logs;
    lake::iceberg_lake* lake;
    tiering::remote_reader* remote;
    lookup_options opts;
    batch_cache batches{opts.batch_cache_bytes};
    std::mutex mu;
    std::map<std::pair<std::string, int32_t>, std::shared_ptr<partition_key_index>> indexes;
    /// Running searches by client address. Shared with each search's place (search_slot): a
    /// stream still open when the server stops is destroyed with the server's io_context, after
    /// `floe serve` has destroyed this service, and gives its place back here.
    struct client_places {
        std::mutex mu;
        std::map<std::string, size_t> running;
    };
    std::shared_ptr<client_places> places = std::make_shared<client_places>();

    std::shared_ptr<partition_key_index> index_for(const std::string& topic, int32_t p) {
        std::lock_guard g(mu);
        auto& i = indexes[{topic, p}];
        if (!i) i = std::make_shared<partition_key_index>();
        return i;
    }

    /// Brings the index up to the log end; O(new records).
    result<void> catch_up(log::local_partition& p, partition_key_index& idx) {
        auto start = FLOE_TRY(p.current_offsets()).log_start();
        if (idx.indexed_up_to < start) {
            // Retention removed the oldest segments: drop their offsets.
            for (auto it = idx.offsets.begin(); it != idx.offsets.end();) {
                auto& v = it->second;
                v.erase(v.begin(), std::lower_bound(v.begin(), v.end(), start));
                it = v.empty() ? idx.offsets.erase(it) : std::next(it);
            }
            idx.indexed_up_to = start;
        }
        return scan_local(p, idx.indexed_up_to, SIZE_MAX, [&](record_out&& r) {
            if (r.key) idx.offsets[*r.key].push_back(r.offset);
            idx.indexed_up_to = r.offset + 1;
            return true;
        });
    }

    result<std::optional<record_out>> local_record(log::local_partition& p, int64_t offset) {
        std::optional<record_out> out;
        FLOE_TRY(scan_local(p, offset, 1, [&](record_out&& r) {
            if (r.offset == offset) out = std::move(r);
            return false;
        }, &batches));
        return out;
    }
};

lookup_service::lookup_service(log::local_tier& logs, lake::iceberg_lake* lake, tiering::remote_reader* remote,
                               lookup_options opts)
    : _impl(std::make_unique<impl>(logs, lake, remote, opts)) {}

lookup_service::~lookup_service() = default;

namespace {
response from_error(const error& e) {
    // A store that cannot be reached right now (Redis down) is worth a retry: 503.
    int status = e.code() == errc::invalid_argument ? 400
               : e.code() == errc::not_found       ? 404
               : e.code() == errc::unavailable || e.code() == errc::timeout ? 503
                                                                           : 500;
    return response::error(status, e.message());
}
std::vector<std::string> split_path(std::string_view p) {
    std::vector<std::string> out;
    while (!p.empty()) {
        if (p.front() == '/') {
            p.remove_prefix(1);
            continue;
        }
        auto s = p.find('/');
        out.emplace_back(p.substr(0, s));
        if (s == std::string_view::npos) break;
        p.remove_prefix(s);
    }
    return out;
}
} // namespace

void lookup_service::add_routes(server& s) {
    // POST /v1/topics/{topic}/dlq/replay: `floe dlq replay`. Moving rows between a topic's two
    // tables changes its data: ALTER on the topic, as a commit through /iceberg.
    s.route_prefix("POST", "/v1/topics/", [this](const request& r) {
        auto parts = split_path(r.path); // v1 topics T dlq replay
        if (parts.size() != 5 || parts[3] != "dlq" || parts[4] != "replay") {
            count_request("/v1/topics/{unknown}");
            return response::error(404, fmt::format("no such endpoint: POST {}", r.path));
        }
        count_request("/v1/topics/{topic}/dlq/replay");
        if (!_access.allows(r, acl_op::alter, acl_type::topic, parts[2]))
            return response::error(403, fmt::format("{} may not alter topic '{}'", r.principal, parts[2]));
        return replay_dead_letters(parts[2]);
    });
    s.route("GET", "/v1/groups", [this](const request& r) {
        count_request("/v1/groups");
        return groups(r);
    });
    s.route("GET", "/v1/topics", [this](const request& r) {
        count_request("/v1/topics");
        return topics(r);
    });
    s.route_prefix("GET", "/v1/topics/", [this](const request& r) {
        auto parts = split_path(r.path); // v1 topics T ...
        if (parts.size() >= 4 && !_access.allows(r, acl_op::read, acl_type::topic, parts[2]))
            return response::error(403, fmt::format("{} may not read topic '{}'", r.principal, parts[2]));
        if (parts.size() == 5 && parts[3] == "table" && parts[4] == "files") {
            count_request("/v1/topics/{topic}/table/files");
            return table_files(r, parts[2]);
        }
        if (parts.size() == 4 && parts[3] == "search") {
            count_request("/v1/topics/{topic}/search");
            return search(r, parts[2]);
        }
        if (parts.size() == 4 && parts[3] == "configs") {
            count_request("/v1/topics/{topic}/configs");
            return configs(r, parts[2]);
        }
        if (parts.size() == 4 && parts[3] == "records") {
            count_request("/v1/topics/{topic}/records");
            if (r.param("key")) return records_by_key(r, parts[2]);
            if (r.param("from-ts") || r.param("to-ts")) return records_by_time(r, parts[2]);
            return response::error(400, "records needs ?key=K or ?from-ts=..&to-ts=.. (or use "
                                        "/partitions/{p}/records?offset=O)");
        }
        if (parts.size() == 6 && parts[3] == "partitions" && parts[5] == "records") {
            count_request("/v1/topics/{topic}/partitions/{partition}/records");
            int32_t p = 0;
            auto [ptr, ec] = std::from_chars(parts[4].data(), parts[4].data() + parts[4].size(), p);
            if (ec != std::errc() || ptr != parts[4].data() + parts[4].size() || p < 0)
                return response::error(400, fmt::format("partition '{}' is not a partition number", parts[4]));
            return records_by_offset(r, parts[2], p);
        }
        count_request("/v1/topics/{unknown}");
        return response::error(404, fmt::format("no such endpoint: {}", r.path));
    });
}

std::string lookup_service::table_state_json(const std::string& topic) {
    if (!_impl->opts.maintainer) return "null";
    auto st = _impl->opts.maintainer->state(topic);
    if (!st) return fmt::format(R"({{"error":"{}"}})", json_escape(st.error().message()));
    if (!*st) return "null";
    auto& s = **st;
    std::string runs;
    for (auto& r : s.last_runs)
        runs += fmt::format(R"({}"{}":{{"at_ms":{},"seconds":{:.3f},"ok":{},"detail":"{}"}})", runs.empty() ? "" : ",",
                            r.kind, r.at_ms, r.seconds, r.ok, json_escape(r.detail));
    // The same numbers as the floe_table_* gauges (the average printed as /metrics does).
    return fmt::format(R"({{"data_files":{},"small_data_files":{},"avg_data_file_bytes":{},"snapshots":{},"metadata_bytes":{},"measured_at_ms":{},"last_runs":{{{}}}}})",
                       s.data_files, s.small_data_files, s.avg_data_file_bytes, s.snapshots, s.metadata_bytes,
                       s.measured_at_ms, runs);
}

response lookup_service::replay_dead_letters(const std::string& topic) {
    if (!_impl->lake) return response::error(503, "no lake: dead letters cannot be replayed");
    std::optional<log::topic_info> info;
    for (auto& t : _impl->logs.topics())
        if (t.name == topic) info = t;
    if (!info) return response::error(404, fmt::format("no topic '{}'", topic));
    // One replay at a time in this process (another broker's is refused at its commit). It runs
    // on an HTTP I/O thread for as long as it takes: a second one is answered 409 at once rather
    // than holding a second thread of the plane while it waits.
    static std::mutex one_at_a_time;
    std::unique_lock g(one_at_a_time, std::try_to_lock);
    if (!g.owns_lock())
        return response::error(409, fmt::format("a dead-letter replay is already running on this broker; run floe "
                                                "dlq replay --topic {} again once it has ended",
                                                topic));
    auto rep = lake::replay_dead_letters(*_impl->lake, topic, tiering::value_decoding_of(*info));
    if (!rep) return from_error(rep.error());
    std::string reasons;
    for (auto& [k, v] : rep->reasons) reasons += fmt::format(R"({}"{}":{})", reasons.empty() ? "" : ",", json_escape(k), v);
    return response::json(200, fmt::format(R"({{"topic":"{}","dead_letter_table":"{}","files":{},"files_waiting":{},"replayed":{},"still_dead":{},"already_in_table":{},"reasons":{{{}}}}})",
                                           json_escape(topic), json_escape(lake::dlq_table_name(lake::table_name_for_topic(topic))),
                                           rep->files, rep->files_waiting, rep->replayed, rep->still_dead,
                                           rep->already_in_main, reasons));
}

response lookup_service::topics(const request& r) {
    std::string out = R"({"topics":[)";
    bool first = true;
    for (auto& t : _impl->logs.topics()) {
        if (!_access.allows(r, acl_op::describe, acl_type::topic, t.name, /*quiet=*/true)) continue;
        if (!first) out += ',';
        first = false;
        auto table = lake::table_name_for_topic(t.name);
        std::string location;
        if (_impl->lake)
            location = fmt::format("{}/{}/{}", _impl->lake->options().warehouse, _impl->lake->options().ns, table);
        // A typed topic's dead-letter table and how many records it holds.
        std::string dead = "null";
        if (t.config.typed() && _impl->lake) {
            auto n = lake::dead_letter_records(*_impl->lake, t.name);
            dead = n ? fmt::format(R"({{"table":"{}","records":{}}})", json_escape(lake::dlq_table_name(table)), *n)
                     : fmt::format(R"({{"table":"{}","error":"{}"}})", json_escape(lake::dlq_table_name(table)),
                                   json_escape(n.error().message()));
        }
        out += fmt::format(R"({{"name":"{}","id":"{}","remote_storage_enable":{},"iceberg_mode":"{}","table":{{"namespace":"{}","name":"{}","location":"{}","state":{}}},"dead_letter":{},"partitions":[)",
                           json_escape(t.name), t.id.to_string(), t.config.remote_storage_enable,
                           json_escape(t.config.iceberg_mode), _impl->lake ? json_escape(_impl->lake->options().ns) : "",
                           json_escape(table), json_escape(location), table_state_json(t.name), dead);
        for (int32_t p = 0; p < t.partitions; ++p) {
            auto pl = _impl->logs.partition(t.name, p);
            if (!pl) continue;
            auto o = pl->offsets();
            std::string remote_start = "null";
            if (_impl->remote) {
                auto rs = _impl->remote->start_offset(t.name, p);
                if (rs && *rs) remote_start = std::to_string(**rs);
            }
            auto offloaded = pl->offloaded_up_to()();
            int64_t lag = t.config.remote_storage_enable ? std::max<int64_t>(0, o.log_end() - offloaded) : 0;
            // How far the table is behind, in time: the age of the oldest record not yet in it
            // (by its batch's timestamp, as floe_offload_lag_seconds), 0 when none; null untiered.
            std::string lag_s = "null";
            if (t.config.remote_storage_enable) {
                auto h = pl->batch_header_at(kafka_offset(offloaded));
                double age = 0;
                if (h && *h) {
                    int64_t ts = (*h)->is_log_append_time() ? (*h)->max_timestamp : (*h)->base_timestamp;
                    age = double(std::max<int64_t>(0, system_clock_source::instance().now_ms() - ts)) / 1000.0;
                }
                if (h) lag_s = fmt::format("{:.3f}", age); // unreadable (store down): null
            }
            out += fmt::format(R"({}{{"partition":{},"local_start":{},"log_end":{},"high_watermark":{},"remote_start":{},"offloaded_up_to":{},"offload_lag_records":{},"offload_lag_seconds":{}}})",
                               p ? "," : "", p, o.log_start(), o.log_end(), o.high_watermark(), remote_start,
                               offloaded, lag, lag_s);
        }
        out += "]}";
    }
    out += "]}";
    return response::json(200, out);
}

response lookup_service::records_by_offset(const request& r, const std::string& topic, int32_t partition) {
    auto pl = _impl->logs.partition(topic, partition);
    if (!pl) return response::error(404, fmt::format("no partition {} of topic '{}'", partition, topic));
    auto offset = int_param(r, "offset", std::nullopt);
    if (!offset) return from_error(offset.error());
    auto limit = int_param(r, "limit", int64_t(_impl->opts.default_limit));
    if (!limit) return from_error(limit.error());
    if (*offset < 0 || *limit <= 0) return response::error(400, "offset must be >= 0 and limit > 0");
    size_t cap = std::min<size_t>(size_t(*limit), _impl->opts.max_limit);
    auto b64 = force_base64_param(r);
    if (!b64) return from_error(b64.error());
    std::vector<std::string> recs;
    size_t bytes = 0;
    int64_t next = *offset;
    auto local = pl->current_offsets();
    if (!local) {
        // The local tier cannot reach its store (Redis down): what the remote tier holds from
        // the offset on is answered (next_offset says where to go on), else the retriable error.
        if (_impl->remote) {
            auto rows = _impl->remote->read_rows(topic, partition, next, INT64_MAX, cap);
            if (rows && !rows->empty()) {
                for (auto& m : *rows) {
                    if (recs.size() >= cap || bytes >= _impl->opts.max_response_bytes) break;
                    recs.push_back(render(from_remote(m), *b64));
                    bytes += recs.back().size();
                    next = m.offset + 1;
                }
                return response::json(200, fmt::format(R"({{"topic":"{}","partition":{},"next_offset":{},"records":[{}]}})",
                                                       json_escape(topic), partition, next, fmt::join(recs, ",")));
            }
        }
        return from_error(local.error());
    }
    auto local_start = local->log_start();
    auto room = [&] { return recs.size() < cap && bytes < _impl->opts.max_response_bytes; };
    for (int round = 0;; ++round) {
        if (next < local_start && _impl->remote) {
            // Only the pages holding the rows asked for are read from the table's files.
            auto rows = _impl->remote->read_rows(topic, partition, next, local_start, cap - recs.size());
            if (!rows) return from_error(rows.error());
            for (auto& m : *rows) {
                if (!room()) break;
                recs.push_back(render(from_remote(m), *b64));
                bytes += recs.back().size();
                next = m.offset + 1;
            }
            // The remote tier had nothing more below the local start: go on there.
            if (room()) next = std::max(next, local_start);
        }
        if (!room()) break;
        const int64_t from = next;
        const size_t kept = recs.size(), kept_bytes = bytes;
        auto sc = scan_local(*pl, next, cap - recs.size(), [&](record_out&& o) {
            recs.push_back(render(o, *b64));
            bytes += recs.back().size();
            next = o.offset + 1;
            return bytes < _impl->opts.max_response_bytes;
        }, cap <= 100 ? &_impl->batches : nullptr);
        if (!sc) return from_error(sc.error());
        // Local retention moved the start past `from` during the scan (it only moves forward):
        // the records in between went to the remote tier meanwhile and the scan skipped them.
        // Drop what it read and go on from `from` through the remote tier.
        local_start = pl->log_start_offset()();
        if (local_start <= from || !_impl->remote) break;
        if (round == 4)
            return response::error(503, "local retention kept moving the start of the local log during the lookup; retry");
        recs.resize(kept);
        bytes = kept_bytes;
        next = from;
    }
    return response::json(200, fmt::format(R"({{"topic":"{}","partition":{},"next_offset":{},"records":[{}]}})",
                                           json_escape(topic), partition, next, fmt::join(recs, ",")));
}

response lookup_service::table_files(const request& r, const std::string& topic) {
    if (!_impl->logs.topic(topic)) return response::error(404, fmt::format("no topic '{}'", topic));
    if (!_impl->lake) return response::error(404, "no lake configured");
    auto& wh = *_impl->lake;
    iceberg::table_ident t{wh.options().ns, lake::table_name_for_topic(topic)};
    std::string head = fmt::format(R"("topic":"{}","table":{{"namespace":"{}","name":"{}"}})", json_escape(topic),
                                   json_escape(t.ns), json_escape(t.name));
    auto current = lake::current_data_files(wh.catalog(), wh.io(), t);
    if (!current && current.error().code() == errc::not_found) // nothing offloaded yet
        return response::json(200, fmt::format(R"({{{},"metadata_location":null,"snapshot_id":null,"records":0,"files":[]}})", head));
    if (!current) return from_error(current.error());
    std::string files;
    int64_t records = 0;
    for (auto& f : current->files) {
        records += f.record_count;
        files += fmt::format(R"({}{{"uri":"{}","path":"{}","records":{},"bytes":{}}})", files.empty() ? "" : ",",
                             json_escape(f.file_path), json_escape(lake::readable_path(f.file_path)), f.record_count,
                             f.file_size_in_bytes);
    }
    return response::json(200, fmt::format(R"({{{},"metadata_location":"{}","snapshot_id":{},"records":{},"files":[{}]}})",
                                           head, json_escape(current->metadata_location),
                                           current->snapshot_id ? std::to_string(*current->snapshot_id) : "null",
                                           records, files));
}

response lookup_service::records_by_key(const request& r, const std::string& topic) {
    auto t = _impl->logs.topic(topic);
    if (!t) return response::error(404, fmt::format("no topic '{}'", topic));
    auto key = *r.param("key");
    auto all_param = choice_param(r, "all", {"true", "false"}, "false");
    if (!all_param) return from_error(all_param.error());
    bool all = *all_param == "true";
    auto b64 = force_base64_param(r);
    if (!b64) return from_error(b64.error());
    auto limit = int_param(r, "limit", int64_t(_impl->opts.max_limit));
    if (!limit || *limit <= 0) return response::error(400, "limit must be a positive integer");
    size_t cap = std::min<size_t>(size_t(*limit), _impl->opts.max_limit);
    std::vector<record_out> found;
    std::set<int32_t> hot_hit;
    // A partition whose local tier cannot reach its store (Redis down) is looked up in the
    // remote tier only, and the answer says so ("local_tier":"unavailable"): a newer match
    // may be in the local tier.
    std::optional<error> local_down;
    for (int32_t p = 0; p < t->partitions; ++p) {
        auto pl = _impl->logs.partition(topic, p);
        if (!pl) continue;
        auto idx = _impl->index_for(topic, p);
        std::vector<int64_t> offsets;
        {
            std::lock_guard g(idx->mu);
            auto c = _impl->catch_up(*pl, *idx);
            if (!c && _impl->remote && (c.error().code() == errc::unavailable || c.error().code() == errc::timeout)) {
                local_down = c.error();
                continue;
            }
            if (!c) return from_error(c.error());
            // Every offset of the key, or its latest (copied element-wise: g++ 12 at -O3 warns
            // wrongly about a vector copy-assignment followed by an erase here).
            if (auto it = idx->offsets.find(std::string(key)); it != idx->offsets.end() && !it->second.empty()) {
                if (all) offsets.assign(it->second.begin(), it->second.end());
                else offsets.push_back(it->second.back());
            }
        }
        if (offsets.empty()) continue;
        for (auto o : offsets) {
            auto rec = _impl->local_record(*pl, o);
            if (!rec) return from_error(rec.error());
            if (*rec) {
                found.push_back(std::move(**rec));
                hot_hit.insert(p);
            }
        }
    }
    // The remote tier: every partition for all=true, else only partitions without a hot hit.
    if (_impl->remote && (all || hot_hit.size() < size_t(t->partitions))) {
        // History the table should hold but does not: 503 naming the table, never a 404.
        for (int32_t p = 0; p < t->partitions; ++p)
            if (auto whole = _impl->remote->check_history(topic, p); !whole) return from_error(whole.error());
        auto cold = _impl->remote->find_by_key(topic, key, all);
        if (!cold) return from_error(cold.error());
        std::set<std::pair<int32_t, int64_t>> have;
        for (auto& f : found) have.insert({f.partition, f.offset});
        for (auto& m : *cold) {
            if (!all && hot_hit.contains(m.partition)) continue;
            if (have.insert({m.partition, m.offset}).second) found.push_back(from_remote(m));
        }
    }
    if (!all && !found.empty()) {
        auto newest = std::max_element(found.begin(), found.end(), [](auto& a, auto& b) {
            return std::tie(a.timestamp, a.partition, a.offset) < std::tie(b.timestamp, b.partition, b.offset);
        });
        found = {std::move(*newest)};
    }
    std::sort(found.begin(), found.end(),
              [](auto& a, auto& b) { return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset); });
    if (found.size() > cap) found.resize(cap);
    if (!all && found.empty()) {
        if (local_down) return from_error(*local_down);
        return response::error(404, fmt::format("no record with key '{}' in topic '{}'", json_escape(key), topic));
    }
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(render(f, *b64));
    return response::json(200, fmt::format(R"({{"topic":"{}",{}"records":[{}]}})", json_escape(topic),
                                           local_down ? R"("local_tier":"unavailable",)" : "", fmt::join(out, ",")));
}

response lookup_service::records_by_time(const request& r, const std::string& topic) {
    auto t = _impl->logs.topic(topic);
    if (!t) return response::error(404, fmt::format("no topic '{}'", topic));
    auto from = int_param(r, "from-ts", int64_t(0));
    auto to = int_param(r, "to-ts", INT64_MAX);
    if (!from) return from_error(from.error());
    if (!to) return from_error(to.error());
    if (*from > *to) return response::error(400, "from-ts is after to-ts");
    auto limit = int_param(r, "limit", int64_t(_impl->opts.default_limit));
    if (!limit || *limit <= 0) return response::error(400, "limit must be a positive integer");
    size_t cap = std::min<size_t>(size_t(*limit), _impl->opts.max_limit);
    auto b64 = force_base64_param(r);
    if (!b64) return from_error(b64.error());
    std::optional<time_position> after;
    if (auto a = r.param("after")) {
        auto p = parse_cursor(*a);
        if (!p) return from_error(p.error());
        after = *p;
    }
    // Timestamps need not grow with offsets (CreateTime), so every partition is read from its
    // first offset at or after the lowest timestamp wanted to its end, keeping the `cap` first
    // by (timestamp, partition, offset): the order is exact, and bounded in memory by `cap`.
    // One record past the budget is read to tell "exactly the budget" from "more than it".
    size_t budget = _impl->opts.max_scan_records;
    auto read_all = [&](time_page<record_out>& page, size_t& scanned) -> result<bool> {
        auto lower = page.lower_timestamp();
        for (int32_t p = 0; p < t->partitions && scanned <= budget; ++p) {
            auto pl = _impl->logs.partition(topic, p);
            if (!pl) continue;
            auto local_start = pl->log_start_offset()();
            if (_impl->remote) {
                auto cold = FLOE_TRY(_impl->remote->find_by_time(topic, p, lower, *to, local_start,
                                                                 budget - scanned + 1));
                scanned += cold.size();
                for (auto& m : cold) page.offer(from_remote(m));
            }
            auto start = FLOE_TRY(pl->offset_for_timestamp(lower));
            if (start && scanned <= budget)
                FLOE_TRY(scan_local(*pl, start->offset(), budget - scanned + 1, [&](record_out&& o) {
                    ++scanned;
                    page.offer(std::move(o));
                    return true;
                }));
            // The remote tier was asked for offsets below `local_start`: if local retention
            // removed (offloaded) segments past it meanwhile, their records may be in neither
            // answer.
            if (pl->log_start_offset()() != local_start) return false;
        }
        return true;
    };
    std::optional<time_page<record_out>> page;
    size_t scanned = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        page.emplace(cap, *from, *to, after);
        scanned = 0;
        auto complete = read_all(*page, scanned);
        if (!complete) return from_error(complete.error());
        if (*complete) break;
        if (attempt == 4)
            return response::error(503, "local retention kept moving the start of the local log "
                                        "during the lookup; retry");
    }
    if (scanned > budget)
        return response::error(400, fmt::format("more than {} records to order from timestamp {} on; "
                                                "use a later from-ts (or after), or read partitions "
                                                "by offset",
                                                budget, page->lower_timestamp()));
    bool more = page->more();
    std::vector<std::string> out;
    size_t bytes = 0;
    std::optional<time_position> last;
    for (auto& f : page->take()) {
        if (bytes >= _impl->opts.max_response_bytes) {
            more = true;
            break;
        }
        out.push_back(render(f, *b64));
        bytes += out.back().size();
        last = time_page<record_out>::position(f);
    }
    auto next = more && last ? fmt::format(R"("{}")", format_cursor(*last)) : std::string("null");
    return response::json(200, fmt::format(R"({{"topic":"{}","records":[{}],"next":{}}})", json_escape(topic),
                                           fmt::join(out, ","), next));
}


// ---- search, groups, configs (the console's endpoints; scripts may use them too) ----

namespace {

/// Where a search goes on, per partition: forward, the next offset to read; backward, the
/// offset below which to read next (towards the log start). "f:0.120,1.98" / "b:0.40".
struct search_cursor {
    bool forward = true;
    std::map<int32_t, int64_t> pos;
};

std::string format_search_cursor(const search_cursor& c) {
    std::string out = c.forward ? "f:" : "b:";
    for (auto& [p, o] : c.pos) out += fmt::format("{}{}.{}", out.size() > 2 ? "," : "", p, o);
    return out;
}

result<search_cursor> parse_search_cursor(std::string_view s) {
    search_cursor c;
    const std::string given(s);
    if (s.size() < 2 || (s[0] != 'f' && s[0] != 'b') || s[1] != ':')
        return fail(errc::invalid_argument, "cursor '{}' is not one this endpoint gave", given);
    c.forward = s[0] == 'f';
    s.remove_prefix(2);
    while (!s.empty()) {
        auto comma = s.find(',');
        auto item = s.substr(0, comma);
        auto dot = item.find('.');
        int32_t p = 0;
        int64_t o = 0;
        bool ok = dot != std::string_view::npos;
        if (ok) {
            auto [e1, c1] = std::from_chars(item.data(), item.data() + dot, p);
            auto [e2, c2] = std::from_chars(item.data() + dot + 1, item.data() + item.size(), o);
            ok = c1 == std::errc() && e1 == item.data() + dot && c2 == std::errc() &&
                 e2 == item.data() + item.size() && p >= 0 && o >= 0;
        }
        if (!ok) return fail(errc::invalid_argument, "cursor '{}' is not one this endpoint gave", given);
        c.pos[p] = o;
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return c;
}

searched_record view_of(const record_out& o) {
    searched_record v;
    v.timestamp = o.timestamp;
    if (o.key) v.key = *o.key;
    if (o.value) v.value = *o.value;
    v.headers = &o.headers;
    return v;
}

std::string csv_field(const std::optional<std::string>& s) {
    if (!s) return "";
    std::string text = valid_utf8(*s) ? *s : "base64:" + base64(*s);
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

} // namespace

/// Reads the records of one partition with offsets in [from, until) across both tiers, in offset
/// order (the remote tier below the local start, then the local tier), at most `max`, calling
/// fn (false: stop). Returns the offset to go on from: past the last record read, or `until`
/// when the range was read to its end.
static result<int64_t> read_range(lookup_service::impl& im, const std::string& topic, log::local_partition& pl,
                                  int64_t from, int64_t until, size_t max,
                                  const std::function<bool(record_out&&)>& fn) {
    int64_t next = from;
    size_t seen = 0;
    const int32_t part = pl.tp().partition;
    const int64_t local_start = pl.log_start_offset()();
    if (next < local_start && next < until && im.remote && max > 0) {
        const int64_t below = std::min(until, local_start);
        auto rows = FLOE_TRY(im.remote->read_rows(topic, part, next, below, max));
        for (auto& m : rows) {
            ++seen;
            next = m.offset + 1;
            if (!fn(from_remote(m))) return next;
        }
        if (seen >= max) return next;
        next = below; // nothing more in the table below the local start
    }
    next = std::max(next, local_start);
    if (next >= until) return until;
    bool past_until = false, stopped = false, first = true;
    const int64_t lso = pl.last_stable_offset()(), local_from = next;
    FLOE_TRY(scan_local(pl, next, max - seen, [&](record_out&& o) {
        // Local retention moved the start past `local_from` since the remote tier was read: the
        // records in between went to the table meanwhile and the local scan skipped them. Stop
        // before this record; the caller reads again from `local_from` (the table now has them).
        if (first && o.offset > local_from && pl.log_start_offset()() > local_from) return false;
        first = false;
        if (o.offset >= until) {
            past_until = true;
            return false;
        }
        ++seen;
        next = o.offset + 1;
        if (!fn(std::move(o))) {
            stopped = true;
            return false;
        }
        return true;
    }));
    if (past_until) return until;
    if (stopped || seen >= max) return next;
    if (first && pl.log_start_offset()() > local_from) return local_from; // moved before any record: again
    return std::min(until, std::max(next, lso));
}

namespace {

/// One search in progress: what it matches, where each partition is, and what it has read.
struct search_run {
    std::string topic;
    search_filter filter;
    size_t cap = 0;    ///< matches to return (a stream: in all)
    size_t budget = 0; ///< records to read
    bool b64 = false;
    search_cursor cur;
    std::map<int32_t, int64_t> low, end;
    std::map<int32_t, size_t> width; ///< backward: each partition's next window
    size_t scanned = 0, matched = 0;

    bool done() const {
        for (auto& [p, pos] : cur.pos)
            if (cur.forward ? pos < end.at(p) : pos > low.at(p)) return false;
        return true;
    }
};

/// Holds one of a client's `max_searches_per_client` places for as long as it lives.
class search_slot {
public:
    search_slot(std::shared_ptr<lookup_service::impl::client_places> places, std::string client)
        : _places(std::move(places)), _client(std::move(client)) {}
    search_slot(const search_slot&) = delete;
    search_slot& operator=(const search_slot&) = delete;
    ~search_slot();

private:
    std::shared_ptr<lookup_service::impl::client_places> _places;
    std::string _client;
};

} // namespace

/// Reads on from `s.cur` at most `slice` records (and no more than `cap` matches or the
/// response byte limit), across the selected partitions in rounds; returns the matches in
/// (timestamp, partition, offset) order, newest first when the search goes backward.
static result<std::vector<record_out>> search_step(lookup_service::impl& im, search_run& s, size_t slice, size_t cap) {
    std::vector<record_out> found;
    size_t scanned = 0, found_bytes = 0;
    auto full = [&] { return found.size() >= cap || found_bytes >= im.opts.max_response_bytes; };
    auto active = [&] {
        std::vector<int32_t> out;
        for (auto& [p, pos] : s.cur.pos)
            if (s.cur.forward ? pos < s.end[p] : pos > s.low[p]) out.push_back(p);
        return out;
    };
    for (int round = 0; round < 10'000 && !full() && scanned < slice; ++round) {
        auto parts = active();
        if (parts.empty()) break;
        const size_t share = std::max<size_t>(64, (slice - scanned) / parts.size());
        for (auto p : parts) {
            if (full() || scanned >= slice) break;
            const size_t n = std::min(share, slice - scanned);
            auto pl = im.logs.partition(s.topic, p);
            if (!pl) continue;
            auto& pos = s.cur.pos[p];
            if (s.cur.forward) {
                auto next = read_range(im, s.topic, *pl, pos, s.end[p], n, [&](record_out&& o) {
                    ++scanned;
                    if (s.filter.matches(view_of(o))) {
                        found_bytes += (o.key ? o.key->size() : 0) + (o.value ? o.value->size() : 0) + 64;
                        found.push_back(std::move(o));
                        if (full()) return false;
                    }
                    return true;
                });
                if (!next) return std::unexpected(next.error());
                pos = *next;
            } else {
                // A window below `pos` no wider than the share (offsets are unique, so it holds
                // at most that many records), read in offset order; its newest matches are kept.
                // Windows start small (the newest page is usually near the end) and double.
                auto& w = s.width.try_emplace(p, std::max<size_t>(64, cap)).first->second;
                const size_t span = std::min(n, w);
                w *= 2;
                const int64_t lo = std::max(s.low[p], pos - int64_t(span));
                std::vector<record_out> window;
                auto next = read_range(im, s.topic, *pl, lo, pos, span, [&](record_out&& o) {
                    ++scanned;
                    if (s.filter.matches(view_of(o))) window.push_back(std::move(o));
                    return true;
                });
                if (!next) return std::unexpected(next.error());
                if (*next < pos) continue; // not read to its end (the local start moved): again next round
                const size_t room = cap - found.size();
                if (window.size() > room) {
                    window.erase(window.begin(), window.end() - ptrdiff_t(room));
                    pos = window.front().offset; // the rest of the window is read again next time
                } else {
                    pos = lo;
                }
                for (auto& o : window) {
                    found_bytes += (o.key ? o.key->size() : 0) + (o.value ? o.value->size() : 0) + 64;
                    found.push_back(std::move(o));
                }
            }
        }
    }
    s.scanned += scanned;
    s.matched += found.size();
    auto order = [](const record_out& a, const record_out& b) {
        return std::tie(a.timestamp, a.partition, a.offset) < std::tie(b.timestamp, b.partition, b.offset);
    };
    if (s.cur.forward) std::sort(found.begin(), found.end(), order);
    else std::sort(found.begin(), found.end(), [&](auto& a, auto& b) { return order(b, a); });
    return found;
}

/// The matches as a JSON array's elements (without the brackets).
static std::string rendered(const std::vector<record_out>& found, bool b64) {
    std::string out;
    for (auto& f : found) {
        if (!out.empty()) out += ',';
        out += render(f, b64);
    }
    return out;
}

/// One Server-Sent Event: its name and one `data:` line of JSON.
static std::string sse_event(std::string_view name, std::string_view json) {
    return fmt::format("event: {}\ndata: {}\n\n", name, json);
}

static std::string sse_error(const error& e) {
    return sse_event("error", fmt::format(R"({{"error":{{"message":"{}"}}}})", json_escape(e.message())));
}

search_slot::~search_slot() {
    std::lock_guard g(_places->mu);
    if (auto it = _places->running.find(_client); it != _places->running.end() && --it->second == 0)
        _places->running.erase(it);
}

response lookup_service::search(const request& r, const std::string& topic) {
    auto t = _impl->logs.topic(topic);
    if (!t) return response::error(404, fmt::format("no topic '{}'", topic));
    auto run = std::make_shared<search_run>();
    run->topic = topic;
    auto filter = search_filter::parse(r.query);
    if (!filter) return from_error(filter.error());
    auto format = choice_param(r, "format", {"json", "ndjson", "csv"}, "json");
    if (!format) return from_error(format.error());
    if (*format != "json" && !_impl->opts.export_enabled)
        return response::error(403, "exports are disabled on this broker (floe.http.console.export=false)");
    auto b64 = force_base64_param(r);
    if (!b64) return from_error(b64.error());
    auto limit = int_param(r, "limit", 50);
    if (!limit || *limit <= 0) return response::error(400, "limit must be a positive integer");
    const size_t cap = std::min<size_t>(size_t(*limit), _impl->opts.max_limit);
    auto budget_p = int_param(r, "budget", int64_t(_impl->opts.default_search_budget));
    if (!budget_p || *budget_p <= 0) return response::error(400, "budget must be a positive integer (records read)");
    const size_t budget = std::min<size_t>(size_t(*budget_p), _impl->opts.max_search_budget);
    run->filter = std::move(*filter);
    run->cap = cap;
    run->budget = budget;
    run->b64 = *b64;
    // stream=sse: Server-Sent Events, a `records` or `progress` event per slice read, then `end`.
    auto stream_p = choice_param(r, "stream", {"none", "sse"}, "none");
    if (!stream_p) return from_error(stream_p.error());
    const bool sse = *stream_p == "sse";
    if (sse && *format != "json") return response::error(400, "stream=sse answers records as JSON events (format=json)");
    // follow=true (with stream=sse): a live tail; once at the end, new records as they arrive.
    // follow=newest: the same tail, but with no filter it reads only each partition's newest
    // `limit` records at each step (what a person can look at), skipping the rest, so a tail on
    // a busy topic costs `limit` records per step, not the topic's rate. With a filter every new
    // record is still tested.
    auto follow_p = choice_param(r, "follow", {"false", "true", "newest"}, "false");
    if (!follow_p) return from_error(follow_p.error());
    const bool follow = *follow_p != "false";
    const bool newest_only = *follow_p == "newest";
    auto follow_s = int_param(r, "follow-seconds", 300);
    if (!follow_s || *follow_s <= 0 || *follow_s > 3600)
        return response::error(400, "follow-seconds must be an integer in [1, 3600]");
    if (follow && !sse) return response::error(400, "follow=true needs stream=sse");

    std::vector<int32_t> selected;
    auto part_p = r.param("partition");
    if (!part_p || *part_p == "all") {
        for (int32_t p = 0; p < t->partitions; ++p) selected.push_back(p);
    } else {
        auto p = int_param(r, "partition", std::nullopt);
        if (!p) return response::error(400, fmt::format("partition must be a partition number or 'all', got '{}'", *part_p));
        if (*p < 0 || *p >= t->partitions)
            return response::error(404, fmt::format("no partition {} of topic '{}'", *p, topic));
        selected.push_back(int32_t(*p));
    }
    // Each partition's ends now: the lowest offset either tier holds, and the last stable offset.
    auto& low = run->low;
    auto& end = run->end;
    for (auto p : selected) {
        auto pl = _impl->logs.partition(topic, p);
        if (!pl) continue;
        int64_t lo = pl->log_start_offset()();
        if (_impl->remote && t->config.remote_storage_enable) {
            auto rs = _impl->remote->start_offset(topic, p);
            if (!rs) return from_error(rs.error());
            if (*rs) lo = std::min(lo, **rs);
        }
        low[p] = lo;
        end[p] = pl->last_stable_offset()();
    }

    auto& cur = run->cur;
    if (auto c = r.param("cursor")) {
        auto parsed = parse_search_cursor(*c);
        if (!parsed) return from_error(parsed.error());
        cur = std::move(*parsed);
        for (auto it = cur.pos.begin(); it != cur.pos.end();)
            it = low.contains(it->first) ? std::next(it) : cur.pos.erase(it);
    } else {
        auto start = choice_param(r, "from", {"newest", "oldest", "offset", "time"}, "newest");
        if (!start) return from_error(start.error());
        cur.forward = *start != "newest";
        std::optional<int64_t> at;
        if (*start == "offset" || *start == "time") {
            auto a = int_param(r, *start == "offset" ? "offset" : "ts", std::nullopt);
            if (!a) return from_error(a.error());
            at = *a;
        }
        for (auto& [p, lo] : low) {
            if (*start == "newest") cur.pos[p] = end[p];
            else if (*start == "oldest") cur.pos[p] = lo;
            else if (*start == "offset") cur.pos[p] = std::clamp(*at, lo, end[p]);
            else {
                // The first record at or after the time: in the table below the local start,
                // else in the local tier, else the end.
                auto pl = _impl->logs.partition(topic, p);
                std::optional<int64_t> hit;
                if (_impl->remote && lo < pl->log_start_offset()()) {
                    auto h = _impl->remote->offset_for_timestamp(topic, p, *at, pl->log_start_offset()());
                    if (!h) return from_error(h.error());
                    if (*h) hit = (*h)->offset;
                }
                if (!hit) {
                    auto h = pl->offset_for_timestamp(*at);
                    if (!h) return from_error(h.error());
                    if (*h) hit = (*h)->offset();
                }
                cur.pos[p] = hit ? std::max(*hit, lo) : end[p];
            }
        }
    }

    // At most max_searches_per_client at once per client address: a scan may read many records.
    {
        std::lock_guard g(_impl->places->mu);
        auto& n = _impl->places->running[r.client_host];
        if (n >= _impl->opts.max_searches_per_client)
            return response::error(429, fmt::format("{} searches are running for {} already; retry when one has ended",
                                                    n, r.client_host));
        ++n;
    }
    auto slot = std::make_shared<search_slot>(_impl->places, r.client_host);
    auto cursor_json = [run] {
        const bool done = run->done();
        return run->cur.forward || !done ? fmt::format(R"("{}")", format_search_cursor(run->cur)) : std::string("null");
    };
    auto tail_cursor = [run] {
        search_cursor tail{true, {}};
        for (auto& [p, e] : run->end) tail.pos[p] = e;
        return format_search_cursor(tail);
    };
    if (sse) {
        response out;
        out.content_type = "text/event-stream";
        // Slices of at most 2,000 records a call, so progress shows while a large budget is read
        // and the I/O thread is never held long.
        if (follow && !cur.forward)
            return response::error(400, "follow=true reads forward: start from oldest, an offset, a time or a cursor");
        using steady = std::chrono::steady_clock;
        const auto until = steady::now() + std::chrono::seconds(*follow_s);
        out.stream = [im = _impl.get(), run, slot, cursor_json, tail_cursor, follow, newest_only, until,
                      quiet_since = steady::now(), ended = false, skipped = int64_t(0)]() mutable -> std::optional<std::string> {
            if (ended) return std::nullopt;
            if (follow) {
                // A live tail reads on to each partition's current end; its `budget` and `limit`
                // bound each slice, not the stream, which ends after follow-seconds.
                if (steady::now() >= until) {
                    ended = true;
                    return sse_event("end", fmt::format(R"({{"matched":{},"scanned":{},"done":true,"cursor":{},"tail_cursor":"{}"}})",
                                                        run->matched, run->scanned, cursor_json(), tail_cursor()));
                }
                for (auto& [p, e] : run->end)
                    if (auto pl = im->logs.partition(run->topic, p)) e = pl->last_stable_offset()();
                if (run->done()) {
                    // Nothing new: a pause, and a comment every 2 s so a client that left is
                    // noticed at a write within seconds (and its search place given back).
                    if (steady::now() - quiet_since < std::chrono::seconds(2)) return std::string();
                    quiet_since = steady::now();
                    return std::string(": keep-alive\n\n");
                }
                quiet_since = steady::now();
                if (newest_only && run->filter.empty())
                    for (auto& [p, pos] : run->cur.pos) {
                        const int64_t from = run->end.at(p) - int64_t(run->cap);
                        if (pos < from) {
                            skipped += from - pos;
                            pos = from;
                        }
                    }
                auto found = search_step(*im, *run, std::min<size_t>(2'000, run->budget), run->cap);
                if (!found) {
                    ended = true;
                    return sse_error(found.error());
                }
                if (found->empty()) return std::string();
                return sse_event("records", fmt::format(R"({{"records":[{}],"scanned":{},"skipped":{},"cursor":{}}})",
                                                        rendered(*found, run->b64), run->scanned, skipped, cursor_json()));
            }
            const size_t slice = std::min<size_t>(2'000, run->budget - run->scanned);
            auto found = search_step(*im, *run, slice, run->cap - run->matched);
            if (!found) {
                ended = true;
                return sse_error(found.error());
            }
            std::string ev = found->empty()
                                 ? sse_event("progress", fmt::format(R"({{"scanned":{},"budget":{}}})", run->scanned, run->budget))
                                 : sse_event("records", fmt::format(R"({{"records":[{}],"scanned":{},"budget":{}}})",
                                                                    rendered(*found, run->b64), run->scanned, run->budget));
            if (run->done() || run->scanned >= run->budget || run->matched >= run->cap) {
                ended = true;
                ev += sse_event("end", fmt::format(R"({{"matched":{},"scanned":{},"budget":{},"done":{},"cursor":{},"tail_cursor":"{}"}})",
                                                   run->matched, run->scanned, run->budget, run->done(), cursor_json(),
                                                   tail_cursor()));
            }
            return ev;
        };
        return out;
    }

    auto found = search_step(*_impl, *run, run->budget, run->cap);
    if (!found) return from_error(found.error());
    const std::string cursor = cursor_json();
    if (*format == "ndjson" || *format == "csv") {
        response out;
        std::string body;
        if (*format == "ndjson") {
            out.content_type = "application/x-ndjson";
            for (auto& f : *found) body += render(f, *b64) + "\n";
        } else {
            out.content_type = "text/csv; charset=utf-8";
            body = "partition,offset,timestamp,tier,key,value\r\n";
            for (auto& f : *found)
                body += fmt::format("{},{},{},{},{},{}\r\n", f.partition, f.offset, f.timestamp, f.tier,
                                    csv_field(f.key), csv_field(f.value));
        }
        out.body = std::move(body);
        out.headers.emplace_back("Content-Disposition",
                                 fmt::format("attachment; filename=\"{}.{}\"", lake::table_name_for_topic(topic), *format));
        if (cursor != "null") out.headers.emplace_back("X-Floe-Cursor", cursor.substr(1, cursor.size() - 2));
        return out;
    }
    return response::json(
        200, fmt::format(R"({{"topic":"{}","direction":"{}","records":[{}],"scanned":{},"budget":{},"done":{},"cursor":{},"tail_cursor":"{}"}})",
                         json_escape(topic), cur.forward ? "forward" : "backward", rendered(*found, *b64), run->scanned,
                         budget, run->done(), cursor, tail_cursor()));
}

response lookup_service::groups(const request& r) {
    if (!_groups) return response::error(404, "this broker has no group coordinator");
    auto gs = _groups();
    if (!gs) return from_error(gs.error());
    const int64_t now = system_clock_source::instance().now_ms();
    std::string out = fmt::format(R"({{"now_ms":{},"groups":[)", now);
    bool first_group = true;
    for (auto& g : *gs) {
        if (!_access.allows(r, acl_op::describe, acl_type::group, g.id, /*quiet=*/true)) continue;
        std::string members;
        for (auto& m : g.members) {
            std::string assigned = "null";
            if (m.assignment) {
                assigned.clear();
                for (auto& [topic, ps] : *m.assignment)
                    assigned += fmt::format(R"({}{{"topic":"{}","partitions":[{}]}})", assigned.empty() ? "" : ",",
                                            json_escape(topic), fmt::join(ps, ","));
                assigned = "[" + assigned + "]";
            }
            members += fmt::format(R"({}{{"member_id":"{}","client_id":"{}","client_host":"{}","instance_id":{},"member_epoch":{},"assignment":{}}})",
                                   members.empty() ? "" : ",", json_escape(m.member_id), json_escape(m.client_id),
                                   json_escape(m.client_host),
                                   m.instance_id ? fmt::format(R"("{}")", json_escape(*m.instance_id)) : "null",
                                   m.member_epoch ? std::to_string(*m.member_epoch) : "null", assigned);
        }
        std::string parts;
        int64_t total_lag = 0;
        double max_lag_s = 0;
        for (auto& c : g.committed) {
            if (!_access.allows(r, acl_op::describe, acl_type::topic, c.topic, /*quiet=*/true)) continue;
            auto pl = _impl->logs.partition(c.topic, c.partition);
            std::string row = fmt::format(R"({}{{"topic":"{}","partition":{},"committed_offset":{})",
                                          parts.empty() ? "" : ",", json_escape(c.topic), c.partition, c.offset);
            if (!pl) {
                parts += row + R"(,"lag_records":null,"lag_seconds":null})";
                continue;
            }
            auto o = pl->offsets();
            int64_t lo = o.log_start();
            auto t = _impl->logs.topic(c.topic);
            if (_impl->remote && t && t->config.remote_storage_enable)
                if (auto rs = _impl->remote->start_offset(c.topic, c.partition); rs && *rs) lo = std::min(lo, **rs);
            const int64_t hw = o.high_watermark();
            const int64_t from = std::max(c.offset, lo);
            const int64_t lag = std::max<int64_t>(0, hw - from);
            std::string lag_s = "0", ts = "null";
            if (lag > 0) {
                // The record at the committed offset (or the first one after it) waits longest.
                std::optional<int64_t> at;
                auto rd = read_range(*_impl, c.topic, *pl, from, hw, 1, [&](record_out&& rec) {
                    at = rec.timestamp;
                    return false;
                });
                if (rd && at) {
                    double s = double(std::max<int64_t>(0, now - *at)) / 1000.0;
                    max_lag_s = std::max(max_lag_s, s);
                    lag_s = fmt::format("{:.3f}", s);
                    ts = std::to_string(*at);
                } else {
                    lag_s = "null";
                }
            }
            total_lag += lag;
            parts += row + fmt::format(R"(,"log_start":{},"high_watermark":{},"lag_records":{},"lag_seconds":{},"committed_record_timestamp":{}}})",
                                       lo, hw, lag, lag_s, ts);
        }
        out += fmt::format(R"({}{{"group_id":"{}","kind":"{}","state":"{}","protocol_type":"{}","members":[{}],"lag_records":{},"max_lag_seconds":{:.3f},"partitions":[{}]}})",
                           first_group ? "" : ",", json_escape(g.id), json_escape(g.kind), json_escape(g.state),
                           json_escape(g.protocol_type), members, total_lag, max_lag_s, parts);
        first_group = false;
    }
    return response::json(200, out + "]}");
}

response lookup_service::configs(const request& r, const std::string& topic) {
    (void)r;
    auto t = _impl->logs.topic(topic);
    if (!t) return response::error(404, fmt::format("no topic '{}'", topic));
    std::string out;
    for (auto& k : log::topic_config_keys()) {
        auto v = log::topic_config_value(t->config, k.name);
        if (!v) continue;
        // Set on the topic (CreateTopics/AlterConfigs), else a broker default that differs from
        // Kafka's, else Kafka's default.
        const char* source = t->overrides.contains(k.name) ? "topic" : *v == k.default_value ? "default" : "broker";
        out += fmt::format(R"({}{{"name":"{}","value":"{}","source":"{}","default":"{}","honoured":{}}})",
                           out.empty() ? "" : ",", json_escape(k.name), json_escape(*v), source,
                           json_escape(k.default_value), k.honoured);
    }
    return response::json(200, fmt::format(R"({{"topic":"{}","configs":[{}]}})", json_escape(topic), out));
}

} // namespace floe::http
