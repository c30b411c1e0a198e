#pragma once

// Thrift compact protocol, just what Parquet metadata needs: a writer that appends to a
// byte_buffer and a bounds-checked, depth-limited reader over untrusted bytes.
// Both are plain values owned by the caller; not thread-safe.

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>
#include <string_view>

namespace floe::parquet::thrift {

/// Compact protocol type ids (the low nibble of a field header).
enum class ttype : uint8_t {
    stop = 0,
    bool_true = 1,
    bool_false = 2,
    i8 = 3,
    i16 = 4,
    i32 = 5,
    i64 = 6,
    dbl = 7,
    binary = 8,
    list = 9,
    set = 10,
    map = 11,
    strct = 12,
};

/// Writes a struct tree. Field ids inside one struct must be written in increasing order
/// (the compact protocol encodes deltas; we always write ascending, as generated code does).
class writer {
public:
    explicit writer(byte_buffer& out) : _out(out) {}

    void field_i32(int16_t id, int32_t v);
    void field_i64(int16_t id, int64_t v);
    void field_i16(int16_t id, int16_t v);
    void field_bool(int16_t id, bool v);
    void field_binary(int16_t id, bytes_view v);
    void field_string(int16_t id, std::string_view v) { field_binary(id, as_bytes(v)); }
    /// Opens a nested struct field; close it with end_struct().
    void begin_struct_field(int16_t id);
    /// An empty struct field (unions of empty structs: LogicalType STRING, ColumnOrder ...).
    void empty_struct_field(int16_t id);
    /// Opens a list field; then write `n` elements with the elem_* calls.
    void begin_list_field(int16_t id, ttype elem, size_t n);

    void elem_i32(int32_t v);
    void elem_i64(int64_t v);
    /// A bool list element: one byte, 1 for true and 2 for false (as Thrift's compact
    /// protocol implementations write it; readers take 1 as true).
    void elem_bool(bool v) { _out.push_back(v ? 1 : 2); }
    void elem_binary(bytes_view v);
    void elem_string(std::string_view v) { elem_binary(as_bytes(v)); }
    /// Opens a struct that is a list element; close with end_struct().
    void begin_struct_elem();

    /// Writes the stop byte of the innermost open struct.
    void end_struct();
    /// Ends the top-level struct (the one implicitly open from construction).
    void end() { _out.push_back(0); }

private:
    void field_header(ttype t, int16_t id);
    void uvarint(uint64_t v);

    byte_buffer& _out;
    int16_t _last = 0;
    int16_t _stack[32] = {};
    int _depth = 0;
};

struct field_header {
    ttype type;
    int16_t id;
};

struct list_header {
    ttype elem;
    uint32_t size;
};

/// Reads compact-protocol bytes. Every read is bounds-checked; nesting deeper than
/// `max_depth` and list sizes that cannot fit in the remaining bytes fail with errc::corrupt.
class reader {
public:
    explicit reader(bytes_view data, int max_depth = 32) : _r(data), _max_depth(max_depth) {}

    /// Enters a struct (the top-level one too). Fails when nesting exceeds the limit.
    result<void> begin_struct();
    /// Leaves a struct (after next_field() returned stop).
    void end_struct();
    /// Next field header in the current struct; type stop ends the struct.
    result<field_header> next_field();

    result<int8_t> read_i8();
    result<int16_t> read_i16();
    result<int32_t> read_i32();
    result<int64_t> read_i64();
    result<double> read_double();
    result<bytes_view> read_binary();
    result<std::string_view> read_string() {
        auto b = FLOE_TRY(read_binary());
        return as_chars(b);
    }
    /// A bool list element (fields carry their value in the header type).
    result<bool> read_bool_elem();
    result<list_header> read_list_header();

    /// Skips one value of type t (recursing into containers, depth-limited).
    result<void> skip(ttype t);

    size_t position() const noexcept { return _r.position(); }

private:
    result<uint64_t> uvarint(unsigned max_bits);

    byte_reader _r;
    int _max_depth;
    int _depth = 0;
    int16_t _last = 0;
    int16_t _stack[64] = {};
};

/// Value of a bool field from its header.
inline bool field_bool_value(const field_header& h) {
    return h.type == ttype::bool_true;
}

} // namespace floe::parquet::thrift
