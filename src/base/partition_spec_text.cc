#include "base/partition_spec_text.h"

#include <fmt/format.h>

#include <charconv>

namespace floe {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

bool valid_name(std::string_view s) {
    if (s.empty() || s.front() == '.' || s.back() == '.' || s.find("..") != std::string_view::npos) return false;
    for (char c : s)
        if (!name_char(c)) return false;
    return true;
}

result<partition_term> parse_term(std::string_view all, std::string_view t) {
    partition_term out;
    out.text = std::string(t);
    auto bad = [&](std::string_view why) {
        return fail(errc::invalid_argument, "partition spec '{}': term '{}' {}", all, t, why);
    };
    auto open = t.find('(');
    if (open == std::string_view::npos) {
        if (!valid_name(t)) return bad("is not a column name or transform(column)");
        out.transform = "identity";
        out.source = std::string(t);
        return out;
    }
    if (t.back() != ')') return bad("does not end with ')'");
    auto head = trim(t.substr(0, open));
    auto source = trim(t.substr(open + 1, t.size() - open - 2));
    if (!valid_name(source)) return bad("needs one column name in the parentheses");
    out.source = std::string(source);
    std::string_view name = head;
    if (auto lb = head.find('['); lb != std::string_view::npos) {
        if (head.back() != ']') return bad("has an unclosed '['");
        auto num = trim(head.substr(lb + 1, head.size() - lb - 2));
        name = trim(head.substr(0, lb));
        int64_t n = 0;
        auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
        if (ec != std::errc() || p != num.data() + num.size() || num.empty() || n <= 0 || n > INT32_MAX)
            return bad("needs a positive integer in [ ]");
        out.param = static_cast<int32_t>(n);
    }
    static constexpr std::string_view plain[] = {"identity", "year", "month", "day", "hour", "void"};
    bool known = false;
    for (auto p : plain) known = known || name == p;
    if (known) {
        if (out.param) return bad(fmt::format("has a [N], which {} does not take", name));
    } else if (name == "bucket" || name == "truncate") {
        if (!out.param) return bad(fmt::format("needs {}[N]", name));
    } else {
        return bad("names no transform (identity, year, month, day, hour, bucket[N], truncate[W], void)");
    }
    out.transform = std::string(name);
    return out;
}

} // namespace

std::string partition_term::iceberg_transform() const {
    if (transform == "bucket" || transform == "truncate") return fmt::format("{}[{}]", transform, param);
    return transform;
}

result<std::vector<partition_term>> parse_partition_spec_text(std::string_view text) {
    std::vector<partition_term> out;
    auto all = trim(text);
    if (all.empty()) return fail(errc::invalid_argument, "partition spec is empty (default: {})", default_partition_spec_text);
    size_t at = 0;
    while (at <= all.size()) {
        // Commas inside [ ] or ( ) do not split (none are valid there, but the message is better).
        size_t depth = 0, c = at;
        for (; c < all.size(); ++c) {
            if (all[c] == '(' || all[c] == '[') ++depth;
            else if ((all[c] == ')' || all[c] == ']') && depth) --depth;
            else if (all[c] == ',' && !depth) break;
        }
        auto t = trim(all.substr(at, c - at));
        if (t.empty()) return fail(errc::invalid_argument, "partition spec '{}' has an empty term", all);
        auto term = FLOE_TRY(parse_term(all, t));
        for (auto& have : out)
            if (have.source == term.source && have.iceberg_transform() == term.iceberg_transform())
                return fail(errc::invalid_argument, "partition spec '{}': term '{}' is there twice", all, t);
        out.push_back(std::move(term));
        at = c + 1;
    }
    return out;
}

std::string partition_spec_text(const std::vector<partition_term>& terms) {
    std::string out;
    for (auto& t : terms) {
        if (!out.empty()) out += ", ";
        out += fmt::format("{}({})", t.iceberg_transform(), t.source);
    }
    return out;
}

} // namespace floe
