#include "iceberg/transform.h"

#include "base/base64.h"
#include "iceberg/manifest.h"

#include <fmt/format.h>

#include <climits>
#include <cstring>

namespace floe::iceberg {

namespace {

type_ptr prim(type_id id) { return type::primitive(id); }

int64_t floor_div(int64_t a, int64_t b) noexcept {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) noexcept { return a - floor_div(a, b) * b; }

bool is_timestamp(type_id t) noexcept { return t == type_id::timestamp || t == type_id::timestamptz; }

// Units per day of a time transform's source: micros for timestamps, millis for Floe's long
// time columns, 1 for dates.
int64_t per_day(type_id t) noexcept {
    if (is_timestamp(t)) return 86'400'000'000LL;
    if (t == type_id::long_) return 86'400'000LL;
    return 1;
}

uint32_t rotl(uint32_t x, int r) noexcept { return (x << r) | (x >> (32 - r)); }

uint32_t fmix(uint32_t h) noexcept {
    h ^= h >> 16;
    h *= 0x85ebca6bU;
    h ^= h >> 13;
    h *= 0xc2b2ae35U;
    h ^= h >> 16;
    return h;
}

int32_t hash_long(int64_t v) {
    uint8_t le[8];
    auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(u >> (8 * i));
    return static_cast<int32_t>(murmur3_x86_32(bytes_view(reinterpret_cast<const uint8_t*>(le), 8)));
}

int32_t hash_text(std::string_view s) {
    return static_cast<int32_t>(murmur3_x86_32(bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size())));
}

// The minimal two's-complement big-endian form of an unscaled decimal (no redundant sign bytes).
std::string_view minimal_decimal(std::string_view be) {
    while (be.size() > 1) {
        auto b0 = static_cast<uint8_t>(be[0]), b1 = static_cast<uint8_t>(be[1]);
        if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xff && (b1 & 0x80))) be.remove_prefix(1);
        else break;
    }
    return be;
}

std::string date_text(int64_t days) {
    int32_t y = 0;
    uint32_t m = 0, d = 0;
    civil_from_days(days, y, m, d);
    return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

} // namespace

int32_t days_from_civil(int32_t y, uint32_t m, uint32_t d) noexcept {
    // Howard Hinnant's days_from_civil (proleptic Gregorian).
    y -= m <= 2;
    const int32_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<uint32_t>(y - era * 400);
    const uint32_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int32_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int32_t& y, uint32_t& m, uint32_t& d) noexcept {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<uint32_t>(z - era * 146097);
    const uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const uint32_t mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<int32_t>(static_cast<int64_t>(yoe) + era * 400 + (m <= 2));
}

uint32_t murmur3_x86_32(bytes_view data, uint32_t seed) {
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    const size_t n = data.size();
    constexpr uint32_t c1 = 0xcc9e2d51U, c2 = 0x1b873593U;
    uint32_t h = seed;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t k = uint32_t(p[i]) | uint32_t(p[i + 1]) << 8 | uint32_t(p[i + 2]) << 16 | uint32_t(p[i + 3]) << 24;
        k *= c1;
        k = rotl(k, 15);
        k *= c2;
        h ^= k;
        h = rotl(h, 13);
        h = h * 5 + 0xe6546b64U;
    }
    uint32_t k = 0;
    switch (n & 3) {
    case 3: k ^= uint32_t(p[i + 2]) << 16; [[fallthrough]];
    case 2: k ^= uint32_t(p[i + 1]) << 8; [[fallthrough]];
    case 1:
        k ^= uint32_t(p[i]);
        k *= c1;
        k = rotl(k, 15);
        k *= c2;
        h ^= k;
        break;
    default: break;
    }
    h ^= static_cast<uint32_t>(n);
    return fmix(h);
}

