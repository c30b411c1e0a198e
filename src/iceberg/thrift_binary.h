#pragma once

// Thrift's binary protocol (TBinaryProtocol, strict message headers), as the Hive Metastore
// speaks it on an unframed (buffered) socket. Values are a generic tree (`tvalue`) rather than
// generated structs: the metastore's messages are described once as field ids (hive_metastore.h)
// and a struct read from the server is sent back with the fields Floe does not know untouched
// (an alter_table keeps whatever the metastore stored).
// Decoding is bounds-checked and depth-limited over untrusted bytes: truncated input is "need
// more" (the caller reads on from the socket), anything malformed is errc::corrupt.
// Plain values owned by the caller; not thread-safe.

#include "base/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace floe::iceberg::thrift {

/// Binary protocol type ids.
enum class ttype : uint8_t {
    stop = 0,
    boolean = 2,
    byte = 3,
    dbl = 4,
    i16 = 6,
    i32 = 8,
    i64 = 10,
    string = 11, ///< also binary
    strct = 12,
    map = 13,
    set = 14,
    list = 15,
};

/// True for the type ids the binary protocol defines.
bool valid_type(uint8_t t) noexcept;

/// One Thrift value of any type. A struct keeps its fields in the order written or read; a map
/// keeps its entries as alternating key, value in `elems`.
struct tvalue {
    ttype type = ttype::stop;
    int64_t i = 0;                                  ///< boolean, byte, i16, i32, i64
    double d = 0;                                   ///< dbl
    std::string s;                                  ///< string / binary
    std::vector<std::pair<int16_t, tvalue>> fields; ///< strct
    ttype elem = ttype::stop;                       ///< list / set element type; map value type
    ttype key = ttype::stop;                        ///< map key type
    std::vector<tvalue> elems; ///< list / set elements; map keys and values alternating

    static tvalue boolean(bool v) { return scalar(ttype::boolean, v ? 1 : 0); }
    static tvalue i16(int16_t v) { return scalar(ttype::i16, v); }
    static tvalue i32(int32_t v) { return scalar(ttype::i32, v); }
    static tvalue i64(int64_t v) { return scalar(ttype::i64, v); }
    static tvalue str(std::string v) {
        tvalue out;
        out.type = ttype::string;
        out.s = std::move(v);
        return out;
    }
    static tvalue strct(std::vector<std::pair<int16_t, tvalue>> fields = {}) {
        tvalue out;
        out.type = ttype::strct;
        out.fields = std::move(fields);
        return out;
    }
    static tvalue list(ttype elem, std::vector<tvalue> elems = {}) {
        tvalue out;
        out.type = ttype::list;
        out.elem = elem;
        out.elems = std::move(elems);
        return out;
    }
    static tvalue string_map(const std::map<std::string, std::string>& m);

    /// The struct field `id`, or nullptr.
    const tvalue* field(int16_t id) const;
    tvalue* field(int16_t id);
    /// Sets (replaces or appends) struct field `id`.
    void set(int16_t id, tvalue v);
    /// Struct field `id` as a string, if it is one.
    std::optional<std::string> string_field(int16_t id) const;
    /// Struct field `id` as an integer, if it is one of the integer types.
    std::optional<int64_t> int_field(int16_t id) const;
    /// A map<string,string> value as a std::map (later duplicates win); empty for anything else.
    std::map<std::string, std::string> as_string_map() const;
    /// Replaces this map<string,string> value's entries.
    void assign_string_map(const std::map<std::string, std::string>& m);

    bool operator==(const tvalue&) const = default;

private:
    static tvalue scalar(ttype t, int64_t v) {
        tvalue out;
        out.type = t;
        out.i = v;
        return out;
    }
};

enum class message_kind : uint8_t { call = 1, reply = 2, exception = 3, oneway = 4 };

/// A whole message: a strict header (version 1, kind, name, sequence id) and the body struct
/// (a call's arguments, a reply's result struct, or a TApplicationException).
struct message {
    std::string name;
    message_kind kind = message_kind::call;
    int32_t seqid = 0;
    tvalue body; ///< a struct

    bool operator==(const message&) const = default;
};

/// Limits a decoder enforces on bytes from outside.
struct limits {
    size_t max_message_bytes = 64u << 20;
    int max_depth = 64;
};

/// Appends `v` (without a type byte or field header: the bare value) to `out`.
void encode_value(std::string& out, const tvalue& v);
/// The bytes of message `m`.
std::string encode_message(const message& m);

/// Outcome of decoding from a buffer that may hold only the start of a message.
struct decoded {
    message msg;
    size_t consumed = 0;
};
/// The message at the start of `data`: nullopt when `data` ends before the message does (read
/// more and try again), errc::corrupt when the bytes cannot be a message (not strict binary, a
/// bad type id, nesting deeper than the limit, or more than max_message_bytes needed).
result<std::optional<decoded>> decode_message(std::string_view data, const limits& lim = {});
/// One bare value of type `t` that must fill `data` exactly (tests, fuzzing).
result<tvalue> decode_value(std::string_view data, ttype t, const limits& lim = {});

} // namespace floe::iceberg::thrift
