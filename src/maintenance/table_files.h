#pragma once

#include "iceberg/file_io.h"
#include "iceberg/metadata.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace floe::maintenance {

/// The files a set of snapshots reaches: their manifest lists, the manifests in those lists and
/// the data files live (added or existing) in those manifests. A "deleted" entry is no
/// reference: the snapshot that carries it no longer has the file.
struct reached_files {
    std::set<std::string> manifest_lists;
    std::map<std::string, int64_t> manifests;   ///< path -> length
    std::map<std::string, int64_t> data_files;  ///< path -> size in bytes
};

/// Walks `snapshots` (manifest list -> manifests -> entries), reading each manifest once. With
/// `skip_missing`, a manifest list or manifest that is gone is skipped (what an interrupted
/// deletion left of expired snapshots), else it is an error.
result<reached_files> reach(iceberg::file_io& io, const std::vector<iceberg::snapshot>& snapshots,
                            bool skip_missing = false);

/// Every file the table's metadata at `metadata_location` references: what its snapshots reach,
/// the current metadata file and those in its metadata-log, the v<N>.metadata.json copies of
/// those versions, and metadata/version-hint.text.
struct referenced_files {
    reached_files reached;
    std::set<std::string> metadata_files;
    bool contains(const std::string& uri) const {
        return metadata_files.count(uri) || reached.manifest_lists.count(uri) || reached.manifests.count(uri)
               || reached.data_files.count(uri);
    }
};
result<referenced_files> referenced_by(iceberg::file_io& io, const iceberg::table_metadata& m,
                                       const std::string& metadata_location);

/// "<location>/metadata/" (location without a trailing slash or with one).
std::string metadata_dir(const std::string& location);
/// "<location>/" : the prefix every file of the table starts with.
std::string location_prefix(const std::string& location);

} // namespace floe::maintenance
