#pragma once

// `floe maintain --reencrypt`: rewrites the data files of a topic's table that are not
// encrypted with the table's current key (after a key rotation, or a table whose encryption
// was turned on or off) into new files written the way the table's properties say now, one
// "replace" commit per file (the same rows, positions carried forward), so readers never see a
// row twice or miss one. Old files go with snapshot expiry, as compaction's do.

#include "base/result.h"
#include "lake/iceberg_lake.h"

#include <cstdint>
#include <string>

namespace floe::maintenance {

struct reencrypt_options {
    bool dry_run = false;
    /// The topic's dead-letter table `<table>_dlq` instead (encrypted as the main table says).
    bool dead_letters = false;
};

struct reencrypt_report {
    std::string encryption;  ///< the table's encryption ("none", "uniform (...)")
    std::string current_key; ///< the key new files get ("" for a plaintext table)
    size_t data_files = 0;   ///< live data files of the topic
    size_t to_rewrite = 0;   ///< not with the current key (or encrypted in a plaintext table)
    size_t rewritten = 0;
    size_t conflicts = 0; ///< files a concurrent change took before their rewrite committed
    int64_t rows = 0;
};

/// Thread: the caller's. Needs the lake's key provider for an encrypted table (and to read
/// encrypted files). A file whose key is not available fails naming the file and the key.
result<reencrypt_report> reencrypt(lake::iceberg_lake& lake, const std::string& topic,
                                   const reencrypt_options& opts = {});

} // namespace floe::maintenance
