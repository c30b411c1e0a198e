#!/usr/bin/python3
"""A Hive Metastore stand-in for Floe's tests: no real metastore runs here (Hive is Java, and
neither Debian nor npm packages it). Its Thrift service is generated at start-up by Debian's
thrift-compiler from Floe's own IDL subset (src/iceberg/hive_metastore.thrift) and served by
Debian's python3-thrift (binary protocol, strict messages, buffered unframed socket, as a real
metastore listens). Databases and tables are kept in memory.

Locks follow the metastore's semantics (TxnHandler, for locks outside transactions):
  - EXCLUSIVE conflicts with every other lock on the same table (or on its database at DB
    level); SHARED_WRITE with EXCLUSIVE and SHARED_WRITE; SHARED_READ only with EXCLUSIVE.
  - a lock that conflicts with an earlier lock (lower id) still held or waiting is WAITING,
    and becomes ACQUIRED on a check_lock once no earlier conflicting lock is left (first come,
    first served);
  - lock, check_lock and heartbeat refresh a lock's heartbeat; a lock not refreshed for
    --lock-timeout seconds (hive.txn.timeout) is dropped, whether waiting or acquired;
  - check_lock, heartbeat and unlock of an unknown (or expired) lock id raise
    NoSuchLockException.
alter_table_with_environment_context checks expected_parameter_key/value as metastores since
Hive 4 do (MetaException when the table's parameter differs). A table whose parameters carry
floe.test.stand-in.lose-next-alter-answer=true has its next alter applied and its answer lost
(the connection is closed without a reply; the parameter is dropped by that alter).

usage:
  metastore.py serve PORT [--lock-timeout S] [--events FILE]   (listens on 127.0.0.1:PORT)
  metastore.py table PORT DB NAME          -> JSON of the table (tableType, parameters, location)
  metastore.py hold-lock PORT DB NAME SECS -> takes an EXCLUSIVE lock (waiting for it), holds it
                                              SECS seconds with heartbeats, prints JSON with the
                                              metadata_location when granted and before unlock
  metastore.py lock-semantics PORT TIMEOUT -> checks the lock rules above over the wire (TIMEOUT:
                                              the server's --lock-timeout)
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IDL = os.path.join(HERE, "..", "..", "src", "iceberg", "hive_metastore.thrift")


def generated():
    """Generates the Python bindings of Floe's IDL into a fresh directory and imports them."""
    out = tempfile.mkdtemp(prefix="floe-hms-gen-")
    subprocess.run(["thrift", "--gen", "py", "-out", out, IDL], check=True)
    sys.path.insert(0, out)
    import floe_hms.ThriftHiveMetastore as service  # noqa: E402
    import floe_hms.ttypes as ttypes  # noqa: E402
    return service, ttypes, out


service, T, GEN_DIR = generated()

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.server import TServer  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

LOSE_ANSWER = "floe.test.stand-in.lose-next-alter-answer"
EXCLUSIVE, SHARED_WRITE, SHARED_READ = T.LockType.EXCLUSIVE, T.LockType.SHARED_WRITE, T.LockType.SHARED_READ


def conflicts(a, b):
    if a == EXCLUSIVE or b == EXCLUSIVE:
        return True
    return a == SHARED_WRITE and b == SHARED_WRITE


