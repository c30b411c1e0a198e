#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/manifests.h"
#include "maintenance/orphans.h"
#include "maintenance/reencrypt.h"
#include "maintenance/table_files.h"

#include "crypto/keyring.h"
#include "lake/table_reader.h"
#include "lake/value_codec.h"
#include "maintenance/runner.h"
#include "schema/registry.h"
#include "schema/store.h"

#include "base/clock.h"
#include "format/parquet/reader.h"
#include "iceberg/bounds.h"
#include "iceberg/manifest.h"
#include "lake/iceberg_lake.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace floe::maintenance {
namespace {

namespace fs = std::filesystem;

const iceberg::table_ident ident{"floe", "orders"};

class maintenance_test : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path()
               / fmt::format("floe-maintenance-test-{}-{}", ::getpid(),
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(_dir);
        fs::create_directories(_dir);
        auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
        ASSERT_TRUE(cat) << cat.error();
        _cat = std::shared_ptr<iceberg::catalog>(std::move(*cat));
        lake::lake_options o;
        o.warehouse = "file://" + (_dir / "warehouse").string();
        o.parquet.row_group_size = 64 << 10;
        _lake = std::make_unique<lake::iceberg_lake>(_cat, _io, o);
    }
    void TearDown() override { fs::remove_all(_dir); }

    result<lake::commit_result> append_range(const std::string& stream, int64_t from, int64_t to, int64_t ts = 1000) {
        auto t = FLOE_TRY(_lake->table_for_topic("orders"));
        auto app = FLOE_TRY(t->begin_append());
        for (int64_t o = from; o < to; ++o) {
            auto id = std::to_string(o);
            auto value = fmt::format("value-{}", o);
            parquet::message_row row;
            row.stream_key = stream;
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = ts + o;
            row.kafka_timestamp = ts + o;
            row.key = id;
            row.value = value;
            row.partition = 0;
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        return app->commit({{stream, to}});
    }

    /// (stream, offset) of every row of the live data files, read from the Parquet files.
    std::multiset<std::pair<std::string, int64_t>> rows() {
        auto t = iceberg::load_table(*_cat, *_io, ident);
        EXPECT_TRUE(t) << t.error();
        auto files = iceberg::live_files(*_io, t->metadata);
        EXPECT_TRUE(files) << files.error();
        std::multiset<std::pair<std::string, int64_t>> out;
        for (auto& e : *files) {
            auto src = parquet::open_file_source(*iceberg::local_path(e.file.file_path));
            EXPECT_TRUE(src) << src.error();
            auto r = parquet::message_reader::open(std::move(*src));
            EXPECT_TRUE(r) << r.error();
            std::vector<parquet::message_record> recs;
            for (;;) {
                recs.clear();
                auto more = r->next_row_group(recs);
                EXPECT_TRUE(more) << more.error();
                for (auto& m : recs) out.emplace(m.stream_key, m.offset);
                if (!more || !*more) break;
            }
        }
        return out;
    }

    /// Every file under the table's location, as URIs.
    std::set<std::string> files_on_disk() {
        std::set<std::string> out;
        for (auto& e : fs::recursive_directory_iterator(_dir / "warehouse" / "floe" / "orders"))
            if (e.is_regular_file()) out.insert(iceberg::file_uri(e.path().string()));
        return out;
    }

    iceberg::loaded_table load() {
        auto t = iceberg::load_table(*_cat, *_io, ident);
        EXPECT_TRUE(t) << t.error();
        return *t;
    }

    fs::path _dir;
    std::shared_ptr<iceberg::catalog> _cat;
    std::shared_ptr<iceberg::file_io> _io = std::make_shared<iceberg::local_file_io>();
    std::unique_ptr<lake::iceberg_lake> _lake;
};

iceberg::snapshot snap(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts, bool positions = true) {
    iceberg::snapshot s;
    s.snapshot_id = id;
    s.parent_snapshot_id = parent;
    s.sequence_number = seq;
    s.timestamp_ms = ts;
    s.summary["operation"] = "append";
    if (positions) s.summary[lake::positions_summary_key] = "{}";
    return s;
}

TEST(plan_expiry, age_min_count_refs_and_committed_positions) {
    iceberg::table_metadata m;
    const int64_t day = 24 * 3600 * 1000LL, now = 100 * day;
    for (int64_t i = 1; i <= 5; ++i) m.snapshots.push_back(snap(i, i > 1 ? std::optional<int64_t>(i - 1) : std::nullopt, i, now - (10 - i) * day));
    m.current_snapshot_id = 5;
    m.refs["main"] = {5, "branch", {}, {}, {}};
    // Default: 5 days. Snapshots 5 (5 days old: kept, >= cutoff) and older ones (6..9 days) go.
    auto p = plan_expiry(m, now);
    EXPECT_EQ(p.retained, (std::set<int64_t>{5}));
    EXPECT_EQ(p.expired, (std::vector<int64_t>{1, 2, 3, 4}));
    // min-snapshots-to-keep keeps ancestors whatever their age.
    m.properties[min_snapshots_property] = "3";
    EXPECT_EQ(plan_expiry(m, now).retained, (std::set<int64_t>{3, 4, 5}));
    m.properties.erase(min_snapshots_property);
    // The table property and the override.
    m.properties[max_snapshot_age_property] = std::to_string(8 * day);
    EXPECT_EQ(plan_expiry(m, now).retained, (std::set<int64_t>{2, 3, 4, 5}));
    EXPECT_EQ(plan_expiry(m, now, 0).retained, (std::set<int64_t>{5}));
    // A tag keeps its snapshot until the tag is older than max-ref-age.
    m.refs["keep"] = {2, "tag", {}, {}, {}};
    EXPECT_EQ(plan_expiry(m, now, 0).retained, (std::set<int64_t>{2, 5}));
    m.properties[max_ref_age_property] = std::to_string(day);
    auto q = plan_expiry(m, now, 0);
    EXPECT_EQ(q.retained, (std::set<int64_t>{5}));
    EXPECT_EQ(q.expired_refs, (std::vector<std::string>{"keep"}));
    // The newest snapshot carrying floe.committed-positions is never expired.
    m.refs.erase("keep");
    m.snapshots[4].summary.erase(lake::positions_summary_key);
    EXPECT_EQ(plan_expiry(m, now, 0).retained, (std::set<int64_t>{4, 5}));
}

TEST_F(maintenance_test, expire_keeps_reachable_files_and_deletes_the_rest) {
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(append_range("orders-0", i * 10, i * 10 + 10));
    // Remote retention removes the first two files (their newest message_ts < 1020).
    auto table = _lake->table_for_topic("orders");
    ASSERT_TRUE(table);
    auto removed = (*table)->expire_before(1020);
    ASSERT_TRUE(removed) << removed.error();
    EXPECT_EQ(*removed, 2u);
    auto before_rows = rows();
    EXPECT_EQ(before_rows.size(), 40u);
    auto before = load();
    ASSERT_EQ(before.metadata.snapshots.size(), 7u);
    auto retention_snapshot = before.metadata.snapshots.back().snapshot_id;

    expire_options dry;
    dry.now_ms = system_clock_source::instance().now_ms();
    dry.max_age_override_ms = 0;
    dry.dry_run = true;
    auto plan = expire_snapshots(*_cat, *_io, ident, dry);
    ASSERT_TRUE(plan) << plan.error();
    EXPECT_EQ(plan->snapshots_expired, 6u);
    EXPECT_EQ(plan->data_files_deleted, 2u);
    EXPECT_EQ(load().metadata_location, before.metadata_location) << "a dry run commits nothing";
    for (auto& f : plan->deleted) EXPECT_TRUE(fs::exists(*iceberg::local_path(f))) << f;

    auto opts = dry;
    opts.dry_run = false;
    auto r = expire_snapshots(*_cat, *_io, ident, opts);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->snapshots_before, 7u);
    EXPECT_EQ(r->snapshots_expired, 6u);
    EXPECT_EQ(r->data_files_deleted, 2u);
    EXPECT_EQ(r->manifest_lists_deleted, 6u);
    EXPECT_GE(r->manifests_deleted, 1u);
    auto after = load();
    ASSERT_EQ(after.metadata.snapshots.size(), 1u);
    EXPECT_EQ(after.metadata.snapshots[0].snapshot_id, retention_snapshot);
    EXPECT_EQ(after.metadata.snapshot_log.size(), 1u);
    EXPECT_EQ(after.metadata.current_snapshot_id, retention_snapshot);
    EXPECT_EQ(iceberg::metadata_version(after.metadata_location), iceberg::metadata_version(before.metadata_location) + 1);
    EXPECT_TRUE(fs::exists(_dir / "warehouse/floe/orders/metadata" /
                           fmt::format("v{}.metadata.json", iceberg::metadata_version(after.metadata_location))));
    EXPECT_TRUE(after.metadata.current_snapshot()->summary.count(lake::positions_summary_key));
    EXPECT_EQ(rows(), before_rows) << "expiry never changes the live rows";
    for (auto& f : r->deleted) EXPECT_FALSE(fs::exists(*iceberg::local_path(f))) << f;
    // Every manifest list, manifest and data file the kept snapshot reaches is still there.
    auto refs = referenced_by(*_io, after.metadata, after.metadata_location);
    ASSERT_TRUE(refs) << refs.error();
    for (auto* set : {&refs->reached.manifest_lists}) for (auto& f : *set) EXPECT_TRUE(fs::exists(*iceberg::local_path(f))) << f;
    for (auto& [f, n] : refs->reached.manifests) EXPECT_TRUE(fs::exists(*iceberg::local_path(f))) << f;
    for (auto& [f, n] : refs->reached.data_files) EXPECT_TRUE(fs::exists(*iceberg::local_path(f))) << f;
    EXPECT_EQ(refs->reached.data_files.size(), 4u);
    // Appends go on after expiry, from the positions the kept snapshot carries.
    ASSERT_TRUE(append_range("orders-0", 60, 70));
    EXPECT_EQ(rows().size(), 50u);
    // Nothing more to expire with the default ages: no commit.
    opts.max_age_override_ms.reset();
    auto again = expire_snapshots(*_cat, *_io, ident, opts);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->snapshots_expired, 0u);
}

