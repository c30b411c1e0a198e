#pragma once

#include "base/result.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe {

using byte_buffer = std::vector<uint8_t>;
using bytes_view = std::span<const uint8_t>;

inline bytes_view as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view as_chars(bytes_view b) noexcept {
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// Appends fixed-width integers and raw bytes to a growing buffer. Not thread-safe.
class byte_writer {
public:
    explicit byte_writer(byte_buffer& out) : _out(out) {}

    void put_u8(uint8_t v) { _out.push_back(v); }
    void put_bytes(bytes_view b) { _out.insert(_out.end(), b.begin(), b.end()); }
    void put_bytes(std::string_view s) { put_bytes(as_bytes(s)); }

    template<typename T>
    void put_le(T v) {
        static_assert(std::is_integral_v<T> || std::is_floating_point_v<T>);
        if constexpr (std::endian::native == std::endian::big) v = byteswap_any(v);
        append_raw(&v, sizeof(T));
    }
    template<typename T>
    void put_be(T v) {
        static_assert(std::is_integral_v<T>);
        if constexpr (std::endian::native == std::endian::little) v = std::byteswap(v);
        append_raw(&v, sizeof(T));
    }
    /// Overwrites a big-endian value at an earlier position (e.g. a length prefix).
    template<typename T>
    void patch_be(size_t pos, T v) {
        if constexpr (std::endian::native == std::endian::little) v = std::byteswap(v);
        std::memcpy(_out.data() + pos, &v, sizeof(T));
    }

    size_t size() const noexcept { return _out.size(); }
    byte_buffer& buffer() noexcept { return _out; }

private:
    template<typename T>
    static T byteswap_any(T v) {
        if constexpr (std::is_integral_v<T>) return std::byteswap(v);
        else {
            uint8_t b[sizeof(T)];
            std::memcpy(b, &v, sizeof(T));
            for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
            std::memcpy(&v, b, sizeof(T));
            return v;
        }
    }
    /// A fixed-width value: grow by exactly n, then copy. Not vector::insert of a pointer range,
    /// whose general path (insert anywhere, reallocate) GCC 12 cannot bound for a few bytes at
    /// the end of a reserved buffer and reports as an overflow (-Wstringop-overflow).
    void append_raw(const void* p, size_t n) {
        size_t at = _out.size();
        _out.resize(at + n);
        std::memcpy(_out.data() + at, p, n);
    }
    byte_buffer& _out;
};

/// Bounds-checked reads over untrusted bytes: every read fails with errc::corrupt instead of
/// running past the end. Holds a view; the bytes must outlive the reader.
class byte_reader {
public:
    explicit byte_reader(bytes_view data) : _data(data) {}

    size_t position() const noexcept { return _pos; }
    size_t remaining() const noexcept { return _data.size() - _pos; }
    bool empty() const noexcept { return _pos >= _data.size(); }
    bytes_view rest() const noexcept { return _data.subspan(_pos); }

    result<uint8_t> u8() {
        if (remaining() < 1) return truncated(1);
        return _data[_pos++];
    }
    template<typename T>
    result<T> le() {
        if (remaining() < sizeof(T)) return truncated(sizeof(T));
        T v;
        std::memcpy(&v, _data.data() + _pos, sizeof(T));
        _pos += sizeof(T);
        if constexpr (std::endian::native == std::endian::big && std::is_integral_v<T>)
            v = std::byteswap(v);
        return v;
    }
    template<typename T>
    result<T> be() {
        if (remaining() < sizeof(T)) return truncated(sizeof(T));
        T v;
        std::memcpy(&v, _data.data() + _pos, sizeof(T));
        _pos += sizeof(T);
        if constexpr (std::endian::native == std::endian::little) v = std::byteswap(v);
        return v;
    }
    result<bytes_view> bytes(size_t n) {
        if (remaining() < n) return truncated(n);
        auto v = _data.subspan(_pos, n);
        _pos += n;
        return v;
    }
    result<void> skip(size_t n) {
        if (remaining() < n) return truncated(n);
        _pos += n;
        return {};
    }

private:
    std::unexpected<error> truncated(size_t need) const {
        return fail(errc::corrupt, "truncated: need {} bytes at offset {}, {} left", need, _pos,
                    remaining());
    }
    bytes_view _data;
    size_t _pos = 0;
};

} // namespace floe