result<int32_t> iceberg_hash(const type& t, const avro::datum& v) {
    switch (t.id) {
    case type_id::int_:
    case type_id::date: return hash_long(v.as_int());
    case type_id::long_:
    case type_id::time:
    case type_id::timestamp:
    case type_id::timestamptz: return hash_long(v.as_long());
    case type_id::string:
    case type_id::binary:
    case type_id::fixed:
    case type_id::uuid: return hash_text(v.as_string());
    case type_id::decimal: return hash_text(minimal_decimal(v.as_string()));
    default: return fail(errc::invalid_argument, "no Iceberg bucket hash for type {}", primitive_name(t));
    }
}

result<transform> transform::parse(std::string_view text) {
    transform t;
    auto num = [&](std::string_view prefix) -> result<int32_t> {
        auto inner = text.substr(prefix.size() + 1, text.size() - prefix.size() - 2);
        int64_t n = 0;
        for (char c : inner) {
            if (c < '0' || c > '9' || n > INT32_MAX) return fail(errc::invalid_argument, "transform '{}'", text);
            n = n * 10 + (c - '0');
        }
        if (inner.empty() || n <= 0 || n > INT32_MAX) return fail(errc::invalid_argument, "transform '{}'", text);
        return static_cast<int32_t>(n);
    };
    if (text == "identity") t.how = kind::identity;
    else if (text == "year") t.how = kind::year;
    else if (text == "month") t.how = kind::month;
    else if (text == "day") t.how = kind::day;
    else if (text == "hour") t.how = kind::hour;
    else if (text == "void") t.how = kind::void_;
    else if (text.starts_with("bucket[") && text.ends_with("]")) {
        t.how = kind::bucket;
        t.param = FLOE_TRY(num("bucket"));
    } else if (text.starts_with("truncate[") && text.ends_with("]")) {
        t.how = kind::truncate;
        t.param = FLOE_TRY(num("truncate"));
    } else {
        return fail(errc::unsupported, "partition transform '{}'", text);
    }
    return t;
}

std::string transform::to_string() const {
    switch (how) {
    case kind::identity: return "identity";
    case kind::bucket: return fmt::format("bucket[{}]", param);
    case kind::truncate: return fmt::format("truncate[{}]", param);
    case kind::year: return "year";
    case kind::month: return "month";
    case kind::day: return "day";
    case kind::hour: return "hour";
    case kind::void_: return "void";
    }
    return "?";
}

result<type_ptr> transform::result_type(const type& s) const {
    auto refuse = [&]() -> result<type_ptr> {
        return fail(errc::invalid_argument, "transform {} does not apply to type {}", to_string(),
                    s.is_primitive() ? primitive_name(s) : std::string("struct, list or map"));
    };
    if (!s.is_primitive()) return refuse();
    const type_id t = s.id;
    switch (how) {
    case kind::identity:
    case kind::void_: return std::make_shared<const type>(s);
    case kind::bucket:
        if (t == type_id::boolean || t == type_id::float_ || t == type_id::double_) return refuse();
        return prim(type_id::int_);
    case kind::truncate:
        if (t == type_id::int_ || t == type_id::long_ || t == type_id::string || t == type_id::binary)
            return prim(t);
        return refuse(); // decimals: not yet
    case kind::year:
    case kind::month:
        if (is_timestamp(t) || t == type_id::date || t == type_id::long_) return prim(type_id::int_);
        return refuse();
    case kind::day:
        if (is_timestamp(t) || t == type_id::date || t == type_id::long_) return prim(type_id::date);
        return refuse();
    case kind::hour:
        if (is_timestamp(t) || t == type_id::long_) return prim(type_id::int_);
        return refuse();
    }
    return refuse();
}

