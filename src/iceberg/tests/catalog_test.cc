#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/tests/test_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace floe;
using namespace floe::iceberg;

TEST(iceberg_sqlite_catalog, create_load_swap_conflict) {
    test_util::temp_dir d;
    auto c = sqlite_catalog::open(d.str() + "/catalog.db", "floe");
    ASSERT_TRUE(c) << c.error();
    auto& cat = **c;
    table_ident t{"floe", "orders"};
    EXPECT_FALSE(*cat.namespace_exists("floe"));
    ASSERT_TRUE(cat.create_namespace_if_missing("floe"));
    ASSERT_TRUE(cat.create_namespace_if_missing("floe"));
    EXPECT_TRUE(*cat.namespace_exists("floe"));
    EXPECT_FALSE(cat.metadata_location(t)->has_value());
    ASSERT_TRUE(cat.create_table(t, "file:///m1.json"));
    EXPECT_EQ(cat.create_table(t, "file:///other.json").error().code(), errc::already_exists);
    EXPECT_EQ(**cat.metadata_location(t), "file:///m1.json");
    ASSERT_TRUE(cat.swap(t, "file:///m1.json", "file:///m2.json"));
    auto stale = cat.swap(t, "file:///m1.json", "file:///m3.json");
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), errc::conflict);
    EXPECT_EQ(**cat.metadata_location(t), "file:///m2.json");
    EXPECT_EQ(*cat.list_tables("floe"), std::vector<std::string>{"orders"});

    // A second connection (another process would be the same) sees the same state.
    auto c2 = open_sql_catalog("sqlite://" + d.str() + "/catalog.db", "floe");
    ASSERT_TRUE(c2) << c2.error();
    EXPECT_EQ(*(*c2)->metadata_location(t), "file:///m2.json");
    auto other_catalog = sqlite_catalog::open(d.str() + "/catalog.db", "other");
    EXPECT_FALSE((*other_catalog)->metadata_location(t)->has_value());
}

// The lookup PyIceberg's SqlCatalog and Iceberg's JdbcCatalog do, as plain SQL on the file.
TEST(iceberg_sqlite_catalog, plain_sql_finds_what_pyiceberg_and_jdbc_look_up) {
    test_util::temp_dir d;
    auto path = d.str() + "/catalog.db";
    {
        auto c = sqlite_catalog::open(path, "floe");
        ASSERT_TRUE(c);
        ASSERT_TRUE((*c)->create_namespace_if_missing("floe"));
        ASSERT_TRUE((*c)->create_table({"floe", "orders_created_v1"}, "file:///wh/m1.json"));
        ASSERT_TRUE((*c)->swap({"floe", "orders_created_v1"}, "file:///wh/m1.json", "file:///wh/m2.json"));
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT catalog_name, table_namespace, table_name, metadata_location, "
                                 "previous_metadata_location, iceberg_type FROM iceberg_tables "
                                 "WHERE catalog_name = 'floe' AND table_namespace = 'floe' "
                                 "AND table_name = 'orders_created_v1'",
                                 -1, &s, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 3)), "file:///wh/m2.json");
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 4)), "file:///wh/m1.json");
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 5)), "TABLE");
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT property_value FROM iceberg_namespace_properties WHERE "
                                 "catalog_name = 'floe' AND namespace = 'floe' AND property_key = 'exists'",
                                 -1, &s, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "true");
    sqlite3_finalize(s);
    sqlite3_close(db);
}

// The cluster's lake id: the first value set wins for every connection; the filesystem catalog
// keeps none.
TEST(iceberg_sqlite_catalog, namespace_property_set_once_keeps_the_first_value) {
    test_util::temp_dir d;
    auto a = sqlite_catalog::open(d.str() + "/catalog.db", "floe");
    auto b = sqlite_catalog::open(d.str() + "/catalog.db", "floe");
    ASSERT_TRUE(a && b);
    auto first = (*a)->namespace_property_set_once("floe", "floe.lake-id", "id-a");
    ASSERT_TRUE(first) << first.error();
    EXPECT_EQ(*first, std::optional<std::string>("id-a"));
    auto second = (*b)->namespace_property_set_once("floe", "floe.lake-id", "id-b");
    ASSERT_TRUE(second) << second.error();
    EXPECT_EQ(*second, std::optional<std::string>("id-a"));
    EXPECT_TRUE(*(*b)->namespace_exists("floe"));
    // Another namespace, another catalog name: their own properties.
    EXPECT_EQ(*(*a)->namespace_property_set_once("other", "floe.lake-id", "id-c"), std::optional<std::string>("id-c"));
    auto other = sqlite_catalog::open(d.str() + "/catalog.db", "other");
    EXPECT_EQ(*(*other)->namespace_property_set_once("floe", "floe.lake-id", "id-d"), std::optional<std::string>("id-d"));

    auto io = std::make_shared<local_file_io>();
    filesystem_catalog fs(io, "file://" + d.str() + "/wh");
    auto none = fs.namespace_property_set_once("floe", "floe.lake-id", "id-e");
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
}
