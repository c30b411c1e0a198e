#include "format/parquet/encryption.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstring>

namespace floe::parquet {

namespace {
bool valid_key_size(size_t n) {
    return n == 16 || n == 24 || n == 32;
}

const EVP_CIPHER* gcm_cipher(size_t n) {
    return n == 16 ? EVP_aes_128_gcm() : n == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
}
const EVP_CIPHER* ctr_cipher(size_t n) {
    return n == 16 ? EVP_aes_128_ctr() : n == 24 ? EVP_aes_192_ctr() : EVP_aes_256_ctr();
}
EVP_CIPHER_CTX* ctx_of(void* p) {
    return static_cast<EVP_CIPHER_CTX*>(p);
}
} // namespace

result<void> validate(const encryption_config& c) {
    if (!valid_key_size(c.footer_key.size()))
        return fail(errc::invalid_argument,
                    "parquet encryption: footer key of {} bytes (16, 24 or 32 expected)",
                    c.footer_key.size());
    for (auto& [path, k] : c.column_keys)
        if (!valid_key_size(k.key.size()))
            return fail(errc::invalid_argument,
                        "parquet encryption: key of column {} has {} bytes (16, 24 or 32 expected)",
                        path, k.key.size());
    return {};
}

std::string_view to_string(module_type t) {
    switch (t) {
    case module_type::footer:
        return "footer";
    case module_type::column_metadata:
        return "column metadata";
    case module_type::data_page:
        return "data page";
    case module_type::dictionary_page:
        return "dictionary page";
    case module_type::data_page_header:
        return "data page header";
    case module_type::dictionary_page_header:
        return "dictionary page header";
    case module_type::column_index:
        return "column index";
    case module_type::offset_index:
        return "offset index";
    case module_type::bloom_filter_header:
        return "bloom filter header";
    case module_type::bloom_filter_bitset:
        return "bloom filter bitset";
    }
    return "module";
}

namespace crypto {

std::string module_aad(std::string_view file_aad, module_type t, int rg, int col, int page) {
    std::string a;
    a.reserve(file_aad.size() + 7);
    a.append(file_aad);
    a.push_back(static_cast<char>(t));
    auto put16 = [&](int v) {
        a.push_back(static_cast<char>(v & 0xff));
        a.push_back(static_cast<char>((v >> 8) & 0xff));
    };
    if (rg >= 0) {
        put16(rg);
        put16(col);
    }
    if (page >= 0) put16(page);
    return a;
}

std::string random_bytes(size_t n) {
    std::string s(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(s.data()), static_cast<int>(n)) != 1)
        FLOE_ASSERT(false, "RAND_bytes failed");
    return s;
}

result<size_t> module_size(bytes_view in, size_t min_size, std::string_view what) {
    if (in.size() < length_bytes)
        return fail(errc::corrupt, "{}: encrypted module length runs past the end ({} bytes left)",
                    what, in.size());
    uint32_t n;
    std::memcpy(&n, in.data(), 4);
    if (n < min_size || n > in.size() - length_bytes)
        return fail(
            errc::corrupt,
            "{}: encrypted module of {} bytes does not fit ({} bytes available, at least {} "
            "needed)",
            what, n, in.size() - length_bytes, min_size);
    return size_t{n} + length_bytes;
}

module_cipher::module_cipher(std::string_view key) : _key(key) {}

module_cipher::~module_cipher() {
    if (_gcm) EVP_CIPHER_CTX_free(ctx_of(_gcm));
    if (_ctr) EVP_CIPHER_CTX_free(ctx_of(_ctr));
    // Keys do not outlive their use in memory we free.
    OPENSSL_cleanse(_key.data(), _key.size());
}

result<std::unique_ptr<module_cipher>> module_cipher::make(std::string_view key) {
    if (!valid_key_size(key.size()))
        return fail(errc::invalid_argument, "AES key of {} bytes (16, 24 or 32 expected)",
                    key.size());
    std::unique_ptr<module_cipher> c(new module_cipher(key));
    c->_gcm = EVP_CIPHER_CTX_new();
    c->_ctr = EVP_CIPHER_CTX_new();
    if (!c->_gcm || !c->_ctr) return fail(errc::internal, "EVP_CIPHER_CTX_new failed");
    return c;
}

result<void> module_cipher::gcm_encrypt(bytes_view plain, std::string_view aad, byte_buffer& out) {
    if (++_invocations > max_invocations)
        return fail(errc::invalid_argument, "AES-GCM: key used for more than 2^32 modules");
    if (plain.size() > UINT32_MAX - gcm_overhead)
        return fail(errc::invalid_argument, "AES-GCM: module of {} bytes too large", plain.size());
    auto* c = ctx_of(_gcm);
    size_t at = out.size();
    out.resize(at + gcm_overhead + plain.size());
    uint8_t* p = out.data() + at;
    auto len = static_cast<uint32_t>(nonce_bytes + plain.size() + tag_bytes);
    std::memcpy(p, &len, 4);
    uint8_t* nonce = p + 4;
    if (RAND_bytes(nonce, nonce_bytes) != 1) return fail(errc::internal, "RAND_bytes failed");
    int n = 0;
    auto* key = reinterpret_cast<const unsigned char*>(_key.data());
    if (EVP_EncryptInit_ex(c, gcm_cipher(_key.size()), nullptr, key, nonce) != 1
        || (!aad.empty()
            && EVP_EncryptUpdate(c, nullptr, &n, reinterpret_cast<const unsigned char*>(aad.data()),
                                 static_cast<int>(aad.size()))
                   != 1))
        return fail(errc::internal, "AES-GCM encrypt init failed");
    uint8_t* ct = nonce + nonce_bytes;
    // EVP lengths are ints: big pages go through in slices.
    size_t done = 0;
    while (done < plain.size()) {
        int step = static_cast<int>(std::min<size_t>(plain.size() - done, 1u << 30));
        if (EVP_EncryptUpdate(c, ct + done, &n, plain.data() + done, step) != 1)
            return fail(errc::internal, "AES-GCM encrypt failed");
        done += static_cast<size_t>(step);
    }
    if (EVP_EncryptFinal_ex(c, ct + done, &n) != 1
        || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, tag_bytes, ct + plain.size()) != 1)
        return fail(errc::internal, "AES-GCM encrypt final failed");
    return {};
}

