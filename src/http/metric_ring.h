#pragma once

#include "base/metrics.h"
#include "http/server.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace floe::http {

/// The last hour of the metrics registry in memory, for the console's charts and scripts that
/// want a trend without a Prometheus: one sample per interval (10 s by `floe serve`), `capacity`
/// samples kept (360: one hour), the oldest dropped first. A sample holds, per metric name,
/// the sum and the largest value over the name's children (registry::reduce), so its memory is
/// bounded by the number of metric names, never by topics or partitions. Thread-safe: one
/// sampler thread adds, HTTP threads read.
class metric_ring {
public:
    explicit metric_ring(size_t capacity = 360);

    void add(int64_t at_ms, const std::map<std::string, metrics::registry::totals>& totals);

    /// rate: per second between consecutive samples of the sum (a counter; a drop, a restarted
    /// counter, gives no point); sum, max: the sample's sum or largest value (gauges).
    enum class fn { rate, sum, max };
    static std::optional<fn> parse_fn(std::string_view s);
    struct point {
        int64_t at_ms;
        double value;
    };
    /// nullopt when no sample knows the name.
    std::optional<std::vector<point>> series(std::string_view name, fn f) const;
    std::vector<std::string> names() const;
    size_t size() const;
    size_t capacity() const noexcept { return _capacity; }

private:
    struct sample {
        int64_t at_ms;
        std::vector<std::optional<std::pair<double, double>>> values; ///< by name index: sum, max
    };
    mutable std::mutex _mu;
    size_t _capacity;
    std::map<std::string, size_t, std::less<>> _index; ///< name -> position in sample::values
    std::deque<sample> _samples;
};

/// Feeds a metric_ring from the process-wide registry every `interval` on its own thread, from
/// construction (a first sample at once) until destruction. Families with at most
/// `children_each` children are kept per child too (`floe_group_lag_records{group="g"}`).
inline constexpr size_t ring_children_each = 32;

/// A counter family kept per child beyond `ring_children_each`, up to `max_children` children
/// (the first ones in label order; the others count in the family's total only): the produce
/// rate per topic (`floe_kafka_records_in_total{topic}`, 1,000 topics). Named with its help and
/// label names as its module registers it (the registry returns the existing family).
struct per_child_family {
    std::string name, help;
    std::vector<std::string> label_names;
    size_t max_children = 1000;
};
/// `floe serve`'s: the produce rate per topic for the Topics list and the topic page.
per_child_family produce_rate_per_topic();

/// One sample of the registry as the sampler takes it: `registry::reduce(ring_children_each)`
/// plus each child of the `wide` families (the first `max_children`), keyed as Prometheus
/// writes them (`name{topic="orders"}`).
std::map<std::string, metrics::registry::totals> sample_registry(const std::vector<per_child_family>& wide);

class metric_sampler {
public:
    metric_sampler(metric_ring& ring, std::chrono::milliseconds interval, std::vector<per_child_family> wide = {});
    ~metric_sampler();
    metric_sampler(const metric_sampler&) = delete;
    metric_sampler& operator=(const metric_sampler&) = delete;

private:
    metric_ring& _ring;
    std::chrono::milliseconds _interval;
    std::vector<per_child_family> _wide;
    std::mutex _mu;
    std::condition_variable _cv;
    bool _stop = false;
    std::thread _thread;
};

/// GET /v1/metrics/series?name=N[&name=M...][&fn=rate|sum|max]: each name's points
/// ({"interval_ms":..,"series":[{"name","fn","points":[[ms,value],...]}]}); fn defaults to rate
/// for names ending in _total, else sum; a name not sampled (yet) has no points and "known":false.
/// GET /v1/metrics/series without a name lists the names.
void add_metric_routes(server& s, const metric_ring& ring, std::chrono::milliseconds interval);

} // namespace floe::http
