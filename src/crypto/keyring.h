#pragma once

// The keyring key provider: a local JSON file of key ids and 128- or 256-bit keys, one marked
// current (floe.encryption.keyring-file):
//   {"current": "k2", "keys": {"k1": "<base64 key>", "k2": "<base64 key>"}}
// New files are encrypted with the current key itself (so a person given the key reads every
// file of the table with DuckDB's footer_key); key_metadata names the id, never the key.
// Rotation: add a key, make it current; files of the old ids stay readable while their key is
// in the file.

#include "crypto/key_provider.h"

#include <map>
#include <shared_mutex>

namespace floe::crypto {

/// A parsed keyring: ids to keys, and the current id (always one of them).
struct keyring {
    std::string current;
    std::map<std::string, secret_key, std::less<>> keys;
};

/// Parses keyring JSON. `where` names the source in errors ("floe.encryption.keyring-file
/// /etc/floe/keys.json"). errc::invalid_argument for bad JSON (the position only: the text
/// may hold keys), a missing or unknown `current`, an empty or over-long id (1..255 bytes,
/// no control characters), a key that is not strict base64, or not 16 or 32 bytes.
result<keyring> parse_keyring(std::string_view json, std::string_view where);

/// Reads the keyring file after checking it: a regular file whose mode gives group and others
/// nothing (0600 or 0400, say); else errc::invalid_argument naming the setting, the path and
/// the mode ("mode 0644 lets group or others read it: chmod 600 ...").
result<keyring> read_keyring_file(const std::string& path);

/// Thread-safe: lookups share a lock, reload() takes it exclusively.
class keyring_provider final : public key_provider {
public:
    /// Reads and checks the file (read_keyring_file).
    static result<std::shared_ptr<keyring_provider>> open(std::string path);
    /// From a parsed keyring (tests, tools); reload() then fails.
    explicit keyring_provider(keyring k, std::string path = {});

    result<data_key> data_key_for_new_file(std::string_view table) override;
    result<data_key> data_key_under(std::string_view table, std::string_view key_id) override;
    result<secret_key> key_for(bytes_view key_metadata) override;
    std::string_view kind() const noexcept override { return "keyring"; }
    std::string describe() const override;
    result<void> check() override { return {}; }
    result<void> check_key(std::string_view key_id) override;

    /// Reads the file again (on SIGHUP or `floe` admin request). On any error the keyring in
    /// use stays as it was and the error is returned.
    result<void> reload();
    std::string current_id() const;

private:
    std::string _path;
    mutable std::shared_mutex _mu;
    keyring _ring;
};

} // namespace floe::crypto
