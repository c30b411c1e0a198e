// column_copy against an independent shredder: rows written under an old layout (the test
// helper's Dremel shredder), copied into a new layout by field id, must read back with exactly
// the entries the shredder gives for the same rows written under the new layout directly
// (new fields null, promoted values widened, required made optional).
#include "lake/column_copy.h"

#include "format/parquet/tests/typed_rows.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace floe::lake {
namespace {

namespace fs = std::filesystem;
using parquet::repetition;
using parquet::testing::tval;
using pt = parquet::physical_type;

parquet::schema make(std::vector<parquet::schema_node> fields) {
    auto s = parquet::schema::make(parquet::group_node("table", std::nullopt, repetition::required, std::move(fields)));
    EXPECT_TRUE(s) << s.error();
    return std::move(*s);
}

// Old: data { a required int32; l list<element required { x long }>; m map<string, { p int }> }
parquet::schema old_layout() {
    using parquet::group_node, parquet::leaf_node;
    auto elem = group_node("element", 22, repetition::required, {leaf_node("x", 23, repetition::optional, pt::int64)});
    auto value = group_node("value", 26, repetition::optional, {leaf_node("p", 27, repetition::optional, pt::int32)});
    return make({group_node("data", 19, repetition::optional,
                            {leaf_node("a", 20, repetition::required, pt::int32),
                             parquet::list_node("l", 21, repetition::optional, elem),
                             parquet::map_node("m", 24, repetition::optional,
                                               leaf_node("key", 25, repetition::required, pt::byte_array,
                                                         parquet::logical_type::string),
                                               value)})});
}

// New: a optional long; element optional with a new y; map value gains q, p becomes long; z new.
parquet::schema new_layout() {
    using parquet::group_node, parquet::leaf_node;
    auto elem = group_node("element", 22, repetition::optional,
                           {leaf_node("x", 23, repetition::optional, pt::int64),
                            leaf_node("y", 28, repetition::optional, pt::byte_array, parquet::logical_type::string)});
    auto value = group_node("value", 26, repetition::optional,
                            {leaf_node("p", 27, repetition::optional, pt::int64),
                             leaf_node("q", 29, repetition::optional, pt::double_)});
    return make({group_node("data", 19, repetition::optional,
                            {leaf_node("a", 20, repetition::optional, pt::int64),
                             parquet::list_node("l", 21, repetition::optional, elem),
                             parquet::map_node("m", 24, repetition::optional,
                                               leaf_node("key", 25, repetition::required, pt::byte_array,
                                                         parquet::logical_type::string),
                                               value),
                             leaf_node("z", 30, repetition::optional, pt::int32)})});
}

tval I(int64_t v) { return tval::integer(v); }
tval S(std::string s) { return tval::bytes(std::move(s)); }
tval N() { return tval::null(); }
tval G(std::vector<tval> c) { return tval::group(std::move(c)); }

class column_copy_test : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path() / fmt::format("floe-column-copy-{}", ::getpid());
        fs::create_directories(_dir);
    }
    void TearDown() override { fs::remove_all(_dir); }

    /// Writes `rows` under `s` into `name`; returns the shredder's log (the entries given).
    std::vector<parquet::testing::column_entries> write(const std::string& name, const parquet::schema& s,
                                                        const std::vector<tval>& rows) {
        auto sink = parquet::open_file_sink((_dir / name).string());
        EXPECT_TRUE(sink) << sink.error();
        auto w = parquet::file_writer::open(std::move(*sink), s, {});
        EXPECT_TRUE(w) << w.error();
        parquet::testing::shredder sh(**w, s);
        for (auto& r : rows) EXPECT_TRUE(sh.write_row(r));
        EXPECT_TRUE((*w)->close());
        return sh.log();
    }
    fs::path _dir;
};

