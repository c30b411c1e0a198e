#include "aws/s3.h"

#include "aws/http.h"

#include "base/metrics.h"
#include "base/random.h"

#include <cstdio>
#include <ctime>
#include <charconv>
#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace floe::aws {

result<s3_location> parse_s3_uri(std::string_view uri) {
    std::string_view rest = uri;
    if (rest.starts_with("s3://"))
        rest.remove_prefix(5);
    else if (rest.starts_with("s3a://"))
        rest.remove_prefix(6);
    else
        return fail(errc::invalid_argument, "not an s3:// URI: {}", uri);
    auto slash = rest.find('/');
    s3_location loc;
    loc.bucket = std::string(rest.substr(0, slash));
    if (slash != std::string_view::npos) loc.key = std::string(rest.substr(slash + 1));
    if (loc.bucket.empty()) return fail(errc::invalid_argument, "no bucket in {}", uri);
    return loc;
}

namespace {

struct header_list {
    curl_slist* list = nullptr;
    ~header_list() { curl_slist_free_all(list); }
    void add(const std::string& h) { list = curl_slist_append(list, h.c_str()); }
};

// The text of the first <tag>...</tag> in an XML body, XML entities decoded; S3's responses are
// flat enough that this is all the parsing they need.
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
        else if (ent.starts_with("#x"))
            out.push_back(static_cast<char>(std::stoi(std::string(ent.substr(2)), nullptr, 16)));
        else if (ent.starts_with("#"))
            out.push_back(static_cast<char>(std::stoi(std::string(ent.substr(1)))));
        else
            out.append(v.substr(i, end - i + 1));
        i = end;
    }
    return out;
}

std::optional<std::string> xml_tag(std::string_view body, std::string_view tag, size_t& pos) {
    auto open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
    auto b = body.find(open, pos);
    if (b == std::string_view::npos) return std::nullopt;
    b += open.size();
    auto e = body.find(close, b);
    if (e == std::string_view::npos) return std::nullopt;
    pos = e + close.size();
    return xml_unescape(body.substr(b, e - b));
}

std::optional<std::string> xml_tag(std::string_view body, std::string_view tag) {
    size_t pos = 0;
    return xml_tag(body, tag, pos);
}

std::string_view hint_for(std::string_view code, long status) {
    if (code == "SignatureDoesNotMatch") return "check the secret access key";
    if (code == "InvalidAccessKeyId") return "check the access key id";
    if (code == "ExpiredToken" || code == "TokenRefreshRequired")
        return "the session token expired; check the credentials source";
    if (code == "InvalidToken") return "check the session token";
    if (code == "NoSuchBucket") return "check the bucket in floe.storage.remote.path exists";
    if (code == "AccessDenied") return "check the IAM policy allows this operation on the bucket";
    if (code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect"
        || code == "IllegalLocationConstraintException")
        return "check floe.storage.remote.s3.region";
    if (code == "RequestTimeTooSkewed") return "check this machine's clock";
    if (code == "SlowDown" || status == 503)
        return "the server is throttling; requests are retried with backoff";
    if (status >= 500) return "the server failed; requests are retried with backoff";
    if (status == 403) return "check the credentials and the bucket policy";
    if (status == 301 || status == 307) return "check floe.storage.remote.s3.region and endpoint";
    return {};
}

