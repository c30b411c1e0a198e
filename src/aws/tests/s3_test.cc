// aws::s3_client against a real S3 server (moto with signature checking on), started by
// tests/s3/moto_env.py, which passes its endpoint, bucket and key in S3TEST_*.
#include "base/metrics.h"
#include "base/uuid.h"
#include "aws/s3.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

namespace floe::aws {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

s3_options options(std::string secret = env("S3TEST_SECRET_ACCESS_KEY")) {
    s3_options o;
    o.endpoint = env("S3TEST_ENDPOINT");
    o.region = env("S3TEST_REGION");
    o.path_style = true;
    o.credentials = std::make_shared<static_credentials>(
        credentials{env("S3TEST_ACCESS_KEY_ID"), std::move(secret), ""});
    o.retry_base = std::chrono::milliseconds(1);
    return o;
}

class S3Client : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(env("S3TEST_ENDPOINT").empty()) << "run through tests/s3/moto_env.py";
        root = "s3://" + env("S3TEST_BUCKET") + "/" + uuid::random().to_string() + "/";
    }
    s3_client io{options()};
    std::string root;
};

byte_buffer bytes(std::string_view s) {
    return byte_buffer(s.begin(), s.end());
}

TEST_F(S3Client, WriteReadExistsRemove) {
    auto uri = root + "dir/a b~c.txt";
    EXPECT_FALSE(io.exists(uri).value());
    auto missing = io.read(uri);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found);
    EXPECT_NE(missing.error().message().find("GET " + uri + ": 404 NoSuchKey"), std::string::npos)
        << missing.error().message();
    ASSERT_TRUE(io.write(uri, bytes("hello"))) << io.write(uri, bytes("hello")).error().message();
    EXPECT_TRUE(io.exists(uri).value());
    EXPECT_EQ(io.read(uri).value(), bytes("hello"));
    EXPECT_EQ(io.size(uri).value(), 5u);
    ASSERT_TRUE(io.write(uri, bytes("replaced")));
    EXPECT_EQ(io.read(uri).value(), bytes("replaced"));
    ASSERT_TRUE(io.remove(uri));
    EXPECT_FALSE(io.exists(uri).value());
    EXPECT_TRUE(io.remove(uri)) << "removing a missing object succeeds";
    // Empty objects too.
    ASSERT_TRUE(io.write(root + "empty", {}));
    EXPECT_TRUE(io.read(root + "empty").value().empty());
}

TEST_F(S3Client, KeysWithReservedCharacters) {
    auto uri = root + "dir/a b+c=d&e%f.txt";
    ASSERT_TRUE(io.write(uri, bytes("x")));
    EXPECT_EQ(io.read(uri).value(), bytes("x"));
    EXPECT_EQ(io.list(root + "dir/").value(), std::vector<std::string>{uri});
}

TEST_F(S3Client, VirtualHostedAddressing) {
    // The bucket in the host name: curl resolves <bucket>.localhost to loopback.
    auto o = options();
    auto ep = env("S3TEST_ENDPOINT");
    o.endpoint = "http://localhost" + ep.substr(ep.rfind(':'));
    o.path_style = false;
    s3_client vh(o);
    auto uri = root + "vhost/a b.txt";
    auto w = vh.write(uri, bytes("hosted"));
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(io.read(uri).value(), bytes("hosted"))
        << "the same object as path-style addressing sees";
    EXPECT_EQ(vh.list(root + "vhost/").value(), std::vector<std::string>{uri});
    ASSERT_TRUE(vh.create_new(root + "vhost/new", bytes("n")));
    EXPECT_EQ(vh.create_new(root + "vhost/new", bytes("n")).error().code(), errc::already_exists);
}

TEST_F(S3Client, RangedReads) {
    auto uri = root + "ranged";
    byte_buffer data(100'000);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(i * 7);
    ASSERT_TRUE(io.write(uri, data));
    byte_buffer out;
    ASSERT_TRUE(io.read_range(uri, 99'992, 8, out));
    EXPECT_TRUE(std::equal(out.begin(), out.end(), data.end() - 8));
    ASSERT_TRUE(io.read_range(uri, 1000, 5000, out));
    ASSERT_EQ(out.size(), 5000u);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + 1000));
    EXPECT_FALSE(io.read_range(uri, 99'995, 10, out)) << "a range past the end fails";
}

TEST_F(S3Client, CreateNewNeverReplaces) {
    auto uri = root + "v1.metadata.json";
    ASSERT_TRUE(io.create_new(uri, bytes("first")));
    auto again = io.create_new(uri, bytes("second"));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists) << again.error().message();
    EXPECT_EQ(io.read(uri).value(), bytes("first"));
}

TEST_F(S3Client, CreateNewRace) {
    // Eight writers race for one name: exactly one wins.
    auto uri = root + "raced";
    std::atomic<int> wins{0}, exists{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; ++i)
        ts.emplace_back([&, i] {
            auto r = io.create_new(uri, bytes(fmt::format("writer {}", i)));
            if (r)
                ++wins;
            else if (r.error().code() == errc::already_exists)
                ++exists;
        });
    for (auto& t : ts)
        t.join();
    EXPECT_EQ(wins.load(), 1);
    EXPECT_EQ(exists.load(), 7);
}

TEST_F(S3Client, CopyAndCopyNew) {
    ASSERT_TRUE(io.write(root + "src", bytes("payload")));
    ASSERT_TRUE(io.write(root + "dst", bytes("old")));
    ASSERT_TRUE(io.copy(root + "src", root + "dst"));
    EXPECT_EQ(io.read(root + "dst").value(), bytes("payload"));
    ASSERT_TRUE(io.copy_new(root + "src", root + "fresh"));
    EXPECT_EQ(io.read(root + "fresh").value(), bytes("payload"));
    auto again = io.copy_new(root + "src", root + "dst");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists);
    auto missing = io.copy(root + "nothing", root + "x");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::not_found) << missing.error().message();
}

