// The backpressure budget: which local bytes count as not yet in Iceberg, and the setting's
// default.
#include "ingest/kafka_source.h"
#include "ingest/mirror_policy.h"
#include "log/batch_builder.h"
#include "log/partition_log.h"
#include "log/tests/test_util.h"

#include <gtest/gtest.h>

using namespace floe;
using namespace floe::ingest;

namespace {

std::shared_ptr<log::partition_log> open_mirror(const std::filesystem::path& dir, bool tiered) {
    log::partition_log_options o;
    o.dir = dir;
    o.tp = {"m", 0};
    o.config.remote_storage_enable = tiered;
    o.mirror = true;
    auto r = log::partition_log::open(o);
    EXPECT_TRUE(r) << r.error();
    return r ? *r : nullptr;
}

void mirror(log::partition_log& p, int64_t first, int n) {
    log::batch_builder b;
    b.begin(first);
    for (int i = 0; i < n; ++i) b.add(first + i, 1'700'000'000'000 + i, std::string_view("k"), std::string_view("v"), {});
    byte_buffer bytes;
    ASSERT_TRUE(b.finish(bytes));
    auto r = p.mirror_append(bytes);
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, log::append_status::ok);
}

} // namespace

TEST(IngestBudget, CountsSegmentsAboveTheOffloadedMarkerOfTieredMirrorsOnly) {
    log::testing::temp_dir tmp;
    auto p = open_mirror(tmp.path / "tiered", true);
    ASSERT_TRUE(p);
    EXPECT_EQ(unoffloaded_bytes(*p), 0);
    mirror(*p, 0, 10);
    ASSERT_TRUE(p->roll()); // segment 0 sealed, holding 0..9
    mirror(*p, 10, 5);      // the active segment
    auto segs = p->segments();
    ASSERT_EQ(segs.size(), 2u);
    const int64_t all = int64_t(segs[0].size_bytes + segs[1].size_bytes);
    EXPECT_GT(all, 0);
    EXPECT_EQ(unoffloaded_bytes(*p), all);
    ASSERT_TRUE(p->set_offloaded_up_to(kafka_offset(10))); // segment 0 is in the table
    EXPECT_EQ(unoffloaded_bytes(*p), int64_t(segs[1].size_bytes));
    ASSERT_TRUE(p->set_offloaded_up_to(kafka_offset(15)));
    EXPECT_EQ(unoffloaded_bytes(*p), 0);

    // A mirror that does not go to the lake is bounded by local retention, not the budget.
    auto q = open_mirror(tmp.path / "local", false);
    ASSERT_TRUE(q);
    mirror(*q, 0, 10);
    EXPECT_EQ(unoffloaded_bytes(*q), 0);
}

TEST(IngestBudget, SettingAndDefault) {
    config::settings::ingest_source s;
    s.name = "x";
    EXPECT_EQ(max_local_bytes_of(s), default_max_local_bytes);
    s.values["max-local-bytes"] = "64MiB";
    EXPECT_EQ(max_local_bytes_of(s), 64ll << 20);
}

