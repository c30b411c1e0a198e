#pragma once

#include "base/result.h"
#include "kafka/scram.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::kafka {

/// The SASL user store: `<dir>/users.json` (mode 0600, directory 0700), one object per user
/// with, per SCRAM mechanism, the salt, the iteration count, StoredKey and ServerKey (base64) —
/// never a password. PLAIN is checked against these credentials by deriving them again.
///
/// Shared by the broker and `floe users`, whether or not a server runs: every change takes an
/// exclusive lock (`<dir>/users.lock`), re-reads the file, applies itself and replaces the file
/// atomically; readers look at the file's identity (inode, size, mtime) before each lookup
/// and re-read it when it changed, so a running broker sees changes at the next authentication.
/// Thread-safe.
class user_store {
public:
    explicit user_store(std::filesystem::path dir);

    /// The credential of `user` for `m`; nullopt when the user or the mechanism is unknown
    /// (or the file is unreadable: logged, the last good content is kept).
    std::optional<scram_credential> credential(const std::string& user, scram_mechanism m);
    /// Whether `password` is `user`'s, checked against the strongest credential the user has.
    bool check_password(const std::string& user, std::string_view password);

    struct user_entry {
        std::string name;
        std::map<scram_mechanism, int32_t> iterations; ///< mechanisms the user has
    };
    /// Every user, by name. Errors: the file cannot be read or parsed.
    result<std::vector<user_entry>> list();

    /// Adds or replaces `user`'s credential for `m`.
    result<void> upsert(const std::string& user, scram_mechanism m, const scram_credential& c);
    /// Removes `user`'s credential for `m` (every mechanism when nullopt). errc::not_found when
    /// there was nothing to remove.
    result<void> remove(const std::string& user, std::optional<scram_mechanism> m);

    /// Applies several changes under one lock and one write: `fn` edits the map of users
    /// (name -> mechanism -> credential); nothing is written when it fails.
    using users_map = std::map<std::string, std::map<scram_mechanism, scram_credential>>;
    result<void> update(const std::function<result<void>(users_map&)>& fn);

    const std::filesystem::path& path() const noexcept { return _file; }

private:
    /// Re-reads the file when its identity changed. Called with _mu held.
    result<void> refresh_locked();
    std::filesystem::path _dir, _file;
    std::mutex _mu;
    users_map _users;
    struct identity {
        ino_t ino = 0;
        off_t size = -1;
        int64_t mtime_ns = -1;
        bool operator==(const identity&) const = default;
    };
    std::optional<identity> _seen; ///< of the file last read; nullopt: never read
};

/// Parses and serialises users.json (exposed for tests).
result<user_store::users_map> parse_users_json(std::string_view text);
std::string users_json(const user_store::users_map& users);

} // namespace floe::kafka
