#pragma once

// Debian 12's asio (1.24) keeps as_tuple under experimental. One completion token for every
// awaited operation: errors come back as values (no exceptions out of asio).
#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace floe::kafka {
inline constexpr auto use_tuple = asio::experimental::as_tuple(asio::use_awaitable);
}
