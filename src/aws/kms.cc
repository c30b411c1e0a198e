#include "aws/kms.h"

#include "base/base64.h"
#include "base/metrics.h"

#include <openssl/crypto.h>

namespace floe::aws {
namespace {

// Every KMS call, counted the way the bill counts them: by API.
metrics::family<metrics::counter>& kms_requests() {
    static auto& f = metrics::registry::instance().counter_family(
        "floe_kms_requests_total", "Calls to AWS KMS (retries not counted), by API.",
        {"operation"});
    return f;
}
metrics::family<metrics::counter>& kms_errors() {
    static auto& f = metrics::registry::instance().counter_family(
        "floe_kms_errors_total", "AWS KMS calls that failed, by API and error code.",
        {"operation", "code"});
    return f;
}

// A key's state answers (disabled, pending deletion, access denied) are retryable for the
// offload (an operator fixes them without a restart) and permanent for a probe, which asks
// whether a config may name the key now.
bool key_state_answer(const std::string& code) {
    return code == "DisabledException" || code == "KMSInvalidStateException" || code == "AccessDeniedException"
           || code == "InvalidKeyUsageException";
}

error kms_error(std::string_view op, const std::string& key_id, const service_reply& r, bool probe = false) {
    kms_errors().with({std::string(op), r.code.empty() ? std::to_string(r.status) : r.code}).inc();
    auto e = reply_error(fmt::format("KMS {} with key '{}'", op, key_id), r);
    auto code = e.code();
    if (r.code == "InvalidCiphertextException" || r.code == "IncorrectKeyException")
        code = errc::invalid_argument;
    else if (probe && key_state_answer(r.code))
        code = errc::invalid_argument;
    else if (key_state_answer(r.code) || r.code == "KeyUnavailableException"
             || r.code == "DependencyTimeoutException" || r.code == "KMSInternalException")
        code = errc::unavailable;
    return error(code, e.message());
}

result<std::vector<uint8_t>> blob(const nlohmann::json& j, const char* field, std::string_view op,
                                  const std::string& key_id) {
    if (!j.is_object() || !j.contains(field) || !j[field].is_string())
        return fail(errc::unavailable, "KMS {} with key '{}': the answer has no {}", op, key_id,
                    field);
    auto d = base64_decode(j[field].get_ref<const std::string&>());
    if (!d)
        return fail(errc::unavailable, "KMS {} with key '{}': {} is not base64", op, key_id, field);
    return std::move(*d);
}

} // namespace

kms_client::kms_client(service_options opts) : _client((opts.service = "kms", std::move(opts))) {}

result<kms_data_key> kms_client::generate_data_key(const std::string& key_id, int bits) {
    return generate(key_id, bits, false);
}

result<std::string> kms_client::probe_key(const std::string& key_id, int bits) {
    // DescribeKey first: it tells a disabled, deleted or asymmetric key apart (some KMS
    // implementations generate data keys under those anyway). Floe may lack its permission
    // (the offload needs only GenerateDataKey and Decrypt): then GenerateDataKey alone answers.
    kms_requests().with({"DescribeKey"}).inc();
    auto d = FLOE_TRY_CTX(_client.json_call("TrentService.DescribeKey", nlohmann::json{{"KeyId", key_id}}),
                          "KMS DescribeKey with key '{}'", key_id);
    if (d.ok()) {
        auto j = nlohmann::json::parse(d.body, nullptr, false);
        auto m = j.is_object() && j.contains("KeyMetadata") && j["KeyMetadata"].is_object() ? j["KeyMetadata"]
                                                                                          : nlohmann::json::object();
        auto field = [&](const char* f) { return m.contains(f) && m[f].is_string() ? m[f].get<std::string>() : ""; };
        auto state = field("KeyState"), usage = field("KeyUsage");
        auto spec = field("KeySpec").empty() ? field("CustomerMasterKeySpec") : field("KeySpec");
        auto arn = field("Arn").empty() ? key_id : field("Arn");
        if (!state.empty() && state != "Enabled")
            return fail(errc::invalid_argument, "KMS key '{}' ({}) is {}: enable it (or cancel its deletion) first",
                        key_id, arn, state);
        if ((!usage.empty() && usage != "ENCRYPT_DECRYPT") || (!spec.empty() && spec != "SYMMETRIC_DEFAULT"))
            return fail(errc::invalid_argument,
                        "KMS key '{}' ({}) is a {} key for {}: data keys need a SYMMETRIC_DEFAULT key for "
                        "ENCRYPT_DECRYPT",
                        key_id, arn, spec, usage);
    } else if (d.code != "AccessDeniedException") {
        return fail(kms_error("DescribeKey", key_id, d, true));
    }
    auto dk = FLOE_TRY(generate(key_id, bits, true));
    OPENSSL_cleanse(dk.plaintext.data(), dk.plaintext.size());
    return std::move(dk.key_arn);
}

result<kms_data_key> kms_client::generate(const std::string& key_id, int bits, bool probe) {
    if (bits != 128 && bits != 256)
        return fail(errc::invalid_argument, "KMS GenerateDataKey: {} bits (AES_128 or AES_256)",
                    bits);
    ++_generate_calls;
    kms_requests().with({"GenerateDataKey"}).inc();
    nlohmann::json body{{"KeyId", key_id}, {"KeySpec", bits == 256 ? "AES_256" : "AES_128"}};
    auto r = FLOE_TRY_CTX(_client.json_call("TrentService.GenerateDataKey", body),
                          "KMS GenerateDataKey with key '{}'", key_id);
    if (!r.ok()) return fail(kms_error("GenerateDataKey", key_id, r, probe));
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    kms_data_key out;
    out.plaintext = FLOE_TRY(blob(j, "Plaintext", "GenerateDataKey", key_id));
    out.wrapped = FLOE_TRY(blob(j, "CiphertextBlob", "GenerateDataKey", key_id));
    out.key_arn = j.value("KeyId", key_id);
    if (out.plaintext.size() * 8 != size_t(bits)) {
        OPENSSL_cleanse(out.plaintext.data(), out.plaintext.size());
        return fail(errc::unavailable,
                    "KMS GenerateDataKey with key '{}': a {}-byte key, not {} bits", key_id,
                    out.plaintext.size(), bits);
    }
    return out;
}

result<std::vector<uint8_t>> kms_client::decrypt(const std::string& key_id, bytes_view wrapped) {
    ++_decrypt_calls;
    kms_requests().with({"Decrypt"}).inc();
    nlohmann::json body{{"CiphertextBlob", base64_encode(wrapped)}};
    if (!key_id.empty()) body["KeyId"] = key_id;
    auto r = FLOE_TRY_CTX(_client.json_call("TrentService.Decrypt", body),
                          "KMS Decrypt with key '{}'", key_id);
    if (!r.ok()) return fail(kms_error("Decrypt", key_id, r));
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    return blob(j, "Plaintext", "Decrypt", key_id);
}

} // namespace floe::aws
