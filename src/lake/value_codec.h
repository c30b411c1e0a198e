#pragma once

// Turns a typed topic's values into the columns of its Iceberg table, one record at a time:
// finds the record's schema (the id in Confluent's wire format, or the subject's latest
// version), keeps the table's Iceberg schema in step with the registry's versions (new optional
// columns, promotions; never a rewrite), and says why a value cannot become a typed row (the
// dead-letter table's error_reason). Used by the lake's typed append; one thread drives it.
//
// Where the decoded fields go: one optional struct column `data` after Floe's ten columns
// (DESIGN.md, "Typed tables"), so Floe's columns, names and field ids never depend on what a
// producer calls its fields.

#include "base/result.h"
#include "format/parquet/schema.h"
#include "format/parquet/writer.h"
#include "iceberg/schema.h"
#include "lake/table_writer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace floe::schema {
class registry_client;
}

namespace floe::lake {

/// The struct column holding a typed table's decoded value.
inline constexpr std::string_view data_column = "data";

/// Why a value went to the dead-letter table.
struct dead_letter {
    std::string reason; ///< bad-magic-byte, unknown-schema-id, decode-error, incompatible-schema, ...
    std::string detail;
    std::optional<int32_t> schema_id;
};

class value_codec {
public:
    /// `table` is the table's current Iceberg schema (Floe's columns, and `data` once typed).
    static result<std::unique_ptr<value_codec>> make(schema::registry_client& registry, value_decoding how,
                                                     const iceberg::schema& table, int32_t last_column_id);
    virtual ~value_codec() = default;

    /// Decodes `value` (nullopt: a tombstone, whose typed columns are null). nullopt: the value
    /// is ready for write(); a dead_letter: it is not (nothing was written). Errors are
    /// transient (the registry unreachable): the append fails and is retried, nothing goes to
    /// the dead-letter table for them.
    virtual result<std::optional<dead_letter>> decode(std::optional<std::string_view> value) = 0;
    /// Writes the value decode() accepted into the columns after Floe's eleven leaves.
    virtual void write(parquet::file_writer& w) = 0;

    /// The table schema the accepted values need (the current one, or one evolved from it by
    /// this append: its schema_id is then new), its last column id, and the file layout for it.
    virtual const iceberg::schema& table_schema() const = 0;
    virtual int32_t last_column_id() const = 0;
    virtual bool evolved() const = 0;
    virtual const std::shared_ptr<const parquet::schema>& layout() const = 0;
    /// Bumped each time the layout changes (files must be rolled).
    virtual uint64_t layout_version() const = 0;
};

/// Parquet schema of a dead-letter table's files (floe_dlq_table_schema()).
const std::shared_ptr<const parquet::schema>& dlq_layout();

} // namespace floe::lake
