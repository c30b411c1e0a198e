// The Glue catalog against moto_server (Glue, STS and S3 with signature checking on), started by
// tests/s3/moto_env.py: tables as Iceberg's GlueCatalog keeps them, optimistic commits refused
// when the table moved on (two writers), the one-catalog-per-location rule with a second
// catalog and adopt in both directions.
#include "aws/glue.h"
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/glue_catalog.h"
#include "iceberg/s3_file_io.h"
#include "iceberg/table.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

using namespace floe;
using namespace floe::iceberg;
using avro::datum;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::shared_ptr<aws::credentials_provider> user() {
    return std::make_shared<aws::static_credentials>(
        aws::credentials{env("S3TEST_ACCESS_KEY_ID"), env("S3TEST_SECRET_ACCESS_KEY"), ""});
}

std::shared_ptr<aws::glue_client> glue() {
    aws::service_options o;
    o.endpoint = env("S3TEST_ENDPOINT");
    o.region = env("S3TEST_REGION");
    o.credentials = user();
    return std::make_shared<aws::glue_client>(o, "");
}

std::shared_ptr<s3_file_io> s3() {
    aws::s3_options o;
    o.endpoint = env("S3TEST_ENDPOINT");
    o.region = env("S3TEST_REGION");
    o.path_style = true;
    o.credentials = user();
    return std::make_shared<s3_file_io>(o);
}

data_file make_file(const std::string& location, int64_t first, int64_t n) {
    data_file f;
    f.file_path = fmt::format("{}/data/stream_key=t-0/segment-{}-{}.parquet", location, first,
                              uuid::random().to_string());
    f.partition = {datum::string("t-0")};
    f.record_count = n;
    f.file_size_in_bytes = 100 * n;
    f.value_counts = {{field_ids::offset, n}};
    f.lower_bounds = {{field_ids::offset, serialize_long(first)}};
    f.upper_bounds = {{field_ids::offset, serialize_long(first + n - 1)}};
    return f;
}

class GlueCatalog : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(env("S3TEST_ENDPOINT").empty()) << "run through tests/s3/moto_env.py";
        ns = "floe_" + uuid::random().to_string().substr(0, 8);
        t = {ns, "orders_created"};
        location = fmt::format("s3://{}/{}/{}/orders_created", env("S3TEST_BUCKET"), ns, ns);
    }
    std::shared_ptr<s3_file_io> io = s3();
    glue_catalog cat{glue()};
    std::string ns, location;
    table_ident t;
};

TEST_F(GlueCatalog, TablesAsIcebergsGlueCatalogKeepsThem) {
    ASSERT_TRUE(cat.create_namespace_if_missing(ns));
    ASSERT_TRUE(cat.create_namespace_if_missing(ns)) << "creating an existing database succeeds";
    EXPECT_TRUE(cat.namespace_exists(ns).value());
    EXPECT_FALSE(cat.namespace_exists(ns + "_none").value());
    EXPECT_FALSE(cat.metadata_location(t).value().has_value());
    auto created = create_table_if_missing(cat, *io, t, location);
    ASSERT_TRUE(created) << created.error();
    auto a = append_files(cat, *io, t, {{make_file(location, 0, 10)}, nullptr});
    ASSERT_TRUE(a) << a.error();
    auto b = append_files(cat, *io, t, {{make_file(location, 10, 10)}, nullptr});
    ASSERT_TRUE(b) << b.error();
    // The Glue table itself, as GetTable returns it.
    auto g = glue()->get_table(ns, t.name).value();
    ASSERT_TRUE(g);
    EXPECT_EQ(g->parameters["table_type"], "ICEBERG");
    EXPECT_EQ(g->parameters["metadata_location"], b->metadata_location);
    EXPECT_EQ(g->parameters["previous_metadata_location"], a->metadata_location);
    EXPECT_EQ(g->raw.value("TableType", ""), "EXTERNAL_TABLE");
    EXPECT_EQ(g->location, location);
    EXPECT_EQ(cat.list_tables(ns).value(), std::vector<std::string>{"orders_created"});
    auto loaded = load_table(cat, *io, t, nullptr);
    ASSERT_TRUE(loaded) << loaded.error();
    EXPECT_EQ(loaded->metadata_location, b->metadata_location);
    EXPECT_EQ(loaded->metadata.snapshots.size(), 2u);
    // The path copy for path-based readers is there too.
    EXPECT_TRUE(io->exists(location + "/metadata/v3.metadata.json").value());
    // A swap from a stale base is refused and changes nothing.
    auto stale = cat.swap(t, a->metadata_location, location + "/metadata/00009-x.metadata.json");
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), errc::conflict) << stale.error();
    EXPECT_EQ(cat.metadata_location(t).value(), b->metadata_location);
    // A Glue table that is not Iceberg's is named as such.
    ASSERT_TRUE(glue()->create_table(ns, {{"Name", "plain"}, {"TableType", "EXTERNAL_TABLE"}}));
    auto plain = cat.metadata_location({ns, "plain"});
    ASSERT_FALSE(plain);
    EXPECT_NE(plain.error().message().find("not an Iceberg table"), std::string::npos) << plain.error();
    EXPECT_EQ(cat.list_tables(ns).value(), std::vector<std::string>{"orders_created"});
}