result<avro::datum> transform::apply(const type& s, const avro::datum& v) const {
    if (v.is_null() || how == kind::void_) return avro::datum::null();
    switch (how) {
    case kind::identity: return v;
    case kind::void_: return avro::datum::null();
    case kind::bucket: {
        auto h = FLOE_TRY(iceberg_hash(s, v));
        return avro::datum::int32(static_cast<int32_t>((h & INT32_MAX) % param));
    }
    case kind::truncate: {
        const int64_t w = param;
        switch (s.id) {
        case type_id::int_: {
            int64_t x = v.as_int();
            return avro::datum::int32(static_cast<int32_t>(x - floor_mod(x, w)));
        }
        case type_id::long_: {
            // In 128-bit-free arithmetic: v - (((v % W) + W) % W) cannot overflow below INT64_MIN
            // only when the remainder is 0 or v is far from the minimum; Iceberg wraps as Java does.
            auto x = static_cast<uint64_t>(v.as_long());
            auto r = static_cast<uint64_t>(floor_mod(v.as_long(), w));
            return avro::datum::int64(static_cast<int64_t>(x - r));
        }
        case type_id::string: {
            // The first W code points (UTF-8 continuation bytes are 10xxxxxx).
            const auto& str = v.as_string();
            size_t cut = 0, points = 0;
            while (cut < str.size()) {
                if ((static_cast<uint8_t>(str[cut]) & 0xC0) != 0x80) {
                    if (points == static_cast<size_t>(w)) break;
                    ++points;
                }
                ++cut;
            }
            return avro::datum::string(std::string_view(str).substr(0, cut));
        }
        case type_id::binary: return avro::datum::bytes(std::string_view(v.as_string()).substr(0, static_cast<size_t>(w)));
        default: return fail(errc::invalid_argument, "truncate of type {}", primitive_name(s));
        }
    }
    case kind::year:
    case kind::month:
    case kind::day:
    case kind::hour: {
        const int64_t raw = s.id == type_id::date ? v.as_int() : v.as_long();
        if (how == kind::hour) return avro::datum::int32(static_cast<int32_t>(floor_div(raw, per_day(s.id) / 24)));
        const int64_t days = floor_div(raw, per_day(s.id));
        if (how == kind::day) return avro::datum::int32(static_cast<int32_t>(days));
        int32_t y = 0;
        uint32_t m = 0, d = 0;
        civil_from_days(days, y, m, d);
        if (how == kind::year) return avro::datum::int32(y - 1970);
        return avro::datum::int32((y - 1970) * 12 + static_cast<int32_t>(m) - 1);
    }
    }
    return fail(errc::invalid_argument, "transform {}", to_string());
}

