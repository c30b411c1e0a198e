#pragma once

#include "base/bytes.h"
#include "format/avro/datum.h"
#include "format/avro/schema.h"

namespace floe::avro {

/// Appends the Avro binary encoding of `d` as a value of `s`. Fails with invalid_argument when
/// the datum does not fit the schema (wrong kind, int out of range, bad fixed size, record with
/// the wrong number of fields, no matching union branch).
result<void> encode(const node& s, const datum& d, byte_buffer& out);

/// The union branch `d` is written as: its own branch if set, else the first branch of its kind,
/// else the first it promotes to (int→long, float→double, string↔bytes). Fails if none fits.
result<size_t> resolve_branch(const node& union_schema, const datum& d);

/// Limits that keep a decode of hostile bytes bounded in time, memory and stack.
struct decode_budget {
    /// Items of zero-byte types (null, empty records) an input may claim; they cost no input
    /// bytes, so without a cap "2^62 nulls" would spin forever.
    size_t zero_size_items = size_t{1} << 16;
    int max_depth = 128;
};

/// Decodes one value of `s` from `r`. Every length and count is checked against the bytes left
/// before anything is allocated; errors are errc::corrupt and say what was wrong and where.
result<datum> decode(const node& s, byte_reader& r, decode_budget& budget);

} // namespace floe::avro
