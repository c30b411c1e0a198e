"""The chaos history checker: reads what the clients recorded, the final Kafka read and the
Iceberg table, and reports every anomaly with the operations that show it.

Anomalies (after Jepsen's Kafka queue workload, jepsen.tests.kafka, read for its definitions):
  lost-write          an acknowledged (partition, offset, value) missing from the final read of
                      the partition, though the read reached past that offset
  table-lost-write    an acknowledged value below the table's committed marker (the snapshot's
                      floe.committed-positions) missing from the table
  duplicate           one value at two offsets (of one partition, or of two)
  table-duplicate     one value, or one (partition, offset), in two table rows
  inconsistent-offset two values at one (partition, offset) across acks, polls, the final read
                      and the table
  nonmonotonic-send   one producer's acknowledged offsets in a partition going backwards
  nonmonotonic-poll   a consumer, within one generation, polling an offset at or below one it
                      already polled in that partition
  poll-skip           a consumer, within one generation, jumping over offsets that hold values
  committed-offset-backwards
                      a consumer starting a partition (first poll after it joined) below an
                      offset the group had committed, acknowledged before that join
  phantom             a value in the log or the table that no producer ever sent
  aborted-read        a value of an aborted transaction read by a read_committed reader (the final
                      read, a read_committed consumer), or a value read whose send failed definitely
  table-aborted-row   a value of an aborted transaction in the table
  torn-transaction    some but not all values of one transaction in the final (read_committed) read
  table-phantom-row   a table row whose (partition, offset, value) the final Kafka read contradicts
  table-missing-row   a value of the log (sent, its send indeterminate) below the marker, not in the table
  http-disagrees      an HTTP lookup by offset answering another value than the final Kafka read
  unseen-acked        an acknowledged value the final read did not reach (the read stopped short)

A history is a list of events (dicts with t, proc, type, ...) from tests/js/chaos/*.mjs:
  send {partition, values[, txn]}, ack {partition, acks: [[offset, value]]}, fail {partition, values}
  txn_ack {txn, partition, acks}, then txn_commit {txn} | txn_abort {txn} | txn_fail {txn} (indeterminate)
  join {gen, assignment}, poll {gen, partition, records: [[offset, value]]}, commit {gen, partition, offset}
  (consumer events carry group and iso: read_committed, the default, or read_uncommitted)
final: {"partitions": {"p": {"high": H, "records": [[offset, value]]}}}
table: {"rows": [[partition, offset, value, stream_key]], "positions": {stream_key: next}} or None.
"""
from collections import defaultdict