// Thresholds of 0: any of them makes the sealer seal after every append, but while a sealed
// segment waits for the lake what arrives gathers in the active segment (one commit at a time).
TEST(IngestThresholds, ZeroSealsEveryAppendWithAtMostOneSegmentWaitingForTheLake) {
    config::settings::ingest_source s;
    s.name = "z";
    auto none = seal_thresholds::of(s);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->any());
    s.values["max-age"] = "1s";
    EXPECT_FALSE(seal_thresholds::of(s)->immediate);
    for (auto key : {"max-age", "max-messages", "max-bytes"}) {
        config::settings::ingest_source z;
        z.name = "z";
        z.values[key] = "0";
        auto t = seal_thresholds::of(z);
        ASSERT_TRUE(t) << key;
        EXPECT_TRUE(t->immediate) << key;
        EXPECT_TRUE(t->any()) << key;
    }
    config::settings::ingest_source z;
    z.name = "z";
    z.values["max-age"] = "0";
    auto t = *seal_thresholds::of(z);

    log::testing::temp_dir tmp;
    auto p = open_mirror(tmp.path / "tiered", true);
    ASSERT_TRUE(p);
    segment_sealer sealer;
    auto seal = [&](int64_t now) {
        auto r = sealer.maybe_seal(*p, t, now);
        EXPECT_TRUE(r) << r.error();
        return r ? *r : std::nullopt;
    };
    EXPECT_FALSE(seal(1)); // nothing appended
    mirror(*p, 0, 1);
    sealer.appended(*p, 1, 2);
    auto first = seal(2);
    ASSERT_TRUE(first);
    EXPECT_STREQ(first->why, "threshold 0");
    EXPECT_EQ(first->messages, 1);
    // Segment 0 is sealed but not in the table: new messages wait in the active segment.
    mirror(*p, 1, 3);
    sealer.appended(*p, 3, 3);
    EXPECT_FALSE(seal(3));
    mirror(*p, 4, 2);
    sealer.appended(*p, 2, 4);
    EXPECT_FALSE(seal(4));
    ASSERT_TRUE(p->set_offloaded_up_to(kafka_offset(1))); // segment 0 committed
    auto second = seal(5);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->messages, 5); // offsets 1..5, one commit
    EXPECT_EQ(p->sealed_segments().size(), 2u);

    // A mirror kept local (no lake) seals after every append: nothing would ever commit.
    auto q = open_mirror(tmp.path / "local", false);
    ASSERT_TRUE(q);
    segment_sealer local;
    mirror(*q, 0, 1);
    local.appended(*q, 1, 1);
    ASSERT_TRUE(*local.maybe_seal(*q, t, 1));
    mirror(*q, 1, 1);
    local.appended(*q, 1, 2);
    EXPECT_TRUE(*local.maybe_seal(*q, t, 2));
}

// idle-seal: a segment is sealed only when the source has nothing more for the partition and
// nothing was appended for the idle time; max-age and the others still apply without it.
TEST(IngestThresholds, IdleSealOnlyAtTheSourcesEndAfterTheIdleTime) {
    config::settings::ingest_source s;
    s.name = "i";
    s.values["max-age"] = "10s";
    s.values["idle-seal"] = "200ms";
    auto t = seal_thresholds::of(s);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->idle_ms, 200);
    EXPECT_TRUE(t->any());
    EXPECT_FALSE(t->immediate);
    config::settings::ingest_source only;
    only.name = "i";
    only.values["idle-seal"] = "0";
    auto o = seal_thresholds::of(only);
    ASSERT_TRUE(o);
    EXPECT_EQ(o->idle_ms, 0);
    EXPECT_TRUE(o->any());
    EXPECT_FALSE(o->immediate); // idle-seal 0 is not "every append"
    config::settings::ingest_source none;
    none.name = "i";
    EXPECT_EQ(seal_thresholds::of(none)->idle_ms, -1);

    log::testing::temp_dir tmp;
    auto p = open_mirror(tmp.path / "tiered", true);
    ASSERT_TRUE(p);
    segment_sealer sealer;
    auto seal = [&](int64_t now, bool at_end) {
        auto r = sealer.maybe_seal(*p, *t, now, at_end);
        EXPECT_TRUE(r) << r.error();
        return r ? *r : std::nullopt;
    };
    EXPECT_FALSE(seal(1'000, true)); // nothing appended
    mirror(*p, 0, 3);
    sealer.appended(*p, 3, 1'000);
    mirror(*p, 3, 2);
    sealer.appended(*p, 2, 1'150);
    EXPECT_FALSE(seal(1'300, false)); // idle long enough, but the source has more
    EXPECT_FALSE(seal(1'300, true));  // at the source's end, idle 150 ms of 200
    auto first = seal(1'350, true);
    ASSERT_TRUE(first);
    EXPECT_STREQ(first->why, "idle-seal");
    EXPECT_EQ(first->messages, 5);
    // Without the source's end, max-age seals as before (10 s from the first append).
    mirror(*p, 5, 1);
    sealer.appended(*p, 1, 2'000);
    EXPECT_FALSE(seal(11'999, false));
    auto second = seal(12'000, false);
    ASSERT_TRUE(second);
    EXPECT_STREQ(second->why, "max-age");
    EXPECT_EQ(p->sealed_segments().size(), 2u);
}
