#include "log/batch_builder.h"

#include "base/varint.h"
#include "log/compression.h"

namespace floe::log {

void batch_builder::begin(int64_t base_offset, compression_codec codec, int64_t producer_id,
                          int16_t producer_epoch, int32_t base_sequence,
                          std::optional<int64_t> base_timestamp) {
    _fixed_base_ts = base_timestamp.has_value();
    _base_ts = base_timestamp.value_or(0);
    _base_offset = _last_offset = base_offset;
    _codec = codec;
    _producer_id = producer_id;
    _producer_epoch = producer_epoch;
    _base_sequence = base_sequence;
    _count = 0;
    _max_ts = -1;
    _records.clear();
}

void batch_builder::add(int64_t offset, int64_t timestamp, std::optional<std::string_view> key,
                        std::optional<std::string_view> value, std::span<const header> headers) {
    FLOE_ASSERT(offset >= _base_offset && (_count == 0 || offset > _last_offset),
                "batch records must have increasing offsets");
    if (_count == 0 && !_fixed_base_ts) _base_ts = timestamp;
    _max_ts = std::max(_max_ts, timestamp);
    _last_offset = offset;
    auto& r = _record;
    r.clear();
    r.push_back(0); // attributes
    put_varint(r, timestamp - _base_ts);
    put_varint(r, offset - _base_offset);
    auto put_nullable = [&](std::optional<std::string_view> v) {
        if (!v) {
            put_varint(r, -1);
            return;
        }
        put_varint(r, static_cast<int64_t>(v->size()));
        r.insert(r.end(), v->begin(), v->end());
    };
    put_nullable(key);
    put_nullable(value);
    put_varint(r, static_cast<int64_t>(headers.size()));
    for (auto& h : headers) {
        put_varint(r, static_cast<int64_t>(h.key.size()));
        r.insert(r.end(), h.key.begin(), h.key.end());
        put_nullable(h.value);
    }
    put_varint(_records, static_cast<int64_t>(r.size()));
    _records.insert(_records.end(), r.begin(), r.end());
    ++_count;
}

result<void> batch_builder::finish(byte_buffer& out) {
    bytes_view body = _records;
    if (_codec != compression_codec::none) {
        _compressed = FLOE_TRY(compress(_codec, _records));
        body = _compressed;
    }
    size_t start = out.size();
    byte_writer w(out);
    w.put_be<int64_t>(_base_offset);
    w.put_be<int32_t>(static_cast<int32_t>(batch_layout::header_size - batch_layout::log_overhead + body.size()));
    w.put_be<int32_t>(-1); // partition leader epoch
    w.put_u8(2);           // magic
    w.put_be<uint32_t>(0); // crc, patched below
    w.put_be<int16_t>(static_cast<int16_t>(_codec));
    w.put_be<int32_t>(static_cast<int32_t>(_last_offset - _base_offset));
    w.put_be<int64_t>(_count || _fixed_base_ts ? _base_ts : -1);
    w.put_be<int64_t>(_max_ts);
    w.put_be<int64_t>(_producer_id);
    w.put_be<int16_t>(_producer_epoch);
    w.put_be<int32_t>(_base_sequence);
    w.put_be<int32_t>(static_cast<int32_t>(_count));
    w.put_bytes(body);
    auto crc = compute_batch_crc(bytes_view(out).subspan(start));
    w.patch_be<uint32_t>(start + batch_layout::crc, crc);
    return {};
}

} // namespace floe::log
