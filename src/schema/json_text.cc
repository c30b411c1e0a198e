#include "schema/json_text.h"

namespace floe::schema {

result<void> check_json_nesting(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > limit) return fail(errc::invalid_argument, "JSON nested deeper than {} levels", limit);
        } else if (c == ']' || c == '}')
            --depth;
    }
    return {};
}

template<typename J>
static result<J> parse_as(std::string_view text, int max_depth, std::string_view what) {
    if (auto n = check_json_nesting(text, max_depth); !n) return fail(errc::invalid_argument, "{}: {}", what, n.error().message());
    // nlohmann reports where the text went wrong only through its exception (caught here, at
    // the library's edge).
    try {
        return J::parse(text);
    } catch (const std::exception& e) {
        return fail(errc::invalid_argument, "{} is not valid JSON: {}", what, e.what());
    }
}

result<nlohmann::json> parse_json(std::string_view text, int max_depth, std::string_view what) {
    return parse_as<nlohmann::json>(text, max_depth, what);
}

result<nlohmann::ordered_json> parse_ordered_json(std::string_view text, int max_depth, std::string_view what) {
    return parse_as<nlohmann::ordered_json>(text, max_depth, what);
}

std::string json_quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace floe::schema
