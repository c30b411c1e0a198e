#pragma once

#include <compare>
#include <functional>
#include <fmt/format.h>

namespace floe {

/// A value of type T that cannot be mixed up with another named_type of the same T:
/// a Kafka offset is not a segment id is not a byte position (Redpanda's named_type).
template<typename T, typename Tag>
class named_type {
public:
    using type = T;
    constexpr named_type() = default;
    constexpr explicit named_type(T v) : _v(v) {}
    constexpr T operator()() const noexcept { return _v; }
    constexpr const T& value() const noexcept { return _v; }
    constexpr auto operator<=>(const named_type&) const = default;
    constexpr named_type& operator++() { ++_v; return *this; }
    constexpr named_type operator+(T d) const { return named_type(_v + d); }
    constexpr named_type operator-(T d) const { return named_type(_v - d); }

private:
    T _v{};
};

} // namespace floe

template<typename T, typename Tag>
struct std::hash<floe::named_type<T, Tag>> {
    size_t operator()(const floe::named_type<T, Tag>& v) const noexcept {
        return std::hash<T>{}(v());
    }
};

template<typename T, typename Tag>
struct fmt::formatter<floe::named_type<T, Tag>> : fmt::formatter<T> {
    template<typename Ctx>
    auto format(const floe::named_type<T, Tag>& v, Ctx& ctx) const {
        return fmt::formatter<T>::format(v(), ctx);
    }
};
