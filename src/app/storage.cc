#include "app/storage.h"

#include "iceberg/aws_credentials.h"
#include "iceberg/s3_file_io.h"

#include <spdlog/spdlog.h>

namespace floe::app {

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
    auto loc = FLOE_TRY_CTX(iceberg::parse_s3_uri(warehouse), "floe.storage.remote.path");
    iceberg::s3_options o;
    o.region = s.get_optional("floe.storage.remote.s3.region").value_or("");
    if (o.region.empty()) o.region = iceberg::region_from_environment();
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
        o.credentials = std::make_shared<iceberg::static_credentials>(iceberg::aws_credentials{
            *id, s.get_string("floe.storage.remote.s3.secret-access-key"),
            s.get_optional("floe.storage.remote.s3.session-token").value_or("")});
    } else {
        iceberg::credential_chain_options co;
        co.region = o.region;
        o.credentials = iceberg::make_default_credential_chain(co);
    }
    spdlog::info("s3: bucket {} in {} via {} ({}-style), credentials from {}", loc.bucket, o.region,
                 o.endpoint.empty() ? "AWS" : o.endpoint, o.path_style ? "path" : "virtual-host",
                 o.credentials->source());
    auto s3 = std::make_shared<iceberg::s3_file_io>(std::move(o));
    out.io = s3;
    out.check = [s3, bucket = loc.bucket, warehouse]() -> result<std::string> {
        FLOE_TRY(s3->check_bucket(bucket));
        return warehouse;
    };
    return out;
}

} // namespace floe::app
