// Answers to requests in versions older than Floe serves, in each version's own layout, so that
// an old client reads a clear UNSUPPORTED_VERSION per partition instead of failing to parse a
// bare error code ("Read underflow"). The case in practice: librdkafka with
// api.version.request=false and broker.version.fallback < 0.11 (Produce v0-v2 with message
// format v0/v1 message sets, Fetch v0-v3, ListOffsets v0), which Floe, storing record batches
// v2 only, does not convert.
#pragma once

#include "base/bytes.h"
#include "kafka/protocol.h"

namespace floe::kafka {

enum class legacy_answer {
    not_legacy, ///< not one of these requests: answer with the bare UNSUPPORTED_VERSION
    answered,   ///< a full answer in the request's version was written to `out`
    close,      ///< no answer may be sent (Produce with acks=0) or the body did not parse
};

/// For Produce v0-v2, Fetch v0-v3 and ListOffsets v0: decodes the request's topics and partitions
/// (`body` starts right after the correlation id, at the client id) and writes a response in
/// that version with UNSUPPORTED_VERSION for every partition.
legacy_answer answer_legacy_request(const request_header& h, bytes_view body, byte_buffer& out);

} // namespace floe::kafka
