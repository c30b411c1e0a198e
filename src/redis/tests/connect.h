#pragma once
// The integration tests' Redis client: connected to `uris` (the client's defaults, with
// `adjust` applied first), a test failure recorded when it cannot be.
#include "redis/client.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace floe::redis::fixture {

inline std::unique_ptr<client> connect_to(const std::string& uris,
                                          const std::function<void(options&)>& adjust = {}) {
    auto o = parse_uris(uris);
    EXPECT_TRUE(o) << o.error();
    if (!o) return nullptr;
    if (adjust) adjust(*o);
    auto c = client::connect(*o);
    EXPECT_TRUE(c) << c.error();
    return c ? std::move(*c) : nullptr;
}

} // namespace floe::redis::fixture
