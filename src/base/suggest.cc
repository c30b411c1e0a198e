#include "base/suggest.h"

#include <algorithm>
#include <vector>

namespace floe {

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed, std::span<const std::string_view> candidates,
                                        size_t max_distance) {
    std::optional<std::string> best;
    size_t best_d = max_distance + 1;
    for (auto c : candidates) {
        if (c == typed) return std::nullopt;
        // Lengths alone bound the distance from below: skip what cannot be near.
        size_t gap = c.size() > typed.size() ? c.size() - typed.size() : typed.size() - c.size();
        if (gap >= best_d) continue;
        if (auto d = edit_distance(typed, c); d < best_d) {
            best = std::string(c);
            best_d = d;
        }
    }
    return best;
}

} // namespace floe
