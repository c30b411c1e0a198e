#pragma once

#include "base/clock.h"
#include "format/avro/codec.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"
#include "iceberg/metadata_cache.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

struct loaded_table {
    std::string metadata_location;
    table_metadata metadata;
};

/// Reads the metadata file the catalog points at. errc::not_found if there is no such table.
/// The catalog is always asked; the file is read and parsed only if `cache` (nullptr: none)
/// does not hold that location, and the parsed metadata is then stored there.
result<loaded_table> load_table(catalog& cat, file_io& io, const table_ident& t,
                                metadata_cache* cache = &metadata_cache::global());

/// Loads the table, creating namespace and table (Floe's schema, spec and sort order) first if
/// they do not exist. `location` is the table's base URI (e.g. file:///wh/floe/orders).
/// Safe against a concurrent creator: the loser loads the winner's table. A location that holds
/// metadata this catalog does not know is refused (check_location_owner), never forked.
result<loaded_table> create_table_if_missing(catalog& cat, file_io& io, const table_ident& t,
                                             const std::string& location,
                                             std::map<std::string, std::string> properties = {},
                                             const schema& first_schema = floe_table_schema());

/// Registers a new table whose first metadata is `m` (any schema, spec and sort order; a REST
/// client's createTable). errc::already_exists if the catalog has it; a location holding
/// metadata this catalog does not know is refused as in create_table_if_missing.
result<loaded_table> create_table(catalog& cat, file_io& io, const table_ident& t, const table_metadata& m);

/// The metadata files found under <location>/metadata/.
struct location_metadata {
    int64_t newest_path_version = 0;   ///< highest v<N>.metadata.json (0: none)
    int64_t newest_named_version = 0;  ///< highest <NNNNN>-<uuid>.metadata.json (0: none)
    std::string newest_path_uri;
    std::string newest_named_uri;

    bool empty() const { return newest_path_version == 0 && newest_named_version == 0; }
    int64_t newest_version() const { return std::max(newest_path_version, newest_named_version); }
    /// The newest metadata file of either kind; v<N> when both kinds have version N.
    const std::string& newest_uri() const {
        return newest_path_version >= newest_named_version ? newest_path_uri : newest_named_uri;
    }
};
result<location_metadata> scan_location(file_io& io, const std::string& location);

/// A warehouse location belongs to one catalog. Succeeds when every metadata file under
/// <location>/metadata/ is one this catalog knows: `current` (the catalog's pointer, nullopt
/// for a table it does not have) is the newest version there and, for the filesystem catalog,
/// no catalog that swaps a pointer (sql, rest) wrote that version or a newer one. Otherwise
/// errc::already_exists with what was found and how to adopt the table on purpose.
result<void> check_location_owner(catalog& cat, file_io& io, const table_ident& t, const std::string& location,
                                  const std::optional<std::string>& current);

/// Makes `cat` the owner of the table at `location` on purpose: its newest metadata file
/// becomes the catalog's current version (registered or swapped in; for the filesystem catalog,
/// a new version v<N+1> that continues it). Returns the metadata location now current. Does
/// nothing when the catalog already owns the location. errc::not_found if there is no metadata.
result<std::string> adopt_table(catalog& cat, file_io& io, const table_ident& t, const std::string& location);

struct commit_options {
    int max_attempts = 200;
    std::chrono::milliseconds min_backoff{2};
    std::chrono::milliseconds max_backoff{200};
    avro::codec codec = avro::codec::deflate;
    /// Manifest merging keeps the manifest list short, so commit cost stays flat as snapshots
    /// accumulate: once a list holds this many small manifests they are merged into one.
    size_t merge_min_count = 100;
    int64_t merge_small_bytes = 8 << 20;
    clock_source* clock = &system_clock_source::instance();
    /// Parsed metadata of the last version this process read or wrote (nullptr: read and parse
    /// the current metadata file at every attempt). The catalog is asked at every attempt.
    metadata_cache* cache = &metadata_cache::global();
    /// Test hook called at each commit step ("manifest", "manifest-list", "metadata", "swap").
    std::function<void(std::string_view step)> on_step;
};

/// What an append adds. `prepare` runs at each attempt with the table as it is then and may add
/// summary entries (e.g. the committed positions per stream, carried forward from the base
/// snapshot's summary); an error from it aborts the commit (e.g. "already committed").
struct append_request {
    std::vector<data_file> files;
    std::function<result<void>(const table_metadata& base, std::map<std::string, std::string>& summary)> prepare;
};

struct commit_result {
    int64_t snapshot_id = 0;
    int64_t sequence_number = 0;
    std::string metadata_location;
    int attempts = 0;
};

/// Appends data files in one new snapshot (operation "append") with optimistic concurrency:
/// write a manifest (once), then per attempt a manifest list (old manifests + the new one, or a
/// merged one) and a new metadata file, and swap it in the catalog; on conflict reload,
/// re-apply and retry with jittered backoff. After the swap, metadata/v<N>.metadata.json and
/// version-hint.text are refreshed for path-based readers.
///
/// Table properties honoured: write.metadata.previous-versions-max (default 100: the
/// metadata-log keeps that many previous metadata files) and
/// write.metadata.delete-after-commit.enabled (default false: when true, the metadata files
/// that fall off the metadata-log are deleted after the commit, with their v<N> copies).
result<commit_result> append_files(catalog& cat, file_io& io, const table_ident& t,
                                   append_request req, const commit_options& opts = {});

/// A general snapshot: files added and files (by path) removed, under one operation name:
/// "append" (add only), "delete" (remove only: retention), "replace" (both, same rows:
/// compaction), "overwrite". Files to remove must be live, else errc::not_found.
struct change_request {
    std::string operation = "append";
    std::vector<data_file> add;
    std::vector<std::string> remove;
    std::function<result<void>(const table_metadata& base, std::map<std::string, std::string>& summary)> prepare;
};

/// Commits a change request with the same protocol as append_files (which is a change request
/// with operation "append"). Manifests holding removed files are rewritten per attempt.
result<commit_result> commit_changes(catalog& cat, file_io& io, const table_ident& t,
                                     change_request req, const commit_options& opts = {});

/// A change to the table's metadata that adds no snapshot (snapshot expiry, refs, properties).
/// Runs at each attempt on the version the catalog points at, edits it in place and returns
/// true, or false when there is nothing to change.
using metadata_update = std::function<result<bool>(table_metadata& m)>;

struct metadata_commit_result {
    std::string metadata_location;
    int attempts = 0;
    /// The text of the metadata file written (empty for server-side commits: the server wrote
    /// it). Floe's REST server answers a commit with it instead of serialising the version again.
    std::string metadata_json;
};

/// Commits a metadata update with the same protocol as commit_changes (a new metadata file,
/// the metadata-log and its trimming, the catalog's compare-and-swap with reload and retry on
/// conflict, v<N> and version-hint.text after the swap). nullopt when `update` changed nothing.
result<std::optional<metadata_commit_result>> commit_metadata(catalog& cat, file_io& io, const table_ident& t,
                                                              const metadata_update& update,
                                                              const commit_options& opts = {});

/// Every live data file of the current snapshot (manifest list → manifests, sequence numbers
/// inherited).
result<std::vector<manifest_entry>> live_files(file_io& io, const table_metadata& m);

/// The metadata version number in a metadata file name ("v12.metadata.json",
/// "00012-<uuid>.metadata.json"), or 0.
int64_t metadata_version(std::string_view location);

} // namespace floe::iceberg
