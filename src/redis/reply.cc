#include "redis/client.h"

#include <charconv>

namespace floe::redis {

std::string_view to_string(reply_type t) noexcept {
    switch (t) {
    case reply_type::nil: return "nil";
    case reply_type::integer: return "integer";
    case reply_type::string: return "string";
    case reply_type::status: return "status";
    case reply_type::error: return "error";
    case reply_type::array: return "array";
    }
    return "?";
}

reply reply::integer(int64_t v) {
    reply r;
    r._type = reply_type::integer;
    r._int = v;
    return r;
}
reply reply::string(std::string s) {
    reply r;
    r._type = reply_type::string;
    r._str = std::move(s);
    return r;
}
reply reply::status(std::string s) {
    reply r;
    r._type = reply_type::status;
    r._str = std::move(s);
    return r;
}
reply reply::error(std::string s) {
    reply r;
    r._type = reply_type::error;
    r._str = std::move(s);
    return r;
}
reply reply::array(std::vector<reply> elements) {
    reply r;
    r._type = reply_type::array;
    r._elements = std::move(elements);
    return r;
}

result<int64_t> reply::as_integer() const {
    if (_type == reply_type::integer) return _int;
    if (_type == reply_type::string || _type == reply_type::status) {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(_str.data(), _str.data() + _str.size(), v);
        if (ec == std::errc() && p == _str.data() + _str.size() && !_str.empty()) return v;
    }
    if (_type == reply_type::error) return fail(errc::invalid_argument, "{}", _str);
    return fail(errc::invalid_argument, "expected an integer reply, got {}", debug_string());
}

result<std::string_view> reply::as_string() const {
    if (_type == reply_type::string || _type == reply_type::status) return std::string_view(_str);
    if (_type == reply_type::error) return fail(errc::invalid_argument, "{}", _str);
    return fail(errc::invalid_argument, "expected a string reply, got {}", debug_string());
}

std::string reply::debug_string() const {
    switch (_type) {
    case reply_type::nil: return "nil";
    case reply_type::integer: return fmt::format("(integer) {}", _int);
    case reply_type::string: {
        constexpr size_t max = 64;
        if (_str.size() <= max) return fmt::format("\"{}\"", _str);
        return fmt::format("\"{}...\" ({} bytes)", _str.substr(0, max), _str.size());
    }
    case reply_type::status: return _str;
    case reply_type::error: return fmt::format("(error) {}", _str);
    case reply_type::array: {
        std::string out = "[";
        for (size_t i = 0; i < _elements.size(); ++i) {
            if (i) out += ", ";
            if (i == 16) {
                out += fmt::format("... {} more", _elements.size() - i);
                break;
            }
            out += _elements[i].debug_string();
        }
        return out + "]";
    }
    }
    return "?";
}

} // namespace floe::redis