std::string transform::human(const type& r, const avro::datum& v) const {
    if (v.is_null()) return "null";
    switch (how) {
    case kind::year: return fmt::format("{:04}", 1970 + int64_t(v.as_int()));
    case kind::month: {
        int64_t x = v.as_int();
        return fmt::format("{:04}-{:02}", 1970 + floor_div(x, 12), floor_mod(x, 12) + 1);
    }
    case kind::day: return date_text(v.as_int());
    case kind::hour: {
        int64_t x = v.as_int();
        return fmt::format("{}-{:02}", date_text(floor_div(x, 24)), floor_mod(x, 24));
    }
    default: break;
    }
    switch (r.id) {
    case type_id::boolean: return v.as_bool() ? "true" : "false";
    case type_id::int_: return fmt::format("{}", v.as_int());
    case type_id::long_: return fmt::format("{}", v.as_long());
    case type_id::date: return date_text(v.as_int());
    case type_id::timestamp:
    case type_id::timestamptz: {
        int64_t us = v.as_long();
        int64_t days = floor_div(us, 86'400'000'000LL), rest = floor_mod(us, 86'400'000'000LL);
        return fmt::format("{}T{:02}:{:02}:{:02}.{:06}{}", date_text(days), rest / 3'600'000'000LL,
                           rest / 60'000'000 % 60, rest / 1'000'000 % 60, rest % 1'000'000,
                           r.id == type_id::timestamptz ? "Z" : "");
    }
    case type_id::string: return v.as_string();
    case type_id::float_: return fmt::format("{}", v.as_float());
    case type_id::double_: return fmt::format("{}", v.as_double());
    default: {
        const auto& s = v.as_string();
        return base64_encode(std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
    }
    }
}

namespace {

// A column by name: top-level, or a dotted path through struct fields.
const nested_field* resolve(const schema& s, std::string_view path) {
    auto dot = path.find('.');
    const nested_field* f = s.find(path.substr(0, dot));
    while (f && dot != std::string_view::npos) {
        path.remove_prefix(dot + 1);
        dot = path.find('.');
        auto name = path.substr(0, dot);
        if (!f->field_type || f->field_type->id != type_id::struct_) return nullptr;
        const nested_field* next = nullptr;
        for (auto& c : f->field_type->fields)
            if (c.name == name) next = &c;
        f = next;
    }
    return f;
}

std::string field_name(const partition_term& t, const transform& tr) {
    std::string base = t.source;
    for (auto& c : base)
        if (c == '.') c = '_';
    switch (tr.how) {
    case transform::kind::identity: return base;
    case transform::kind::bucket: return fmt::format("{}_bucket_{}", base, tr.param);
    case transform::kind::truncate: return fmt::format("{}_trunc_{}", base, tr.param);
    case transform::kind::year: return base + "_year";
    case transform::kind::month: return base + "_month";
    case transform::kind::day: return base + "_day";
    case transform::kind::hour: return base + "_hour";
    case transform::kind::void_: return base + "_null";
    }
    return base;
}

} // namespace

result<partition_spec> build_partition_spec(const schema& s, const std::vector<partition_term>& terms,
                                            std::span<const partition_spec> existing, int32_t last_partition_id) {
    partition_spec out;
    for (auto& p : existing) out.spec_id = std::max(out.spec_id, p.spec_id + 1);
    int32_t next_id = std::max(last_partition_id, 999) + 1;
    for (auto& t : terms) {
        auto* src = resolve(s, t.source);
        if (!src) {
            std::string names;
            for (auto& f : s.fields) names += (names.empty() ? "" : ", ") + f.name;
            return fail(errc::invalid_argument, "partition spec term '{}': the table has no column '{}' (columns: {})",
                        t.text, t.source, names);
        }
        auto tr = FLOE_TRY(transform::parse(t.iceberg_transform()));
        if (auto r = tr.result_type(*src->field_type); !r)
            return fail(errc::invalid_argument, "partition spec term '{}': {}", t.text, r.error().message());
        partition_field pf;
        pf.source_id = src->id;
        pf.transform = tr.to_string();
        pf.name = field_name(t, tr);
        for (auto& have : out.fields)
            if (have.name == pf.name)
                return fail(errc::invalid_argument, "partition spec term '{}': a second field named {}", t.text, pf.name);
        pf.field_id = 0;
        for (auto& p : existing)
            for (auto& f : p.fields)
                if (f.source_id == pf.source_id && f.transform == pf.transform && !pf.field_id) pf.field_id = f.field_id;
        if (!pf.field_id) pf.field_id = next_id++;
        out.fields.push_back(std::move(pf));
    }
    return out;
}

const partition_spec* find_same_spec(std::span<const partition_spec> specs, const partition_spec& spec) {
    for (auto& p : specs) {
        if (p.fields.size() != spec.fields.size()) continue;
        bool same = true;
        for (size_t i = 0; i < p.fields.size() && same; ++i)
            same = p.fields[i].source_id == spec.fields[i].source_id && p.fields[i].transform == spec.fields[i].transform
                   && p.fields[i].name == spec.fields[i].name;
        if (same) return &p;
    }
    return nullptr;
}

int stream_key_field(const partition_spec& spec) {
    for (size_t i = 0; i < spec.fields.size(); ++i)
        if (spec.fields[i].source_id == field_ids::stream_key && spec.fields[i].transform == "identity")
            return static_cast<int>(i);
    return -1;
}

std::optional<std::string> file_stream_key(const data_file& f, std::span<const partition_spec> specs) {
    for (auto& p : specs) {
        if (p.spec_id != f.spec_id) continue;
        int i = stream_key_field(p);
        if (i >= 0 && static_cast<size_t>(i) < f.partition.size()
            && f.partition[static_cast<size_t>(i)].type() == avro::datum::kind::string)
            return f.partition[static_cast<size_t>(i)].as_string();
        break;
    }
    auto lo = f.lower_bounds.find(field_ids::stream_key), hi = f.upper_bounds.find(field_ids::stream_key);
    if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end() && lo->second == hi->second) return lo->second;
    return std::nullopt;
}

} // namespace floe::iceberg
