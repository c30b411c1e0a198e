#include "aws/credentials.h"

#include "aws/http.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace floe::aws {
namespace {

constexpr int64_t refresh_margin_s = 300;

int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::optional<std::string> process_env(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

std::string trim(std::string_view v) {
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front())))
        v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back())))
        v.remove_suffix(1);
    return std::string(v);
}

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Off EC2 and ECS the link-local endpoints do not answer: give up on them quickly.
result<http_reply> http_call(const std::string& method, const std::string& url,
                             const std::vector<std::string>& headers, const std::string& body,
                             std::chrono::milliseconds timeout) {
    return aws::http_call(method, url, headers, body, timeout, std::chrono::milliseconds(1000));
}

std::optional<std::string> xml_text(std::string_view body, std::string_view tag) {
    auto open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
    auto b = body.find(open);
    if (b == std::string_view::npos) return std::nullopt;
    b += open.size();
    auto e = body.find(close, b);
    if (e == std::string_view::npos) return std::nullopt;
    return std::string(body.substr(b, e - b));
}

std::string form_encode(std::string_view s) {
    return uri_encode(s, false);
}

// ---- the links ----

// One link: says whether it is configured, and fetches credentials when asked.
class link {
public:
    virtual ~link() = default;
    virtual bool configured() = 0;
    virtual result<expiring_credentials> fetch() = 0;
    virtual std::string name() const = 0;
};

using env_fn = std::function<std::optional<std::string>(const std::string&)>;