TEST_F(maintenance_test, expire_deletes_metadata_files_beyond_previous_versions_max) {
    ASSERT_TRUE(append_range("orders-0", 0, 10));
    auto t = load();
    // Keep 3 previous versions from here on.
    auto set = iceberg::commit_metadata(*_cat, *_io, ident, [](iceberg::table_metadata& m) -> result<bool> {
        m.properties["write.metadata.previous-versions-max"] = "3";
        return true;
    });
    ASSERT_TRUE(set) << set.error();
    ASSERT_TRUE(set->has_value());
    for (int i = 1; i < 6; ++i) ASSERT_TRUE(append_range("orders-0", i * 10, i * 10 + 10));
    auto before = load();
    EXPECT_EQ(before.metadata.metadata_log.size(), 3u);
    expire_options opts;
    opts.now_ms = system_clock_source::instance().now_ms();
    auto r = expire_snapshots(*_cat, *_io, ident, opts);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->snapshots_expired, 0u) << "all younger than 5 days";
    auto after = load();
    const int64_t oldest = iceberg::metadata_version(before.metadata.metadata_log.front().metadata_file);
    EXPECT_GT(r->metadata_files_deleted, 0u);
    for (auto& f : files_on_disk()) {
        if (!f.ends_with(".metadata.json")) continue;
        EXPECT_GE(iceberg::metadata_version(f), oldest) << f << " is older than the metadata-log";
    }
    EXPECT_EQ(rows().size(), 60u);
    // An expiry that commits moves the metadata-log on by one: the file that falls off goes too.
    opts.max_age_override_ms = 0;
    opts.now_ms = system_clock_source::instance().now_ms();
    auto r2 = expire_snapshots(*_cat, *_io, ident, opts);
    ASSERT_TRUE(r2) << r2.error();
    EXPECT_EQ(r2->snapshots_expired, 5u) << "six snapshots, the current one kept";
    auto last = load();
    const int64_t oldest_kept = iceberg::metadata_version(last.metadata.metadata_log.front().metadata_file);
    for (auto& f : files_on_disk()) {
        if (f.ends_with(".metadata.json")) {
            EXPECT_GE(iceberg::metadata_version(f), oldest_kept) << f << " fell off the metadata-log";
        }
    }
    EXPECT_EQ(rows().size(), 60u);
}

