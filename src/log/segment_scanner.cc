#include "log/segment_scanner.h"

#include "log/fs_util.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace floe::log {

namespace {

// Checks the batch at the start of `rest` (which may hold more). Returns its size, or 0 with
// `why` set when the chain stops here. `need_more` reports a batch whose bytes are not all in
// `rest` while the underlying data may still hold them (used by the chunked file reader).
size_t check_one(bytes_view rest, int64_t expected, bool allow_gaps, record_batch_header& h,
                 std::string& why, uint64_t pos) {
    auto hr = parse_batch_header(rest);
    if (!hr) {
        why = fmt::format("at byte {}: {}", pos, hr.error().message());
        return 0;
    }
    h = *hr;
    if (h.size_bytes() > rest.size()) {
        why = fmt::format("at byte {}: torn batch needs {} bytes, {} left", pos, h.size_bytes(),
                          rest.size());
        return 0;
    }
    if (allow_gaps ? h.base_offset < expected : h.base_offset != expected) {
        why = fmt::format("at byte {}: base offset {} where {} was expected", pos, h.base_offset,
                          expected);
        return 0;
    }
    uint32_t c = compute_batch_crc(rest.first(h.size_bytes()));
    if (c != h.crc) {
        why = fmt::format("at byte {}: crc {:#010x} != stored {:#010x} (batch at offset {})", pos,
                          c, h.crc, h.base_offset);
        return 0;
    }
    return h.size_bytes();
}


} // namespace

scan_outcome scan_segment_bytes(bytes_view data, int64_t base_offset, const scan_callback& cb,
                                bool allow_gaps) {
    scan_outcome out;
    out.next_offset = base_offset;
    uint64_t pos = 0;
    record_batch_header h;
    while (pos < data.size()) {
        size_t n = check_one(data.subspan(pos), out.next_offset, allow_gaps, h, out.stop_reason, pos);
        if (n == 0) break;
        if (cb) cb(h, pos);
        pos += n;
        out.next_offset = h.last_offset() + 1;
        ++out.batches;
    }
    out.valid_bytes = pos;
    return out;
}

result<scan_outcome> scan_segment_file(int fd, uint64_t file_size, int64_t base_offset,
                                       const scan_callback& cb, bool allow_gaps) {
    constexpr size_t chunk = 4 << 20;
    scan_outcome out;
    out.next_offset = base_offset;
    byte_buffer buf;
    uint64_t win_start = 0; // file position of buf[0]
    size_t win_len = 0;
    uint64_t pos = 0;
    record_batch_header h;
    while (pos < file_size) {
        // Make sure the window holds at least the header (or the rest of the file).
        uint64_t want = std::min<uint64_t>(batch_layout::header_size, file_size - pos);
        if (pos + want > win_start + win_len) {
            size_t n = size_t(std::min<uint64_t>(chunk, file_size - pos));
            buf.resize(n);
            FLOE_TRY(pread_exact(fd, buf.data(), n, pos));
            win_start = pos;
            win_len = n;
        }
        bytes_view rest(buf.data() + (pos - win_start), win_len - size_t(pos - win_start));
        auto hr = parse_batch_header(rest);
        if (hr && hr->size_bytes() > rest.size() && hr->size_bytes() <= file_size - pos) {
            // A batch larger than the window but within the file: read it whole. Its size is
            // bounded by the file size, so a lying length cannot make us allocate beyond it.
            size_t n = hr->size_bytes();
            buf.resize(n);
            FLOE_TRY(pread_exact(fd, buf.data(), n, pos));
            win_start = pos;
            win_len = n;
            rest = bytes_view(buf.data(), n);
        }
        size_t n = check_one(rest, out.next_offset, allow_gaps, h, out.stop_reason, pos);
        if (n == 0) {
            // `rest` may end at the window, not the file: a batch reported torn here but lying
            // within the file was handled above, so a torn report means torn in the file too.
            break;
        }
        if (cb) cb(h, pos);
        pos += n;
        out.next_offset = h.last_offset() + 1;
        ++out.batches;
    }
    out.valid_bytes = pos;
    return out;
}

} // namespace floe::log
