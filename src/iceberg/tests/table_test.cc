#include "iceberg/bounds.h"
#include "iceberg/table.h"
#include "iceberg/tests/test_dir.h"

#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace floe;
using namespace floe::iceberg;
using avro::datum;

namespace {

const table_ident ident{"floe", "orders"};

data_file make_file(const std::string& location, const std::string& stream, int64_t first, int64_t n) {
    data_file f;
    f.file_path = fmt::format("{}/data/stream_key={}/segment-{}-{}.parquet", location, stream, first,
                              uuid::random().to_string());
    f.partition = {datum::string(stream)};
    f.record_count = n;
    f.file_size_in_bytes = 100 * n;
    f.value_counts = {{field_ids::offset, n}};
    f.lower_bounds = {{field_ids::offset, serialize_long(first)}};
    f.upper_bounds = {{field_ids::offset, serialize_long(first + n - 1)}};
    f.split_offsets = std::vector<int64_t>{4};
    return f;
}

struct fixture {
    explicit fixture(std::string kind) : kind(std::move(kind)) {}
    std::string kind;  ///< "sql" or "filesystem"
    test_util::temp_dir dir;
    std::string db = dir.str() + "/catalog.db";
    std::string location = file_uri(dir.str() + "/warehouse/floe/orders");
    local_file_io io;

    std::unique_ptr<catalog> open() {
        auto c = open_catalog(kind, "sqlite://" + db, "floe", std::make_shared<local_file_io>(),
                              file_uri(dir.str() + "/warehouse"));
        EXPECT_TRUE(c) << c.error();
        return std::move(*c);
    }
};

class iceberg_table : public ::testing::TestWithParam<std::string> {};

// Exactly-once bookkeeping as the lake writer does it: the summary carries the committed end
// offset per stream; a batch at or below it is refused.
append_request batch(const std::string& location, const std::string& stream, int64_t first, int64_t n) {
    append_request r;
    r.files = {make_file(location, stream, first, n)};
    r.prepare = [stream, first, n](const table_metadata& base, std::map<std::string, std::string>& summary) -> result<void> {
        auto key = "floe.committed." + stream;
        int64_t committed = -1;
        if (auto* s = base.current_snapshot()) {
            for (auto& [k, v] : s->summary)
                if (k.starts_with("floe.committed.")) summary[k] = v;  // carry every stream forward
            if (auto it = s->summary.find(key); it != s->summary.end()) committed = std::stoll(it->second);
        }
        if (first + n - 1 <= committed)
            return fail(errc::already_exists, "offsets {}..{} of {} already committed", first, first + n - 1, stream);
        summary[key] = std::to_string(first + n - 1);
        return {};
    };
    return r;
}

// Checks the invariants any reader relies on and returns the live files.
std::vector<manifest_entry> check_table(fixture& f, catalog& cat, size_t want_snapshots) {
    auto t = load_table(cat, f.io, ident);
    EXPECT_TRUE(t) << t.error();
    auto& m = t->metadata;
    EXPECT_EQ(m.snapshots.size(), want_snapshots);
    // Walk the parent chain from the current snapshot: sequence numbers strictly decrease.
    std::set<int64_t> seen;
    auto* s = m.current_snapshot();
    int64_t last_seq = INT64_MAX;
    while (s) {
        EXPECT_LT(s->sequence_number, last_seq);
        last_seq = s->sequence_number;
        seen.insert(s->snapshot_id);
        s = s->parent_snapshot_id ? m.find_snapshot(*s->parent_snapshot_id) : nullptr;
    }
    EXPECT_EQ(seen.size(), want_snapshots) << "every snapshot is on the main branch";
    if (want_snapshots) {
        EXPECT_EQ(m.last_sequence_number, static_cast<int64_t>(want_snapshots));
        EXPECT_EQ(m.current_snapshot()->sequence_number, m.last_sequence_number);
    }
    auto live = live_files(f.io, m);
    EXPECT_TRUE(live) << live.error();
    std::set<std::string> paths;
    int64_t records = 0;
    for (auto& e : *live) {
        paths.insert(e.file.file_path);
        records += e.file.record_count;
        EXPECT_TRUE(e.sequence_number.has_value());
        auto* added_by = m.find_snapshot(*e.snapshot_id);
        EXPECT_NE(added_by, nullptr);
        if (added_by) {
            EXPECT_EQ(*e.sequence_number, added_by->sequence_number);
        }
    }
    EXPECT_EQ(paths.size(), live->size()) << "no data file twice";
    if (auto* cur = m.current_snapshot()) {
        EXPECT_EQ(std::to_string(records), cur->summary.at("total-records"));
        EXPECT_EQ(std::to_string(live->size()), cur->summary.at("total-data-files"));
    }
    return *live;
}

} // namespace