bool retryable_curl(CURLcode c) {
    switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

bool retryable_status(long status, std::string_view code) {
    return status >= 500 || code == "SlowDown" || code == "RequestTimeout"
           || code == "InternalError" || code == "ConditionalRequestConflict" || status == 429;
}

// Every HTTP request to S3, counted the way the bill counts them: by API, with retries.
struct s3_metrics {
    metrics::family<metrics::counter>& requests;
    metrics::family<metrics::counter>& errors;
    metrics::family<metrics::counter>& retries;
    metrics::family<metrics::counter>& bytes;
    metrics::family<metrics::histogram>& duration;
    static s3_metrics& get() {
        auto& r = metrics::registry::instance();
        static s3_metrics m{
            r.counter_family("floe_s3_requests_total",
                             "HTTP requests sent to S3 (each attempt), by S3 API.", {"operation"}),
            r.counter_family("floe_s3_errors_total",
                             "S3 requests that failed (transport error or HTTP status outside what "
                             "the operation "
                             "expects; 404 on HEAD/DELETE and 412 on a conditional PUT are "
                             "answers, not errors), by "
                             "S3 API and error code.",
                             {"operation", "code"}),
            r.counter_family("floe_s3_retries_total",
                             "S3 requests sent again after a retryable failure, by S3 API.",
                             {"operation"}),
            r.counter_family("floe_s3_bytes_total", "Bytes of S3 request and response bodies.",
                             {"direction"}),
            r.histogram_family("floe_s3_request_duration_seconds",
                               "S3 request latency (each attempt), by S3 API.", {"operation"}),
        };
        return m;
    }
};

bool answer_not_error(std::string_view api, long status) {
    if (status < 300) return true;
    if (status == 404 && (api == "HeadObject" || api == "DeleteObject" || api == "GetObject"))
        return true;
    return status == 412 && api == "PutObject";
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

struct s3_client::request {
    std::string method;
    std::string bucket, key; // key unencoded; empty for bucket requests
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers; // besides host and x-amz-*
    bytes_view body;
    std::string op;    // "GET", "PUT", "ListObjectsV2": what the error says was done
    std::string api;   // the S3 API name, for metrics: "GetObject", "UploadPart", ...
    bool head = false; // no response body
    // Conditional requests go on a new connection: on a reused one that dies before any
    // answer, curl re-sends by itself, and a create_new could not know its first send landed.
    bool fresh_connection = false;
    bool retried = false; // set by execute: an earlier attempt may have taken effect
};

struct s3_client::response {
    long status = 0;
    std::string body;
    std::string etag;
    std::optional<uint64_t> content_length;
    std::string code; // S3 error code from the body, if any
};

namespace {

size_t on_body(char* p, size_t size, size_t n, void* user) {
    static_cast<std::string*>(user)->append(p, size * n);
    return size * n;
}

struct header_capture {
    std::string etag;
    std::optional<uint64_t> length;
};

size_t on_header(char* p, size_t size, size_t n, void* user) {
    std::string_view line(p, size * n);
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
        std::string name(line.substr(0, colon));
        for (auto& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty()
               && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
            value.remove_suffix(1);
        auto* h = static_cast<header_capture*>(user);
        if (name == "etag")
            h->etag = std::string(value);
        else if (name == "content-length")
            h->length = std::strtoull(std::string(value).c_str(), nullptr, 10);
    }
    return size * n;
}

struct body_reader {
    bytes_view data;
    size_t pos = 0;
};

size_t on_read(char* p, size_t size, size_t n, void* user) {
    auto* r = static_cast<body_reader*>(user);
    size_t k = std::min(size * n, r->data.size() - r->pos);
    if (k) std::memcpy(p, r->data.data() + r->pos, k);
    r->pos += k;
    return k;
}

int on_seek(void* user, curl_off_t offset, int origin) {
    auto* r = static_cast<body_reader*>(user);
    if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > r->data.size())
        return CURL_SEEKFUNC_FAIL;
    r->pos = static_cast<size_t>(offset);
    return CURL_SEEKFUNC_OK;
}

} // namespace

s3_client::s3_client(s3_options opts) : _opts(std::move(opts)) {
    init_curl_once();
    auto ep = _opts.endpoint.empty() ? fmt::format("https://s3.{}.amazonaws.com", _opts.region)
                                     : _opts.endpoint;
    while (ep.ends_with('/'))
        ep.pop_back();
    auto sep = ep.find("://");
    _scheme = sep == std::string::npos ? "https" : ep.substr(0, sep);
    _host = sep == std::string::npos ? ep : ep.substr(sep + 3);
    if (!_opts.credentials)
        _opts.credentials = std::make_shared<static_credentials>(credentials{});
}

s3_client::~s3_client() {
    for (auto* h : _idle)
        curl_easy_cleanup(static_cast<CURL*>(h));
}

void* s3_client::take_handle() {
    {
        std::lock_guard lock(_mu);
        if (!_idle.empty()) {
            auto* h = _idle.back();
            _idle.pop_back();
            return h;
        }
    }
    return curl_easy_init();
}

void s3_client::give_back(void* handle) {
    std::lock_guard lock(_mu);
    if (_idle.size() < _opts.max_connections)
        _idle.push_back(handle);
    else
        curl_easy_cleanup(static_cast<CURL*>(handle));
}

result<s3_client::response> s3_client::perform_once(request& req, const credentials& creds) {
    // Path and host: path-style puts the bucket in the path, virtual-hosted in the host.
    std::string host = _host, path;
    auto key_path = uri_encode(req.key, true);
    if (_opts.path_style) {
        path = "/" + uri_encode(req.bucket, false) + "/" + key_path;
    } else {
        host = req.bucket + "." + _host;
        path = "/" + key_path;
    }
    auto query = canonical_query(req.query);
    auto url = fmt::format("{}://{}{}{}{}", _scheme, host, path, query.empty() ? "" : "?", query);

    sigv4_request sr;
    sr.method = req.method;
    sr.path = path;
    sr.query = req.query;
    sr.payload_sha256 = sha256_hex(req.body);
    auto date = amz_date(unix_now());
    sr.headers = req.headers;
    sr.headers.emplace_back("host", host);
    sr.headers.emplace_back("x-amz-date", date);
    sr.headers.emplace_back("x-amz-content-sha256", sr.payload_sha256);
    if (!creds.session_token.empty())
        sr.headers.emplace_back("x-amz-security-token", creds.session_token);
    header_list hl;
    for (auto& [k, v] : sr.headers)
        hl.add(k + ": " + v);
    if (!creds.access_key_id.empty())
        hl.add("Authorization: " + sigv4_authorization(sr, creds, _opts.region, "s3", date));
    hl.add("Expect:"); // no 100-continue round trip
    if (req.method == "PUT" || req.method == "POST")
        hl.add("Content-Type: application/octet-stream");

    auto* h = static_cast<CURL*>(take_handle());
    if (!h) return fail(errc::internal, "curl_easy_init failed");
    curl_easy_reset(h);
    response resp;
    header_capture hc;
    body_reader br{req.body, 0};
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl.list);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (req.fresh_connection) curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(_opts.request_timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(_opts.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &hc);
    if (req.head) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (req.method == "PUT") {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &br);
        curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
        curl_easy_setopt(h, CURLOPT_SEEKDATA, &br);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    } else if (req.method == "POST") {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        // Never a null pointer: curl would then read the body from its default source, stdin.
        curl_easy_setopt(h, CURLOPT_POSTFIELDS,
                         req.body.empty() ? "" : reinterpret_cast<const char*>(req.body.data()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    } else if (req.method != "GET") {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    }
    auto rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
    if (rc != CURLE_OK) {
        curl_easy_cleanup(h); // its connection may be half-used; do not reuse it
        // Resets, timeouts, refused connections are worth a retry; a bad URL or TLS setup is not.
        auto code = rc == CURLE_OPERATION_TIMEDOUT ? errc::timeout
                    : retryable_curl(rc)           ? errc::unavailable
                                                   : errc::invalid_argument;
        // Virtual-hosted addressing puts the bucket in the host name: an endpoint given as an
        // IP address or a host without wildcard DNS cannot resolve <bucket>.<host>.
        std::string hint;
        if (rc == CURLE_COULDNT_RESOLVE_HOST && !_opts.path_style)
            hint = fmt::format(
                "; the bucket is addressed as a host name ({}, virtual-hosted style): with an "
                "endpoint given as an IP address or a host without wildcard DNS, set "
                "floe.storage.remote.s3.path-style-access=true",
                host);
        return fail(code, "{} s3://{}/{}: {} ({}){}", req.op, req.bucket, req.key,
                    errbuf[0] ? errbuf : curl_easy_strerror(rc), static_cast<int>(rc), hint);
    }
    give_back(h);
    resp.etag = std::move(hc.etag);
    resp.content_length = hc.length;
    if (resp.status >= 300) resp.code = xml_tag(resp.body, "Code").value_or("");
    return resp;
}

result<s3_client::response> s3_client::execute(request& req) {
    if (req.op.empty()) req.op = req.method;
    auto creds =
        FLOE_TRY_CTX(_opts.credentials->get(), "{} s3://{}/{}", req.op, req.bucket, req.key);
    for (int attempt = 1;; ++attempt) {
        auto t0 = std::chrono::steady_clock::now();
        auto r = perform_once(req, creds);
        auto& m = s3_metrics::get();
        m.requests.with({req.api}).inc();
        m.duration.with({req.api}).observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        m.bytes.with({"sent"}).inc(req.body.size());
        if (r) m.bytes.with({"received"}).inc(r->body.size());
        if (!r)
            m.errors.with({req.api, r.error().code() == errc::timeout ? "Timeout" : "Transport"})
                .inc();
        else if (!answer_not_error(req.api, r->status))
            m.errors.with({req.api, r->code.empty() ? std::to_string(r->status) : r->code}).inc();
        bool retry = false;
        std::string why;
        if (!r) {
            retry = r.error().code() == errc::timeout || r.error().code() == errc::unavailable;
            why = r.error().message();
        } else if (r->status >= 300 && retryable_status(r->status, r->code)) {
            retry = true;
            why = fmt::format("{} {}", r->status, r->code);
        } else {
            return r;
        }
        if (!retry || attempt >= _opts.max_attempts) {
            if (!r)
                return fail(r.error().code(), "{} (after {} attempt(s))", r.error().message(),
                            attempt);
            return r; // the caller turns the status into an error naming the object
        }
        m.retries.with({req.api}).inc();
        req.retried = true;
        auto cap = std::min<int64_t>(_opts.retry_cap.count(), _opts.retry_base.count()
                                                                  << std::min(attempt, 16));
        auto sleep_ms = static_cast<int64_t>(os_random64() % static_cast<uint64_t>(cap + 1));
        spdlog::debug("s3: {} s3://{}/{} attempt {} failed ({}); retrying in {} ms", req.op,
                      req.bucket, req.key, attempt, why, sleep_ms);
        std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        if (auto fresh = _opts.credentials->get()) creds = std::move(*fresh);
    }
}

namespace {

std::unexpected<error> status_error(const std::string& op, const std::string& bucket,
                                    const std::string& key, const s3_client::response& r) {
    errc code = errc::io_error;
    if (r.status == 404)
        code = errc::not_found;
    else if (r.status == 412)
        code = errc::already_exists;
    else if (r.status == 400 || r.status == 403 || r.status == 301 || r.status == 307)
        code = errc::unavailable;
    else if (r.status >= 500 || r.status == 429)
        code = errc::unavailable;
    auto name = r.code.empty() ? std::string() : " " + r.code;
    auto hint = hint_for(r.code, r.status);
    if (r.code.empty() && r.status == 404 && key.empty())
        hint = "check the bucket in floe.storage.remote.path exists";
    return fail(code, "{} s3://{}/{}: {}{}{}{}", op, bucket, key, r.status, name,
                hint.empty() ? "" : ": ", hint);
}

} // namespace

result<byte_buffer> s3_client::read(std::string_view uri) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    request req{.method = "GET", .bucket = loc.bucket, .key = loc.key};
    req.api = "GetObject";
    auto r = FLOE_TRY(execute(req));
    if (r.status != 200) return status_error(req.op, loc.bucket, loc.key, r);
    return byte_buffer(r.body.begin(), r.body.end());
}

result<void> s3_client::read_range(std::string_view uri, uint64_t offset, size_t len,
                                    byte_buffer& out) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    out.clear();
    if (len == 0) return {};
    request req{.method = "GET", .bucket = loc.bucket, .key = loc.key};
    req.api = "GetObject";
    req.headers.emplace_back("range", fmt::format("bytes={}-{}", offset, offset + len - 1));
    req.op = fmt::format("GET (bytes {}-{})", offset, offset + len - 1);
    auto r = FLOE_TRY(execute(req));
    if (r.status == 416)
        return fail(errc::out_of_range, "{} s3://{}/{}: past the object's end", req.op, loc.bucket,
                    loc.key);
    if (r.status != 206 && r.status != 200) return status_error(req.op, loc.bucket, loc.key, r);
    std::string_view body = r.body;
    if (r.status == 200) { // a server that ignores Range sends the whole object
        if (offset > body.size())
            body = {};
        else
            body = body.substr(offset);
    }
    if (body.size() < len)
        return fail(errc::out_of_range, "{} s3://{}/{}: got {} bytes", req.op, loc.bucket, loc.key,
                    body.size());
    out.assign(body.begin(), body.begin() + static_cast<ptrdiff_t>(len));
    return {};
}

