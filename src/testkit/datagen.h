#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace floe::testkit {

/// One header of a generated record. Names repeat across records and within one record.
struct gen_header {
    std::string key;
    std::optional<std::string> value; ///< nullopt: a header with a null value
};

/// A generated record: what a producer would send.
struct gen_record {
    std::optional<std::string> key;   ///< nullopt: a null key
    std::optional<std::string> value; ///< nullopt: a tombstone
    std::vector<gen_header> headers;  ///< 0-3 headers
    int64_t timestamp_ms = 0;         ///< producer timestamp, non-decreasing
};

struct datagen_options {
    uint64_t seed = 1;
    size_t value_size = 100;       ///< approximate bytes of each value (JSON-like text)
    size_t distinct_keys = 100000; ///< keys drawn from this many ids
    double null_key_ratio = 0.02;
    double tombstone_ratio = 0.01;
    int64_t start_ts_ms = 1'767'225'600'000; ///< 2026-01-01T00:00:00Z
    int64_t max_ts_step_ms = 3;              ///< timestamps advance by 0..this per record
};

/// Deterministic record generator for tests and benchmarks: the same options give the same
/// records on every machine (own PRNG arithmetic, no std distributions whose output varies by
/// library). Values are JSON-like objects with realistic entropy (field names repeat, values
/// vary: ids, words, numbers, timestamps), not repeated characters, so compression ratios
/// resemble real event streams. Not thread-safe; one generator per thread.
class datagen {
public:
    explicit datagen(datagen_options opts = {});
    gen_record next();
    const datagen_options& options() const noexcept { return _opts; }

private:
    uint64_t rand();
    uint64_t below(uint64_t n) { return rand() % n; }
    bool chance(double p);
    std::string make_value();

    datagen_options _opts;
    uint64_t _state;
    int64_t _ts;
    uint64_t _seq = 0;
};

} // namespace floe::testkit
