#pragma once
// Typed rows from Protobuf values: a message descriptor compiled against the table's columns
// (the mapping is schema/protobuf_mapping.h), decoded in two passes like avro_row_plan —
// validate every byte, then write straight into the Parquet column writers; no message object
// is built.
//
// Protobuf lets a field's occurrences come in any order, repeat, and interleave, so a message
// is walked as a sequence of (tag, value) and each field of the plan has a slot on a small
// per-thread stack (where the field's last occurrence starts, how many there were, the order
// of the last one). Repeated fields write each element as it is met (a leaf column's entries
// only need to be in order within that column); singular fields are written after the scan,
// from their last occurrence. So:
//   - repeated scalars are accepted packed and unpacked, mixed;
//   - a singular scalar seen more than once: the last one wins (the spec's rule);
//   - a singular message seen more than once is merged, as the spec says: its occurrences are
//     decoded as one message (their bytes concatenated, a copy made only in that rare case);
//   - of a oneof's members the last one seen wins, the others are null;
//   - unknown field numbers are skipped (their bytes validated: lengths, group nesting);
//   - a known field with a wire type its declaration cannot have is a decode error
//     (libprotobuf would keep it as an unknown field and the column would silently read the
//     default);
//   - absent fields: null with presence, the default without (protobuf_mapping.h says why);
//     a proto2 `required` field absent is a decode error, as libprotobuf's parse fails;
//   - a map whose entries repeat a key is a decode error: the spec keeps the last entry, which
//     needs every entry buffered; serializers never write duplicates, and an Iceberg map with
//     a key twice is not a valid value;
//   - strings must be valid UTF-8 (Parquet's string type), enums unknown numbers become their
//     number as text, Timestamp and Duration are range-checked as the spec bounds them.
//
// Threads: plans are immutable and shared; the slot stack is thread_local.

#include "lake/typed_rows.h"
#include "schema/protobuf_schema.h"

#include <google/protobuf/descriptor.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace floe::lake {

/// Confluent's Protobuf framing after the 5-byte header: the message-index path (a zigzag
/// varint count, then that many zigzag varints; a count of 0 means [0]) and the payload.
struct protobuf_framing {
    std::vector<int> indexes;
    std::string_view payload;
};
std::expected<protobuf_framing, std::string> parse_message_indexes(std::string_view after_header);

class protobuf_row_plan final : public row_plan {
public:
    struct op;
    /// `table_fields` as for avro_row_plan::make. `message` must outlive the plan (the
    /// registry's parsed schema owns it: keep that alive beside the plan).
    static std::expected<std::shared_ptr<const protobuf_row_plan>, decode_failure>
    make(const google::protobuf::Descriptor& message,
         const std::vector<iceberg::nested_field>& table_fields, size_t first_column);
    /// The same, for a message that is the struct column `column` (typed tables' `data`): the
    /// table field is that struct, present (definition level 1) for every decoded value.
    static std::expected<std::shared_ptr<const protobuf_row_plan>, decode_failure>
    make_in_column(const google::protobuf::Descriptor& message, const iceberg::nested_field& column,
                   size_t first_column);
    ~protobuf_row_plan() override;

    std::optional<std::string> validate(std::string_view payload) const override;
    void write(std::string_view payload, parquet::file_writer& w) const override;

private:
    protobuf_row_plan() = default;
    std::unique_ptr<op> _root;
};

} // namespace floe::lake
