// The AWS credential chain, link by link, against local stand-ins: moto's STS for web identity
// (S3TEST_PLAIN_ENDPOINT, from tests/s3/moto_env.py) and tests/s3/metadata_server.py for
// IMDSv2 and ECS (S3TEST_METADATA_ENDPOINT). Environment and shared files need no server.
#include "base/uuid.h"
#include "iceberg/aws_credentials.h"

#include <gtest/gtest.h>

#include <curl/curl.h>

#include <filesystem>
#include <fstream>

namespace floe::iceberg {
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
    auto c = make_default_credential_chain(e.options())->credentials();
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
    auto c = chain->credentials();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "ENVKEY");
    EXPECT_EQ(c->secret_access_key, "envsecret");
    EXPECT_EQ(c->session_token, "envtoken");
    EXPECT_NE(chain->source().find("environment"), std::string::npos);
}

TEST_F(Credentials, EnvironmentWithoutSecretIsAnError) {
    e.vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    auto c = make_default_credential_chain(e.options())->credentials();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(Credentials, SharedCredentialsFileProfiles) {
    write(".aws/credentials",
          "# comment\n[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = d\n\n"
          "[work]\n aws_access_key_id=WORKKEY \naws_secret_access_key = w=1\n"
          "aws_session_token = tok\n");
    auto c = make_default_credential_chain(e.options())->credentials();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->access_key_id, "DEFKEY");
    e.vars["AWS_PROFILE"] = "work";
    c = make_default_credential_chain(e.options())->credentials();
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
    auto c = make_default_credential_chain(e.options())->credentials();
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
    auto c = make_default_credential_chain(e.options())->credentials();
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
    auto c = chain->credentials();
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
    auto c = chain->credentials();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_TRUE(c->access_key_id.starts_with("IMDS")) << c->access_key_id;
    EXPECT_EQ(c->secret_access_key, "IMDS-secret");
    EXPECT_EQ(c->session_token, "IMDS-token");
    // Valid for an hour: the next call is served from the cache.
    int before = served();
    ASSERT_TRUE(chain->credentials());
    EXPECT_EQ(served(), before);
}

TEST_F(MetadataServer, EcsWithAuthorizationTokenRefreshesBeforeExpiry) {
    e.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = base + "/ecs/credentials";
    write("ecs-token", "ecs-auth-token\n");
    e.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = (dir / "ecs-token").string();
    call("PUT", "/control/expires?s=120"); // inside the five-minute refresh margin
    auto chain = make_default_credential_chain(e.options());
    auto c1 = chain->credentials();
    ASSERT_TRUE(c1) << c1.error().message();
    EXPECT_TRUE(c1->access_key_id.starts_with("ECS"));
    auto c2 = chain->credentials();
    ASSERT_TRUE(c2);
    EXPECT_NE(c1->access_key_id, c2->access_key_id)
        << "credentials about to expire are fetched again";
    call("PUT", "/control/expires?s=3600");
    auto c3 = chain->credentials();
    auto c4 = chain->credentials();
    ASSERT_TRUE(c3 && c4);
    EXPECT_EQ(c3->access_key_id, c4->access_key_id) << "credentials valid for an hour are cached";
}

TEST_F(MetadataServer, EcsWrongTokenIsAClearError) {
    e.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = base + "/ecs/credentials";
    e.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "wrong";
    auto c = make_default_credential_chain(e.options())->credentials();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("ECS container credentials"), std::string::npos)
        << c.error().message();
    EXPECT_NE(c.error().message().find("403"), std::string::npos) << c.error().message();
}

TEST(Iso8601, Parses) {
    EXPECT_EQ(parse_iso8601("2013-05-24T00:00:00Z").value(), 1369353600);
    EXPECT_EQ(parse_iso8601("2013-05-24T00:00:00.123Z").value(), 1369353600);
    EXPECT_FALSE(parse_iso8601("yesterday"));
}

} // namespace
} // namespace floe::iceberg
