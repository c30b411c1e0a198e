#pragma once

#include "base/error.h"

#include <cstdio>
#include <cstdlib>
#include <expected>

namespace floe {

/// Errors are values: every fallible function returns result<T>.
template<typename T = void>
using result = std::expected<T, error>;

inline std::unexpected<error> fail(error e) { return std::unexpected<error>(std::move(e)); }

template<typename... Args>
std::unexpected<error> fail(errc code, fmt::format_string<Args...> f, Args&&... args) {
    return std::unexpected<error>(make_error(code, f, std::forward<Args>(args)...));
}

namespace detail {
template<typename T>
T take_value(result<T>&& r) {
    return std::move(r).value();
}
inline void take_value(result<void>&&) {}
} // namespace detail

[[noreturn]] void assert_failed(const char* expr, const char* file, int line, const char* msg);

} // namespace floe

/// Evaluates a result<T>; on error returns it from the enclosing function, else yields the T
/// (or nothing for result<void>). Uses a GNU statement expression, supported by g++ and clang.
#define FLOE_TRY(expr)                                                                           \
    ({                                                                                           \
        auto _floe_r = (expr);                                                                   \
        if (!_floe_r) [[unlikely]] return std::unexpected(std::move(_floe_r).error());           \
        ::floe::detail::take_value(std::move(_floe_r));                                          \
    })

/// Like FLOE_TRY, adding context to the error on the way out.
#define FLOE_TRY_CTX(expr, ...)                                                                  \
    ({                                                                                           \
        auto _floe_r = (expr);                                                                   \
        if (!_floe_r) [[unlikely]]                                                               \
            return std::unexpected(std::move(_floe_r).error().with_context(__VA_ARGS__));        \
        ::floe::detail::take_value(std::move(_floe_r));                                          \
    })

/// An invariant whose breach would corrupt data: checked in every build, aborts with a message.
#define FLOE_ASSERT(cond, msg)                                                                   \
    do {                                                                                         \
        if (!(cond)) [[unlikely]] ::floe::assert_failed(#cond, __FILE__, __LINE__, msg);         \
    } while (0)
