#include "crypto/keyring.h"

#include "base/base64.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace floe::crypto {
namespace {

constexpr std::string_view setting = "floe.encryption.keyring-file";

result<void> check_id(std::string_view id, std::string_view where) {
    if (id.empty() || id.size() > 255)
        return fail(errc::invalid_argument, "{}: key id '{}' must be 1 to 255 bytes", where, id);
    for (unsigned char c : id)
        if (c < 0x20 || c == 0x7f)
            return fail(errc::invalid_argument, "{}: key id with a control character", where);
    return {};
}

} // namespace

result<keyring> parse_keyring(std::string_view text, std::string_view where) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.what() quotes the text around the error, which may be a key: only the position.
        return fail(errc::invalid_argument, "{}: not valid JSON (at byte {})", where, e.byte);
    }
    if (!j.is_object())
        return fail(
            errc::invalid_argument,
            "{}: expected {{\"current\": \"<id>\", \"keys\": {{\"<id>\": \"<base64 key>\"}}}}",
            where);
    for (auto& [k, v] : j.items())
        if (k != "current" && k != "keys")
            return fail(errc::invalid_argument, "{}: unknown field '{}' (current and keys only)",
                        where, k);
    if (!j.contains("keys") || !j["keys"].is_object() || j["keys"].empty())
        return fail(errc::invalid_argument,
                    "{}: 'keys' must be an object of key ids to base64 keys", where);
    if (!j.contains("current") || !j["current"].is_string())
        return fail(errc::invalid_argument, "{}: 'current' must name the key id new files use",
                    where);
    keyring out;
    out.current = j["current"].get<std::string>();
    for (auto& [id, v] : j["keys"].items()) {
        FLOE_TRY(check_id(id, where));
        if (!v.is_string())
            return fail(errc::invalid_argument, "{}: key '{}' must be a base64 string", where, id);
        auto raw = base64_decode(v.get_ref<const std::string&>());
        if (!raw)
            return fail(errc::invalid_argument,
                        "{}: key '{}' is not valid base64 (standard alphabet, padded)", where, id);
        secret_key key(std::move(*raw));
        if (key.size() != 16 && key.size() != 32)
            return fail(
                errc::invalid_argument,
                "{}: key '{}' is {} bits; keys are 128 or 256 bits (16 or 32 bytes before base64)",
                where, id, key.bits());
        out.keys.emplace(id, std::move(key));
    }
    if (!out.keys.contains(out.current))
        return fail(errc::invalid_argument, "{}: current key '{}' is not among the keys", where,
                    out.current);
    return out;
}

result<keyring> read_keyring_file(const std::string& path) {
    if (path.empty())
        return fail(errc::invalid_argument, "{} is not set (floe.encryption.provider=keyring)",
                    setting);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(errno == ENOENT ? errc::not_found : errc::invalid_argument, "{} {}: {}",
                    setting, path, std::strerror(errno));
    struct stat st {};
    // Checked on the open descriptor: the file read is the file checked.
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        return fail(errc::io_error, "{} {}: {}", setting, path, std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return fail(errc::invalid_argument, "{} {}: not a regular file", setting, path);
    }
    if ((st.st_mode & 077) != 0) {
        ::close(fd);
        return fail(errc::invalid_argument,
                    "{} {}: mode {:04o} lets group or others use it; a keyring must be owner-only "
                    "(chmod 600 {})",
                    setting, path, st.st_mode & 07777, path);
    }
    if (st.st_uid != ::geteuid())
        spdlog::warn("{} {}: owned by uid {}, not by this process (uid {})", setting, path,
                     st.st_uid, ::geteuid());
    std::string text;
    char buf[4096];
    for (;;) {
        auto n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            return fail(errc::io_error, "{} {}: {}", setting, path, std::strerror(e));
        }
        if (n == 0) break;
        text.append(buf, size_t(n));
        if (text.size() > (1u << 20)) {
            ::close(fd);
            return fail(errc::invalid_argument, "{} {}: larger than 1 MiB", setting, path);
        }
    }
    ::close(fd);
    auto ring = parse_keyring(text, fmt::format("{} {}", setting, path));
    std::fill(text.begin(), text.end(), '\0');
    return ring;
}