result<uint64_t> s3_client::size(std::string_view uri) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    request req{.method = "HEAD", .bucket = loc.bucket, .key = loc.key, .head = true};
    req.api = "HeadObject";
    auto r = FLOE_TRY(execute(req));
    if (r.status != 200) return status_error(req.op, loc.bucket, loc.key, r);
    if (!r.content_length)
        return fail(errc::io_error, "HEAD s3://{}/{}: no Content-Length", loc.bucket, loc.key);
    return *r.content_length;
}

result<bool> s3_client::exists(std::string_view uri) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    request req{.method = "HEAD", .bucket = loc.bucket, .key = loc.key, .head = true};
    req.api = "HeadObject";
    auto r = FLOE_TRY(execute(req));
    if (r.status == 404) return false;
    if (r.status != 200) return status_error(req.op, loc.bucket, loc.key, r);
    return true;
}

result<void> s3_client::write(std::string_view uri, bytes_view data) {
    if (data.size() > _opts.multipart_part_size) return write_multipart(uri, data);
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    // A whole-object PUT is idempotent: retrying it can only write the same bytes again.
    request req{.method = "PUT", .bucket = loc.bucket, .key = loc.key, .body = data};
    req.api = "PutObject";
    auto r = FLOE_TRY(execute(req));
    if (r.status != 200) return status_error(req.op, loc.bucket, loc.key, r);
    return {};
}

