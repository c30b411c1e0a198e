#include "aws/client.h"

#include "base/random.h"

#include <spdlog/spdlog.h>

#include <thread>

namespace floe::aws {
namespace {

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string xml_unescape(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '&') {
            out.push_back(v[i]);
            continue;
        }
        auto end = v.find(';', i);
        if (end == std::string_view::npos) {
            out.push_back('&');
            continue;
        }
        auto ent = v.substr(i + 1, end - i - 1);
        if (ent == "amp")
            out.push_back('&');
        else if (ent == "lt")
            out.push_back('<');
        else if (ent == "gt")
            out.push_back('>');
        else if (ent == "quot")
            out.push_back('"');
        else if (ent == "apos")
            out.push_back('\'');
        else
            out.append(v.substr(i, end - i + 1));
        i = end;
    }
    return out;
}

bool throttling(std::string_view code) {
    return code == "Throttling" || code == "ThrottlingException" || code == "ThrottledException"
           || code == "RequestLimitExceeded" || code == "TooManyRequestsException"
           || code == "ProvisionedThroughputExceededException" || code == "RequestTimeout"
           || code == "RequestTimeoutException" || code == "InternalFailure"
           || code == "ServiceUnavailable" || code == "InternalServiceException";
}

bool retryable(const service_reply& r) {
    return r.status >= 500 || r.status == 429 || throttling(r.code);
}

// The AWS error code and message of a failed reply, from a JSON body (`__type`, `message`),
// the x-amzn-errortype header, or an XML body (<Code>, <Message>).
void parse_error(service_reply& r, const std::vector<std::pair<std::string, std::string>>& headers) {
    if (r.ok()) return;
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_object()) {
        if (j.contains("__type") && j["__type"].is_string()) r.code = j["__type"].get<std::string>();
        for (auto* k : {"message", "Message"})
            if (j.contains(k) && j[k].is_string()) r.message = j[k].get<std::string>();
    }
    if (r.code.empty())
        for (auto& [k, v] : headers)
            if (k == "x-amzn-errortype") r.code = v.substr(0, v.find(':'));
    if (r.code.empty()) {
        r.code = xml_text(r.body, "Code").value_or("");
        if (r.message.empty()) r.message = xml_text(r.body, "Message").value_or("");
    }
    if (auto hash = r.code.rfind('#'); hash != std::string::npos) r.code = r.code.substr(hash + 1);
}

std::string_view hint_for(std::string_view code, long status) {
    if (code == "InvalidClientTokenId" || code == "UnrecognizedClientException"
        || code == "InvalidAccessKeyId")
        return "check the access key id";
    if (code == "SignatureDoesNotMatch" || code == "InvalidSignatureException"
        || code == "IncompleteSignature")
        return "check the secret access key";
    if (code == "ExpiredToken" || code == "ExpiredTokenException")
        return "the session token expired; check the credentials source";
    if (code == "AccessDenied" || code == "AccessDeniedException")
        return "check the IAM policy allows this action (and, for a role, its trust policy)";
    if (throttling(code) || status == 429)
        return "the service is throttling; calls are retried with backoff";
    if (status >= 500) return "the service failed; calls are retried with backoff";
    if (status == 403) return "check the credentials and the IAM policy";
    return {};
}

} // namespace

std::optional<std::string> xml_text(std::string_view body, std::string_view tag) {
    auto open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
    auto b = body.find(open);
    if (b == std::string_view::npos) return std::nullopt;
    b += open.size();
    auto e = body.find(close, b);
    if (e == std::string_view::npos) return std::nullopt;
    return xml_unescape(body.substr(b, e - b));
}

error reply_error(std::string_view action, const service_reply& r) {
    errc code = errc::invalid_argument;
    if (r.status == 404 || r.code.find("NotFound") != std::string::npos)
        code = errc::not_found;
    else if (retryable(r))
        code = errc::unavailable;
    else if (r.status == 401 || r.status == 403)
        code = errc::unavailable; // fixed by credentials or policy, without restarting
    auto hint = hint_for(r.code, r.status);
    return make_error(code, "{}: {}{}{}{}{}{}", action, r.status, r.code.empty() ? "" : " ",
                      r.code, r.message.empty() ? "" : ": ", r.message,
                      hint.empty() ? std::string() : fmt::format(" ({})", hint));
}

