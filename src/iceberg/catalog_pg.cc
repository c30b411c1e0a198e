// Iceberg's SQL catalog on PostgreSQL (libpq): same tables, columns and swap as the SQLite one,
// for brokers that share a catalog.
#include "iceberg/catalog_pg.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstring>

namespace floe::iceberg {

namespace {

struct pg_result {
    PGresult* r;
    ~pg_result() { PQclear(r); }
    std::string_view state() const {
        auto* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        return s ? s : "";
    }
};

/// libpq's messages span lines ("connection to server ... failed: ...\n\tIs the server
/// running...?\n"); a log line or an HTTP error carries them folded into one line.
std::string one_line(const char* msg) {
    std::string out;
    bool gap = false;
    for (const char* p = msg ? msg : ""; *p; ++p) {
        if (*p == '\n' || *p == '\r' || *p == '\t') {
            gap = true;
            continue;
        }
        if (gap && !out.empty()) out += out.back() == ' ' ? "" : " ";
        gap = false;
        out += *p;
    }
    return out;
}

// libpq prints a server's NOTICE and WARNING messages ("relation ... already exists, skipping"
// at every CREATE TABLE IF NOT EXISTS) to stderr unless a receiver is set: they go through
// Floe's logger instead, at their severity, so --log-format json stays one object a line.
void notice_to_log(void*, const PGresult* r) {
    const char* sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    std::string_view s = sev ? sev : "NOTICE";
    auto level = s == "WARNING" ? spdlog::level::warn
                 : s.starts_with("DEBUG") ? spdlog::level::debug
                                          : spdlog::level::info;
    spdlog::log(level, "postgres catalog: {}", one_line(PQresultErrorMessage(r)));
}

} // namespace

postgres_catalog::postgres_catalog(PGconn* conn, std::string name) : _conn(conn), _name(std::move(name)) {}
postgres_catalog::~postgres_catalog() { PQfinish(_conn); }

result<std::unique_ptr<postgres_catalog>> postgres_catalog::open(const std::string& conninfo,
                                                                 std::string catalog_name) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    if (!c || PQstatus(c) != CONNECTION_OK) {
        std::string msg = c ? one_line(PQerrorMessage(c)) : "out of memory";
        PQfinish(c);
        return fail(errc::unavailable, "connect to postgres catalog: {}", msg);
    }
    PQsetNoticeReceiver(c, notice_to_log, nullptr); // kept by PQreset
    std::unique_ptr<postgres_catalog> cat(new postgres_catalog(c, std::move(catalog_name)));
    for (auto* sql : sql_catalog_ddl()) {
        pg_result r{PQexec(c, sql)};
        // Two first users may race on CREATE TABLE IF NOT EXISTS: the loser's duplicate errors
        // mean the table is there.
        if (PQresultStatus(r.r) != PGRES_COMMAND_OK && r.state() != "23505" && r.state() != "42P07")
            return fail(errc::io_error, "postgres catalog: create tables: {}", one_line(PQerrorMessage(c)));
    }
    return cat;
}

result<postgres_catalog::rows> postgres_catalog::exec(const char* sql, std::initializer_list<std::string_view> params,
                                                      std::string* sqlstate, int64_t* affected) {
    std::array<std::string, 8> copies;
    std::array<const char*, 8> values{};
    size_t n = 0;
    for (auto p : params) {
        copies[n] = std::string(p);
        values[n] = copies[n].c_str();
        ++n;
    }
    pg_result r{PQexecParams(_conn, sql, static_cast<int>(n), nullptr, values.data(), nullptr, nullptr, 0)};
    auto st = PQresultStatus(r.r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        if (sqlstate) *sqlstate = std::string(r.state());
        bool broken = PQstatus(_conn) != CONNECTION_OK;
        if (broken) PQreset(_conn);
        return fail(broken ? errc::unavailable : errc::io_error, "postgres catalog: {}",
                    one_line(PQerrorMessage(_conn)));
    }
    if (affected) {
        auto* t = PQcmdTuples(r.r);
        *affected = t && *t ? std::atoll(t) : 0;
    }
    rows out;
    for (int i = 0; i < PQntuples(r.r); ++i) out.push_back(PQgetisnull(r.r, i, 0) ? std::optional<std::string>() : PQgetvalue(r.r, i, 0));
    return out;
}

result<void> postgres_catalog::create_namespace_if_missing(const std::string& ns) {
    std::lock_guard g(_mu);
    FLOE_TRY(exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) "
                  "VALUES ($1, $2, 'exists', 'true') ON CONFLICT DO NOTHING",
                  {_name, ns}));
    return {};
}

result<bool> postgres_catalog::namespace_exists(const std::string& ns) {
    std::lock_guard g(_mu);
    auto r = FLOE_TRY(exec("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2 "
                           "UNION SELECT 1 FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2",
                           {_name, ns}));
    return !r.empty();
}

result<std::optional<std::string>> postgres_catalog::metadata_location(const table_ident& t) {
    std::lock_guard g(_mu);
    auto r = FLOE_TRY(exec("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND "
                           "table_namespace = $2 AND table_name = $3",
                           {_name, t.ns, t.name}));
    if (r.empty()) return std::optional<std::string>();
    if (!r[0]) return fail(errc::corrupt, "table {}.{} has no metadata location", t.ns, t.name);
    return r[0];
}

result<void> postgres_catalog::create_table(const table_ident& t, const std::string& location) {
    std::lock_guard g(_mu);
    std::string state;
    auto r = exec("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
                  "previous_metadata_location, iceberg_type) VALUES ($1, $2, $3, $4, NULL, 'TABLE')",
                  {_name, t.ns, t.name, location}, &state);
    if (!r && state == "23505") return fail(errc::already_exists, "table {}.{} already exists", t.ns, t.name);
    if (!r) return std::unexpected(r.error());
    return {};
}

result<void> postgres_catalog::swap(const table_ident& t, const std::string& expected, const std::string& new_location) {
    std::lock_guard g(_mu);
    int64_t affected = 0;
    FLOE_TRY(exec("UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2 "
                  "WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $2",
                  {new_location, expected, _name, t.ns, t.name}, nullptr, &affected));
    if (affected != 1)
        return fail(errc::conflict, "table {}.{} moved on from {} (concurrent commit)", t.ns, t.name, expected);
    return {};
}

result<std::vector<std::string>> postgres_catalog::list_tables(const std::string& ns) {
    std::lock_guard g(_mu);
    auto r = FLOE_TRY(exec("SELECT table_name FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 "
                           "ORDER BY table_name",
                           {_name, ns}));
    std::vector<std::string> out;
    for (auto& v : r)
        if (v) out.push_back(*v);
    return out;
}

result<std::vector<std::string>> postgres_catalog::list_namespaces() {
    std::lock_guard g(_mu);
    auto r = FLOE_TRY(exec("SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1 "
                           "UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name = $1 ORDER BY 1",
                           {_name}));
    std::vector<std::string> out;
    for (auto& v : r)
        if (v) out.push_back(*v);
    return out;
}

} // namespace floe::iceberg