TEST_P(iceberg_table, create_append_and_path_layout) {
    fixture f(GetParam());
    auto cat = f.open();
    auto t = create_table_if_missing(*cat, f.io, ident, f.location);
    ASSERT_TRUE(t) << t.error();
    auto t2 = create_table_if_missing(*cat, f.io, ident, f.location);
    ASSERT_TRUE(t2);
    EXPECT_EQ(t2->metadata_location, t->metadata_location);
    for (int i = 0; i < 3; ++i) {
        auto r = append_files(*cat, f.io, ident, batch(f.location, "orders-0", i * 10, 10));
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r->sequence_number, i + 1);
        EXPECT_EQ(r->attempts, 1);
    }
    auto live = check_table(f, *cat, 3);
    EXPECT_EQ(live.size(), 3u);
    auto loaded = load_table(*cat, f.io, ident);
    auto& m = loaded->metadata;
    EXPECT_EQ(m.metadata_log.size(), 3u);
    EXPECT_EQ(m.current_snapshot()->summary.at("floe.committed.orders-0"), "29");
    EXPECT_EQ(m.current_snapshot()->operation(), "append");
    EXPECT_EQ(metadata_version(loaded->metadata_location), 4);
    // Path readers: version-hint.text holds exactly "4" and v4 is the current metadata.
    auto hint = f.io.read(f.location + "/metadata/version-hint.text");
    ASSERT_TRUE(hint);
    EXPECT_EQ(as_chars(*hint), "4");
    auto v4 = f.io.read(f.location + "/metadata/v4.metadata.json");
    auto cur = f.io.read(loaded->metadata_location);
    ASSERT_TRUE(v4 && cur);
    EXPECT_EQ(*v4, *cur);
    // A batch already committed is refused by the prepare hook, nothing is added.
    auto again = append_files(*cat, f.io, ident, batch(f.location, "orders-0", 20, 10));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists);
    check_table(f, *cat, 3);
}

TEST_P(iceberg_table, manifests_merge_so_the_list_stays_short) {
    fixture f(GetParam());
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    commit_options o;
    o.merge_min_count = 5;
    for (int i = 0; i < 23; ++i)
        ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, i % 2 ? "a-0" : "b-0", i * 10, 10), o));
    auto live = check_table(f, *cat, 23);
    EXPECT_EQ(live.size(), 23u);
    auto m = load_table(*cat, f.io, ident)->metadata;
    auto list = read_manifest_list(*f.io.read(m.current_snapshot()->manifest_list), "list");
    ASSERT_TRUE(list);
    EXPECT_LE(list->size(), 5u);
}

TEST_P(iceberg_table, concurrent_writers_threads_lose_nothing) {
    fixture f(GetParam());
    {
        auto cat = f.open();
        ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    }
    constexpr int per_writer = 100;  // issue #4: two writers x 100 commits
    std::atomic<int> failures{0}, retries{0};
    auto writer = [&](std::string stream) {
        auto cat = f.open();  // own connection, as another broker would have
        for (int i = 0; i < per_writer; ++i) {
            auto r = append_files(*cat, f.io, ident, batch(f.location, stream, i * 5, 5));
            if (!r) {
                ++failures;
                ADD_FAILURE() << r.error();
            } else {
                retries += r->attempts - 1;
            }
        }
    };
    std::thread a(writer, "s-0"), b(writer, "s-1");
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0);
    auto cat = f.open();
    auto live = check_table(f, *cat, 2 * per_writer);
    EXPECT_EQ(live.size(), 2u * per_writer);
    int64_t rows = 0;
    for (auto& e : live) rows += e.file.record_count;
    EXPECT_EQ(rows, 2 * per_writer * 5);
    auto m = load_table(*cat, f.io, ident, nullptr)->metadata;  // as written, not as cached
    // write.metadata.previous-versions-max defaults to 100.
    EXPECT_EQ(m.metadata_log.size(), 100u);
    // Both streams' positions were carried forward through each other's commits.
    EXPECT_EQ(m.current_snapshot()->summary.at("floe.committed.s-0"), std::to_string(per_writer * 5 - 1));
    EXPECT_EQ(m.current_snapshot()->summary.at("floe.committed.s-1"), std::to_string(per_writer * 5 - 1));
    RecordProperty("retries", retries.load());
}

