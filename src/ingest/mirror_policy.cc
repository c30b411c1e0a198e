#include "ingest/mirror_policy.h"

#include "config/units.h"

#include <spdlog/spdlog.h>

namespace floe::ingest {

result<seal_thresholds> seal_thresholds::of(const config::settings::ingest_source& cfg) {
    seal_thresholds t;
    if (auto v = cfg.get("max-age"); !v.empty())
        t.max_age_ms = FLOE_TRY_CTX(config::parse_duration(v), "setting 'floe.ingest.sources.{}.max-age'", cfg.name).count();
    if (auto v = cfg.get("max-messages"); !v.empty())
        t.max_messages = FLOE_TRY_CTX(config::parse_int(v), "setting 'floe.ingest.sources.{}.max-messages'", cfg.name);
    if (auto v = cfg.get("max-bytes"); !v.empty())
        t.max_bytes = FLOE_TRY_CTX(config::parse_size(v), "setting 'floe.ingest.sources.{}.max-bytes'", cfg.name);
    if (auto v = cfg.get("idle-seal"); !v.empty())
        t.idle_ms = FLOE_TRY_CTX(config::parse_duration(v), "setting 'floe.ingest.sources.{}.idle-seal'", cfg.name).count();
    for (auto k : {"max-age", "max-messages", "max-bytes"})
        if (cfg.values.contains(k) && !cfg.get(k).empty())
            t.immediate |= (k == std::string_view("max-age") ? t.max_age_ms : k == std::string_view("max-messages")
                                                                                  ? t.max_messages
                                                                                  : t.max_bytes)
                           == 0;
    return t;
}

void segment_sealer::appended(const log::local_partition& p, int64_t added, int64_t now_ms) {
    auto segs = p.segments();
    if (segs.empty()) return;
    auto& a = segs.back();
    if (a.sealed || a.empty()) return;
    if (a.id() != _seg_id) {
        // A new active segment (or one found at start): counted from here.
        _seg_id = a.id();
        _first_ms = now_ms;
        _last_ms = now_ms;
        _msgs = added > 0 ? 0 : a.next_offset() - a.base_offset();
    }
    _msgs += added;
    if (added > 0) _last_ms = now_ms;
}

result<std::optional<sealed_segment>> segment_sealer::maybe_seal(log::local_partition& p, const seal_thresholds& t,
                                                                 int64_t now_ms, bool at_source_end) {
    if (!t.any()) return std::nullopt;
    appended(p, 0, now_ms);
    auto segs = p.segments();
    if (segs.empty()) return std::nullopt;
    auto& a = segs.back();
    if (a.sealed || a.empty() || a.id() != _seg_id) return std::nullopt;
    const char* why = nullptr;
    if (t.immediate) {
        // At most one segment waits for the lake: while a sealed one is not committed yet,
        // what arrives gathers in the active segment and goes in the next commit, so the storage
        // worker commits as fast as it can and never falls behind by one commit per message.
        const int64_t marker = p.offloaded_up_to()();
        for (auto it = segs.rbegin() + 1; it < segs.rend(); ++it)
            if (!it->empty()) {
                if (p.config().remote_storage_enable && it->next_offset() > marker) return std::nullopt;
                break;
            }
        why = "threshold 0";
    }
    else if (t.max_messages > 0 && _msgs >= t.max_messages) why = "max-messages";
    else if (t.max_bytes > 0 && int64_t(a.size_bytes) >= t.max_bytes) why = "max-bytes";
    else if (t.max_age_ms > 0 && now_ms - _first_ms >= t.max_age_ms) why = "max-age";
    else if (t.idle_ms >= 0 && at_source_end && now_ms - _last_ms >= t.idle_ms) why = "idle-seal";
    if (!why) return std::nullopt;
    FLOE_TRY_CTX(p.roll(), "sealing a segment of {}-{} ({})", p.tp().topic, p.tp().partition, why);
    sealed_segment s{why, a.id(), _msgs, a.size_bytes};
    _seg_id = -1;
    _msgs = 0;
    return s;
}

bool mirrors_to_lake(const config::settings::ingest_source& cfg) { return cfg.get("remote-storage", "true") != "false"; }

log::config_map mirror_overrides(const config::settings::ingest_source& cfg) {
    log::config_map o;
    o["remote.storage.enable"] = mirrors_to_lake(cfg) ? "true" : "false";
    return o;
}

result<log::topic_info> align_mirror_tiering(log::local_tier& logs, log::topic_info info,
                                             const config::settings::ingest_source& cfg) {
    const bool want = mirrors_to_lake(cfg);
    if (want && !info.config.remote_storage_enable) {
        log::config_op op{"remote.storage.enable", log::config_op::kind::set, "true"};
        info = FLOE_TRY_CTX(logs.incremental_alter_topic_config(info.name, std::span(&op, 1)),
                            "turning remote.storage.enable on for mirror topic {}", info.name);
        spdlog::info("ingest {}: mirror topic {} now goes to Iceberg (remote.storage.enable=true; set "
                     "floe.ingest.sources.{}.remote-storage=false to keep it local)",
                     cfg.name, info.name, cfg.name);
    } else if (!want && info.config.remote_storage_enable) {
        spdlog::warn("ingest {}: remote-storage=false, but mirror topic {} already goes to Iceberg "
                     "(remote.storage.enable=true) and stays so; delete the topic to mirror it locally only",
                     cfg.name, info.name);
    }
    return info;
}

} // namespace floe::ingest
