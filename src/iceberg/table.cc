#include "iceberg/table.h"

#include "base/random.h"
#include "base/uuid.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <thread>

namespace floe::iceberg {

namespace {

int64_t new_snapshot_id(const table_metadata& m) {
    for (;;) {
        auto id = static_cast<int64_t>(os_random64() & 0x7FFFFFFFFFFFFFFFull);
        if (id != 0 && !m.find_snapshot(id)) return id;
    }
}

int64_t summary_long(const snapshot* s, const char* key) {
    if (!s) return 0;
    auto it = s->summary.find(key);
    if (it == s->summary.end()) return 0;
    try {
        return std::stoll(it->second);
    } catch (...) {
        return 0;
    }
}

std::string metadata_dir(const std::string& location) {
    return location.ends_with("/") ? location + "metadata/" : location + "/metadata/";
}

// Path readers (DuckDB iceberg_scan, Hadoop-style readers) find the table through
// v<N>.metadata.json and version-hint.text. Written after the catalog swap by the one writer
// whose swap made version N current, so names never collide among writers of one catalog (and
// the commit checked that no other catalog wrote v<N>); the hint only moves forward and is the
// one file in a table that is ever replaced (it is a hint: readers probe past it).
result<void> write_path_copies(file_io& io, const std::string& location, int64_t version,
                               const std::string& committed_uri) {
    auto dir = metadata_dir(location);
    auto versioned = fmt::format("{}v{}.metadata.json", dir, version);
    // Created, never replaced: a v<N> that is already there belongs to another writer.
    if (versioned != committed_uri) FLOE_TRY(io.copy_new(committed_uri, versioned));
    auto hint_uri = dir + "version-hint.text";
    if (auto cur = io.read(hint_uri)) {
        auto text = as_chars(*cur);
        int64_t n = 0;
        for (char c : text) {
            if (c < '0' || c > '9') break;
            n = n * 10 + (c - '0');
        }
        if (n >= version) return {};
    }
    auto text = std::to_string(version);  // no trailing newline: some readers use it verbatim
    return io.write(hint_uri, as_bytes(text));
}

void backoff(const commit_options& o, int attempt) {
    auto cap = std::min<int64_t>(o.max_backoff.count(), o.min_backoff.count() << std::min(attempt, 10));
    auto lo = o.min_backoff.count(), hi = std::max<int64_t>(cap, lo);
    auto ms = lo + static_cast<int64_t>(os_random64() % static_cast<uint64_t>(hi - lo + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

} // namespace

int64_t metadata_version(std::string_view location) {
    auto slash = location.rfind('/');
    auto name = slash == std::string_view::npos ? location : location.substr(slash + 1);
    if (name.starts_with("v")) name.remove_prefix(1);
    int64_t n = 0;
    size_t digits = 0;
    for (char c : name) {
        if (c < '0' || c > '9') break;
        n = n * 10 + (c - '0');
        ++digits;
    }
    return digits ? n : 0;
}

namespace {

/// "v12.metadata.json" -> 12, else 0.
int64_t path_version(std::string_view name) {
    constexpr std::string_view suffix = ".metadata.json";
    if (!name.starts_with("v") || !name.ends_with(suffix)) return 0;
    auto digits = name.substr(1, name.size() - 1 - suffix.size());
    int64_t v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return r.ec == std::errc() && r.ptr == digits.data() + digits.size() ? v : 0;
}

/// "00012-<uuid>.metadata.json" -> 12, else 0.
int64_t named_version(std::string_view name) {
    if (!name.ends_with(".metadata.json")) return 0;
    auto dash = name.find('-');
    if (dash == 0 || dash == std::string_view::npos) return 0;
    int64_t v = 0;
    auto r = std::from_chars(name.data(), name.data() + dash, v);
    return r.ec == std::errc() && r.ptr == name.data() + dash ? v : 0;
}

std::string base_name(std::string_view uri) { return std::string(uri.substr(uri.rfind('/') + 1)); }

std::unexpected<error> foreign_metadata(const table_ident& t, const std::string& location, std::string what) {
    return fail(errc::already_exists,
                "table {}.{} at {}: {}. Floe will not fork it (two catalogs writing one location overwrite "
                "each other's history). To make this catalog take the table over on purpose, stop every "
                "other writer and run `floe tables adopt {}.{}` with this catalog's --config/--set; to start "
                "a new table instead, move {} away",
                t.ns, t.name, location, what, t.ns, t.name, location);
}

} // namespace

result<location_metadata> scan_location(file_io& io, const std::string& location) {
    location_metadata out;
    auto dir = metadata_dir(location);
    for (auto& uri : FLOE_TRY(io.list(dir))) {
        std::string_view name(uri);
        name.remove_prefix(name.rfind('/') + 1);
        if (uri.size() != dir.size() + name.size()) continue;  // not directly under metadata/
        if (auto v = path_version(name); v > out.newest_path_version) {
            out.newest_path_version = v;
            out.newest_path_uri = uri;
        } else if (auto n = named_version(name); n > out.newest_named_version) {
            out.newest_named_version = n;
            out.newest_named_uri = uri;
        }
    }
    return out;
}

result<void> check_location_owner(catalog& cat, file_io& io, const table_ident& t, const std::string& location,
                                  const std::optional<std::string>& current_in) {
    std::optional<std::string> current = current_in;
    // A REST catalog's server writes the metadata and owns the location's files.
    if (cat.server_side_commit()) return {};
    auto found = FLOE_TRY_CTX(scan_location(io, location), "checking who owns table {}.{}", t.ns, t.name);
    if (found.empty()) return {};
    if (!current)
        return foreign_metadata(t, location,
                                fmt::format("its metadata/ already holds {} (version {}), which this catalog does "
                                            "not know",
                                            base_name(found.newest_uri()), found.newest_version()));
    int64_t version = metadata_version(*current);
    if (cat.commit_by_create()) {
        // The filesystem catalog's current version is the newest v<N>; a pointer-swapping
        // catalog names its files <N>-<uuid> and copies them to v<N>.
        if (found.newest_named_version >= version)
            return foreign_metadata(
                t, location,
                fmt::format("version {} there was written by a catalog that swaps a pointer (sql or rest: {}), "
                            "not by this filesystem catalog",
                            found.newest_named_version, base_name(found.newest_named_uri)));
        return {};
    }
    // Only v<N> counts here: it is published after a swap, while a <N>-<uuid> file without one
    // may be an attempt of this very catalog that did not land. The pointer was read before the
    // listing, and writers of this catalog may have committed and published since: a newer v<N>
    // is foreign only if the catalog, asked again now, has not reached it.
    if (found.newest_path_version > version) {
        auto now = FLOE_TRY(cat.metadata_location(t));
        if (now && metadata_version(*now) >= found.newest_path_version) {
            current = std::move(now);
            version = metadata_version(*current);
        }
    }
    if (found.newest_path_version > version)
        return foreign_metadata(t, location,
                                fmt::format("the catalog points at {} (version {}) but metadata/ holds {}, written "
                                            "by another catalog or writer",
                                            base_name(*current), version, base_name(found.newest_path_uri)));
    // Same version number, other content: another writer made its own v<N>.
    auto copy = fmt::format("{}v{}.metadata.json", metadata_dir(location), version);
    if (found.newest_path_version == version && copy != *current) {
        auto a = FLOE_TRY(io.read(copy));
        auto b = FLOE_TRY(io.read(*current));
        if (as_chars(a) != as_chars(b))
            return foreign_metadata(t, location,
                                    fmt::format("{} differs from the catalog's current {}, so another writer "
                                                "made its own version {}",
                                                base_name(copy), base_name(*current), version));
    }
    return {};
}

result<std::string> adopt_table(catalog& cat, file_io& io, const table_ident& t, const std::string& location) {
    FLOE_TRY(cat.create_namespace_if_missing(t.ns));
    auto current = FLOE_TRY(cat.metadata_location(t));
    if (check_location_owner(cat, io, t, location, current)) {
        if (current) return *current;
        return fail(errc::not_found, "table {}.{}: no metadata under {}", t.ns, t.name, metadata_dir(location));
    }
    // The newest published version (v<N>); a <N>-<uuid> file only when no v<N> exists at all.
    auto found = FLOE_TRY(scan_location(io, location));
    auto newest = found.newest_path_version ? found.newest_path_uri : found.newest_named_uri;
    auto bytes = FLOE_TRY_CTX(io.read(newest), "adopting table {}.{}", t.ns, t.name);
    auto m = FLOE_TRY_CTX(parse_metadata(as_chars(bytes)), "adopting table {}.{}: {}", t.ns, t.name, newest);
    auto strip = [](std::string_view s) { return s.ends_with("/") ? s.substr(0, s.size() - 1) : s; };
    if (strip(m.location) != strip(location))
        return fail(errc::invalid_argument, "adopting table {}.{}: {} says the table lives at {}, not {}", t.ns,
                    t.name, newest, m.location, location);
    if (cat.commit_by_create()) {
        // A new version that continues the newest one, so the newest v<N> is this catalog's own.
        const int64_t version = std::max(found.newest_version(), metadata_version(newest)) + 1;
        m.metadata_log.push_back({m.last_updated_ms, newest});
        m.last_updated_ms = std::max(m.last_updated_ms, system_clock_source::instance().now_ms());
        auto uri = fmt::format("{}v{}.metadata.json", metadata_dir(location), version);
        FLOE_TRY(io.create_new(uri, as_bytes(to_json_text(m))));
        (void)write_path_copies(io, location, version, uri);
        return uri;
    }
    if (current) FLOE_TRY(cat.swap(t, *current, newest));
    else FLOE_TRY(cat.create_table(t, newest));
    return newest;
}

namespace {

result<table_metadata> parse_file(const std::string& loc, std::string_view bytes) {
    return FLOE_TRY_CTX(parse_metadata(bytes), "metadata file {}", loc);
}

// The metadata file at `loc` as the cache may hold it. A catalog that swaps a pointer names
// every version uniquely, so the location alone identifies the content and nothing is read
// until the cache misses; the filesystem catalog reuses v<N> names (a table dropped and created
// again), so there the file is read and its size and checksum must match too.
struct located_file {
    std::optional<byte_buffer> bytes;  ///< read already (filesystem catalog), or not yet
    std::optional<metadata_content> content;
};

result<located_file> locate(catalog& cat, file_io& io, const table_ident& t, const std::string& loc,
                            metadata_cache* cache) {
    located_file f;
    if (!cache || !cat.commit_by_create()) return f;
    f.bytes = FLOE_TRY_CTX(io.read(loc), "table {}.{}", t.ns, t.name);
    f.content = metadata_content::of(as_chars(*f.bytes));
    return f;
}

result<std::unique_ptr<cached_metadata>> parse_entry(file_io& io, const table_ident& t, std::string loc,
                                                     located_file f) {
    if (!f.bytes) f.bytes = FLOE_TRY_CTX(io.read(loc), "table {}.{}", t.ns, t.name);
    auto e = std::make_unique<cached_metadata>();
    e->metadata = FLOE_TRY(parse_file(loc, as_chars(*f.bytes)));
    e->content = f.content ? *f.content : metadata_content::of(as_chars(*f.bytes));
    e->metadata_location = std::move(loc);
    return e;
}

// The version the catalog points at, for the exclusive use of one commit attempt: taken from
// the cache when it holds that location, else read and parsed.
result<std::unique_ptr<cached_metadata>> load_for_commit(catalog& cat, file_io& io, const table_ident& t,
                                                         metadata_cache* cache) {
    auto loc = FLOE_TRY(cat.metadata_location(t));
    if (!loc) return fail(errc::not_found, "table {}.{} does not exist", t.ns, t.name);
    auto f = FLOE_TRY(locate(cat, io, t, *loc, cache));
    if (cache)
        if (auto e = cache->take(*loc, f.content ? &*f.content : nullptr)) return e;
    return parse_entry(io, t, std::move(*loc), std::move(f));
}

} // namespace

result<loaded_table> load_table(catalog& cat, file_io& io, const table_ident& t, metadata_cache* cache) {
    auto loc = FLOE_TRY(cat.metadata_location(t));
    if (!loc) return fail(errc::not_found, "table {}.{} does not exist", t.ns, t.name);
    auto f = FLOE_TRY(locate(cat, io, t, *loc, cache));
    if (cache)
        if (auto m = cache->get(*loc, f.content ? &*f.content : nullptr))
            return loaded_table{std::move(*loc), std::move(*m)};
    auto e = FLOE_TRY(parse_entry(io, t, *loc, std::move(f)));
    if (!cache) return loaded_table{std::move(*loc), std::move(e->metadata)};
    auto m = e->metadata;
    cache->put(std::move(e));
    return loaded_table{std::move(*loc), std::move(m)};
}

result<loaded_table> create_table_if_missing(catalog& cat, file_io& io, const table_ident& t,
                                             const std::string& location,
                                             std::map<std::string, std::string> properties,
                                             const schema& first_schema) {
    FLOE_TRY(cat.create_namespace_if_missing(t.ns));
    auto base = location.ends_with("/") ? location.substr(0, location.size() - 1) : location;
    auto current = FLOE_TRY(cat.metadata_location(t));
    FLOE_TRY(check_location_owner(cat, io, t, base, current));
    if (current) return load_table(cat, io, t);
    auto m = new_floe_table(base, uuid::random().to_string(),
                            system_clock_source::instance().now_ms(), std::move(properties), first_schema);
    auto json = to_json_text(m);
    if (cat.server_side_commit()) {
        // The server writes the first metadata file; a concurrent creator's table wins.
        if (auto r = cat.commit_next(t, "", json); !r && r.error().code() != errc::already_exists)
            return std::unexpected(r.error());
        return load_table(cat, io, t);
    }
    auto loc = metadata_dir(base) + cat.metadata_file_name(1);
    if (auto r = io.create_new(loc, as_bytes(json)); !r) {
        if (r.error().code() == errc::already_exists && cat.commit_by_create()) return load_table(cat, io, t);
        return std::unexpected(r.error());
    }
    if (auto r = cat.create_table(t, loc); !r) {
        (void)io.remove(loc);
        if (r.error().code() == errc::already_exists) return load_table(cat, io, t);
        return std::unexpected(r.error());
    }
    FLOE_TRY(write_path_copies(io, base, 1, loc));
    auto e = std::make_unique<cached_metadata>();
    e->metadata_location = loc;
    e->content = metadata_content::of(json);
    e->metadata = m;
    metadata_cache::global().put(std::move(e));
    return loaded_table{loc, std::move(m)};
}

result<loaded_table> create_table(catalog& cat, file_io& io, const table_ident& t, const table_metadata& m) {
    FLOE_TRY(cat.create_namespace_if_missing(t.ns));
    auto json = to_json_text(m);
    if (cat.server_side_commit()) {
        FLOE_TRY(cat.commit_next(t, "", json));
        return load_table(cat, io, t);
    }
    auto current = FLOE_TRY(cat.metadata_location(t));
    if (current) return fail(errc::already_exists, "table {}.{} already exists", t.ns, t.name);
    FLOE_TRY(check_location_owner(cat, io, t, m.location, current));
    auto loc = metadata_dir(m.location) + cat.metadata_file_name(1);
    if (auto r = io.create_new(loc, as_bytes(json)); !r) {
        if (r.error().code() == errc::already_exists && cat.commit_by_create())
            return fail(errc::already_exists, "table {}.{} already exists", t.ns, t.name);
        return std::unexpected(r.error());
    }
    if (auto r = cat.create_table(t, loc); !r) {
        (void)io.remove(loc);
        return std::unexpected(r.error());
    }
    FLOE_TRY(write_path_copies(io, m.location, 1, loc));
    return loaded_table{loc, m};
}

result<std::vector<manifest_entry>> live_files(file_io& io, const table_metadata& m) {
    std::vector<manifest_entry> out;
    auto* snap = m.current_snapshot();
    if (!snap) return out;
    auto list_bytes = FLOE_TRY(io.read(snap->manifest_list));
    auto manifests = FLOE_TRY(read_manifest_list(list_bytes, snap->manifest_list));
    for (auto& mf : manifests) {
        auto bytes = FLOE_TRY(io.read(mf.manifest_path));
        auto entries = FLOE_TRY(read_manifest(bytes, mf.manifest_path, &mf));
        for (auto& e : entries)
            if (e.status != entry_status::deleted) out.push_back(std::move(e));
    }
    return out;
}

namespace {

struct attempt_files {
    std::vector<std::string> uris;
    void cleanup(file_io& io) {
        for (auto& u : uris) (void)io.remove(u);
        uris.clear();
    }
};

// Merges small data manifests into one (entries become "existing", keeping their snapshot ids
// and sequence numbers), so the list a commit reads and writes stays short.
result<std::vector<manifest_file>> maybe_merge(file_io& io, const table_metadata& base,
                                               std::vector<manifest_file> manifests, int64_t snapshot_id,
                                               int64_t seq, const commit_options& o,
                                               attempt_files& written) {
    std::vector<manifest_file> small, keep;
    for (auto& m : manifests) {
        bool mergeable = m.content == 0 && m.partition_spec_id == base.default_spec_id
                         && m.manifest_length < o.merge_small_bytes;
        (mergeable ? small : keep).push_back(std::move(m));
    }
    if (small.size() < o.merge_min_count) {
        keep.insert(keep.end(), std::make_move_iterator(small.begin()), std::make_move_iterator(small.end()));
        return keep;
    }
    std::vector<manifest_entry> entries;
    for (auto& m : small) {
        auto bytes = FLOE_TRY(io.read(m.manifest_path));
        for (auto& e : FLOE_TRY(read_manifest(bytes, m.manifest_path, &m))) {
            if (e.status == entry_status::deleted) continue;
            e.status = entry_status::existing;
            entries.push_back(std::move(e));
        }
    }
    manifest_context ctx{base.current_schema(), base.default_spec(), snapshot_id, seq, o.codec};
    auto merged = FLOE_TRY(write_manifest(ctx, entries));
    auto uri = fmt::format("{}{}-m1.avro", metadata_dir(base.location), uuid::random().to_string());
    FLOE_TRY(io.write(uri, merged.bytes));
    written.uris.push_back(uri);
    merged.entry.manifest_path = uri;
    keep.push_back(std::move(merged.entry));
    return keep;
}

// Rewrites the manifests that hold a file of `remove`: those entries become "deleted" (by this
// snapshot, keeping their sequence numbers), the others "existing". Manifests without such a
// file are kept as they are. Fails with not_found if a path is not live in the table.
struct removal {
    std::vector<manifest_file> manifests;
    int64_t files = 0, records = 0, bytes = 0;
    std::vector<std::string> partitions;
};

result<removal> remove_files(file_io& io, const table_metadata& base, std::vector<manifest_file> old,
                             const std::vector<std::string>& remove, int64_t snapshot_id, int64_t seq,
                             const commit_options& o, attempt_files& written) {
    removal out;
    std::set<std::string> wanted(remove.begin(), remove.end());
    std::set<std::string> found;
    for (auto& m : old) {
        if (m.content != 0 || m.added_files_count + m.existing_files_count == 0) {
            out.manifests.push_back(std::move(m));
            continue;
        }
        auto entries = FLOE_TRY(read_manifest(FLOE_TRY(io.read(m.manifest_path)), m.manifest_path, &m));
        bool touched = false;
        for (auto& e : entries)
            touched |= e.status != entry_status::deleted && wanted.count(e.file.file_path);
        if (!touched) {
            out.manifests.push_back(std::move(m));
            continue;
        }
        std::vector<manifest_entry> rewritten;
        for (auto& e : entries) {
            if (e.status == entry_status::deleted) continue;  // only meaningful in its own snapshot
            if (wanted.count(e.file.file_path)) {
                found.insert(e.file.file_path);
                e.status = entry_status::deleted;
                e.snapshot_id = snapshot_id;
                ++out.files;
                out.records += e.file.record_count;
                out.bytes += e.file.file_size_in_bytes;
                std::string key;
                for (auto& p : e.file.partition) key += avro::to_debug_string(p) + "/";
                out.partitions.push_back(std::move(key));
            } else {
                e.status = entry_status::existing;
            }
            rewritten.push_back(std::move(e));
        }
        const partition_spec* spec = nullptr;
        for (auto& p : base.partition_specs)
            if (p.spec_id == m.partition_spec_id) spec = &p;
        if (!spec) return fail(errc::corrupt, "manifest {} names unknown spec {}", m.manifest_path, m.partition_spec_id);
        auto w = FLOE_TRY(write_manifest({base.current_schema(), spec, snapshot_id, seq, o.codec}, rewritten));
        auto uri = fmt::format("{}{}-m2.avro", metadata_dir(base.location), uuid::random().to_string());
        FLOE_TRY(io.write(uri, w.bytes));
        written.uris.push_back(uri);
        w.entry.manifest_path = uri;
        out.manifests.push_back(std::move(w.entry));
    }
    for (auto& p : wanted)
        if (!found.count(p)) return fail(errc::not_found, "data file {} is not in the table", p);
    return out;
}

} // namespace

namespace {

int64_t property_long(const table_metadata& m, const char* key, int64_t fallback) {
    auto it = m.properties.find(key);
    if (it == m.properties.end()) return fallback;
    int64_t v = 0;
    auto* end = it->second.data() + it->second.size();
    auto r = std::from_chars(it->second.data(), end, v);
    return r.ec == std::errc() && r.ptr == end ? v : fallback;
}

bool property_bool(const table_metadata& m, const char* key, bool fallback) {
    auto it = m.properties.find(key);
    if (it == m.properties.end()) return fallback;
    std::string v = it->second;
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "true") return true;
    if (v == "false") return false;
    return fallback;
}

// The metadata-log keeps write.metadata.previous-versions-max entries (at least one); returns
// the entries falling off it (their files may be deleted once the new version is committed).
std::vector<metadata_log_entry> trim_metadata_log(table_metadata& next) {
    auto keep_versions = static_cast<size_t>(
        std::max<int64_t>(1, property_long(next, "write.metadata.previous-versions-max", 100)));
    std::vector<metadata_log_entry> dropped;
    if (next.metadata_log.size() > keep_versions) {
        auto cut = next.metadata_log.begin() + static_cast<ptrdiff_t>(next.metadata_log.size() - keep_versions);
        dropped.assign(std::make_move_iterator(next.metadata_log.begin()), std::make_move_iterator(cut));
        next.metadata_log.erase(next.metadata_log.begin(), cut);
    }
    return dropped;
}

// Writes `json` as version `version` (`meta_uri`) and makes it current with the catalog's
// compare-and-swap from `base_location`. Returns success when committed; an error value of code
// conflict or unavailable when the caller should reload and retry (the attempt's files are
// cleaned up then); a failed result<> when the commit must stop (an outcome that stays unknown
// leaves every file in place).
result<result<void>> publish_version(catalog& cat, file_io& io, const table_ident& t, const std::string& base_location,
                                     const std::string& location, int64_t version, std::string& meta_uri,
                                     const std::string& json, attempt_files& written,
                                     const std::function<void(std::string_view)>& step) {
    FLOE_ASSERT(!cat.server_side_commit(), "server-side commits go through publish_change");
    result<void> swapped;
    // A catalog that swaps a pointer copies its file to v<N> after the swap. That name must
    // be free: taken while the catalog still points at the base, it was written by another
    // catalog or writer, and committing would overwrite its history (refused, never retried).
    if (!cat.commit_by_create()) {
        auto versioned = fmt::format("{}v{}.metadata.json", metadata_dir(location), version);
        auto taken = io.exists(versioned);
        if (!taken) {
            written.cleanup(io);
            return std::unexpected(std::move(taken).error());
        }
        if (*taken) {
            auto now_at = cat.metadata_location(t);
            if (!now_at || !*now_at || **now_at == base_location) {
                written.cleanup(io);
                if (!now_at) return std::unexpected(std::move(now_at).error());
                return foreign_metadata(
                    t, location,
                    fmt::format("{} already exists but the catalog still points at {}: another catalog "
                                "or writer committed to this location",
                                base_name(versioned), base_name(base_location)));
            }
            swapped = fail(errc::conflict, "{} moved on to {}", base_location, **now_at);
        }
    }
    if (!swapped) {
        // A writer of this catalog committed version N meanwhile: retried below.
    } else if (auto r = io.create_new(meta_uri, as_bytes(json)); !r) {
        if (!cat.commit_by_create() || r.error().code() != errc::already_exists) {
            written.cleanup(io);
            return std::unexpected(r.error());
        }
        // Another writer created this version first: the filesystem catalog's conflict.
        swapped = fail(errc::conflict, "{} was created by a concurrent commit", meta_uri);
    } else {
        step("metadata");
        if (!cat.commit_by_create()) {
            written.uris.push_back(meta_uri);
            swapped = cat.swap(t, base_location, meta_uri);
        }
    }
    if (swapped) return swapped;
    auto code = swapped.error().code();
    if (code != errc::conflict) {
        // The outcome may be unknown (a connection lost after the UPDATE ran): look before
        // deleting anything, the catalog may already point at our metadata.
        auto now_at = cat.metadata_location(t);
        if (now_at && *now_at == meta_uri) return result<void>{};
        if (!now_at) {
            // Still unknown: leave every file in place (orphans at worst, never a table
            // pointing at a deleted file).
            return std::unexpected(std::move(swapped).error().with_context(
                "commit to {}.{}: outcome unknown", t.ns, t.name));
        }
    }
    written.cleanup(io);
    if (code != errc::conflict && code != errc::unavailable)
        return std::unexpected(std::move(swapped).error().with_context("commit to {}.{}", t.ns, t.name));
    return swapped;
}

// A server-side commit (REST): the catalog sends what changed from `cb` to `next` and the
// server writes the file (meta_uri becomes its location). Same answers as publish_version; the
// value of a success says whether `next` is now exactly the committed version (cacheable).
result<result<bool>> publish_change(catalog& cat, file_io& io, const table_ident& t, const std::string& base_location,
                                    const commit_base& cb, table_metadata& next, snapshot_json_cache& texts,
                                    std::string& meta_uri, attempt_files& written,
                                    const std::function<void(std::string_view)>& step) {
    auto r = cat.commit_change(t, base_location, cb, next, texts);
    if (r) {
        step("metadata");
        meta_uri = std::move(r->metadata_location);
        return result<bool>(r->next_is_committed);
    }
    auto code = r.error().code();
    // Unknown outcome: every file stays, the caller retries from a reload and first looks for
    // this attempt's snapshot.
    if (code == errc::unavailable) return result<bool>(std::unexpected(r.error()));
    written.cleanup(io);  // refused for sure: this attempt's files are referenced nowhere
    if (code == errc::conflict) return result<bool>(std::unexpected(r.error()));
    return std::unexpected(std::move(r).error().with_context("commit to {}.{}", t.ns, t.name));
}

struct published {
    result<void> swapped; ///< as publish_version's and publish_change's answers
    bool cacheable = true; ///< `next` is exactly the committed version
};

// Publishes `next`: as a change the server applies (`cb` set: a REST catalog), else as version
// `version` written to `meta_uri` (its text left in `json`) and swapped in.
result<published> publish(catalog& cat, file_io& io, const table_ident& t, const std::string& base_location,
                          const std::optional<commit_base>& cb, table_metadata& next, snapshot_json_cache& texts,
                          int64_t version, std::string& meta_uri, std::string& json, attempt_files& written,
                          const std::function<void(std::string_view)>& step) {
    published p;
    if (cb) {
        auto r = FLOE_TRY(publish_change(cat, io, t, base_location, *cb, next, texts, meta_uri, written, step));
        if (r) p.cacheable = *r;
        else p.swapped = std::unexpected(std::move(r).error());
    } else {
        to_json_text(next, texts, json);
        p.swapped = FLOE_TRY(
            publish_version(cat, io, t, base_location, next.location, version, meta_uri, json, written, step));
    }
    return p;
}

// After the swap: the commit is done whatever happens here. Path copies for path-based
// readers, and the metadata files that fell off the metadata-log when the table asks for it.
void after_commit(catalog& cat, file_io& io, const table_ident& t, const table_metadata& next, int64_t version,
                  const std::string& meta_uri, const std::vector<metadata_log_entry>& dropped_versions) {
    if (cat.server_side_commit()) return;  // the server's files: its path copies, its clean-up
    // A v<N> taken between the check before the swap and this copy means another writer raced
    // into this location: say so, replace nothing.
    if (auto r = write_path_copies(io, next.location, version, meta_uri); !r)
        spdlog::error("table {}.{}: committed {} but could not publish its path copy v{}.metadata.json: {}", t.ns,
                      t.name, meta_uri, version, r.error().message());
    if (property_bool(next, "write.metadata.delete-after-commit.enabled", false)) {
        auto dir = metadata_dir(next.location);
        for (auto& e : dropped_versions) {
            (void)io.remove(e.metadata_file);
            auto copy = fmt::format("{}v{}.metadata.json", dir, metadata_version(e.metadata_file));
            if (copy != e.metadata_file && copy != meta_uri) (void)io.remove(copy);
        }
    }
}

} // namespace

result<commit_result> append_files(catalog& cat, file_io& io, const table_ident& t,
                                   append_request req, const commit_options& o) {
    return commit_changes(cat, io, t, change_request{"append", std::move(req.files), {}, std::move(req.prepare)}, o);
}

result<commit_result> commit_changes(catalog& cat, file_io& io, const table_ident& t,
                                     change_request req, const commit_options& o) {
    auto step = [&](std::string_view s) {
        if (o.on_step) o.on_step(s);
    };
    // One manifest per partition spec of the added files (a manifest has one spec), written
    // once and reused by every attempt.
    std::vector<std::pair<written_manifest, std::string>> manifests;
    auto drop_manifests = [&] {
        for (auto& m : manifests) (void)io.remove(m.second);
        manifests.clear();
    };
    int64_t snapshot_id = 0;
    bool unknown_outcome = false;  ///< an attempt's answer was lost (server-side catalogs)
    for (int attempt = 1;; ++attempt) {
        // This attempt owns `base`: it becomes the next version in place (no copy of the
        // history) and goes back to the cache only under the location whose swap succeeded.
        auto base = FLOE_TRY(load_for_commit(cat, io, t, o.cache));
        auto& bm = base->metadata;
        const std::string base_location = base->metadata_location;
        auto* schema = bm.current_schema();
        auto* spec = bm.default_spec();
        if (!schema || !spec) return fail(errc::corrupt, "table {}.{} has no current schema or spec", t.ns, t.name);
        if (unknown_outcome && bm.find_snapshot(snapshot_id)) {
            // An earlier attempt whose answer was lost (a REST catalog's 5xx or timeout) landed
            // after all: that is this commit.
            auto* landed = bm.find_snapshot(snapshot_id);
            return commit_result{snapshot_id, landed->sequence_number, base_location, attempt};
        }
        if (!snapshot_id || bm.find_snapshot(snapshot_id)) {
            // The manifest names its snapshot, so a new id (a collision, practically never)
            // means a new manifest.
            snapshot_id = new_snapshot_id(bm);
            drop_manifests();
        }
        int64_t seq = bm.last_sequence_number + 1;

        // The manifest of the new files does not depend on the base (added entries inherit
        // their sequence number), so it is written once and reused by every attempt.
        if (manifests.empty() && !req.add.empty()) {
            std::vector<int32_t> spec_ids;
            for (auto& f : req.add)
                if (std::find(spec_ids.begin(), spec_ids.end(), f.spec_id) == spec_ids.end()) spec_ids.push_back(f.spec_id);
            for (auto id : spec_ids) {
                const partition_spec* file_spec = nullptr;
                for (auto& p : bm.partition_specs)
                    if (p.spec_id == id) file_spec = &p;
                if (!file_spec) {
                    drop_manifests();
                    return fail(errc::invalid_argument, "table {}.{} has no partition spec {} (of an added file)", t.ns,
                                t.name, id);
                }
                std::vector<manifest_entry> entries;
                for (auto& f : req.add)
                    if (f.spec_id == id) entries.push_back(manifest_entry{entry_status::added, {}, {}, {}, f});
                auto w = write_manifest({schema, file_spec, snapshot_id, seq, o.codec}, entries);
                if (!w) {
                    drop_manifests();
                    return std::unexpected(w.error());
                }
                auto uri = fmt::format("{}{}-m0.avro", metadata_dir(bm.location), uuid::random().to_string());
                if (auto r = io.write(uri, w->bytes); !r) {
                    drop_manifests();
                    return std::unexpected(r.error());
                }
                manifests.emplace_back(std::move(*w), std::move(uri));
            }
            step("manifest");
        }
        attempt_files written;

        auto* parent = bm.current_snapshot();
        const std::optional<int64_t> parent_id =
            parent ? std::optional<int64_t>(parent->snapshot_id) : std::nullopt;
        std::vector<manifest_file> old;
        if (parent) {
            if (!base->manifest_list_uri.empty() && base->manifest_list_uri == parent->manifest_list) {
                old = std::move(base->manifest_list);  // decoded when this process wrote it
            } else {
                auto bytes = FLOE_TRY_CTX(io.read(parent->manifest_list), "snapshot {}", parent->snapshot_id);
                old = FLOE_TRY(read_manifest_list(bytes, parent->manifest_list));
            }
        }
        base->manifest_list_uri.clear();
        base->manifest_list.clear();
        removal removed;
        if (!req.remove.empty()) {
            auto r = remove_files(io, bm, std::move(old), req.remove, snapshot_id, seq, o, written);
            if (!r) {
                written.cleanup(io);
                return std::unexpected(r.error());
            }
            removed = std::move(*r);
            old = std::move(removed.manifests);
        }
        auto kept = maybe_merge(io, bm, std::move(old), snapshot_id, seq, o, written);
        if (!kept) {
            written.cleanup(io);
            return std::unexpected(kept.error());
        }
        std::vector<manifest_file> list;
        list.reserve(kept->size() + manifests.size());
        for (auto& [manifest, manifest_uri] : manifests) {
            auto entry = manifest.entry;
            entry.manifest_path = manifest_uri;
            entry.added_snapshot_id = snapshot_id;
            entry.sequence_number = seq;
            entry.min_sequence_number = seq;
            list.push_back(std::move(entry));
        }
        list.insert(list.end(), std::make_move_iterator(kept->begin()), std::make_move_iterator(kept->end()));

        // Summary: this snapshot's additions and the running totals.
        std::map<std::string, std::string> summary;
        int64_t added_records = 0, added_size = 0;
        std::vector<std::string> partitions = removed.partitions;
        for (auto& f : req.add) {
            added_records += f.record_count;
            added_size += f.file_size_in_bytes;
            std::string key;
            for (auto& p : f.partition) key += avro::to_debug_string(p) + "/";
            partitions.push_back(std::move(key));
        }
        std::sort(partitions.begin(), partitions.end());
        partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
        summary["operation"] = req.operation;
        if (!req.add.empty()) {
            summary["added-data-files"] = std::to_string(req.add.size());
            summary["added-records"] = std::to_string(added_records);
            summary["added-files-size"] = std::to_string(added_size);
        }
        if (removed.files) {
            summary["deleted-data-files"] = std::to_string(removed.files);
            summary["deleted-records"] = std::to_string(removed.records);
            summary["removed-files-size"] = std::to_string(removed.bytes);
        }
        summary["changed-partition-count"] = std::to_string(partitions.size());
        summary["total-records"] =
            std::to_string(summary_long(parent, "total-records") + added_records - removed.records);
        summary["total-files-size"] =
            std::to_string(summary_long(parent, "total-files-size") + added_size - removed.bytes);
        summary["total-data-files"] = std::to_string(summary_long(parent, "total-data-files")
                                                     + static_cast<int64_t>(req.add.size()) - removed.files);
        summary["total-delete-files"] = std::to_string(summary_long(parent, "total-delete-files"));
        summary["total-position-deletes"] = std::to_string(summary_long(parent, "total-position-deletes"));
        summary["total-equality-deletes"] = std::to_string(summary_long(parent, "total-equality-deletes"));
        if (req.prepare) {
            if (auto r = req.prepare(bm, summary); !r) {
                written.cleanup(io);
                // After an unknown outcome the manifest may still be referenced by a snapshot
                // that lands late: it is left for orphan cleanup then.
                if (!unknown_outcome) drop_manifests();
                if (o.cache) o.cache->put(std::move(base));  // unchanged: still that version
                return std::unexpected(r.error());
            }
        }

        auto list_uri = fmt::format("{}snap-{}-{}-{}.avro", metadata_dir(bm.location), snapshot_id, attempt,
                                    uuid::random().to_string());
        auto list_bytes = write_manifest_list(snapshot_id, parent_id, seq, list, o.codec);
        if (!list_bytes) {
            written.cleanup(io);
            return std::unexpected(list_bytes.error());
        }
        if (auto r = io.write(list_uri, *list_bytes); !r) {
            written.cleanup(io);
            return std::unexpected(r.error());
        }
        written.uris.push_back(list_uri);
        step("manifest-list");

        // A server-side commit sends the difference from the base: what it compares is kept
        // before the next version is built over it.
        std::optional<commit_base> cb;
        if (cat.server_side_commit()) cb = commit_base::of(bm);
        // The next version, built in place (`parent` dangles from here on).
        parent = nullptr;
        const int64_t base_updated_ms = bm.last_updated_ms;
        int64_t now = std::max(o.clock->now_ms(), base_updated_ms);
        auto& next = bm;
        snapshot s;
        s.snapshot_id = snapshot_id;
        s.parent_snapshot_id = parent_id;
        s.sequence_number = seq;
        s.timestamp_ms = now;
        s.manifest_list = list_uri;
        s.summary = std::move(summary);
        s.schema_id = schema->schema_id;
        next.snapshots.push_back(std::move(s));
        next.current_snapshot_id = snapshot_id;
        next.refs["main"] = snapshot_ref{snapshot_id, "branch", {}, {}, {}};
        next.snapshot_log.push_back({now, snapshot_id});
        next.metadata_log.push_back({base_updated_ms, base_location});
        auto dropped_versions = trim_metadata_log(next);
        next.last_sequence_number = seq;
        next.last_updated_ms = now;
        // One buffer per committing thread, reused: a long history makes this file large.
        thread_local std::string json;
        int64_t version = metadata_version(base_location) + 1;
        auto meta_uri = metadata_dir(next.location) + cat.metadata_file_name(version);
        auto [swapped, cacheable] = FLOE_TRY(publish(cat, io, t, base_location, cb, next, base->snapshot_json,
                                                     version, meta_uri, json, written, step));
        if (swapped) {
            step("swap");
            after_commit(cat, io, t, next, version, meta_uri, dropped_versions);
            base->metadata_location = meta_uri;
            base->content = cb ? metadata_content{} : metadata_content::of(json);
            base->manifest_list_uri = list_uri;
            base->manifest_list = std::move(list);
            // A server-side commit is cached only when the catalog confirmed that `next` is
            // exactly what the server wrote (else the next load reads the server's file).
            if (o.cache && cacheable) o.cache->put(std::move(base));
            return commit_result{snapshot_id, seq, meta_uri, attempt};
        }
        // unavailable from a server-side commit: the answer was lost and the snapshot was not
        // (yet) in the table; its files stay, and the next attempt looks for it first.
        if (cat.server_side_commit() && swapped.error().code() == errc::unavailable) unknown_outcome = true;
        if (attempt >= o.max_attempts)
            return std::unexpected(std::move(swapped).error().with_context(
                "commit to {}.{} after {} attempts", t.ns, t.name, attempt));
        backoff(o, attempt);
    }
}

result<std::optional<metadata_commit_result>> commit_metadata(catalog& cat, file_io& io, const table_ident& t,
                                                              const metadata_update& update,
                                                              const commit_options& o) {
    auto step = [&](std::string_view s) {
        if (o.on_step) o.on_step(s);
    };
    for (int attempt = 1;; ++attempt) {
        auto base = FLOE_TRY(load_for_commit(cat, io, t, o.cache));
        const std::string base_location = base->metadata_location;
        auto& next = base->metadata;
        const int64_t base_updated_ms = next.last_updated_ms;
        std::optional<commit_base> cb;
        if (cat.server_side_commit()) cb = commit_base::of(next);
        auto changed = update(next);
        if (!changed || !*changed) {
            // Unchanged or abandoned: `base` was edited in place, so it does not go back to the cache.
            if (!changed) return std::unexpected(std::move(changed).error());
            return std::nullopt;
        }
        const int64_t now = std::max(o.clock->now_ms(), base_updated_ms);
        next.metadata_log.push_back({base_updated_ms, base_location});
        auto dropped_versions = trim_metadata_log(next);
        next.last_updated_ms = now;
        // Snapshots removed by the update drop out of the serialised-snapshot cache, so the
        // ones kept still line up with their positions (and are not encoded again).
        {
            std::set<int64_t> kept;
            for (auto& sn : next.snapshots) kept.insert(sn.snapshot_id);
            std::erase_if(base->snapshot_json.texts, [&](auto& e) { return !kept.count(e.first); });
        }
        // The current snapshot's manifest list, if cached, is still the one it names.
        thread_local std::string json;
        json.clear();
        const int64_t version = metadata_version(base_location) + 1;
        auto meta_uri = metadata_dir(next.location) + cat.metadata_file_name(version);
        attempt_files written;
        auto [swapped, cacheable] = FLOE_TRY(publish(cat, io, t, base_location, cb, next, base->snapshot_json,
                                                     version, meta_uri, json, written, step));
        if (swapped) {
            step("swap");
            after_commit(cat, io, t, next, version, meta_uri, dropped_versions);
            base->metadata_location = meta_uri;
            base->content = cb ? metadata_content{} : metadata_content::of(json);
            if (o.cache && cacheable) o.cache->put(std::move(base));
            return metadata_commit_result{meta_uri, attempt, json};
        }
        if (attempt >= o.max_attempts)
            return std::unexpected(std::move(swapped).error().with_context(
                "metadata commit to {}.{} after {} attempts", t.ns, t.name, attempt));
        backoff(o, attempt);
    }
}

} // namespace floe::iceberg
