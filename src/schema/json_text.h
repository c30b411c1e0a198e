#pragma once
// Helpers shared by the schema parsers for JSON text that comes from outside.

#include "base/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace floe::schema {

/// Refuses JSON text whose arrays/objects nest deeper than `limit` before it is parsed: the
/// parsers walk the tree recursively, so a hostile "[[[[..." must not reach them.
result<void> check_json_nesting(std::string_view text, int limit);

/// Parses JSON text (nesting checked first), errc::invalid_argument with the parser's message.
result<nlohmann::json> parse_json(std::string_view text, int max_depth, std::string_view what);
result<nlohmann::ordered_json> parse_ordered_json(std::string_view text, int max_depth, std::string_view what);

/// JSON string escaping for hand-written output ("a\"b" with the quotes).
std::string json_quote(std::string_view s);

} // namespace floe::schema
