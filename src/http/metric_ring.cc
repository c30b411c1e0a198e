#include "http/metric_ring.h"

#include "base/log.h"
#include "http/admin.h"

#include <fmt/format.h>

#include <cmath>

namespace floe::http {

metric_ring::metric_ring(size_t capacity) : _capacity(std::max<size_t>(capacity, 2)) {}

void metric_ring::add(int64_t at_ms, const std::map<std::string, metrics::registry::totals>& totals) {
    std::lock_guard g(_mu);
    sample s{at_ms, {}};
    s.values.resize(_index.size());
    for (auto& [name, t] : totals) {
        auto [it, added] = _index.try_emplace(name, _index.size());
        if (added) s.values.resize(_index.size());
        if (t.children > 0) s.values[it->second] = std::pair{t.sum, t.max};
    }
    _samples.push_back(std::move(s));
    while (_samples.size() > _capacity) _samples.pop_front();
}

std::optional<metric_ring::fn> metric_ring::parse_fn(std::string_view s) {
    if (s == "rate") return fn::rate;
    if (s == "sum") return fn::sum;
    if (s == "max") return fn::max;
    return std::nullopt;
}

std::optional<std::vector<metric_ring::point>> metric_ring::series(std::string_view name, fn f) const {
    std::lock_guard g(_mu);
    auto it = _index.find(name);
    if (it == _index.end()) return std::nullopt;
    const size_t i = it->second;
    auto at = [&](const sample& s) -> std::optional<std::pair<double, double>> {
        return i < s.values.size() ? s.values[i] : std::nullopt;
    };
    std::vector<point> out;
    const sample* prev = nullptr;
    for (auto& s : _samples) {
        auto v = at(s);
        if (f == fn::rate) {
            auto pv = prev ? at(*prev) : std::nullopt;
            if (v && pv && s.at_ms > prev->at_ms && v->first >= pv->first)
                out.push_back({s.at_ms, (v->first - pv->first) * 1000.0 / double(s.at_ms - prev->at_ms)});
            prev = &s;
        } else if (v) {
            out.push_back({s.at_ms, f == fn::sum ? v->first : v->second});
        }
    }
    return out;
}

std::vector<std::string> metric_ring::names() const {
    std::lock_guard g(_mu);
    std::vector<std::string> out;
    for (auto& [n, i] : _index) out.push_back(n);
    return out;
}

size_t metric_ring::size() const {
    std::lock_guard g(_mu);
    return _samples.size();
}

per_child_family produce_rate_per_topic() {
    // As src/kafka/handlers.cc registers it.
    return {"floe_kafka_records_in_total", "Records appended by Produce, by topic.", {"topic"}, 1000};
}

std::map<std::string, metrics::registry::totals> sample_registry(const std::vector<per_child_family>& wide) {
    auto& reg = metrics::registry::instance();
    auto out = reg.reduce(ring_children_each);
    for (auto& w : wide) {
        size_t kept = 0;
        reg.counter_family(w.name, w.help, w.label_names).each([&](const std::vector<std::string>& values, const metrics::counter& c) {
            if (kept == w.max_children || values.empty()) return;
            ++kept;
            std::string key = w.name;
            for (size_t i = 0; i < values.size() && i < w.label_names.size(); ++i)
                key += fmt::format(R"({}{}="{}")", i ? "," : "{", w.label_names[i], metrics::escape_label(values[i]));
            key += "}";
            const double v = double(c.value());
            out[key] = {v, v, 1};
        });
    }
    return out;
}

metric_sampler::metric_sampler(metric_ring& ring, std::chrono::milliseconds interval, std::vector<per_child_family> wide)
    : _ring(ring), _interval(interval), _wide(std::move(wide)) {
    _thread = std::thread([this] {
        std::unique_lock lk(_mu);
        while (!_stop) {
            lk.unlock();
            auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
            try {
                _ring.add(now, sample_registry(_wide));
            } catch (const std::exception& e) {
                spdlog::warn("metric ring: sampling failed: {}", e.what());
            }
            lk.lock();
            _cv.wait_for(lk, _interval, [this] { return _stop; });
        }
    });
}

metric_sampler::~metric_sampler() {
    {
        std::lock_guard g(_mu);
        _stop = true;
    }
    _cv.notify_all();
    if (_thread.joinable()) _thread.join();
}

namespace {
std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    return fmt::format("{:.6g}", v);
}
} // namespace

void add_metric_routes(server& s, const metric_ring& ring, std::chrono::milliseconds interval) {
    s.route("GET", "/v1/metrics/series", [&ring, interval](const request& r) {
        count_request("/v1/metrics/series");
        std::string out = fmt::format(R"({{"interval_ms":{},"capacity_ms":{},)", interval.count(), interval.count() * int64_t(ring.capacity()));
        auto [b, e] = r.query.equal_range("name");
        if (b == e) {
            std::string names;
            for (auto& n : ring.names()) names += fmt::format(R"({}"{}")", names.empty() ? "" : ",", json_escape(n));
            return response::json(200, out + fmt::format(R"("names":[{}]}})", names));
        }
        std::optional<metric_ring::fn> forced;
        if (auto f = r.param("fn")) {
            forced = metric_ring::parse_fn(*f);
            if (!forced) return response::error(400, fmt::format("parameter 'fn' must be one of rate, sum, max; got '{}'", *f));
        }
        std::string series;
        for (auto it = b; it != e; ++it) {
            auto& name = it->second;
            auto f = forced ? *forced : name.ends_with("_total") ? metric_ring::fn::rate : metric_ring::fn::sum;
            // A name the ring has not sampled (a family registered since, or one this broker never
            // registers, as the storage worker's when it is off) has no points, and says so.
            auto pts = ring.series(name, f);
            const bool known = pts.has_value();
            if (!pts) pts.emplace();
            std::string p;
            for (auto& x : *pts) p += fmt::format(R"({}[{},{}])", p.empty() ? "" : ",", x.at_ms, number(x.value));
            series += fmt::format(R"({}{{"name":"{}","fn":"{}","known":{},"points":[{}]}})", series.empty() ? "" : ",",
                                  json_escape(name), f == metric_ring::fn::rate ? "rate" : f == metric_ring::fn::sum ? "sum" : "max",
                                  known, p);
        }
        return response::json(200, out + fmt::format(R"("series":[{}]}})", series));
    });
}

} // namespace floe::http
