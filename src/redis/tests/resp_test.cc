// The in-place RESP2 reader and the reply-end scanner on well-formed, truncated and garbage
// input: every answer is a value or an error, never a crash or a read past the input (the ASan
// build runs these too).
#include "redis/client.h"
#include "redis/resp.h"

#include <gtest/gtest.h>

#include <random>

using namespace floe;
using namespace floe::redis;

namespace {

// An XRANGE answer of two entries, as redis-server sends it (the second value holds CRLF and a
// NUL), followed by nothing.
const std::string xrange = std::string("*2\r\n"
                                       "*2\r\n$15\r\n1700000000000-0\r\n*4\r\n$6\r\noffset\r\n$1\r\n0\r\n$5\r\nvalue\r\n$3\r\nabc\r\n"
                                       "*2\r\n$15\r\n1700000000000-1\r\n*4\r\n$6\r\noffset\r\n$1\r\n1\r\n$5\r\nvalue\r\n$5\r\na\r\n")
                           + std::string(1, '\0') + "b\r\n";

std::optional<size_t> scan_whole(std::string_view in) {
    resp_scanner s;
    auto r = s.feed(in);
    EXPECT_TRUE(r) << r.error();
    return r ? *r : std::nullopt;
}

/// Walks one reply completely: whether the reader accepts it.
result<void> walk(std::string_view in) {
    resp_reader rd(in);
    FLOE_TRY(rd.skip());
    if (!rd.at_end()) return fail(errc::corrupt, "bytes left");
    return {};
}

} // namespace

TEST(redis_resp, reads_an_xrange_answer_in_place) {
    resp_reader rd(xrange);
    ASSERT_EQ(*rd.next_array(), 2u);
    for (int e = 0; e < 2; ++e) {
        ASSERT_EQ(*rd.next_array(), 2u);
        EXPECT_EQ(*rd.next_string(), fmt::format("1700000000000-{}", e));
        ASSERT_EQ(*rd.next_array(), 4u);
        EXPECT_EQ(*rd.next_string(), "offset");
        EXPECT_EQ(*rd.next_integer(), e);
        EXPECT_EQ(*rd.next_string(), "value");
        auto v = rd.next_string();
        ASSERT_TRUE(v) << v.error();
        EXPECT_EQ(*v, e == 0 ? std::string("abc") : std::string("a\r\n") + std::string(1, '\0') + "b");
        // A view into the input, not a copy.
        EXPECT_TRUE(v->data() >= xrange.data() && v->data() < xrange.data() + xrange.size());
    }
    EXPECT_TRUE(rd.at_end());
    EXPECT_EQ(scan_whole(xrange), xrange.size());
}

TEST(redis_resp, every_type_and_nil) {
    std::string in = "+OK\r\n-ERR wrong\r\n:-42\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n:9223372036854775807\r\n"
                     ":-9223372036854775808\r\n";
    resp_reader rd(in);
    auto it = *rd.next();
    EXPECT_EQ(it.type, reply_type::status);
    EXPECT_EQ(it.str, "OK");
    it = *rd.next();
    EXPECT_EQ(it.type, reply_type::error);
    EXPECT_EQ(it.str, "ERR wrong");
    EXPECT_EQ(*rd.next_integer(), -42);
    EXPECT_EQ(*rd.next_nullable_string(), std::nullopt);
    EXPECT_EQ(*rd.next_array(), 0u); // nil array
    EXPECT_EQ(*rd.next_array(), 0u);
    EXPECT_EQ(*rd.next_string(), "");
    EXPECT_EQ(*rd.next_integer(), INT64_MAX);
    EXPECT_EQ(*rd.next_integer(), INT64_MIN);
    EXPECT_TRUE(rd.at_end());
    EXPECT_FALSE(rd.next()); // past the end: an error, not a crash
    // One reply at a time for the scanner.
    resp_scanner s;
    size_t at = 0;
    int replies = 0;
    while (at < in.size()) {
        s.reset(at);
        auto end = s.feed(in);
        ASSERT_TRUE(end && *end) << "reply " << replies;
        at = **end;
        ++replies;
    }
    EXPECT_EQ(replies, 9);
}

TEST(redis_resp, error_replies_and_wrong_types_are_errors) {
    resp_reader rd("-WRONGTYPE Operation against a key\r\n");
    auto s = rd.next_string();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), errc::invalid_argument);
    EXPECT_EQ(s.error().message(), "WRONGTYPE Operation against a key");
    resp_reader rd2(":5\r\n");
    auto a = rd2.next_array();
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code(), errc::corrupt);
    resp_reader rd3("$-1\r\n");
    EXPECT_FALSE(rd3.next_string()); // nil is not a string
    resp_reader rd4("$3\r\n12x\r\n");
    EXPECT_FALSE(rd4.next_integer());
    raw_reply err(nullptr, "-MOVED 3999 127.0.0.1:6381\r\n");
    EXPECT_TRUE(err.is_error());
    EXPECT_EQ(err.error_text(), "MOVED 3999 127.0.0.1:6381");
    EXPECT_EQ(raw_reply(nullptr, ":1\r\n").error_text(), "");
}

