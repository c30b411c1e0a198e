#pragma once

#include "base/result.h"
#include "config/units.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::config {

enum class setting_type { string, boolean, integer, size, duration, choice, address, uri };
std::string_view to_string(setting_type t);

/// One entry of the typed registry: everything `floe --help`, `floe config` and validation need.
struct setting_def {
    std::string name;        ///< "floe.storage.worker.tick-interval"
    setting_type type;
    std::string default_text; ///< empty with `derived_from` set: computed from another setting
    std::string description;
    int64_t min = INT64_MIN; ///< bounds for integer/size/duration (ms) types
    int64_t max = INT64_MAX;
    std::vector<std::string> choices; ///< for choice
    bool optional = false;            ///< may stay unset (no default)
    bool secret = false;              ///< redacted by `floe config`
    std::string derived_from;         ///< name of the setting a derived default depends on
    /// "FLOE_" + the name without "floe.", upper case, '.' and '-' as '_'.
    std::string env_name() const;
};

/// The registry of every setting Floe knows, built once; lives for the whole process.
class registry {
public:
    static const registry& instance();
    const setting_def* find(std::string_view name) const;
    const std::vector<setting_def>& all() const noexcept { return _defs; }
    /// Kafka topic config names that `floe.topic-defaults.<name>` accepts.
    static constexpr std::string_view topic_defaults_prefix = "floe.topic-defaults.";
    /// `floe.ingest.sources.<name>.<key>`: a dynamic family (the names are the user's), checked
    /// by `check_ingest_key` instead of the registry.
    static constexpr std::string_view ingest_sources_prefix = "floe.ingest.sources.";

private:
    registry();
    std::vector<setting_def> _defs;
};

enum class source_kind { builtin, derived, file, env, cli };

/// Where a value came from, for `floe config` and for error messages.
struct value_source {
    source_kind kind = source_kind::builtin;
    std::string origin; ///< "floe.yaml:12", "FLOE_KAFKA_LISTEN", "--set", "floe.data-dir"
    std::string describe() const;
};

/// Effective settings: every registered setting resolved to a validated value and its source.
/// Immutable once loaded; safe to read from any thread.
class settings {
public:
    /// Typed getters; the name must be registered with that type (checked, aborts otherwise:
    /// a mismatch is a programming error, not a user error).
    const std::string& get_string(std::string_view name) const;
    std::optional<std::string> get_optional(std::string_view name) const;
    bool get_bool(std::string_view name) const;
    int64_t get_int(std::string_view name) const;
    int64_t get_size(std::string_view name) const;
    std::chrono::milliseconds get_duration(std::string_view name) const;
    host_port get_address(std::string_view name) const;

    /// Kafka topic config defaults ("segment.ms" -> "604800000"), as Kafka spells values.
    /// With `overridden_only`, only those set by a file, the environment or --set (the others
    /// are Kafka's own defaults, which the broker reports as such).
    std::map<std::string, std::string> topic_defaults(bool overridden_only = false) const;

    /// One ingest source as configured: `floe.ingest.sources.<name>.<key>` values by key
    /// ("type", "bootstrap-servers", "librdkafka.security.protocol", ...), validated.
    struct ingest_source {
        std::string name;
        std::map<std::string, std::string> values;
        std::map<std::string, value_source> sources; ///< where each value came from
        std::string get(std::string_view key, std::string_view fallback = {}) const;
    };
    /// Every configured ingest source, by name.
    const std::map<std::string, ingest_source>& ingest_sources() const noexcept { return _ingest; }
    /// floe.storage.remote.catalog.header.<Name>=<value>: extra headers for the REST catalog.
    const std::map<std::string, std::string>& catalog_headers() const noexcept { return _catalog_headers; }
    static constexpr std::string_view catalog_headers_prefix = "floe.storage.remote.catalog.header.";

    struct entry {
        const setting_def* def;
        std::optional<std::string> text; ///< normalized text; nullopt when an optional is unset
        value_source source;
    };
    const std::vector<entry>& entries() const noexcept { return _entries; }

    /// Sets one value from a source, validating it. Used by the loader and by tests.
    result<void> set(std::string_view name, std::string_view text, value_source source);
    /// Fills derived defaults (paths under the data dir, advertised listener). Call after all sources.
    result<void> resolve_derived();

    static settings defaults();

private:
    const entry& find_entry(std::string_view name, setting_type type) const;
    result<void> set_ingest(std::string_view name, std::string_view text, value_source source);
    result<void> check_ingest_sources() const;
    std::vector<entry> _entries;
    std::map<std::string, ingest_source> _ingest;
    std::map<std::string, std::string> _catalog_headers;
};

/// Validates a textual value for a setting; returns its normalized text.
result<std::string> validate(const setting_def& def, std::string_view text);

/// Where settings come from, lowest precedence first: defaults, the YAML file, the environment,
/// then `--set` overrides.
struct load_options {
    std::optional<std::string> config_path; ///< --config; else ./floe.yaml when it exists
    std::string default_config_path = "floe.yaml";
    std::vector<std::string> overrides;     ///< "key=value" from --set, in order
    std::span<char* const> environment;     ///< "NAME=value" strings (environ); empty: none
};

/// Loads and validates everything. Unknown keys, wrong types and out-of-range values fail with
/// errc::invalid_argument and a message naming the key and the source.
result<settings> load(const load_options& opts);

} // namespace floe::config
