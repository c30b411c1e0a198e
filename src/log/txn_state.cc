#include "log/txn_state.h"

#include "base/varint.h"
#include "log/batch_builder.h"
#include "log/records.h"

#include <algorithm>

namespace floe::log {

bool in_aborted_transaction(const record_batch_header& h, std::span<const aborted_txn> aborted) noexcept {
    if (!h.is_transactional() || h.is_control()) return false;
    for (auto& a : aborted)
        if (a.producer_id == h.producer_id && a.first_offset <= h.base_offset && h.base_offset <= a.last_offset)
            return true;
    return false;
}

namespace {
void put_be16(byte_buffer& b, uint16_t v) {
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}
void put_be32(byte_buffer& b, uint32_t v) {
    put_be16(b, uint16_t(v >> 16));
    put_be16(b, uint16_t(v));
}
void put_be64(byte_buffer& b, uint64_t v) {
    put_be32(b, uint32_t(v >> 32));
    put_be32(b, uint32_t(v));
}
} // namespace

byte_buffer build_txn_marker_batch(int64_t producer_id, int16_t producer_epoch, txn_marker m,
                                   int32_t coordinator_epoch, int64_t timestamp_ms) {
    byte_buffer key, value, out;
    put_be16(key, 0);
    put_be16(key, uint16_t(m));
    put_be16(value, 0);
    put_be32(value, uint32_t(coordinator_epoch));
    batch_builder b;
    b.begin(0, compression_codec::none, producer_id, producer_epoch, -1);
    b.add(0, timestamp_ms, std::string_view(reinterpret_cast<const char*>(key.data()), key.size()),
          std::string_view(reinterpret_cast<const char*>(value.data()), value.size()));
    (void)b.finish(out); // uncompressed: cannot fail
    // Transactional + control attributes; the CRC covers attributes, so recompute it.
    uint16_t attrs = uint16_t(batch_attr::transactional | batch_attr::control);
    out[batch_layout::attributes] = uint8_t(attrs >> 8);
    out[batch_layout::attributes + 1] = uint8_t(attrs);
    uint32_t crc = compute_batch_crc(out);
    out[batch_layout::crc] = uint8_t(crc >> 24);
    out[batch_layout::crc + 1] = uint8_t(crc >> 16);
    out[batch_layout::crc + 2] = uint8_t(crc >> 8);
    out[batch_layout::crc + 3] = uint8_t(crc);
    return out;
}

result<std::optional<txn_marker>> parse_txn_marker(const record_batch_header& h, bytes_view batch) {
    if (!h.is_control() || batch.size() < batch_layout::header_size) return std::nullopt;
    if (h.compression() != compression_codec::none)
        return fail(errc::corrupt, "compressed control batch");
    std::optional<txn_marker> m;
    std::vector<header_view> headers;
    FLOE_TRY(for_each_record_body(h, batch.subspan(batch_layout::header_size),
                                  [&](int32_t i, bytes_view body) -> result<void> {
        if (i != 0) return {};
        auto rec = FLOE_TRY(decode_record(h, body, headers));
        if (!rec.key || rec.key->size() < 4) return fail(errc::corrupt, "control record key");
        auto k = reinterpret_cast<const uint8_t*>(rec.key->data());
        int16_t type = int16_t((k[2] << 8) | k[3]);
        if (type == 0) m = txn_marker::abort;
        else if (type == 1) m = txn_marker::commit;
        return {};
    }));
    return m;
}

void partition_txn_state::apply(const record_batch_header& h, std::optional<txn_marker> marker) {
    if (!h.is_transactional() || !h.has_producer_id()) return;
    if (h.is_control()) {
        if (!marker) return;
        auto it = _open.find(h.producer_id);
        if (it == _open.end()) return; // nothing of it on this partition (or already closed)
        if (*marker == txn_marker::abort)
            _aborted.push_back({h.producer_id, it->second, h.base_offset});
        _open.erase(it);
        return;
    }
    _open.try_emplace(h.producer_id, h.base_offset);
}

void partition_txn_state::apply_replayed(const record_batch_header& h, std::optional<txn_marker> marker,
                                         int64_t replay_start) {
    if (!h.is_transactional() || !h.has_producer_id()) return;
    if (h.is_control() && marker && !_open.contains(h.producer_id) && *marker == txn_marker::abort) {
        auto prev = _replay_markers.find(h.producer_id);
        int64_t first = prev == _replay_markers.end() ? replay_start : prev->second + 1;
        if (first < h.base_offset) _aborted.push_back({h.producer_id, first, h.base_offset});
    }
    if (h.is_control() && marker) _replay_markers[h.producer_id] = h.base_offset;
    apply(h, marker);
}

int64_t partition_txn_state::last_stable(int64_t log_end) const noexcept {
    int64_t lso = log_end;
    for (auto& [pid, first] : _open) lso = std::min(lso, first);
    return lso;
}

std::vector<aborted_txn> partition_txn_state::aborted_in(int64_t from, int64_t to) const {
    std::vector<aborted_txn> out;
    // Sorted by last_offset: skip those ending before `from`.
    auto it = std::lower_bound(_aborted.begin(), _aborted.end(), from,
                               [](const aborted_txn& a, int64_t v) { return a.last_offset < v; });
    for (; it != _aborted.end(); ++it)
        if (it->first_offset < to) out.push_back(*it);
    std::sort(out.begin(), out.end(),
              [](const aborted_txn& a, const aborted_txn& b) { return a.first_offset < b.first_offset; });
    return out;
}

void partition_txn_state::trim_below(int64_t offset) {
    std::erase_if(_aborted, [&](const aborted_txn& a) { return a.last_offset < offset; });
}

void partition_txn_state::encode(byte_buffer& out) const {
    put_be32(out, uint32_t(_open.size()));
    for (auto& [pid, first] : _open) {
        put_be64(out, uint64_t(pid));
        put_be64(out, uint64_t(first));
    }
    put_be32(out, uint32_t(_aborted.size()));
    for (auto& a : _aborted) {
        put_be64(out, uint64_t(a.producer_id));
        put_be64(out, uint64_t(a.first_offset));
        put_be64(out, uint64_t(a.last_offset));
    }
}

result<partition_txn_state> partition_txn_state::decode(byte_reader& r) {
    partition_txn_state s;
    uint32_t n = FLOE_TRY(r.be<uint32_t>());
    if (size_t(n) > r.remaining() / 16) return fail(errc::corrupt, "open transactions count");
    for (uint32_t i = 0; i < n; ++i) {
        int64_t pid = FLOE_TRY(r.be<int64_t>());
        s._open[pid] = FLOE_TRY(r.be<int64_t>());
    }
    uint32_t k = FLOE_TRY(r.be<uint32_t>());
    if (size_t(k) > r.remaining() / 24) return fail(errc::corrupt, "aborted transactions count");
    s._aborted.reserve(k);
    for (uint32_t i = 0; i < k; ++i) {
        aborted_txn a;
        a.producer_id = FLOE_TRY(r.be<int64_t>());
        a.first_offset = FLOE_TRY(r.be<int64_t>());
        a.last_offset = FLOE_TRY(r.be<int64_t>());
        s._aborted.push_back(a);
    }
    return s;
}

} // namespace floe::log
