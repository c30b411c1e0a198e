#pragma once

#include "config/settings.h"

#include <string>
#include <vector>

namespace floe::app {

/// `floe tables adopt NAME...`: makes the configured catalog the owner of tables whose location
/// holds metadata it does not know (written by another catalog, a restored catalog, a second
/// database), continuing from the newest metadata there. NAME is a topic or `<namespace>.<table>`.
/// Run it on purpose, with every other writer of those tables stopped. Returns the exit code.
/// Refused (exit 2, naming the holder's pid and listeners) while a live `floe serve` holds the
/// data directory (`<data-dir>/floe.lock`), which it holds itself while it runs.
int adopt_tables(const config::settings& s, const std::vector<std::string>& names);

/// `floe tables files NAME [--sql]`: the data files of the table's current snapshot (NAME as
/// above), one a line as read_parquet opens them (a local path for file://, else the URI), or
/// with `sql` one DuckDB expression `read_parquet(['...', ...])`. Unlike a glob over data/, it
/// never lists a file that compaction replaced or an orphan. Reads only: works beside a running
/// server. Exit 1 when there is no such table.
/// Encrypted files: `sql` adds `encryption_config = {footer_key: '<key id>'}` (one read_parquet
/// per key id, UNION ALL BY NAME), and `keys` prints instead the DuckDB statements registering
/// those keys (`PRAGMA add_parquet_key(...)`, read from the keyring: what an outside reader who
/// may have the keys needs). aws-kms tables have a data key per file: `keys` refuses them.
int list_table_files(const config::settings& s, const std::string& name, bool sql, bool keys = false);

} // namespace floe::app
