"""Self-test of the chaos checker: a clean synthetic history passes; histories with one injected
bug each (a lost write, a duplicate, two values at one offset, a non-monotonic poll, a poll skip,
a committed offset read backwards, a table row lost below the marker, a table duplicate, a
phantom, an aborted transaction read by a read_committed reader or in the table, a transaction
read in part) are flagged with exactly that anomaly. Fast, no processes.
usage: python3 checker_test.py"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checker import check  # noqa: E402


def clean():
    """Two partitions, one producer, one consumer, a table holding offsets 0..2 of each."""
    h, t = [], 0

    def ev(**kw):
        nonlocal t
        t += 1
        h.append({"t": t, "proc": kw.pop("proc", "p1"), **kw})
    final = {"partitions": {"0": {"high": 4, "records": []}, "1": {"high": 4, "records": []}}}
    for i in range(8):
        p, v = i % 2, f"p1-{i}"
        o = i // 2
        ev(type="send", partition=p, values=[v])
        ev(type="ack", partition=p, acks=[[o, v]])
        final["partitions"][str(p)]["records"].append([o, v])
    ev(proc="c1", type="join", gen=1, assignment=[0, 1])
    for p in (0, 1):
        recs = final["partitions"][str(p)]["records"]
        ev(proc="c1", type="poll", gen=1, partition=p, records=recs[:2])
        ev(proc="c1", type="commit", gen=1, partition=p, offset=2)
        ev(proc="c1", type="poll", gen=1, partition=p, records=recs[2:])
        ev(proc="c1", type="commit", gen=1, partition=p, offset=4)
    ev(type="send", partition=0, values=["p1-8"])
    ev(type="ack", partition=0, acks=[[4, "p1-8"]])
    final["partitions"]["0"]["records"].append([4, "p1-8"])
    final["partitions"]["0"]["high"] = 5
    ev(proc="c2", type="join", gen=1, assignment=[0])
    ev(proc="c2", type="poll", gen=1, partition=0, records=final["partitions"]["0"]["records"][4:])
    table = {"rows": [], "positions": {"t-0": 3, "t-1": 3}}
    for p in (0, 1):
        for o, v in final["partitions"][str(p)]["records"][:3]:
            table["rows"].append([p, o, v, f"t-{p}"])
    return h, final, table


def kinds(h, final, table):
    anomalies, _ = check(h, final, table)
    return sorted({a["type"] for a in anomalies}), anomalies


failures = 0


def expect(name, got, want):
    global failures
    ok = got == want
    failures += 0 if ok else 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {got}" + ("" if ok else f" (expected {want})"))


h, final, table = clean()
expect("a clean history has no anomaly", kinds(h, final, table)[0], [])

# A lost write: the log lost acknowledged p1-2 (partition 0 offset 1); what was after it moved down.
h, final, table = clean()
recs = final["partitions"]["0"]["records"]
final["partitions"]["0"]["records"] = [[0, recs[0][1]], [1, recs[2][1]], [2, recs[3][1]], [3, recs[4][1]],
                                       [4, "p1-100"]]
h.append({"t": 0, "proc": "p1", "type": "send", "partition": 0, "values": ["p1-100"]})
got, an = kinds(h, final, None)
expect("a lost write is flagged", "lost-write" in got, True)
lost = [a for a in an if a["type"] == "lost-write"]
expect("... naming the value and its acknowledgement", [a["evidence"]["value"] for a in lost][:1], ["p1-2"])

# A duplicate: p1-0 appended twice to partition 0 (offset 4 too).
h, final, table = clean()
final["partitions"]["0"]["records"].append([5, "p1-0"])
final["partitions"]["0"]["high"] = 6
expect("a duplicate in the log is flagged", kinds(h, final, table)[0], ["duplicate"])

# Two values at one offset: the ack of p1-9 says partition 1 offset 2, where the log holds p1-5.
h, final, table = clean()
h.append({"t": 100, "proc": "p1", "type": "send", "partition": 1, "values": ["p1-9"]})
h.append({"t": 101, "proc": "p1", "type": "ack", "partition": 1, "acks": [[2, "p1-9"]]})
got, _ = kinds(h, final, table)
expect("two values at one offset are flagged", "inconsistent-offset" in got and "nonmonotonic-send" in got, True)

# A non-monotonic poll: c1 polls partition 1 offsets 2..3 again within generation 1.
h, final, table = clean()
h.append({"t": 200, "proc": "c1", "type": "poll", "gen": 1, "partition": 1,
          "records": final["partitions"]["1"]["records"][2:]})
expect("a non-monotonic poll is flagged", kinds(h, final, table)[0], ["nonmonotonic-poll"])

# A poll skip: c2 in a new generation reads offset 0 then offset 3 of partition 1.
h, final, table = clean()
recs = final["partitions"]["1"]["records"]
h.append({"t": 300, "proc": "c2", "type": "join", "gen": 2, "assignment": [1]})
h.append({"t": 301, "proc": "c2", "type": "poll", "gen": 2, "partition": 1, "records": [recs[3]]})
h.append({"t": 302, "proc": "c3", "type": "join", "gen": 1, "assignment": [1]})
h.append({"t": 303, "proc": "c3", "type": "poll", "gen": 1, "partition": 1, "records": [recs[0]]})
h.append({"t": 304, "proc": "c3", "type": "poll", "gen": 1, "partition": 1, "records": [recs[3]]})
got, _ = kinds(h, final, table)
expect("a poll skip and a committed offset read backwards are flagged", got,
       ["committed-offset-backwards", "poll-skip"])

# A table that lost a row below its marker, and one holding a row twice.
h, final, table = clean()
table["rows"] = [r for r in table["rows"] if not (r[0] == 1 and r[1] == 1)]
expect("a table row missing below the marker is flagged", kinds(h, final, table)[0], ["table-lost-write"])
h, final, table = clean()
table["rows"].append(copy.copy(table["rows"][0]))
expect("a table duplicate is flagged", kinds(h, final, table)[0], ["table-duplicate"])

# A phantom: a value nobody sent, in the log.
h, final, table = clean()
final["partitions"]["1"]["records"].append([4, "zz-1"])
expect("a value never sent is flagged", kinds(h, final, table)[0], ["phantom"])

# An aborted read (with definite failures): p1-7's send failed, yet it is in the log.
h, final, table = clean()
h = [e for e in h if not (e["type"] == "ack" and e["acks"][0][1] == "p1-7")]
h.append({"t": 50, "proc": "p1", "type": "fail", "partition": 1, "values": ["p1-7"]})
anomalies, _ = check(h, final, table, definite_failures=True)
expect("an aborted read is flagged", sorted({a["type"] for a in anomalies}), ["aborted-read"])

# An HTTP lookup disagreeing with Kafka.
h, final, table = clean()
ok = {"partition": 0, "offset": 1, "broker": 1, "status": 200, "records": [[1, "p1-2"]]}
bad = {"partition": 1, "offset": 2, "broker": 2, "status": 200, "records": [[2, "p1-0"]]}
anomalies, _ = check(h, final, table, lookups=[ok])
expect("an HTTP lookup agreeing with Kafka passes", anomalies, [])
anomalies, _ = check(h, final, table, lookups=[ok, bad])
expect("an HTTP lookup disagreeing with Kafka is flagged", sorted({a["type"] for a in anomalies}), ["http-disagrees"])


down = {"partition": 0, "offset": 1, "broker": 3, "status": None, "error": "timed out", "during_faults": True}
wrong = dict(bad, during_faults=True)
anomalies, _ = check(h, final, table, lookups=[ok, down])
expect("a lookup during the faults may go unanswered", anomalies, [])
behind = {"partition": 0, "offset": 1, "broker": 1, "status": 200, "records": [], "next_offset": 1,
          "during_faults": True}
skipped = dict(behind, next_offset=2)
anomalies, _ = check(h, final, table, lookups=[behind])
expect("a lookup during the faults may stop below an open transaction (next_offset not past it)", anomalies, [])
anomalies, _ = check(h, final, table, lookups=[skipped])
expect("... but never skip the record", sorted({a["type"] for a in anomalies}), ["http-disagrees"])
anomalies, _ = check(h, final, table, lookups=[down, wrong])
expect("... but never answer a wrong value", sorted({a["type"] for a in anomalies}), ["http-disagrees"])


def with_txns():
    """clean() plus transactions of producer t1: T1 committed (partition 0 offsets 5-6, partition 1
    offset 4), T2 aborted (partition 0 offset 8), T3 failed with its outcome
    unknown (partition 1 offsets 6-7: committed, as the final read shows). Markers take offsets
    (0:7, 1:5, 0:9) and never show in reads."""
    h, final, table = clean()
    t = 1000

    def ev(**kw):
        nonlocal t
        t += 1
        h.append({"t": t, "proc": "t1", **kw})
    ev(type="send", partition=0, values=["t1-0", "t1-1"], txn="t1/0")
    ev(type="txn_ack", partition=0, acks=[[5, "t1-0"], [6, "t1-1"]], txn="t1/0")
    ev(type="send", partition=1, values=["t1-2"], txn="t1/0")
    ev(type="txn_ack", partition=1, acks=[[4, "t1-2"]], txn="t1/0")
    ev(type="txn_commit", txn="t1/0")
    ev(type="send", partition=0, values=["t1-3"], txn="t1/1")
    ev(type="txn_ack", partition=0, acks=[[8, "t1-3"]], txn="t1/1")
    ev(type="txn_abort", txn="t1/1")
    ev(type="send", partition=1, values=["t1-4", "t1-5"], txn="t1/2")
    ev(type="txn_ack", partition=1, acks=[[6, "t1-4"], [7, "t1-5"]], txn="t1/2")
    ev(type="txn_fail", txn="t1/2", error="commit: no answer")
    final["partitions"]["0"]["records"] += [[5, "t1-0"], [6, "t1-1"]]
    final["partitions"]["0"]["high"] = 10
    final["partitions"]["1"]["records"] += [[4, "t1-2"], [6, "t1-4"], [7, "t1-5"]]
    final["partitions"]["1"]["high"] = 9
    # A read_uncommitted consumer of another group sees the aborted value; that is allowed.
    ev(proc="u1", type="join", gen=1, assignment=[0], group="ru", iso="read_uncommitted")
    ev(proc="u1", type="poll", gen=1, partition=0, records=[[8, "t1-3"]], group="ru", iso="read_uncommitted")
    return h, final, table


h, final, table = with_txns()
expect("committed, aborted and unknown transactions, read correctly: no anomaly", kinds(h, final, table)[0], [])
h, final, table = with_txns()
final["partitions"]["0"]["records"].append([8, "t1-3"])
expect("an aborted transaction's value in the final read_committed read is flagged", kinds(h, final, table)[0],
       ["aborted-read"])
h, final, table = with_txns()
h.append({"t": 5000, "proc": "c9", "type": "join", "gen": 1, "assignment": [0]})
h.append({"t": 5001, "proc": "c9", "type": "poll", "gen": 1, "partition": 0, "records": [[8, "t1-3"]],
          "iso": "read_committed"})
expect("... and in a read_committed consumer's poll", kinds(h, final, table)[0], ["aborted-read"])
h, final, table = with_txns()
table["rows"].append([0, 8, "t1-3", "t-0"])
expect("an aborted transaction's value in the table is flagged", kinds(h, final, table)[0], ["table-aborted-row"])
h, final, table = with_txns()
final["partitions"]["1"]["records"] = [r for r in final["partitions"]["1"]["records"] if r[1] != "t1-5"]
expect("half of a transaction of unknown outcome in the final read is flagged", kinds(h, final, table)[0],
       ["torn-transaction"])
h, final, table = with_txns()
final["partitions"]["1"]["records"] = [r for r in final["partitions"]["1"]["records"] if r[1] != "t1-2"]
got, _ = kinds(h, final, table)
expect("a committed transaction missing a value is a lost write and a torn transaction", got,
       ["lost-write", "torn-transaction"])

print(f"checker_test: {failures} failure(s)")
sys.exit(1 if failures else 0)