TEST_F(column_copy_test, copies_by_field_id_into_a_newer_layout_with_the_levels_an_independent_shredder_gives) {
    // Each row in both shapes: old (a, l, m) and new (a, l with y, m with q, z).
    std::vector<tval> old_rows, new_rows;
    auto add = [&](tval o, tval n) {
        old_rows.push_back(G({std::move(o)}));
        new_rows.push_back(G({std::move(n)}));
    };
    add(N(), N()); // data null
    add(G({I(1), N(), N()}), G({I(1), N(), N(), N()}));
    add(G({I(-7), tval::list({}), tval::map({})}), G({I(-7), tval::list({}), tval::map({}), N()}));
    add(G({I(2), tval::list({G({I(10)}), G({N()}), G({I(12)})}),
           tval::map({{S("k1"), G({I(5)})}, {S("k2"), N()}, {S("k3"), G({N()})}})}),
        G({I(2), tval::list({G({I(10), N()}), G({N(), N()}), G({I(12), N()})}),
           tval::map({{S("k1"), G({I(5), N()})}, {S("k2"), N()}, {S("k3"), G({N(), N()})}}), N()}));
    add(G({I(int32_t(-2147483648LL)), tval::list({G({I(int64_t(1) << 50)})}), N()}),
        G({I(int32_t(-2147483648LL)), tval::list({G({I(int64_t(1) << 50), N()})}), N(), N()}));

    auto from = old_layout();
    auto to = new_layout();
    write("old.parquet", from, old_rows);
    auto want = write("want.parquet", to, new_rows);

    auto r = parquet::file_reader::open_file((_dir / "old.parquet").string());
    ASSERT_TRUE(r) << r.error();
    auto copy = column_copy::make((*r)->file_schema(), to, 0);
    ASSERT_TRUE(copy) << copy.error();
    auto sink = parquet::open_file_sink((_dir / "copied.parquet").string());
    ASSERT_TRUE(sink) << sink.error();
    auto w = parquet::file_writer::open(std::move(*sink), to, {});
    ASSERT_TRUE(w) << w.error();
    for (size_t rg = 0; rg < (*r)->num_row_groups(); ++rg) {
        ASSERT_TRUE(copy->load(**r, rg));
        for (int64_t i = 0; i < (*r)->row_group_rows(rg); ++i) {
            auto ok = copy->write_row(**w);
            ASSERT_TRUE(ok) << ok.error();
            ASSERT_TRUE((*w)->end_row());
        }
    }
    ASSERT_TRUE((*w)->close());

    auto back = parquet::file_reader::open_file((_dir / "copied.parquet").string());
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ((*back)->num_row_groups(), 1u);
    const auto& cols = (*back)->file_schema().columns();
    ASSERT_EQ(cols.size(), want.size());
    for (size_t c = 0; c < cols.size(); ++c) {
        auto data = (*back)->read_column(0, c);
        ASSERT_TRUE(data) << data.error();
        auto got = parquet::testing::entries_of(cols[c], *data);
        EXPECT_EQ(got.def, want[c].def) << cols[c].dotted_path();
        EXPECT_EQ(got.rep, want[c].rep) << cols[c].dotted_path();
        EXPECT_EQ(got.values, want[c].values) << cols[c].dotted_path();
    }
}

TEST_F(column_copy_test, refuses_what_it_cannot_copy_without_loss) {
    using parquet::leaf_node;
    auto wrap = [](parquet::schema_node leaf) {
        return make({parquet::group_node("data", 19, repetition::optional, {std::move(leaf)})});
    };
    // A column the table does not have (it would be dropped).
    auto extra = make({parquet::group_node("data", 19, repetition::optional,
                                           {leaf_node("a", 20, repetition::optional, pt::int32),
                                            leaf_node("b", 21, repetition::optional, pt::int32)})});
    auto e = column_copy::make(extra, wrap(leaf_node("a", 20, repetition::optional, pt::int32)), 0);
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message().find("data.b"), std::string::npos) << e.error();
    // long -> int narrows; string -> int is no promotion; optional -> required loses nulls.
    EXPECT_FALSE(column_copy::make(wrap(leaf_node("a", 20, repetition::optional, pt::int64)),
                                   wrap(leaf_node("a", 20, repetition::optional, pt::int32)), 0));
    EXPECT_FALSE(column_copy::make(wrap(leaf_node("a", 20, repetition::optional, pt::byte_array,
                                                  parquet::logical_type::string)),
                                   wrap(leaf_node("a", 20, repetition::optional, pt::int32)), 0));
    EXPECT_FALSE(column_copy::make(wrap(leaf_node("a", 20, repetition::optional, pt::int32)),
                                   wrap(leaf_node("a", 20, repetition::required, pt::int32)), 0));
    // A new required column has no value to take.
    EXPECT_FALSE(column_copy::make(wrap(leaf_node("a", 20, repetition::optional, pt::int32)),
                                   make({parquet::group_node("data", 19, repetition::optional,
                                                             {leaf_node("a", 20, repetition::optional, pt::int32),
                                                              leaf_node("n", 22, repetition::required, pt::int32)})}),
                                   0));
}

} // namespace
} // namespace floe::lake
