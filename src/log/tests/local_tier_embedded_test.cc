// The local-tier conformance suite on the embedded segment log (log_manager / partition_log).

#include "log/log_manager.h"
#include "log/testing/local_tier_conformance.h"
#include "log/tests/test_util.h"

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;

namespace {

class embedded_store : public conformance_store {
public:
    result<std::unique_ptr<local_tier>> open(const config_map& topic_defaults) override {
        log_manager_options o;
        o.data_dir = _dir.path;
        o.topic_defaults = topic_defaults;
        o.background_threads = false; // when_durable fsyncs inline; tests call retention themselves
        return FLOE_TRY(log_manager::open(std::move(o)));
    }

private:
    temp_dir _dir;
};

} // namespace

INSTANTIATE_TEST_SUITE_P(embedded, local_tier_conformance,
                         ::testing::Values(conformance_param{
                             "embedded", [](std::string&) { return std::make_unique<embedded_store>(); }}),
                         conformance_param_name);
