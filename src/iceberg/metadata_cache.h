#pragma once

#include "iceberg/manifest.h"
#include "iceberg/metadata.h"

#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::iceberg {

/// Identifies the bytes of a metadata file (their size and CRC-32C), to tell two files apart
/// that had the same name (filesystem catalog: a table dropped and created again reuses
/// v<N>.metadata.json).
struct metadata_content {
    size_t size = 0;
    uint32_t crc = 0;
    bool operator==(const metadata_content&) const = default;
    static metadata_content of(std::string_view bytes);
};

/// One table version as this process last read or wrote it: the parsed metadata, the
/// serialised JSON of each snapshot, and the entries of the current snapshot's manifest list.
/// Plain data; owned by a metadata_cache, or by one commit while it builds the next version.
struct cached_metadata {
    std::string metadata_location;
    metadata_content content;  ///< of the file at metadata_location
    table_metadata metadata;
    snapshot_json_cache snapshot_json;
    /// The decoded manifest list at `manifest_list_uri` (the current snapshot's), if known.
    std::string manifest_list_uri;
    std::vector<manifest_file> manifest_list;
};

/// The parsed metadata of the last version of each table this process read or wrote, keyed by
/// metadata location. A metadata file is written once under a name no other writer uses and is
/// never changed afterwards, so a location stands for one content: when the catalog still points
/// at the cached location, the file need not be read and parsed again. The catalog is asked on
/// every load; a location not held here (a concurrent writer moved the pointer) is read from
/// storage. Where names are reused (the filesystem catalog's v<N>.metadata.json, when a table is
/// dropped and created again) callers read the file and pass its `metadata_content`, which is
/// much cheaper than parsing it. At most `max_tables` entries; the one stored longest ago is
/// dropped first.
///
/// Thread-safe. Entries are handed out as copies (`get`) or taken out for the exclusive use of a
/// commit (`take`), which mutates the entry into the next version and stores it back (`put`)
/// only once its catalog swap succeeded. A second commit to the same table from this process
/// meanwhile finds no entry and reads the file: slower, never wrong.
class metadata_cache {
public:
    explicit metadata_cache(size_t max_tables = 128) : _max(max_tables) {}
    metadata_cache(const metadata_cache&) = delete;
    metadata_cache& operator=(const metadata_cache&) = delete;

    /// The process-wide cache that load_table and commits use unless told otherwise.
    static metadata_cache& global();

    /// A copy of the metadata at `location`, if held (with `content`: only if made from it).
    std::optional<table_metadata> get(std::string_view location, const metadata_content* content = nullptr) const;
    /// Removes and returns the entry for `location`, if held (with `content`: only if made
    /// from it; an entry for that location made from other bytes is dropped).
    std::unique_ptr<cached_metadata> take(std::string_view location, const metadata_content* content = nullptr);
    /// Stores an entry, replacing every entry of the same table (same table-uuid and location)
    /// unless one of those is newer (a higher last-sequence-number): then `entry` is dropped.
    void put(std::unique_ptr<cached_metadata> entry);
    /// True when an entry for `location` is held (nothing is copied).
    bool holds(std::string_view location) const;
    void clear();
    size_t size() const;

private:
    mutable std::mutex _mu;
    size_t _max;
    std::list<std::unique_ptr<cached_metadata>> _entries; ///< most recently stored first
};

} // namespace floe::iceberg
