#include "app/encryption.h"

#include "app/storage.h"

#include <cstdlib>

namespace floe::app {

crypto::key_provider_options key_provider_options_from(const config::settings& s) {
    crypto::key_provider_options o;
    o.provider = s.get_optional("floe.encryption.provider").value_or("");
    o.keyring_file = s.get_optional("floe.encryption.keyring-file").value_or("");
    o.kms_key_id = s.get_optional("floe.encryption.kms.key-id").value_or("");
    o.kms_region = s.get_optional("floe.encryption.kms.region").value_or("");
    if (o.kms_region.empty()) o.kms_region = default_aws_region(s);
    o.kms_endpoint = s.get_optional("floe.encryption.kms.endpoint").value_or("");
    if (o.kms_endpoint.empty())
        if (const char* e = std::getenv("AWS_ENDPOINT_URL_KMS"); e && *e) o.kms_endpoint = e;
    o.kms_data_key_bits =
        s.get_string("floe.encryption.kms.data-key-spec") == "AES_128" ? 128 : 256;
    o.kms_cache_entries = static_cast<size_t>(s.get_int("floe.encryption.kms.cache-size"));
    o.kms_max_attempts = static_cast<int>(s.get_int("floe.encryption.kms.max-attempts"));
    o.kms_request_timeout = s.get_duration("floe.encryption.kms.request-timeout");
    if (o.provider == "aws-kms") o.credentials = make_aws_credentials(s);
    return o;
}

result<std::shared_ptr<crypto::key_provider>> open_key_provider(const config::settings& s) {
    auto o = key_provider_options_from(s);
    if (o.provider.empty()) return std::shared_ptr<crypto::key_provider>();
    return crypto::make_key_provider(o);
}

} // namespace floe::app
