#!/usr/bin/env python3
"""Chaos run: three floe brokers on one redis-server (loopback), one shared lake (a SQLite catalog
at one path, one file:// warehouse), tiering on with short segments, local retention and leases.
Workloads (tests/js/chaos): idempotent acks=all producers and a consumer group, each recording its
history; faults from a schedule drawn from random.Random(seed): kill -9 and restart of a broker,
SIGSTOP/SIGCONT pauses longer than the session timeout and the lease, redis-server kill -9 and
restart (AOF, fsync always), packet delay and loss on lo (tc netem, with --netem), partitions of a
broker from redis-server, its clients or its peers (--netns: network namespaces joined by a bridge,
cut by blackhole routes; netns.py). Then everything is healed,
every partition is read from offset 0 through Kafka, the Iceberg table is read with DuckDB, and
checker.py looks for anomalies. Writes report.json, report.txt and timeline.svg to the work
directory; exits 1 when any anomaly is found (the seed is printed, and the same seed replays the
same fault schedule).

usage: chaos.py FLOE_BIN [--seconds N] [--seed S] [--work DIR] [--keep] [--netem] [--netns] [--faults kill,pause,...]
"""
import argparse
import base64
import glob
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checker import check  # noqa: E402
import netns  # noqa: E402

JS = os.path.join(HERE, "..", "js", "chaos")
ICEBERG_FILES = os.path.join(HERE, "..", "e2e", "iceberg_files.py")
FAULT_PROXY = os.path.join(HERE, "..", "s3", "fault_proxy.py")
TOPIC = "chaos.t"
TABLE = "chaos_t"
PARTITIONS = 4
LEASE_MS = 3000
SESSION_MS = 1500
BROKERS = (1, 2, 3)  # --brokers N makes it (1..N)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def free_cluster_port():
    """A free port a Redis Cluster node can use: its bus port (+10000) must exist too."""
    for _ in range(1000):
        p = free_port()
        if p <= 55535:
            return p
    raise RuntimeError("no free port below 55536 for a Redis Cluster node")


def log(msg):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", flush=True)


FAULT_WEIGHTS = {"kill": 4, "pause": 3, "redis": 1.5, "netem": 1.5, "partition": 3, "pg": 1.5, "disk": 1.5,
                 "clock": 2, "s3err": 2}
# How far a `clock` fault moves one broker's wall clock (seconds), as a bad NTP step or a VM
# resumed from a snapshot would; its monotonic clock keeps running (libfaketime).
CLOCK_JUMPS = (-86400, -3600, -600, -60, 60, 600, 3600, 86400)
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
# What a partition of one broker cuts it from (--netns): everyone, redis-server only (it keeps its
# clients but loses the hot tier, its leases and the registry), its clients only (it keeps Redis and
# its leases; the clients go to the others), or the other brokers only.
PARTITIONS_OF = ("isolate", "redis", "clients", "peers")
# With the lake on PostgreSQL and S3 (--lake s3pg), also: cut from the catalog and the object store.
LAKE_PARTITIONS = ("lake", "catalog", "s3")
# What an `s3err` fault makes of the object store (--lake s3pg): the share of requests answered 500
# InternalError / 503 SlowDown, dropped before or after they reach S3, or reset mid-upload
# (tests/s3/fault_proxy.py), and a delay before each request, from slow to past a request timeout.
S3ERR_RATES = (0.2, 0.5, 1.0)
S3ERR_DELAYS_MS = (0, 300, 3000)
BUCKET = "chaos-lake"


def make_schedule(seed, seconds, kinds=tuple(FAULT_WEIGHTS), variants=PARTITIONS_OF, redis_down=(0.3, 4.0)):
    """The fault schedule of a run: [{at, kind, target, duration}], at in seconds from the start of
    the workload. Only the seed, the length and the fault kinds drawn from decide it (a schedule
    drawn without `partition` is the one it was before that kind existed)."""
    rng = random.Random(seed)
    out = []
    t = rng.uniform(2.0, 6.0)
    lease = LEASE_MS / 1000
    kinds = [k for k in FAULT_WEIGHTS if k in kinds]
    while t < seconds - 3:
        kind = rng.choices(kinds, weights=[FAULT_WEIGHTS[k] for k in kinds])[0]
        if kind == "kill":
            f = {"kind": kind, "target": f"broker-{rng.choice(BROKERS)}", "duration": rng.uniform(0.5, 6.0)}
        elif kind == "pause":
            # Longer than the session timeout and the lease: the paused broker wakes up as a zombie.
            f = {"kind": kind, "target": f"broker-{rng.choice(BROKERS)}", "duration": rng.uniform(lease + 0.5, lease + 5)}
        elif kind == "redis":
            f = {"kind": kind, "target": "redis", "duration": rng.uniform(*redis_down)}
        elif kind == "pg":
            f = {"kind": kind, "target": "pg", "duration": rng.uniform(0.5, 6.0)}
        elif kind == "disk":
            f = {"kind": kind, "target": "disk", "duration": rng.uniform(1.0, 8.0)}
        elif kind == "partition":
            f = {"kind": kind, "target": f"broker-{rng.choice(BROKERS)}", "variant": rng.choice(variants),
                 "duration": rng.uniform(1.0, lease + 6)}
        elif kind == "clock":
            f = {"kind": kind, "target": f"broker-{rng.choice(BROKERS)}", "duration": rng.uniform(2.0, 10.0),
                 "jump_s": rng.choice(CLOCK_JUMPS)}
        elif kind == "s3err":
            f = {"kind": kind, "target": "s3", "duration": rng.uniform(2.0, 10.0),
                 "rate": rng.choice(S3ERR_RATES), "delay_ms": rng.choice(S3ERR_DELAYS_MS)}
        else:
            f = {"kind": kind, "target": "lo", "duration": rng.uniform(2.0, 8.0),
                 "delay_ms": rng.randint(5, 80), "loss_pct": rng.choice([0, 0.5, 1, 3])}
        f["at"] = round(t, 3)
        f["duration"] = round(min(f["duration"], seconds - t), 3)
        out.append(f)
        t += rng.expovariate(1 / 5.0) + 0.5
    return out


