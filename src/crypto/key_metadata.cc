#include "crypto/key_provider.h"

#include <openssl/crypto.h>

namespace floe::crypto {

secret_key& secret_key::operator=(const secret_key& o) {
    if (this != &o) {
        wipe();
        _bytes = o._bytes;
    }
    return *this;
}
secret_key& secret_key::operator=(secret_key&& o) noexcept {
    if (this != &o) {
        wipe();
        _bytes = std::move(o._bytes);
        o._bytes.clear();
    }
    return *this;
}
secret_key::~secret_key() {
    wipe();
}
void secret_key::wipe() noexcept {
    if (!_bytes.empty()) OPENSSL_cleanse(_bytes.data(), _bytes.size());
}

namespace {
constexpr uint8_t version_1 = 1;
constexpr uint8_t keyring_tag = 'K', kms_tag = 'M';

void put_u16(std::vector<uint8_t>& out, size_t n) {
    out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(n));
}
} // namespace

std::vector<uint8_t> encode_key_metadata(const key_metadata_info& info) {
    bool kms = info.provider == "aws-kms";
    FLOE_ASSERT(kms || info.provider == "keyring", "unknown key provider kind");
    FLOE_ASSERT(info.key_id.size() <= 0xFFFF && info.wrapped_key.size() <= 0xFFFF,
                "key metadata too long");
    std::vector<uint8_t> out;
    out.reserve(6 + info.key_id.size() + info.wrapped_key.size());
    out.push_back(version_1);
    out.push_back(kms ? kms_tag : keyring_tag);
    put_u16(out, info.key_id.size());
    out.insert(out.end(), info.key_id.begin(), info.key_id.end());
    if (kms) {
        put_u16(out, info.wrapped_key.size());
        out.insert(out.end(), info.wrapped_key.begin(), info.wrapped_key.end());
    }
    return out;
}

result<key_metadata_info> parse_key_metadata(bytes_view m) {
    if (m.size() < 4)
        return fail(errc::corrupt, "key_metadata of {} bytes is not Floe's (too short)", m.size());
    if (m[0] != version_1)
        return fail(errc::corrupt, "key_metadata version {} is not one this Floe reads (1)", m[0]);
    if (m[1] != keyring_tag && m[1] != kms_tag)
        return fail(errc::corrupt, "key_metadata names an unknown key provider (byte {:#04x})",
                    m[1]);
    key_metadata_info out;
    out.version = m[0];
    out.provider = m[1] == kms_tag ? "aws-kms" : "keyring";
    size_t at = 2;
    auto take = [&](std::string_view what) -> result<bytes_view> {
        if (m.size() - at < 2)
            return fail(errc::corrupt, "key_metadata truncated before the {} length", what);
        size_t n = size_t(m[at]) << 8 | m[at + 1];
        at += 2;
        if (m.size() - at < n)
            return fail(errc::corrupt, "key_metadata truncated: {} of {} bytes past the end", what,
                        n);
        auto v = m.subspan(at, n);
        at += n;
        return v;
    };
    auto id = FLOE_TRY(take("key id"));
    out.key_id = std::string(as_chars(id));
    if (out.key_id.empty()) return fail(errc::corrupt, "key_metadata with an empty key id");
    if (m[1] == kms_tag) {
        auto w = FLOE_TRY(take("wrapped key"));
        if (w.empty())
            return fail(errc::corrupt, "key_metadata of KMS key '{}' without a wrapped key",
                        out.key_id);
        out.wrapped_key.assign(w.begin(), w.end());
    }
    if (at != m.size())
        return fail(errc::corrupt, "key_metadata of key '{}' has {} trailing bytes", out.key_id,
                    m.size() - at);
    return out;
}

} // namespace floe::crypto
