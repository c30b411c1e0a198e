#include "app/storage.h"

#include "aws/credentials.h"
#include "iceberg/rest_catalog.h"
#include "iceberg/s3_file_io.h"

#include <spdlog/spdlog.h>

namespace floe::app {

namespace {

/// The configured credentials until a REST catalog vends some; those from then on (the
/// newest vended set wins).
class vended_credentials final : public aws::credentials_provider {
public:
    explicit vended_credentials(std::shared_ptr<aws::credentials_provider> fallback)
        : _fallback(std::move(fallback)) {}
    result<aws::credentials> get() override {
        {
            std::lock_guard g(_mu);
            if (_vended) return *_vended;
        }
        return _fallback->get();
    }
    std::string source() const override {
        std::lock_guard g(_mu);
        return _vended ? "REST catalog (vended)" : _fallback->source();
    }
    void set(const aws::credentials& c) {
        std::lock_guard g(_mu);
        if (!_vended) spdlog::info("s3: using credentials vended by the REST catalog");
        _vended = c;
    }

private:
    mutable std::mutex _mu;
    std::shared_ptr<aws::credentials_provider> _fallback;
    std::optional<aws::credentials> _vended;
};

} // namespace

result<remote_storage> make_file_io(const config::settings& s) {
    auto warehouse = s.get_string("floe.storage.remote.path");
    remote_storage out;
    if (warehouse.starts_with("file://")) {
        out.io = std::make_shared<iceberg::local_file_io>();
        auto root = warehouse;
        out.check = [root] { return result<std::string>(root); };
        return out;
    }
    if (!warehouse.starts_with("s3://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.path={}: use file:///... or s3://bucket/prefix",
                    warehouse);
    auto loc = FLOE_TRY_CTX(aws::parse_s3_uri(warehouse), "floe.storage.remote.path");
    aws::s3_options o;
    o.region = s.get_optional("floe.storage.remote.s3.region").value_or("");
    if (o.region.empty()) o.region = aws::region_from_environment();
    if (o.region.empty()) o.region = "us-east-1";
    o.endpoint = s.get_optional("floe.storage.remote.s3.endpoint").value_or("");
    o.path_style = s.get_optional("floe.storage.remote.s3.path-style-access").has_value()
                   && s.get_bool("floe.storage.remote.s3.path-style-access");
    o.max_connections = static_cast<size_t>(s.get_int("floe.storage.remote.s3.max-connections"));
    o.request_timeout = s.get_duration("floe.storage.remote.s3.request-timeout");
    o.max_attempts = static_cast<int>(s.get_int("floe.storage.remote.s3.max-attempts"));
    o.multipart_part_size =
        static_cast<uint64_t>(s.get_size("floe.storage.remote.s3.multipart-part-size"));
    if (auto id = s.get_optional("floe.storage.remote.s3.access-key-id")) {
        o.credentials = std::make_shared<aws::static_credentials>(aws::credentials{
            *id, s.get_string("floe.storage.remote.s3.secret-access-key"),
            s.get_optional("floe.storage.remote.s3.session-token").value_or("")});
    } else {
        aws::credential_chain_options co;
        co.region = o.region;
        co.settings_hint = "floe.storage.remote.s3.access-key-id and secret-access-key";
        o.credentials = aws::make_default_credential_chain(co);
    }
    if (s.get_string("floe.storage.remote.catalog.type") == "rest") {
        auto v = std::make_shared<vended_credentials>(o.credentials);
        out.vend = [v](const aws::credentials& c) { v->set(c); };
        o.credentials = v;
    }
    spdlog::info("s3: bucket {} in {} via {} ({}-style), credentials from {}", loc.bucket, o.region,
                 o.endpoint.empty() ? "AWS" : o.endpoint, o.path_style ? "path" : "virtual-host",
                 o.credentials->source());
    auto s3 = std::make_shared<iceberg::s3_file_io>(std::move(o));
    out.io = s3;
    out.check = [s3, bucket = loc.bucket, warehouse]() -> result<std::string> {
        FLOE_TRY(s3->client().check_bucket(bucket));
        return warehouse;
    };
    return out;
}

result<std::unique_ptr<iceberg::catalog>> open_catalog(const config::settings& s, const remote_storage& storage) {
    auto type = s.get_string("floe.storage.remote.catalog.type");
    auto uri = s.get_string("floe.storage.remote.catalog.uri");
    auto warehouse = s.get_string("floe.storage.remote.path");
    if (type != "rest") return iceberg::open_catalog(type, uri, "floe", storage.io, warehouse);
    iceberg::rest_catalog_options o;
    o.uri = uri;
    o.warehouse = s.get_optional("floe.storage.remote.catalog.warehouse").value_or("");
    o.prefix = s.get_optional("floe.storage.remote.catalog.prefix").value_or("");
    o.token = s.get_optional("floe.storage.remote.catalog.token").value_or("");
    o.credential = s.get_optional("floe.storage.remote.catalog.credential").value_or("");
    o.oauth2_server_uri = s.get_optional("floe.storage.remote.catalog.oauth2-server-uri").value_or("");
    o.scope = s.get_optional("floe.storage.remote.catalog.scope").value_or("catalog");
    o.headers = s.catalog_headers();
    o.request_timeout = s.get_duration("floe.storage.remote.catalog.request-timeout");
    o.on_vended_credentials = storage.vend;
    return iceberg::open_rest_catalog(std::move(o));
}

} // namespace floe::app
