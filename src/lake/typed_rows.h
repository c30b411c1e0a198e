#pragma once
// Typed rows: record values decoded straight into the Parquet column writers of a typed table.
//
// - parquet_node(s)(): the Parquet schema of Iceberg columns (struct, list, map at any depth;
//   every primitive with the physical and logical type the Iceberg spec prescribes; the field
//   id on every node, list element and map key/value included).
// - parse_confluent(): Confluent's wire format (magic byte 0, 4-byte big-endian schema id).
// - avro_row_plan: one Avro writer schema compiled against the table's columns (which leaf
//   column each Avro node writes, with which definition/repetition levels and conversion),
//   so decoding walks the writer schema once per record with no per-record tree of objects.
// - typed_decoder: plans cached by schema id, fetched from the registry on first sight.
//
// Validate, then write. A record is first walked over its bytes without writing (every length,
// count, varint, enum index, UTF-8 string, decimal width and uuid text is checked, every read
// bounded by the end of the value, nesting bounded); only a record that passes is walked
// again to write its entries. The first pass costs far less than the second (no stores, no
// statistics), and no column ever holds part of a bad record, which per-column rollback would
// need otherwise. The second pass repeats the checks' cheap branches and cannot fail.
//
// Writer values become the table's types: int → long, float → double, decimal of a smaller
// precision and the same scale (a different scale is a decode error: rescaling would invent or
// lose digits), timestamp-millis and time-millis → microseconds, enum index → symbol, uuid text
// → 16 bytes, decimal bytes/fixed → INT32 / INT64 / FIXED as the table's precision says (sign
// extended; a value wider than the column is a decode error). Table columns the writer schema
// does not have get nulls. Protobuf and JSON values have their own plans beside avro_row_plan
// (typed_rows_protobuf.h, typed_rows_json.h), all three behind row_plan.
//
// Threads: plans are immutable and may be shared; a typed_decoder is driven by one thread (the
// one appending to the file).

#include "base/result.h"
#include "format/parquet/schema.h"
#include "format/parquet/writer.h"
#include "iceberg/schema.h"
#include "schema/avro_schema.h"
#include "schema/registry.h"

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace floe::lake {

/// The Parquet node of one Iceberg field (optional unless `required`), field ids included.
parquet::schema_node parquet_node(const iceberg::nested_field& f);
std::vector<parquet::schema_node> parquet_nodes(const std::vector<iceberg::nested_field>& fields);
/// The message group ("table") holding every field of `s`, in order.
parquet::schema_node parquet_schema_node(const iceberg::schema& s);
/// Leaf columns a type takes in Parquet (a primitive 1, a map key + value's, ...).
size_t leaf_count(const iceberg::type& t);

/// Why a record cannot become a typed row (the dead-letter table's `error_reason`).
namespace decode_reason {
inline constexpr std::string_view bad_magic_byte = "bad-magic-byte";
inline constexpr std::string_view unknown_schema_id = "unknown-schema-id";
inline constexpr std::string_view decode_error = "decode-error";
inline constexpr std::string_view incompatible_schema = "incompatible-schema";
inline constexpr std::string_view unsupported_schema_type = "unsupported-schema-type";
} // namespace decode_reason

struct decode_failure {
    std::string_view reason;         ///< one of decode_reason
    std::string detail;              ///< what exactly, for error_detail and the log
    std::optional<int32_t> schema_id;
};

/// A value in Confluent's wire format.
struct wire_value {
    int32_t schema_id = 0;
    std::string_view payload; ///< what follows the 5-byte header
};
std::expected<wire_value, decode_failure> parse_confluent(std::string_view value);

/// A writer schema compiled against table columns: the shape every format's plan has
/// (avro_row_plan here, protobuf_row_plan and json_row_plan beside it). Immutable; shared.
class row_plan {
public:
    virtual ~row_plan() = default;
    /// First pass: nullopt when `payload` is exactly one valid record, else what is wrong.
    virtual std::optional<std::string> validate(std::string_view payload) const = 0;
    /// Second pass, for a payload validate() accepted: one row's entries into the typed
    /// columns (the caller adds the other columns' entries and calls end_row()).
    virtual void write(std::string_view payload, parquet::file_writer& w) const = 0;
    /// validate() then write(); nothing is written on failure.
    std::optional<std::string> decode(std::string_view payload, parquet::file_writer& w) const {
        if (auto e = validate(payload)) return e;
        write(payload, w);
        return std::nullopt;
    }
};

/// An Avro writer schema compiled against table columns. Immutable.
class avro_row_plan final : public row_plan {
public:
    struct op;
    /// `root` must be a record; `table_fields` are the typed columns (ids set) whose leaves
    /// are file columns first_column, first_column+1, ... in depth-first order. A writer type
    /// the columns cannot hold is `incompatible-schema`; a decimal scale that differs from the
    /// column's is `decode-error`.
    static std::expected<std::shared_ptr<const avro_row_plan>, decode_failure>
    make(const schema::avro_node& root, const std::vector<iceberg::nested_field>& table_fields,
         size_t first_column);
    ~avro_row_plan() override;

    std::optional<std::string> validate(std::string_view payload) const override;
    void write(std::string_view payload, parquet::file_writer& w) const override;

    size_t first_column() const noexcept { return _first_column; }
    size_t num_columns() const noexcept { return _num_columns; }

private:
    avro_row_plan() = default;
    std::unique_ptr<op> _root;
    size_t _first_column = 0, _num_columns = 0;
};

/// The outcome of decoding one value: its schema id (when the header was readable) and, when
/// the record cannot be a typed row, why (nothing was written then).
struct decode_status {
    std::optional<int32_t> schema_id;
    std::optional<decode_failure> failure;
    bool ok() const noexcept { return !failure; }
};

/// Decodes Confluent-framed values into a table's typed columns, with plans cached by schema
/// id. Holds `registry` by reference: it must outlive the decoder. Make a new decoder when the
/// table schema changes (plans depend on it).
class typed_decoder {
public:
    typed_decoder(schema::registry_client& registry, std::vector<iceberg::nested_field> table_fields,
                  size_t first_column);

    /// Decodes one value into the typed columns. An error result is the registry's, other than
    /// not-found (unavailable, timeout...): retry later, nothing was written and nothing cached.
    result<decode_status> decode(std::string_view value, parquet::file_writer& w);
    /// A row with every typed column null (a tombstone, or a row written for another reason).
    void write_nulls(parquet::file_writer& w) const;

    const std::vector<iceberg::nested_field>& table_fields() const noexcept { return _fields; }
    size_t cached_plans() const noexcept { return _plans.size(); }

private:
    struct entry {
        std::shared_ptr<const avro_row_plan> plan;
        std::optional<decode_failure> failure; ///< a schema that can never decode (cached too)
    };
    schema::registry_client& _registry;
    std::vector<iceberg::nested_field> _fields;
    size_t _first_column;
    size_t _num_columns;
    std::unordered_map<int32_t, entry> _plans;
};

} // namespace floe::lake
