#include "http/time_order.h"

#include <charconv>

namespace floe::http {

std::string format_cursor(const time_position& p) {
    return fmt::format("{}.{}.{}", p.timestamp, p.partition, p.offset);
}

result<time_position> parse_cursor(std::string_view text) {
    auto bad = [&] {
        return fail(errc::invalid_argument,
                    "parameter 'after' must be a cursor from a previous answer's 'next' "
                    "(<timestamp>.<partition>.<offset>), got '{}'",
                    text);
    };
    time_position p;
    const char* it = text.data();
    const char* end = text.data() + text.size();
    auto field = [&](auto& v, bool last) {
        auto [ptr, ec] = std::from_chars(it, end, v);
        if (ec != std::errc() || ptr == it) return false;
        it = ptr;
        if (last) return it == end;
        if (it == end || *it != '.') return false;
        ++it;
        return true;
    };
    if (!field(p.timestamp, false) || !field(p.partition, false) || !field(p.offset, true))
        return bad();
    if (p.partition < 0 || p.offset < 0) return bad();
    return p;
}

} // namespace floe::http
