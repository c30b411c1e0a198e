#pragma once

#include "base/result.h"
#include "config/settings.h"
#include "ingest/kafka_source.h"
#include "log/local_tier.h"

#include <memory>
#include <string>
#include <string_view>

namespace floe::ingest {

/// A NATS JetStream source: one stream (`stream`), or several (`streams`: a comma list, a `^regex`,
/// or `*` for all; listed every 2 s, so streams created later are mirrored, at most 1,000 a
/// source), each copied into its own one-partition mirror topic (`topic`, or `topic-prefix` +
/// stream name): offset = stream sequence - 1, key = subject, value = payload, headers = NATS
/// headers, timestamp = the stream's stored time. KV buckets (`KV_<bucket>`) and object stores
/// (`OBJ_<bucket>`) are shaped (src/ingest/README.md, "Stream kinds"). `overrides.<stream>.<key>`
/// sets a key for one stream. `duplicate` keeps messages in NATS; `offload` removes them once
/// the Iceberg table holds them (purge below the mirror's offloaded marker; on a work queue,
/// explicit acks of a durable consumer), the stream's last message excepted.
/// `max-age` / `max-messages` / `max-bytes` seal the mirror's active segment and wake the
/// storage worker (0: after every fetch); above `max-local-bytes` not yet in Iceberg (per
/// stream), fetching pauses. Limits streams are read through an ephemeral pull consumer created
/// at the mirror's log end (sequence = log end + 1; everything when the mirror is empty),
/// acknowledged (AckAll) after each append.
///
/// Threads: one per stream (its own connection), plus a listing thread with `streams`; start()
/// spawns them; status() is safe from any thread (it sums the streams); stop() joins.
class jetstream_source {
public:
    jetstream_source(config::settings::ingest_source cfg, log::local_tier& logs, ingest_hooks hooks = {});
    ~jetstream_source();
    jetstream_source(const jetstream_source&) = delete;
    jetstream_source& operator=(const jetstream_source&) = delete;

    result<void> start();
    void stop();
    source_status status() const;
    const std::string& name() const noexcept { return _cfg.name; }

    struct impl;

private:
    config::settings::ingest_source _cfg;
    log::local_tier& _logs;
    ingest_hooks _hooks;
    std::unique_ptr<impl> _impl;
};

/// The stream sequence and stored time (ns since the epoch) of a JetStream message, read from
/// its ack (reply) subject without allocating: "$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.
/// <cseq>.<ns>.<pending>", or with a domain "$JS.ACK.<domain>.<account>.<stream>.<consumer>.
/// <delivered>.<sseq>.<cseq>.<ns>.<pending>[.<more>]". False when it is neither form.
bool parse_ack_subject(std::string_view reply, uint64_t& sseq, int64_t& ts_ns);

} // namespace floe::ingest
