#include "base/metrics.h"

#include "base/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace floe::metrics {

histogram::histogram(std::vector<double> bounds)
    : _bounds(std::move(bounds)), _buckets(new std::atomic<uint64_t>[_bounds.size() + 1]) {
    FLOE_ASSERT(std::is_sorted(_bounds.begin(), _bounds.end()), "histogram bounds must be sorted");
    for (size_t i = 0; i <= _bounds.size(); ++i) _buckets[i].store(0);
}

void histogram::observe(double v) noexcept {
    size_t i = std::lower_bound(_bounds.begin(), _bounds.end(), v) - _bounds.begin();
    _buckets[i].fetch_add(1, std::memory_order_relaxed);
    _count.fetch_add(1, std::memory_order_relaxed);
    double cur = _sum.load(std::memory_order_relaxed);
    while (!_sum.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {}
}

std::vector<double> latency_buckets() {
    return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,    5,    10};
}

registry& registry::instance() {
    static registry r;
    return r;
}

namespace {
template<typename F, typename Make>
F& find_or_add(std::deque<F>& fams, std::string name, std::string help,
               std::vector<std::string> label_names, Make make) {
    for (auto& f : fams)
        if (f.name() == name) return f;
    return fams.emplace_back(std::move(name), std::move(help), std::move(label_names), make);
}


std::string escape_help(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string label_text(const std::vector<std::string>& names, const std::vector<std::string>& values,
                       std::string_view extra_name = {}, std::string_view extra_value = {}) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
        out += out.empty() ? "{" : ",";
        out += fmt::format("{}=\"{}\"", names[i], escape_label(values[i]));
    }
    if (!extra_name.empty()) {
        out += out.empty() ? "{" : ",";
        out += fmt::format("{}=\"{}\"", extra_name, extra_value);
    }
    if (!out.empty()) out += "}";
    return out;
}

std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (std::isnan(v)) return "NaN";
    if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
    return fmt::format("{}", v);
}
} // namespace

std::string escape_label(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

family<counter>& registry::counter_family(std::string name, std::string help,
                                          std::vector<std::string> label_names) {
    std::lock_guard g(_mu);
    return find_or_add(_counters, std::move(name), std::move(help), std::move(label_names),
                       [] { return std::make_unique<counter>(); });
}

family<gauge>& registry::gauge_family(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
    std::lock_guard g(_mu);
    return find_or_add(_gauges, std::move(name), std::move(help), std::move(label_names),
                       [] { return std::make_unique<gauge>(); });
}

family<histogram>& registry::histogram_family(std::string name, std::string help,
                                              std::vector<std::string> label_names,
                                              std::vector<double> bounds) {
    std::lock_guard g(_mu);
    return find_or_add(_histograms, std::move(name), std::move(help), std::move(label_names),
                       [bounds] { return std::make_unique<histogram>(bounds); });
}

uint64_t registry::add_collector(collector c) {
    std::lock_guard g(_mu);
    auto id = _next_collector++;
    _collectors.emplace(id, std::move(c));
    return id;
}

void registry::remove_collector(uint64_t id) {
    std::lock_guard g(_mu);
    _collectors.erase(id);
}

std::string registry::render() const {
    std::vector<collector> collectors;
    std::string out;
    {
        std::lock_guard g(_mu);
        for (auto& [id, c] : _collectors) collectors.push_back(c);
        for (auto& f : _counters) {
            out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", f.name(), escape_help(f.help()), f.name());
            f.each([&](auto& values, const counter& c) {
                out += fmt::format("{}{} {}\n", f.name(), label_text(f.label_names(), values), c.value());
            });
        }
        for (auto& f : _gauges) {
            out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name(), escape_help(f.help()), f.name());
            f.each([&](auto& values, const gauge& c) {
                out += fmt::format("{}{} {}\n", f.name(), label_text(f.label_names(), values),
                                   number(c.value()));
            });
        }
        for (auto& f : _histograms) {
            out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", f.name(), escape_help(f.help()), f.name());
            f.each([&](auto& values, const histogram& h) {
                uint64_t cumulative = 0;
                for (size_t i = 0; i <= h.bounds().size(); ++i) {
                    cumulative += h.bucket(i);
                    auto le = i < h.bounds().size() ? number(h.bounds()[i]) : std::string("+Inf");
                    out += fmt::format("{}_bucket{} {}\n", f.name(),
                                       label_text(f.label_names(), values, "le", le), cumulative);
                }
                out += fmt::format("{}_sum{} {}\n", f.name(), label_text(f.label_names(), values),
                                   number(h.sum()));
                out += fmt::format("{}_count{} {}\n", f.name(), label_text(f.label_names(), values),
                                   h.count());
            });
        }
    }
    // Collectors run outside the lock: they may take locks of their own components.
    for (auto& c : collectors) {
        for (auto& fam : c()) {
            out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", fam.name, escape_help(fam.help), fam.name,
                               fam.type);
            for (auto& s : fam.samples) {
                std::vector<std::string> names, values;
                for (auto& [k, v] : s.label_values) {
                    names.push_back(k);
                    values.push_back(v);
                }
                out += fmt::format("{}{} {}\n", s.name, label_text(names, values), number(s.value));
            }
        }
    }
    return out;
}

