#pragma once

#include "base/result.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace floe::http {

/// The fields of one record a search filter looks at (views into the caller's record).
struct searched_record {
    int64_t timestamp = 0;
    std::optional<std::string_view> key, value;
    const std::vector<std::pair<std::string, std::optional<std::string>>>* headers = nullptr;
};

/// The server-side filter of GET /v1/topics/{topic}/search, parsed from its query parameters;
/// every condition given must hold (AND):
///   key=K            the key equals K          key-prefix=P   the key starts with P
///   header=N         a header named N          header=N=V     a header N whose value is V
///   contains=S       the value holds the bytes S
///   json=/ptr        with json-op=eq|lt|gt|exists (default exists when json-value is absent,
///                    else eq) and json-value=V: the value parsed as JSON, the field at the
///                    JSON pointer compared with V (V read as JSON when it parses: 42, "x",
///                    true; else as a string). lt/gt compare numbers with numbers and strings
///                    with strings; any other pairing, a value that is not JSON, or a missing
///                    field does not match.
///   from-ts=T, to-ts=T  the record's timestamp in [from-ts, to-ts] (milliseconds)
/// Pure: no I/O, thread-safe once built.
class search_filter {
public:
    enum class json_op { eq, lt, gt, exists };
    struct json_test {
        std::string pointer;
        json_op op = json_op::exists;
        std::string operand; ///< as given
    };

    /// errc::invalid_argument naming the parameter for a malformed one (bad pointer, op,
    /// timestamps, json-op without json, from-ts after to-ts).
    static result<search_filter> parse(const std::multimap<std::string, std::string>& query);

    bool matches(const searched_record& r) const;
    /// True when no condition is set (every record matches).
    bool empty() const;
    int64_t from_ts() const noexcept { return _from_ts; }
    int64_t to_ts() const noexcept { return _to_ts; }

    std::optional<std::string> key_equals, key_prefix, header_name, header_value, value_contains;
    std::optional<json_test> json;

private:
    bool json_matches(std::string_view value) const;
    int64_t _from_ts = INT64_MIN, _to_ts = INT64_MAX;
    struct parsed_operand;
    std::shared_ptr<const parsed_operand> _operand; ///< json-value parsed once
};

} // namespace floe::http