TEST_F(maintenance_test, orphans_older_than_the_margin_go_and_the_rest_stay) {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(append_range("orders-0", i * 10, i * 10 + 10));
    auto table = _lake->table_for_topic("orders");
    ASSERT_TRUE((*table)->expire_before(1010));
    expire_options eo;
    eo.now_ms = system_clock_source::instance().now_ms();
    eo.max_age_override_ms = 0;
    ASSERT_TRUE(expire_snapshots(*_cat, *_io, ident, eo));
    // Strays: an old one in data/, an old one in metadata/, a fresh one (a write in progress).
    auto base = _dir / "warehouse/floe/orders";
    auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 4);
    for (auto p : {base / "data/stream_key=orders-0/segment-0-dead.parquet", base / "metadata/dead-m0.avro"}) {
        std::ofstream(p) << "orphan";
        fs::last_write_time(p, old_time);
    }
    auto fresh = base / "data/stream_key=orders-0/segment-9-inflight.parquet";
    std::ofstream(fresh) << "in flight";
    // Every referenced file is made old too: age alone never deletes a referenced file.
    auto before_rows = rows();
    for (auto& f : files_on_disk())
        if (f.find("inflight") == std::string::npos) fs::last_write_time(*iceberg::local_path(f), old_time);

    orphan_options oo;
    oo.now_ms = system_clock_source::instance().now_ms();
    oo.dry_run = true;
    auto plan = remove_orphans(*_cat, *_io, ident, oo);
    ASSERT_TRUE(plan) << plan.error();
    EXPECT_EQ(plan->orphans, 2u);
    EXPECT_TRUE(fs::exists(base / "metadata/dead-m0.avro"));
    oo.dry_run = false;
    auto r = remove_orphans(*_cat, *_io, ident, oo);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->orphans, 2u);
    EXPECT_EQ(r->too_young, 1u);
    EXPECT_FALSE(fs::exists(base / "metadata/dead-m0.avro"));
    EXPECT_FALSE(fs::exists(base / "data/stream_key=orders-0/segment-0-dead.parquet"));
    EXPECT_TRUE(fs::exists(fresh));
    fs::remove(fresh);
    // Now the files on disk are exactly the ones the metadata references.
    auto t = load();
    auto refs = referenced_by(*_io, t.metadata, t.metadata_location);
    ASSERT_TRUE(refs);
    for (auto& f : files_on_disk()) EXPECT_TRUE(refs->contains(f)) << f;
    EXPECT_EQ(rows(), before_rows);
    // --older-than 0 with nothing unreferenced deletes nothing.
    oo.older_than_ms = 0;
    auto none = remove_orphans(*_cat, *_io, ident, oo);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->orphans, 0u);
}

TEST_F(maintenance_test, expiry_beside_concurrent_appends_loses_no_commit) {
    ASSERT_TRUE(append_range("orders-0", 0, 10));
    std::atomic<bool> stop{false};
    std::atomic<int> appended{1};
    std::thread writer([&] {
        for (int i = 1; i < 40 && !stop; ++i) {
            auto r = append_range("orders-0", i * 10, i * 10 + 10);
            EXPECT_TRUE(r) << r.error();
            if (!r) return;
            ++appended;
        }
    });
    expire_options opts;
    opts.max_age_override_ms = 0;
    for (int i = 0; i < 10; ++i) {
        opts.now_ms = system_clock_source::instance().now_ms();
        auto r = expire_snapshots(*_cat, *_io, ident, opts);
        ASSERT_TRUE(r) << r.error();
    }
    writer.join();
    auto got = rows();
    EXPECT_EQ(got.size(), static_cast<size_t>(appended.load()) * 10);
    for (int64_t o = 0; o < appended * 10; ++o) EXPECT_EQ(got.count({"orders-0", o}), 1u) << o;
    auto t = load();
    auto pos = lake::positions_from_summary(t.metadata.current_snapshot()->summary);
    ASSERT_TRUE(pos);
    EXPECT_EQ(pos->at("orders-0"), appended * 10);
}


namespace floe::maintenance {
namespace {

TEST_F(maintenance_test, compaction_bin_packs_small_files_in_offset_order_and_keeps_every_row) {
    // Two streams, 12 small files each.
    for (int i = 0; i < 12; ++i) {
        ASSERT_TRUE(append_range("orders-0", i * 50, i * 50 + 50));
        ASSERT_TRUE(append_range("orders-1", i * 50, i * 50 + 50));
    }
    auto before_rows = rows();
    ASSERT_EQ(before_rows.size(), 1200u);
    auto before = load();
    auto live = iceberg::live_files(*_io, before.metadata);
    ASSERT_TRUE(live);
    ASSERT_EQ(live->size(), 24u);
    int64_t one = live->front().file.file_size_in_bytes;

    compact_options o;
    o.target_file_size = one * 5;  // about five small files per output file
    o.small_file_size = one * 2;
    o.dry_run = true;
    auto plan = compact(*_lake, "orders", o);
    ASSERT_TRUE(plan) << plan.error();
    EXPECT_EQ(plan->small_files, 24u);
    EXPECT_GE(plan->groups, 4u);
    EXPECT_EQ(load().metadata_location, before.metadata_location);

    o.dry_run = false;
    size_t progress_calls = 0;
    o.progress = [&](size_t done, size_t total) {
        ++progress_calls;
        EXPECT_LE(done, total);
    };
    auto r = compact(*_lake, "orders", o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->files_rewritten, 24u);
    EXPECT_EQ(r->rows, 1200);
    EXPECT_EQ(progress_calls, r->groups);
    EXPECT_EQ(rows(), before_rows) << "the same multiset of rows";
    auto after = load();
    auto* cur = after.metadata.current_snapshot();
    EXPECT_EQ(cur->operation(), "replace");
    EXPECT_EQ(cur->summary.at(lake::positions_summary_key),
              before.metadata.current_snapshot()->summary.at(lake::positions_summary_key));
    auto files = iceberg::live_files(*_io, after.metadata);
    ASSERT_TRUE(files);
    EXPECT_LT(files->size(), 12u);
    // Each new file holds a contiguous offset range of one stream, in order, with the offload
    // writer's stats (offset and message_ts bounds) so retention and reads prune as before.
    for (auto& e : *files) {
        auto lo = iceberg::deserialize_long(e.file.lower_bounds.at(iceberg::field_ids::offset));
        auto hi = iceberg::deserialize_long(e.file.upper_bounds.at(iceberg::field_ids::offset));
        ASSERT_TRUE(lo && hi);
        EXPECT_EQ(*hi - *lo + 1, e.file.record_count);
        EXPECT_TRUE(e.file.upper_bounds.count(iceberg::field_ids::message_ts));
        // One replace per group: each new file takes the sequence number of the replace that added it.
        auto* added_by = after.metadata.find_snapshot(*e.snapshot_id);
        ASSERT_NE(added_by, nullptr);
        EXPECT_EQ(added_by->operation(), "replace");
        EXPECT_EQ(*e.sequence_number, added_by->sequence_number);
    }
    // Offload goes on from the carried-forward positions: nothing skipped, nothing twice.
    auto next = append_range("orders-0", 600, 610);
    ASSERT_TRUE(next) << next.error();
    EXPECT_EQ(next->added_rows, 10);
    auto again = append_range("orders-0", 590, 610);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->added_rows, 0) << "a retried offload still skips rows compaction rewrote";
    EXPECT_EQ(rows().size(), 1210u);
    // Then expiry and orphan cleanup leave exactly the referenced files.
    expire_options eo;
    eo.now_ms = system_clock_source::instance().now_ms();
    eo.max_age_override_ms = 0;
    auto ex = expire_snapshots(*_cat, *_io, ident, eo);
    ASSERT_TRUE(ex) << ex.error();
    EXPECT_EQ(ex->data_files_deleted, 24u) << "the compacted inputs";
    orphan_options oo;
    oo.now_ms = system_clock_source::instance().now_ms() + 1000;
    oo.older_than_ms = 0;
    ASSERT_TRUE(remove_orphans(*_cat, *_io, ident, oo));
    auto t = load();
    auto refs = referenced_by(*_io, t.metadata, t.metadata_location);
    ASSERT_TRUE(refs);
    for (auto& f : files_on_disk()) EXPECT_TRUE(refs->contains(f)) << f;
    EXPECT_EQ(rows().size(), 1210u);
}

TEST_F(maintenance_test, compaction_beside_concurrent_offload_loses_and_duplicates_nothing) {
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(append_range("orders-0", i * 20, i * 20 + 20));
    auto live = iceberg::live_files(*_io, load().metadata);
    ASSERT_TRUE(live);
    int64_t one = live->front().file.file_size_in_bytes;
    std::atomic<int> appended{20};
    std::thread writer([&] {
        for (int i = 20; i < 60; ++i) {
            auto r = append_range("orders-0", i * 20, i * 20 + 20);
            EXPECT_TRUE(r) << r.error();
            if (!r) return;
            ++appended;
        }
    });
    compact_options o;
    o.target_file_size = one * 4;
    o.small_file_size = one * 2;
    for (int i = 0; i < 5; ++i) {
        auto r = compact(*_lake, "orders", o);
        ASSERT_TRUE(r) << r.error();
    }
    writer.join();
    auto got = rows();
    EXPECT_EQ(got.size(), static_cast<size_t>(appended.load()) * 20);
    for (int64_t off = 0; off < appended * 20; ++off) EXPECT_EQ(got.count({"orders-0", off}), 1u) << off;
    auto pos = lake::positions_from_summary(load().metadata.current_snapshot()->summary);
    ASSERT_TRUE(pos);
    EXPECT_EQ(pos->at("orders-0"), appended * 20);
}

} // namespace
} // namespace floe::maintenance

