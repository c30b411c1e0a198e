#include "app/storage.h"

#include "aws/credentials.h"
#include "aws/glue.h"
#include "aws/sts.h"
#include "iceberg/glue_catalog.h"
#include "iceberg/hive_catalog.h"
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

std::string default_aws_region(const config::settings& s) {
    auto region = s.get_optional("floe.storage.remote.s3.region").value_or("");
    if (region.empty()) region = aws::region_from_environment();
    if (region.empty()) region = "us-east-1";
    return region;
}

std::shared_ptr<aws::credentials_provider> make_aws_credentials(const config::settings& s) {
    std::shared_ptr<aws::credentials_provider> base;
    if (auto id = s.get_optional("floe.storage.remote.s3.access-key-id")) {
        base = std::make_shared<aws::static_credentials>(aws::credentials{
            *id, s.get_string("floe.storage.remote.s3.secret-access-key"),
            s.get_optional("floe.storage.remote.s3.session-token").value_or("")});
    } else {
        aws::credential_chain_options co;
        co.region = default_aws_region(s);
        co.settings_hint = "floe.storage.remote.s3.access-key-id and secret-access-key";
        base = aws::make_default_credential_chain(co);
    }
    auto role = s.get_optional("floe.aws.role-arn");
    if (!role) return base;
    aws::assume_role_options ro;
    ro.role_arn = *role;
    ro.external_id = s.get_optional("floe.aws.external-id").value_or("");
    ro.session_name = s.get_string("floe.aws.session-name");
    ro.duration = std::chrono::duration_cast<std::chrono::seconds>(s.get_duration("floe.aws.role-duration"));
    ro.region = default_aws_region(s);
    ro.endpoint = s.get_optional("floe.aws.sts-endpoint").value_or("");
    if (ro.endpoint.empty())
        if (const char* e = std::getenv("AWS_ENDPOINT_URL_STS"); e && *e) ro.endpoint = e;
    return aws::make_assume_role_provider(std::move(base), std::move(ro));
}

result<remote_storage> make_file_io(const config::settings& s) {
    auto warehouse = s.get_string("floe.storage.remote.path");
    remote_storage out;
    out.aws = make_aws_credentials(s);
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
    o.region = default_aws_region(s);
    o.endpoint = s.get_optional("floe.storage.remote.s3.endpoint").value_or("");
    o.path_style = s.get_optional("floe.storage.remote.s3.path-style-access").has_value()
                   && s.get_bool("floe.storage.remote.s3.path-style-access");
    o.max_connections = static_cast<size_t>(s.get_int("floe.storage.remote.s3.max-connections"));
    o.request_timeout = s.get_duration("floe.storage.remote.s3.request-timeout");
    o.max_attempts = static_cast<int>(s.get_int("floe.storage.remote.s3.max-attempts"));
    o.multipart_part_size =
        static_cast<uint64_t>(s.get_size("floe.storage.remote.s3.multipart-part-size"));
    o.credentials = out.aws;
    auto type = s.get_string("floe.storage.remote.catalog.type");
    if (type == "rest" || type == "nessie") {
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
    auto aws_credentials = storage.aws ? storage.aws : make_aws_credentials(s);
    if (type == "glue") {
        aws::service_options go;
        go.region = s.get_optional("floe.storage.remote.catalog.glue.region").value_or("");
        if (go.region.empty()) go.region = default_aws_region(s);
        go.endpoint = s.get_optional("floe.storage.remote.catalog.glue.endpoint").value_or("");
        go.credentials = aws_credentials;
        go.request_timeout = s.get_duration("floe.storage.remote.catalog.request-timeout");
        auto glue = std::make_shared<aws::glue_client>(
            std::move(go), s.get_optional("floe.storage.remote.catalog.glue.catalog-id").value_or(""));
        auto catalog_id = s.get_optional("floe.storage.remote.catalog.glue.catalog-id");
        spdlog::info("catalog: glue, {}{}, credentials from {}", glue->describe(),
                     catalog_id ? " (catalog " + *catalog_id + ")" : std::string(), aws_credentials->source());
        return std::unique_ptr<iceberg::catalog>(std::make_unique<iceberg::glue_catalog>(std::move(glue)));
    }
    if (type == "hive") {
        iceberg::hive_catalog_options ho;
        ho.metastore = FLOE_TRY_CTX(iceberg::hms::parse_uri(uri), "floe.storage.remote.catalog.uri");
        if (uri.find(',') != std::string::npos)
            spdlog::warn("catalog: hive: only the first metastore of {} is used", uri);
        ho.metastore.timeout = s.get_duration("floe.storage.remote.catalog.request-timeout");
        ho.warehouse = warehouse;
        ho.lock_wait = s.get_duration("floe.storage.remote.catalog.hive.lock-wait");
        ho.heartbeat_interval = s.get_duration("floe.storage.remote.catalog.hive.heartbeat-interval");
        auto hive = std::make_unique<iceberg::hive_catalog>(std::move(ho));
        spdlog::info("catalog: hive, metastore {}", hive->address());
        return std::unique_ptr<iceberg::catalog>(std::move(hive));
    }
    if (type != "rest" && type != "nessie") return iceberg::open_catalog(type, uri, "floe", storage.io, warehouse);
    iceberg::rest_catalog_options o;
    o.uri = uri;
    o.warehouse = s.get_optional("floe.storage.remote.catalog.warehouse").value_or("");
    o.prefix = s.get_optional("floe.storage.remote.catalog.prefix").value_or("");
    if (type == "nessie") {
        // Nessie names the reference in the REST prefix: "<ref>" or "<ref>|<warehouse>".
        o.prefix = s.get_string("floe.storage.remote.catalog.ref");
        if (!o.warehouse.empty()) o.prefix += "|" + o.warehouse;
        o.prefix_wins = true;
    }
    if (s.get_bool("floe.storage.remote.catalog.rest.sigv4.enabled")) {
        o.sigv4_credentials = aws_credentials;
        o.sigv4_service = s.get_string("floe.storage.remote.catalog.rest.sigv4.signing-name");
        o.sigv4_region = s.get_optional("floe.storage.remote.catalog.rest.sigv4.region").value_or("");
        if (o.sigv4_region.empty()) o.sigv4_region = default_aws_region(s);
    }
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
