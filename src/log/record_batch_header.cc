#include "log/record_batch_header.h"

#include "base/crc32c.h"

#include <bit>
#include <cstring>

namespace floe::log {

namespace {
template<typename T>
T load_be(const uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::endian::native == std::endian::little) {
        using U = std::make_unsigned_t<T>;
        v = T(std::byteswap(U(v)));
    }
    return v;
}
template<typename T>
void store_be(uint8_t* p, T v) noexcept {
    using U = std::make_unsigned_t<T>;
    U u = U(v);
    if constexpr (std::endian::native == std::endian::little) u = std::byteswap(u);
    std::memcpy(p, &u, sizeof(T));
}
} // namespace

int32_t record_batch_header::last_sequence() const noexcept {
    if (base_sequence < 0) return -1;
    // Kafka wraps sequences at INT32_MAX back to 0.
    int64_t s = int64_t(base_sequence) + last_offset_delta;
    if (s > INT32_MAX) s -= int64_t(INT32_MAX) + 1;
    return int32_t(s);
}

result<batch_prefix> parse_batch_prefix(bytes_view data) {
    if (data.size() < batch_layout::log_overhead)
        return fail(errc::corrupt, "batch prefix needs 12 bytes, have {}", data.size());
    return batch_prefix{load_be<int64_t>(data.data()), load_be<int32_t>(data.data() + 8)};
}

result<record_batch_header> parse_batch_header(bytes_view data) {
    using namespace batch_layout;
    if (data.size() < header_size)
        return fail(errc::corrupt, "batch header needs {} bytes, have {}", header_size,
                    data.size());
    const uint8_t* p = data.data();
    record_batch_header h;
    h.base_offset = load_be<int64_t>(p + base_offset);
    h.batch_length = load_be<int32_t>(p + batch_length);
    h.partition_leader_epoch = load_be<int32_t>(p + partition_leader_epoch);
    h.magic = int8_t(p[magic]);
    h.crc = load_be<uint32_t>(p + crc);
    h.attributes = load_be<int16_t>(p + attributes);
    h.last_offset_delta = load_be<int32_t>(p + last_offset_delta);
    h.base_timestamp = load_be<int64_t>(p + base_timestamp);
    h.max_timestamp = load_be<int64_t>(p + max_timestamp);
    h.producer_id = load_be<int64_t>(p + producer_id);
    h.producer_epoch = load_be<int16_t>(p + producer_epoch);
    h.base_sequence = load_be<int32_t>(p + base_sequence);
    h.record_count = load_be<int32_t>(p + record_count);
    if (h.magic != 2) return fail(errc::corrupt, "batch magic {} (only v2 is supported)", h.magic);
    if (h.batch_length < min_batch_length)
        return fail(errc::corrupt, "batch length {} below minimum {}", h.batch_length,
                    min_batch_length);
    if (h.last_offset_delta < 0)
        return fail(errc::corrupt, "negative last offset delta {}", h.last_offset_delta);
    if (h.record_count < 0) return fail(errc::corrupt, "negative record count {}", h.record_count);
    if (h.base_offset < 0) return fail(errc::corrupt, "negative base offset {}", h.base_offset);
    return h;
}

uint32_t compute_batch_crc(bytes_view batch) noexcept {
    if (batch.size() <= batch_layout::attributes) return 0;
    return crc32c(batch.subspan(batch_layout::attributes));
}

result<record_batch_header> validate_batch(bytes_view batch) {
    auto h = FLOE_TRY(parse_batch_header(batch));
    if (h.size_bytes() != batch.size())
        return fail(errc::corrupt, "batch length says {} bytes, have {}", h.size_bytes(),
                    batch.size());
    uint32_t c = compute_batch_crc(batch);
    if (c != h.crc)
        return fail(errc::corrupt, "batch crc {:#010x} != stored {:#010x}", c, h.crc);
    return h;
}

void patch_base_offset(std::span<uint8_t> batch, int64_t base_offset) noexcept {
    store_be<int64_t>(batch.data() + batch_layout::base_offset, base_offset);
}

void patch_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch) noexcept {
    store_be<int32_t>(batch.data() + batch_layout::partition_leader_epoch, epoch);
}

void patch_log_append_time(std::span<uint8_t> batch, int64_t timestamp_ms) noexcept {
    uint8_t* p = batch.data();
    int16_t attrs = load_be<int16_t>(p + batch_layout::attributes);
    store_be<int16_t>(p + batch_layout::attributes, int16_t(attrs | batch_attr::log_append_time));
    store_be<int64_t>(p + batch_layout::max_timestamp, timestamp_ms);
    store_be<uint32_t>(p + batch_layout::crc, compute_batch_crc(batch));
}

} // namespace floe::log
