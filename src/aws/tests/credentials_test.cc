// The AWS credential chain, link by link, against local stand-ins: moto's STS for web identity
// (S3TEST_PLAIN_ENDPOINT, from tests/s3/moto_env.py) and tests/s3/metadata_server.py for
// IMDSv2 and ECS (S3TEST_METADATA_ENDPOINT). Environment and shared files need no server.
#include "base/uuid.h"
#include "aws/client.h"
#include "aws/credentials.h"
#include "aws/s3.h"
#include "aws/sts.h"

#include <gtest/gtest.h>

#include <curl/curl.h>

#include <filesystem>
#include <thread>
#include <fstream>

namespace floe::aws {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// A fake environment: only the variables a test sets exist.
struct fake_env {
    std::map<std::string, std::string> vars;
    credential_chain_options options() {
        credential_chain_options o;
        o.getenv = [this](const std::string& n) -> std::optional<std::string> {
            auto it = vars.find(n);
            if (it == vars.end()) return std::nullopt;
            return it->second;
        };
        o.http_timeout = std::chrono::milliseconds(2000);
        return o;
    }
};

class Credentials : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("floe-creds-" + uuid::random().to_string());
        fs::create_directories(dir);
        e.vars["HOME"] = dir.string(); // never the real ~/.aws
        e.vars["AWS_EC2_METADATA_DISABLED"] = "true";
    }
    void TearDown() override { fs::remove_all(dir); }
    void write(const std::string& rel, const std::string& text) {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
    fs::path dir;
    fake_env e;
};

TEST_F(Credentials, NothingConfiguredNamesEveryLink) {
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_FALSE(c);
    for (auto* what :
         {"environment", "web identity", "shared files", "ECS", "EC2 instance metadata"})
        EXPECT_NE(c.error().message().find(what), std::string::npos) << c.error().message();
}

TEST_F(Credentials, EnvironmentFirst) {
    e.vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    e.vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
    e.vars["AWS_SESSION_TOKEN"] = "envtoken";
    write(".aws/credentials",
          "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = f\n");
    auto chain = make_default_credential_chain(e.options());
    auto c = chain->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "ENVKEY");
    EXPECT_EQ(c->secret_access_key, "envsecret");
    EXPECT_EQ(c->session_token, "envtoken");
    EXPECT_NE(chain->source().find("environment"), std::string::npos);
}

TEST_F(Credentials, EnvironmentWithoutSecretIsAnError) {
    e.vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(Credentials, SharedCredentialsFileProfiles) {
    write(".aws/credentials",
          "# comment\n[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = d\n\n"
          "[work]\n aws_access_key_id=WORKKEY \naws_secret_access_key = w=1\n"
          "aws_session_token = tok\n");
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "DEFKEY");
    e.vars["AWS_PROFILE"] = "work";
    c = make_default_credential_chain(e.options())->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "WORKKEY");
    EXPECT_EQ(c->secret_access_key, "w=1");
    EXPECT_EQ(c->session_token, "tok");
}

TEST_F(Credentials, ConfigFileProfileAndRegion) {
    e.vars["AWS_PROFILE"] = "eu";
    e.vars["AWS_CONFIG_FILE"] = (dir / "elsewhere.ini").string();
    write("elsewhere.ini", "[profile eu]\nregion = eu-west-3\naws_access_key_id = CFGKEY\n"
                           "aws_secret_access_key = c\n");
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "CFGKEY");
    EXPECT_EQ(region_from_environment(e.options()), "eu-west-3");
    e.vars["AWS_DEFAULT_REGION"] = "ap-south-1";
    EXPECT_EQ(region_from_environment(e.options()), "ap-south-1");
    e.vars["AWS_REGION"] = "us-west-2";
    EXPECT_EQ(region_from_environment(e.options()), "us-west-2");
}