result<void> module_cipher::gcm_sign(bytes_view plain, std::string_view aad, byte_buffer& out) {
    // The signature is the nonce and tag of the footer's GCM encryption; the ciphertext is
    // dropped (Encryption.md 5.5).
    byte_buffer tmp;
    FLOE_TRY(gcm_encrypt(plain, aad, tmp));
    out.insert(out.end(), tmp.begin() + length_bytes, tmp.begin() + length_bytes + nonce_bytes);
    out.insert(out.end(), tmp.end() - tag_bytes, tmp.end());
    return {};
}

result<bool> module_cipher::gcm_verify_signature(bytes_view plain, std::string_view aad,
                                                 bytes_view sig) {
    if (sig.size() != nonce_bytes + tag_bytes)
        return fail(errc::corrupt, "footer signature of {} bytes", sig.size());
    auto* c = ctx_of(_gcm);
    auto* key = reinterpret_cast<const unsigned char*>(_key.data());
    int n = 0;
    if (EVP_EncryptInit_ex(c, gcm_cipher(_key.size()), nullptr, key, sig.data()) != 1
        || (!aad.empty()
            && EVP_EncryptUpdate(c, nullptr, &n, reinterpret_cast<const unsigned char*>(aad.data()),
                                 static_cast<int>(aad.size()))
                   != 1))
        return fail(errc::internal, "AES-GCM init failed");
    byte_buffer ct(plain.size() + 16);
    size_t done = 0;
    while (done < plain.size()) {
        int step = static_cast<int>(std::min<size_t>(plain.size() - done, 1u << 30));
        if (EVP_EncryptUpdate(c, ct.data() + done, &n, plain.data() + done, step) != 1)
            return fail(errc::internal, "AES-GCM failed");
        done += static_cast<size_t>(step);
    }
    uint8_t tag[tag_bytes];
    if (EVP_EncryptFinal_ex(c, ct.data() + done, &n) != 1
        || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, tag_bytes, tag) != 1)
        return fail(errc::internal, "AES-GCM final failed");
    return CRYPTO_memcmp(tag, sig.data() + nonce_bytes, tag_bytes) == 0;
}

