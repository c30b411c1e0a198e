#include "config/settings.h"

#include <algorithm>
#include <cctype>

namespace floe::config {
namespace {

constexpr int64_t kib = 1024, mib = kib * 1024, gib = mib * 1024;
constexpr int64_t second_ms = 1000, day_ms = 86'400'000;

setting_def def(std::string name, setting_type t, std::string dflt, std::string desc) {
    setting_def d;
    d.name = std::move(name);
    d.type = t;
    d.default_text = std::move(dflt);
    d.description = std::move(desc);
    return d;
}
setting_def bounded(setting_def d, int64_t min, int64_t max) {
    d.min = min;
    d.max = max;
    return d;
}
setting_def choice(std::string name, std::string dflt, std::vector<std::string> choices,
                   std::string desc) {
    auto d = def(std::move(name), setting_type::choice, std::move(dflt), std::move(desc));
    d.choices = std::move(choices);
    return d;
}
setting_def optional(setting_def d, bool secret = false) {
    d.optional = true;
    d.secret = secret;
    return d;
}
setting_def derived(setting_def d, std::string from) {
    d.derived_from = std::move(from);
    return d;
}

} // namespace

std::string_view to_string(setting_type t) {
    switch (t) {
    case setting_type::string: return "string";
    case setting_type::boolean: return "bool";
    case setting_type::integer: return "int";
    case setting_type::size: return "size";
    case setting_type::duration: return "duration";
    case setting_type::choice: return "choice";
    case setting_type::address: return "host:port";
    case setting_type::uri: return "uri";
    }
    return "?";
}

std::string setting_def::env_name() const {
    std::string_view n = name;
    if (n.starts_with("floe.")) n.remove_prefix(5);
    std::string out = "FLOE_";
    for (char c : n) out += (c == '.' || c == '-') ? '_' : static_cast<char>(std::toupper(c));
    return out;
}

registry::registry() {
    using st = setting_type;
    auto& d = _defs;
    d.push_back(def("floe.data-dir", st::string, "./floe-data",
                    "Directory for the local tier, topic metadata and the default SQLite catalog"));
    d.push_back(def("floe.kafka.listen", st::address, "127.0.0.1:9092",
                    "Address the Kafka protocol listener binds (port 0: any free port)"));
    d.push_back(derived(optional(def("floe.kafka.advertised-listener", st::address, "",
                                     "host:port given to clients in Metadata; default: the listen address")),
                        "floe.kafka.listen"));
    d.push_back(optional(def("floe.kafka.listeners", st::string, "",
                             "Kafka listeners in Kafka's form, NAME://host:port,... with names PLAINTEXT, SSL, "
                             "SASL_PLAINTEXT, SASL_SSL (e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093); "
                             "default: one PLAINTEXT listener on floe.kafka.listen")));
    d.push_back(optional(def("floe.kafka.advertised-listeners", st::string, "",
                             "Addresses given to clients in Metadata, per listener, in the form of "
                             "floe.kafka.listeners (port 0: the bound port); default: each listener's own address")));
    d.push_back(optional(def("floe.tls.cert-file", st::string, "",
                             "PEM certificate chain of the SSL and SASL_SSL listeners")));
    d.push_back(optional(def("floe.tls.key-file", st::string, "", "PEM private key of floe.tls.cert-file")));
    d.push_back(optional(def("floe.tls.ca-file", st::string, "",
                             "PEM certificates of the CAs trusted for client certificates")));
    d.push_back(choice("floe.tls.client-auth", "none", {"none", "requested", "required"},
                       "TLS client certificates: none, requested (verified when sent) or required"));
    d.push_back(def("floe.sasl.mechanisms", st::string, "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
                    "SASL mechanisms offered on SASL_PLAINTEXT and SASL_SSL listeners, comma-separated: "
                    "SCRAM-SHA-512, SCRAM-SHA-256, PLAIN (PLAIN sends the password: use it over SASL_SSL)"));
    d.push_back(bounded(def("floe.sasl.connections-max-reauth", st::duration, "0",
                            "Longest SASL session (Kafka's connections.max.reauth.ms, KIP-368): clients that can "
                            "re-authenticate are told it and do so on the same connection, the connection of any "
                            "other is closed at its first request after it; a deleted or changed credential so loses "
                            "access within this time. 0: sessions never end"),
                        0, 365 * day_ms));
    d.push_back(optional(def("floe.security.super-users", st::string, "",
                             "Principals allowed every operation whatever the ACLs, semicolon-separated "
                             "(User:admin;User:ops); ACLs are managed with `floe acls` or CreateAcls/DeleteAcls")));
    d.push_back(bounded(def("floe.kafka.io-threads", st::integer, "0",
                            "Threads serving Kafka connections; 0: one per core (at least 2)"),
                        0, 256));
    d.push_back(bounded(def("floe.kafka.socket-request-max-bytes", st::size, "100MiB",
                            "Largest Kafka request accepted (socket.request.max.bytes); larger "
                            "requests close the connection"),
                        1024, 2 * gib));
    // Why a broker caps Fetch answers below what clients ask: librdkafka stops fetching for
    // about a second whenever one answer leaves its pre-fetch queue at queued.min.messages
    // (100000) records or queued.max.messages.kbytes (64 MiB); the defaults stay well under both.
    d.push_back(bounded(def("floe.kafka.fetch-max-bytes", st::size, "16MiB",
                            "Most record bytes in one Fetch answer, whatever the client asks (the "
                            "broker's fetch.max.bytes); whole batches, the first one even if larger"),
                        1024, 2 * gib));
    d.push_back(bounded(def("floe.kafka.fetch-max-records", st::integer, "32768",
                            "Most records in one Fetch answer, whatever its byte budget: whole "
                            "batches, so the last one may go past it; the first one is always sent"),
                        1, 1 << 30));
    d.push_back(bounded(def("floe.kafka.group.consumer.session-timeout", st::duration, "45s",
                            "KIP-848 consumer groups (group.protocol=consumer): a member whose "
                            "heartbeats stop this long is removed (Kafka's "
                            "group.consumer.session.timeout.ms)"),
                        1000, day_ms));
    d.push_back(bounded(def("floe.kafka.group.consumer.heartbeat-interval", st::duration, "5s",
                            "KIP-848 consumer groups: the heartbeat interval given to members "
                            "(Kafka's group.consumer.heartbeat.interval.ms)"),
                        100, day_ms));
    d.push_back(bounded(def("floe.log.flush-interval", st::duration, "0",
                            "Background fsync of unflushed local-log data this often; 0: fsync "
                            "only for acks=all produce requests and on shutdown"),
                        0, day_ms));
    d.push_back(choice("floe.local.type", "embedded", {"embedded", "redis"},
                       "Local tier: embedded (segment files under floe.data-dir) or redis (Redis Streams, "
                       "shareable by several brokers)"));
    d.push_back(optional(def("floe.local.redis.uri", st::string, "",
                             "Redis of the redis local tier: redis://[user:password@]host:port[/db]; several "
                             "comma-separated seed URIs for a Redis Cluster"),
                         true));
    d.push_back(bounded(def("floe.local.redis.connect-timeout", st::duration, "2s",
                            "Redis connection timeout (redis local tier)"),
                        1, 600 * second_ms));
    d.push_back(bounded(def("floe.local.redis.command-timeout", st::duration, "5s",
                            "Redis command round-trip timeout (redis local tier)"),
                        1, 600 * second_ms));
    d.push_back(bounded(def("floe.local.redis.pool-size", st::integer, "8",
                            "Redis connections per node at most (redis local tier)"),
                        1, 1024));
    d.push_back(optional(bounded(def("floe.broker.id", st::integer, "",
                                     "This broker's node id in Metadata (Kafka's node.id); unset: 0 alone, and with "
                                     "floe.local.type=redis the lowest id free in the cluster, kept with the data "
                                     "directory (<data-dir>/broker.token) so a restart takes it back. Set, it must "
                                     "differ from every live broker's of the Redis namespace"),
                                 0, INT32_MAX)));
    d.push_back(bounded(def("floe.cluster.session-timeout", st::duration, "6s",
                            "floe.local.type=redis: a broker that stops heartbeating (it does every third of this) "
                            "expires this long after its last heartbeat and leaves Metadata within about 4/3 of it; "
                            "its partitions and groups then move to the others"),
                        300, 600 * second_ms));
    d.push_back(bounded(def("floe.local.redis.min-replicas", st::integer, "0",
                            "acks=all waits (Redis WAIT) until this many Redis replicas have each append; "
                            "0: acknowledged once the Redis master has it"),
                        0, 64));
    d.push_back(bounded(def("floe.log.cleaner.interval", st::duration, "15s",
                            "Pause between passes of the log cleaner over compacted topics "
                            "(Kafka's log.cleaner.backoff.ms); 0: no cleaner"),
                        0, day_ms));
    d.push_back(def("floe.log.cleaner.io-max-bytes-per-second", st::size, "0",
                    "Bytes the log cleaner reads and writes per second, all partitions "
                    "together (log.cleaner.io.max.bytes.per.second); 0: unthrottled"));
    d.push_back(optional(def("floe.http.tokens-file", st::string, "",
                             "File of bearer tokens of the HTTP plane, one '<principal> sha256:<hex of SHA-256(token)>' "
                             "a line; set: every path but floe.http.open-paths needs 'Authorization: Bearer <token>' "
                             "(401 otherwise), and /v1 obeys that principal's topic ACLs (403)")));
    d.push_back(def("floe.http.open-paths", st::string, "/metrics,/healthz,/readyz",
                    "Paths served without a bearer token when floe.http.tokens-file is set, comma-separated"));
    d.push_back(def("floe.http.tls.enabled", st::boolean, "false",
                    "Serve the HTTP plane over TLS only, with floe.tls.cert-file and floe.tls.key-file "
                    "(re-read on SIGHUP)"));
    d.push_back(def("floe.http.listen", st::address, "127.0.0.1:8080",
                    "Address of the HTTP admin plane (/metrics, /healthz, /readyz, /v1)"));
    d.push_back(def("floe.http.console.enabled", st::boolean, "true",
                    "Serve the read-only web console at /console/ on the HTTP plane (false: 404); its "
                    "static files go without a token, its data through /v1 with the user's bearer token"));
    d.push_back(def("floe.http.console.export", st::boolean, "true",
                    "Let the console (and /v1/topics/{topic}/search?format=ndjson|csv) export search "
                    "results as NDJSON or CSV; false: 403"));
    d.push_back(bounded(def("floe.http.search.max-per-client", st::integer, "2",
                            "Searches and live tails (/v1/topics/{topic}/search, the console's Messages page) "
                            "running at once per client address; 429 beyond. A console tab tailing holds one "
                            "place, so raise it for more tabs per machine"),
                        1, 1000));
    d.push_back(def("floe.schema-registry.enabled", st::boolean, "true",
                    "Serve the Confluent-compatible schema registry on floe.schema-registry.listen (with the HTTP "
                    "plane's TLS and bearer tokens when those are on)"));
    d.push_back(def("floe.schema-registry.listen", st::address, "127.0.0.1:8081",
                    "Address of the schema registry's REST API (Confluent's API; clients assume port 8081)"));
    d.push_back(def("floe.namespace", st::string, "floe", "Iceberg namespace holding one table per topic"));
    d.push_back(derived(optional(def("floe.storage.remote.path", st::uri, "",
                                     "Warehouse root for Iceberg tables: file:///... or s3://bucket/prefix; "
                                     "default file://<data-dir>/warehouse")),
                        "floe.data-dir"));
    d.push_back(choice("floe.storage.remote.catalog.type", "sql",
                       {"sql", "filesystem", "rest", "glue", "hive", "nessie"},
                       "Iceberg catalog: sql (SQLite or PostgreSQL), filesystem (Hadoop layout), rest, glue (AWS "
                       "Glue Data Catalog), hive (Hive Metastore) or nessie"));
    d.push_back(derived(optional(def("floe.storage.remote.catalog.uri", st::string, "",
                                     "Catalog location: sqlite://<path>, postgresql://..., an http(s) REST or "
                                     "Nessie URI, or thrift://host:9083 (Hive Metastore); default sqlite://<data-dir>/catalog.db")),
                        "floe.data-dir"));
    d.push_back(optional(def("floe.storage.remote.catalog.glue.region", st::string, "",
                             "Glue catalog: the region; default floe.storage.remote.s3.region, AWS_REGION, "
                             "AWS_DEFAULT_REGION, else us-east-1")));
    d.push_back(optional(def("floe.storage.remote.catalog.glue.catalog-id", st::string, "",
                             "Glue catalog: the account id whose Data Catalog holds the tables; default the "
                             "caller's own")));
    d.push_back(optional(def("floe.storage.remote.catalog.glue.endpoint", st::string, "",
                             "Glue catalog: the endpoint URL (a VPC endpoint, a test server); default "
                             "https://glue.<region>.amazonaws.com")));
    d.push_back(bounded(def("floe.storage.remote.catalog.hive.lock-wait", st::duration, "3m",
                            "Hive catalog: how long a commit waits for the metastore's table lock (held by another "
                            "writer) before it gives up and retries later"),
                        100, 3'600 * second_ms));
    d.push_back(bounded(def("floe.storage.remote.catalog.hive.heartbeat-interval", st::duration, "1m",
                            "Hive catalog: how often a lock being waited for or held is heartbeaten (the metastore "
                            "drops locks without heartbeats after hive.txn.timeout, 300 s by default)"),
                        100, 3'600 * second_ms));
    d.push_back(def("floe.storage.remote.catalog.ref", st::string, "main",
                    "Nessie catalog: the branch commits land on (the REST prefix); a tag or <branch>@<hash> "
                    "reads that state"));
    d.push_back(def("floe.storage.remote.catalog.rest.sigv4.enabled", st::boolean, "false",
                    "REST (and Nessie) catalog: sign every request with AWS SigV4 (the AWS credentials of "
                    "floe.storage.remote.s3.* or the chain, through floe.aws.role-arn) instead of a bearer token: "
                    "Glue's and S3 Tables' Iceberg REST endpoints"));
    d.push_back(def("floe.storage.remote.catalog.rest.sigv4.signing-name", st::string, "execute-api",
                    "REST catalog SigV4: the service name signed for: glue, s3tables or execute-api"));
    d.push_back(optional(def("floe.storage.remote.catalog.rest.sigv4.region", st::string, "",
                             "REST catalog SigV4: the region signed for; default floe.storage.remote.s3.region, "
                             "AWS_REGION, AWS_DEFAULT_REGION, else us-east-1")));
    d.push_back(optional(def("floe.aws.role-arn", st::string, "",
                             "An IAM role every AWS call (S3, Glue, KMS, SigV4 REST) assumes with STS AssumeRole on "
                             "top of the configured credentials; its session is renewed before it expires")));
    d.push_back(optional(def("floe.aws.external-id", st::string, "",
                             "The ExternalId the role's trust policy asks for (with floe.aws.role-arn)")));
    d.push_back(def("floe.aws.session-name", st::string, "floe",
                    "The RoleSessionName of the assumed role's sessions (shows in CloudTrail)"));
    d.push_back(bounded(def("floe.aws.role-duration", st::duration, "1h",
                            "How long each assumed-role session lasts (AWS accepts 15m up to the role's maximum); "
                            "renewed 5 minutes (or a quarter of it, if shorter) before it ends"),
                        1'000, 43'200 * second_ms));
    d.push_back(optional(def("floe.aws.sts-endpoint", st::string, "",
                             "The STS endpoint for floe.aws.role-arn; default AWS_ENDPOINT_URL_STS, else "
                             "https://sts.<region>.amazonaws.com")));
    // Parquet Modular Encryption: where keys come from (crypto/README.md). Never a key itself.
    d.push_back(optional(choice("floe.encryption.provider", "", {"keyring", "aws-kms"},
                                "Key provider for encrypted tables (topics with floe.iceberg.encryption other than "
                                "none): keyring (a local key file) or aws-kms (envelope encryption); unset: no "
                                "topic may ask for encryption")));
    d.push_back(optional(def("floe.encryption.keyring-file", st::string, "",
                             "Keyring provider: the JSON key file {\"current\": \"k2\", \"keys\": {\"k1\": \"<base64 "
                             "128/256-bit key>\", ...}}; must be owner-only (mode 0600 or 0400)")));
    d.push_back(optional(def("floe.encryption.kms.key-id", st::string, "",
                             "aws-kms provider: the KMS key that wraps each file's data key (key id, key ARN, "
                             "alias/<name> or alias ARN); files record the key ARN")));
    d.push_back(optional(def("floe.encryption.kms.region", st::string, "",
                             "aws-kms provider: the KMS region; default floe.storage.remote.s3.region, AWS_REGION, "
                             "AWS_DEFAULT_REGION, else us-east-1")));
    d.push_back(optional(def("floe.encryption.kms.endpoint", st::string, "",
                             "aws-kms provider: the KMS endpoint URL (a VPC endpoint, a test server); default "
                             "AWS_ENDPOINT_URL_KMS, else https://kms.<region>.amazonaws.com")));
    d.push_back(choice("floe.encryption.kms.data-key-spec", "AES_256", {"AES_256", "AES_128"},
                       "aws-kms provider: the size of each file's data key (GenerateDataKey KeySpec)"));
    d.push_back(bounded(def("floe.encryption.kms.cache-size", st::integer, "10000",
                            "aws-kms provider: unwrapped data keys kept in memory (LRU), so reading a file again "
                            "costs no KMS Decrypt"),
                        1, 10'000'000));
    d.push_back(bounded(def("floe.encryption.kms.max-attempts", st::integer, "5",
                            "aws-kms provider: attempts per KMS call on throttling, 5xx and transport errors, with "
                            "exponential backoff and jitter"),
                        1, 100));
    d.push_back(bounded(def("floe.encryption.kms.request-timeout", st::duration, "10s",
                            "aws-kms provider: deadline of one KMS request attempt"),
                        100, 600'000));
    d.push_back(optional(def("floe.storage.remote.catalog.warehouse", st::string, "",
                             "REST catalog: the warehouse to ask /v1/config for (its overrides may set the "
                             "prefix)")));
    d.push_back(optional(def("floe.storage.remote.catalog.prefix", st::string, "",
                             "REST catalog: the path prefix after /v1/; default what /v1/config says")));
    d.push_back(optional(def("floe.storage.remote.catalog.token", st::string, "",
                             "REST catalog: a bearer token sent with every request"),
                         true));
    d.push_back(optional(def("floe.storage.remote.catalog.credential", st::string, "",
                             "REST catalog: OAuth2 client credentials id:secret (client_credentials grant; "
                             "tokens refreshed before they expire)"),
                         true));
    d.push_back(optional(def("floe.storage.remote.catalog.oauth2-server-uri", st::string, "",
                             "REST catalog: the OAuth2 token endpoint; default <uri>/v1/oauth/tokens")));
    d.push_back(optional(def("floe.storage.remote.catalog.scope", st::string, "",
                             "REST catalog: the OAuth2 scope asked for; default catalog")));
    d.push_back(bounded(def("floe.storage.remote.catalog.request-timeout", st::duration, "30s",
                            "REST catalog: the longest one request may take (a commit that times out is "
                            "checked by reloading the table before anything is retried)"),
                        100, 600'000));
    d.push_back(optional(def("floe.storage.remote.s3.region", st::string, "",
                             "S3 region; default AWS_REGION, AWS_DEFAULT_REGION, else us-east-1")));
    d.push_back(optional(def("floe.storage.remote.s3.endpoint", st::string, "",
                             "S3 endpoint URL for S3-compatible servers")));
    d.push_back(optional(def("floe.storage.remote.s3.path-style-access", st::boolean, "",
                             "Address buckets by path instead of virtual host")));
    d.push_back(optional(def("floe.storage.remote.s3.access-key-id", st::string, "",
                             "S3 access key id; without it credentials come from the AWS chain (environment, "
                             "web identity, shared files, ECS, EC2 instance metadata)")));
    d.push_back(optional(def("floe.storage.remote.s3.secret-access-key", st::string, "", "S3 secret key"),
                         true));
    d.push_back(optional(def("floe.storage.remote.s3.session-token", st::string, "",
                             "S3 session token for temporary static keys"),
                         true));
    d.push_back(bounded(def("floe.storage.remote.s3.max-connections", st::integer, "16",
                            "Idle HTTP connections to S3 kept for reuse"),
                        1, 1024));
    d.push_back(bounded(def("floe.storage.remote.s3.request-timeout", st::duration, "60s",
                            "Deadline of one S3 request attempt (each retry gets a new one)"),
                        100, 3'600 * second_ms));
    d.push_back(bounded(def("floe.storage.remote.s3.max-attempts", st::integer, "5",
                            "Attempts per S3 request on 5xx, SlowDown, timeouts and resets, with "
                            "exponential backoff and jitter"),
                        1, 100));
    d.push_back(bounded(def("floe.storage.remote.s3.multipart-part-size", st::size, "16MB",
                            "Objects larger than this are uploaded in parts of this size (S3 needs 5MiB or more)"),
                        5 * mib, 5 * gib));
    d.push_back(bounded(def("floe.storage.remote.iceberg.row-group-size", st::size, "128MB",
                            "Cut a Parquet row group once its encoded (compressed) pages reach this size"),
                        64 * kib, 2 * gib));
    d.push_back(bounded(def("floe.storage.remote.iceberg.row-group-rows", st::integer, "131072",
                            "Cut a Parquet row group at this many rows (0: by size only); a cold lookup by key "
                            "reads the key column of each row group its bloom filter cannot rule out"),
                        0, 1ll << 40));
    d.push_back(bounded(def("floe.storage.remote.iceberg.target-file-size", st::size, "128MB",
                            "Target bytes per Parquet data file"),
                        64 * kib, 16 * gib));
    d.push_back(choice("floe.storage.remote.iceberg.compression", "zstd",
                       {"zstd", "snappy", "lz4", "gzip", "none"}, "Parquet compression codec"));
    d.push_back(def("floe.storage.worker.enabled", st::boolean, "true",
                    "Run the storage worker that offloads sealed segments to Iceberg"));
    d.push_back(bounded(def("floe.storage.worker.tick-interval", st::duration, "10s",
                            "How often the storage worker looks for work"),
                        10, day_ms));
    d.push_back(bounded(def("floe.storage.worker.parallelism", st::integer, "2",
                            "Partitions the storage worker offloads at once"),
                        1, 64));
    d.push_back(bounded(def("floe.storage.worker.lease-duration", st::duration, "2m",
                            "How long the storage worker's lease lasts without renewal (with floe.local.type=redis: "
                            "each partition's lease, kept in Redis; a dead broker's partitions move to the others "
                            "within it)"),
                        second_ms, day_ms));
    d.push_back(def("floe.maintenance.enabled", st::boolean, "true",
                    "Let the storage worker compact, expire snapshots and delete orphan files of every tiered "
                    "topic's table on a schedule (floe maintain runs the same on demand)"));
    d.push_back(bounded(def("floe.maintenance.interval", st::duration, "1h",
                            "How often the storage worker maintains each table (the first run comes one interval "
                            "after start)"),
                        second_ms, 30 * day_ms));
    d.push_back(bounded(def("floe.maintenance.snapshot-max-age", st::duration, "5d",
                            "Snapshots older than this are expired, unless the table property "
                            "history.expire.max-snapshot-age-ms says otherwise"),
                        0, 3650 * day_ms));
    d.push_back(bounded(def("floe.maintenance.min-snapshots-to-keep", st::integer, "1",
                            "Snapshots kept whatever their age, unless the table property "
                            "history.expire.min-snapshots-to-keep says otherwise"),
                        1, 1000000));
    d.push_back(bounded(def("floe.maintenance.orphan-older-than", st::duration, "3d",
                            "Unreferenced files younger than this are never deleted (a writer may still be about "
                            "to commit them)"),
                        60 * second_ms, 3650 * day_ms));
    d.push_back(def("floe.auto-create-topics", st::boolean, "true",
                    "Create a topic when a client produces to or asks for an unknown one"));
    d.push_back(bounded(def("floe.default-partitions", st::integer, "1",
                            "Partitions of an auto-created topic"),
                        1, 10000));
    d.push_back(choice("floe.log.format", "text", {"text", "json"},
                       "Log format on stderr: text for people, json for log shippers"));
    d.push_back(choice("floe.log.level", "info",
                       {"trace", "debug", "info", "warn", "error", "critical", "off"}, "Log level"));

    // Kafka topic configs (KIP-405 names), the defaults for topics created without them.
    const std::string p(topic_defaults_prefix);
    d.push_back(def(p + "remote.storage.enable", st::boolean, "false",
                    "Offload the topic's sealed segments to its Iceberg table"));
    d.push_back(bounded(def(p + "local.retention.ms", st::integer, "-2",
                            "Local tier retention in ms; -2: use retention.ms"),
                        -2, INT64_MAX));
    d.push_back(bounded(def(p + "local.retention.bytes", st::integer, "-2",
                            "Local tier retention in bytes per partition; -2: use retention.bytes"),
                        -2, INT64_MAX));
    d.push_back(bounded(def(p + "retention.ms", st::integer, "604800000",
                            "Total retention in ms; -1: forever"),
                        -1, INT64_MAX));
    d.push_back(bounded(def(p + "retention.bytes", st::integer, "-1",
                            "Total retention in bytes per partition; -1: unlimited"),
                        -1, INT64_MAX));
    d.push_back(bounded(def(p + "segment.bytes", st::integer, "1073741824",
                            "Roll a segment at this many bytes"),
                        14, INT32_MAX));
    d.push_back(bounded(def(p + "segment.ms", st::integer, "604800000", "Roll a segment after this many ms"),
                        1, INT64_MAX));
    d.push_back(choice(p + "cleanup.policy", "delete", {"delete", "compact", "delete,compact", "compact,delete"},
                       "delete: retention removes old segments; compact: the log cleaner keeps the "
                       "latest record per key; or both"));
    d.push_back(bounded(def(p + "delete.retention.ms", st::integer, "86400000",
                            "Compacted topics: how long a tombstone stays once cleaned"),
                        0, INT64_MAX));
    d.push_back(bounded(def(p + "min.compaction.lag.ms", st::integer, "0",
                            "Compacted topics: shortest time a record stays uncompacted"),
                        0, INT64_MAX));
    d.push_back(bounded(def(p + "max.compaction.lag.ms", st::integer, "9223372036854775807",
                            "Compacted topics: longest time a record stays uncompacted"),
                        1, INT64_MAX));
    d.push_back(def(p + "min.cleanable.dirty.ratio", st::string, "0.5",
                    "Compacted topics: dirty share of the log that triggers cleaning (0 to 1)"));
    d.push_back(choice(p + "message.timestamp.type", "CreateTime", {"CreateTime", "LogAppendTime"},
                       "Keep the producer's timestamp or stamp the append time"));
    d.push_back(bounded(def(p + "max.message.bytes", st::integer, "1048588",
                            "Largest record batch accepted, in bytes"),
                        0, INT32_MAX));
    d.push_back(choice(p + "compression.type", "producer",
                       {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
                       "Compression kept on disk; producer keeps what the client sent"));
    d.push_back(bounded(def(p + "flush.messages", st::integer, "9223372036854775807",
                            "fsync a partition after this many messages"),
                        1, INT64_MAX));
    d.push_back(bounded(def(p + "flush.ms", st::integer, "9223372036854775807",
                            "fsync a partition after this many ms"),
                        0, INT64_MAX));
    d.push_back(bounded(def(p + "index.interval.bytes", st::integer, "4096",
                            "Bytes between offset index entries"),
                        0, INT32_MAX));
    d.push_back(choice(p + "floe.iceberg.mode", "raw", {"raw", "schema-id", "latest-schema"},
                       "How the Iceberg table holds values: raw bytes only, or also typed columns decoded "
                       "with the schema registry (schema-id: Confluent wire format; latest-schema: the "
                       "subject's latest schema)"));
    d.push_back(def(p + "floe.iceberg.partition-spec", st::string, "identity(stream_key)",
                    "Iceberg partition spec of topics' tables: transforms over Floe's columns (identity, "
                    "year, month, day, hour, bucket[N], truncate[W], void), e.g. day(message_ts), "
                    "bucket[16](key); a change on a live table is partition evolution"));
    d.push_back(choice(p + "floe.iceberg.encryption", "none", {"none", "uniform", "columns"},
                       "Parquet Modular Encryption of the topic's data files: none, uniform (every column and "
                       "the footer) or columns (floe.iceberg.encryption.columns only); needs "
                       "floe.encryption.provider"));
    d.push_back(optional(def(p + "floe.iceberg.encryption.columns", st::string, "",
                             "With floe.iceberg.encryption=columns: the columns encrypted (comma list, e.g. "
                             "key,value,headers); name:key-id gives a column its own key (value:pii), a keyring "
                             "id or a KMS key, so only holders of that key read it")));
    d.push_back(choice(p + "floe.iceberg.encryption.footer", "encrypted", {"encrypted", "plaintext"},
                       "Encrypted tables: an encrypted footer, or a plaintext signed one (readers without the "
                       "keys still read the columns left in clear)"));
    d.push_back(choice(p + "floe.iceberg.encryption.algorithm", "AES_GCM_V1", {"AES_GCM_V1", "AES_GCM_CTR_V1"},
                       "Encrypted tables: the Parquet encryption algorithm"));
    d.push_back(choice(p + "floe.iceberg.encryption.aad-prefix", "none", {"none", "stored", "supplied"},
                       "Encrypted tables: each file's AAD prefix is its table's identifier (namespace.table), "
                       "so a file copied into another table fails to decrypt; stored in the file, or supplied "
                       "by readers (not stored)"));
    // Kafka topic configs Floe accepts and reports without acting on them (the log module
    // validates each again against Kafka's rules; see src/log/README.md).
    auto stored = [&](std::string n, setting_type t, std::string dflt, int64_t lo, int64_t hi) {
        auto s = def(p + n, t, std::move(dflt),
                     "Kafka topic config, stored and reported; no effect in Floe");
        if (t == st::integer) s = bounded(std::move(s), lo, hi);
        if (s.default_text.empty()) s = optional(std::move(s));
        d.push_back(std::move(s));
    };
    stored("file.delete.delay.ms", st::integer, "60000", 0, INT64_MAX);
    stored("follower.replication.throttled.replicas", st::string, "", 0, 0);
    stored("leader.replication.throttled.replicas", st::string, "", 0, 0);
    stored("message.downconversion.enable", st::boolean, "true", 0, 0);
    stored("message.format.version", st::string, "3.0-IV1", 0, 0);
    stored("message.timestamp.after.max.ms", st::integer, "9223372036854775807", 0, INT64_MAX);
    stored("message.timestamp.before.max.ms", st::integer, "9223372036854775807", 0, INT64_MAX);
    stored("message.timestamp.difference.max.ms", st::integer, "9223372036854775807", 0, INT64_MAX);
    stored("min.insync.replicas", st::integer, "1", 1, INT32_MAX);
    stored("preallocate", st::boolean, "false", 0, 0);
    stored("segment.index.bytes", st::integer, "10485760", 4, INT32_MAX);
    stored("segment.jitter.ms", st::integer, "0", 0, INT64_MAX);
    stored("unclean.leader.election.enable", st::boolean, "false", 0, 0);
}

const registry& registry::instance() {
    static const registry r;
    return r;
}

const setting_def* registry::find(std::string_view name) const {
    auto it = std::find_if(_defs.begin(), _defs.end(), [&](auto& d) { return d.name == name; });
    return it == _defs.end() ? nullptr : &*it;
}

} // namespace floe::config
