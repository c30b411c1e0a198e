#pragma once
// The conformance tests of the local-tier interface (log/local_tier.h): one GoogleTest suite,
// parameterized over backends, that every backend must pass. A backend's test binary compiles
// local_tier_conformance.cc and instantiates the suite with its own factory:
//
//     INSTANTIATE_TEST_SUITE_P(embedded, local_tier_conformance,
//                              testing::Values(conformance_param{"embedded", make_embedded}),
//                              conformance_param_name);
//
// The tests say only what the interface promises (records, offsets, markers, producer state,
// topics; never file layout or batch boundaries), so a backend that rebuilds batches from its
// own records (Redis Streams) passes the same tests as the embedded segment log.

#include "base/result.h"
#include "log/local_tier.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace floe::log::testing {

/// One backend's store for the length of a test: open() gives a tier over it, empty the first
/// time; later calls (after the previous tier was closed and destroyed) see what it left, as a
/// broker restart would. The destructor removes the store.
class conformance_store {
public:
    virtual ~conformance_store() = default;
    /// `topic_defaults`: floe.topic-defaults.* (Kafka topic config names).
    virtual result<std::unique_ptr<local_tier>> open(const config_map& topic_defaults) = 0;
};

struct conformance_param {
    std::string name;
    /// A fresh store; nullptr when the backend could not start (the test then fails with
    /// `why`).
    std::function<std::unique_ptr<conformance_store>(std::string& why)> make_store;
};

/// The suite's fixture: open() (re)opens the tier over the test's store.
class local_tier_conformance : public ::testing::TestWithParam<conformance_param> {
protected:
    void SetUp() override;
    void TearDown() override;
    /// Closes the open tier if any (a restart) and opens the store again.
    local_tier& open(const config_map& topic_defaults = {});
    /// Creates a topic and returns its partition 0.
    std::shared_ptr<local_partition> create(local_tier& t, const std::string& name, int32_t parts = 1,
                                            const config_map& overrides = {});

    std::unique_ptr<conformance_store> _store;
    std::unique_ptr<local_tier> _tier;
};

inline void PrintTo(const conformance_param& p, std::ostream* os) { *os << p.name; }

inline std::string conformance_param_name(const ::testing::TestParamInfo<conformance_param>& i) {
    return i.param.name;
}

} // namespace floe::log::testing
