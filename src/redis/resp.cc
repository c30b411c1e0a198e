#include "redis/resp.h"

#include <cstring>

namespace floe::redis {

namespace {

constexpr size_t max_depth = 64;

/// The line starting at `at` (without CRLF) and where the next element starts; nullopt when the
/// CRLF has not arrived yet.
std::optional<std::pair<std::string_view, size_t>> line_at(std::string_view buf, size_t at) {
    if (at >= buf.size()) return std::nullopt;
    const void* cr = std::memchr(buf.data() + at, '\r', buf.size() - at);
    if (!cr) return std::nullopt;
    size_t end = size_t(static_cast<const char*>(cr) - buf.data());
    if (end + 1 >= buf.size()) return std::nullopt; // the '\n' has not arrived
    return std::pair{buf.substr(at, end - at), end + 2};
}

} // namespace

result<std::optional<size_t>> resp_scanner::feed(std::string_view buf) {
    const char* base = buf.data();
    const char* end = base + buf.size();
    for (;;) {
        if (_at >= buf.size()) return std::optional<size_t>();
        const char* p = base + _at;
        const char type = *p;
        size_t next = 0;
        bool opened = false;
        if (type == '$' || type == '*' || type == ':') {
            int64_t v = 0;
            const char* q = detail::number_line(p + 1, end, v);
            if (!q) {
                // Either the line is not all there yet, or it is not a number line.
                auto l = line_at(buf, _at);
                if (!l) {
                    if (buf.size() - _at > 32) return fail(errc::corrupt, "RESP: no CRLF after a length at byte {}", _at);
                    return std::optional<size_t>();
                }
                return fail(errc::corrupt, "RESP: bad number '{}' at byte {}", l->first.substr(0, 24), _at);
            }
            next = size_t(q - base);
            if (type == '$') {
                if (v < -1 || v > resp_max_bulk) return fail(errc::corrupt, "RESP: bad bulk length {} at byte {}", v, _at);
                if (v >= 0) {
                    size_t need = next + size_t(v) + 2;
                    if (buf.size() < need) return std::optional<size_t>();
                    if (buf[need - 2] != '\r' || buf[need - 1] != '\n')
                        return fail(errc::corrupt, "RESP: bulk string at byte {} not followed by CRLF", _at);
                    next = need;
                }
            } else if (type == '*') {
                if (v < -1 || v > INT32_MAX) return fail(errc::corrupt, "RESP: bad array length {} at byte {}", v, _at);
                if (v > 0) {
                    if (_open.size() >= max_depth) return fail(errc::corrupt, "RESP: arrays nested deeper than {}", max_depth);
                    _open.push_back(v);
                    opened = true;
                }
            }
        } else if (type == '+' || type == '-') {
            auto l = line_at(buf, _at);
            if (!l) return std::optional<size_t>();
            if (buf[l->second - 1] != '\n') return fail(errc::corrupt, "RESP: CR without LF at byte {}", l->second - 2);
            next = l->second;
        } else {
            return fail(errc::corrupt, "RESP: unknown type byte 0x{:02x} at byte {}", uint8_t(type), _at);
        }
        _at = next;
        if (opened) continue;
        // One element complete: close every array it completes.
        while (!_open.empty() && --_open.back() == 0) _open.pop_back();
        if (_open.empty()) return std::optional<size_t>(_at);
    }
}

result<std::string_view> resp_reader::line() {
    auto l = line_at(_in, _at);
    if (!l) return fail(errc::corrupt, "RESP: truncated at byte {}", _at);
    if (_in[l->second - 1] != '\n') return fail(errc::corrupt, "RESP: CR without LF at byte {}", l->second - 2);
    if (l->first.empty()) return fail(errc::corrupt, "RESP: empty line at byte {}", _at);
    _at = l->second;
    return l->first;
}

result<resp_item> resp_reader::next_slow() {
    const size_t start = _at;
    auto text = FLOE_TRY(line());
    resp_item it;
    auto rest = text.substr(1);
    switch (text[0]) {
    case '+':
        it.type = reply_type::status;
        it.str = rest;
        return it;
    case '-':
        it.type = reply_type::error;
        it.str = rest;
        return it;
    case ':': {
        auto v = parse_decimal(rest);
        if (!v) return fail(errc::corrupt, "RESP: bad integer at byte {}", start);
        it.type = reply_type::integer;
        it.integer = *v;
        return it;
    }
    case '$': {
        auto len = parse_decimal(rest);
        if (!len || *len < -1 || *len > resp_max_bulk)
            return fail(errc::corrupt, "RESP: bad bulk length at byte {}", start);
        if (*len == -1) {
            it.type = reply_type::nil;
            return it;
        }
        size_t n = size_t(*len);
        if (_in.size() - _at < n + 2) return fail(errc::corrupt, "RESP: bulk string at byte {} truncated", start);
        if (_in[_at + n] != '\r' || _in[_at + n + 1] != '\n')
            return fail(errc::corrupt, "RESP: bulk string at byte {} not followed by CRLF", start);
        it.type = reply_type::string;
        it.str = _in.substr(_at, n);
        _at += n + 2;
        return it;
    }
    case '*': {
        auto n = parse_decimal(rest);
        if (!n || *n < -1 || *n > INT32_MAX) return fail(errc::corrupt, "RESP: bad array length at byte {}", start);
        if (*n == -1) {
            it.type = reply_type::nil;
            return it;
        }
        it.type = reply_type::array;
        it.integer = *n;
        return it;
    }
    default:
        _at = start;
        return fail(errc::corrupt, "RESP: unknown type byte 0x{:02x} at byte {}", uint8_t(text[0]), start);
    }
}

std::unexpected<error> resp_reader::unexpected(const resp_item& it, std::string_view wanted) {
    if (it.type == reply_type::error) return fail(errc::invalid_argument, "{}", it.str);
    return fail(errc::corrupt, "RESP: expected {}, got {}", wanted, to_string(it.type));
}

result<std::string_view> resp_reader::next_string_slow() {
    auto it = FLOE_TRY(next_slow());
    if (it.type == reply_type::string || it.type == reply_type::status) return it.str;
    return unexpected(it, "a string");
}

result<std::optional<std::string_view>> resp_reader::next_nullable_string() {
    auto it = FLOE_TRY(next());
    if (it.type == reply_type::string || it.type == reply_type::status) return std::optional(it.str);
    if (it.type == reply_type::nil) return std::optional<std::string_view>();
    return unexpected(it, "a string or nil");
}

result<int64_t> resp_reader::next_integer() {
    auto it = FLOE_TRY(next());
    if (it.type == reply_type::integer) return it.integer;
    if (it.type == reply_type::string || it.type == reply_type::status) {
        if (auto v = parse_decimal(it.str)) return *v;
        return fail(errc::corrupt, "RESP: expected a decimal integer, got '{}'", it.str.substr(0, 32));
    }
    return unexpected(it, "an integer");
}

result<size_t> resp_reader::next_array_slow() {
    auto it = FLOE_TRY(next_slow());
    if (it.type == reply_type::array) return size_t(it.integer);
    if (it.type == reply_type::nil) return size_t(0);
    return unexpected(it, "an array");
}

result<void> resp_reader::skip() {
    // Elements left to skip, counted without recursion (each one read consumes input, so a
    // huge count in a short input ends in a truncation error).
    uint64_t left = 1;
    while (left > 0) {
        auto it = FLOE_TRY(next());
        --left;
        if (it.type == reply_type::array) left += uint64_t(it.integer);
    }
    return {};
}

std::string_view raw_reply::error_text() const noexcept {
    if (!is_error()) return {};
    auto end = _bytes.find('\r');
    return _bytes.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
}

} // namespace floe::redis