TEST_F(Credentials, SharedCredentialsFileOverride) {
    e.vars["AWS_SHARED_CREDENTIALS_FILE"] = (dir / "creds").string();
    write("creds", "[default]\naws_access_key_id = OVRKEY\naws_secret_access_key = o\n");
    write(".aws/credentials",
          "[default]\naws_access_key_id = HOMEKEY\naws_secret_access_key = h\n");
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "OVRKEY");
}

TEST_F(Credentials, WebIdentityThroughSts) {
    ASSERT_FALSE(env("S3TEST_PLAIN_ENDPOINT").empty()) << "run through tests/s3/moto_env.py";
    write("token", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n");
    e.vars["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/floe";
    e.vars["AWS_WEB_IDENTITY_TOKEN_FILE"] = (dir / "token").string();
    e.vars["AWS_ENDPOINT_URL_STS"] = env("S3TEST_PLAIN_ENDPOINT");
    write(".aws/credentials",
          "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = f\n");
    auto chain = make_default_credential_chain(e.options());
    auto c = chain->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_FALSE(c->access_key_id.empty());
    EXPECT_NE(c->access_key_id, "FILEKEY") << "web identity comes before the shared files";
    EXPECT_FALSE(c->secret_access_key.empty());
    EXPECT_FALSE(c->session_token.empty());
    EXPECT_NE(chain->source().find("web identity"), std::string::npos);
}

class MetadataServer : public Credentials {
protected:
    void SetUp() override {
        Credentials::SetUp();
        base = env("S3TEST_METADATA_ENDPOINT");
        ASSERT_FALSE(base.empty()) << "run through tests/s3/metadata_server.py";
    }
    std::string call(const std::string& method, const std::string& path) {
        CURL* h = curl_easy_init();
        std::string body;
        auto url = base + path;
        curl_easy_setopt(h, CURLOPT_URL, url.c_str());
        if (method == "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(
            h, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* u) {
                static_cast<std::string*>(u)->append(p, s * n);
                return s * n;
            });
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
        curl_easy_perform(h);
        curl_easy_cleanup(h);
        return body;
    }
    int served() { return std::stoi(call("GET", "/control/count")); }
    std::string base;
};

TEST_F(MetadataServer, Imdsv2TokenThenRole) {
    call("PUT", "/control/expires?s=3600");
    e.vars.erase("AWS_EC2_METADATA_DISABLED");
    e.vars["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = base;
    auto chain = make_default_credential_chain(e.options());
    auto c = chain->get();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_TRUE(c->access_key_id.starts_with("IMDS")) << c->access_key_id;
    EXPECT_EQ(c->secret_access_key, "IMDS-secret");
    EXPECT_EQ(c->session_token, "IMDS-token");
    // Valid for an hour: the next call is served from the cache.
    int before = served();
    ASSERT_TRUE(chain->get());
    EXPECT_EQ(served(), before);
}

TEST_F(MetadataServer, EcsWithAuthorizationTokenRefreshesBeforeExpiry) {
    e.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = base + "/ecs/credentials";
    write("ecs-token", "ecs-auth-token\n");
    e.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = (dir / "ecs-token").string();
    call("PUT", "/control/expires?s=120"); // inside the five-minute refresh margin
    auto chain = make_default_credential_chain(e.options());
    auto c1 = chain->get();
    ASSERT_TRUE(c1) << c1.error().message();
    EXPECT_TRUE(c1->access_key_id.starts_with("ECS"));
    auto c2 = chain->get();
    ASSERT_TRUE(c2);
    EXPECT_NE(c1->access_key_id, c2->access_key_id)
        << "credentials about to expire are fetched again";
    call("PUT", "/control/expires?s=3600");
    auto c3 = chain->get();
    auto c4 = chain->get();
    ASSERT_TRUE(c3 && c4);
    EXPECT_EQ(c3->access_key_id, c4->access_key_id) << "credentials valid for an hour are cached";
}

TEST_F(MetadataServer, EcsWrongTokenIsAClearError) {
    e.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = base + "/ecs/credentials";
    e.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "wrong";
    auto c = make_default_credential_chain(e.options())->get();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("ECS container credentials"), std::string::npos)
        << c.error().message();
    EXPECT_NE(c.error().message().find("403"), std::string::npos) << c.error().message();
}

// Issue 25 item 7: off EC2 with nothing configured, the error says what failed once and what to
// set, instead of repeating its prefix.
TEST_F(Credentials, NoCredentialsOffEc2SaysWhatToSet) {
    e.vars.erase("AWS_EC2_METADATA_DISABLED");
    e.vars["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://127.0.0.1:1"; // nothing listens
    auto o = e.options();
    o.settings_hint = "floe.storage.remote.s3.access-key-id and secret-access-key";
    auto c = make_default_credential_chain(o)->get();
    ASSERT_FALSE(c);
    const auto& m = c.error().message();
    EXPECT_TRUE(m.starts_with("no AWS credentials: ")) << m;
    auto first = m.find("EC2 instance metadata");
    ASSERT_NE(first, std::string::npos) << m;
    EXPECT_EQ(m.find("EC2 instance metadata", first + 1), std::string::npos)
        << "the link is named once: " << m;
    for (auto* what : {"floe.storage.remote.s3.access-key-id", "AWS_ACCESS_KEY_ID", "AWS_PROFILE",
                       "127.0.0.1:1"})
        EXPECT_NE(m.find(what), std::string::npos) << what << " in: " << m;
    // The S3 client puts the request in front, without naming the source again.
    s3_options so;
    so.endpoint = "http://127.0.0.1:1";
    so.path_style = true;
    so.max_attempts = 1;
    so.credentials = make_default_credential_chain(o);
    s3_client s3(so);
    auto r = s3.read("s3://b/k");
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().message().starts_with("GET s3://b/k: no AWS credentials: "))
        << r.error().message();
    EXPECT_EQ(r.error().message().find("credentials from"), std::string::npos) << r.error().message();
}

// Issue 25 item 7: a host that cannot resolve because the bucket went into it says to use
// path-style addressing.
TEST(S3Addressing, UnresolvedVirtualHostSuggestsPathStyle) {
    s3_options so;
    so.endpoint = "http://127.0.0.1:1";
    so.max_attempts = 1;
    s3_client s3(so);
    auto r = s3.read("s3://my-bucket/k");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("my-bucket.127.0.0.1"), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("floe.storage.remote.s3.path-style-access=true"),
              std::string::npos)
        << r.error().message();
}