namespace floe::maintenance {
namespace {

TEST_F(maintenance_test, manifest_rewrite_merges_small_manifests_and_changes_no_file) {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(append_range("orders-0", i * 10, i * 10 + 10));
    auto before = load();
    auto live_before = iceberg::live_files(*_io, before.metadata);
    ASSERT_TRUE(live_before);
    manifest_rewrite_options o;
    o.min_count = 2;
    o.dry_run = true;
    auto plan = rewrite_manifests(*_cat, *_io, ident, o);
    ASSERT_TRUE(plan) << plan.error();
    EXPECT_EQ(plan->manifests_before, 8u);
    EXPECT_EQ(plan->manifests_after, 1u);
    EXPECT_FALSE(plan->committed);
    EXPECT_EQ(load().metadata_location, before.metadata_location);
    o.dry_run = false;
    auto r = rewrite_manifests(*_cat, *_io, ident, o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_TRUE(r->committed);
    EXPECT_EQ(r->manifests_after, 1u);
    auto after = load();
    auto* cur = after.metadata.current_snapshot();
    EXPECT_EQ(cur->operation(), "replace");
    EXPECT_EQ(cur->summary.at(lake::positions_summary_key),
              before.metadata.current_snapshot()->summary.at(lake::positions_summary_key));
    EXPECT_EQ(cur->summary.at("total-data-files"), "8");
    auto live_after = iceberg::live_files(*_io, after.metadata);
    ASSERT_TRUE(live_after);
    ASSERT_EQ(live_after->size(), live_before->size());
    std::map<std::string, std::pair<int64_t, int64_t>> ids;  // path -> (snapshot id, sequence number)
    for (auto& e : *live_before) ids[e.file.file_path] = {*e.snapshot_id, *e.sequence_number};
    for (auto& e : *live_after) {
        ASSERT_TRUE(ids.count(e.file.file_path)) << e.file.file_path;
        EXPECT_EQ(e.status, iceberg::entry_status::existing);
        EXPECT_EQ(std::make_pair(*e.snapshot_id, *e.sequence_number), ids[e.file.file_path])
            << "a rewritten manifest keeps each file's snapshot id and data sequence number";
    }
    EXPECT_EQ(rows().size(), 80u);
    // Once merged there is nothing left to merge: no commit.
    auto again = rewrite_manifests(*_cat, *_io, ident, o);
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->committed);
}

} // namespace
} // namespace floe::maintenance

namespace floe::maintenance {
namespace {

TEST_F(maintenance_test, compaction_never_spans_a_file_it_does_not_rewrite) {
    // small, small, BIG, small, small: the two runs are compacted apart, the big file stays.
    ASSERT_TRUE(append_range("orders-0", 0, 20));
    ASSERT_TRUE(append_range("orders-0", 20, 40));
    ASSERT_TRUE(append_range("orders-0", 40, 4040));
    ASSERT_TRUE(append_range("orders-0", 4040, 4060));
    ASSERT_TRUE(append_range("orders-0", 4060, 4080));
    auto live = iceberg::live_files(*_io, load().metadata);
    ASSERT_TRUE(live);
    int64_t small_size = 0, big = 0;
    std::string big_path;
    for (auto& e : *live) {
        if (e.file.record_count == 4000) {
            big = e.file.file_size_in_bytes;
            big_path = e.file.file_path;
        } else {
            small_size = std::max(small_size, e.file.file_size_in_bytes);
        }
    }
    ASSERT_GT(big, small_size * 2);
    compact_options o;
    o.small_file_size = small_size + 1;
    o.target_file_size = big * 10;
    auto r = compact(*_lake, "orders", o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->groups, 2u);
    EXPECT_EQ(r->files_rewritten, 4u);
    auto after = iceberg::live_files(*_io, load().metadata);
    ASSERT_TRUE(after);
    ASSERT_EQ(after->size(), 3u);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    bool big_kept = false;
    for (auto& e : *after) {
        big_kept |= e.file.file_path == big_path;
        ranges.emplace_back(*iceberg::deserialize_long(e.file.lower_bounds.at(iceberg::field_ids::offset)),
                            *iceberg::deserialize_long(e.file.upper_bounds.at(iceberg::field_ids::offset)));
    }
    EXPECT_TRUE(big_kept);
    std::sort(ranges.begin(), ranges.end());
    EXPECT_EQ(ranges, (std::vector<std::pair<int64_t, int64_t>>{{0, 39}, {40, 4039}, {4040, 4079}}));
    EXPECT_EQ(rows().size(), 4080u);
}

} // namespace
} // namespace floe::maintenance

