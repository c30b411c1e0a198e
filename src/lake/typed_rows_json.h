#pragma once
// Typed rows from JSON values (JSON Schema in the registry): the schema compiled against the
// table's columns (shapes and types: schema/json_mapping.h), the UTF-8 JSON text decoded in
// two passes like avro_row_plan — validate everything, then write straight into the Parquet
// column writers; no JSON document is built.
//
// What a value must satisfy (else the record is a dead letter `decode-error` whose detail
// names the field: "field `customer.age`: expected integer, got string"):
//   - JSON text (RFC 8259): one value, whitespace around it only; strings valid UTF-8 with
//     valid escapes (a lone surrogate \ud800 is refused: Parquet strings are UTF-8);
//   - every value the schema types has that type: integer (a number with no fraction, or one
//     whose fraction is zero, within int64), number (finite double), boolean, string, object,
//     array; null only where the schema allows null ("type": ["null", ...], a null branch);
//   - "required" properties present; string "enum" lists respected;
//   - formats: date `YYYY-MM-DD`; date-time RFC 3339 with a zone (`Z` or `±hh:mm`), stored
//     as UTC microseconds (digits below a microsecond dropped); time `hh:mm:ss[.frac]` with
//     an optional zone, stored as the UTC time of day; uuid 36-character text;
//   - map objects (additionalProperties) with a key twice are refused (an Iceberg map cannot
//     hold a key twice); in a struct object a key seen twice: the last one wins, as most JSON
//     parsers do.
// Other keywords (pattern, minimum, minLength, ...) are not checked: they constrain values
// the columns can hold anyway; the registry's producers validate them.
// Properties the schema does not name are skipped (their JSON checked). A union (oneOf/anyOf,
// a type list) writes the first branch the value fits.
//
// Threads: plans are immutable and shared; scratch space is thread_local.

#include "lake/typed_rows.h"
#include "schema/json_schema.h"

#include <memory>
#include <string>
#include <vector>

namespace floe::lake {

class json_row_plan final : public row_plan {
public:
    struct op;
    /// The root object of `s` as the struct column `column` (typed tables' `data`), present
    /// (definition level 1) for every decoded value. `s` must outlive the plan.
    static std::expected<std::shared_ptr<const json_row_plan>, decode_failure>
    make_in_column(const schema::json_schema& s, const iceberg::nested_field& column,
                   size_t first_column);
    ~json_row_plan() override;

    std::optional<std::string> validate(std::string_view payload) const override;
    void write(std::string_view payload, parquet::file_writer& w) const override;

private:
    json_row_plan() = default;
    std::unique_ptr<op> _root;
};

} // namespace floe::lake
