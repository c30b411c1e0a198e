// libFuzzer target: the segment recovery scanner and the RecordBatch v2 header parser, fed
// arbitrary bytes as if they were a segment file found on disk after a crash. Checks that the
// in-memory scan and the chunked file scan agree, and that what the scanner accepts really is
// a chain of valid batches.
#include "log/record_batch_header.h"
#include "log/segment_scanner.h"

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

using namespace floe;
using namespace floe::log;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bytes_view in(data, size);

    (void)parse_batch_header(in);
    (void)parse_batch_prefix(in);
    (void)validate_batch(in);
    (void)for_each_batch(in, true, [](const record_batch_header&, bytes_view) { return true; });

    // Base offset taken from the first batch if there is one, as recovery would from the name.
    int64_t base = 0;
    if (auto p = parse_batch_prefix(in); p && p->base_offset >= 0) base = p->base_offset;
    uint64_t last_end = 0;
    auto a = scan_segment_bytes(in, base, [&](const record_batch_header& h, uint64_t pos) {
        if (pos != last_end) std::abort();
        if (!validate_batch(in.subspan(pos, h.size_bytes()))) std::abort();
        last_end = pos + h.size_bytes();
    });
    if (a.valid_bytes != last_end || a.valid_bytes > size) std::abort();
    // A mirror's scan (gaps allowed) accepts at least what the strict scan accepts, and its
    // offsets only go forward.
    int64_t prev_next = base;
    auto g = scan_segment_bytes(
        in, base,
        [&](const record_batch_header& h, uint64_t) {
            if (h.base_offset < prev_next) std::abort();
            prev_next = h.last_offset() + 1;
        },
        true);
    if (g.valid_bytes < a.valid_bytes || g.valid_bytes > size) std::abort();

    int fd = ::memfd_create("seg", MFD_CLOEXEC);
    if (fd >= 0) {
        if (size == 0 || ::write(fd, data, size) == ssize_t(size)) {
            auto b = scan_segment_file(fd, size, base);
            if (!b || b->valid_bytes != a.valid_bytes || b->next_offset != a.next_offset
                || b->batches != a.batches)
                std::abort();
            auto gb = scan_segment_file(fd, size, base, {}, true);
            if (!gb || gb->valid_bytes != g.valid_bytes || gb->next_offset != g.next_offset
                || gb->batches != g.batches)
                std::abort();
        }
        ::close(fd);
    }
    return 0;
}