namespace floe::maintenance {
namespace {

/// Local files, but the process dies (SIGKILL, as kill -9) at its `kill_at`-th remove().
class dying_io final : public iceberg::file_io {
public:
    explicit dying_io(int kill_at) : _kill_at(kill_at) {}
    result<byte_buffer> read(std::string_view u) override { return _in.read(u); }
    result<void> write(std::string_view u, bytes_view d) override { return _in.write(u, d); }
    result<void> create_new(std::string_view u, bytes_view d) override { return _in.create_new(u, d); }
    result<bool> exists(std::string_view u) override { return _in.exists(u); }
    result<void> remove(std::string_view u) override {
        if (++_removes == _kill_at) ::raise(SIGKILL);
        return _in.remove(u);
    }
    result<std::vector<std::string>> list(std::string_view p) override { return _in.list(p); }
    result<std::vector<iceberg::object_info>> list_info(std::string_view p) override { return _in.list_info(p); }

private:
    iceberg::local_file_io _in;
    int _kill_at;
    int _removes = 0;
};

// kill -9 of an expiry after its commit, part-way through its deletions (at every point of
// them): the next expiry finishes the job from the intent record the killed run wrote before its
// commit, so the files on disk are exactly those the metadata references again without orphan
// cleanup (whose margin would keep the leftovers for days).
TEST_F(maintenance_test, expiry_killed_during_its_deletions_is_finished_by_the_next_run) {
    int64_t next = 0;
    auto table = _lake->table_for_topic("orders");
    ASSERT_TRUE(table);
    size_t killed_with_leftovers = 0;
    for (int kill_at = 1;; ++kill_at) {
        // Something to expire: new snapshots, and files remote retention removed from the table.
        for (int i = 0; i < 4; ++i, next += 10) ASSERT_TRUE(append_range("orders-0", next, next + 10));
        ASSERT_TRUE((*table)->expire_before(1000 + next - 20));
        auto rows_before = rows();
        auto before = files_on_disk();
        pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            // A process of its own (its own catalog connection), as `floe maintain` is.
            auto cat = iceberg::open_sql_catalog("sqlite://" + (_dir / "catalog.db").string(), "floe");
            if (!cat) ::_exit(3);
            dying_io io(kill_at);
            expire_options o;
            o.now_ms = system_clock_source::instance().now_ms();
            o.max_age_override_ms = 0;
            auto r = expire_snapshots(**cat, io, ident, o);
            ::_exit(r ? 0 : 4);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        if (WIFEXITED(status)) {
            ASSERT_EQ(WEXITSTATUS(status), 0) << "the expiry failed";
            break; // it finished before its kill_at-th deletion: every point was tried
        }
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        auto t = load();
        auto refs = referenced_by(*_io, t.metadata, t.metadata_location);
        ASSERT_TRUE(refs) << refs.error();
        ASSERT_EQ(t.metadata.snapshots.size(), 1u) << "the killed run committed";
        size_t left = 0;
        for (auto& f : files_on_disk()) left += !refs->contains(f);
        EXPECT_GT(left, 0u) << "killed at deletion " << kill_at << " with nothing left to delete";
        killed_with_leftovers += left > 0;
        EXPECT_EQ(rows(), rows_before) << "readable, every row once";

        // The next run: nothing more to expire, and the leftovers go (no orphan cleanup).
        expire_options o;
        o.now_ms = system_clock_source::instance().now_ms();
        auto r = expire_snapshots(*_cat, *_io, ident, o);
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r->snapshots_expired, 0u);
        EXPECT_EQ(r->leftovers_finished, 1u);
        t = load();
        refs = referenced_by(*_io, t.metadata, t.metadata_location);
        ASSERT_TRUE(refs) << refs.error();
        for (auto& f : files_on_disk()) EXPECT_TRUE(refs->contains(f)) << "killed at deletion " << kill_at << ": " << f;
        EXPECT_EQ(rows(), rows_before);
        ASSERT_LT(kill_at, 200);
    }
    EXPECT_GT(killed_with_leftovers, 5u);
}

// A run killed before its commit leaves an intent whose snapshots are all still in the table: it
// deletes nothing they reach.
TEST_F(maintenance_test, expiry_intent_of_a_run_killed_before_its_commit_deletes_nothing) {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(append_range("orders-0", i * 10, i * 10 + 10));
    auto t = load();
    std::string text = fmt::format("floe expiry intent v1\nwritten-ms {}\n", 0);
    for (auto& s : t.metadata.snapshots) text += s.manifest_list + "\n";
    auto uri = metadata_dir(t.metadata.location) + "floe-0-0000000000000000.expiry-intent";
    ASSERT_TRUE(_io->write(uri, bytes_view(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
    auto before_rows = rows();
    auto before = files_on_disk();
    expire_options o;
    o.now_ms = system_clock_source::instance().now_ms();
    auto r = expire_snapshots(*_cat, *_io, ident, o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->deleted.size(), 0u);
    before.erase(uri);
    EXPECT_EQ(files_on_disk(), before) << "the stale intent (old) is removed, nothing else";
    EXPECT_EQ(rows(), before_rows);
}

std::shared_ptr<crypto::key_provider> keyring_of(std::string current, std::vector<std::pair<std::string, uint8_t>> keys) {
    crypto::keyring k;
    k.current = std::move(current);
    for (auto& [id, fill] : keys) k.keys.emplace(id, crypto::secret_key(std::vector<uint8_t>(32, fill)));
    return std::make_shared<crypto::keyring_provider>(std::move(k));
}

/// Key id of each live data file ("" for plaintext), and the rows read back through the lake.
struct encrypted_view {
    std::multiset<std::string> keys;
    std::vector<std::pair<int64_t, std::string>> rows; // (offset, value), sorted
};

encrypted_view read_encrypted(lake::iceberg_lake& l) {
    encrypted_view v;
    auto files = lake::current_data_files(l.catalog(), l.io(), ident);
    EXPECT_TRUE(files) << files.error();
    for (auto& f : files->files) {
        std::string id;
        if (f.key_metadata) id = crypto::parse_key_metadata(as_bytes(*f.key_metadata)).value().key_id;
        v.keys.insert(id);
    }
    lake::table_reader reader(l, "orders");
    auto planned = reader.files();
    EXPECT_TRUE(planned) << planned.error();
    for (auto& f : *planned) {
        auto rows = reader.read_file(f);
        EXPECT_TRUE(rows) << rows.error();
        if (!rows) continue;
        for (auto& r : *rows) v.rows.emplace_back(r.offset, r.value.value_or(""));
    }
    std::sort(v.rows.begin(), v.rows.end());
    return v;
}

TEST_F(maintenance_test, compaction_of_an_encrypted_table_writes_encrypted_files) {
    _lake->set_key_provider(keyring_of("k1", {{"k1", 1}}));
    lake::table_encryption e;
    e.how = lake::table_encryption::mode::uniform;
    ASSERT_TRUE(_lake->table_for_topic("orders").value()->set_encryption(e));
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(append_range("orders-0", i * 40, i * 40 + 40));
    auto before = read_encrypted(*_lake);
    ASSERT_EQ(before.keys, (std::multiset<std::string>{"k1", "k1", "k1", "k1", "k1", "k1"}));
    compact_options o;
    o.target_file_size = 1 << 20;
    o.small_file_size = 1 << 20;
    auto r = compact(*_lake, "orders", o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->files_rewritten, 6u);
    auto after = read_encrypted(*_lake);
    EXPECT_EQ(after.keys, (std::multiset<std::string>{"k1"}));
    EXPECT_EQ(after.rows, before.rows);
    ASSERT_EQ(after.rows.size(), 240u);
    EXPECT_EQ(after.rows[7].second, "value-7");
    // Compaction without the key fails naming the file's key; it never writes plaintext.
    auto blind = std::make_unique<lake::iceberg_lake>(_cat, _io, _lake->options());
    for (int i = 6; i < 9; ++i) ASSERT_TRUE(append_range("orders-0", i * 40, i * 40 + 40));
    auto fail = compact(*blind, "orders", o);
    ASSERT_FALSE(fail);
    EXPECT_NE(fail.error().message().find("key 'k1'"), std::string::npos) << fail.error();
    EXPECT_EQ(read_encrypted(*_lake).rows.size(), 360u);
}

TEST_F(maintenance_test, reencrypt_rewrites_files_of_old_keys_and_plaintext_files) {
    // Plaintext files first, then encryption turned on with k1, then k2 made current.
    ASSERT_TRUE(append_range("orders-0", 0, 50));
    _lake->set_key_provider(keyring_of("k1", {{"k1", 1}}));
    lake::table_encryption e;
    e.how = lake::table_encryption::mode::uniform;
    ASSERT_TRUE(_lake->table_for_topic("orders").value()->set_encryption(e));
    ASSERT_TRUE(append_range("orders-0", 50, 100));
    _lake->set_key_provider(keyring_of("k2", {{"k1", 1}, {"k2", 2}}));
    ASSERT_TRUE(append_range("orders-0", 100, 150));
    auto before = read_encrypted(*_lake);
    EXPECT_EQ(before.keys, (std::multiset<std::string>{"", "k1", "k2"}));

    auto plan = reencrypt(*_lake, "orders", {.dry_run = true});
    ASSERT_TRUE(plan) << plan.error();
    EXPECT_EQ(plan->to_rewrite, 2u);
    EXPECT_EQ(plan->current_key, "k2");
    EXPECT_EQ(read_encrypted(*_lake).keys, before.keys);

    auto r = reencrypt(*_lake, "orders");
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->rewritten, 2u);
    EXPECT_EQ(r->rows, 100);
    auto after = read_encrypted(*_lake);
    EXPECT_EQ(after.keys, (std::multiset<std::string>{"k2", "k2", "k2"}));
    EXPECT_EQ(after.rows, before.rows);
    // k1 can go now: everything reads with k2 alone.
    _lake->set_key_provider(keyring_of("k2", {{"k2", 2}}));
    EXPECT_EQ(read_encrypted(*_lake).rows.size(), 150u);
    // Nothing left to do.
    auto again = reencrypt(*_lake, "orders");
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->to_rewrite, 0u);
}

} // namespace
} // namespace floe::maintenance

