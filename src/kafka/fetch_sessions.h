#pragma once

// Incremental fetch sessions (KIP-227). A client opens a session with a full fetch (session id 0,
// epoch 0); Floe answers with a session id and remembers the partitions and their fetch
// offsets. Later fetches (that id, the next epoch) name only partitions whose fetch offset
// changed and those to forget; the answer lists only partitions with news (records, an error, or
// a changed high watermark / last stable / log start offset). Epoch -1 closes a session;
// session id 0 with epoch -1 is a sessionless full fetch (librdkafka, kafkajs).

#include "kafka/messages.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace floe::kafka {

/// The broker's fetch sessions, bounded in number (least recently used evicted first) and in
/// idle time. Thread-safe (one mutex); any io thread. A session is not tied to a connection.
class fetch_session_cache {
public:
    struct options {
        size_t max_sessions = 1000; ///< max.incremental.fetch.session.cache.slots
        std::chrono::milliseconds idle_eviction{
            120'000}; ///< min.incremental.fetch.session.eviction.ms
    };
    fetch_session_cache() : fetch_session_cache(options{}) {}
    explicit fetch_session_cache(options o) : _opts(o) {}

    /// How one Fetch is answered. Owns the topic names the rewritten request points to, so it
    /// must outlive the request's use.
    struct context {
        int16_t error = 0;      ///< top-level error: answer nothing else
        int32_t session_id = 0; ///< for the answer (0: no session)
        bool incremental = false;
        std::deque<std::string> names; ///< storage for fetch_request::topic::name views
    };

    /// Applies `req` to the cache and, for a session, rewrites req.topics into every partition
    /// of the session with its current fetch offset (what the Fetch handler then reads).
    context begin(fetch_request& req, int16_t version);

    /// Whether a read partition goes into the answer; records what was sent. Full fetches (and
    /// sessionless ones) include everything; an incremental one only partitions with records,
    /// an error, or an offset that changed since the session last reported it.
    bool include(const context& ctx, std::string_view topic, const uuid& topic_id,
                 const fetch_partition_header& hdr, bool has_records);

    size_t size() const;

private:
    struct part {
        std::string name; ///< as the client sent it (empty for v13+, which uses ids)
        uuid topic_id;
        int32_t index = 0;
        int64_t fetch_offset = 0;
        int64_t log_start_offset = -1;
        int32_t max_bytes = 0;
        // What the session last reported (-2: never).
        int64_t high_watermark = -2, last_stable = -2, log_start = -2;
    };
    struct session {
        int32_t next_epoch = 1;
        std::vector<part> parts;
        std::chrono::steady_clock::time_point used;
    };
    void evict_locked(std::chrono::steady_clock::time_point now);
    int32_t new_id_locked();
    static part* find(session& s, std::string_view name, const uuid& id, int32_t index);

    options _opts;
    mutable std::mutex _mu;
    std::map<int32_t, std::shared_ptr<session>> _sessions;
    uint64_t _seed = 0x9e3779b97f4a7c15ull;
};

} // namespace floe::kafka
