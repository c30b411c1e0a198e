#pragma once
// Test helper shared by the typed-row tests: a Parquet file of typed columns written through a
// decoder, then every column's entries (levels and values) read back with Floe's reader.

#include "format/parquet/io.h"
#include "format/parquet/reader.h"
#include "format/parquet/tests/typed_rows.h"
#include "format/parquet/writer.h"
#include "lake/typed_rows.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace floe::lake {

using parquet::testing::column_entries;

// Writes rows through the decoder into a file, then reads every column back.
struct roundtrip {
    std::filesystem::path path;
    parquet::schema pq;
    std::unique_ptr<parquet::file_writer> w;
    explicit roundtrip(const std::vector<iceberg::nested_field>& fields) {
        path = std::filesystem::temp_directory_path()
               / fmt::format("typed_rows_test_{}_{}.parquet", ::getpid(), counter()++);
        auto s = parquet::schema::make(parquet::group_node(
            "table", std::nullopt, parquet::repetition::required, parquet_nodes(fields)));
        EXPECT_TRUE(s) << s.error().message();
        pq = *s;
        auto sink = parquet::open_file_sink(path.string());
        EXPECT_TRUE(sink) << sink.error().message();
        auto fw = parquet::file_writer::open(std::move(*sink), pq, {});
        EXPECT_TRUE(fw);
        w = std::move(*fw);
    }
    ~roundtrip() { std::filesystem::remove(path); }
    static int& counter() {
        static int c = 0;
        return c;
    }
    std::vector<column_entries> finish() {
        auto sum = w->close();
        EXPECT_TRUE(sum) << sum.error().message();
        auto r = parquet::file_reader::open_file(path.string());
        EXPECT_TRUE(r) << r.error().message();
        std::vector<column_entries> out(pq.columns().size());
        for (size_t rg = 0; rg < (*r)->num_row_groups(); ++rg)
            for (size_t c = 0; c < out.size(); ++c) {
                auto d = (*r)->read_column(rg, c);
                EXPECT_TRUE(d) << d.error().message();
                auto e = parquet::testing::entries_of((*r)->file_schema().columns()[c], *d);
                out[c].def.insert(out[c].def.end(), e.def.begin(), e.def.end());
                out[c].rep.insert(out[c].rep.end(), e.rep.begin(), e.rep.end());
                out[c].values.insert(out[c].values.end(), e.values.begin(), e.values.end());
            }
        return out;
    }
    size_t col(std::string_view dotted) const {
        auto c = pq.column_by_path(dotted);
        EXPECT_TRUE(c) << dotted;
        return c.value_or(0);
    }
};

inline std::string le32(int32_t v) {
    return std::string(reinterpret_cast<const char*>(&v), 4);
}
inline std::string le64(int64_t v) {
    return std::string(reinterpret_cast<const char*>(&v), 8);
}

} // namespace floe::lake