TEST_F(S3Client, ListPaginates) {
    auto o = options();
    o.list_page_size = 7; // 50 keys: 8 pages
    s3_client small(o);
    std::set<std::string> want;
    for (int i = 0; i < 50; ++i) {
        auto uri = fmt::format("{}list/k{:03}", root, i);
        ASSERT_TRUE(small.write(uri, bytes("x")));
        want.insert(uri);
    }
    ASSERT_TRUE(small.write(root + "listed-not", bytes("x"))); // shares "list" but not "list/"
    auto got = small.list(root + "list/");
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(std::set<std::string>(got->begin(), got->end()), want);
    EXPECT_EQ(got->size(), 50u);
    EXPECT_TRUE(small.list(root + "none/").value().empty());
}

// Orphan cleanup ages objects by what the listing says: sizes and modification times.
TEST_F(S3Client, ListInfoHasSizesAndAges) {
    auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
    ASSERT_TRUE(io.write(root + "info/a", bytes("12345")));
    ASSERT_TRUE(io.write(root + "info/b", bytes("")));
    auto got = io.list_info(root + "info/");
    ASSERT_TRUE(got) << got.error().message();
    ASSERT_EQ(got->size(), 2u);
    std::sort(got->begin(), got->end(), [](auto& x, auto& y) { return x.uri < y.uri; });
    EXPECT_EQ((*got)[0].uri, root + "info/a");
    EXPECT_EQ((*got)[0].size, 5);
    EXPECT_EQ((*got)[1].size, 0);
    for (auto& o : *got) {
        // S3 times have second precision (moto: milliseconds); allow a clock step of 2 s.
        EXPECT_GE(o.modified_ms, before - 2000) << o.uri;
        EXPECT_LE(o.modified_ms, before + 120000) << o.uri;
    }
}

// What a writer killed mid-upload leaves: listed with its id and age, and aborted.
TEST_F(S3Client, PendingUploadsAreListedAndAborted) {
    auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
    auto uri = root + "pending/data.parquet";
    auto loc = parse_s3_uri(uri);
    ASSERT_TRUE(loc) << loc.error().message();
    auto id = io.start_upload(*loc);
    ASSERT_TRUE(id) << id.error().message();
    auto pending = io.list_pending_uploads(root + "pending/");
    ASSERT_TRUE(pending) << pending.error().message();
    ASSERT_EQ(pending->size(), 1u);
    EXPECT_EQ((*pending)[0].uri, uri);
    EXPECT_EQ((*pending)[0].id, *id);
    // Parsed from Initiated (moto 5.2.1 always says 2010-11-10T20:48:33Z; real S3 the start).
    EXPECT_GT((*pending)[0].initiated_ms, 0);
    EXPECT_LE((*pending)[0].initiated_ms, before + 120000);
    EXPECT_TRUE(io.list_pending_uploads(root + "elsewhere/").value().empty());
    ASSERT_TRUE(io.abort_pending_upload((*pending)[0]));
    EXPECT_TRUE(io.list_pending_uploads(root + "pending/").value().empty());
    EXPECT_TRUE(io.abort_pending_upload((*pending)[0])) << "aborting a gone upload succeeds";
}

TEST_F(S3Client, MultipartUpload) {
    auto o = options();
    o.multipart_part_size = 5ull << 20; // S3's smallest part
    s3_client mp(o);
    byte_buffer data((12ull << 20) + 12345); // three parts, the last short
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>((i * 131) >> 3);
    auto uri = root + "big.parquet";
    auto w = mp.write(uri, data);
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(mp.size(uri).value(), data.size());
    EXPECT_EQ(mp.read(uri).value(), data);
}