TEST_P(iceberg_table, concurrent_writers_processes_lose_nothing) {
    fixture f(GetParam());
    {
        auto cat = f.open();
        ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    }
    constexpr int per_writer = 100;  // issue #4: two writers x 100 commits
    std::vector<pid_t> kids;
    for (int w = 0; w < 2; ++w) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto c = open_catalog(f.kind, "sqlite://" + f.db, "floe", std::make_shared<local_file_io>(),
                                  file_uri(f.dir.str() + "/warehouse"));
            if (!c) _exit(2);
            for (int i = 0; i < per_writer; ++i)
                if (!append_files(**c, f.io, ident, batch(f.location, "p-" + std::to_string(w), i * 3, 3))) _exit(1);
            _exit(0);
        }
        kids.push_back(pid);
    }
    for (auto pid : kids) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    auto cat = f.open();
    auto live = check_table(f, *cat, 2 * per_writer);
    EXPECT_EQ(live.size(), 2u * per_writer);
    int64_t rows = 0;
    for (auto& e : live) rows += e.file.record_count;
    EXPECT_EQ(rows, 2 * per_writer * 3);
    auto m = load_table(*cat, f.io, ident, nullptr)->metadata;
    for (int w = 0; w < 2; ++w)
        EXPECT_EQ(m.current_snapshot()->summary.at(fmt::format("floe.committed.p-{}", w)),
                  std::to_string(per_writer * 3 - 1));
}

// The metadata-log keeps write.metadata.previous-versions-max entries; with
// write.metadata.delete-after-commit.enabled the files that fall off it are deleted (with their
// v<N> copies), and the table still loads in a process that has nothing cached, also without
// version-hint.text.
TEST_P(iceberg_table, metadata_log_is_bounded_and_old_versions_deleted) {
    fixture f(GetParam());
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location,
                                        {{"write.metadata.previous-versions-max", "3"},
                                         {"write.metadata.delete-after-commit.enabled", "true"}}));
    for (int i = 0; i < 8; ++i)
        ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "d-0", i * 10, 10)));
    metadata_cache::global().clear();
    auto t = load_table(*cat, f.io, ident);
    ASSERT_TRUE(t) << t.error();
    EXPECT_EQ(metadata_version(t->metadata_location), 9);
    ASSERT_EQ(t->metadata.metadata_log.size(), 3u);
    std::set<std::string> want{t->metadata_location};
    for (size_t i = 0; i < 3; ++i) {
        auto& file = t->metadata.metadata_log[i].metadata_file;
        EXPECT_EQ(metadata_version(file), 6 + static_cast<int64_t>(i));
        EXPECT_TRUE(*f.io.exists(file)) << file;
        want.insert(file);
    }
    for (int64_t v = 6; v <= 9; ++v) want.insert(fmt::format("{}/metadata/v{}.metadata.json", f.location, v));
    std::set<std::string> found;
    auto listed = f.io.list(f.location + "/metadata/");
    ASSERT_TRUE(listed);
    for (auto& uri : *listed)
        if (uri.ends_with(".metadata.json")) found.insert(uri);
    EXPECT_EQ(found, want);
    check_table(f, *cat, 8);
    // Without the hint the filesystem catalog lists the directory (v1..v5 are gone).
    ASSERT_TRUE(f.io.remove(f.location + "/metadata/version-hint.text"));
    metadata_cache::global().clear();
    auto fresh = f.open();
    auto again = load_table(*fresh, f.io, ident);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->metadata_location, t->metadata_location);
    ASSERT_TRUE(append_files(*fresh, f.io, ident, batch(f.location, "d-0", 80, 10)));
    check_table(f, *fresh, 9);
}

