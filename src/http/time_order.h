#pragma once

#include "base/result.h"

#include <algorithm>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::http {

/// Where a record stands in the order of time lookups across partitions: by timestamp, ties by
/// partition, then offset. A total order over the records of a topic, so a cursor (the position
/// of the last record returned) continues a listing with no record twice and none skipped.
struct time_position {
    int64_t timestamp = 0;
    int32_t partition = 0;
    int64_t offset = 0;
    auto operator<=>(const time_position&) const = default;
};

/// The cursor text: "<timestamp>.<partition>.<offset>", e.g. "1700000000000.2.17".
std::string format_cursor(const time_position& p);
/// Parses a cursor made by format_cursor; errc::invalid_argument otherwise.
result<time_position> parse_cursor(std::string_view text);

/// One page of a time lookup: keeps, of the records offered in any order, the `limit` first
/// (by time_position) whose timestamp is in [from_ts, to_ts] and whose position is after the
/// cursor, and remembers whether any other record qualified (there is a next page). Memory is
/// bounded by `limit` records. T has `timestamp`, `partition` and `offset` members.
/// Not thread-safe: one per request.
template<typename T> class time_page {
public:
    time_page(size_t limit, int64_t from_ts, int64_t to_ts, std::optional<time_position> after)
        : _limit(limit), _from(from_ts), _to(to_ts), _after(after) {}

    /// The lowest timestamp a record can have to be kept: where each partition's scan starts.
    int64_t lower_timestamp() const { return _after ? std::max(_from, _after->timestamp) : _from; }

    void offer(T&& r) {
        if (r.timestamp < _from || r.timestamp > _to) return;
        auto pos = position(r);
        if (_after && pos <= *_after) return;
        if (_heap.size() < _limit) {
            _heap.push_back(std::move(r));
            std::push_heap(_heap.begin(), _heap.end(), earlier);
            return;
        }
        _more = true;
        if (_heap.empty() || !(pos < position(_heap.front()))) return;
        std::pop_heap(_heap.begin(), _heap.end(), earlier);
        _heap.back() = std::move(r);
        std::push_heap(_heap.begin(), _heap.end(), earlier);
    }

    /// True when a record qualified beyond the `limit` kept.
    bool more() const { return _more; }

    /// The kept records in order. Call once, at the end.
    std::vector<T> take() {
        std::sort_heap(_heap.begin(), _heap.end(), earlier);
        return std::move(_heap);
    }

    static time_position position(const T& r) { return {r.timestamp, r.partition, r.offset}; }

private:
    static bool earlier(const T& a, const T& b) { return position(a) < position(b); }
    size_t _limit;
    int64_t _from, _to;
    std::optional<time_position> _after;
    std::vector<T> _heap; ///< a max-heap by position: front() is the latest kept
    bool _more = false;
};

} // namespace floe::http