service_client::service_client(service_options opts) : _opts(std::move(opts)) {
    init_curl_once();
    auto ep = _opts.endpoint.empty()
                  ? fmt::format("https://{}.{}.amazonaws.com", _opts.service, _opts.region)
                  : _opts.endpoint;
    while (ep.ends_with('/'))
        ep.pop_back();
    auto sep = ep.find("://");
    _scheme = sep == std::string::npos ? "https" : ep.substr(0, sep);
    _host = sep == std::string::npos ? ep : ep.substr(sep + 3);
    if (auto slash = _host.find('/'); slash != std::string::npos) _host.resize(slash);
    if (!_opts.credentials) _opts.credentials = std::make_shared<static_credentials>(credentials{});
}

std::string service_client::describe() const {
    return fmt::format("{} at {}://{}", _opts.service, _scheme, _host);
}

result<service_reply> service_client::send(const service_request& req) {
    std::string last_failure;
    for (int attempt = 1;; ++attempt) {
        // Fetched for each attempt: a retry after a refresh signs with the new keys.
        auto creds = FLOE_TRY_CTX(_opts.credentials->get(), "{}", describe());
        sigv4_request sr;
        sr.method = req.method;
        sr.path = req.path;
        sr.query = req.query;
        sr.payload_sha256 = sha256_hex(std::string_view(req.body));
        auto date = amz_date(unix_now());
        sr.headers = req.headers;
        sr.headers.emplace_back("host", _host);
        sr.headers.emplace_back("x-amz-date", date);
        if (!creds.session_token.empty())
            sr.headers.emplace_back("x-amz-security-token", creds.session_token);
        std::vector<std::string> lines;
        for (auto& [k, v] : sr.headers)
            if (k != "host") lines.push_back(k + ": " + v);
        if (!creds.access_key_id.empty())
            lines.push_back("Authorization: "
                            + sigv4_authorization(sr, creds, _opts.region, _opts.service, date));
        lines.emplace_back("Expect:");
        auto query = canonical_query(req.query);
        auto url = fmt::format("{}://{}{}{}{}", _scheme, _host, req.path, query.empty() ? "" : "?",
                               query);
        auto r = http_call(req.method, url, lines, req.body, _opts.request_timeout,
                           _opts.connect_timeout);
        bool again = false;
        service_reply reply;
        if (!r) {
            last_failure = r.error().message();
            again = req.repeatable;
            if (!again || attempt >= _opts.max_attempts)
                return fail(errc::unavailable, "{}{}", r.error().message(),
                            req.repeatable ? fmt::format(" (after {} attempt(s))", attempt)
                                           : std::string(" (outcome unknown)"));
        } else {
            reply.status = r->status;
            reply.body = std::move(r->body);
            parse_error(reply, r->headers);
            if (reply.ok() || !retryable(reply) || !req.repeatable || attempt >= _opts.max_attempts)
                return reply;
            last_failure = fmt::format("{} {}", reply.status, reply.code);
            again = true;
        }
        auto cap = std::min<int64_t>(_opts.retry_cap.count(),
                                     _opts.retry_base.count() << std::min(attempt, 16));
        auto sleep_ms = static_cast<int64_t>(os_random64() % static_cast<uint64_t>(cap + 1));
        spdlog::debug("{}: attempt {} failed ({}); retrying in {} ms", describe(), attempt,
                      last_failure, sleep_ms);
        std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
}

result<service_reply> service_client::json_call(const std::string& target,
                                                const nlohmann::json& body, bool repeatable) {
    service_request req;
    req.headers = {{"content-type", "application/x-amz-json-1.1"}, {"x-amz-target", target}};
    req.body = body.dump();
    req.repeatable = repeatable;
    return send(req);
}

result<service_reply>
service_client::query_call(const std::string& action, const std::string& version,
                           const std::vector<std::pair<std::string, std::string>>& params,
                           bool repeatable) {
    std::vector<std::pair<std::string, std::string>> form{{"Action", action}, {"Version", version}};
    form.insert(form.end(), params.begin(), params.end());
    service_request req;
    req.headers = {{"content-type", "application/x-www-form-urlencoded; charset=utf-8"}};
    req.body = canonical_query(form);
    req.repeatable = repeatable;
    return send(req);
}

} // namespace floe::aws