// Without the property nothing is deleted and the log keeps every version up to the default.
TEST_P(iceberg_table, old_metadata_kept_by_default) {
    fixture f(GetParam());
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location, {{"write.metadata.previous-versions-max", "2"}}));
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "k-0", i * 10, 10)));
    auto t = load_table(*cat, f.io, ident, nullptr);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->metadata.metadata_log.size(), 2u);
    size_t files = 0;
    auto listed = f.io.list(f.location + "/metadata/");
    ASSERT_TRUE(listed);
    for (auto& uri : *listed) files += uri.ends_with(".metadata.json");
    EXPECT_EQ(files, f.kind == "sql" ? 10u : 5u);  // versions 1..5 (and their v<N> copies)
}

// The cache never outranks the catalog: a writer with a stale cached version (another process
// committed since) reloads, and a commit through a catalog that moved on is not lost.
TEST_P(iceberg_table, cached_metadata_follows_the_catalog) {
    fixture f(GetParam());
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    metadata_cache mine;  // this "process"
    metadata_cache other;  // another writer's
    commit_options a, b;
    a.cache = &mine;
    b.cache = &other;
    for (int i = 0; i < 6; ++i) {
        auto& o = i % 2 ? a : b;
        auto r = append_files(*cat, f.io, ident, batch(f.location, "c-0", i * 10, 10), o);
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r->sequence_number, i + 1);
        EXPECT_EQ(r->attempts, 1) << "the catalog, not the cache, says which version is current";
    }
    EXPECT_EQ(mine.size(), 1u);
    EXPECT_EQ(other.size(), 1u);
    auto t = load_table(*cat, f.io, ident, &mine);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->metadata.snapshots.size(), 6u);
    EXPECT_EQ(to_json_text(t->metadata), std::string(as_chars(*f.io.read(t->metadata_location))))
        << "the cached copy is the committed file";
    check_table(f, *cat, 6);
}

// A writer killed (SIGKILL) at each step of a commit leaves a readable table, and rerunning the
// same input leaves exactly one copy of each batch.
TEST_P(iceberg_table, crash_at_each_commit_step_then_rerun_adds_once) {
    for (std::string step : {"manifest", "manifest-list", "metadata", "swap"}) {
        SCOPED_TRACE(step);
        fixture f(GetParam());
        {
            auto cat = f.open();
            ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
            ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "c-0", 0, 10)));
        }
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto c = open_catalog(f.kind, "sqlite://" + f.db, "floe", std::make_shared<local_file_io>(),
                                  file_uri(f.dir.str() + "/warehouse"));
            if (!c) _exit(2);
            commit_options o;
            o.on_step = [&](std::string_view s) {
                if (s == step) raise(SIGKILL);
            };
            (void)append_files(**c, f.io, ident, batch(f.location, "c-0", 10, 10), o);
            _exit(3);  // not reached: the kill comes first
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        auto cat = f.open();
        // The swap is the commit point; for the filesystem catalog creating the metadata is.
        bool committed = step == "swap" || (step == "metadata" && f.kind == "filesystem");
        check_table(f, *cat, committed ? 2 : 1);  // readable, and the swap is the commit point
        auto rerun = append_files(*cat, f.io, ident, batch(f.location, "c-0", 10, 10));
        if (committed) {
            ASSERT_FALSE(rerun);
            EXPECT_EQ(rerun.error().code(), errc::already_exists);
        } else {
            ASSERT_TRUE(rerun) << rerun.error();
        }
        auto live = check_table(f, *cat, 2);
        int64_t rows = 0;
        for (auto& e : live) rows += e.file.record_count;
        EXPECT_EQ(rows, 20);
    }
}