result<void> s3_client::create_new(std::string_view uri, bytes_view data) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    request req{.method = "PUT", .bucket = loc.bucket, .key = loc.key, .body = data};
    req.api = "PutObject";
    req.headers.emplace_back("if-none-match", "*");
    req.fresh_connection = true;
    req.op = "PUT (If-None-Match: *)";
    auto r = FLOE_TRY(execute(req));
    if (r.status == 200) return {};
    if (r.status == 412 && req.retried) {
        // An earlier attempt may have created the object and lost its answer: the object is
        // ours if it holds exactly our bytes (a rival writer's metadata differs at least in
        // its snapshot ids).
        auto have = read(uri);
        if (have && have->size() == data.size()
            && std::equal(have->begin(), have->end(), data.begin()))
            return {};
    }
    if (r.status == 412) return fail(errc::already_exists, "{} already exists", uri);
    return status_error(req.op, loc.bucket, loc.key, r);
}

result<void> s3_client::copy(std::string_view from, std::string_view to) {
    auto src = FLOE_TRY(parse_s3_uri(from));
    auto dst = FLOE_TRY(parse_s3_uri(to));
    request req{.method = "PUT", .bucket = dst.bucket, .key = dst.key};
    req.api = "CopyObject";
    req.headers.emplace_back("x-amz-copy-source",
                             "/" + uri_encode(src.bucket, false) + "/" + uri_encode(src.key, true));
    req.op = fmt::format("CopyObject from {}", from);
    auto r = FLOE_TRY(execute(req));
    // CopyObject can fail after its 200 status line: the error is then in the body.
    if (r.status == 200 && r.body.find("<Error>") != std::string::npos) {
        r.status = 500;
        r.code = xml_tag(r.body, "Code").value_or("InternalError");
    }
    if (r.status != 200) return status_error(req.op, dst.bucket, dst.key, r);
    return {};
}

