#include "aws/sts.h"

#include <spdlog/spdlog.h>

#include <mutex>

namespace floe::aws {
namespace {

int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

class assume_role_provider final : public credentials_provider {
public:
    assume_role_provider(std::shared_ptr<credentials_provider> base, assume_role_options opts)
        : _base(base), _opts(std::move(opts)),
          _sts({.service = "sts",
                .region = _opts.region,
                .endpoint = _opts.endpoint,
                .credentials = std::move(base),
                .request_timeout = _opts.http_timeout}),
          _margin(assume_role_refresh_margin(_opts.duration).count()) {}

    result<credentials> get() override {
        std::lock_guard g(_mu);
        if (_have && now_s() < _cached.expires_at - _margin) return _cached.creds;
        auto fresh = assume();
        if (!fresh) {
            if (_have && now_s() < _cached.expires_at) {
                spdlog::warn("aws: refreshing the session of role {} failed ({}); the current "
                             "credentials are valid for {} s more",
                             _opts.role_arn, fresh.error().message(),
                             _cached.expires_at - now_s());
                return _cached.creds;
            }
            return std::unexpected(std::move(fresh).error());
        }
        _cached = std::move(*fresh);
        _have = true;
        ++_sessions;
        spdlog::info("aws: assumed role {} (session {}, valid for {} s; from {})", _opts.role_arn,
                     _sessions, _cached.expires_at - now_s(), _base->source());
        return _cached.creds;
    }

    std::string source() const override {
        return fmt::format("role {} (assumed with {})", _opts.role_arn, _base->source());
    }

private:
    result<expiring_credentials> assume() {
        std::vector<std::pair<std::string, std::string>> params{
            {"RoleArn", _opts.role_arn},
            {"RoleSessionName", _opts.session_name},
            {"DurationSeconds", std::to_string(_opts.duration.count())}};
        if (!_opts.external_id.empty()) params.emplace_back("ExternalId", _opts.external_id);
        auto r = FLOE_TRY_CTX(_sts.query_call("AssumeRole", "2011-06-15", params),
                              "STS AssumeRole of {}", _opts.role_arn);
        if (!r.ok())
            return std::unexpected(reply_error(fmt::format("STS AssumeRole of {} (with {})",
                                                           _opts.role_arn, _base->source()),
                                               r));
        expiring_credentials out;
        out.creds.access_key_id = xml_text(r.body, "AccessKeyId").value_or("");
        out.creds.secret_access_key = xml_text(r.body, "SecretAccessKey").value_or("");
        out.creds.session_token = xml_text(r.body, "SessionToken").value_or("");
        if (out.creds.access_key_id.empty() || out.creds.secret_access_key.empty())
            return fail(errc::unavailable, "STS AssumeRole of {}: no credentials in the answer",
                        _opts.role_arn);
        auto exp = xml_text(r.body, "Expiration");
        if (!exp)
            return fail(errc::unavailable, "STS AssumeRole of {}: no Expiration in the answer",
                        _opts.role_arn);
        out.expires_at = FLOE_TRY_CTX(parse_iso8601(*exp), "STS AssumeRole of {}", _opts.role_arn);
        return out;
    }

    std::shared_ptr<credentials_provider> _base;
    assume_role_options _opts;
    service_client _sts;
    int64_t _margin;
    std::mutex _mu;
    expiring_credentials _cached;
    bool _have = false;
    int64_t _sessions = 0;
};

} // namespace

std::chrono::seconds assume_role_refresh_margin(std::chrono::seconds duration) {
    return std::min(std::chrono::seconds(300), duration / 4);
}

std::shared_ptr<credentials_provider>
make_assume_role_provider(std::shared_ptr<credentials_provider> base, assume_role_options opts) {
    return std::make_shared<assume_role_provider>(std::move(base), std::move(opts));
}

} // namespace floe::aws