TEST_P(iceberg_table, delete_and_replace_files) {
    fixture f(GetParam());
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    std::vector<std::string> paths;
    for (int i = 0; i < 4; ++i) {
        auto req = batch(f.location, "r-0", i * 10, 10);
        paths.push_back(req.files[0].file_path);
        ASSERT_TRUE(append_files(*cat, f.io, ident, std::move(req)));
    }
    // Retention: drop the oldest file.
    auto del = commit_changes(*cat, f.io, ident, change_request{"delete", {}, {paths[0]}, {}});
    ASSERT_TRUE(del) << del.error();
    auto live = check_table(f, *cat, 5);
    ASSERT_EQ(live.size(), 3u);
    auto m = load_table(*cat, f.io, ident)->metadata;
    EXPECT_EQ(m.current_snapshot()->operation(), "delete");
    EXPECT_EQ(m.current_snapshot()->summary.at("deleted-data-files"), "1");
    EXPECT_EQ(m.current_snapshot()->summary.at("deleted-records"), "10");
    EXPECT_EQ(m.current_snapshot()->summary.at("total-records"), "30");
    // Compaction: two files replaced by one with the same rows.
    auto merged = make_file(f.location, "r-0", 10, 20);
    auto rep = commit_changes(*cat, f.io, ident, change_request{"replace", {merged}, {paths[1], paths[2]}, {}});
    ASSERT_TRUE(rep) << rep.error();
    live = check_table(f, *cat, 6);
    ASSERT_EQ(live.size(), 2u);
    std::set<std::string> now;
    for (auto& e : live) now.insert(e.file.file_path);
    EXPECT_TRUE(now.count(merged.file_path) && now.count(paths[3]));
    // Removing a file that is not live changes nothing.
    auto gone = commit_changes(*cat, f.io, ident, change_request{"delete", {}, {paths[0]}, {}});
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), errc::not_found);
    check_table(f, *cat, 6);
}

namespace {

// Fault injection around a real catalog: the swap happens, then the reply is lost (a database
// connection dropped after COMMIT), or the swap fails outright.
class lossy_catalog final : public catalog {
public:
    explicit lossy_catalog(std::unique_ptr<catalog> inner) : _inner(std::move(inner)) {}
    bool apply_then_fail = true;
    bool fail_lookups = false;
    result<void> create_namespace_if_missing(const std::string& ns) override { return _inner->create_namespace_if_missing(ns); }
    result<bool> namespace_exists(const std::string& ns) override { return _inner->namespace_exists(ns); }
    result<std::optional<std::string>> metadata_location(const table_ident& t) override {
        if (fail_lookups) return fail(errc::unavailable, "catalog unreachable");
        return _inner->metadata_location(t);
    }
    result<void> create_table(const table_ident& t, const std::string& l) override { return _inner->create_table(t, l); }
    result<void> swap(const table_ident& t, const std::string& e, const std::string& n) override {
        if (apply_then_fail) FLOE_TRY(_inner->swap(t, e, n));
        fail_lookups = fail_after_swap;
        return fail(errc::unavailable, "connection lost");
    }
    result<std::vector<std::string>> list_tables(const std::string& ns) override { return _inner->list_tables(ns); }
    bool fail_after_swap = false;

private:
    std::unique_ptr<catalog> _inner;
};

} // namespace

TEST(iceberg_table_faults, corrupt_metadata_and_manifests_name_the_file) {
    fixture f("sql");
    auto cat = f.open();
    ASSERT_TRUE(create_table_if_missing(*cat, f.io, ident, f.location));
    ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "x-0", 0, 10)));
    auto t = load_table(*cat, f.io, ident);
    ASSERT_TRUE(t);
    // A manifest list cut short.
    auto list_uri = t->metadata.current_snapshot()->manifest_list;
    auto list = *f.io.read(list_uri);
    ASSERT_TRUE(f.io.write(list_uri, bytes_view(list).first(list.size() / 2)));
    auto live = live_files(f.io, t->metadata);
    ASSERT_FALSE(live);
    EXPECT_NE(live.error().message().find(list_uri), std::string::npos) << live.error();
    // Metadata JSON with a required field of the wrong type.
    auto meta = std::string(as_chars(*f.io.read(t->metadata_location)));
    auto at = meta.find("\"last-column-id\"");
    ASSERT_NE(at, std::string::npos);
    meta.replace(at, 16, "\"last-column-id\": \"x\", \"was\"");
    ASSERT_TRUE(f.io.write(t->metadata_location, as_bytes(meta)));
    // Metadata files are never rewritten, so this process trusts the version it already parsed
    // (the catalog still points at it); a process without it in its cache reads the file.
    EXPECT_TRUE(load_table(*cat, f.io, ident));
    metadata_cache::global().clear();
    auto broken = load_table(*cat, f.io, ident);
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().code(), errc::corrupt);
    EXPECT_NE(broken.error().message().find(t->metadata_location), std::string::npos) << broken.error();
    EXPECT_NE(broken.error().message().find("last-column-id"), std::string::npos) << broken.error();
    // A commit on a table whose metadata cannot be read fails and changes nothing.
    EXPECT_FALSE(append_files(*cat, f.io, ident, batch(f.location, "x-0", 10, 10)));
    EXPECT_EQ(**cat->metadata_location(ident), t->metadata_location);
}