// STS AssumeRole against moto (signature checking on): the base user's keys assume a role, the
// session's keys are what calls are signed with (moto answers GetCallerIdentity with the
// assumed role, and S3 accepts them), and a session about to expire is replaced.
class AssumeRole : public Credentials {
protected:
    void SetUp() override {
        Credentials::SetUp();
        ASSERT_FALSE(env("S3TEST_ENDPOINT").empty()) << "run through tests/s3/moto_env.py";
        user = std::make_shared<static_credentials>(
            credentials{env("S3TEST_ACCESS_KEY_ID"), env("S3TEST_SECRET_ACCESS_KEY"), ""});
        service_client iam({.service = "iam", .endpoint = env("S3TEST_ENDPOINT"), .credentials = user});
        auto trust = R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",)"
                     R"("Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]})";
        auto name = "floe-" + uuid::random().to_string().substr(0, 8);
        auto r = iam.query_call("CreateRole", "2010-05-08",
                                {{"RoleName", name}, {"AssumeRolePolicyDocument", trust}});
        ASSERT_TRUE(r && r->ok()) << (r ? r->body : r.error().message());
        role_arn = xml_text(r->body, "Arn").value_or("");
        ASSERT_FALSE(role_arn.empty()) << r->body;
        auto a = iam.query_call("AttachRolePolicy", "2010-05-08",
                                {{"RoleName", name},
                                 {"PolicyArn", "arn:aws:iam::123456789012:policy/all"}});
        ASSERT_TRUE(a && a->ok()) << (a ? a->body : a.error().message());
    }
    assume_role_options role(std::chrono::seconds duration) {
        assume_role_options o;
        o.role_arn = role_arn;
        o.external_id = "floe-external";
        o.session_name = "floe-test";
        o.duration = duration;
        o.endpoint = env("S3TEST_ENDPOINT");
        return o;
    }
    std::string caller_arn(std::shared_ptr<credentials_provider> p) {
        service_client sts({.service = "sts", .endpoint = env("S3TEST_ENDPOINT"), .credentials = p});
        auto r = sts.query_call("GetCallerIdentity", "2011-06-15", {});
        if (!r) return r.error().message();
        return xml_text(r->body, "Arn").value_or(r->body);
    }
    std::shared_ptr<credentials_provider> user;
    std::string role_arn;
};

