#include "base/error.h"

#include <ostream>

namespace floe {

std::string_view to_string(errc code) noexcept {
    switch (code) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::corrupt: return "corrupt";
    case errc::unsupported: return "unsupported";
    case errc::io_error: return "io_error";
    case errc::unavailable: return "unavailable";
    case errc::conflict: return "conflict";
    case errc::timeout: return "timeout";
    case errc::out_of_range: return "out_of_range";
    case errc::shutting_down: return "shutting_down";
    case errc::internal: return "internal";
    }
    return "unknown";
}

std::string error::to_string() const {
    return fmt::format("{} ({})", _message, floe::to_string(_code));
}

std::ostream& operator<<(std::ostream& os, const error& e) { return os << e.to_string(); }

} // namespace floe