// Typed tables: a real registry (in-memory log) decodes Avro values written here from the
// specification's binary encoding, through several schema versions.
namespace typed {

void put_long(std::string& out, int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
        out += static_cast<char>((z & 0x7f) | 0x80);
        z >>= 7;
    }
    out += static_cast<char>(z);
}
void put_string(std::string& out, std::string_view s) {
    put_long(out, static_cast<int64_t>(s.size()));
    out += s;
}
/// An Avro decimal (bytes): big-endian two's complement, 4 bytes (enough for the test's values).
void put_decimal(std::string& out, int32_t unscaled) {
    std::string b;
    for (int shift = 24; shift >= 0; shift -= 8) b += static_cast<char>((static_cast<uint32_t>(unscaled) >> shift) & 0xff);
    put_string(out, b);
}
std::string framed(int32_t id, std::string_view payload) {
    std::string out(1, '\0');
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((id >> shift) & 0xff);
    return out + std::string(payload);
}

// v1 -> v2: a field added inside the list's element struct (color) and a top-level one (qty);
// v2 -> v3: qty int -> long, items.n int -> long, amount decimal(5,2) -> decimal(12,2).
constexpr auto v1 = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"country","type":"string"},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"},{"name":"n","type":"int"}]}}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}}]})";
constexpr auto v2 = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"country","type":"string"},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"},{"name":"n","type":"int"},
   {"name":"color","type":["null","string"],"default":null}]}}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
 {"name":"qty","type":["null","int"],"default":null}]})";
constexpr auto v3 = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"country","type":"string"},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"},{"name":"n","type":"long"},
   {"name":"color","type":["null","string"],"default":null}]}}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"qty","type":["null","long"],"default":null}]})";

struct order {
    int64_t id;
    std::string country;
    std::vector<std::pair<std::string, int64_t>> items;
    int32_t cents;
    std::optional<int64_t> qty;
};

/// The value of `o` under schema version `version` (1: no color/qty; 2, 3: color null, qty).
std::string encode(int32_t schema_id, int version, const order& o) {
    std::string p;
    put_long(p, o.id);
    put_string(p, o.country);
    if (!o.items.empty()) {
        put_long(p, static_cast<int64_t>(o.items.size()));
        for (auto& [sku, n] : o.items) {
            put_string(p, sku);
            put_long(p, n);
            if (version >= 2) put_long(p, 0); // color: null
        }
    }
    put_long(p, 0);
    put_decimal(p, o.cents);
    if (version >= 2) {
        put_long(p, o.qty ? 1 : 0);
        if (o.qty) put_long(p, *o.qty);
    }
    return framed(schema_id, p);
}

/// One leaf's entries of one row: "def/rep" or "def/rep=value" each, values as numbers (ints,
/// decimals unscaled) or text, so a promoted column renders as it did before.
using row_leaves = std::map<int32_t, std::string>; // leaf field id -> entries

std::map<int64_t, row_leaves> typed_rows(const std::string& uri) {
    std::map<int64_t, row_leaves> out;
    auto r = parquet::file_reader::open_file(*iceberg::local_path(uri));
    EXPECT_TRUE(r) << r.error();
    if (!r) return out;
    const auto& cols = (*r)->file_schema().columns();
    for (size_t rg = 0; rg < (*r)->num_row_groups(); ++rg) {
        auto offs = (*r)->read_column(rg, parquet::message_col::offset);
        EXPECT_TRUE(offs) << offs.error();
        std::vector<int64_t> row_offsets(offs->i64.begin(), offs->i64.end());
        for (auto& o : row_offsets) out[o]; // raw files: rows with no typed leaf
        for (size_t c = parquet::message_col::count; c < cols.size(); ++c) {
            auto data = (*r)->read_column(rg, c);
            EXPECT_TRUE(data) << data.error();
            const auto& d = cols[c];
            size_t row = 0, vi = 0;
            for (int64_t i = 0; i < data->num_entries; ++i) {
                auto ui = static_cast<size_t>(i);
                int def = data->def.empty() ? d.max_def : data->def[ui];
                int rep = data->rep.empty() ? 0 : data->rep[ui];
                if (rep == 0 && i > 0) ++row;
                std::string e = fmt::format("{}/{}", def, rep);
                if (def == d.max_def) {
                    switch (d.type) {
                    case parquet::physical_type::int32: e += fmt::format("={}", data->i32[vi]); break;
                    case parquet::physical_type::int64: e += fmt::format("={}", data->i64[vi]); break;
                    default: e.append("=").append(data->bytes[vi]); break;
                    }
                    ++vi;
                }
                auto& s = out[row_offsets.at(row)][*d.field_id];
                s += (s.empty() ? "" : ",") + e;
            }
        }
    }
    return out;
}

} // namespace typed