result<std::shared_ptr<keyring_provider>> keyring_provider::open(std::string path) {
    auto ring = FLOE_TRY(read_keyring_file(path));
    return std::make_shared<keyring_provider>(std::move(ring), std::move(path));
}

keyring_provider::keyring_provider(keyring k, std::string path)
    : _path(std::move(path)), _ring(std::move(k)) {
    FLOE_ASSERT(_ring.keys.contains(_ring.current), "keyring without its current key");
}

result<data_key> keyring_provider::data_key_for_new_file(std::string_view) {
    std::shared_lock g(_mu);
    data_key out;
    out.key_id = _ring.current;
    out.key = _ring.keys.find(_ring.current)->second;
    out.key_metadata = encode_key_metadata({1, "keyring", _ring.current, {}});
    return out;
}

result<data_key> keyring_provider::data_key_under(std::string_view table, std::string_view key_id) {
    std::shared_lock g(_mu);
    auto it = _ring.keys.find(std::string(key_id));
    if (it == _ring.keys.end())
        return fail(errc::not_found, "key '{}' (asked for a column of table {}) is not in the keyring{}{}", key_id,
                    table, _path.empty() ? "" : " ", _path);
    data_key out;
    out.key_id = it->first;
    out.key = it->second;
    out.key_metadata = encode_key_metadata({1, "keyring", it->first, {}});
    return out;
}

result<void> keyring_provider::check_key(std::string_view key_id) {
    std::shared_lock g(_mu);
    if (!_ring.keys.contains(std::string(key_id)))
        return fail(errc::not_found, "key '{}' is not in the keyring{}{} (add it, or name one of its keys)", key_id,
                    _path.empty() ? "" : " ", _path);
    return {};
}

result<secret_key> keyring_provider::key_for(bytes_view key_metadata) {
    auto info = FLOE_TRY(parse_key_metadata(key_metadata));
    if (info.provider != "keyring")
        return fail(
            errc::corrupt,
            "key '{}' was made by the {} key provider, and floe.encryption.provider is keyring",
            info.key_id, info.provider);
    std::shared_lock g(_mu);
    auto it = _ring.keys.find(info.key_id);
    if (it == _ring.keys.end())
        return fail(
            errc::not_found,
            "key '{}' is not in the keyring{}{} (its files cannot be read until it is added back)",
            info.key_id, _path.empty() ? "" : " ", _path);
    return it->second;
}

std::string keyring_provider::describe() const {
    std::shared_lock g(_mu);
    return fmt::format("keyring {} (current key '{}', {} key(s))",
                       _path.empty() ? "(in memory)" : _path, _ring.current, _ring.keys.size());
}

std::string keyring_provider::current_id() const {
    std::shared_lock g(_mu);
    return _ring.current;
}

result<void> keyring_provider::reload() {
    if (_path.empty()) return fail(errc::unsupported, "keyring without a file: nothing to reload");
    auto ring = FLOE_TRY(read_keyring_file(_path));
    std::unique_lock g(_mu);
    for (auto& [id, key] : _ring.keys)
        if (auto it = ring.keys.find(id); it != ring.keys.end() && !(it->second == key))
            spdlog::warn(
                "{} {}: key '{}' has new bytes; files written with its old value can no longer be "
                "read (rotate by adding an id instead)",
                setting, _path, id);
        else if (it == ring.keys.end())
            spdlog::warn(
                "{} {}: key '{}' was removed; files encrypted with it can no longer be read",
                setting, _path, id);
    if (ring.current != _ring.current)
        spdlog::info("{} {}: current key is now '{}' (was '{}')", setting, _path, ring.current,
                     _ring.current);
    _ring = std::move(ring);
    return {};
}

} // namespace floe::crypto
