#pragma once
// Copies the columns after Floe's eleven (a typed table's `data`, a dead-letter table's error
// columns) from a data file into a file of the table's current layout, row by row, matching
// leaves by Iceberg field id: what compaction needs to merge files written under several
// versions of a table schema into files of the current one.
//
// - A leaf the file has (same field ids along its path) is copied entry by entry: definition
//   levels are mapped through the path (a node that became optional adds a level), repetition
//   levels are kept, values are copied as they are or widened as Iceberg's promotions allow
//   (int → long, float → double, decimal of a larger precision and the same scale: INT32 /
//   INT64 / FIXED sign-extended to the new width).
// - A leaf the file does not have (a field added after the file was written) gets nulls: its
//   entries follow the levels of a leaf that shares its deepest existing ancestor (so a new
//   field inside a list's struct gets one null per element), cut at that ancestor's level; with
//   no such leaf (the whole column is newer than the file), one null per row.
// - A leaf of the file the layout does not have, a path whose shape differs, or a type change
//   outside the promotions is an error when the copy is planned: nothing is ever dropped.
//
// One thread drives a column_copy; it reads through the file_reader it is given.

#include "base/result.h"
#include "format/parquet/reader.h"
#include "format/parquet/schema.h"
#include "format/parquet/writer.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace floe::lake {

class column_copy {
public:
    /// Plans the copy of leaves first_leaf.. of `from` (a file's schema) into leaves
    /// first_leaf.. of `to` (the layout written). The first `first_leaf` leaves of both are
    /// Floe's message columns, copied by the caller.
    static result<column_copy> make(const parquet::schema& from, const parquet::schema& to,
                                    size_t first_leaf);

    /// Reads row group `rg`'s chunks of the copied leaves (the rows written next are its rows).
    result<void> load(parquet::file_reader& r, size_t rg);
    /// Writes the next row's entries into leaves first_leaf.. of `w` (the caller ends the row).
    /// The row must be one of the loaded row group's (checked: a chunk out of entries is an
    /// error, nothing is written past it).
    result<void> write_row(parquet::file_writer& w);

    /// Source leaves read per row group (for tests and sizing).
    size_t source_leaves() const noexcept { return _sources.size(); }

private:
    enum class conv : uint8_t {
        i32,
        i64,
        i32_to_i64,
        f32,
        f64,
        f32_to_f64,
        boolean,
        bytes,
        fixed,
        i32_to_fixed,
        i64_to_fixed,
        fixed_widen
    };
    struct plan {
        size_t dest = 0;              ///< leaf of `to`
        int src = -1;                 ///< index into _sources; -1: one null per row
        bool fill = false;            ///< nulls following src's levels (a field the file lacks)
        std::vector<int16_t> def_map; ///< src definition level -> dest definition level
        int16_t max_rep_kept =
            0; ///< fill: entries repeating deeper than the shared ancestor are skipped
        int16_t src_max_def = 0;
        conv how = conv::bytes;
        int32_t width = 0;           ///< fixed outputs: bytes
        size_t entry = 0, value = 0; ///< cursors into the source chunk
    };
    std::vector<size_t> _sources;              ///< leaves of `from` read
    std::vector<parquet::column_data> _chunks; ///< per source, the loaded row group
    std::vector<plan> _plans;
};

} // namespace floe::lake