class typed_maintenance_test : public maintenance_test {
protected:
    void SetUp() override {
        maintenance_test::SetUp();
        _registry = std::make_shared<schema::registry>(std::shared_ptr<schema::registry_log>(schema::make_memory_log()));
        _lake->set_registry(_registry);
        _typed.how = lake::value_decoding::mode::schema_id;
    }
    /// Each version under its own subject: the test wants the evolution, not the registry's checks.
    int32_t register_schema(const char* text, const std::string& subject) {
        schema::schema_request req;
        req.schema = text;
        auto id = _registry->register_schema(subject, req);
        EXPECT_TRUE(id) << (id ? "" : id.error().message);
        return id ? *id : -1;
    }
    /// Appends `values` at offsets from.. of orders-0 (typed unless `raw`) and commits.
    result<lake::commit_result> append_values(const std::vector<std::optional<std::string>>& values, int64_t from,
                                              bool raw = false) {
        auto t = FLOE_TRY(_lake->table_for_topic("orders"));
        auto app = FLOE_TRY(raw ? t->begin_append() : t->begin_append(_typed));
        for (size_t i = 0; i < values.size(); ++i) {
            int64_t o = from + static_cast<int64_t>(i);
            auto id = std::to_string(o);
            auto key = "k" + id; // the row holds views: the strings outlive add()
            parquet::message_row row;
            row.stream_key = "orders-0";
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = 1000 + o;
            row.kafka_timestamp = 1000 + o;
            row.key = key;
            if (values[i]) row.value = *values[i];
            parquet::message_header_view h{"h", id};
            row.headers = std::span<const parquet::message_header_view>(&h, 1);
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        return app->commit({{"orders-0", from + static_cast<int64_t>(values.size())}});
    }
    /// Every row of a table's live files with Floe's columns, by offset.
    std::map<int64_t, parquet::message_record> records(const std::string& table) {
        std::map<int64_t, parquet::message_record> out;
        lake::table_reader reader(*_lake, "orders", table);
        auto files = reader.files();
        EXPECT_TRUE(files) << files.error();
        for (auto& f : *files) {
            auto rows = reader.read_file(f);
            EXPECT_TRUE(rows) << rows.error();
            for (auto& r : *rows) EXPECT_TRUE(out.emplace(r.offset, r).second) << "offset " << r.offset << " twice";
        }
        return out;
    }
    std::vector<std::string> live_uris(const std::string& table) {
        std::vector<std::string> out;
        auto files = lake::current_data_files(*_cat, *_io, {"floe", table});
        EXPECT_TRUE(files) << files.error();
        for (auto& f : files->files) out.push_back(f.file_path);
        return out;
    }
    std::map<int64_t, typed::row_leaves> typed_view(const std::string& table) {
        std::map<int64_t, typed::row_leaves> out;
        for (auto& uri : live_uris(table))
            for (auto& [o, leaves] : typed::typed_rows(uri)) EXPECT_TRUE(out.emplace(o, leaves).second);
        return out;
    }

    std::shared_ptr<schema::registry> _registry;
    lake::value_decoding _typed;
};

TEST_F(typed_maintenance_test, compaction_keeps_typed_files_typed_across_schema_versions) {
    using typed::encode;
    using typed::order;
    // Raw rows first (the topic became typed later), then three schema versions, a tombstone, a
    // v1 record after v3, and a record that goes to the dead letters.
    ASSERT_TRUE(append_values({std::string("raw-0"), std::string("raw-1")}, 0, true));
    auto id1 = register_schema(typed::v1, "v1-value");
    auto id2 = register_schema(typed::v2, "v2-value");
    auto id3 = register_schema(typed::v3, "v3-value");
    ASSERT_TRUE(append_values({encode(id1, 1, order{2, "FR", {{"a", 1}, {"b", 2}}, 12345, {}}),
                               encode(id1, 1, order{3, "DE", {}, -250, {}}), std::nullopt},
                              2));
    ASSERT_TRUE(append_values({encode(id2, 2, order{5, "JP", {{"c", 3}}, 99999, 7}),
                               encode(id2, 2, order{6, "BR", {{"d", 4}, {"e", 5}, {"f", 6}}, 1, std::nullopt})},
                              5));
    ASSERT_TRUE(append_values({encode(id3, 3, order{7, "US", {{"g", 7}}, -99999, int64_t(1) << 40}),
                               encode(id1, 1, order{8, "IT", {{"h", 8}}, 500, {}}), std::string("\x07garbage", 8)},
                              7));
    auto before = records("orders");
    auto typed_before = typed_view("orders");
    ASSERT_EQ(before.size(), 9u); // offsets 0..8; 9 is a dead letter
    ASSERT_EQ(live_uris("orders").size(), 4u);
    // What the current schema says: every version's fields, qty and n promoted to long.
    auto t = load();
    const auto* data = t.metadata.current_schema()->find("data");
    ASSERT_NE(data, nullptr);
    std::vector<std::string> names;
    for (auto& f : data->field_type->fields) names.push_back(f.name);
    ASSERT_EQ(names, (std::vector<std::string>{"id", "country", "items", "amount", "qty"}));

    compact_options o;
    auto r = compact(*_lake, "orders", o);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->files_rewritten, 4u);
    EXPECT_EQ(r->files_written, 1u);
    EXPECT_EQ(r->rows, 9);

    // Floe's columns byte for byte, every offset once.
    auto uris = live_uris("orders");
    ASSERT_EQ(uris.size(), 1u);
    EXPECT_EQ(records("orders"), before);
    // The file's columns are the current schema's layout (field ids on every leaf).
    auto layout = lake::table_layout(*t.metadata.current_schema());
    ASSERT_TRUE(layout) << layout.error();
    auto file = parquet::file_reader::open_file(*iceberg::local_path(uris[0]));
    ASSERT_TRUE(file) << file.error();
    ASSERT_EQ((*file)->file_schema().columns().size(), (*layout)->columns().size());
    for (size_t i = 0; i < (*layout)->columns().size(); ++i) {
        EXPECT_EQ((*file)->file_schema().columns()[i].dotted_path(), (*layout)->columns()[i].dotted_path());
        EXPECT_EQ((*file)->file_schema().columns()[i].field_id, (*layout)->columns()[i].field_id);
        EXPECT_EQ((*file)->file_schema().columns()[i].type, (*layout)->columns()[i].type);
    }

