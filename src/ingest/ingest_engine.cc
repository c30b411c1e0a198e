#include "ingest/ingest_engine.h"

namespace floe::ingest {

ingest_engine::ingest_engine(const config::settings& s, log::log_manager& logs) {
    for (auto& [name, src] : s.ingest_sources())
        if (src.get("type") == "kafka") _kafka.push_back(std::make_unique<kafka_source>(src, logs));
}

ingest_engine::~ingest_engine() { stop(); }

result<void> ingest_engine::start() {
    for (auto& k : _kafka) FLOE_TRY_CTX(k->start(), "ingest source {}", k->name());
    return {};
}

void ingest_engine::stop() {
    for (auto& k : _kafka) k->stop();
}

std::vector<source_status> ingest_engine::status() const {
    std::vector<source_status> out;
    for (auto& k : _kafka) out.push_back(k->status());
    return out;
}

} // namespace floe::ingest
