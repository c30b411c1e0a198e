#include "http/console_assets.h"
#include "http/console_routes.h"
#include "http/metric_ring.h"
#include "http/search_filter.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <zlib.h>

using namespace floe;
using namespace floe::http;

namespace {

result<search_filter> parse(std::initializer_list<std::pair<const std::string, std::string>> q) {
    return search_filter::parse(std::multimap<std::string, std::string>(q));
}

struct rec {
    int64_t ts = 1000;
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    searched_record view() const {
        searched_record r;
        r.timestamp = ts;
        if (key) r.key = *key;
        if (value) r.value = *value;
        r.headers = &headers;
        return r;
    }
};

bool match(const search_filter& f, const rec& r) { return f.matches(r.view()); }

} // namespace

TEST(search_filter, empty_matches_everything) {
    auto f = parse({});
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->empty());
    EXPECT_TRUE(match(*f, rec{}));
    EXPECT_TRUE(match(*f, rec{5, "k", "v", {}}));
}

TEST(search_filter, key_equals_and_prefix) {
    auto eq = parse({{"key", "user-1"}});
    ASSERT_TRUE(eq);
    EXPECT_TRUE(match(*eq, rec{1, "user-1", "x", {}}));
    EXPECT_FALSE(match(*eq, rec{1, "user-10", "x", {}}));
    EXPECT_FALSE(match(*eq, rec{1, std::nullopt, "x", {}})); // a null key equals nothing
    auto pre = parse({{"key-prefix", "user-1"}});
    ASSERT_TRUE(pre);
    EXPECT_TRUE(match(*pre, rec{1, "user-10", "x", {}}));
    EXPECT_FALSE(match(*pre, rec{1, "user-2", "x", {}}));
    EXPECT_FALSE(match(*pre, rec{1, std::nullopt, "x", {}}));
}

TEST(search_filter, header_name_and_value) {
    rec r{1, "k", "v", {{"trace", "abc"}, {"empty", std::nullopt}}};
    EXPECT_TRUE(match(*parse({{"header", "trace"}}), r));
    EXPECT_TRUE(match(*parse({{"header", "trace=abc"}}), r));
    EXPECT_FALSE(match(*parse({{"header", "trace=abd"}}), r));
    EXPECT_TRUE(match(*parse({{"header", "empty"}}), r));
    EXPECT_FALSE(match(*parse({{"header", "empty="}}), r)); // a null value is not ""
    EXPECT_FALSE(match(*parse({{"header", "other"}}), r));
    EXPECT_FALSE(parse({{"header", ""}}));
}

TEST(search_filter, value_contains) {
    auto f = parse({{"contains", "needle"}});
    EXPECT_TRUE(match(*f, rec{1, "k", "hay needle hay", {}}));
    EXPECT_FALSE(match(*f, rec{1, "k", "hay", {}}));
    EXPECT_FALSE(match(*f, rec{1, "k", std::nullopt, {}}));
}

TEST(search_filter, json_pointer_tests) {
    rec r{1, "k", R"({"user":{"id":42,"name":"ann"},"tags":["a","b"]})", {}};
    EXPECT_TRUE(match(*parse({{"json", "/user/id"}, {"json-value", "42"}}), r)); // eq by default with a value
    EXPECT_TRUE(match(*parse({{"json", "/user/id"}, {"json-op", "eq"}, {"json-value", "42.0"}}), r));
    EXPECT_FALSE(match(*parse({{"json", "/user/id"}, {"json-op", "eq"}, {"json-value", "43"}}), r));
    EXPECT_TRUE(match(*parse({{"json", "/user/id"}, {"json-op", "gt"}, {"json-value", "41"}}), r));
    EXPECT_FALSE(match(*parse({{"json", "/user/id"}, {"json-op", "gt"}, {"json-value", "42"}}), r));
    EXPECT_TRUE(match(*parse({{"json", "/user/id"}, {"json-op", "lt"}, {"json-value", "100"}}), r));
    EXPECT_TRUE(match(*parse({{"json", "/user/name"}, {"json-value", "ann"}}), r));   // bare text is a string
    EXPECT_TRUE(match(*parse({{"json", "/user/name"}, {"json-value", "\"ann\""}}), r)); // JSON string
    EXPECT_TRUE(match(*parse({{"json", "/user/name"}, {"json-op", "lt"}, {"json-value", "bob"}}), r));
    EXPECT_FALSE(match(*parse({{"json", "/user/name"}, {"json-op", "lt"}, {"json-value", "5"}}), r)); // string vs number
    EXPECT_TRUE(match(*parse({{"json", "/tags/1"}, {"json-value", "b"}}), r));
    EXPECT_TRUE(match(*parse({{"json", "/user"}}), r)); // exists
    EXPECT_FALSE(match(*parse({{"json", "/nope"}}), r));
    EXPECT_FALSE(match(*parse({{"json", "/user/id"}}), rec{1, "k", "not json", {}}));
    EXPECT_FALSE(match(*parse({{"json", "/user/id"}}), rec{1, "k", std::nullopt, {}}));
}

