#pragma once

#include "format/avro/schema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace floe::avro {

/// A generic Avro value: what manifests and manifest lists are made of. A tree of values that
/// owns its children. Records keep their fields in schema order (positional); maps keep their
/// entries in insertion order (Avro maps are unordered, but Floe keeps what it was given so a
/// round trip is exact). Bytes, strings and fixed hold their content in `str` (zero bytes allowed).
///
/// A value placed in a union remembers its branch when it is read, or when built with
/// `in_branch`; a value without a branch is matched to the first branch of its kind when written.
class datum {
public:
    enum class kind : uint8_t {
        null, boolean, int_, long_, float_, double_, bytes, string, fixed, enum_, array, map, record,
    };
    static constexpr uint32_t no_branch = UINT32_MAX;

    datum() = default;
    static datum null() { return datum(); }
    static datum boolean(bool v) { datum d(kind::boolean); d._i = v; return d; }
    static datum int32(int32_t v) { datum d(kind::int_); d._i = v; return d; }
    static datum int64(int64_t v) { datum d(kind::long_); d._i = v; return d; }
    static datum float32(float v) { datum d(kind::float_); d._f = v; return d; }
    static datum float64(double v) { datum d(kind::double_); d._f = v; return d; }
    static datum bytes(std::string_view v) { datum d(kind::bytes); d._s = v; return d; }
    static datum string(std::string_view v) { datum d(kind::string); d._s = v; return d; }
    static datum fixed(std::string_view v) { datum d(kind::fixed); d._s = v; return d; }
    static datum enumeration(int32_t index) { datum d(kind::enum_); d._i = index; return d; }
    static datum array(std::vector<datum> items = {}) {
        datum d(kind::array);
        d._children = std::move(items);
        return d;
    }
    static datum map() { return datum(kind::map); }
    static datum record(std::vector<datum> fields = {}) {
        datum d(kind::record);
        d._children = std::move(fields);
        return d;
    }
    /// Marks which union branch this value is written as.
    datum&& in_branch(uint32_t b) && { _branch = b; return std::move(*this); }

    kind type() const noexcept { return _kind; }
    bool is_null() const noexcept { return _kind == kind::null; }
    uint32_t branch() const noexcept { return _branch; }
    void set_branch(uint32_t b) noexcept { _branch = b; }

    bool as_bool() const noexcept { return _i != 0; }
    int32_t as_int() const noexcept { return static_cast<int32_t>(_i); }
    int64_t as_long() const noexcept { return _i; }
    float as_float() const noexcept { return static_cast<float>(_f); }
    double as_double() const noexcept { return _f; }
    const std::string& as_string() const noexcept { return _s; }
    std::string& mutable_string() noexcept { return _s; }

    /// Array items or record fields.
    const std::vector<datum>& children() const noexcept { return _children; }
    std::vector<datum>& children() noexcept { return _children; }
    /// Map keys, parallel to children() for a map.
    const std::vector<std::string>& keys() const noexcept { return _keys; }

    void push(datum v) { _children.push_back(std::move(v)); }
    void put(std::string key, datum v) {
        _keys.push_back(std::move(key));
        _children.push_back(std::move(v));
    }
    /// The map value under `key`, or nullptr.
    const datum* get(std::string_view key) const noexcept {
        for (size_t i = 0; i < _keys.size(); ++i)
            if (_keys[i] == key) return &_children[i];
        return nullptr;
    }
    /// Record field by position.
    const datum& field(size_t i) const noexcept { return _children[i]; }
    datum& field(size_t i) noexcept { return _children[i]; }

    friend bool operator==(const datum& a, const datum& b) noexcept;

private:
    explicit datum(kind k) : _kind(k) {}
    kind _kind = kind::null;
    uint32_t _branch = no_branch;
    int64_t _i = 0;
    double _f = 0;
    std::string _s;
    std::vector<datum> _children;
    std::vector<std::string> _keys;
};

/// Debug text (JSON-like) for messages and test failures.
std::string to_debug_string(const datum& d);

} // namespace floe::avro
