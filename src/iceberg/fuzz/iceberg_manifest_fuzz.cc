// libFuzzer target: manifest and manifest list decoding (Avro + Iceberg field mapping).
#include "iceberg/manifest.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    floe::bytes_view b(data, size);
    auto list = floe::iceberg::read_manifest_list(b, "fuzz-list.avro");
    floe::iceberg::manifest_file mf;
    if (list && !list->empty()) mf = list->front();
    (void)floe::iceberg::read_manifest(b, "fuzz-manifest.avro", list && !list->empty() ? &mf : nullptr);
    return 0;
}
