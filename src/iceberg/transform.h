#pragma once

#include "base/bytes.h"
#include "base/partition_spec_text.h"
#include "base/result.h"
#include "format/avro/datum.h"
#include "iceberg/schema.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::iceberg {

struct data_file;
struct table_metadata;

/// An Iceberg partition transform (spec "Partition Transforms").
struct transform {
    enum class kind : uint8_t { identity, bucket, truncate, year, month, day, hour, void_ };
    kind how = kind::identity;
    int32_t param = 0;  ///< bucket: N; truncate: W

    /// "identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void".
    static result<transform> parse(std::string_view text);
    std::string to_string() const;
    bool is_time() const noexcept { return how >= kind::year && how <= kind::hour; }

    /// The transform's result type for `source`, or errc::invalid_argument when the source type
    /// cannot be transformed so. Floe's own time columns (message_ts, kafka_timestamp) are
    /// `long` milliseconds since the epoch: the time transforms take `long` sources as such.
    result<type_ptr> result_type(const type& source) const;

    /// Applies the transform to a value of the source type (null: null). Values as manifests
    /// hold them: string (string), binary/fixed/uuid (bytes), int and date (int), long, time,
    /// timestamp and timestamptz (long; micros, or millis for a long source of a time
    /// transform), decimal (bytes: the unscaled value big-endian, two's complement).
    result<avro::datum> apply(const type& source, const avro::datum& v) const;

    /// A value of the result type as text for a partition directory, as Spark writes it:
    /// day 2026-12-03, hour 2026-12-03-14, month 2026-12, year 2026, ints in decimal, strings
    /// as they are (the caller escapes), binary as base64, null as "null".
    std::string human(const type& result, const avro::datum& v) const;

    bool operator==(const transform&) const = default;
};

/// MurmurHash3 x86 32-bit (seed 0), as Iceberg's bucket transform uses it.
uint32_t murmur3_x86_32(bytes_view data, uint32_t seed = 0);
/// Iceberg's 32-bit hash of a value (Appendix B): ints, longs, dates, times and timestamps as
/// the 8-byte little-endian long; strings as UTF-8; binary, fixed and uuid as bytes; decimals
/// as the minimal big-endian two's-complement bytes of the unscaled value.
result<int32_t> iceberg_hash(const type& source, const avro::datum& v);

/// Days since 1970-01-01 for a civil date, and back.
int32_t days_from_civil(int32_t y, uint32_t m, uint32_t d) noexcept;
void civil_from_days(int64_t days, int32_t& y, uint32_t& m, uint32_t& d) noexcept;

/// Builds a partition spec from its text (floe.iceberg.partition-spec) over `s`: sources are
/// top-level columns or dotted paths of nested struct fields (not inside lists or maps);
/// partition field names as Iceberg's Java builder makes them (identity: the column;
/// day(message_ts): message_ts_day; bucket[16](key): key_bucket_16; truncate[4](x): x_trunc_4;
/// void(x): x_null). Field ids: a field with the same source and transform as in one of
/// `existing` keeps that field's id, others take ids after `last_partition_id` (in order).
/// Errors (errc::invalid_argument) name the term.
result<partition_spec> build_partition_spec(const schema& s, const std::vector<partition_term>& terms,
                                            std::span<const partition_spec> existing, int32_t last_partition_id);

/// The spec of `specs` with the same fields (source, transform, name), or nullptr.
const partition_spec* find_same_spec(std::span<const partition_spec> specs, const partition_spec& spec);

/// Index of the spec's identity(stream_key) field, or -1.
int stream_key_field(const partition_spec& spec);

/// The stream key of a Floe data file: its identity(stream_key) partition value when its spec
/// has one, else its stream_key column bounds when they are equal (Floe writes one stream key
/// per data file whatever the spec, with exact bounds). nullopt when neither says.
std::optional<std::string> file_stream_key(const data_file& f, std::span<const partition_spec> specs);

} // namespace floe::iceberg