result<void> s3_client::copy_new(std::string_view from, std::string_view to) {
    auto bytes = FLOE_TRY(read(from));
    return create_new(to, bytes);
}

result<void> s3_client::remove(std::string_view uri) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    request req{.method = "DELETE", .bucket = loc.bucket, .key = loc.key};
    req.api = "DeleteObject";
    auto r = FLOE_TRY(execute(req));
    if (r.status == 204 || r.status == 200 || r.status == 404) return {};
    return status_error(req.op, loc.bucket, loc.key, r);
}

namespace {

/// "2026-12-01T16:20:00.000Z" (S3's LastModified) in ms since the epoch; -1 if unreadable.
int64_t iso8601_ms(std::string_view t) {
    std::tm tm{};
    int ms = 0;
    std::string text(t);
    int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms);
    if (n < 6) return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    auto secs = ::timegm(&tm);
    if (secs < 0) return -1;
    return int64_t(secs) * 1000 + (n == 7 ? ms : 0);
}

} // namespace

result<std::vector<std::string>> s3_client::list(std::string_view prefix) {
    std::vector<std::string> out;
    for (auto& o : FLOE_TRY(list_info(prefix))) out.push_back(std::move(o.uri));
    return out;
}

result<std::vector<s3_object>> s3_client::list_info(std::string_view prefix) {
    auto loc = FLOE_TRY(parse_s3_uri(prefix));
    std::vector<s3_object> out;
    std::string token;
    for (;;) {
        request req{.method = "GET", .bucket = loc.bucket};
        req.api = "ListObjectsV2";
        req.op = fmt::format("ListObjectsV2 prefix '{}'", loc.key);
        req.query = {{"list-type", "2"},
                     {"prefix", loc.key},
                     {"max-keys", std::to_string(_opts.list_page_size)}};
        if (!token.empty()) req.query.emplace_back("continuation-token", token);
        auto r = FLOE_TRY(execute(req));
        if (r.status != 200) return status_error(req.op, loc.bucket, "", r);
        size_t pos = 0;
        while (auto c = xml_tag(r.body, "Contents", pos)) {
            auto k = xml_tag(*c, "Key");
            if (!k) continue;
            s3_object o;
            o.uri = fmt::format("s3://{}/{}", loc.bucket, *k);
            if (auto size = xml_tag(*c, "Size")) {
                int64_t v = 0;
                auto res = std::from_chars(size->data(), size->data() + size->size(), v);
                if (res.ec == std::errc()) o.size = v;
            }
            if (auto modified = xml_tag(*c, "LastModified")) o.modified_ms = iso8601_ms(*modified);
            out.push_back(std::move(o));
        }
        if (xml_tag(r.body, "IsTruncated").value_or("false") != "true") break;
        auto next = xml_tag(r.body, "NextContinuationToken");
        if (!next || next->empty())
            return fail(errc::io_error, "{} s3://{}: truncated page without a continuation token",
                        req.op, loc.bucket);
        token = *next;
    }
    return out;
}

