#pragma once
// Typed, non-throwing access to required JSON members: a missing or mistyped member is an
// errc::corrupt naming the member, so a bad metadata file says what is wrong with it.

#include "base/result.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>

namespace floe::iceberg {

template<typename T>
result<T> json_int(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return fail(errc::corrupt, "missing required field \"{}\"", key);
    if (!it->is_number_integer()) return fail(errc::corrupt, "field \"{}\" is not an integer", key);
    if (it->is_number_unsigned()) {
        auto v = it->get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<T>::max()))
            return fail(errc::corrupt, "field \"{}\" out of range", key);
        return static_cast<T>(v);
    }
    auto v = it->get<int64_t>();
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        return fail(errc::corrupt, "field \"{}\" out of range", key);
    return static_cast<T>(v);
}

inline result<std::string> json_string(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return fail(errc::corrupt, "missing required field \"{}\"", key);
    if (!it->is_string()) return fail(errc::corrupt, "field \"{}\" is not a string", key);
    return it->get<std::string>();
}

inline result<bool> json_bool(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return fail(errc::corrupt, "missing required field \"{}\"", key);
    if (!it->is_boolean()) return fail(errc::corrupt, "field \"{}\" is not a boolean", key);
    return it->get<bool>();
}

inline result<const nlohmann::json*> json_array(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return fail(errc::corrupt, "missing required field \"{}\"", key);
    if (!it->is_array()) return fail(errc::corrupt, "field \"{}\" is not an array", key);
    return &*it;
}

} // namespace floe::iceberg