    // Typed values: every leaf a row had keeps its entries (promoted values render the same
    // numbers); a leaf its file did not have is null in every entry, following the levels of its
    // siblings (one null color per item of a v1 row).
    auto after = typed_view("orders");
    ASSERT_EQ(after.size(), 9u);
    auto id_of = [&](const char* path) {
        auto c = (*layout)->column_by_path(path);
        EXPECT_TRUE(c.has_value()) << path;
        return *(*layout)->columns()[*c].field_id;
    };
    const int32_t qty = id_of("data.qty"), color = id_of("data.items.list.element.color"),
                  sku = id_of("data.items.list.element.sku"), amount = id_of("data.amount"),
                  n = id_of("data.items.list.element.n"), country = id_of("data.country");
    for (auto& [off, leaves] : after) {
        ASSERT_EQ(leaves.size(), (*layout)->columns().size() - parquet::message_col::count) << off;
        for (auto& [leaf, entries] : leaves) {
            auto was = typed_before[off].find(leaf);
            if (was != typed_before[off].end()) {
                EXPECT_EQ(entries, was->second) << "offset " << off << " leaf " << leaf;
            } else {
                EXPECT_EQ(entries.find('='), std::string::npos) << "offset " << off << " leaf " << leaf << ": " << entries;
            }
        }
    }
    // Spelled out: raw rows and the tombstone have a null `data`; a v1 row's new fields are null
    // inside a defined `data` (and inside each defined list element).
    for (int64_t off : {0, 1, 4}) EXPECT_EQ(after[off][country], "0/0") << off;
    EXPECT_EQ(after[2][country], "2/0=FR");
    EXPECT_EQ(after[2][qty], "1/0");
    EXPECT_EQ(after[2][sku], "5/0=a,5/1=b");
    EXPECT_EQ(after[2][color], "4/0,4/1");
    EXPECT_EQ(after[2][n], "5/0=1,5/1=2");
    EXPECT_EQ(after[2][amount], "2/0=12345");
    EXPECT_EQ(after[3][sku], "2/0"); // an empty list
    EXPECT_EQ(after[3][color], "2/0");
    EXPECT_EQ(after[3][amount], "2/0=-250");
    EXPECT_EQ(after[5][qty], "2/0=7");
    EXPECT_EQ(after[6][qty], "1/0");
    EXPECT_EQ(after[7][qty], fmt::format("2/0={}", int64_t(1) << 40));
    EXPECT_EQ(after[7][amount], "2/0=-99999");
    EXPECT_EQ(after[8][country], "2/0=IT");

    // Positions carried forward; a second pass finds nothing to do.
    auto again = compact(*_lake, "orders", o);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->groups, 0u);
}

TEST_F(typed_maintenance_test, dead_letter_table_is_compacted_expired_and_cleaned_with_the_main_table) {
    using typed::encode;
    using typed::order;
    auto id1 = register_schema(typed::v1, "v1-value");
    // Three offloads, each with dead letters: three dead-letter files and snapshots.
    for (int64_t i = 0; i < 3; ++i)
        ASSERT_TRUE(append_values({encode(id1, 1, order{i, "FR", {}, 100, {}}), std::string("\x07" "bad", 4),
                                   typed::framed(id1 + 1000, "x")},
                                  i * 3));
    auto main_before = records("orders");
    auto dlq_before = records("orders_dlq");
    ASSERT_EQ(dlq_before.size(), 6u);
    ASSERT_EQ(live_uris("orders_dlq").size(), 3u);
    const iceberg::table_ident dlq{"floe", "orders_dlq"};
    ASSERT_GE(iceberg::load_table(*_cat, *_io, dlq)->metadata.snapshots.size(), 3u);
    // A file nothing references in the dead letters' location (an append that died).
    auto orphan = _dir / "warehouse" / "floe" / "orders_dlq" / "data" / "stream_key=orders-0" / "segment-0-dead.parquet";
    { std::ofstream(orphan) << "dead"; }
    // Reasons per offset before (what the rows say must survive the rewrite).
    auto reasons = [&] {
        std::map<int64_t, std::string> out;
        for (auto& uri : live_uris("orders_dlq"))
            for (auto& [o, leaves] : typed::typed_rows(uri))
                out[o] = leaves[iceberg::field_ids::error_reason] + "|" + leaves[iceberg::field_ids::schema_id];
        return out;
    };
    auto reasons_before = reasons();

    run_options ro;
    ro.expiry.max_snapshot_age_ms = 0;
    ro.expiry.min_snapshots = 1;
    ro.orphan_older_than_ms = 0;
    std::vector<step_outcome> steps;
    auto r = run_table(*_lake, "orders", ro, &steps);
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(r->dead_letters.has_value());
    std::set<std::string> kinds;
    for (auto& s : steps) kinds.insert(s.kind);
    EXPECT_EQ(kinds, (std::set<std::string>{"compact", "manifests", "expire", "orphans", "dlq-compact", "dlq-manifests",
                                            "dlq-expire", "dlq-orphans"}));
    EXPECT_EQ(r->dead_letters->compaction.files_rewritten, 3u);
    EXPECT_EQ(r->dead_letters->compaction.files_written, 1u);
    EXPECT_GE(r->dead_letters->expiry.snapshots_expired, 3u);
    EXPECT_EQ(r->dead_letters->orphans.orphans, 1u);
    EXPECT_EQ(r->dead_letters->health.data_files, 1u);
    EXPECT_EQ(r->dead_letters->health.snapshots, 1u);

    // Nothing lost in either table; the rows keep their reasons; the orphan is gone, and so is
    // every file the current metadata does not reference.
    EXPECT_EQ(records("orders"), main_before);
    EXPECT_EQ(records("orders_dlq"), dlq_before);
    EXPECT_EQ(reasons(), reasons_before);
    EXPECT_EQ(reasons_before.at(1).substr(0, 15), "0/0=bad-magic-b"); // sanity: the rendering holds the reason
    EXPECT_FALSE(fs::exists(orphan));
    auto n = lake::dead_letter_records(*_lake, "orders");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 6);
    auto loaded = iceberg::load_table(*_cat, *_io, dlq);
    ASSERT_TRUE(loaded) << loaded.error();
    auto refs = referenced_by(*_io, loaded->metadata, loaded->metadata_location);
    ASSERT_TRUE(refs) << refs.error();
    for (auto& e : fs::recursive_directory_iterator(_dir / "warehouse" / "floe" / "orders_dlq"))
        if (e.is_regular_file()) {
            EXPECT_TRUE(refs->contains(iceberg::file_uri(e.path().string()))) << e.path();
        }
}

} // namespace
} // namespace floe::maintenance