result<std::vector<std::string>> s3_client::list_uploads(std::string_view prefix) {
    std::vector<std::string> out;
    for (auto& u : FLOE_TRY(list_pending_uploads(prefix))) out.push_back(std::move(u.uri));
    return out;
}

result<std::vector<s3_upload>> s3_client::list_pending_uploads(std::string_view prefix) {
    auto loc = FLOE_TRY(parse_s3_uri(prefix));
    request req{.method = "GET", .bucket = loc.bucket};
    req.api = "ListMultipartUploads";
    req.op = fmt::format("ListMultipartUploads prefix '{}'", loc.key);
    req.query = {{"uploads", ""}, {"prefix", loc.key}};
    auto r = FLOE_TRY(execute(req));
    if (r.status != 200) return status_error(req.op, loc.bucket, "", r);
    std::vector<s3_upload> out;
    size_t pos = 0;
    while (auto u = xml_tag(r.body, "Upload", pos)) {
        auto k = xml_tag(*u, "Key");
        auto id = xml_tag(*u, "UploadId");
        if (!k || !id) continue;
        s3_upload p;
        p.uri = fmt::format("s3://{}/{}", loc.bucket, *k);
        p.id = *id;
        if (auto t = xml_tag(*u, "Initiated")) p.initiated_ms = iso8601_ms(*t);
        out.push_back(std::move(p));
    }
    return out;
}