def check(history, final, table=None, definite_failures=False, lookups=()):
    """Returns (anomalies, stats): anomalies a list of {"type", "message", "evidence"}."""
    anomalies = []

    def flag(kind, message, **evidence):
        anomalies.append({"type": kind, "message": message, "evidence": evidence})

    acked = {}             # value -> (partition, offset, ack event)
    sent = {}              # value -> send event
    failed = {}            # value -> fail event
    observations = defaultdict(dict)  # (p, o) -> {value: first evidence}

    def observe(p, o, v, where):
        seen = observations[(p, o)]
        if v not in seen:
            seen[v] = where

    history = sorted(history, key=lambda e: e["t"])
    last_ack = {}  # (proc, partition) -> (offset, event)
    txn_values = defaultdict(list)  # transaction -> values sent in it
    txn_acks = defaultdict(list)    # transaction -> [(partition, offset, value, txn_ack event)]
    txn_state = {}                  # transaction -> committed | aborted | unknown
    aborted = {}                    # value -> txn_abort event

    def acknowledge(p, o, v, e):
        acked[v] = (p, o, e)
        observe(p, o, v, {"ack": e})
        key = (e["proc"], p)
        if key in last_ack and o <= last_ack[key][0]:
            flag("nonmonotonic-send", f"{e['proc']} got offset {o} for {v} in partition {p} after offset "
                 f"{last_ack[key][0]}", earlier=last_ack[key][1], later=e)
        last_ack[key] = (o, e)

    for e in history:
        typ = e["type"]
        if typ == "send":
            for v in e["values"]:
                sent[v] = e
            if e.get("txn") is not None:
                txn_values[e["txn"]].extend(e["values"])
        elif typ == "txn_ack":
            for o, v in e["acks"]:
                txn_acks[e["txn"]].append((e["partition"], o, v, e))
                observe(e["partition"], o, v, {"txn_ack": e})
        elif typ == "txn_commit":
            txn_state[e["txn"]] = "committed"
            for p, o, v, ea in txn_acks[e["txn"]]:
                acknowledge(p, o, v, ea)
        elif typ == "txn_abort":
            txn_state[e["txn"]] = "aborted"
            for v in txn_values[e["txn"]]:
                aborted[v] = e
        elif typ == "txn_fail":
            txn_state[e["txn"]] = "unknown"
        elif typ == "fail":
            for v in e["values"]:
                failed[v] = e
        elif typ == "ack":
            for o, v in e["acks"]:
                acknowledge(e["partition"], o, v, e)

    # The final read: the version order of every partition.
    final_parts = {int(p): d for p, d in final.get("partitions", {}).items()}
    log = {}          # p -> {offset: value}
    where_value = defaultdict(list)  # value -> [(p, o)]
    for p, d in final_parts.items():
        offsets = {}
        prev = None
        for o, v in d["records"]:
            if prev is not None and o <= prev:
                flag("nonmonotonic-poll", f"the final read of partition {p} went from offset {prev} to {o}",
                     partition=p, offsets=[prev, o])
            prev = o
            if o in offsets:
                if offsets[o] != v:
                    observe(p, o, v, {"final": True})
                continue
            offsets[o] = v
            observe(p, o, v, {"final": True})
            where_value[v].append((p, o))
        log[p] = offsets
    for v, places in where_value.items():
        if len(places) > 1:
            flag("duplicate", f"value {v} is at {len(places)} places in the log: {places}", value=v, places=places,
                 ack=acked.get(v, (None, None, None))[2], send=sent.get(v))
    for v, places in where_value.items():
        if v not in sent:
            flag("phantom", f"value {v!r} at {places} was never sent", value=v, places=places)
        elif v in aborted:
            flag("aborted-read", f"value {v} at {places}, of aborted transaction {aborted[v]['txn']}, is in the "
                 "final read_committed read", value=v, abort=aborted[v])
        elif definite_failures and v in failed and v not in acked:
            flag("aborted-read", f"value {v} at {places} was read but its send failed", value=v, fail=failed[v])
    for txn, values in txn_values.items():
        present = [v for v in values if v in where_value]
        if txn_state.get(txn) != "aborted" and 0 < len(present) < len(values):
            flag("torn-transaction", f"transaction {txn} ({txn_state.get(txn, 'no outcome recorded')}): "
                 f"{len(present)} of its {len(values)} values are in the final read", txn=txn,
                 present=present, missing=[v for v in values if v not in where_value])

    # Lost and unseen acknowledged writes (each partition's last offset read, computed once: a
    # 30-minute history acknowledges ~500k values).
    reached_in = {p: max(part) if part else -1 for p, part in log.items()}
    for v, (p, o, e) in acked.items():
        part = log.get(p, {})
        reached = reached_in.get(p, -1)
        if v in (part.get(o),):
            continue
        if any(pp == p for pp, _ in where_value.get(v, [])):
            continue  # at another offset: reported as inconsistent-offset below
        if o <= reached:
            flag("lost-write", f"{v} was acknowledged at partition {p} offset {o}; the final read (from offset "
                 f"{min(part)}, log start {final_parts[p].get('low')}) reached offset {reached} and has "
                 f"{part.get(o)!r} there", value=v, partition=p, offset=o, ack=e, at_offset=part.get(o))
        else:
            flag("unseen-acked", f"{v} was acknowledged at partition {p} offset {o}, past the final read's last "
                 f"offset {reached} (high watermark {final_parts.get(p, {}).get('high')})", value=v, partition=p,
                 offset=o, ack=e)

    # Consumers: per member generation, polls must be contiguous and increasing; a partition's first
    # poll after a join must not start below a commit acknowledged before the join.
    commits = defaultdict(list)  # (group, p) -> [(t, offset, event)] acknowledged commits, in time order
    joins = {}                   # (proc, gen) -> join event
    last_poll = {}               # (proc, gen, p) -> (last offset, event)
    for e in history:
        typ = e["type"]
        if typ == "join":
            joins[(e["proc"], e["gen"])] = e
        elif typ == "commit":
            commits[(e.get("group"), e["partition"])].append((e["t"], e["offset"], e))
        elif typ == "poll":
            p = e["partition"]
            for o, v in e["records"]:
                observe(p, o, v, {"poll": e})
                if v not in sent:
                    flag("phantom", f"{e['proc']} polled {v!r} at partition {p} offset {o}; it was never sent",
                         value=v, poll=e)
                elif v in aborted and e.get("iso", "read_committed") == "read_committed":
                    flag("aborted-read", f"{e['proc']} (read_committed) polled {v} at partition {p} offset {o}, "
                         f"of aborted transaction {aborted[v]['txn']}", value=v, poll=e, abort=aborted[v])
            if not e["records"]:
                continue
            key = (e["proc"], e["gen"], p)
            first = e["records"][0][0]
            if key in last_poll:
                prev, pe = last_poll[key]
                if first <= prev:
                    flag("nonmonotonic-poll", f"{e['proc']} (generation {e['gen']}) polled partition {p} offset "
                         f"{first} after offset {prev}", earlier=pe, later=e)
                elif first > prev + 1:
                    skipped = [o for o in range(prev + 1, first) if o in log.get(p, {})]
                    if skipped:
                        flag("poll-skip", f"{e['proc']} (generation {e['gen']}) jumped in partition {p} from "
                             f"offset {prev} to {first}, over {len(skipped)} value(s) in the log "
                             f"(first {skipped[0]}: {log[p][skipped[0]]})", earlier=pe, later=e,
                             skipped=skipped[:20])
            else:
                join = joins.get((e["proc"], e["gen"]))
                if join is not None:
                    before = [c for c in commits[(e.get("group"), p)] if c[0] < join["t"]]
                    if before:
                        top = max(before, key=lambda c: c[1])
                        if first < top[1]:
                            flag("committed-offset-backwards",
                                 f"{e['proc']} joined at {join['t']} and started partition {p} at offset {first}, "
                                 f"below offset {top[1]} committed by {top[2]['proc']} at {top[0]}",
                                 commit=top[2], join=join, poll=e)
            recs = e["records"]
            for (o1, _), (o2, _) in zip(recs, recs[1:]):
                if o2 <= o1:
                    flag("nonmonotonic-poll", f"{e['proc']} polled partition {p} offsets {o1} then {o2} in one batch",
                         poll=e)
            last_poll[key] = (recs[-1][0], e)

    # The table.
    table_stats = {}
    if table is not None:
        rows = table["rows"]
        by_value = defaultdict(list)
        by_offset = defaultdict(list)
        stream_of = {}
        for p, o, v, sk in rows:
            by_value[v].append((p, o))
            by_offset[(p, o)].append(v)
            stream_of[p] = sk
            observe(p, o, v, {"table": True})
            if v not in sent:
                flag("phantom", f"table row partition {p} offset {o} holds {v!r}, never sent", value=v, partition=p,
                     offset=o)
            elif v in aborted:
                flag("table-aborted-row", f"table row partition {p} offset {o} holds {v}, of aborted transaction "
                     f"{aborted[v]['txn']}", partition=p, offset=o, value=v, abort=aborted[v])
            elif p in log and o in log[p] and log[p][o] != v:
                flag("table-phantom-row", f"table row partition {p} offset {o} holds {v}, the log {log[p][o]}",
                     partition=p, offset=o, table_value=v, log_value=log[p][o])
        for v, places in by_value.items():
            if len(places) > 1:
                flag("table-duplicate", f"value {v} is in {len(places)} table rows: {places}", value=v, places=places)
        for (p, o), vs in by_offset.items():
            if len(vs) > 1 and len(set(vs)) == 1:
                flag("table-duplicate", f"partition {p} offset {o} is in {len(vs)} table rows", partition=p, offset=o)
        positions = table.get("positions", {})
        marker = {}
        for p, sk in stream_of.items():
            if sk in positions:
                marker[p] = int(positions[sk])
        for p, n in marker.items():
            present = {o for (pp, o) in by_offset if pp == p}
            missing = [o for o in range(n) if o not in present and o in log.get(p, {})]
            for o in missing[:50]:
                v = log[p][o]
                kind = "table-lost-write" if v in acked else "table-missing-row"
                flag(kind, f"partition {p} offset {o} ({v}) is below the table's committed marker {n} but not in "
                     "the table", partition=p, offset=o, value=v, marker=n, ack=acked.get(v, (None, None, None))[2])
        in_table = set(by_value)
        for v, (p, o, e) in acked.items():
            if p in marker and o < marker[p] and v not in in_table and not (log.get(p, {}).get(o) == v):
                flag("table-lost-write", f"{v} acknowledged at partition {p} offset {o}, below the table's "
                     f"committed marker {marker[p]}, is not in the table", value=v, partition=p, offset=o, ack=e)
        table_stats = {"rows": len(rows), "markers": marker,
                       "acked_below_marker": sum(1 for (p, o, _) in acked.values() if o < marker.get(p, 0))}

    # HTTP lookups by offset: [{"partition", "offset", "broker", "status", "records": [[offset, value]]}],
    # during the faults (during_faults: an error answer is allowed, a wrong value never) and after.
    for q in lookups:
        p, o = q["partition"], q["offset"]
        want = log.get(p, {}).get(o)
        if want is None:
            continue
        got = next((v for oo, v in q.get("records") or [] if oo == o), None)
        if q.get("during_faults") and q.get("status") != 200:
            continue  # asked of a broker that may be down, paused or cut off: no answer is allowed
        if q.get("during_faults") and got is None and (q.get("next_offset") is not None and q["next_offset"] <= o):
            continue  # not readable yet: lookups show committed data only (an open transaction below it)
        if q.get("status") != 200 or got != want:
            flag("http-disagrees", f"HTTP lookup of partition {p} offset {o} on broker {q.get('broker')} answered "
                 f"{q.get('status')} {got!r}; the log holds {want!r}", lookup=q, log_value=want)

    for (p, o), vals in observations.items():
        if len(vals) > 1:
            flag("inconsistent-offset", f"partition {p} offset {o} holds {len(vals)} values: {sorted(map(str, vals))}",
                 partition=p, offset=o, values={str(v): w for v, w in vals.items()})

    stats = {
        "events": len(history),
        "sent": len(sent), "acked": len(acked), "failed_sends": len(failed),
        "transactions": {k: sum(1 for s in txn_state.values() if s == k) for k in ("committed", "aborted", "unknown")},
        "polls": sum(1 for e in history if e["type"] == "poll"),
        "polled_records": sum(len(e["records"]) for e in history if e["type"] == "poll"),
        "commits": sum(1 for e in history if e["type"] == "commit"),
        "joins": len(joins),
        "final_read": {str(p): {"high": d.get("high"), "records": len(d["records"])} for p, d in final_parts.items()},
        "indeterminate_in_log": sum(1 for v in failed if v in where_value and v not in acked),
        "table": table_stats,
        "http_lookups": len(lookups),
        "http_lookups_during_faults": {
            "asked": sum(1 for q in lookups if q.get("during_faults")),
            "answered": sum(1 for q in lookups if q.get("during_faults") and q.get("status") == 200)},
    }
    return anomalies, stats
