#include "config/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace floe::config {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

/// Splits "128MB" into 128 and "MB"; digits only (no sign, no fraction).
result<std::pair<uint64_t, std::string_view>> split_number(std::string_view s,
                                                           std::string_view what) {
    s = trim(s);
    size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == 0) return fail(errc::invalid_argument, "'{}' is not a {}: it must start with a number", s, what);
    uint64_t n = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + i, n);
    if (ec != std::errc()) return fail(errc::invalid_argument, "'{}' is too large for a {}", s, what);
    return std::pair{n, trim(s.substr(i))};
}

} // namespace

result<int64_t> parse_size(std::string_view s) {
    auto [n, unit] = FLOE_TRY(split_number(s, "size"));
    struct u {
        std::string_view name;
        uint64_t mult;
    };
    static constexpr std::array<u, 14> units = {{{"", 1},
                                                 {"b", 1},
                                                 {"kb", 1000},
                                                 {"mb", 1000'000},
                                                 {"gb", 1000'000'000},
                                                 {"tb", 1000'000'000'000},
                                                 {"k", 1024},
                                                 {"m", 1024ull << 10},
                                                 {"g", 1024ull << 20},
                                                 {"kib", 1024},
                                                 {"mib", 1024ull << 10},
                                                 {"gib", 1024ull << 20},
                                                 {"tib", 1024ull << 30},
                                                 {"t", 1024ull << 30}}};
    auto lu = lower(unit);
    for (auto& x : units) {
        if (x.name != lu) continue;
        if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / x.mult)
            return fail(errc::invalid_argument, "size '{}' is too large", trim(s));
        return static_cast<int64_t>(n * x.mult);
    }
    return fail(errc::invalid_argument,
                "size '{}' has an unknown unit '{}' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
                trim(s), unit);
}

result<std::chrono::milliseconds> parse_duration(std::string_view s) {
    auto [n, unit] = FLOE_TRY(split_number(s, "duration"));
    auto lu = lower(unit);
    uint64_t mult = 0;
    if (lu == "ms") mult = 1;
    else if (lu == "s") mult = 1000;
    else if (lu == "m" || lu == "min") mult = 60'000;
    else if (lu == "h") mult = 3'600'000;
    else if (lu == "d") mult = 86'400'000;
    else if (lu.empty() && n == 0) mult = 1;
    else if (lu.empty())
        return fail(errc::invalid_argument,
                    "duration '{}' needs a unit (ms, s, m, h, d), e.g. '{}s'", trim(s), n);
    else
        return fail(errc::invalid_argument, "duration '{}' has an unknown unit '{}' (use ms, s, m, h, d)",
                    trim(s), unit);
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / mult)
        return fail(errc::invalid_argument, "duration '{}' is too large", trim(s));
    return std::chrono::milliseconds(static_cast<int64_t>(n * mult));
}

result<bool> parse_bool(std::string_view s) {
    auto l = lower(trim(s));
    if (l == "true" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "no" || l == "off") return false;
    return fail(errc::invalid_argument, "'{}' is not a boolean (true or false)", s);
}

result<int64_t> parse_int(std::string_view s) {
    s = trim(s);
    int64_t v = 0;
    const char* b = s.data();
    if (!s.empty() && s.front() == '+') ++b;
    auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
    if (s.empty() || ec == std::errc::result_out_of_range)
        return fail(errc::invalid_argument, "'{}' is not a 64-bit integer", s);
    if (ec != std::errc() || p != s.data() + s.size())
        return fail(errc::invalid_argument, "'{}' is not an integer", s);
    return v;
}

std::string host_port::to_string() const {
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

result<host_port> parse_host_port(std::string_view s) {
    s = trim(s);
    host_port hp;
    std::string_view port;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
            return fail(errc::invalid_argument, "'{}' is not [ipv6]:port", s);
        hp.host = std::string(s.substr(1, close - 1));
        port = s.substr(close + 2);
    } else {
        auto colon = s.rfind(':');
        if (colon == std::string_view::npos || colon == 0)
            return fail(errc::invalid_argument, "'{}' is not host:port", s);
        hp.host = std::string(s.substr(0, colon));
        port = s.substr(colon + 1);
        if (hp.host.find(':') != std::string::npos)
            return fail(errc::invalid_argument, "'{}': write IPv6 hosts in brackets, [::1]:9092", s);
    }
    auto p = parse_int(port);
    if (!p || *p < 0 || *p > 65535)
        return fail(errc::invalid_argument, "'{}' has no valid port (0-65535)", s);
    hp.port = static_cast<uint16_t>(*p);
    return hp;
}

std::string format_size(int64_t bytes) {
    static constexpr std::array<std::pair<const char*, int64_t>, 4> units = {
        {{"TiB", 1ll << 40}, {"GiB", 1ll << 30}, {"MiB", 1ll << 20}, {"KiB", 1ll << 10}}};
    static constexpr std::array<std::pair<const char*, int64_t>, 4> si = {
        {{"TB", 1000'000'000'000}, {"GB", 1000'000'000}, {"MB", 1000'000}, {"KB", 1000}}};
    // The exact form with the smallest number: 128000000 -> 128MB, 134217728 -> 128MiB.
    int64_t best = bytes;
    const char* best_unit = "B";
    if (bytes > 0) {
        for (auto& table : {units, si})
            for (auto [name, m] : table)
                if (bytes % m == 0 && bytes / m < best) {
                    best = bytes / m;
                    best_unit = name;
                }
    }
    return fmt::format("{}{}", best, best_unit);
}

std::string format_duration(std::chrono::milliseconds d) {
    auto ms = d.count();
    if (ms == 0) return "0";
    static constexpr std::array<std::pair<const char*, int64_t>, 4> units = {
        {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}}};
    for (auto [name, m] : units)
        if (ms % m == 0) return fmt::format("{}{}", ms / m, name);
    return fmt::format("{}ms", ms);
}

} // namespace floe::config
