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
/// The struct column holding the decoded key (floe.iceberg.key-mode not raw), beside `data`.
inline constexpr std::string_view key_data_column = "key_data";

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

    /// Decodes `value` into `data` (when values are typed) and `key` into `key_data` (when
    /// keys are: value_decoding::key_how); nullopt input is a null struct (a tombstone, a
    /// record without key). nullopt: the record is ready for write(); a dead_letter: it is not
    /// (nothing was written; a key's detail starts with "key: "). Errors are transient (the
    /// registry unreachable): the append fails and is retried, nothing goes to the dead-letter
    /// table for them.
    virtual result<std::optional<dead_letter>> decode(std::optional<std::string_view> value,
                                                      std::optional<std::string_view> key) = 0;
    /// Writes the record decode() accepted into the columns after Floe's eleven leaves.
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
/// The Parquet layout of files of a table whose current Iceberg schema is `s`: Floe's message
/// columns, then each further top-level field (a typed table's `data`); a dead-letter table's
/// schema (it has `error_reason`) is dlq_layout(). What offload writes for that schema, so
/// compaction writes the same files.
result<std::shared_ptr<const parquet::schema>> table_layout(const iceberg::schema& s);

} // namespace floe::lake
