#include "iceberg/bounds.h"

#include <bit>
#include <cstring>

namespace floe::iceberg {

namespace {

template<typename T>
std::string le_bytes(T v) {
    static_assert(std::endian::native == std::endian::little, "little-endian host assumed");
    std::string s(sizeof(T), '\0');
    std::memcpy(s.data(), &v, sizeof(T));
    return s;
}

template<typename T>
result<T> from_le(std::string_view b) {
    if (b.size() != sizeof(T))
        return fail(errc::corrupt, "bound of {} bytes where {} are needed", b.size(), sizeof(T));
    T v;
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
}

template<typename T>
int cmp(T a, T b) {
    return a < b ? -1 : (b < a ? 1 : 0);
}

} // namespace

std::string serialize_int(int32_t v) { return le_bytes(v); }
std::string serialize_long(int64_t v) { return le_bytes(v); }
std::string serialize_double(double v) { return le_bytes(v); }
result<int32_t> deserialize_int(std::string_view b) { return from_le<int32_t>(b); }
result<int64_t> deserialize_long(std::string_view b) {
    // A long column's bounds may have been written for a promoted int (4 bytes): widen.
    if (b.size() == 4) return static_cast<int64_t>(FLOE_TRY(from_le<int32_t>(b)));
    return from_le<int64_t>(b);
}

result<std::string> serialize_value(const type& t, const avro::datum& v) {
    using k = avro::datum::kind;
    switch (t.id) {
    case type_id::boolean:
        if (v.type() != k::boolean) break;
        return std::string(1, v.as_bool() ? '\1' : '\0');
    case type_id::int_:
    case type_id::date:
        if (v.type() != k::int_) break;
        return serialize_int(v.as_int());
    case type_id::long_:
    case type_id::time:
    case type_id::timestamp:
    case type_id::timestamptz:
        if (v.type() != k::long_ && v.type() != k::int_) break;
        return serialize_long(v.as_long());
    case type_id::float_:
        if (v.type() != k::float_) break;
        return le_bytes(v.as_float());
    case type_id::double_:
        if (v.type() != k::double_ && v.type() != k::float_) break;
        return serialize_double(v.as_double());
    case type_id::string:
    case type_id::binary:
    case type_id::fixed:
    case type_id::uuid:
    case type_id::decimal:  // stored in Avro as the same big-endian two's complement bytes
        if (v.type() != k::string && v.type() != k::bytes && v.type() != k::fixed) break;
        return v.as_string();
    default: break;
    }
    return fail(errc::invalid_argument, "cannot serialise this value as {}", primitive_name(t));
}

int compare_serialized(const type& t, std::string_view a, std::string_view b) {
    switch (t.id) {
    case type_id::int_:
    case type_id::date: {
        auto x = from_le<int32_t>(a), y = from_le<int32_t>(b);
        if (x && y) return cmp(*x, *y);
        break;
    }
    case type_id::long_:
    case type_id::time:
    case type_id::timestamp:
    case type_id::timestamptz: {
        auto x = deserialize_long(a), y = deserialize_long(b);
        if (x && y) return cmp(*x, *y);
        break;
    }
    case type_id::float_: {
        auto x = from_le<float>(a), y = from_le<float>(b);
        if (x && y) return cmp(*x, *y);
        break;
    }
    case type_id::double_: {
        auto x = from_le<double>(a), y = from_le<double>(b);
        if (x && y) return cmp(*x, *y);
        break;
    }
    default: break;
    }
    // Unsigned bytewise order (std::string_view compares char_traits<char>, which is unsigned).
    return cmp(a.compare(b), 0);
}

} // namespace floe::iceberg