result<void> s3_client::abort_pending_upload(const s3_upload& u) {
    auto loc = FLOE_TRY(parse_s3_uri(u.uri));
    request a{.method = "DELETE", .bucket = loc.bucket, .key = loc.key};
    a.api = "AbortMultipartUpload";
    a.query = {{"uploadId", u.id}};
    a.op = fmt::format("AbortMultipartUpload {}", u.uri);
    auto r = FLOE_TRY(execute(a));
    if (r.status == 204 || r.status == 200 || r.status == 404) return {};
    return status_error(a.op, loc.bucket, loc.key, r);
}

result<void> s3_client::check_bucket(std::string_view bucket) {
    request req{.method = "HEAD", .bucket = std::string(bucket), .head = true};
    req.api = "HeadBucket";
    req.op = "HEAD bucket";
    auto r = FLOE_TRY(execute(req));
    if (r.status == 200) return {};
    if (r.status == 404)
        r.code = "NoSuchBucket";
    else if (r.status == 403 && r.code.empty())
        r.code = "AccessDenied";
    return status_error(req.op, req.bucket, "", r);
}

result<std::string> s3_client::start_upload(const s3_location& loc) {
    request init{.method = "POST", .bucket = loc.bucket, .key = loc.key};
    init.api = "CreateMultipartUpload";
    init.query = {{"uploads", ""}};
    init.op = "CreateMultipartUpload";
    auto r = FLOE_TRY(execute(init));
    if (r.status != 200) return status_error(init.op, loc.bucket, loc.key, r);
    auto upload_id = xml_tag(r.body, "UploadId");
    if (!upload_id || upload_id->empty())
        return fail(errc::io_error, "CreateMultipartUpload s3://{}/{}: no UploadId", loc.bucket,
                    loc.key);
    return *upload_id;
}

result<std::string> s3_client::upload_part(const s3_location& loc, const std::string& upload_id,
                                            int part, bytes_view data) {
    // Re-sending a part replaces it: a retried UploadPart cannot publish anything.
    request p{.method = "PUT", .bucket = loc.bucket, .key = loc.key, .body = data};
    p.api = "UploadPart";
    p.query = {{"partNumber", std::to_string(part)}, {"uploadId", upload_id}};
    p.op = fmt::format("UploadPart {}", part);
    auto r = FLOE_TRY(execute(p));
    if (r.status != 200) return status_error(p.op, loc.bucket, loc.key, r);
    if (r.etag.empty())
        return fail(errc::io_error, "{} s3://{}/{}: no ETag", p.op, loc.bucket, loc.key);
    return r.etag;
}

result<void> s3_client::complete_upload(const s3_location& loc, const std::string& upload_id,
                                         const std::vector<std::string>& etags,
                                         std::optional<uint64_t> expected_size) {
    std::string body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags.size(); ++i)
        body +=
            fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etags[i]);
    body += "</CompleteMultipartUpload>";
    request c{.method = "POST", .bucket = loc.bucket, .key = loc.key, .body = as_bytes(body)};
    c.api = "CompleteMultipartUpload";
    c.query = {{"uploadId", upload_id}};
    c.op = "CompleteMultipartUpload";
    auto r = FLOE_TRY(execute(c));
    // CompleteMultipartUpload can fail after its 200 status line: the error is then in the body.
    if (r.status == 200 && r.body.find("<Error>") != std::string::npos) {
        r.status = 500;
        r.code = xml_tag(r.body, "Code").value_or("InternalError");
    }
    if (r.status == 200) return {};
    // NoSuchUpload: an earlier send (ours after an unknown outcome, or curl's silent re-send on
    // a dead reused connection) may have completed it; then the object is there with our size.
    if (r.status == 404 && r.code == "NoSuchUpload" && expected_size) {
        auto have = size(fmt::format("s3://{}/{}", loc.bucket, loc.key));
        if (have && *have == *expected_size) return {};
    }
    return status_error(c.op, loc.bucket, loc.key, r);
}