TEST(search_filter, malformed_parameters_are_refused) {
    EXPECT_FALSE(parse({{"json", "no-slash"}}));
    EXPECT_FALSE(parse({{"json", "/a"}, {"json-op", "like"}}));
    EXPECT_FALSE(parse({{"json", "/a"}, {"json-op", "gt"}})); // needs a value
    EXPECT_FALSE(parse({{"json-value", "1"}}));             // needs a pointer
    EXPECT_FALSE(parse({{"from-ts", "yesterday"}}));
    EXPECT_FALSE(parse({{"from-ts", "10"}, {"to-ts", "5"}}));
    auto e = parse({{"json", "/a"}, {"json-op", "like"}});
    EXPECT_NE(e.error().message().find("json-op"), std::string::npos);
}

TEST(search_filter, time_range_is_inclusive_and_all_conditions_hold) {
    auto f = parse({{"from-ts", "100"}, {"to-ts", "200"}, {"key-prefix", "a"}});
    ASSERT_TRUE(f);
    EXPECT_TRUE(match(*f, rec{100, "ab", "v", {}}));
    EXPECT_TRUE(match(*f, rec{200, "ab", "v", {}}));
    EXPECT_FALSE(match(*f, rec{99, "ab", "v", {}}));
    EXPECT_FALSE(match(*f, rec{201, "ab", "v", {}}));
    EXPECT_FALSE(match(*f, rec{150, "b", "v", {}}));
}

namespace {
std::map<std::string, metrics::registry::totals> totals(std::initializer_list<std::tuple<std::string, double, double>> v) {
    std::map<std::string, metrics::registry::totals> out;
    for (auto& [n, s, m] : v) out[n] = {s, m, 1};
    return out;
}
} // namespace

