#include "ingest/ingest_engine.h"

#include "base/clock.h"
#include "base/metrics.h"


namespace floe::ingest {

namespace {

std::vector<metrics::collected_family> collect(const std::vector<source_status>& sources) {
    std::vector<metrics::collected_family> f{
        {"floe_ingest_source_up", "1 when the ingest source runs without error (paused included), else 0.", "gauge", {}},
        {"floe_ingest_errors_total", "Errors an ingest source met since start.", "counter", {}},
        {"floe_ingest_records_total", "Records mirrored from the source by this process.", "counter", {}},
        {"floe_ingest_source_position", "The source partition's end offset, last seen.", "gauge", {}},
        {"floe_ingest_local_position", "The mirror partition's log end: the resume point.", "gauge", {}},
        {"floe_ingest_committed_position", "Mirror offsets below this are committed to Iceberg.", "gauge", {}},
        {"floe_ingest_lag_records", "Records the mirror is behind its source.", "gauge", {}},
        {"floe_ingest_lag_seconds", "Age of the last mirrored record while behind; 0 when caught up.", "gauge", {}},
        {"floe_ingest_paused", "1 while consumption is paused: local bytes not yet in Iceberg above the budget.", "gauge", {}},
        {"floe_ingest_pauses_total", "Times consumption paused for the local-bytes budget since start.", "counter", {}},
        {"floe_ingest_local_bytes", "Bytes of the mirror's local segments not yet committed to Iceberg.", "gauge", {}},
        {"floe_ingest_max_local_bytes", "The source's budget of local bytes not yet in Iceberg.", "gauge", {}}};
    auto now = system_clock_source::instance().now_ms();
    for (auto& s : sources) {
        metrics::labels sl{{"source", s.name}};
        f[0].samples.push_back({f[0].name, sl, s.state == "running" || s.state == "paused" ? 1.0 : 0.0});
        f[1].samples.push_back({f[1].name, sl, double(s.errors)});
        f[8].samples.push_back({f[8].name, sl, s.paused ? 1.0 : 0.0});
        f[9].samples.push_back({f[9].name, sl, double(s.pauses)});
        f[10].samples.push_back({f[10].name, sl, double(s.local_bytes)});
        f[11].samples.push_back({f[11].name, sl, double(s.max_local_bytes)});
        for (auto& p : s.partitions) {
            metrics::labels l{{"source", s.name}, {"topic", p.local_topic}, {"partition", std::to_string(p.partition)}};
            f[2].samples.push_back({f[2].name, l, double(p.records)});
            if (p.source_end >= 0) f[3].samples.push_back({f[3].name, l, double(p.source_end)});
            f[4].samples.push_back({f[4].name, l, double(p.local_end)});
            f[5].samples.push_back({f[5].name, l, double(p.offloaded)});
            if (auto lr = lag_records(p); lr >= 0) f[6].samples.push_back({f[6].name, l, double(lr)});
            if (auto ls = lag_seconds(p, now); ls >= 0) f[7].samples.push_back({f[7].name, l, ls});
        }
    }
    return f;
}

} // namespace

ingest_engine::ingest_engine(const config::settings& s, log::local_tier& logs, ingest_hooks hooks) {
    for (auto& [name, src] : s.ingest_sources())
        if (src.get("type") == "kafka") _kafka.push_back(std::make_unique<kafka_source>(src, logs, hooks));
        else if (src.get("type") == "jetstream")
            _jetstream.push_back(std::make_unique<jetstream_source>(src, logs, hooks));
}

ingest_engine::~ingest_engine() { stop(); }

result<void> ingest_engine::start() {
    for (auto& k : _kafka) FLOE_TRY_CTX(k->start(), "ingest source {}", k->name());
    for (auto& j : _jetstream) FLOE_TRY_CTX(j->start(), "ingest source {}", j->name());
    _collector = metrics::registry::instance().add_collector([this] { return collect(status()); });
    return {};
}

void ingest_engine::stop() {
    if (_collector) metrics::registry::instance().remove_collector(_collector);
    _collector = 0;
    for (auto& k : _kafka) k->stop();
    for (auto& j : _jetstream) j->stop();
}

std::vector<source_status> ingest_engine::status() const {
    std::vector<source_status> out;
    for (auto& k : _kafka) out.push_back(k->status());
    for (auto& j : _jetstream) out.push_back(j->status());
    return out;
}

} // namespace floe::ingest
