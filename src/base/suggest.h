#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace floe {

/// Levenshtein distance (insertions, deletions, substitutions of one byte each). O(|a|·|b|)
/// time, O(|b|) memory: meant for names a user typed (commands, settings, table names).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `typed` that is at most `max_distance` edits away (the first of
/// equally near ones), for "did you mean 'x'?" hints; nullopt when none is that near or
/// `typed` is one of the candidates.
std::optional<std::string> nearest_name(std::string_view typed, std::span<const std::string_view> candidates,
                                        size_t max_distance);

} // namespace floe