TEST_F(S3Client, StreamingWriterUploadsPartsAsTheyFill) {
    auto o = options();
    o.multipart_part_size = 5ull << 20;
    s3_client mp(o);
    auto uri = root + "streamed.parquet";
    auto w = mp.open_writer(uri).value();
    byte_buffer all;
    for (int i = 0; i < 11; ++i) { // 11 x 1 MiB + a tail: parts of 5, 5 and 1 MiB + tail
        byte_buffer chunk((1u << 20) + static_cast<size_t>(i), static_cast<uint8_t>(i));
        ASSERT_TRUE(w->write(chunk));
        all.insert(all.end(), chunk.begin(), chunk.end());
    }
    EXPECT_FALSE(mp.exists(uri).value()) << "nothing is visible before close";
    EXPECT_EQ(mp.list_uploads(root).value(), std::vector<std::string>{uri})
        << "the upload started with part 1";
    auto closed = w->close();
    ASSERT_TRUE(closed) << closed.error().message();
    EXPECT_EQ(w->size(), all.size());
    EXPECT_EQ(mp.read(uri).value(), all);
    EXPECT_TRUE(mp.list_uploads(root).value().empty());
}

TEST_F(S3Client, UnclosedWriterAbortsItsUpload) {
    auto o = options();
    o.multipart_part_size = 5ull << 20;
    s3_client mp(o);
    auto uri = root + "abandoned.parquet";
    {
        auto w = mp.open_writer(uri).value();
        ASSERT_TRUE(w->write(byte_buffer(6u << 20, 1)));
        EXPECT_EQ(mp.list_uploads(root).value().size(), 1u);
    } // a failed batch drops its writer
    EXPECT_TRUE(mp.list_uploads(root).value().empty()) << "the upload was aborted";
    EXPECT_FALSE(mp.exists(uri).value());
}

TEST_F(S3Client, SmallStreamedObjectIsOnePut) {
    auto uri = root + "small";
    auto w = io.open_writer(uri).value();
    ASSERT_TRUE(w->write(bytes("abc")));
    ASSERT_TRUE(w->write(bytes("def")));
    ASSERT_TRUE(w->close());
    EXPECT_EQ(io.read(uri).value(), bytes("abcdef"));
    EXPECT_TRUE(io.list_uploads(root).value().empty());
}

// The value of one sample line of /metrics, 0 if absent.
double sample(const std::string& line_prefix) {
    auto text = metrics::registry::instance().render();
    auto at = text.find("\n" + line_prefix + " ");
    if (at == std::string::npos) return 0;
    return std::stod(text.substr(at + line_prefix.size() + 2));
}

TEST_F(S3Client, RequestsAreCountedByApi) {
    auto puts = sample(R"(floe_s3_requests_total{operation="PutObject"})");
    auto gets = sample(R"(floe_s3_requests_total{operation="GetObject"})");
    auto sent = sample(R"(floe_s3_bytes_total{direction="sent"})");
    auto conflicts =
        sample(R"(floe_s3_errors_total{operation="PutObject",code="PreconditionFailed"})");
    ASSERT_TRUE(io.write(root + "m1", bytes("12345")));
    ASSERT_TRUE(io.create_new(root + "m2", bytes("x")));
    EXPECT_FALSE(io.create_new(root + "m2", bytes("x")));
    ASSERT_TRUE(io.read(root + "m1"));
    EXPECT_EQ(sample(R"(floe_s3_requests_total{operation="PutObject"})"), puts + 3);
    EXPECT_EQ(sample(R"(floe_s3_requests_total{operation="GetObject"})"), gets + 1);
    EXPECT_EQ(sample(R"(floe_s3_bytes_total{direction="sent"})"), sent + 7);
    EXPECT_EQ(sample(R"(floe_s3_errors_total{operation="PutObject",code="PreconditionFailed"})"),
              conflicts)
        << "a lost create_new is an answer, not an error";
    s3_client bad(options("not-the-secret"));
    EXPECT_FALSE(bad.read(root + "m1"));
    EXPECT_GE(sample(R"(floe_s3_errors_total{operation="GetObject",code="SignatureDoesNotMatch"})"),
              1);
}

TEST_F(S3Client, WrongSecretNamesTheCheck) {
    s3_client bad(options("not-the-secret"));
    auto r = bad.write(root + "k", bytes("x"));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find(
                  "PUT " + root + "k: 403 SignatureDoesNotMatch: check the secret access key"),
              std::string::npos)
        << r.error().message();
    EXPECT_EQ(r.error().message().find("not-the-secret"), std::string::npos)
        << "never the secret itself";
}

TEST_F(S3Client, MissingBucket) {
    auto r = io.check_bucket("no-such-bucket-here");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("NoSuchBucket"), std::string::npos) << r.error().message();
    EXPECT_TRUE(io.check_bucket(env("S3TEST_BUCKET")));
    auto w = io.write("s3://no-such-bucket-here/k", bytes("x"));
    ASSERT_FALSE(w);
    EXPECT_NE(w.error().message().find("404 NoSuchBucket: check the bucket"), std::string::npos)
        << w.error().message();
}

TEST_F(S3Client, UnreachableEndpointIsRetriedThenUnavailable) {
    auto o = options();
    o.endpoint = "http://127.0.0.1:1"; // nothing listens on port 1
    o.max_attempts = 3;
    s3_client down(o);
    auto r = down.read(root + "k");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::unavailable);
    EXPECT_NE(r.error().message().find("after 3 attempt(s)"), std::string::npos)
        << r.error().message();
}

} // namespace
} // namespace floe::aws
