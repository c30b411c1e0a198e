#include "format/avro/datum.h"

#include <fmt/format.h>

#include <cmath>

namespace floe::avro {

bool operator==(const datum& a, const datum& b) noexcept {
    if (a._kind != b._kind) return false;
    switch (a._kind) {
    case datum::kind::null: return true;
    case datum::kind::float_:
    case datum::kind::double_:
        return a._f == b._f || (std::isnan(a._f) && std::isnan(b._f));
    case datum::kind::bytes:
    case datum::kind::string:
    case datum::kind::fixed: return a._s == b._s;
    case datum::kind::array:
    case datum::kind::record: return a._children == b._children;
    case datum::kind::map: return a._keys == b._keys && a._children == b._children;
    default: return a._i == b._i;
    }
}

namespace {

void append_quoted(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            out += fmt::format("\\x{:02x}", c);
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

void append(std::string& out, const datum& d) {
    using k = datum::kind;
    switch (d.type()) {
    case k::null: out += "null"; break;
    case k::boolean: out += d.as_bool() ? "true" : "false"; break;
    case k::int_:
    case k::long_:
    case k::enum_: out += fmt::format("{}", d.as_long()); break;
    case k::float_:
    case k::double_: out += fmt::format("{}", d.as_double()); break;
    case k::bytes:
    case k::string:
    case k::fixed: append_quoted(out, d.as_string()); break;
    case k::array:
    case k::record:
        out += d.type() == k::array ? '[' : '{';
        for (size_t i = 0; i < d.children().size(); ++i) {
            if (i) out += ", ";
            append(out, d.children()[i]);
        }
        out += d.type() == k::array ? ']' : '}';
        break;
    case k::map:
        out += '{';
        for (size_t i = 0; i < d.children().size(); ++i) {
            if (i) out += ", ";
            append_quoted(out, d.keys()[i]);
            out += ": ";
            append(out, d.children()[i]);
        }
        out += '}';
        break;
    }
}

} // namespace

std::string to_debug_string(const datum& d) {
    std::string out;
    append(out, d);
    return out;
}

} // namespace floe::avro