// The filesystem catalog reuses names: a table dropped and created again at the same place has
// a new v<N>.metadata.json under a name this process may have cached for the old table.
TEST(iceberg_table_faults, recreated_filesystem_table_is_not_served_from_the_cache) {
    fixture f("filesystem");
    auto cat = f.open();
    auto old_table = create_table_if_missing(*cat, f.io, ident, f.location);
    ASSERT_TRUE(old_table);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "o-0", i * 10, 10)));
    auto before = load_table(*cat, f.io, ident);
    ASSERT_TRUE(before);
    ASSERT_EQ(metadata_version(before->metadata_location), 4);
    // Another process drops the table and creates it again, committing up to v4 once more.
    std::filesystem::remove_all(f.dir.path() / "warehouse");
    metadata_cache other;
    {
        auto t = new_floe_table(f.location, uuid::random().to_string(), 1);
        ASSERT_TRUE(f.io.create_new(f.location + "/metadata/v1.metadata.json", as_bytes(to_json_text(t))));
    }
    commit_options o;
    o.cache = &other;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(append_files(*cat, f.io, ident, batch(f.location, "n-0", i * 5, 5), o));
    auto now = load_table(*cat, f.io, ident);
    ASSERT_TRUE(now) << now.error();
    EXPECT_EQ(now->metadata_location, before->metadata_location);
    EXPECT_NE(now->metadata.table_uuid, before->metadata.table_uuid);
    EXPECT_TRUE(now->metadata.current_snapshot()->summary.count("floe.committed.n-0"));
    // And a commit from this process builds on the new table, not the cached old one.
    auto r = append_files(*cat, f.io, ident, batch(f.location, "n-0", 15, 5));
    ASSERT_TRUE(r) << r.error();
    auto live = check_table(f, *cat, 4);
    int64_t rows = 0;
    for (auto& e : live) rows += e.file.record_count;
    EXPECT_EQ(rows, 20);
}

TEST(iceberg_table_faults, lost_swap_reply_is_resolved_by_looking) {
    fixture f("sql");
    lossy_catalog cat(f.open());
    ASSERT_TRUE(create_table_if_missing(cat, f.io, ident, f.location));
    // The swap went through but its reply was lost: the commit must be reported as done, once.
    auto r = append_files(cat, f.io, ident, batch(f.location, "l-0", 0, 10));
    ASSERT_TRUE(r) << r.error();
    check_table(f, cat, 1);
    // The swap went through and the catalog is unreachable afterwards: the outcome is unknown,
    // so the commit fails but deletes nothing the catalog may point at.
    cat.fail_after_swap = true;
    auto unknown = append_files(cat, f.io, ident, batch(f.location, "l-0", 10, 10));
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message().find("outcome unknown"), std::string::npos) << unknown.error();
    cat.fail_lookups = false;
    cat.fail_after_swap = false;
    check_table(f, cat, 2);  // it did commit, and every file it references is there
    // The swap did not happen and the reply says so only as an error: retried until it lands.
    cat.apply_then_fail = false;
    commit_options o;
    o.max_attempts = 3;
    auto refused = append_files(cat, f.io, ident, batch(f.location, "l-0", 20, 10), o);
    ASSERT_FALSE(refused);
    check_table(f, cat, 2);
}

INSTANTIATE_TEST_SUITE_P(catalogs, iceberg_table, ::testing::Values("sql", "filesystem"),
                         [](auto& info) { return info.param; });

