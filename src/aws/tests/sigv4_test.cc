// SigV4 against the examples AWS publishes for S3 header-based authentication (the
// AKIAIOSFODNN7EXAMPLE key, 24 May 2013, us-east-1, bucket examplebucket).
#include "aws/sigv4.h"

#include <gtest/gtest.h>

namespace floe::aws {
namespace {

const credentials example_key{"AKIAIOSFODNN7EXAMPLE",
                                  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
constexpr const char* empty_sha =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string signature_of(const std::string& auth) {
    return auth.substr(auth.find("Signature=") + 10);
}

TEST(Sigv4, EmptyPayloadHash) {
    EXPECT_EQ(sha256_hex(std::string_view("")), empty_sha);
}

TEST(Sigv4, GetObjectExample) {
    sigv4_request r{.method = "GET",
                    .path = "/test.txt",
                    .query = {},
                    .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                                {"Range", "bytes=0-9"},
                                {"x-amz-content-sha256", empty_sha},
                                {"x-amz-date", "20130524T000000Z"}},
                    .payload_sha256 = empty_sha};
    auto auth = sigv4_authorization(r, example_key, "us-east-1", "s3", "20130524T000000Z");
    EXPECT_EQ(auth,
              "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
              "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
              "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(Sigv4, PutObjectExample) {
    std::string body = "Welcome to Amazon S3.";
    auto sha = sha256_hex(std::string_view(body));
    EXPECT_EQ(sha, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    sigv4_request r{.method = "PUT",
                    .path = uri_encode("/test$file.text", true),
                    .query = {},
                    .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                                {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                                {"x-amz-date", "20130524T000000Z"},
                                {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                                {"x-amz-content-sha256", sha}},
                    .payload_sha256 = sha};
    EXPECT_EQ(r.path, "/test%24file.text");
    EXPECT_EQ(
        signature_of(sigv4_authorization(r, example_key, "us-east-1", "s3", "20130524T000000Z")),
        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(Sigv4, GetBucketLifecycleExample) {
    sigv4_request r{.method = "GET",
                    .path = "/",
                    .query = {{"lifecycle", ""}},
                    .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                                {"x-amz-date", "20130524T000000Z"},
                                {"x-amz-content-sha256", empty_sha}},
                    .payload_sha256 = empty_sha};
    EXPECT_EQ(
        signature_of(sigv4_authorization(r, example_key, "us-east-1", "s3", "20130524T000000Z")),
        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(Sigv4, ListObjectsExample) {
    // Query parameters given out of order: the signer sorts them.
    sigv4_request r{.method = "GET",
                    .path = "/",
                    .query = {{"prefix", "J"}, {"max-keys", "2"}},
                    .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                                {"x-amz-date", "20130524T000000Z"},
                                {"x-amz-content-sha256", empty_sha}},
                    .payload_sha256 = empty_sha};
    EXPECT_EQ(canonical_query(r.query), "max-keys=2&prefix=J");
    EXPECT_EQ(
        signature_of(sigv4_authorization(r, example_key, "us-east-1", "s3", "20130524T000000Z")),
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(Sigv4, UriEncoding) {
    EXPECT_EQ(uri_encode("a b/c~d_e-f.g*h", true), "a%20b/c~d_e-f.g%2Ah");
    EXPECT_EQ(uri_encode("a/b=c", false), "a%2Fb%3Dc");
    EXPECT_EQ(canonical_query({{"uploads", ""}}), "uploads=");
    EXPECT_EQ(amz_date(1369353600), "20130524T000000Z");
}

} // namespace
} // namespace floe::aws
