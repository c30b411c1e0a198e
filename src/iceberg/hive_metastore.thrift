// The subset of the Hive Metastore's Thrift service that Floe's hive catalog calls, written for
// Floe from the metastore's documented field ids (only the ids and types must match the real
// service; names are ours). The C++ client encodes these with iceberg/thrift_binary.h using the
// ids in iceberg/hive_metastore.h; the test stand-in (tests/hive/metastore.py) is generated from
// this file with `thrift --gen py`. Keep the three in step.

namespace py floe_hms

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string, string> parameters
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string, string> parameters
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  10: map<string, string> parameters
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string, string> parameters,
  12: string tableType
}

struct EnvironmentContext {
  1: map<string, string> properties
}

// Lock levels, types and states are the metastore's enum values.
enum LockLevel { DB = 1, TABLE = 2, PARTITION = 3 }
enum LockType { SHARED_READ = 1, SHARED_WRITE = 2, EXCLUSIVE = 3 }
enum LockState { ACQUIRED = 1, WAITING = 2, ABORT = 3, NOT_ACQUIRED = 4 }

struct LockComponent {
  1: required LockType type,
  2: required LockLevel level,
  3: required string dbname,
  4: optional string tablename,
  5: optional string partitionname
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: optional i64 txnid,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo
}

struct LockResponse {
  1: required i64 lockid,
  2: required LockState state
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: optional i64 txnid,
  3: optional i64 elapsed_ms
}

struct UnlockRequest {
  1: required i64 lockid
}

struct HeartbeatRequest {
  1: optional i64 lockid,
  2: optional i64 txnid
}

exception MetaException { 1: string message }
exception NoSuchObjectException { 1: string message }
exception AlreadyExistsException { 1: string message }
exception InvalidObjectException { 1: string message }
exception InvalidOperationException { 1: string message }
exception NoSuchTxnException { 1: string message }
exception TxnAbortedException { 1: string message }
exception TxnOpenException { 1: string message }
exception NoSuchLockException { 1: string message }

service ThriftHiveMetastore {
  void create_database(1: Database database)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<string> get_all_databases() throws (1: MetaException o1)
  void create_table(1: Table tbl)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
              4: NoSuchObjectException o4)
  Table get_table(1: string dbname, 2: string tbl_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1)
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl,
                                            4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)
  LockResponse lock(1: LockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)
  LockResponse check_lock(1: CheckLockRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3)
  void unlock(1: UnlockRequest rqst) throws (1: NoSuchLockException o1, 2: TxnOpenException o2)
  void heartbeat(1: HeartbeatRequest ids)
      throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3)
}
