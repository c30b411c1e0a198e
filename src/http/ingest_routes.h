#pragma once

#include "http/server.h"
#include "ingest/ingest_engine.h"

namespace floe::http {

/// GET /v1/ingest: every ingest source and mirrored partition as JSON:
/// {"sources":[{"name","type","state","last_error","last_error_ms","errors","partitions":[
///   {"source_topic","topic","partition","state","source_position","local_position",
///    "committed_position","lag_records","lag_seconds","records"}]}]}
/// Positions are offsets (next to be written); committed_position is the mirror partition's
/// offloaded marker (Iceberg); unknown values are null. Partition state: caught_up, behind or
/// unknown (the source's end not seen yet). The engine must outlive the server's routes.
void add_ingest_routes(server& s, const ingest::ingest_engine& engine);

} // namespace floe::http