// Two writers (own catalog objects, no shared cache) on one table: B prepares its commit on the
// base, A commits meanwhile, B's swap is refused by the metadata_location check (moto does not
// enforce UpdateTable's VersionId), B reloads and commits on top of A. Both land, once each.
TEST_F(GlueCatalog, ConcurrentCommitIsRefusedAndRetried) {
    ASSERT_TRUE(cat.create_namespace_if_missing(ns));
    ASSERT_TRUE(create_table_if_missing(cat, *io, t, location));
    ASSERT_TRUE(append_files(cat, *io, t, {{make_file(location, 0, 5)}, nullptr}));
    glue_catalog cat_b{glue()};
    std::mutex mu;
    std::condition_variable cv;
    bool b_prepared = false, a_done = false;
    int b_swaps = 0;
    commit_options ob;
    ob.cache = nullptr;
    ob.on_step = [&](std::string_view step) {
        if (step != "metadata") return;
        std::unique_lock l(mu);
        if (++b_swaps > 1) return;
        b_prepared = true;
        cv.notify_all();
        cv.wait_for(l, std::chrono::seconds(30), [&] { return a_done; });
    };
    result<commit_result> rb;
    std::thread writer_b([&] { rb = append_files(cat_b, *io, t, {{make_file(location, 5, 5)}, nullptr}, ob); });
    {
        std::unique_lock l(mu);
        ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return b_prepared; }));
    }
    commit_options oa;
    oa.cache = nullptr;
    auto ra = append_files(cat, *io, t, {{make_file(location, 10, 5)}, nullptr}, oa);
    {
        std::lock_guard l(mu);
        a_done = true;
    }
    cv.notify_all();
    writer_b.join();
    ASSERT_TRUE(ra) << ra.error();
    ASSERT_TRUE(rb) << rb.error();
    EXPECT_EQ(ra->attempts, 1);
    EXPECT_EQ(rb->attempts, 2) << "B's first swap was refused, the second landed";
    auto loaded = load_table(cat, *io, t, nullptr).value();
    EXPECT_EQ(loaded.metadata_location, rb->metadata_location);
    EXPECT_EQ(loaded.metadata.snapshots.size(), 3u);
    auto files = live_files(*io, loaded.metadata).value();
    EXPECT_EQ(files.size(), 3u) << "every file once";
    // The parent chain runs through all three snapshots.
    auto* s = loaded.metadata.current_snapshot();
    int chain = 0;
    while (s) {
        ++chain;
        s = s->parent_snapshot_id ? loaded.metadata.find_snapshot(*s->parent_snapshot_id) : nullptr;
    }
    EXPECT_EQ(chain, 3);
}

// One catalog per location: a SQL catalog finds Glue's metadata and refuses the table until
// it is adopted; then Glue refuses it until adopted back.
TEST_F(GlueCatalog, OtherCatalogRefusedUntilAdopted) {
    ASSERT_TRUE(cat.create_namespace_if_missing(ns));
    ASSERT_TRUE(create_table_if_missing(cat, *io, t, location));
    ASSERT_TRUE(append_files(cat, *io, t, {{make_file(location, 0, 5)}, nullptr}));
    auto dir = std::filesystem::temp_directory_path() / ("floe-glue-" + uuid::random().to_string());
    std::filesystem::create_directories(dir);
    auto sql = open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe").value();
    auto refused = create_table_if_missing(*sql, *io, t, location);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("floe tables adopt"), std::string::npos) << refused.error();
    auto adopted = adopt_table(*sql, *io, t, location);
    ASSERT_TRUE(adopted) << adopted.error();
    ASSERT_TRUE(append_files(*sql, *io, t, {{make_file(location, 5, 5)}, nullptr}));
    auto glue_refused = append_files(cat, *io, t, {{make_file(location, 10, 5)}, nullptr});
    ASSERT_FALSE(glue_refused) << "Glue still points at the old version: the location moved on";
    auto back = adopt_table(cat, *io, t, location);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(cat.metadata_location(t).value(), back.value());
    ASSERT_TRUE(append_files(cat, *io, t, {{make_file(location, 10, 5)}, nullptr}));
    auto loaded = load_table(cat, *io, t, nullptr).value();
    EXPECT_EQ(live_files(*io, loaded.metadata).value().size(), 3u);
    std::filesystem::remove_all(dir);
}

} // namespace