void s3_client::abort_upload(const s3_location& loc, const std::string& upload_id) {
    request a{.method = "DELETE", .bucket = loc.bucket, .key = loc.key};
    a.api = "AbortMultipartUpload";
    a.query = {{"uploadId", upload_id}};
    a.op = "AbortMultipartUpload";
    auto r = execute(a);
    if (!r || (r->status != 204 && r->status != 200 && r->status != 404))
        spdlog::warn(
            "s3: could not abort the multipart upload of s3://{}/{} ({}); a lifecycle rule for "
            "incomplete multipart uploads removes it",
            loc.bucket, loc.key,
            r ? fmt::format("{} {}", r->status, r->code) : r.error().message());
}

s3_writer::s3_writer(s3_client& client, s3_location loc, uint64_t part_size,
                     bool always_multipart)
    : _client(client), _loc(std::move(loc)), _part_size(std::max<uint64_t>(part_size, 1)),
      _always_multipart(always_multipart) {}

s3_writer::~s3_writer() {
    if (!_upload_id.empty() && !_closed) _client.abort_upload(_loc, _upload_id);
}

result<void> s3_writer::write(bytes_view data) {
    if (_closed || _failed)
        return fail(errc::internal, "write to a closed or failed writer of s3://{}/{}",
                    _loc.bucket, _loc.key);
    _size += data.size();
    while (!data.empty()) {
        auto n = std::min<size_t>(data.size(), _part_size - _buf.size());
        _buf.insert(_buf.end(), data.begin(), data.begin() + static_cast<ptrdiff_t>(n));
        data = data.subspan(n);
        if (_buf.size() == _part_size) FLOE_TRY(flush_part());
    }
    return {};
}

result<void> s3_writer::close() {
    if (_closed || _failed)
        return fail(errc::internal, "close of a closed or failed writer of s3://{}/{}",
                    _loc.bucket, _loc.key);
    if (_upload_id.empty() && !_always_multipart) {
        FLOE_TRY(_client.write(fmt::format("s3://{}/{}", _loc.bucket, _loc.key), _buf));
        _closed = true;
        return {};
    }
    if (!_buf.empty() || _etags.empty()) FLOE_TRY(flush_part());
    auto done = _client.complete_upload(_loc, _upload_id, _etags, _size);
    if (!done) {
        _failed = true;
        return done;
    }
    _closed = true;
    _buf = {};
    return {};
}

result<void> s3_writer::flush_part() {
    if (_upload_id.empty()) {
        auto id = _client.start_upload(_loc);
        if (!id) {
            _failed = true;
            return std::unexpected(id.error());
        }
        _upload_id = std::move(*id);
    }
    auto etag = _client.upload_part(_loc, _upload_id, static_cast<int>(_etags.size() + 1), _buf);
    if (!etag) {
        _failed = true; // the destructor aborts the upload
        return std::unexpected(etag.error());
    }
    _etags.push_back(std::move(*etag));
    _buf.clear();
    return {};
}

result<std::unique_ptr<s3_writer>> s3_client::open_writer(std::string_view uri) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    return std::make_unique<s3_writer>(*this, std::move(loc), _opts.multipart_part_size, false);
}

result<void> s3_client::write_multipart(std::string_view uri, bytes_view data) {
    auto loc = FLOE_TRY(parse_s3_uri(uri));
    s3_writer w(*this, std::move(loc), _opts.multipart_part_size, true);
    FLOE_TRY(w.write(data));
    return w.close();
}

} // namespace floe::aws
