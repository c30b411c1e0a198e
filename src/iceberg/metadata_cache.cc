#include "iceberg/metadata_cache.h"

#include "base/crc32c.h"

#include <algorithm>

namespace floe::iceberg {

metadata_cache& metadata_cache::global() {
    static metadata_cache cache;
    return cache;
}

metadata_content metadata_content::of(std::string_view bytes) {
    return {bytes.size(), crc32c(as_bytes(bytes))};
}

std::optional<table_metadata> metadata_cache::get(std::string_view location, const metadata_content* content) const {
    std::lock_guard g(_mu);
    for (auto& e : _entries)
        if (e->metadata_location == location && (!content || e->content == *content)) return e->metadata;
    return std::nullopt;
}

std::unique_ptr<cached_metadata> metadata_cache::take(std::string_view location, const metadata_content* content) {
    std::unique_ptr<cached_metadata> e;
    std::lock_guard g(_mu);
    for (auto it = _entries.begin(); it != _entries.end(); ++it) {
        if ((*it)->metadata_location == location) {
            e = std::move(*it);
            _entries.erase(it);
            break;
        }
    }
    if (e && content && e->content != *content) return nullptr;  // another file of that name
    return e;
}

void metadata_cache::put(std::unique_ptr<cached_metadata> entry) {
    if (!entry || _max == 0) return;
    std::list<std::unique_ptr<cached_metadata>> dropped; // destroyed outside the lock
    std::lock_guard g(_mu);
    for (auto& e : _entries) {
        // A reader that loaded an older version while a commit stored a newer one keeps the
        // newer one cached: it is what the catalog most likely points at.
        auto& m = e->metadata;
        if (m.table_uuid == entry->metadata.table_uuid && m.location == entry->metadata.location
            && m.last_sequence_number > entry->metadata.last_sequence_number)
            return;
    }
    for (auto it = _entries.begin(); it != _entries.end();) {
        auto& m = (*it)->metadata;
        bool same_table =
            m.table_uuid == entry->metadata.table_uuid && m.location == entry->metadata.location;
        if (same_table || (*it)->metadata_location == entry->metadata_location) {
            auto next = std::next(it);
            dropped.splice(dropped.end(), _entries, it);
            it = next;
        } else {
            ++it;
        }
    }
    _entries.push_front(std::move(entry));
    while (_entries.size() > _max)
        dropped.splice(dropped.end(), _entries, std::prev(_entries.end()));
}

bool metadata_cache::holds(std::string_view location) const {
    std::lock_guard g(_mu);
    return std::any_of(_entries.begin(), _entries.end(), [&](auto& e) { return e->metadata_location == location; });
}

void metadata_cache::clear() {
    std::list<std::unique_ptr<cached_metadata>> dropped;
    std::lock_guard g(_mu);
    dropped.swap(_entries);
}

size_t metadata_cache::size() const {
    std::lock_guard g(_mu);
    return _entries.size();
}

} // namespace floe::iceberg