namespace {

// Every v<N>.metadata.json under the table with its bytes: what "never overwritten" is checked on.
std::map<std::string, std::string> path_versions(fixture& f) {
    std::map<std::string, std::string> out;
    auto files = f.io.list(f.location + "/metadata/");
    EXPECT_TRUE(files) << files.error();
    for (auto& uri : *files) {
        auto name = uri.substr(uri.rfind('/') + 1);
        if (!name.starts_with("v") || !name.ends_with(".metadata.json")) continue;
        auto bytes = f.io.read(uri);
        EXPECT_TRUE(bytes) << bytes.error();
        out[name] = std::string(as_chars(*bytes));
    }
    return out;
}

void expect_kept(const std::map<std::string, std::string>& before, const std::map<std::string, std::string>& now) {
    for (auto& [name, bytes] : before) {
        auto it = now.find(name);
        ASSERT_NE(it, now.end()) << name << " disappeared";
        EXPECT_EQ(it->second, bytes) << name << " was overwritten";
    }
}

std::unique_ptr<catalog> open_kind(fixture& f, const std::string& kind, const std::string& db) {
    auto c = open_catalog(kind, "sqlite://" + db, "floe", std::make_shared<local_file_io>(),
                          file_uri(f.dir.str() + "/warehouse"));
    EXPECT_TRUE(c) << c.error();
    return std::move(*c);
}

} // namespace

// The story of issue 12: a warehouse written by the SQL catalog, then by the filesystem catalog,
// then by the SQL catalog again. Each switch is refused until the table is adopted on purpose,
// no v<N>.metadata.json is ever replaced, and after each adoption commits go on from the newest
// version with every row once.
TEST(iceberg_table_owner, catalog_switch_is_refused_until_adopted) {
    fixture f("sql");
    auto sql = open_kind(f, "sql", f.db);
    ASSERT_TRUE(create_table_if_missing(*sql, f.io, ident, f.location));
    ASSERT_TRUE(append_files(*sql, f.io, ident, batch(f.location, "s-0", 0, 10)));
    auto before = path_versions(f);
    ASSERT_EQ(before.size(), 2u);  // v1, v2

    auto fs = open_kind(f, "filesystem", f.db);
    auto refused = create_table_if_missing(*fs, f.io, ident, f.location);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::already_exists);
    EXPECT_NE(refused.error().message().find("floe tables adopt floe.orders"), std::string::npos) << refused.error();
    EXPECT_NE(refused.error().message().find("swaps a pointer"), std::string::npos) << refused.error();
    expect_kept(before, path_versions(f));

    auto adopted = adopt_table(*fs, f.io, ident, f.location);
    ASSERT_TRUE(adopted) << adopted.error();
    EXPECT_EQ(metadata_version(*adopted), 3);
    ASSERT_TRUE(create_table_if_missing(*fs, f.io, ident, f.location));
    ASSERT_TRUE(append_files(*fs, f.io, ident, batch(f.location, "s-0", 10, 10)));
    before = path_versions(f);
    ASSERT_EQ(before.size(), 4u);

    // Back on the SQL catalog, which still points at version 2: refused at open, and a commit
    // built on version 2 would have to replace v3 — refused too, never retried into an overwrite.
    auto again = create_table_if_missing(*sql, f.io, ident, f.location);
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().message().find("v4.metadata.json"), std::string::npos) << again.error();
    auto commit = append_files(*sql, f.io, ident, batch(f.location, "s-0", 20, 10));
    ASSERT_FALSE(commit);
    EXPECT_EQ(commit.error().code(), errc::already_exists);
    EXPECT_NE(commit.error().message().find("v3.metadata.json already exists"), std::string::npos) << commit.error();
    expect_kept(before, path_versions(f));
    EXPECT_EQ(metadata_version(**sql->metadata_location(ident)), 2);

    auto back = adopt_table(*sql, f.io, ident, f.location);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(*back, f.location + "/metadata/v4.metadata.json");
    ASSERT_TRUE(create_table_if_missing(*sql, f.io, ident, f.location));
    ASSERT_TRUE(append_files(*sql, f.io, ident, batch(f.location, "s-0", 20, 10)));
    auto now = path_versions(f);
    expect_kept(before, now);
    EXPECT_EQ(now.size(), 5u);
    auto live = check_table(f, *sql, 3);
    int64_t rows = 0;
    for (auto& e : live) rows += e.file.record_count;
    EXPECT_EQ(rows, 30);
    // Adopting what the catalog already owns changes nothing.
    auto same = adopt_table(*sql, f.io, ident, f.location);
    ASSERT_TRUE(same) << same.error();
    EXPECT_EQ(*same, **sql->metadata_location(ident));
}

