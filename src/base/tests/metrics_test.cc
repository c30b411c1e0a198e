#include "base/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace floe::metrics {
namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST(Metrics, CountersGaugesAndLabels) {
    registry r;
    auto& reqs = r.counter_family("floe_test_requests_total", "Requests.", {"api"});
    reqs.with({"Produce"}).inc(3);
    reqs.with({"Fetch"}).inc();
    EXPECT_EQ(&r.counter_family("floe_test_requests_total", "ignored", {"api"}), &reqs);
    r.gauge_family("floe_test_temperature", "A gauge.").with({}).set(-1.5);
    r.counter_family("floe_test_odd_total", "Escapes.", {"v"}).with({"a\"b\\c\nd"}).inc();
    auto text = r.render();
    EXPECT_TRUE(has_line(text, "# HELP floe_test_requests_total Requests.")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE floe_test_requests_total counter")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_requests_total{api=\"Produce\"} 3")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_requests_total{api=\"Fetch\"} 1")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_temperature -1.5")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_odd_total{v=\"a\\\"b\\\\c\\nd\"} 1")) << text;
}

TEST(Metrics, HistogramBucketsAreCumulative) {
    registry r;
    auto& h = r.histogram_family("floe_test_latency_seconds", "Latency.", {"api"}, {0.1, 1});
    auto& child = h.with({"x"});
    child.observe(0.05);
    child.observe(0.1); // le is inclusive
    child.observe(0.5);
    child.observe(7);
    auto text = r.render();
    EXPECT_TRUE(has_line(text, "floe_test_latency_seconds_bucket{api=\"x\",le=\"0.1\"} 2")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_latency_seconds_bucket{api=\"x\",le=\"1\"} 3")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_latency_seconds_bucket{api=\"x\",le=\"+Inf\"} 4")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_latency_seconds_count{api=\"x\"} 4")) << text;
    EXPECT_TRUE(has_line(text, "floe_test_latency_seconds_sum{api=\"x\"} 7.65")) << text;
}

TEST(Metrics, CollectorsRunAtScrapeAndCanBeRemoved) {
    registry r;
    int calls = 0;
    auto id = r.add_collector([&] {
        ++calls;
        return std::vector<collected_family>{
            {"floe_test_offset", "Offsets.", "gauge", {{"floe_test_offset", {{"topic", "t"}}, 42}}}};
    });
    EXPECT_TRUE(has_line(r.render(), "floe_test_offset{topic=\"t\"} 42"));
    r.remove_collector(id);
    EXPECT_EQ(r.render().find("floe_test_offset"), std::string::npos);
    EXPECT_EQ(calls, 1);
}

TEST(Metrics, ConcurrentIncrementsAreNotLost) {
    registry r;
    auto& c = r.counter_family("floe_test_concurrent_total", "C.").with({});
    auto& h = r.histogram_family("floe_test_concurrent_seconds", "H.").with({});
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < 100000; ++i) {
                c.inc();
                h.observe(0.001);
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(c.value(), 400000u);
    EXPECT_EQ(h.count(), 400000u);
    EXPECT_NEAR(h.sum(), 400.0, 1e-6);
}

TEST(Metrics, ProcessMetricsArePresent) {
    auto fams = process_metrics();
    ASSERT_EQ(fams.size(), 5u);
    EXPECT_EQ(fams[0].name, "process_cpu_seconds_total");
    EXPECT_GT(fams[1].samples[0].value, 0); // resident memory
    EXPECT_GT(fams[4].samples[0].value, 1.6e9); // start time after 2020
}

} // namespace
} // namespace floe::metrics
