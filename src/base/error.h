#pragma once

#include <fmt/format.h>

#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

namespace floe {

/// What went wrong, phrased by what the caller should do about it.
enum class errc {
    invalid_argument,  ///< the input is wrong; retrying the same input fails again
    not_found,         ///< the thing asked for does not exist
    already_exists,    ///< a create found the thing already there
    corrupt,           ///< bytes failed a checksum or could not be decoded; never use them
    unsupported,       ///< a valid request for something Floe does not do
    io_error,          ///< the OS or a remote store failed; usually worth a retry with backoff
    unavailable,       ///< a dependency cannot be reached right now; retry with backoff
    conflict,          ///< a concurrent writer won a compare-and-swap; reload and re-apply
    timeout,           ///< a deadline passed; retry may succeed
    out_of_range,      ///< an offset or position outside what exists
    shutting_down,     ///< the component is stopping; give up quietly
    internal,          ///< a bug: an invariant did not hold
};

std::string_view to_string(errc code) noexcept;

/// True for codes where the same call may succeed later (with backoff).
constexpr bool is_retryable(errc code) noexcept {
    return code == errc::io_error || code == errc::unavailable || code == errc::conflict
           || code == errc::timeout;
}

/// An error value: a code plus a message that says what happened, with context added
/// outermost-first as it travels up ("reading footer of x.parquet: truncated: need 8 bytes").
class error {
public:
    error(errc code, std::string message) : _code(code), _message(std::move(message)) {}

    errc code() const noexcept { return _code; }
    const std::string& message() const noexcept { return _message; }
    bool retryable() const noexcept { return is_retryable(_code); }

    /// Prefixes the message with where it happened. Returns *this for chaining.
    template<typename... Args>
    error&& with_context(fmt::format_string<Args...> f, Args&&... args) && {
        _message = fmt::format(f, std::forward<Args>(args)...) + ": " + _message;
        return std::move(*this);
    }

    std::string to_string() const;

private:
    errc _code;
    std::string _message;
};

/// Builds an error with a formatted message: `return make_error(errc::corrupt, "bad magic {}", m);`
template<typename... Args>
error make_error(errc code, fmt::format_string<Args...> f, Args&&... args) {
    return error(code, fmt::format(f, std::forward<Args>(args)...));
}

std::ostream& operator<<(std::ostream& os, const error& e);

} // namespace floe

template<>
struct fmt::formatter<floe::error> : fmt::formatter<std::string_view> {
    template<typename Ctx>
    auto format(const floe::error& e, Ctx& ctx) const {
        return fmt::formatter<std::string_view>::format(e.to_string(), ctx);
    }
};