// A second SQL catalog (another database file) pointed at the same warehouse does not know the
// table: refused, whether its own row is missing or stale.
TEST(iceberg_table_owner, unknown_location_is_refused_and_adoption_registers_it) {
    fixture f("sql");
    auto first = open_kind(f, "sql", f.db);
    ASSERT_TRUE(create_table_if_missing(*first, f.io, ident, f.location));
    ASSERT_TRUE(append_files(*first, f.io, ident, batch(f.location, "u-0", 0, 5)));
    auto second = open_kind(f, "sql", f.dir.str() + "/other.db");
    auto refused = create_table_if_missing(*second, f.io, ident, f.location);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("does not know"), std::string::npos) << refused.error();
    EXPECT_FALSE(*second->metadata_location(ident));
    auto adopted = adopt_table(*second, f.io, ident, f.location);
    ASSERT_TRUE(adopted) << adopted.error();
    EXPECT_EQ(*adopted, f.location + "/metadata/v2.metadata.json");
    ASSERT_TRUE(append_files(*second, f.io, ident, batch(f.location, "u-0", 5, 5)));
    check_table(f, *second, 2);
    // Now the first catalog is the stranger.
    EXPECT_FALSE(create_table_if_missing(*first, f.io, ident, f.location));
    EXPECT_FALSE(append_files(*first, f.io, ident, batch(f.location, "u-0", 10, 5)));
}

// A v<N> of the same number but other content beside the catalog's current file: another writer.
TEST(iceberg_table_owner, same_version_with_other_content_is_refused) {
    fixture f("sql");
    auto sql = open_kind(f, "sql", f.db);
    ASSERT_TRUE(create_table_if_missing(*sql, f.io, ident, f.location));
    auto v1 = f.location + "/metadata/v1.metadata.json";
    ASSERT_TRUE(f.io.remove(v1));
    auto t = new_floe_table(f.location, uuid::random().to_string(), 1);
    ASSERT_TRUE(f.io.create_new(v1, as_bytes(to_json_text(t))));
    auto refused = create_table_if_missing(*sql, f.io, ident, f.location);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("differs"), std::string::npos) << refused.error();
}

// The pointer is read before metadata/ is listed, so writers of the same catalog can commit in
// between (found by the chaos run on a PostgreSQL catalog and S3, 2026-12-03: a restarted broker
// read version 772, the listing then held v774, and offload was refused as if another catalog
// had written it). A stale pointer whose catalog has since reached the listed version is not a
// stranger; a version the catalog never reached still is.
TEST(iceberg_table_owner, a_pointer_read_before_the_listing_is_asked_again) {
    fixture f("sql");
    auto sql = open_kind(f, "sql", f.db);
    ASSERT_TRUE(create_table_if_missing(*sql, f.io, ident, f.location));
    auto stale = **sql->metadata_location(ident);  // version 1, read "before" the commits below
    ASSERT_TRUE(append_files(*sql, f.io, ident, batch(f.location, "r-0", 0, 5)));
    ASSERT_TRUE(append_files(*sql, f.io, ident, batch(f.location, "r-0", 5, 5)));
    ASSERT_EQ(metadata_version(**sql->metadata_location(ident)), 3);
    auto ok = check_location_owner(*sql, f.io, ident, f.location, stale);
    EXPECT_TRUE(ok) << ok.error();
    // A v9 the catalog never reached: refused, naming it.
    auto v9 = f.location + "/metadata/v9.metadata.json";
    ASSERT_TRUE(f.io.copy_new(**sql->metadata_location(ident), v9));
    auto refused = check_location_owner(*sql, f.io, ident, f.location, stale);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("v9.metadata.json"), std::string::npos) << refused.error();
}

TEST(iceberg_file_io, copy_new_never_replaces) {
    test_util::temp_dir dir;
    local_file_io io;
    auto a = file_uri(dir.str() + "/a"), b = file_uri(dir.str() + "/b");
    ASSERT_TRUE(io.write(a, as_bytes(std::string_view("one"))));
    ASSERT_TRUE(io.copy_new(a, b));
    ASSERT_TRUE(io.write(a + "2", as_bytes(std::string_view("two"))));
    auto again = io.copy_new(a + "2", b);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::already_exists);
    EXPECT_EQ(as_chars(*io.read(b)), "one");
}