class env_link final : public link {
public:
    explicit env_link(env_fn env) : _env(std::move(env)) {}
    bool configured() override { return _env("AWS_ACCESS_KEY_ID").has_value(); }
    result<expiring_credentials> fetch() override {
        auto id = _env("AWS_ACCESS_KEY_ID"), secret = _env("AWS_SECRET_ACCESS_KEY");
        if (!id || !secret)
            return fail(errc::invalid_argument,
                        "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
        return expiring_credentials{{*id, *secret, _env("AWS_SESSION_TOKEN").value_or("")}, 0};
    }
    std::string name() const override { return "environment (AWS_ACCESS_KEY_ID)"; }

private:
    env_fn _env;
};

class web_identity_link final : public link {
public:
    web_identity_link(env_fn env, std::string region, std::chrono::milliseconds timeout)
        : _env(std::move(env)), _region(std::move(region)), _timeout(timeout) {}
    bool configured() override {
        return _env("AWS_ROLE_ARN") && _env("AWS_WEB_IDENTITY_TOKEN_FILE");
    }
    result<expiring_credentials> fetch() override {
        auto file = *_env("AWS_WEB_IDENTITY_TOKEN_FILE");
        auto token = read_text(file); // re-read each time: the kubelet rotates it
        if (!token)
            return fail(errc::unavailable, "cannot read AWS_WEB_IDENTITY_TOKEN_FILE {}", file);
        auto endpoint = _env("AWS_ENDPOINT_URL_STS")
                            .or_else([&] { return _env("AWS_ENDPOINT_URL"); })
                            .value_or(fmt::format("https://sts.{}.amazonaws.com",
                                                  _region.empty() ? "us-east-1" : _region));
        while (endpoint.ends_with('/'))
            endpoint.pop_back();
        auto session = _env("AWS_ROLE_SESSION_NAME").value_or("floe-" + std::to_string(now_s()));
        auto body = fmt::format(
            "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn={}&RoleSessionName={}"
            "&WebIdentityToken={}",
            form_encode(*_env("AWS_ROLE_ARN")), form_encode(session), form_encode(trim(*token)));
        auto r = FLOE_TRY_CTX(http_call("POST", endpoint + "/",
                                        {"Content-Type: application/x-www-form-urlencoded"}, body,
                                        _timeout),
                              "STS AssumeRoleWithWebIdentity");
        if (r.status != 200)
            return fail(errc::unavailable,
                        "STS AssumeRoleWithWebIdentity for {}: {} {}: check AWS_ROLE_ARN and the "
                        "role's trust policy",
                        *_env("AWS_ROLE_ARN"), r.status, xml_text(r.body, "Code").value_or(""));
        expiring_credentials out;
        out.creds.access_key_id = xml_text(r.body, "AccessKeyId").value_or("");
        out.creds.secret_access_key = xml_text(r.body, "SecretAccessKey").value_or("");
        out.creds.session_token = xml_text(r.body, "SessionToken").value_or("");
        if (out.creds.access_key_id.empty() || out.creds.secret_access_key.empty())
            return fail(errc::unavailable,
                        "STS AssumeRoleWithWebIdentity: no credentials in the answer");
        if (auto exp = xml_text(r.body, "Expiration"))
            out.expires_at = FLOE_TRY(parse_iso8601(*exp));
        return out;
    }
    std::string name() const override {
        return "web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE)";
    }

private:
    env_fn _env;
    std::string _region;
    std::chrono::milliseconds _timeout;
};

std::string home_file(const env_fn& env, const char* var, const char* rel) {
    if (auto v = env(var)) return *v;
    return env("HOME").value_or("") + rel;
}

class profile_link final : public link {
public:
    explicit profile_link(env_fn env) : _env(std::move(env)) {}
    bool configured() override {
        auto c = lookup();
        return c.has_value();
    }
    result<expiring_credentials> fetch() override {
        auto c = lookup();
        if (!c) return fail(errc::not_found, "profile {} has no aws_access_key_id", profile());
        return expiring_credentials{*c, 0};
    }
    std::string name() const override {
        return fmt::format("shared files (profile {} in {} or {})", profile(),
                           home_file(_env, "AWS_SHARED_CREDENTIALS_FILE", "/.aws/credentials"),
                           home_file(_env, "AWS_CONFIG_FILE", "/.aws/config"));
    }

private:
    std::string profile() const { return _env("AWS_PROFILE").value_or("default"); }
    std::optional<credentials> lookup() {
        auto p = profile();
        auto from = [&](const std::string& path,
                        const std::string& section) -> std::optional<credentials> {
            auto text = read_text(path);
            if (!text) return std::nullopt;
            auto ini = parse_ini(*text);
            auto it = ini.find(section);
            if (it == ini.end()) return std::nullopt;
            auto& kv = it->second;
            auto id = kv.find("aws_access_key_id"), secret = kv.find("aws_secret_access_key");
            if (id == kv.end() || secret == kv.end()) return std::nullopt;
            auto token = kv.find("aws_session_token");
            return credentials{id->second, secret->second,
                                   token == kv.end() ? "" : token->second};
        };
        if (auto c = from(home_file(_env, "AWS_SHARED_CREDENTIALS_FILE", "/.aws/credentials"), p))
            return c;
        // The config file names profiles "profile NAME", except the default one.
        return from(home_file(_env, "AWS_CONFIG_FILE", "/.aws/config"),
                    p == "default" ? p : "profile " + p);
    }
    env_fn _env;
};

result<expiring_credentials> parse_json_credentials(const std::string& body,
                                                    const std::string& what) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(errc::unavailable, "{}: the answer is not JSON", what);
    expiring_credentials out;
    out.creds.access_key_id = j.value("AccessKeyId", "");
    out.creds.secret_access_key = j.value("SecretAccessKey", "");
    out.creds.session_token = j.value("Token", "");
    if (out.creds.access_key_id.empty() || out.creds.secret_access_key.empty())
        return fail(errc::unavailable, "{}: no AccessKeyId/SecretAccessKey in the answer", what);
    if (j.contains("Expiration") && j["Expiration"].is_string())
        out.expires_at = FLOE_TRY(parse_iso8601(j["Expiration"].get<std::string>()));
    return out;
}