class Handler:
    def __init__(self, lock_timeout, events):
        self.mu = threading.Lock()
        self.dbs = {}
        self.tables = {}  # (db, name) -> Table
        self.locks = {}  # id -> dict(components, state, heartbeat, user)
        self.next_lock = 1
        self.lock_timeout = lock_timeout
        self.events = events

    def event(self, what, **kw):
        if not self.events:
            return
        with open(self.events, "a") as f:
            f.write(json.dumps(dict(t=time.time(), what=what, **kw)) + "\n")

    # --- databases and tables ---
    def create_database(self, database):
        with self.mu:
            if database.name in self.dbs:
                raise T.AlreadyExistsException("Database %s already exists" % database.name)
            self.dbs[database.name] = database

    def get_database(self, name):
        with self.mu:
            if name not in self.dbs:
                raise T.NoSuchObjectException("database %s not found" % name)
            return self.dbs[name]

    def get_all_databases(self):
        with self.mu:
            return sorted(self.dbs)

    def create_table(self, tbl):
        with self.mu:
            if tbl.dbName not in self.dbs:
                raise T.NoSuchObjectException("database %s not found" % tbl.dbName)
            key = (tbl.dbName, tbl.tableName)
            if key in self.tables:
                raise T.AlreadyExistsException("Table %s.%s already exists" % key)
            self.tables[key] = tbl
            self.event("create_table", table="%s.%s" % key, metadata_location=(tbl.parameters or {}).get("metadata_location"))

    def get_table(self, dbname, tbl_name):
        with self.mu:
            t = self.tables.get((dbname, tbl_name))
            if t is None:
                raise T.NoSuchObjectException("%s.%s table not found" % (dbname, tbl_name))
            return t

    def get_all_tables(self, db_name):
        with self.mu:
            return sorted(n for (d, n) in self.tables if d == db_name)

    def alter_table(self, dbname, tbl_name, new_tbl):
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    def alter_table_with_environment_context(self, dbname, tbl_name, new_tbl, environment_context):
        with self.mu:
            key = (dbname, tbl_name)
            old = self.tables.get(key)
            if old is None:
                raise T.InvalidOperationException("alter is not possible: table %s.%s does not exist" % key)
            props = (environment_context.properties if environment_context else None) or {}
            k = props.get("expected_parameter_key")
            if k is not None:
                have = (old.parameters or {}).get(k)
                if have != props.get("expected_parameter_value"):
                    raise T.MetaException("The table has been modified. The parameter value for key '%s' is '%s'. "
                                          "The expected was value was '%s'" % (k, have, props.get("expected_parameter_value")))
            if (new_tbl.dbName, new_tbl.tableName) != key:
                raise T.InvalidOperationException("renames are not supported by the stand-in")
            # Fault injection for tests: a table whose parameters carry LOSE_ANSWER has its next
            # alter applied and the answer lost (the connection closes without a reply, as when a
            # metastore or the network fails right after the change).
            lose = (old.parameters or {}).get(LOSE_ANSWER) == "true"
            if lose and new_tbl.parameters:
                new_tbl.parameters.pop(LOSE_ANSWER, None)
            self.tables[key] = new_tbl
            held = [i for i, l in self.locks.items() if any(c == key for c in l["tables"]) and l["state"] == T.LockState.ACQUIRED]
            self.event("alter_table", table="%s.%s" % key, metadata_location=(new_tbl.parameters or {}).get("metadata_location"),
                       locks_held=held, answer_lost=lose)
            if lose:
                raise TTransport.TTransportException(message="stand-in: the answer to this alter is lost")

    def drop_table(self, dbname, name, deleteData):
        with self.mu:
            if self.tables.pop((dbname, name), None) is None:
                raise T.NoSuchObjectException("%s.%s table not found" % (dbname, name))

    # --- locks ---
    def _expire(self):
        now = time.monotonic()
        for i in [i for i, l in self.locks.items() if now - l["heartbeat"] > self.lock_timeout]:
            self.event("lock_expired", lock=i)
            del self.locks[i]

    def _blocked(self, lock_id):
        mine = self.locks[lock_id]
        for other_id, other in self.locks.items():
            if other_id >= lock_id:
                continue
            for (mt, mkey) in mine["components"]:
                for (ot, okey) in other["components"]:
                    overlap = mkey[0] == okey[0] and (mkey[1] is None or okey[1] is None or mkey[1] == okey[1])
                    if overlap and conflicts(mt, ot):
                        return True
        return False

    def _state(self, lock_id):
        l = self.locks[lock_id]
        if l["state"] == T.LockState.WAITING and not self._blocked(lock_id):
            l["state"] = T.LockState.ACQUIRED
            self.event("lock_acquired", lock=lock_id, user=l["user"])
        return T.LockResponse(lockid=lock_id, state=l["state"])

    def lock(self, rqst):
        with self.mu:
            self._expire()
            comps = []
            for c in rqst.component:
                if c.level == T.LockLevel.TABLE and not c.tablename:
                    raise T.MetaException("a TABLE lock needs a table name")
                comps.append((c.type, (c.dbname, c.tablename if c.level != T.LockLevel.DB else None)))
            lock_id = self.next_lock
            self.next_lock += 1
            self.locks[lock_id] = dict(components=comps, state=T.LockState.WAITING, heartbeat=time.monotonic(),
                                       user=rqst.user, tables=[k for _, k in comps])
            self.event("lock", lock=lock_id, user=rqst.user, agent=rqst.agentInfo)
            return self._state(lock_id)

    def check_lock(self, rqst):
        with self.mu:
            self._expire()
            if rqst.lockid not in self.locks:
                raise T.NoSuchLockException("No such lock lockid:%d" % rqst.lockid)
            self.locks[rqst.lockid]["heartbeat"] = time.monotonic()
            return self._state(rqst.lockid)

    def unlock(self, rqst):
        with self.mu:
            self._expire()
            if self.locks.pop(rqst.lockid, None) is None:
                raise T.NoSuchLockException("No such lock lockid:%d" % rqst.lockid)
            self.event("unlock", lock=rqst.lockid)

    def heartbeat(self, ids):
        with self.mu:
            self._expire()
            if ids.lockid is None or ids.lockid not in self.locks:
                raise T.NoSuchLockException("No such lock lockid:%s" % ids.lockid)
            self.locks[ids.lockid]["heartbeat"] = time.monotonic()