TEST(redis_resp, scanner_waits_for_every_truncated_prefix_and_resumes) {
    // Every proper prefix: more bytes needed; the whole: its end; with bytes after it: the same end.
    for (size_t n = 0; n < xrange.size(); ++n) {
        resp_scanner s;
        auto r = s.feed(std::string_view(xrange).substr(0, n));
        ASSERT_TRUE(r) << "prefix " << n << ": " << r.error();
        EXPECT_EQ(*r, std::nullopt) << "prefix " << n;
    }
    EXPECT_EQ(scan_whole(xrange + ":1\r\n"), xrange.size());
    // Fed one byte more each time (as socket reads arrive), resuming: the same end.
    resp_scanner s;
    std::optional<size_t> end;
    for (size_t n = 1; n <= xrange.size() && !end; ++n) {
        auto r = s.feed(std::string_view(xrange).substr(0, n));
        ASSERT_TRUE(r) << r.error();
        end = *r;
        if (end) { EXPECT_EQ(n, xrange.size()); }
    }
    EXPECT_EQ(end, xrange.size());
}

TEST(redis_resp, reader_rejects_every_truncated_prefix) {
    for (size_t n = 0; n < xrange.size(); ++n) {
        auto r = walk(std::string_view(xrange).substr(0, n));
        EXPECT_FALSE(r) << "prefix " << n;
        if (!r) { EXPECT_EQ(r.error().code(), errc::corrupt); }
    }
    EXPECT_TRUE(walk(xrange));
}

TEST(redis_resp, malformed_input_is_an_error) {
    const std::vector<std::string> bad = {
        "$2\r\nabc\r\n",                // length says 2, CRLF not where it should be
        "$3\r\nabcXY",                  // no CRLF after the bytes
        "$-2\r\n",                      // negative length other than nil
        "*-5\r\n",                      // negative count other than nil
        "$abc\r\n",                     // not a number
        ":12a\r\n",                     // not a number
        ":99999999999999999999\r\n",    // past int64
        ":9223372036854775808\r\n",     // INT64_MAX + 1
        ":-9223372036854775809\r\n",    // INT64_MIN - 1
        "$999999999999\r\n",            // past the bulk limit
        "*3000000000\r\n",              // past the count limit
        "?what\r\n",                    // unknown type
        "+OK\rX",                       // CR without LF
        "\r\n",                         // empty line
        std::string(200, '$'),          // a length line that never ends
    };
    for (auto& b : bad) {
        resp_scanner s;
        auto scanned = s.feed(b);
        EXPECT_TRUE(!scanned || !*scanned) << "scanner accepted " << b;
        EXPECT_FALSE(walk(b)) << "reader accepted " << b;
    }
    // The scanner refuses right away what can never become valid (not only "need more").
    for (std::string b : {"?what\r\n", "$-2\r\n", ":1x\r\n", "$3\r\nabcXY", "+OK\rX"}) {
        resp_scanner s;
        EXPECT_FALSE(s.feed(b)) << b;
    }
    // Nesting deeper than 64 arrays.
    std::string deep;
    for (int i = 0; i < 65; ++i) deep += "*1\r\n";
    deep += ":1\r\n";
    resp_scanner s;
    EXPECT_FALSE(s.feed(deep));
    // A huge count with few bytes behind it ends in an error, not a long loop or an allocation.
    EXPECT_FALSE(walk("*2147483647\r\n:1\r\n"));
}

TEST(redis_resp, random_garbage_and_mutations_never_crash) {
    std::mt19937_64 rng(16);
    const std::string alphabet = "*$:+-\r\n0123456789-abc";
    for (int round = 0; round < 20000; ++round) {
        std::string in;
        if (round % 2 == 0) {
            // Bytes from RESP's own alphabet, so that many inputs get far.
            size_t n = rng() % 64;
            for (size_t i = 0; i < n; ++i) in.push_back(alphabet[rng() % alphabet.size()]);
        } else {
            // A valid answer with a few bytes changed, cut or repeated.
            in = xrange;
            for (int k = int(rng() % 4); k >= 0; --k) in[rng() % in.size()] = char(rng());
            if (rng() % 3 == 0) in.resize(rng() % in.size());
        }
        resp_scanner s;
        auto scanned = s.feed(in);
        auto walked = walk(in);
        // When the scanner says one whole reply ends at the end of the input, the reader agrees.
        if (scanned && *scanned && **scanned == in.size()) { EXPECT_TRUE(walked) << walked.error(); }
        // Piecewise feeding agrees with feeding everything at once.
        resp_scanner piecewise;
        std::optional<size_t> end;
        bool failed = false;
        for (size_t n = 1; n <= in.size() && !end && !failed; n += 1 + rng() % 7) {
            auto r = piecewise.feed(std::string_view(in).substr(0, std::min(n, in.size())));
            if (!r) failed = true;
            else end = *r;
        }
        if (!failed && !end && !in.empty()) {
            auto r = piecewise.feed(in);
            if (!r) failed = true;
            else end = *r;
        }
        if (scanned && *scanned) { EXPECT_EQ(end, **scanned) << "round " << round; }
    }
}