class ecs_link final : public link {
public:
    ecs_link(env_fn env, std::chrono::milliseconds timeout)
        : _env(std::move(env)), _timeout(timeout) {}
    bool configured() override {
        return _env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
               || _env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    }
    result<expiring_credentials> fetch() override {
        auto url = _env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                       ? "http://169.254.170.2" + *_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                       : *_env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        std::vector<std::string> headers;
        std::optional<std::string> token = _env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
        if (auto f = _env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
            token = read_text(*f);
            if (!token)
                return fail(errc::unavailable,
                            "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {}", *f);
        }
        if (token) headers.push_back("Authorization: " + trim(*token));
        auto r =
            FLOE_TRY_CTX(http_call("GET", url, headers, "", _timeout), "ECS container credentials");
        if (r.status != 200)
            return fail(errc::unavailable,
                        "ECS container credentials at {}: HTTP {}: check the task role", url,
                        r.status);
        return parse_json_credentials(r.body, "ECS container credentials");
    }
    std::string name() const override { return "ECS container credentials"; }

private:
    env_fn _env;
    std::chrono::milliseconds _timeout;
};

class imds_link final : public link {
public:
    imds_link(env_fn env, std::chrono::milliseconds timeout)
        : _env(std::move(env)), _timeout(timeout) {}
    bool configured() override { return _env("AWS_EC2_METADATA_DISABLED").value_or("") != "true"; }
    result<expiring_credentials> fetch() override {
        auto base = _env("AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("http://169.254.169.254");
        while (base.ends_with('/'))
            base.pop_back();
        // IMDSv2: a session token first, then the role name, then its credentials. Errors do
        // not repeat the link's name: the chain puts it in front.
        auto t = FLOE_TRY(http_call("PUT", base + "/latest/api/token",
                                    {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, "", _timeout));
        if (t.status != 200)
            return fail(errc::unavailable, "the token request answered HTTP {}", t.status);
        std::vector<std::string> h{"X-aws-ec2-metadata-token: " + trim(t.body)};
        auto path = base + "/latest/meta-data/iam/security-credentials/";
        auto role = FLOE_TRY(http_call("GET", path, h, "", _timeout));
        if (role.status != 200 || trim(role.body).empty())
            return fail(errc::unavailable, "no IAM role attached to the instance (HTTP {})",
                        role.status);
        auto name = trim(role.body.substr(0, role.body.find('\n')));
        auto c = FLOE_TRY(http_call("GET", path + name, h, "", _timeout));
        if (c.status != 200)
            return fail(errc::unavailable, "credentials of role {}: HTTP {}", name, c.status);
        return parse_json_credentials(c.body, "the credentials of role " + name);
    }
    std::string name() const override { return "EC2 instance metadata (IMDSv2)"; }

private:
    env_fn _env;
    std::chrono::milliseconds _timeout;
};

// Picks the first configured link once, then caches its credentials until five minutes
// before they expire.
class chain final : public credentials_provider {
public:
    chain(std::vector<std::unique_ptr<link>> links, std::string settings_hint)
        : _links(std::move(links)), _settings_hint(std::move(settings_hint)) {}

    result<credentials> get() override {
        std::lock_guard g(_mu);
        if (_have && (_cached.expires_at == 0 || now_s() < _cached.expires_at - refresh_margin_s))
            return _cached.creds;
        if (!_chosen) {
            for (auto& l : _links)
                if (l->configured()) {
                    _chosen = l.get();
                    break;
                }
            if (!_chosen)
                return fail(errc::unavailable, "no AWS credentials: {} (none is configured); {}",
                            tried(), what_to_set());
            spdlog::info("aws: credentials from {}", _chosen->name());
        }
        auto fresh = _chosen->fetch();
        if (!fresh) {
            // Keep using credentials that have not expired yet while the source is down.
            if (_have && (_cached.expires_at == 0 || now_s() < _cached.expires_at)) {
                spdlog::warn("aws: refreshing credentials from {} failed ({}); the current ones are "
                             "valid until {}",
                             _chosen->name(), fresh.error().message(), _cached.expires_at);
                return _cached.creds;
            }
            // Instance metadata is the last resort, taken when nothing else is configured: off
            // EC2 its failure means "no credentials", and the message says what to set.
            if (_chosen == _links.back().get())
                return fail(fresh.error().code(),
                            "no AWS credentials: nothing configures {}, and {} failed ({}); {}",
                            others(), _chosen->name(), fresh.error().message(), what_to_set());
            return fail(fresh.error().code(), "credentials from {}: {}", _chosen->name(),
                        fresh.error().message());
        }
        _cached = std::move(*fresh);
        _have = true;
        return _cached.creds;
    }

    std::string source() const override {
        std::lock_guard g(_mu);
        return _chosen ? _chosen->name() : "the AWS credential chain";
    }

private:
    std::string tried() const {
        std::string out;
        for (auto& l : _links)
            out += (out.empty() ? "" : ", ") + l->name();
        return "tried " + out;
    }
    std::string others() const {
        std::string out;
        for (size_t i = 0; i + 1 < _links.size(); ++i)
            out += (out.empty() ? "" : ", ") + _links[i]->name();
        return out;
    }
    std::string what_to_set() const {
        return fmt::format("set {}AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a "
                           "profile in ~/.aws/credentials), or run where a role is attached",
                           _settings_hint.empty() ? "" : _settings_hint + ", or ");
    }
    mutable std::mutex _mu;
    std::vector<std::unique_ptr<link>> _links;
    std::string _settings_hint;
    link* _chosen = nullptr;
    expiring_credentials _cached;
    bool _have = false;
};

} // namespace

ini_sections parse_ini(std::string_view text) {
    ini_sections out;
    std::string section;
    size_t pos = 0;
    while (pos <= text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        auto line = trim(text.substr(pos, end - pos));
        pos = end + 1;
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line.front() == '[' && line.back() == ']') {
            section = trim(std::string_view(line).substr(1, line.size() - 2));
            continue;
        }
        auto eq = line.find('=');
        if (eq == std::string::npos || section.empty()) continue;
        out[section][trim(std::string_view(line).substr(0, eq))] =
            trim(std::string_view(line).substr(eq + 1));
    }
    return out;
}

