#pragma once
// The schema registry's state and operations, over a registry_log (store.h). Confluent's
// semantics: global ids, never reused, shared by identical schemas under different subjects;
// versions per subject; soft and permanent deletes; compatibility levels and modes, globally and
// per subject. Errors carry Confluent's HTTP status and error code.
//
// Thread-safety: every method may be called from any thread. State is read under a shared
// lock; log I/O (catching up, appending) is serialized per process; brokers of a cluster are
// serialized by the log's conditional append. Parsed schemas are cached by id (ids never change
// meaning), so get_by_id costs no store round trip once an id was seen.

#include "schema/compatibility.h"
#include "schema/parsed_schema.h"
#include "schema/store.h"

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace floe::schema {

/// An error as Confluent's API reports it: HTTP status, error_code, message.
struct api_error {
    int http_status = 500;
    int error_code = 50001;
    std::string message;
};
template<typename T>
using api_result = std::expected<T, api_error>;

enum class registry_mode : uint8_t { readwrite, readonly, import_ };
std::string_view to_string(registry_mode m) noexcept;
std::optional<registry_mode> parse_registry_mode(std::string_view s) noexcept;

/// What the typed tables (lake/tiering) need from a registry: schemas by id and the latest
/// version of a subject. Implemented by `registry`; ids are cached.
class registry_client {
public:
    virtual ~registry_client() = default;
    struct subject_version {
        std::string subject;
        int32_t version = 0;
        int32_t id = 0;
        std::shared_ptr<const parsed_schema> schema;
    };
    /// errc::not_found when no schema has that id.
    virtual result<std::shared_ptr<const parsed_schema>> get_by_id(int32_t id) = 0;
    /// The newest live version of `subject`; errc::not_found when it has none.
    virtual result<subject_version> latest(std::string_view subject) = 0;
};

/// A schema as a client sends it (register, lookup, compatibility).
struct schema_request {
    std::string schema;
    schema_type type = schema_type::avro;
    std::vector<schema_reference> references;
    bool normalize = false;
    std::optional<int32_t> id;      ///< IMPORT mode
    std::optional<int32_t> version; ///< IMPORT mode
};

/// A subject's version as the API shows it.
struct version_view {
    std::string subject;
    int32_t version = 0;
    int32_t id = 0;
    schema_type type = schema_type::avro;
    std::string schema;
    std::vector<schema_reference> references;
    bool deleted = false;
};

struct schema_view {
    int32_t id = 0;
    schema_type type = schema_type::avro;
    std::string schema;
    std::vector<schema_reference> references;
};

struct registry_options {
    size_t max_schema_bytes = 1 << 20;
    int max_depth = 64;             ///< schema nesting (each parser's limit)
    int max_reference_depth = 16;   ///< references of references ...
    int max_append_attempts = 200;  ///< conditional appends lost to other writers before 50001
};

class registry final : public registry_client {
public:
    explicit registry(std::shared_ptr<registry_log> log, registry_options opts = {});

    /// Reads the log up to its end (start-up; also what every fresh read does).
    result<void> refresh();
    /// Records applied so far (the log position this registry has seen).
    uint64_t position() const;

    // registry_client
    result<std::shared_ptr<const parsed_schema>> get_by_id(int32_t id) override;
    result<subject_version> latest(std::string_view subject) override;

    // Subjects and versions. `version` is "latest", "-1" or a number in [1, 2^31-1].
    api_result<std::vector<std::string>> subjects(std::string_view prefix, bool deleted);
    api_result<std::vector<int32_t>> versions(const std::string& subject, bool deleted);
    api_result<version_view> get_version(const std::string& subject, std::string_view version, bool deleted);
    api_result<std::vector<int32_t>> referenced_by(const std::string& subject, std::string_view version);
    /// POST /subjects/{s}: the version of `subject` holding this schema.
    api_result<version_view> lookup(const std::string& subject, const schema_request& req, bool deleted);
    /// POST /subjects/{s}/versions: the schema's id (existing or new).
    api_result<int32_t> register_schema(const std::string& subject, const schema_request& req);
    api_result<std::vector<int32_t>> delete_subject(const std::string& subject, bool permanent);
    api_result<int32_t> delete_version(const std::string& subject, std::string_view version, bool permanent);

    // Schemas by id.
    api_result<schema_view> schema_by_id(int32_t id);
    api_result<std::vector<std::pair<std::string, int32_t>>> id_versions(int32_t id, bool deleted);

    // Compatibility. `version` empty: against the versions the subject's level names.
    api_result<compatibility_result> check(const std::string& subject, std::string_view version,
                                           const schema_request& req);

    // Config and mode; subject empty = global.
    api_result<compatibility_level> get_config(const std::string& subject, bool default_to_global);
    api_result<compatibility_level> set_config(const std::string& subject, std::string_view level);
    api_result<compatibility_level> delete_config(const std::string& subject);
    api_result<registry_mode> get_mode(const std::string& subject, bool default_to_global);
    api_result<registry_mode> set_mode(const std::string& subject, std::string_view mode, bool force);
    api_result<registry_mode> delete_mode(const std::string& subject);

    static constexpr compatibility_level default_level = compatibility_level::backward;

private:
    struct stored {
        int32_t id = 0;
        schema_type type = schema_type::avro;
        std::string text;
        std::vector<schema_reference> refs;
    };
    struct version_entry {
        int32_t id = 0;
        bool deleted = false;
    };
    struct subject_entry {
        std::map<int32_t, version_entry> versions;
        std::optional<compatibility_level> level;
        std::optional<registry_mode> mode;
        bool live() const;          ///< has a version not soft-deleted
    };

    void apply(const std::string& record);
    result<void> catch_up_locked();  // _io_mu held
    /// Appends `record` (a JSON object without "tok"); retries nothing itself. ok, conflict
    /// (read and re-decide), or an error after which the outcome was settled by reading.
    enum class append_outcome { applied, conflict };
    api_result<append_outcome> append(nlohmann::json record);

    static std::string content_key(schema_type t, std::string_view text, const std::vector<schema_reference>& refs);
    api_result<std::vector<resolved_reference>> resolve_refs(const std::vector<schema_reference>& refs, int depth);
    api_result<std::shared_ptr<const parsed_schema>> parsed_locked(int32_t id, int depth);
    api_result<std::shared_ptr<const parsed_schema>> parse_request(const schema_request& req);
    api_result<int32_t> parse_version_locked(const std::string& subject, std::string_view version, bool deleted,
                                             bool* is_latest = nullptr) const;
    compatibility_level level_locked(const std::string& subject) const;
    registry_mode mode_locked(const std::string& subject) const;
    bool referenced_locked(const std::string& subject, int32_t version) const;

    std::shared_ptr<registry_log> _log;
    registry_options _opts;
    std::mutex _io_mu;               ///< serializes log reads and appends
    mutable std::shared_mutex _mu;   ///< guards the state below
    uint64_t _applied = 0;
    std::map<int32_t, stored> _schemas;
    std::unordered_map<std::string, int32_t> _by_content;
    std::unordered_map<int32_t, int32_t> _uses; ///< id -> versions (soft-deleted too) naming it
    std::map<std::string, subject_entry> _subjects;
    int32_t _max_id = 0;
    std::optional<compatibility_level> _global_level;
    std::optional<registry_mode> _global_mode;
    std::string _pending_token;      ///< the token of the record being appended (under _io_mu)
    bool _pending_seen = false;
    std::mutex _parsed_mu;
    std::unordered_map<int32_t, std::shared_ptr<const parsed_schema>> _parsed;
};

} // namespace floe::schema
