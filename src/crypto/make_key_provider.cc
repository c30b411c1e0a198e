#include "crypto/key_provider.h"
#include "crypto/keyring.h"
#include "crypto/kms_key_provider.h"

namespace floe::crypto {

result<std::shared_ptr<key_provider>> make_key_provider(const key_provider_options& o) {
    if (o.provider == "keyring") {
        auto k = FLOE_TRY(keyring_provider::open(o.keyring_file));
        return std::shared_ptr<key_provider>(std::move(k));
    }
    if (o.provider == "aws-kms") {
        if (o.kms_key_id.empty())
            return fail(errc::invalid_argument, "floe.encryption.kms.key-id is not set "
                                                "(floe.encryption.provider=aws-kms): a KMS key id, "
                                                "key ARN or alias/<name>");
        if (o.kms_data_key_bits != 128 && o.kms_data_key_bits != 256)
            return fail(errc::invalid_argument,
                        "floe.encryption.kms.data-key-spec: AES_256 or AES_128");
        aws::service_options s;
        s.region = o.kms_region.empty() ? "us-east-1" : o.kms_region;
        s.endpoint = o.kms_endpoint;
        s.credentials = o.credentials;
        s.max_attempts = std::max(o.kms_max_attempts, 1);
        s.request_timeout = o.kms_request_timeout;
        s.retry_base = o.kms_retry_base;
        return std::shared_ptr<key_provider>(std::make_shared<kms_key_provider>(
            std::move(s), o.kms_key_id, o.kms_data_key_bits, o.kms_cache_entries));
    }
    return fail(errc::invalid_argument, "floe.encryption.provider '{}': keyring or aws-kms",
                o.provider);
}

} // namespace floe::crypto