TEST_F(AssumeRole, SessionCredentialsAreUsedAndRefreshed) {
    auto p = make_assume_role_provider(user, role(std::chrono::seconds(8)));
    auto c1 = p->get();
    ASSERT_TRUE(c1) << c1.error().message();
    EXPECT_NE(c1->access_key_id, env("S3TEST_ACCESS_KEY_ID"));
    EXPECT_FALSE(c1->session_token.empty());
    EXPECT_NE(p->source().find(role_arn), std::string::npos) << p->source();
    EXPECT_NE(caller_arn(p).find(":assumed-role/"), std::string::npos) << caller_arn(p);
    EXPECT_EQ(caller_arn(user).find(":assumed-role/"), std::string::npos);
    s3_options so;
    so.endpoint = env("S3TEST_ENDPOINT");
    so.path_style = true;
    so.credentials = p;
    s3_client s3(so);
    auto uri = "s3://" + env("S3TEST_BUCKET") + "/assume-role/" + uuid::random().to_string();
    ASSERT_TRUE(s3.write(uri, as_bytes(std::string_view("x"))))
        << s3.write(uri, as_bytes(std::string_view("x"))).error().message();
    // Cached while more than the margin (a quarter of 8 s) is left...
    EXPECT_EQ(assume_role_refresh_margin(std::chrono::seconds(8)), std::chrono::seconds(2));
    EXPECT_EQ(assume_role_refresh_margin(std::chrono::seconds(3600)), std::chrono::seconds(300));
    auto c2 = p->get();
    ASSERT_TRUE(c2);
    EXPECT_EQ(c2->access_key_id, c1->access_key_id);
    // ... and replaced once inside it (6 s in), before the session expires.
    std::this_thread::sleep_for(std::chrono::milliseconds(6500));
    auto c3 = p->get();
    ASSERT_TRUE(c3) << c3.error().message();
    EXPECT_NE(c3->access_key_id, c1->access_key_id);
    ASSERT_TRUE(s3.read(uri)) << s3.read(uri).error().message();
    EXPECT_NE(caller_arn(p).find(":assumed-role/"), std::string::npos);
}

TEST_F(AssumeRole, RefusalNamesTheRoleAndTheBaseCredentials) {
    auto o = role(std::chrono::seconds(900));
    auto bad = std::make_shared<static_credentials>(
        credentials{env("S3TEST_ACCESS_KEY_ID"), "not-the-secret", ""});
    auto c = make_assume_role_provider(bad, o)->get();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find(role_arn), std::string::npos) << c.error().message();
    EXPECT_NE(c.error().message().find("static settings"), std::string::npos) << c.error().message();
    EXPECT_EQ(c.error().message().find("not-the-secret"), std::string::npos);
}

TEST(Iso8601, Parses) {
    EXPECT_EQ(parse_iso8601("2013-05-24T00:00:00Z").value(), 1369353600);
    EXPECT_EQ(parse_iso8601("2013-05-24T00:00:00.123Z").value(), 1369353600);
    EXPECT_FALSE(parse_iso8601("yesterday"));
}

} // namespace
} // namespace floe::aws
