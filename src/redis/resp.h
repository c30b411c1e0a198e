#pragma once
// RESP2 replies kept as their bytes and read in place, with no allocation per element: for
// large answers (XRANGE of thousands of stream entries) whose fields go straight into another
// encoding. The bytes come from the server, so everything here treats them as untrusted:
// malformed or truncated input is an errc::corrupt error, never a crash or an out-of-bounds read.

#include "base/result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace floe::redis {

enum class reply_type : uint8_t { nil, integer, string, status, error, array };

std::string_view to_string(reply_type t) noexcept;

/// Redis's own limit on a bulk string (proto-max-bulk-len default).
inline constexpr int64_t resp_max_bulk = int64_t(512) << 20;

/// A decimal integer filling `s` exactly (optional '-', then 1-19 digits, within int64,
/// INT64_MIN included).
inline std::optional<int64_t> parse_decimal(std::string_view s) noexcept {
    size_t i = 0;
    bool neg = false;
    if (!s.empty() && s[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i == s.size() || s.size() - i > 19) return std::nullopt;
    uint64_t v = 0;
    for (; i < s.size(); ++i) {
        unsigned d = unsigned(s[i]) - '0';
        if (d > 9) return std::nullopt;
        v = v * 10 + d; // 19 digits cannot wrap a uint64
    }
    if (v > uint64_t(INT64_MAX) + (neg ? 1 : 0)) return std::nullopt;
    return neg ? int64_t(0 - v) : int64_t(v); // 0 - v: INT64_MIN without overflow
}

namespace detail {
/// "<decimal>\r\n" at p (before end), in one pass: the position after the LF, or nullptr when
/// the line is not all there or not such a line (the caller's slow path tells which).
inline const char* number_line(const char* p, const char* end, int64_t& out) noexcept {
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        ++p;
    }
    const char* start = p;
    uint64_t v = 0;
    for (; p < end; ++p) {
        unsigned d = unsigned(*p) - '0';
        if (d > 9) break;
        v = v * 10 + d; // may wrap past 20 digits: refused below
    }
    const size_t digits = size_t(p - start);
    if (digits == 0 || digits > 19 || end - p < 2 || p[0] != '\r' || p[1] != '\n'
        || v > uint64_t(INT64_MAX) + (neg ? 1 : 0))
        return nullptr;
    out = neg ? int64_t(0 - v) : int64_t(v);
    return p + 2;
}
} // namespace detail

/// Finds where one complete RESP2 reply ends in a buffer that fills in pieces (socket reads).
/// `feed` is given the whole buffer each time (the bytes it saw before plus what arrived since)
/// and resumes where it stopped, so scanning a reply read in many pieces is linear.
/// Limits: bulk strings up to 512 MiB, arrays nested at most 64 deep.
/// Not thread-safe; one per connection read.
class resp_scanner {
public:
    /// Scans a new reply starting at `start` of the buffer.
    void reset(size_t start = 0) {
        _at = start;
        _open.clear();
    }
    /// One past the reply's last byte when `buf` holds all of it; nullopt when more bytes are
    /// needed; errc::corrupt when the bytes are not RESP2 or break the limits.
    result<std::optional<size_t>> feed(std::string_view buf);

private:
    size_t _at = 0;
    std::vector<int64_t> _open; // elements still to come, per array being read
};

/// One element as resp_reader meets it.
struct resp_item {
    reply_type type = reply_type::nil;
    int64_t integer = 0;  ///< an integer's value; an array's element count
    std::string_view str; ///< the text of a string, status or error (a view into the input)
};

/// Walks RESP2 bytes in place, depth first: an array item comes before its elements. Every
/// read is bounds-checked. Views returned point into the input, which must outlive them.
/// The common elements (bulk strings, arrays, integers) are read inline; everything else and
/// every error goes through the out-of-line path. Not thread-safe.
class resp_reader {
public:
    explicit resp_reader(std::string_view bytes) noexcept : _in(bytes) {}

    /// The next element (nil bulk strings and nil arrays are reply_type::nil).
    result<resp_item> next() {
        resp_item it;
        if (fast_next(it)) return it;
        return next_slow();
    }
    /// A string or status (nil or anything else: errc::corrupt; an error reply: its text as
    /// an errc::invalid_argument error).
    result<std::string_view> next_string() {
        resp_item it;
        if (fast_next(it)) {
            if (it.type == reply_type::string) return it.str;
            return unexpected(it, "a string");
        }
        return next_string_slow();
    }
    /// A string or status, or nullopt for nil.
    result<std::optional<std::string_view>> next_nullable_string();
    /// An integer, or a string or status holding a decimal integer.
    result<int64_t> next_integer();
    /// An array's element count (a nil array counts 0).
    result<size_t> next_array() {
        resp_item it;
        if (fast_next(it)) {
            if (it.type == reply_type::array) return size_t(it.integer);
            return unexpected(it, "an array");
        }
        return next_array_slow();
    }
    /// Skips one whole element with everything nested in it.
    result<void> skip();

    bool at_end() const noexcept { return _at >= _in.size(); }
    size_t position() const noexcept { return _at; }

private:
    /// A well-formed bulk string, array or integer at the cursor: read, cursor moved, true.
    /// Anything else (other types, nil, malformed, truncated): false, cursor unmoved.
    bool fast_next(resp_item& it) noexcept {
        const char* base = _in.data();
        const char* p = base + _at;
        const char* end = base + _in.size();
        if (end - p < 4) return false;
        const char t = *p;
        if (t != '$' && t != '*' && t != ':') return false;
        int64_t v = 0;
        const char* q = detail::number_line(p + 1, end, v);
        if (!q) return false;
        if (t == '$') {
            if (v < 0 || v > resp_max_bulk || end - q < v + 2 || q[v] != '\r' || q[v + 1] != '\n') return false;
            it.type = reply_type::string;
            it.str = std::string_view(q, size_t(v));
            _at = size_t(q + v + 2 - base);
            return true;
        }
        if (t == '*') {
            if (v < 0 || v > INT32_MAX) return false;
            it.type = reply_type::array;
        } else {
            it.type = reply_type::integer;
        }
        it.integer = v;
        _at = size_t(q - base);
        return true;
    }
    result<resp_item> next_slow();
    result<std::string_view> next_string_slow();
    result<size_t> next_array_slow();
    static std::unexpected<error> unexpected(const resp_item& it, std::string_view wanted);
    result<std::string_view> line(); // up to CRLF, which is consumed

    std::string_view _in;
    size_t _at = 0;
};

/// One reply of a raw round trip (client::pipeline_raw, client::fcall_raw): its RESP2 bytes,
/// inside a buffer shared by the round trip's replies (kept alive by each of them). Copyable.
class raw_reply {
public:
    raw_reply() = default;
    raw_reply(std::shared_ptr<const void> owner, std::string_view bytes) noexcept
        : _owner(std::move(owner)), _bytes(bytes) {}

    std::string_view bytes() const noexcept { return _bytes; }
    resp_reader reader() const noexcept { return resp_reader(_bytes); }
    bool is_error() const noexcept { return !_bytes.empty() && _bytes.front() == '-'; }
    /// The text of an error reply (without '-' and CRLF); empty for other replies.
    std::string_view error_text() const noexcept;

private:
    std::shared_ptr<const void> _owner;
    std::string_view _bytes;
};

} // namespace floe::redis