result<int64_t> parse_iso8601(std::string_view s) {
    std::tm tm{};
    std::string str(s);
    auto* end = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end) return fail(errc::invalid_argument, "not an ISO-8601 time: {}", s);
    return static_cast<int64_t>(timegm(&tm));
}

std::string region_from_environment(const credential_chain_options& opts) {
    env_fn env = opts.getenv ? opts.getenv : env_fn(process_env);
    if (auto r = env("AWS_REGION")) return *r;
    if (auto r = env("AWS_DEFAULT_REGION")) return *r;
    if (auto text = read_text(home_file(env, "AWS_CONFIG_FILE", "/.aws/config"))) {
        auto p = env("AWS_PROFILE").value_or("default");
        auto ini = parse_ini(*text);
        auto it = ini.find(p == "default" ? p : "profile " + p);
        if (it != ini.end())
            if (auto r = it->second.find("region"); r != it->second.end()) return r->second;
    }
    return {};
}

std::shared_ptr<credentials_provider> make_default_credential_chain(credential_chain_options opts) {
    env_fn env = opts.getenv ? opts.getenv : env_fn(process_env);
    std::vector<std::unique_ptr<link>> links;
    links.push_back(std::make_unique<env_link>(env));
    links.push_back(std::make_unique<web_identity_link>(env, opts.region, opts.http_timeout));
    links.push_back(std::make_unique<profile_link>(env));
    links.push_back(std::make_unique<ecs_link>(env, opts.http_timeout));
    links.push_back(std::make_unique<imds_link>(env, opts.http_timeout));
    return std::make_shared<chain>(std::move(links), opts.settings_hint);
}

} // namespace floe::aws
