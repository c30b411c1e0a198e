"""Network namespaces for the chaos run: each broker and redis-server get a namespace of their own,
joined by veth pairs to one bridge in the test's namespace, where the clients run. A partition
between two members is a pair of blackhole routes (each side drops what it sends to the other),
so it needs neither iptables nor netem: `ip` as root is enough.

The network is private to the run: 10.77.N.0/24 on a bridge with no uplink, N drawn from the
process id so that two runs on one machine do not meet. Names carry the same tag; teardown()
removes everything, and setup() first removes what a killed run left under the same tag.
"""
import os
import subprocess

CLIENTS = "clients"  # the test's own namespace: workload clients, the checker's reads


def _ip(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["ip", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


def available():
    """(True, "") when this process may create namespaces, veth pairs and a bridge; else why not."""
    if os.geteuid() != 0:
        return False, "not root"
    tag = f"floeprobe{os.getpid() % 100000}"
    try:
        r = subprocess.run(["ip", "netns", "add", tag], capture_output=True, text=True)
        if r.returncode != 0:
            return False, f"ip netns add: {r.stderr.strip()}"
        r = subprocess.run(["ip", "link", "add", f"{tag[:11]}br", "type", "bridge"], capture_output=True, text=True)
        if r.returncode != 0:
            return False, f"ip link add type bridge: {r.stderr.strip()}"
        subprocess.run(["ip", "link", "del", f"{tag[:11]}br"], capture_output=True)
        return True, ""
    except FileNotFoundError:
        return False, "no ip command"
    finally:
        subprocess.run(["ip", "netns", "del", tag], capture_output=True)


class Topology:
    def __init__(self, members):
        n = os.getpid() % 250 + 1
        self.tag = f"fc{os.getpid() % 10000}"
        self.subnet = f"10.77.{n}"
        self.bridge = f"{self.tag}br"
        self.addr = {CLIENTS: f"{self.subnet}.1"}
        for i, m in enumerate(members):
            self.addr[m] = f"{self.subnet}.{10 + i}"
        self.members = list(members)
        self.cuts = set()  # frozenset({a, b}) pairs cut now

    def ns(self, member):
        return None if member == CLIENTS else f"{self.tag}{member}"

    def prefix(self, member):
        """The argv prefix that runs a command inside member's namespace."""
        return ["ip", "netns", "exec", self.ns(member)]

    def setup(self):
        self.teardown()
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.addr[CLIENTS]}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, m in enumerate(self.members):
            ns = self.ns(m)
            host_end, ns_end = f"{self.tag}h{i}", f"{self.tag}n{i}"
            subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
            _ip("link", "add", host_end, "type", "veth", "peer", "name", ns_end)
            _ip("link", "set", ns_end, "netns", ns)
            _ip("link", "set", host_end, "master", self.bridge)
            _ip("link", "set", host_end, "up")
            _ip("link", "set", "lo", "up", ns=ns)
            _ip("addr", "add", f"{self.addr[m]}/24", "dev", ns_end, ns=ns)
            _ip("link", "set", ns_end, "up", ns=ns)

    def _route(self, verb, member, to):
        _ip("route", verb, "blackhole", f"{self.addr[to]}/32", ns=self.ns(member), check=(verb == "add"))

    def cut(self, a, b):
        """Packets between a and b are dropped both ways (connections hang, as on a real partition)."""
        pair = frozenset((a, b))
        if pair in self.cuts:
            return
        self._route("add", a, b)
        self._route("add", b, a)
        self.cuts.add(pair)

    def heal(self, a, b):
        pair = frozenset((a, b))
        self._route("del", a, b)
        self._route("del", b, a)
        self.cuts.discard(pair)

    def heal_all(self):
        for pair in list(self.cuts):
            self.heal(*sorted(pair))

    def netem(self, on, delay_ms=0, loss_pct=0):
        """Delay and loss (tc netem) on every member's link, inside its namespace: what each member
        sends is delayed and dropped, so every path between two members (brokers, redis, the lake,
        the clients on the bridge) crosses it at least once. The machine's own lo is untouched, so
        other work on the machine does not feel it. Returns (ok, error text)."""
        errors = []
        for i, m in enumerate(self.members):
            cmd = ["ip", "netns", "exec", self.ns(m), "tc", "qdisc"]
            if on:
                cmd += ["replace", "dev", f"{self.tag}n{i}", "root", "netem", "delay", f"{delay_ms}ms"]
                if loss_pct:
                    cmd += ["loss", f"{loss_pct}%"]
            else:
                cmd += ["del", "dev", f"{self.tag}n{i}", "root"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0 and on:
                errors.append(f"{m}: {r.stderr.strip()}")
        return not errors, "; ".join(errors)

    def teardown(self):
        for m in self.members:
            if m == CLIENTS:
                continue
            # blackhole routes of the clients' namespace go with the addresses they name
            subprocess.run(["ip", "route", "del", "blackhole", f"{self.addr[m]}/32"], capture_output=True)
            subprocess.run(["ip", "netns", "del", self.ns(m)], capture_output=True)
        for i in range(len(self.members)):
            subprocess.run(["ip", "link", "del", f"{self.tag}h{i}"], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        self.cuts.clear()