std::vector<collected_family> process_metrics() {
    std::vector<collected_family> out;
    std::ifstream stat("/proc/self/stat");
    std::string line;
    std::getline(stat, line);
    // Fields after the command name (which is in parentheses and may hold spaces).
    auto close = line.rfind(')');
    if (close == std::string::npos) return out;
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> f;
    std::string tok;
    while (rest >> tok) f.push_back(tok);
    if (f.size() < 22) return out;
    double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks; // utime + stime
    double vsize = std::stod(f[20]);
    double rss = std::stod(f[21]) * page;
    double start_ticks = std::stod(f[19]);
    double boot_time = 0;
    std::ifstream s2("/proc/stat");
    while (std::getline(s2, line))
        if (line.starts_with("btime ")) boot_time = std::stod(line.substr(6));
    size_t fds = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
        ++fds;
    out.push_back({"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                   "counter", {{"process_cpu_seconds_total", {}, cpu}}});
    out.push_back({"process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
                   {{"process_resident_memory_bytes", {}, rss}}});
    out.push_back({"process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
                   {{"process_virtual_memory_bytes", {}, vsize}}});
    out.push_back({"process_open_fds", "Number of open file descriptors.", "gauge",
                   {{"process_open_fds", {}, static_cast<double>(fds)}}});
    out.push_back({"process_start_time_seconds",
                   "Start time of the process since unix epoch in seconds.", "gauge",
                   {{"process_start_time_seconds", {}, boot_time + start_ticks / ticks}}});
    return out;
}

std::map<std::string, registry::totals> registry::reduce(size_t children_each) const {
    std::map<std::string, totals> out;
    auto add = [&](const std::string& name, double v) {
        auto& t = out[name];
        t.max = t.children == 0 ? v : std::max(t.max, v);
        t.sum += v;
        ++t.children;
    };
    // Each child of a family with few children, under its own key.
    std::vector<std::pair<std::string, double>> children;
    auto flush_children = [&] {
        if (children.size() <= children_each)
            for (auto& [k, v] : children) out[k] = {v, v, 1};
        children.clear();
    };
    std::vector<collector> collectors;
    {
        std::lock_guard g(_mu);
        for (auto& [id, c] : _collectors) collectors.push_back(c);
        for (auto& f : _counters) {
            out.try_emplace(f.name());
            f.each([&](auto& values, const counter& c) {
                add(f.name(), double(c.value()));
                if (children_each && !values.empty())
                    children.emplace_back(f.name() + label_text(f.label_names(), values), double(c.value()));
            });
            flush_children();
        }
        for (auto& f : _gauges) {
            out.try_emplace(f.name());
            f.each([&](auto& values, const gauge& c) {
                add(f.name(), c.value());
                if (children_each && !values.empty())
                    children.emplace_back(f.name() + label_text(f.label_names(), values), c.value());
            });
            flush_children();
        }
        for (auto& f : _histograms)
            f.each([&](auto&, const histogram& h) {
                add(f.name() + "_count", double(h.count()));
                add(f.name() + "_sum", h.sum());
            });
    }
    // Collectors run outside the lock, as in render().
    for (auto& c : collectors)
        for (auto& fam : c()) {
            out.try_emplace(fam.name);
            for (auto& s : fam.samples) {
                add(s.name, s.value);
                if (children_each && !s.label_values.empty()) {
                    std::vector<std::string> names, values;
                    for (auto& [k, v] : s.label_values) {
                        names.push_back(k);
                        values.push_back(v);
                    }
                    children.emplace_back(s.name + label_text(names, values), s.value);
                }
            }
            flush_children();
        }
    return out;
}

} // namespace floe::metrics