def serve(port, lock_timeout, events):
    handler = Handler(lock_timeout, events)
    sock = TSocket.TServerSocket(host="127.0.0.1", port=port)
    server = TServer.TThreadedServer(service.Processor(handler), sock, TTransport.TBufferedTransportFactory(),
                                     TBinaryProtocol.TBinaryProtocolFactory(strictRead=True, strictWrite=True))
    server.daemon = True
    print("metastore stand-in on 127.0.0.1:%d (lock timeout %.1fs)" % (port, lock_timeout), flush=True)
    server.serve()


def connect(port):
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(30000)
    transport = TTransport.TBufferedTransport(sock)
    client = service.Client(TBinaryProtocol.TBinaryProtocol(transport, strictRead=True, strictWrite=True))
    transport.open()
    return client


def table_json(port, db, name):
    t = connect(port).get_table(db, name)
    return dict(tableType=t.tableType, parameters=t.parameters or {}, location=t.sd.location if t.sd else None,
                owner=t.owner)


def hold_lock(port, db, name, secs):
    c = connect(port)
    comp = T.LockComponent(type=EXCLUSIVE, level=T.LockLevel.TABLE, dbname=db, tablename=name)
    r = c.lock(T.LockRequest(component=[comp], user="other-client", hostname="test", agentInfo="hold-lock"))
    deadline = time.monotonic() + 120
    while r.state == T.LockState.WAITING and time.monotonic() < deadline:
        time.sleep(0.1)
        r = c.check_lock(T.CheckLockRequest(lockid=r.lockid))
    assert r.state == T.LockState.ACQUIRED, r
    granted = c.get_table(db, name).parameters.get("metadata_location")
    print(json.dumps(dict(event="granted", lock=r.lockid, metadata_location=granted)), flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        time.sleep(0.5)
        c.heartbeat(T.HeartbeatRequest(lockid=r.lockid))
    before = c.get_table(db, name).parameters.get("metadata_location")
    c.unlock(T.UnlockRequest(lockid=r.lockid))
    print(json.dumps(dict(event="released", lock=r.lockid, metadata_location=before)), flush=True)


def lock_semantics(port, timeout):
    """The stand-in's lock rules, checked over the wire with two clients."""
    a, b = connect(port), connect(port)
    db = "locktest_%d" % os.getpid()
    a.create_database(T.Database(name=db, description="", locationUri="", parameters={}))

    def req(t, table, user):
        return T.LockRequest(component=[T.LockComponent(type=t, level=T.LockLevel.TABLE, dbname=db, tablename=table)],
                             user=user, hostname="h")
    x = a.lock(req(EXCLUSIVE, "t", "a"))
    assert x.state == T.LockState.ACQUIRED, x
    y = b.lock(req(EXCLUSIVE, "t", "b"))
    assert y.state == T.LockState.WAITING, "EXCLUSIVE waits behind EXCLUSIVE"
    r = b.lock(req(SHARED_READ, "t", "b"))
    assert r.state == T.LockState.WAITING, "SHARED_READ waits behind EXCLUSIVE"
    other = b.lock(req(EXCLUSIVE, "u", "b"))
    assert other.state == T.LockState.ACQUIRED, "another table is not blocked"
    b.unlock(T.UnlockRequest(lockid=other.lockid))
    assert b.check_lock(T.CheckLockRequest(lockid=y.lockid)).state == T.LockState.WAITING
    a.unlock(T.UnlockRequest(lockid=x.lockid))
    assert b.check_lock(T.CheckLockRequest(lockid=y.lockid)).state == T.LockState.ACQUIRED, "granted once released"
    assert b.check_lock(T.CheckLockRequest(lockid=r.lockid)).state == T.LockState.WAITING, "first come, first served"
    b.unlock(T.UnlockRequest(lockid=y.lockid))
    assert b.check_lock(T.CheckLockRequest(lockid=r.lockid)).state == T.LockState.ACQUIRED
    s2 = a.lock(req(SHARED_READ, "t", "a"))
    assert s2.state == T.LockState.ACQUIRED, "two SHARED_READ locks share"
    for l in (r, s2):
        b.unlock(T.UnlockRequest(lockid=l.lockid))
    for call in (lambda: a.check_lock(T.CheckLockRequest(lockid=99999)),
                 lambda: a.unlock(T.UnlockRequest(lockid=99999)),
                 lambda: a.heartbeat(T.HeartbeatRequest(lockid=99999))):
        try:
            call()
            raise AssertionError("an unknown lock id was accepted")
        except T.NoSuchLockException:
            pass
    # Expiry: a lock left without heartbeats is dropped, and the lock waiting behind it is granted.
    x = a.lock(req(EXCLUSIVE, "t", "a"))
    y = b.lock(req(EXCLUSIVE, "t", "b"))
    assert x.state == T.LockState.ACQUIRED and y.state == T.LockState.WAITING
    deadline = time.monotonic() + timeout * 3 + 5
    while time.monotonic() < deadline:
        time.sleep(timeout / 4)
        if b.check_lock(T.CheckLockRequest(lockid=y.lockid)).state == T.LockState.ACQUIRED:
            break
    else:
        raise AssertionError("the waiting lock was not granted after the holder stopped heartbeating")
    try:
        a.check_lock(T.CheckLockRequest(lockid=x.lockid))
        raise AssertionError("an expired lock is still known")
    except T.NoSuchLockException:
        pass
    # Heartbeats keep a lock: held for twice the timeout, then still there.
    end = time.monotonic() + timeout * 2
    while time.monotonic() < end:
        time.sleep(timeout / 4)
        b.heartbeat(T.HeartbeatRequest(lockid=y.lockid))
    b.unlock(T.UnlockRequest(lockid=y.lockid))
    print("lock semantics: ok")


def main():
    cmd = sys.argv[1]
    port = int(sys.argv[2])
    if cmd == "serve":
        args = sys.argv[3:]
        lock_timeout = float(args[args.index("--lock-timeout") + 1]) if "--lock-timeout" in args else 300.0
        events = args[args.index("--events") + 1] if "--events" in args else None
        serve(port, lock_timeout, events)
    elif cmd == "table":
        print(json.dumps(table_json(port, sys.argv[3], sys.argv[4])))
    elif cmd == "hold-lock":
        hold_lock(port, sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif cmd == "lock-semantics":
        lock_semantics(port, float(sys.argv[3]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    import signal
    # with_metastore.sh stops the server with SIGTERM: exit through `finally` (removing the
    # generated code) instead of dying on the signal.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        main()
    finally:
        import shutil
        shutil.rmtree(GEN_DIR, ignore_errors=True)
