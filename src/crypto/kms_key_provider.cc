#include "crypto/kms_key_provider.h"

#include <spdlog/spdlog.h>

namespace floe::crypto {

namespace {

aws::service_options probe_options(aws::service_options o) {
    o.max_attempts = 1;
    o.request_timeout = std::min(o.request_timeout, std::chrono::milliseconds(3'000));
    o.connect_timeout = std::min(o.connect_timeout, std::chrono::milliseconds(3'000));
    return o;
}

} // namespace

kms_key_provider::kms_key_provider(aws::service_options service, std::string key_id,
                                   int data_key_bits, size_t cache_entries)
    : _kms(service), _probe(probe_options(std::move(service))), _key_id(std::move(key_id)),
      _bits(data_key_bits), _cache(std::max<size_t>(cache_entries, 1)) {}

void kms_key_provider::remember(const std::vector<uint8_t>& key_metadata, const secret_key& key) {
    std::lock_guard g(_mu);
    _cache.put(std::string(as_chars(key_metadata)), key);
    _last_ok = std::chrono::steady_clock::now();
}

void kms_key_provider::mark_ok() {
    std::lock_guard g(_mu);
    _last_ok = std::chrono::steady_clock::now();
}

void kms_key_provider::mark_failed(const error& e) {
    if (!e.retryable()) return; // a wrong key id or a refused blob is not an outage
    std::lock_guard g(_mu);
    _last_outage = std::chrono::steady_clock::now();
    _outage = e.message();
}

result<data_key> kms_key_provider::data_key_for_new_file(std::string_view table) {
    return data_key_under(table, _key_id);
}

result<data_key> kms_key_provider::data_key_under(std::string_view table, std::string_view key_id) {
    auto got = _kms.generate_data_key(std::string(key_id), _bits);
    if (!got) mark_failed(got.error());
    auto dk = FLOE_TRY_CTX(std::move(got), "data key of KMS key '{}' for a new file of table {}", key_id, table);
    data_key out;
    out.key = secret_key(std::move(dk.plaintext));
    out.key_id = dk.key_arn;
    out.key_metadata = encode_key_metadata({1, "aws-kms", dk.key_arn, std::move(dk.wrapped)});
    remember(out.key_metadata, out.key);
    return out;
}

result<secret_key> kms_key_provider::key_for(bytes_view key_metadata) {
    std::string cache_key(as_chars(key_metadata));
    {
        std::lock_guard g(_mu);
        if (auto* k = _cache.get(cache_key)) {
            ++_hits;
            return *k;
        }
    }
    auto info = FLOE_TRY(parse_key_metadata(key_metadata));
    if (info.provider != "aws-kms")
        return fail(
            errc::corrupt,
            "key '{}' was made by the {} key provider, and floe.encryption.provider is aws-kms",
            info.key_id, info.provider);
    auto unwrapped = _kms.decrypt(info.key_id, info.wrapped_key);
    if (!unwrapped) mark_failed(unwrapped.error());
    auto raw = FLOE_TRY(std::move(unwrapped));
    secret_key key(std::move(raw));
    if (key.size() != 16 && key.size() != 32)
        return fail(errc::corrupt,
                    "KMS Decrypt with key '{}': a {}-byte data key (16 or 32 expected)",
                    info.key_id, key.size());
    {
        std::lock_guard g(_mu);
        _cache.put(cache_key, key);
        _last_ok = std::chrono::steady_clock::now();
    }
    return key;
}

std::string kms_key_provider::describe() const {
    return fmt::format("aws-kms key '{}' ({} data keys) via {}", _key_id,
                       _bits == 256 ? "AES_256" : "AES_128", _kms.describe());
}

result<void> kms_key_provider::check() {
    {
        std::lock_guard g(_mu);
        auto now = std::chrono::steady_clock::now();
        // A recent outage is reported as it is; an older one is probed again below.
        if (_last_outage > _last_ok && now - _last_outage < std::chrono::seconds(5))
            return fail(errc::unavailable, "the latest KMS request failed: {}", _outage);
        if (_last_ok != std::chrono::steady_clock::time_point{} && _last_ok > _last_outage
            && now - _last_ok < std::chrono::minutes(1))
            return {};
    }
    auto got = _kms.generate_data_key(_key_id, _bits);
    if (!got) mark_failed(got.error());
    auto dk = FLOE_TRY_CTX(std::move(got), "key provider check");
    secret_key dropped(std::move(dk.plaintext)); // wiped on the way out
    mark_ok();
    return {};
}

result<void> kms_key_provider::check_key(std::string_view key_id) {
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard g(_mu);
        if (auto it = _usable.find(key_id); it != _usable.end() && now - it->second < std::chrono::minutes(10))
            return {};
    }
    auto arn = _probe.probe_key(std::string(key_id), _bits);
    if (!arn) return fail(std::move(arn).error());
    std::lock_guard g(_mu);
    if (_usable.size() >= 1'000) _usable.clear(); // bounded; a cleared answer costs one probe
    _usable[std::string(key_id)] = now;
    return {};
}

uint64_t kms_key_provider::cache_hits() const {
    std::lock_guard g(_mu);
    return _hits;
}

size_t kms_key_provider::cached_keys() const {
    std::lock_guard g(_mu);
    return _cache.size();
}

} // namespace floe::crypto