result<void> module_cipher::gcm_decrypt(bytes_view module, std::string_view aad, byte_buffer& out) {
    if (module.size() < gcm_overhead)
        return fail(errc::corrupt, "AES-GCM module of {} bytes is too short", module.size());
    uint32_t len;
    std::memcpy(&len, module.data(), 4);
    if (len != module.size() - length_bytes)
        return fail(errc::corrupt, "AES-GCM module length {} differs from its {} bytes", len,
                    module.size() - length_bytes);
    const uint8_t* nonce = module.data() + length_bytes;
    const uint8_t* ct = nonce + nonce_bytes;
    size_t ct_len = module.size() - gcm_overhead;
    const uint8_t* tag = ct + ct_len;
    auto* c = ctx_of(_gcm);
    auto* key = reinterpret_cast<const unsigned char*>(_key.data());
    int n = 0;
    if (EVP_DecryptInit_ex(c, gcm_cipher(_key.size()), nullptr, key, nonce) != 1
        || (!aad.empty()
            && EVP_DecryptUpdate(c, nullptr, &n, reinterpret_cast<const unsigned char*>(aad.data()),
                                 static_cast<int>(aad.size()))
                   != 1))
        return fail(errc::internal, "AES-GCM decrypt init failed");
    out.resize(ct_len);
    size_t done = 0;
    while (done < ct_len) {
        int step = static_cast<int>(std::min<size_t>(ct_len - done, 1u << 30));
        if (EVP_DecryptUpdate(c, out.data() + done, &n, ct + done, step) != 1)
            return fail(errc::internal, "AES-GCM decrypt failed");
        done += static_cast<size_t>(step);
    }
    if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, tag_bytes, const_cast<uint8_t*>(tag)) != 1)
        return fail(errc::internal, "AES-GCM set tag failed");
    if (EVP_DecryptFinal_ex(c, out.data() + done, &n) != 1) {
        out.clear();
        return fail(errc::corrupt,
                    "AES-GCM tag does not verify (wrong key, wrong AAD prefix, or the bytes were "
                    "changed or moved)");
    }
    return {};
}

namespace {
result<void> ctr_apply(EVP_CIPHER_CTX* c, const std::string& k, const uint8_t* nonce,
                       const uint8_t* in, size_t n, uint8_t* out) {
    // IV: the 12-byte nonce and a 4-byte counter starting at 1 (Encryption.md 4.2.2).
    uint8_t iv[16];
    std::memcpy(iv, nonce, nonce_bytes);
    iv[12] = iv[13] = iv[14] = 0;
    iv[15] = 1;
    auto* key = reinterpret_cast<const unsigned char*>(k.data());
    if (EVP_EncryptInit_ex(c, ctr_cipher(k.size()), nullptr, key, iv) != 1)
        return fail(errc::internal, "AES-CTR init failed");
    size_t done = 0;
    int m = 0;
    while (done < n) {
        int step = static_cast<int>(std::min<size_t>(n - done, 1u << 30));
        if (EVP_EncryptUpdate(c, out + done, &m, in + done, step) != 1)
            return fail(errc::internal, "AES-CTR failed");
        done += static_cast<size_t>(step);
    }
    return {};
}
} // namespace

result<void> module_cipher::ctr_encrypt(bytes_view plain, byte_buffer& out) {
    if (++_invocations > max_invocations)
        return fail(errc::invalid_argument, "AES: key used for more than 2^32 modules");
    if (plain.size() > UINT32_MAX - ctr_overhead)
        return fail(errc::invalid_argument, "AES-CTR: module of {} bytes too large", plain.size());
    size_t at = out.size();
    out.resize(at + ctr_overhead + plain.size());
    uint8_t* p = out.data() + at;
    auto len = static_cast<uint32_t>(nonce_bytes + plain.size());
    std::memcpy(p, &len, 4);
    if (RAND_bytes(p + 4, nonce_bytes) != 1) return fail(errc::internal, "RAND_bytes failed");
    return ctr_apply(ctx_of(_ctr), _key, p + 4, plain.data(), plain.size(), p + ctr_overhead);
}

result<void> module_cipher::ctr_decrypt(bytes_view module, byte_buffer& out) {
    if (module.size() < ctr_overhead)
        return fail(errc::corrupt, "AES-CTR module of {} bytes is too short", module.size());
    uint32_t len;
    std::memcpy(&len, module.data(), 4);
    if (len != module.size() - length_bytes)
        return fail(errc::corrupt, "AES-CTR module length {} differs from its {} bytes", len,
                    module.size() - length_bytes);
    out.resize(module.size() - ctr_overhead);
    return ctr_apply(ctx_of(_ctr), _key, module.data() + 4, module.data() + ctr_overhead,
                     out.size(), out.data());
}

} // namespace crypto
} // namespace floe::parquet