class Cluster:
    def __init__(self, floe, work, topo=None, lake="sqlite", tier="redis", disk=None, clock=False):
        self.floe = floe
        # clock: every broker runs under libfaketime reading its offset from <work>/b<N>/clock on
        # every call (FAKETIME_NO_CACHE), wall clock only; `clock` faults write it.
        self.clock = clock
        self.work = work
        # The brokers' data directories, the catalog and the warehouse: on a tmpfs of its own
        # (--disk-mb) that the disk fault fills, else in the work directory.
        self.disk = disk
        store = disk or work
        # redis: the brokers share redis-server; redis-cluster: a Redis Cluster of three masters,
        # each with one replica, acks=all waiting for it (min-replicas 1); embedded: one broker,
        # its own segment log.
        self.tier = tier
        self.lake = lake  # sqlite: SQLite catalog + file:// warehouse; s3pg: PostgreSQL catalog + S3 (moto)
        self.pg_port = free_port()
        self.s3_port = free_port()
        # The brokers reach S3 through a fault proxy beside moto (s3err faults); the checker
        # reads moto directly.
        self.s3_proxy_port = free_port()
        self.s3_control = os.path.join(work, "s3-faults.json")
        self.pg_bin = None
        self.s3 = None
        self.s3_proxy = None
        self.topo = topo  # a netns.Topology, or None: everything on 127.0.0.1
        self.redis_port = free_port()
        self.redis = None
        self.cluster_ports = [free_cluster_port() for _ in range(6)] if tier == "redis-cluster" else []
        self.cluster_nodes = {}  # port -> Popen
        self.cluster_created = False
        self.killed_node = None
        self.brokers = {b: {"kport": free_port(), "hport": free_port(), "proc": None, "state": "down"} for b in BROKERS}
        self.env = dict(os.environ, FLOE_SCHEMA_REGISTRY_LISTEN="127.0.0.1:0")
        self.catalog = os.path.join(store, "catalog.db")
        self.warehouse = os.path.join(store, "warehouse")

    def host(self, member):
        return self.topo.addr[member] if self.topo else "127.0.0.1"

    def prefix(self, member):
        return self.topo.prefix(member) if self.topo else []

    def bootstrap(self):
        return ",".join(f"{self.host(f'b{b}')}:{self.brokers[b]['kport']}" for b in BROKERS)

    def http(self, b):
        return f"http://{self.host(f'b{b}')}:{self.brokers[b]['hport']}"

    def redis_cli(self, port, *args):
        return subprocess.run(["redis-cli", "-h", self.host("redis"), "-p", str(port), *args],
                              capture_output=True, text=True, timeout=30)

    def start_cluster_node(self, port):
        d = os.path.join(self.work, "redis", str(port))
        os.makedirs(d, exist_ok=True)
        self.cluster_nodes[port] = subprocess.Popen(
            self.prefix("redis") + ["redis-server", "--port", str(port), "--bind", self.host("redis"), "--protected-mode", "no",
                                    "--dir", d, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                                    "--cluster-enabled", "yes", "--cluster-config-file", os.path.join(d, "nodes.conf"),
                                    "--cluster-node-timeout", "2000", "--logfile", os.path.join(d, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if "PONG" in self.redis_cli(port, "ping").stdout:
                return True
            time.sleep(0.1)
        return False

    def cluster_ok(self, ports):
        return all("cluster_state:ok" in self.redis_cli(p, "cluster", "info").stdout for p in ports)

    def start_redis_cluster(self):
        """Six nodes; the first start makes them three masters with a replica each."""
        if not all(self.start_cluster_node(p) for p in self.cluster_ports):
            return False
        if not self.cluster_created:
            r = subprocess.run(self.prefix("redis") + ["redis-cli", "--cluster", "create"]
                               + [f"{self.host('redis')}:{p}" for p in self.cluster_ports]
                               + ["--cluster-replicas", "1", "--cluster-yes"], capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                log(f"redis-cli --cluster create failed: {r.stdout[-500:]} {r.stderr[-500:]}")
                return False
            self.cluster_created = True
        end = time.time() + 30
        while time.time() < end:
            if self.cluster_ok(self.cluster_ports):
                return True
            time.sleep(0.2)
        return False

    def cluster_masters(self):
        """The ports of the nodes that are masters now (CLUSTER NODES through any live node)."""
        for p in self.cluster_ports:
            if p == self.killed_node:
                continue
            out = self.redis_cli(p, "cluster", "nodes").stdout
            if out:
                return [int(l.split()[1].split("@")[0].rsplit(":", 1)[1]) for l in out.splitlines()
                        if "master" in l.split()[2] and "fail" not in l.split()[2]]
        return []

    def kill_cluster_master(self, pick):
        """kill -9 of one master: its replica takes over after the node timeout (2 s)."""
        masters = self.cluster_masters()
        if not masters:
            return None
        port = sorted(masters)[pick % len(masters)]
        proc = self.cluster_nodes.get(port)
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        self.killed_node = port
        return port

    def restart_cluster_node(self):
        """The killed node starts again on its AOF and nodes.conf: it rejoins (as a replica when
        its replica was promoted meanwhile)."""
        port, self.killed_node = self.killed_node, None
        if port is None:
            return True
        return self.start_cluster_node(port)

    def start_redis(self):
        if self.tier == "redis-cluster":
            return self.start_redis_cluster()
        d = os.path.join(self.work, "redis")
        os.makedirs(d, exist_ok=True)
        self.redis = subprocess.Popen(
            self.prefix("redis") + ["redis-server", "--port", str(self.redis_port), "--bind", self.host("redis"), "--protected-mode", "no", "--dir", d, "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--logfile", os.path.join(d, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            r = subprocess.run(["redis-cli", "-h", self.host("redis"), "-p", str(self.redis_port), "ping"],
                               capture_output=True, text=True)
            if "PONG" in r.stdout:
                return True
            time.sleep(0.1)
        return False

    def kill_redis(self):
        if self.tier == "redis-cluster":
            for p in self.cluster_nodes.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
            return
        if self.redis:
            self.redis.kill()
            self.redis.wait()
            self.redis = None

    def start_broker(self, b, wait=True):
        br = self.brokers[b]
        d = os.path.join(self.work, f"b{b}")
        os.makedirs(d, exist_ok=True)
        logf = os.path.join(d, "floe.log")
        seen = os.path.getsize(logf) if os.path.exists(logf) else 0
        sets = {
            "floe.data-dir": os.path.join(self.disk, f"b{b}") if self.disk else os.path.join(d, "data"),
            "floe.broker.id": b,
            "floe.kafka.listen": f"{self.host(f'b{b}')}:{br['kport']}",
            "floe.http.listen": f"{self.host(f'b{b}')}:{br['hport']}",
            **({"floe.local.type": "redis", "floe.local.redis.uri": f"redis://{self.host('redis')}:{self.redis_port}"}
               if self.tier == "redis" else {}),
            **({"floe.local.type": "redis",
                "floe.local.redis.uri": ",".join(f"redis://{self.host('redis')}:{p}" for p in self.cluster_ports),
                "floe.local.redis.min-replicas": 1}
               if self.tier == "redis-cluster" else {}),
            # One lake for the cluster, named explicitly on every broker.
            "floe.storage.remote.path": f"file://{self.warehouse}",
            "floe.storage.remote.catalog.type": "sql",
            "floe.storage.remote.catalog.uri": f"sqlite://{self.catalog}",
            **self.lake_settings(),
            "floe.namespace": "floe",
            "floe.topic-defaults.remote.storage.enable": "true",
            "floe.topic-defaults.segment.ms": 1000,
            "floe.topic-defaults.local.retention.ms": 4000,
            "floe.storage.worker.tick-interval": "300ms",
            "floe.storage.worker.lease-duration": f"{LEASE_MS}ms",
            "floe.cluster.session-timeout": f"{SESSION_MS}ms",
            "floe.default-partitions": PARTITIONS,
        }
        args = self.prefix(f"b{b}") + [self.floe, "serve"]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        env = self.env
        if self.clock:
            clock_file = os.path.join(d, "clock")
            if not os.path.exists(clock_file):
                self.set_clock(b, 0)
            env = dict(self.env, LD_PRELOAD=FAKETIME_LIB, FAKETIME_TIMESTAMP_FILE=clock_file, FAKETIME_NO_CACHE="1",
                       FAKETIME_DONT_FAKE_MONOTONIC="1")
        with open(os.path.join(d, "floe.out"), "ab") as out, open(logf, "ab") as err:
            br["proc"] = subprocess.Popen(args, stdout=out, stderr=err, env=env)
        br["state"] = "starting"
        if not wait:
            return True
        return self.wait_up(b, seen)

    def wait_up(self, b, seen, secs=20):
        br = self.brokers[b]
        logf = os.path.join(self.work, f"b{b}", "floe.log")
        end = time.time() + secs
        while time.time() < end:
            with open(logf, "rb") as f:
                f.seek(seen)
                if b"floe is up" in f.read():
                    br["state"] = "up"
                    return True
            if br["proc"].poll() is not None:
                br["state"] = "down"
                return False
            time.sleep(0.05)
        return False

    def kill_broker(self, b):
        br = self.brokers[b]
        if br["proc"] and br["proc"].poll() is None:
            br["proc"].send_signal(signal.SIGCONT)
            br["proc"].kill()
            br["proc"].wait()
        br["state"] = "down"

    def set_clock(self, b, offset_s):
        """Moves broker b's wall clock `offset_s` seconds from the real one (libfaketime re-reads
        the file on every clock call); written whole through a rename, so it never reads half."""
        d = os.path.join(self.work, f"b{b}")
        tmp = os.path.join(d, "clock.tmp")
        with open(tmp, "w") as f:
            f.write(f"{offset_s:+d}\n")
        os.replace(tmp, os.path.join(d, "clock"))

    def signal_broker(self, b, sig):
        br = self.brokers[b]
        if br["proc"] and br["proc"].poll() is None:
            br["proc"].send_signal(sig)
            return True
        return False

    def lake_settings(self):
        if self.lake != "s3pg":
            return {}
        return {
            "floe.storage.remote.path": f"s3://{BUCKET}/wh",
            "floe.storage.remote.s3.endpoint": f"http://{self.host('s3')}:{self.s3_proxy_port}",
            "floe.storage.remote.s3.path-style-access": "true",
            "floe.storage.remote.s3.region": "us-east-1",
            "floe.storage.remote.s3.access-key-id": "chaos",
            "floe.storage.remote.s3.secret-access-key": "chaos",
            "floe.storage.remote.catalog.uri": self.pg_uri(),
        }

    def pg_uri(self):
        return f"postgresql://floe@{self.host('pg')}:{self.pg_port}/postgres"

    def s3_endpoint(self):
        return f"http://{self.host('s3')}:{self.s3_port}"

    def _pg(self, *args):
        as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run(self.prefix("pg") + as_pg + [os.path.join(self.pg_bin, args[0]), *args[1:]],
                              capture_output=True, text=True)

    def start_pg(self):
        d = os.path.join(self.work, "pg")
        if self.pg_bin is None:
            bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
            if not bins:
                raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
            self.pg_bin = bins[-1]
            os.makedirs(d, exist_ok=True)
            os.chmod(self.work, 0o755)
            if os.geteuid() == 0:
                shutil.chown(d, "postgres")
            r = self._pg("initdb", "-D", os.path.join(d, "data"), "-A", "trust", "-U", "floe")
            if r.returncode != 0:
                raise RuntimeError(f"initdb failed: {r.stderr[-500:]}")
            with open(os.path.join(d, "data", "pg_hba.conf"), "a") as f:
                f.write("host all all 10.77.0.0/16 trust\n")
        r = self._pg("pg_ctl", "-D", os.path.join(d, "data"), "-l", os.path.join(d, "log"), "-w", "-t", "30", "-o",
                     f"-p {self.pg_port} -k {d} -c listen_addresses={self.host('pg')} -c fsync=off", "start")
        return r.returncode == 0

    def fill_disk(self):
        """Takes all the free space of the tmpfs but a few pages: writes fail with ENOSPC."""
        st = os.statvfs(self.disk)
        free = st.f_bavail * st.f_frsize - 4 * st.f_frsize
        path = os.path.join(self.disk, "ballast")
        with open(path, "wb") as f:
            if free > 0:
                os.posix_fallocate(f.fileno(), 0, free)
        return free

    def free_disk(self):
        try:
            os.unlink(os.path.join(self.disk, "ballast"))
        except FileNotFoundError:
            pass

    def kill_pg(self):
        """Stops PostgreSQL at once, as a crash would (no checkpoint, no goodbye to clients)."""
        self._pg("pg_ctl", "-D", os.path.join(self.work, "pg", "data"), "-m", "immediate", "stop")

    def start_s3(self):
        """moto_server (S3 in memory: never killed, only cut off) and the lake's bucket."""
        log = open(os.path.join(self.work, "moto.log"), "w")
        self.s3 = subprocess.Popen(self.prefix("s3") + ["moto_server", "-H", self.host("s3"), "-p", str(self.s3_port)],
                                   stdout=log, stderr=log)
        end = time.time() + 30
        while time.time() < end:
            try:
                socket.create_connection((self.host("s3"), self.s3_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            return False
        self.s3_client().create_bucket(Bucket=BUCKET)
        proxy_log = open(os.path.join(self.work, "s3-proxy.log"), "w")
        self.s3_proxy = subprocess.Popen(
            self.prefix("s3") + [sys.executable, FAULT_PROXY, "serve", self.host("s3"), str(self.s3_proxy_port),
                                 self.s3_endpoint(), self.s3_control], stdout=proxy_log, stderr=proxy_log)
        end = time.time() + 30
        while time.time() < end:
            try:
                socket.create_connection((self.host("s3"), self.s3_proxy_port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def set_s3_faults(self, rate, delay_ms):
        """What the fault proxy does to the brokers' S3 requests from now on (0, 0: nothing)."""
        tmp = self.s3_control + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rate": rate, "delay_ms": delay_ms}, f)
        os.replace(tmp, self.s3_control)

    def s3_faults_injected(self):
        """The faults the proxy injected, by kind."""
        out = {}
        try:
            with open(self.s3_control + ".log") as f:
                for line in f:
                    kind = line.split()[1]
                    out[kind] = out.get(kind, 0) + 1
        except FileNotFoundError:
            pass
        return out

    def s3_client(self):
        import boto3
        return boto3.client("s3", endpoint_url=self.s3_endpoint(), region_name="us-east-1",
                            aws_access_key_id="chaos", aws_secret_access_key="chaos")

    def stop_all(self):
        for b in BROKERS:
            self.kill_broker(b)
        if self.tier in ("redis", "redis-cluster"):
            self.kill_redis()
        if self.lake == "s3pg":
            if self.pg_bin:
                self.kill_pg()
            for p in (self.s3_proxy, self.s3):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()


def netem(on, delay_ms=0, loss_pct=0, topo=None):
    """Delay and loss: on every member's link inside its namespace with --netns (the brokers do
    not talk over the machine's lo then), else on lo."""
    if topo is not None:
        return topo.netem(on, delay_ms, loss_pct)
    if on:
        cmd = ["tc", "qdisc", "replace", "dev", "lo", "root", "netem", "delay", f"{delay_ms}ms"]
        if loss_pct:
            cmd += ["loss", f"{loss_pct}%"]
    else:
        cmd = ["tc", "qdisc", "del", "dev", "lo", "root"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def netem_available(topo=None):
    ok, _ = netem(True, 1, 0, topo)
    if ok:
        netem(False, topo=topo)
    return ok


def partition_pairs(b, variant):
    """The (member, member) pairs a partition of broker b cuts."""
    me, peers = f"b{b}", [f"b{o}" for o in BROKERS if o != b]
    if variant == "redis":
        return [(me, "redis")]
    if variant == "clients":
        return [(me, netns.CLIENTS)]
    if variant == "peers":
        return [(me, p) for p in peers]
    if variant == "lake":
        return [(me, "pg"), (me, "s3")]
    if variant == "catalog":
        return [(me, "pg")]
    if variant == "s3":
        return [(me, "s3")]
    return [(me, "redis"), (me, netns.CLIENTS)] + [(me, p) for p in peers]


class Faults:
    """Applies and heals the schedule's faults; records what was done and when."""

    def __init__(self, cluster, t0, use_netem):
        self.c = cluster
        self.t0 = t0
        self.use_netem = use_netem
        self.applied = []     # {kind, target, start, end, note}
        self.active = {}      # target -> record
        self.pending_restarts = {}

    def now(self):
        return time.time() - self.t0

    def _skip(self, rec, why):
        """Records a fault of the schedule that was not applied, and why."""
        rec["note"] = f"skipped: {why}"
        rec["end"] = rec["start"]
        self.applied.append(rec)
        return None

    def apply(self, f):
        target, kind = f["target"], f["kind"]
        rec = {"kind": kind, "target": target, "start": round(self.now(), 3), "end": None,
               "planned_at": f["at"], "planned_duration": f["duration"]}
        if target in self.active:
            return self._skip(rec, f"{target} already under {self.active[target]['kind']}")
        if kind in ("kill", "pause"):
            b = int(target.split("-")[1])
            if self.c.brokers[b]["state"] not in ("up", "starting"):
                return self._skip(rec, "broker not running")
            if kind == "kill":
                self.c.kill_broker(b)
            else:
                self.c.signal_broker(b, signal.SIGSTOP)
                self.c.brokers[b]["state"] = "paused"
        elif kind == "redis" and self.c.tier == "redis-cluster":
            port = self.c.kill_cluster_master(int(f["at"] * 1000))
            if port is None:
                return self._skip(rec, "no live master found")
            rec["note"] = f"master :{port} killed -9"
        elif kind == "redis":
            self.c.kill_redis()
        elif kind == "disk":
            if self.c.disk is None:
                return self._skip(rec, "no tmpfs (--disk-mb)")
            try:
                rec["note"] = f"{self.c.fill_disk() >> 20} MiB taken: the disk is full"
            except OSError as e:
                rec["note"] = f"filled up to {e.strerror}"
        elif kind == "pg":
            if self.c.lake != "s3pg":
                return self._skip(rec, "the catalog is not PostgreSQL (--lake s3pg)")
            self.c.kill_pg()
        elif kind == "partition":
            if self.c.topo is None:
                return self._skip(rec, "no network namespaces (--netns)")
            rec["pairs"] = partition_pairs(int(target.split("-")[1]), f["variant"])
            for a, b in rec["pairs"]:
                self.c.topo.cut(a, b)
            rec["note"] = f"{f['variant']}: cut " + ", ".join(f"{a}|{b}" for a, b in rec["pairs"])
        elif kind == "clock":
            if not self.c.clock:
                return self._skip(rec, f"libfaketime unavailable ({FAKETIME_LIB})")
            self.c.set_clock(int(target.split("-")[1]), f["jump_s"])
            rec["note"] = f"wall clock {f['jump_s']:+d} s"
        elif kind == "s3err":
            if self.c.lake != "s3pg":
                return self._skip(rec, "the object store is not S3 (--lake s3pg)")
            self.c.set_s3_faults(f["rate"], f["delay_ms"])
            rec["note"] = f"{f['rate']:.0%} of S3 requests fail, {f['delay_ms']} ms delay"
        elif kind == "netem":
            if not self.use_netem:
                return self._skip(rec, "tc netem unavailable")
            ok, err = netem(True, f["delay_ms"], f["loss_pct"], self.c.topo)
            rec["note"] = f"delay {f['delay_ms']}ms loss {f['loss_pct']}%" + ("" if ok else f" (failed: {err})")
        self.active[target] = rec
        self.applied.append(rec)
        log(f"fault: {kind} {target} for {f['duration']:.1f}s {rec.get('note', '')}")
        return rec

    def heal(self, target):
        rec = self.active.pop(target, None)
        if rec is None:
            return
        kind = rec["kind"]
        if kind == "kill":
            b = int(target.split("-")[1])
            ok = self.c.start_broker(b, wait=True)
            if not ok:
                rec["note"] = (rec.get("note", "") + " restart failed once; retried").strip()
                self.c.kill_broker(b)
                ok = self.c.start_broker(b, wait=True)
            if not ok:
                # (a broker refuses to start while Redis is down): supervise() tries again every 2 s
                rec["note"] = (rec.get("note", "") + " restart failed; retried until it starts").strip()
                self.c.kill_broker(b)
                self.c.brokers[b]["state"] = "restart"
                self.c.brokers[b]["retry_at"] = time.time() + 2
        elif kind == "pause":
            b = int(target.split("-")[1])
            self.c.signal_broker(b, signal.SIGCONT)
            self.c.brokers[b]["state"] = "up"
        elif kind == "redis" and self.c.tier == "redis-cluster":
            # Whether the replica took over while it was down (the node timeout is 2 s).
            port = self.c.killed_node
            promoted = port is not None and port not in self.c.cluster_masters()
            if not self.c.restart_cluster_node():
                rec["note"] = rec.get("note", "") + "; restart failed"
            else:
                rec["note"] = rec.get("note", "") + ("; its replica took over" if promoted else "; back before a failover")
        elif kind == "redis":
            if not self.c.start_redis():
                rec["note"] = "redis restart failed"
        elif kind == "disk":
            self.c.free_disk()
        elif kind == "pg":
            if not self.c.start_pg():
                rec["note"] = "PostgreSQL restart failed"
        elif kind == "netem":
            netem(False, topo=self.c.topo)
        elif kind == "s3err":
            self.c.set_s3_faults(0, 0)
        elif kind == "clock":
            self.c.set_clock(int(target.split("-")[1]), 0)
        elif kind == "partition":
            for a, b in rec["pairs"]:
                self.c.topo.heal(a, b)
        rec["end"] = round(self.now(), 3)
        log(f"healed: {kind} {target}")

    def supervise(self):
        """A broker that exited by itself (not killed here) is noted and started again, as a
        supervisor would; one whose restart failed is tried again every 2 s."""
        for b in BROKERS:
            br = self.c.brokers[b]
            if br["state"] == "restart" and time.time() >= br.get("retry_at", 0):
                if self.c.start_broker(b, wait=True):
                    log(f"broker {b} started again after a failed restart")
                    self.applied.append({"kind": "exit", "target": f"broker-{b}", "start": round(self.now(), 3),
                                         "end": round(self.now(), 3),
                                         "note": f"broker {b} started again after a failed restart"})
                else:
                    self.c.kill_broker(b)
                    br["state"] = "restart"
                    br["retry_at"] = time.time() + 2
                continue
            if br["state"] in ("up", "paused") and br["proc"] is not None and br["proc"].poll() is not None:
                rc = br["proc"].returncode
                rec = {"kind": "exit", "target": f"broker-{b}", "start": round(self.now(), 3),
                       "note": f"broker {b} exited by itself with status {rc}; restarted"}
                log(rec["note"])
                br["state"] = "down"
                self.c.start_broker(b)
                rec["end"] = round(self.now(), 3)
                self.applied.append(rec)

    def heal_all(self):
        for target in list(self.active):
            self.heal(target)


def wait_workers(procs, kind, timeout):
    """Waits for the workload processes of `kind` (told to stop) to exit; kills a straggler."""
    for k, p in procs:
        if k == kind:
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()


def read_history(paths):
    events = []
    for p in paths:
        if not os.path.exists(p):
            continue
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        events.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a line torn by a kill at the end
    return events


def lookup_one(cluster, b, p, o):
    """One HTTP lookup by offset on broker b: {"partition", "offset", "broker", "t", "status",
    "records" | "error"}."""
    url = f"{cluster.http(b)}/v1/topics/{TOPIC}/partitions/{p}/records?offset={o}&limit=1"
    q = {"partition": int(p), "offset": o, "broker": b, "t": time.time() * 1000}
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            q["status"] = r.status
            body = json.loads(r.read())
    except urllib.error.HTTPError as e:
        q["status"] = e.code
        q["error"] = e.read()[:300].decode(errors="replace")
        return q
    except (OSError, ValueError) as e:
        q["status"] = None
        q["error"] = str(e)
        return q
    recs = []
    for rec in body.get("records", []):
        v = rec.get("value")
        if v is not None and rec.get("value_encoding") == "base64":
            v = base64.b64decode(v).decode(errors="replace")
        recs.append([rec["offset"], v])
    q["records"] = recs
    q["next_offset"] = body.get("next_offset")
    return q


class LiveLookups(threading.Thread):
    """HTTP lookups while the faults run: every ~100 ms, an acknowledged offset drawn from the
    producers' histories, asked of a random broker. A broker that is down, paused or cut off may
    fail to answer; one that answers 200 must answer the value the final read finds there."""

    def __init__(self, cluster, paths, seed):
        super().__init__(daemon=True)
        self.cluster, self.paths, self.rng = cluster, paths, random.Random(seed ^ 0x5eed)
        self.pos = {p: 0 for p in paths}
        self.acked = []
        self.results = []
        self.stop = threading.Event()

    def _more_acks(self):
        for path in self.paths:
            if not os.path.exists(path):
                continue
            with open(path) as f:
                f.seek(self.pos[path])
                chunk = f.read()
            end = chunk.rfind("\n") + 1  # a torn last line waits for the next read
            self.pos[path] += len(chunk[:end].encode())
            for line in chunk[:end].splitlines():
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if e.get("type") == "ack":
                    self.acked += [(e["partition"], o) for o, _ in e["acks"]]

    def run(self):
        while not self.stop.wait(0.1):
            self._more_acks()
            if self.acked:
                p, o = self.rng.choice(self.acked)
                q = lookup_one(self.cluster, self.rng.choice(BROKERS), p, o)
                q["during_faults"] = True
                self.results.append(q)


def http_lookups(cluster, final, rng, per_partition):
    """Records by offset through each broker's HTTP API (/v1/topics/{t}/partitions/{p}/records),
    at offsets drawn from the seed, for the checker to compare with the final Kafka read."""
    out = []
    for p, d in final["partitions"].items():
        offsets = [o for o, _ in d["records"]]
        for o in sorted(rng.sample(offsets, min(per_partition, len(offsets)))):
            out.append(lookup_one(cluster, BROKERS[len(out) % len(BROKERS)], p, o))
    return out


def mirror_bucket(cluster, mirror, current_metadata):
    """Downloads with boto3 the lake's objects not downloaded yet (they are immutable): data files,
    manifests and manifest lists, and of the metadata JSON files only the current one (each one
    holds the whole snapshot log: all of them are gigabytes after a long run)."""
    s3 = cluster.s3_client()
    token = None
    while True:
        kw = {"Bucket": BUCKET, "Prefix": "wh/"}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        for o in page.get("Contents", []):
            if o["Key"].endswith(".metadata.json") and f"s3://{BUCKET}/{o['Key']}" != current_metadata:
                continue
            path = os.path.join(mirror, o["Key"][len("wh/"):])
            if os.path.exists(path) and os.path.getsize(path) == o["Size"]:
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            s3.download_file(BUCKET, o["Key"], path)
        if not page.get("IsTruncated"):
            return
        token = page["NextContinuationToken"]


# The offload rate (records/s) a loaded machine keeps up at the end of a run, for the lake wait's
# budget: the lake may be this far behind when the faults end (a 30-minute run on a machine shared
# with four builds ended 143,793 records behind).
TABLE_WAIT_RATE = 2000


def table_wait_budget(base, seconds, log_records):
    """Seconds the end of a run waits for the lake: `base`, plus a tenth of the run's length and a
    second per TABLE_WAIT_RATE records in the log."""
    return base + seconds / 10 + log_records / TABLE_WAIT_RATE


def table_listing(cluster):
    """The table's live files and committed positions, read by independent readers: the catalog by
    sqlite3 or psql, the objects by boto3, the manifests by Apache Avro (iceberg_files.py)."""
    work = cluster.work
    out = os.path.join(work, "files.json")
    env = dict(os.environ)
    catalog = cluster.catalog
    if cluster.lake == "s3pg":
        q = subprocess.run(["psql", cluster.pg_uri(), "-Atc",
                            f"select metadata_location from iceberg_tables where table_namespace='floe' "
                            f"and table_name='{TABLE}'"], capture_output=True, text=True, timeout=30)
        if q.returncode != 0 or not q.stdout.strip():
            return None, f"catalog: {q.stderr.strip()[-300:] or 'no table yet'}"
        try:
            mirror_bucket(cluster, os.path.join(work, "mirror"), q.stdout.strip().splitlines()[0])
        except Exception as e:  # noqa: BLE001 (any boto3 failure: the listing is retried)
            return None, f"S3 download: {e}"
        env["FLOE_S3_MIRROR"] = f"s3://{BUCKET}/wh={os.path.join(work, 'mirror')}"
        catalog = "meta:" + q.stdout.strip().splitlines()[0]
    r = subprocess.run(["/usr/bin/python3", ICEBERG_FILES, catalog, "floe", TABLE],
                       capture_output=True, text=True, timeout=120, env=env)
    if r.returncode != 0:
        return None, r.stderr.strip()[-500:]
    with open(out, "w") as f:
        f.write(r.stdout)
    return json.loads(r.stdout), None


def run(args):
    global BROKERS
    BROKERS = tuple(range(1, args.brokers + 1))
    floe = os.path.realpath(args.floe)
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    work = args.work or tempfile.mkdtemp(prefix="floe-chaos-")
    os.makedirs(work, exist_ok=True)
    log(f"seed {seed}, {args.seconds}s of faults ({','.join(args.faults)}), work directory {work}")
    kinds = [k for k in args.faults if (k not in ("pg", "s3err") or args.lake == "s3pg") and (k != "redis" or args.tier != "embedded")
             and (k != "disk" or args.disk_mb)]
    variants = (PARTITIONS_OF if args.tier != "embedded" else ("clients",)) + (LAKE_PARTITIONS if args.lake == "s3pg" else ())
    # A Redis Cluster master stays down long enough for its replica to take over (node timeout
    # 2 s, then the election) most of the time.
    schedule = make_schedule(seed, args.seconds, kinds, variants,
                             redis_down=(2.0, 8.0) if args.tier == "redis-cluster" else (0.3, 4.0))
    topo = None
    if args.netns:
        ok, why = netns.available()
        if ok:
            lake = ["pg", "s3"] if args.lake == "s3pg" else []
            topo = netns.Topology((["redis"] if args.tier != "embedded" else []) + [f"b{b}" for b in BROKERS] + lake)
            topo.setup()
            log(f"network namespaces: clients {topo.addr[netns.CLIENTS]}, redis {topo.addr.get('redis')}, brokers "
                + ", ".join(topo.addr[f"b{b}"] for b in BROKERS)
                + "".join(f", {m} {topo.addr[m]}" for m in lake))
        else:
            log(f"network namespaces unavailable ({why}): partition faults are skipped")
    disk = None
    if args.disk_mb:
        disk = os.path.join(work, "disk")
        os.makedirs(disk, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.disk_mb}m", "tmpfs", disk],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(f"cannot mount a tmpfs ({r.stderr.strip()}): disk faults are skipped")
            disk = None
    clock = "clock" in kinds and os.path.exists(FAKETIME_LIB)
    if "clock" in kinds and not clock:
        log(f"libfaketime is not installed ({FAKETIME_LIB}, Debian's faketime): clock faults are skipped")
    cluster = Cluster(floe, work, topo, args.lake, args.tier, disk, clock)
    procs = []
    use_netem = args.netem and netem_available(topo)
    if args.netem and not use_netem:
        log("tc netem is not available here: netem faults are skipped")
    report = {"seed": seed, "seconds": args.seconds, "faults": kinds, "schedule": schedule, "work": work,
              "netns": topo is not None, "lake": args.lake, "tier": args.tier, "brokers": len(BROKERS)}
    try:
        if args.tier != "embedded" and not cluster.start_redis():
            raise RuntimeError("redis-server did not start")
        if args.lake == "s3pg":
            if not cluster.start_pg():
                raise RuntimeError(f"PostgreSQL did not start; see {work}/pg/log")
            if not cluster.start_s3():
                raise RuntimeError(f"moto_server did not start; see {work}/moto.log")
        # Broker 1 first (it records the cluster's lake in Redis), then the others.
        for b in BROKERS:
            if not cluster.start_broker(b):
                raise RuntimeError(f"broker {b} did not start; see {work}/b{b}/floe.log")
        r = subprocess.run(["node", os.path.join(JS, "create_topic.mjs"), cluster.bootstrap(), TOPIC,
                            str(PARTITIONS)], capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            raise RuntimeError(f"CreateTopics failed: {r.stdout} {r.stderr}")
        boot = cluster.bootstrap()
        hist = []
        stop_prod = os.path.join(work, "stop-producers")
        stop_cons = os.path.join(work, "stop-consumers")
        for i in range(args.producers):
            h = os.path.join(work, f"producer-{i}.jsonl")
            hist.append(h)
            procs.append(("producer", subprocess.Popen(
                ["node", os.path.join(JS, "producer.mjs"), boot, TOPIC, str(PARTITIONS), f"p{i}", h, stop_prod,
                 str(args.pause_ms)], stdout=subprocess.DEVNULL, stderr=open(h + ".err", "w"))))
        for i in range(args.txn_producers):
            h = os.path.join(work, f"txn-producer-{i}.jsonl")
            hist.append(h)
            procs.append(("producer", subprocess.Popen(
                ["node", os.path.join(JS, "txn_producer.mjs"), boot, TOPIC, str(PARTITIONS), f"t{i}", h, stop_prod,
                 str(args.pause_ms)], stdout=subprocess.DEVNULL, stderr=open(h + ".err", "w"))))
        groups = [("chaos-group", "read_committed", "c", args.consumers),
                  ("chaos-uncommitted", "read_uncommitted", "u", args.uncommitted_consumers)]
        for group, iso, prefix, count in groups:
            for i in range(count):
                h = os.path.join(work, f"consumer-{prefix}{i}.jsonl")
                hist.append(h)
                cmd = (["node", os.path.join(JS, "consumer.mjs")] if args.consumer_client == "kafkajs"
                       else ["/usr/bin/python3", os.path.join(HERE, "consumer_rdkafka.py")])
                procs.append(("consumer", subprocess.Popen(
                    cmd + [boot, TOPIC, group, f"{prefix}{i}", h, stop_cons, iso],
                    stdout=subprocess.DEVNULL, stderr=open(h + ".err", "w"))))
        live = LiveLookups(cluster, [h for h in hist if "producer" in os.path.basename(h)], seed)
        live.start()
        t0 = time.time()
        report["t0"] = t0
        faults = Faults(cluster, t0, use_netem)
        # The schedule, as a timeline of applies and heals.
        actions = []
        for f in schedule:
            actions.append((f["at"], 0, "apply", f))
            actions.append((f["at"] + f["duration"], 1, "heal", f))
        actions.sort(key=lambda a: (a[0], a[1]))
        applied_targets = {}
        for at, _, what, f in actions:
            while time.time() < t0 + at:
                faults.supervise()
                time.sleep(min(0.2, max(0, t0 + at - time.time())))
            if what == "apply":
                rec = faults.apply(f)
                if rec is not None:
                    applied_targets[id(f)] = f["target"]
            elif id(f) in applied_targets:
                faults.heal(applied_targets.pop(id(f)))
        while time.time() < t0 + args.seconds:
            faults.supervise()
            time.sleep(0.2)
        faults.heal_all()
        faults.supervise()
        for b in BROKERS:  # anything still not up (a failed restart) gets another start
            if cluster.brokers[b]["state"] != "up":
                cluster.kill_broker(b)
                cluster.start_broker(b)
        log("faults over, all healed; workloads run on for a few seconds")
        time.sleep(args.settle)
        open(stop_prod, "w").close()
        wait_workers(procs, "producer", 40)
        # Consumers catch up (bounded): each group committed every partition past its last
        # acknowledged offset (of a plain send or a committed transaction).
        end = time.time() + 45
        caught = False
        active = [g for g, _, _, count in groups if count > 0]
        while time.time() < end and not caught:
            events = read_history(hist)
            top_ack, top_commit, txn_acks = {}, {}, {}
            for e in events:
                if e["type"] == "ack":
                    for o, _ in e["acks"]:
                        top_ack[e["partition"]] = max(top_ack.get(e["partition"], -1), o)
                elif e["type"] == "txn_ack":
                    txn_acks.setdefault(e["txn"], []).append(e)
                elif e["type"] == "txn_commit":
                    for a in txn_acks.get(e["txn"], []):
                        top_ack[a["partition"]] = max(top_ack.get(a["partition"], -1), a["acks"][-1][0])
                elif e["type"] == "commit":
                    k = (e.get("group", "chaos-group"), e["partition"])
                    top_commit[k] = max(top_commit.get(k, 0), e["offset"])
            caught = all(top_commit.get((g, p), 0) > o for g in active for p, o in top_ack.items())
            time.sleep(0.5)
        report["consumers_caught_up"] = caught
        open(stop_cons, "w").close()
        wait_workers(procs, "consumer", 30)
        log(f"consumers {'caught up' if caught else 'did NOT catch up in 45 s'}; reading every partition from 0")
        for attempt in range(3):  # a broker may still be settling (leases, group coordinators)
            r = subprocess.run(["node", os.path.join(JS, "final_read.mjs"), boot, TOPIC, "90000"],
                               capture_output=True, text=True, timeout=150)
            if r.returncode == 0:
                break
            log(f"final read failed (attempt {attempt + 1} of 3): {r.stderr.strip().splitlines()[0][:300] if r.stderr.strip() else r.returncode}")
            time.sleep(5)
        if r.returncode != 0:
            raise RuntimeError(f"final read failed: {r.stderr[-800:]}")
        final = json.loads(r.stdout)
        with open(os.path.join(work, "final.json"), "w") as f:
            f.write(r.stdout)
        highs = {int(p): d["high"] for p, d in final["partitions"].items()}
        live.stop.set()
        live.join(timeout=10)
        lookups = live.results + http_lookups(cluster, final, random.Random(seed), args.lookups)
        # The table catches up (bounded): its committed marker reaches every high watermark. The
        # budget grows with the run (a long run under load leaves the lake further behind): the
        # --table-wait base, a tenth of the run's length and a second per TABLE_WAIT_RATE records
        # in the log; the wait ends sooner when the markers have not moved for --table-wait seconds
        # (a stuck offload is reported as such, not waited out).
        log_total = sum(highs.values())
        budget = table_wait_budget(args.table_wait, args.seconds, log_total)
        started = time.time()
        end, last_total, last_move, progress = started + budget, -1, started, []
        listing, err = None, None
        while time.time() < end:
            listing, err = table_listing(cluster)
            now = time.time()
            if listing is not None:
                total = sum(int(v) for v in listing["positions"].values())
                progress.append([round(now - started, 1), total])
                if total > last_total:
                    if last_total >= 0 and now - last_move >= 10:
                        log(f"lake {log_total - total} record(s) behind the log, "
                            f"{(total - last_total) / (now - last_move):.0f} records/s")
                    last_total, last_move = total, now
                if total >= log_total and len(listing["positions"]) >= len([h for h in highs.values() if h]):
                    break
            if now - last_move > args.table_wait:
                log(f"the lake's markers have not moved for {args.table_wait:.0f} s: not waiting any longer")
                break
            time.sleep(1)
        waited = time.time() - started
        report["table_wait"] = {"budget_s": round(budget), "waited_s": round(waited, 1),
                                "behind": log_total - last_total if last_total >= 0 else None,
                                "progress": progress[::max(1, len(progress) // 60)]}
        log(f"lake wait: {waited:.0f} s of a {budget:.0f} s budget, "
            f"{report['table_wait']['behind']} record(s) behind the log at the end")
        table = None
        if listing is None:
            report["table_error"] = err
        else:
            r = subprocess.run(["node", os.path.join(JS, "table_read.mjs"), os.path.join(work, "files.json")],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                report["table_error"] = r.stderr[-800:]
            else:
                table = json.loads(r.stdout)
        history = read_history(hist)
        report["faults"] = faults.applied
        if args.lake == "s3pg":
            report["s3_faults_injected"] = cluster.s3_faults_injected()
        report["final_complete"] = final.get("complete")
        anomalies, stats = check(history, final, table, lookups=lookups)
        report["stats"] = stats
        if table is not None:
            report["stats"]["table"]["positions"] = table["positions"]
            report["stats"]["table"]["files"] = table["files"]
            report["stats"]["table"]["high_watermarks"] = highs
        by_type = {}
        for a in anomalies:
            by_type[a["type"]] = by_type.get(a["type"], 0) + 1
        report["anomaly_counts"] = by_type
        report["anomalies"] = anomalies[:500]
        client_errors = {}
        for e in history:
            if e["type"] in ("fail", "commit_fail", "crash", "producer_down"):
                k = f"{e['type']}: {e.get('error', '')[:80]}"
                client_errors[k] = client_errors.get(k, 0) + 1
        report["client_errors"] = dict(sorted(client_errors.items(), key=lambda kv: -kv[1])[:30])
        for b in BROKERS:
            lf = os.path.join(work, f"b{b}", "floe.log")
            with open(lf, errors="replace") as f:
                report.setdefault("broker_log_errors", {})[b] = sum(1 for line in f if "[error]" in line or "[critical]" in line)
        write_report(work, report, history)
        return report
    finally:
        for _, p in procs:
            if p.poll() is None:
                p.kill()
        if use_netem:
            netem(False, topo=topo)
        cluster.stop_all()
        if topo is not None:
            topo.teardown()
        if disk is not None:
            subprocess.run(["umount", disk], capture_output=True)


def write_report(work, report, history):
    with open(os.path.join(work, "report.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)
    s = report["stats"]
    lines = [
        f"chaos run: seed {report['seed']}, {report['seconds']} s of faults, work {work}",
        f"history: {s['events']} events; {s['sent']} values sent, {s['acked']} acknowledged, "
        f"{s['failed_sends']} in failed sends ({s['indeterminate_in_log']} of them in the log); "
        f"{s['polls']} polls ({s['polled_records']} records), {s['commits']} commits, {s['joins']} joins",
        f"final read: {s['final_read']} complete={report.get('final_complete')}",
        f"table: {s.get('table')}" + (f" error: {report['table_error']}" if report.get("table_error") else ""),
        "lake wait: " + (f"{tw['waited_s']} s of a {tw['budget_s']} s budget, {tw['behind']} record(s) behind the log"
                         if (tw := report.get("table_wait")) else "none"),
        f"faults applied ({len(report['faults'])}):",
    ]
    for f in report["faults"]:
        lines.append(f"  {f['start']:8.2f}-{(f['end'] if f['end'] is not None else -1):8.2f}s {f['kind']:6} {f['target']:9} "
                     f"{f.get('note', '')}")
    if "s3_faults_injected" in report:
        lines.append(f"S3 faults injected by the proxy: {report['s3_faults_injected'] or 'none'}")
    lines.append(f"client errors: {report.get('client_errors')}")
    lines.append(f"broker log error lines: {report.get('broker_log_errors')}")
    lines.append(f"anomalies: {report['anomaly_counts'] or 'none'}")
    for a in report["anomalies"][:40]:
        lines.append(f"  {a['type']}: {a['message']}")
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    with open(os.path.join(work, "timeline.svg"), "w") as f:
        f.write(timeline_svg(report, history))


def timeline_svg(report, history):
    """Faults as bars on one lane per target; acknowledged sends, failed sends and polled records
    per second as bars below; anomalies with a time as red marks."""
    t0 = report["t0"]
    end = max([report["seconds"] + 10] + [e["t"] / 1000 - t0 for e in history])
    width, left = 1100, 90
    scale = (width - left - 10) / max(end, 1)
    lanes = ["broker-1", "broker-2", "broker-3", "redis", "pg", "s3", "disk", "lo"]
    colors = {"kill": "#d62728", "pause": "#ff7f0e", "redis": "#9467bd", "netem": "#17becf", "exit": "#000000",
              "partition": "#2ca02c", "pg": "#8c564b",
              "disk": "#7f7f7f", "clock": "#e377c2", "s3err": "#bcbd22"}
    out = []
    y = 20
    out.append(f'<text x="5" y="14" font-size="12">seed {report["seed"]}: faults (kill red, pause orange, '
               f'redis purple, netem cyan, partition green, pg brown, disk grey, clock pink, s3err olive) and operations per second</text>')
    for i, lane in enumerate(lanes):
        ly = y + i * 18
        out.append(f'<text x="5" y="{ly + 12}" font-size="11">{lane}</text>')
        out.append(f'<line x1="{left}" y1="{ly + 8}" x2="{width - 10}" y2="{ly + 8}" stroke="#ddd"/>')
        for f in report["faults"]:
            if f["target"] == lane and f["end"] is not None and f["end"] > f["start"]:
                x = left + f["start"] * scale
                w = max(1.5, (f["end"] - f["start"]) * scale)
                out.append(f'<rect x="{x:.1f}" y="{ly + 2}" width="{w:.1f}" height="12" fill="{colors[f["kind"]]}">'
                           f'<title>{f["kind"]} {f["target"]} {f["start"]}-{f["end"]}s</title></rect>')
    y += len(lanes) * 18 + 10
    series = {"acked": {}, "failed": {}, "polled": {}}
    for e in history:
        s = int(e["t"] / 1000 - t0)
        if e["type"] == "ack":
            series["acked"][s] = series["acked"].get(s, 0) + len(e["acks"])
        elif e["type"] == "fail":
            series["failed"][s] = series["failed"].get(s, 0) + len(e["values"])
        elif e["type"] == "poll":
            series["polled"][s] = series["polled"].get(s, 0) + len(e["records"])
    h = 60
    for name, col in (("acked", "#2ca02c"), ("failed", "#d62728"), ("polled", "#1f77b4")):
        data = series[name]
        top = max(data.values()) if data else 1
        out.append(f'<text x="5" y="{y + h / 2}" font-size="11">{name}/s</text>')
        out.append(f'<text x="5" y="{y + h / 2 + 12}" font-size="9">max {top}</text>')
        for s, n in data.items():
            bh = h * n / top
            out.append(f'<rect x="{left + s * scale:.1f}" y="{y + h - bh:.1f}" width="{max(1, scale - 0.5):.1f}" '
                       f'height="{bh:.1f}" fill="{col}"/>')
        y += h + 10
    for a in report["anomalies"]:
        ts = [v["t"] for v in a["evidence"].values() if isinstance(v, dict) and "t" in v]
        if ts:
            x = left + (min(ts) / 1000 - t0) * scale
            out.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{y}" stroke="red" stroke-width="0.5">'
                       f'<title>{a["type"]}: {a["message"][:200]}</title></line>')
    axis = []
    for s in range(0, int(end) + 1, 10):
        axis.append(f'<text x="{left + s * scale:.1f}" y="{y + 12}" font-size="9">{s}s</text>')
    body = "\n".join(out + axis)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 20}" '
            f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n')


def parse_faults(text):
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in FAULT_WEIGHTS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(f"unknown fault kind(s) {bad}; choose from {','.join(FAULT_WEIGHTS)}")
    return kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("floe")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the work directory even when the run passes")
    ap.add_argument("--netem", action="store_true",
                    help="apply the schedule's delay/loss faults with tc netem: on every member's link inside its "
                         "namespace with --netns, else on lo (where every loopback user feels them: off by default, "
                         "so a run beside other tests does not slow them)")
    ap.add_argument("--netns", action="store_true",
                    help="run redis-server and each broker in a network namespace of its own (root and `ip` "
                         "needed), so that partition faults can cut them apart")
    ap.add_argument("--lake", choices=("sqlite", "s3pg"), default="sqlite",
                    help="sqlite: a SQLite catalog and a file:// warehouse; s3pg: a PostgreSQL catalog and S3 "
                         "(moto), each in a namespace of its own with --netns, so partitions can cut a broker "
                         "from either and `pg` faults kill -9 PostgreSQL")
    ap.add_argument("--faults", default=",".join(FAULT_WEIGHTS), type=parse_faults,
                    help="comma-separated fault kinds the schedule draws from (default: all of "
                         f"{','.join(FAULT_WEIGHTS)}; netem still needs --netem, partition --netns)")
    ap.add_argument("--disk-mb", type=int, default=0,
                    help="put the brokers' data, the catalog and the warehouse on a tmpfs of this size (root "
                         "needed), so that `disk` faults can fill it")
    ap.add_argument("--tier", choices=("redis", "redis-cluster", "embedded"), default="redis",
                    help="redis: the brokers share one redis-server (no transactions there yet); redis-cluster: a "
                         "Redis Cluster of 3 masters with a replica each (min-replicas 1; `redis` faults kill -9 a "
                         "master, so its replica takes over); embedded: each broker its own segment log (use with "
                         "--brokers 1)")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--producers", type=int, default=2, help="idempotent producers")
    ap.add_argument("--txn-producers", type=int, default=0,
                    help="transactional producers (commit, or abort one transaction in four)")
    ap.add_argument("--consumers", type=int, default=3, help="read_committed members of group chaos-group")
    ap.add_argument("--uncommitted-consumers", type=int, default=0,
                    help="read_uncommitted members of group chaos-uncommitted")
    ap.add_argument("--consumer-client", choices=("kafkajs", "librdkafka"), default="kafkajs",
                    help="the consumers' client: kafkajs (tests/js/chaos/consumer.mjs) or librdkafka "
                         "(consumer_rdkafka.py; use it with transactions: kafkajs hands read_committed readers "
                         "records of aborted transactions, see README, Findings)")
    ap.add_argument("--pause-ms", type=int, default=3)
    ap.add_argument("--lookups", type=int, default=40, help="HTTP lookups by offset per partition at the end")
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--table-wait", type=float, default=60,
                    help="seconds the end of the run waits for the lake at least (more for long runs and "
                         "large logs: see table_wait_budget), and the longest it waits while the lake's "
                         "markers do not move")
    args = ap.parse_args()
    if args.seed is None and os.environ.get("SEED"):
        args.seed = int(os.environ["SEED"])
    report = run(args)
    bad = report["anomaly_counts"]
    print(f"chaos: seed {report['seed']}: {'ANOMALIES ' + json.dumps(bad) if bad else 'no anomaly'}; "
          f"report {report['work']}/report.txt, timeline {report['work']}/timeline.svg", flush=True)
    if args.seed is not None:
        # A fixed seed replays one schedule; a random one, not tried here, for the next long run.
        nxt = random.SystemRandom().randrange(1 << 31)
        print(f"chaos: a random seed for the next long run: make chaos SEED={nxt}", flush=True)
    if not bad and not args.keep and not args.work:
        shutil.rmtree(report["work"], ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