TEST(metric_ring, rates_sums_and_max) {
    metric_ring ring(360);
    ring.add(10'000, totals({{"c_total", 100, 60}, {"g", 5, 3}}));
    ring.add(20'000, totals({{"c_total", 300, 200}, {"g", 7, 6}}));
    ring.add(30'000, totals({{"c_total", 300, 200}, {"g", 1, 1}}));
    auto rate = ring.series("c_total", metric_ring::fn::rate);
    ASSERT_TRUE(rate);
    ASSERT_EQ(rate->size(), 2u);
    EXPECT_EQ((*rate)[0].at_ms, 20'000);
    EXPECT_DOUBLE_EQ((*rate)[0].value, 20.0); // 200 more in 10 s
    EXPECT_DOUBLE_EQ((*rate)[1].value, 0.0);
    auto sum = ring.series("g", metric_ring::fn::sum);
    ASSERT_EQ(sum->size(), 3u);
    EXPECT_DOUBLE_EQ((*sum)[1].value, 7);
    auto mx = ring.series("g", metric_ring::fn::max);
    EXPECT_DOUBLE_EQ((*mx)[1].value, 6);
    EXPECT_FALSE(ring.series("unknown", metric_ring::fn::sum));
}

TEST(metric_ring, a_counter_reset_gives_no_point_and_late_names_start_late) {
    metric_ring ring(360);
    ring.add(0, totals({{"c_total", 100, 100}}));
    ring.add(10'000, totals({{"c_total", 50, 50}, {"new_total", 1, 1}})); // restarted
    ring.add(20'000, totals({{"c_total", 150, 150}, {"new_total", 11, 11}}));
    auto rate = ring.series("c_total", metric_ring::fn::rate);
    ASSERT_EQ(rate->size(), 1u);
    EXPECT_DOUBLE_EQ((*rate)[0].value, 10.0);
    auto n = ring.series("new_total", metric_ring::fn::rate);
    ASSERT_EQ(n->size(), 1u);
    EXPECT_DOUBLE_EQ((*n)[0].value, 1.0);
    auto s = ring.series("new_total", metric_ring::fn::sum);
    EXPECT_EQ(s->size(), 2u); // no point before the name existed
}

TEST(metric_ring, keeps_only_capacity_samples) {
    metric_ring ring(360);
    for (int i = 0; i < 1000; ++i) ring.add(int64_t(i) * 10'000, totals({{"g", double(i), double(i)}}));
    EXPECT_EQ(ring.size(), 360u);
    auto s = ring.series("g", metric_ring::fn::sum);
    ASSERT_EQ(s->size(), 360u);
    EXPECT_EQ(s->front().at_ms, 640 * 10'000); // the oldest were dropped
    EXPECT_DOUBLE_EQ(s->back().value, 999);
}

TEST(metric_ring, reduce_reads_the_registry) {
    auto& reg = metrics::registry::instance();
    auto& c = reg.counter_family("console_test_things_total", "test", {"topic"});
    c.with({"a"}).inc(3);
    c.with({"b"}).inc(5);
    auto& g = reg.gauge_family("console_test_level", "test", {"p"});
    g.with({"0"}).set(2);
    g.with({"1"}).set(9);
    auto t = reg.reduce();
    EXPECT_DOUBLE_EQ(t["console_test_things_total"].sum, 8);
    EXPECT_DOUBLE_EQ(t["console_test_things_total"].max, 5);
    EXPECT_DOUBLE_EQ(t["console_test_level"].sum, 11);
    EXPECT_DOUBLE_EQ(t["console_test_level"].max, 9);
    EXPECT_FALSE(t.contains(R"(console_test_level{p="1"})")); // children only when asked
    auto each = reg.reduce(2);
    EXPECT_DOUBLE_EQ(each[R"(console_test_level{p="1"})"].sum, 9);
    EXPECT_DOUBLE_EQ(each[R"(console_test_things_total{topic="a"})"].sum, 3);
    EXPECT_DOUBLE_EQ(each["console_test_level"].sum, 11);
    auto& many = reg.gauge_family("console_test_many", "test", {"p"});
    for (int i = 0; i < 3; ++i) many.with({std::to_string(i)}).set(i);
    auto few = reg.reduce(2);
    EXPECT_FALSE(few.contains(R"(console_test_many{p="0"})")); // more children than asked: the total only
    EXPECT_DOUBLE_EQ(few["console_test_many"].sum, 3);
}

// The produce rate per topic: each topic's child of the wide family has its own series, past
// the 32 children other families are kept to, up to the family's bound (the first topics by
// name); the rate between two samples is the counter's delta over the interval.
TEST(metric_ring, per_topic_rate_beyond_32_topics_up_to_the_bound) {
    auto& reg = metrics::registry::instance();
    per_child_family wide{"console_test_records_in_total", "test", {"topic"}, 40};
    auto& fam = reg.counter_family(wide.name, wide.help, wide.label_names);
    auto topic = [](int i) { return fmt::format("t{:03}", i); };
    for (int i = 0; i < 45; ++i) fam.with({topic(i)}).inc(10);
    metric_ring ring(360);
    ring.add(0, sample_registry({wide}));
    fam.with({topic(7)}).inc(250);
    fam.with({topic(44)}).inc(99);
    ring.add(10'000, sample_registry({wide}));
    auto rate = ring.series(R"(console_test_records_in_total{topic="t007"})", metric_ring::fn::rate);
    ASSERT_TRUE(rate);
    ASSERT_EQ(rate->size(), 1u);
    EXPECT_DOUBLE_EQ((*rate)[0].value, 25.0); // 250 records in 10 s
    auto idle = ring.series(R"(console_test_records_in_total{topic="t008"})", metric_ring::fn::rate);
    ASSERT_TRUE(idle);
    EXPECT_DOUBLE_EQ((*idle)[0].value, 0.0);
    // Beyond the bound (40 topics) the last ones by name have no series; the total counts them.
    EXPECT_TRUE(ring.series(R"(console_test_records_in_total{topic="t039"})", metric_ring::fn::rate));
    EXPECT_FALSE(ring.series(R"(console_test_records_in_total{topic="t040"})", metric_ring::fn::rate));
    EXPECT_FALSE(ring.series(R"(console_test_records_in_total{topic="t044"})", metric_ring::fn::rate));
    auto total = ring.series("console_test_records_in_total", metric_ring::fn::rate);
    EXPECT_DOUBLE_EQ((*total)[0].value, 34.9); // (250 + 99) / 10 s
    // Without the wide family, 45 children are more than the 32 kept per child.
    EXPECT_FALSE(sample_registry({}).contains(R"(console_test_records_in_total{topic="t007"})"));
    // Label values are escaped as Prometheus writes them.
    fam.with({"a\"b"}).inc();
    EXPECT_TRUE(sample_registry({wide}).contains(R"(console_test_records_in_total{topic="a\"b"})"));
}

namespace {
std::string gunzip(std::string_view gz) {
    z_stream s{};
    inflateInit2(&s, 16 + MAX_WBITS);
    std::string out(1 << 20, '\0');
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    s.avail_in = uInt(gz.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = uInt(out.size());
    int rc = inflate(&s, Z_FINISH);
    out.resize(s.total_out);
    inflateEnd(&s);
    return rc == Z_STREAM_END ? out : std::string("<inflate failed>");
}
std::string header(const response& r, std::string_view name) {
    for (auto& [k, v] : r.headers)
        if (k == name) return v;
    return "";
}
} // namespace

TEST(console_assets, embedded_gzipped_typed_and_small) {
    bool has_index = false, has_app = false;
    for (auto& a : console_assets()) {
        EXPECT_EQ(gunzip(a.gzip), a.raw) << a.path;
        if (a.path == "/console/index.html") has_index = true;
        if (a.path == "/console/app.js") {
            has_app = true;
            EXPECT_EQ(a.content_type, "text/javascript; charset=utf-8");
        }
        // No inline script or style: the CSP forbids them.
        if (a.path.ends_with(".html")) {
            EXPECT_EQ(a.raw.find("<style"), std::string_view::npos);
            EXPECT_EQ(a.raw.find(" style="), std::string_view::npos);
            EXPECT_EQ(a.raw.find("<script>"), std::string_view::npos);
        }
    }
    EXPECT_TRUE(has_index);
    EXPECT_TRUE(has_app);
    EXPECT_LT(console_assets_gzip_bytes(), 250'000u);
}

TEST(console_assets, served_with_etag_gzip_and_csp) {
    request r;
    r.method = "GET";
    r.path = "/console/";
    r.headers["accept-encoding"] = "gzip, deflate";
    auto a = console_asset_response(r);
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(header(a, "Content-Encoding"), "gzip");
    EXPECT_NE(gunzip(a.body).find("app.js"), std::string::npos);
    EXPECT_EQ(header(a, "Content-Security-Policy"), console_csp);
    EXPECT_NE(header(a, "Content-Security-Policy").find("default-src 'self'"), std::string::npos);
    auto etag = header(a, "ETag");
    ASSERT_FALSE(etag.empty());

    r.headers.erase("accept-encoding");
    auto plain = console_asset_response(r);
    EXPECT_EQ(header(plain, "Content-Encoding"), "");
    EXPECT_EQ(gunzip(a.body), plain.body);

    r.headers["accept-encoding"] = "gzip;q=0";
    EXPECT_EQ(header(console_asset_response(r), "Content-Encoding"), "");

    r.headers["if-none-match"] = etag;
    auto again = console_asset_response(r);
    EXPECT_EQ(again.status, 304);
    EXPECT_TRUE(again.body.empty());

    r.path = "/console/nope.js";
    EXPECT_EQ(console_asset_response(r).status, 404);
}

TEST(console_routes, redirect_assets_and_settings_through_the_server) {
    server s(server_options{.port = 0});
    add_console_routes(s, {.export_enabled = false, .tokens = true});
    request r;
    r.method = "GET";
    r.path = "/console";
    auto redirect = s.dispatch(r);
    EXPECT_EQ(redirect.status, 301);
    EXPECT_EQ(header(redirect, "Location"), "/console/");
    r.path = "/console/app.js";
    auto js = s.dispatch(r);
    EXPECT_EQ(js.status, 200);
    EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
    r.path = "/v1/console/settings";
    auto settings = s.dispatch(r);
    EXPECT_EQ(settings.body, R"({"export":false,"read_only":true,"tokens":true})");
    r.method = "POST";
    r.path = "/console/app.js";
    EXPECT_EQ(s.dispatch(r).status, 405); // nothing but GET (and HEAD)
}
