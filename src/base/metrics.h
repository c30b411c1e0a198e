#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace floe::metrics {

/// A monotonically increasing count. Lock-free; any thread.
class counter {
public:
    void inc(uint64_t n = 1) noexcept { _v.fetch_add(n, std::memory_order_relaxed); }
    uint64_t value() const noexcept { return _v.load(std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> _v{0};
};

/// A value that goes up and down. Lock-free; any thread.
class gauge {
public:
    void set(double v) noexcept { _v.store(v, std::memory_order_relaxed); }
    void add(double d) noexcept {
        double cur = _v.load(std::memory_order_relaxed);
        while (!_v.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {}
    }
    double value() const noexcept { return _v.load(std::memory_order_relaxed); }

private:
    std::atomic<double> _v{0};
};

/// Cumulative histogram with fixed upper bounds (Prometheus semantics: le buckets + sum + count).
/// Observations are lock-free; a scrape may see a bucket and the count from slightly different
/// moments, which Prometheus tolerates.
class histogram {
public:
    explicit histogram(std::vector<double> bounds);
    void observe(double v) noexcept;
    const std::vector<double>& bounds() const noexcept { return _bounds; }
    /// Non-cumulative count of bucket i (i == bounds().size() is +Inf).
    uint64_t bucket(size_t i) const noexcept { return _buckets[i].load(std::memory_order_relaxed); }
    uint64_t count() const noexcept { return _count.load(std::memory_order_relaxed); }
    double sum() const noexcept { return _sum.load(std::memory_order_relaxed); }

private:
    std::vector<double> _bounds;
    std::unique_ptr<std::atomic<uint64_t>[]> _buckets;
    std::atomic<uint64_t> _count{0};
    std::atomic<double> _sum{0};
};

/// Latency buckets in seconds, 50µs .. 10s.
std::vector<double> latency_buckets();

using labels = std::vector<std::pair<std::string, std::string>>;

/// One named metric with a fixed set of label names; children per label values. Children are
/// created on first use and never move, so callers keep references in hot paths.
template<typename T>
class family {
public:
    family(std::string name, std::string help, std::vector<std::string> label_names,
           std::function<std::unique_ptr<T>()> make)
        : _name(std::move(name)), _help(std::move(help)), _label_names(std::move(label_names)),
          _make(std::move(make)) {}

    /// The child for these label values, in the order of the label names.
    T& with(const std::vector<std::string>& values);
    const std::string& name() const noexcept { return _name; }
    const std::string& help() const noexcept { return _help; }
    const std::vector<std::string>& label_names() const noexcept { return _label_names; }
    /// Calls fn(label values, child) for each child, in label order, under the family's lock.
    template<typename Fn>
    void each(Fn&& fn) const {
        std::lock_guard g(_mu);
        for (auto& [k, v] : _children) fn(k, *v);
    }

private:
    std::string _name, _help;
    std::vector<std::string> _label_names;
    std::function<std::unique_ptr<T>()> _make;
    mutable std::mutex _mu;
    std::map<std::vector<std::string>, std::unique_ptr<T>> _children;
};

/// A sample produced at scrape time by a collector (per-partition offsets, process stats...).
struct sample {
    std::string name;
    labels label_values;
    double value;
};
/// A collector emits samples of metric families it declares (name, help, type "gauge"/"counter").
struct collected_family {
    std::string name, help, type;
    std::vector<sample> samples;
};
using collector = std::function<std::vector<collected_family>()>;

/// The process-wide registry. Families live as long as the process; modules register theirs
/// at start-up (registering the same name twice returns the existing family). Thread-safe.
/// A label value as the Prometheus text format writes it (backslash, quote and newline escaped).
std::string escape_label(std::string_view v);

class registry {
public:
    static registry& instance();

    family<counter>& counter_family(std::string name, std::string help,
                                    std::vector<std::string> label_names = {});
    family<gauge>& gauge_family(std::string name, std::string help,
                                std::vector<std::string> label_names = {});
    family<histogram>& histogram_family(std::string name, std::string help,
                                        std::vector<std::string> label_names = {},
                                        std::vector<double> bounds = latency_buckets());
    /// Returns an id for remove_collector (components that stop must unregister).
    uint64_t add_collector(collector c);
    void remove_collector(uint64_t id);

    /// Prometheus text exposition format 0.0.4.
    std::string render() const;

    /// Every counter and gauge family (collectors' too) reduced over its children: the sum and
    /// the largest value (histograms give their _count and _sum). For the console's metric
    /// ring, sampled every few seconds. A family with at most `children_each` children also
    /// gives each child, keyed as Prometheus writes it (`name{topic="orders"}`), so a trend per
    /// topic or group can be kept without the number of names growing with them.
    struct totals {
        double sum = 0, max = 0;
        size_t children = 0;
    };
    std::map<std::string, totals> reduce(size_t children_each = 0) const;

private:
    mutable std::mutex _mu;
    std::deque<family<counter>> _counters;
    std::deque<family<gauge>> _gauges;
    std::deque<family<histogram>> _histograms;
    std::map<uint64_t, collector> _collectors;
    uint64_t _next_collector = 1;
};

/// Process CPU, memory, open files and start time (process_* names, as client libraries use).
std::vector<collected_family> process_metrics();

template<typename T>
T& family<T>::with(const std::vector<std::string>& values) {
    std::lock_guard g(_mu);
    auto it = _children.find(values);
    if (it != _children.end()) return *it->second;
    return *_children.emplace(values, _make()).first->second;
}

} // namespace floe::metrics
