#!/usr/bin/python3
"""Checks Floe's Avro writer and reader against Apache Avro's Python library (python3-avro).

1. Floe writes files (every codec); python3-avro reads them: the records must equal what Floe
   meant to write, and the schema python3-avro reports must carry every field-id, element-id,
   key-id and value-id of the schema text, which must be stored byte for byte.
2. python3-avro writes files (every codec it has); Floe's reader must return the same records.
3. Floe's reader must return for every Spark-written Iceberg manifest what python3-avro returns.

usage: python_interop.py <avro_interop binary> <work dir> <spark fixtures dir>
"""
import datetime
import glob
import json
import os
import random
import subprocess
import sys

import avro.datafile
import avro.io
import avro.schema

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


def canon(v):
    # python3-avro applies logical types of the writer's schema; Floe reports raw values.
    if isinstance(v, datetime.datetime):
        return (v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    if isinstance(v, bytes):
        return {"hex": v.hex()}
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [canon(x) for x in v]
    return v


def strip_logical(j):
    """The schema without logicalType, so python3-avro hands back raw values (no datetime)."""
    if isinstance(j, dict):
        return {k: strip_logical(v) for k, v in j.items() if k != "logicalType"}
    if isinstance(j, list):
        return [strip_logical(v) for v in j]
    return j


def py_read(path):
    with open(path, "rb") as f:
        writer_json = json.loads(avro.datafile.DataFileReader(f, avro.io.DatumReader()).meta["avro.schema"])
    reader_schema = avro.schema.parse(json.dumps(strip_logical(writer_json)))
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader(readers_schema=reader_schema))
        meta = dict(r.meta)
        records = [canon(x) for x in r]
    return meta, records


def ids_in_text(j, out):
    if isinstance(j, dict):
        for k in ("field-id", "element-id", "key-id", "value-id"):
            if k in j:
                out.add((k, j[k]))
        for v in j.values():
            ids_in_text(v, out)
    elif isinstance(j, list):
        for v in j:
            ids_in_text(v, out)
    return out


def ids_reported(s, out, seen):
    """Walks python3-avro's parsed schema objects, collecting the id attributes it reports."""
    if id(s) in seen:
        return out
    seen.add(id(s))
    props = getattr(s, "other_props", {}) or {}
    for k in ("element-id", "key-id", "value-id"):
        if k in props:
            out.add((k, props[k]))
    if isinstance(s, avro.schema.RecordSchema):
        for f in s.fields:
            if "field-id" in (f.other_props or {}):
                out.add(("field-id", f.other_props["field-id"]))
            ids_reported(f.type, out, seen)
    elif isinstance(s, avro.schema.ArraySchema):
        ids_reported(s.items, out, seen)
    elif isinstance(s, avro.schema.MapSchema):
        ids_reported(s.values, out, seen)
    elif isinstance(s, avro.schema.UnionSchema):
        for b in s.schemas:
            ids_reported(b, out, seen)
    return out


def floe_dump(tool, path, work):
    out = os.path.join(work, "dump.json")
    p = subprocess.run([tool, "dump", path, out], capture_output=True, text=True)
    check(p.returncode == 0, f"floe reader failed on {path}: {p.stderr.strip()}")
    if p.returncode != 0:
        return None
    with open(out) as f:
        return json.load(f)


def compare(name, got, want):
    check(len(got) == len(want), f"{name}: {len(got)} records, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            check(False, f"{name}: record {i} differs:\n  got  {str(g)[:400]}\n  want {str(w)[:400]}")
            break


def python_records(schema_json, n, seed):
    rnd = random.Random(seed)
    words = ["", "a", "héllo", "日本語", "emoji 😀", "x\ty\n"]

    def rbytes(k):
        return bytes(rnd.getrandbits(8) for _ in range(k))

    def header():
        return {"key": rnd.choice(["k", "dup", "ü"]), "value": None if rnd.random() < 0.3 else rbytes(rnd.randrange(10))}

    out = []
    for i in range(n):
        out.append({
            "id": rnd.choice([0, -1, -(2**63), 2**63 - 1, rnd.getrandbits(62)]),
            "small": rnd.choice([0, -1, -(2**31), 2**31 - 1, rnd.randrange(-1000, 1000)]),
            "flag": rnd.random() < 0.5,
            "ratio": rnd.randrange(-100000, 100000) / 64.0,
            "score": rnd.choice([0.0, 1e308, 5e-324, rnd.random()]),
            "name": rnd.choice(words) + str(i),
            "payload": rnd.choice([None, b"", b"\x00\x00a\x00", rbytes(rnd.randrange(200))]) if i != 7 else rbytes(1536 * 1024),
            "digest": rbytes(16),
            "color": rnd.choice(["RED", "GREEN", "BLUE"]),
            "tags": [rnd.choice(words) for _ in range(rnd.randrange(5))],
            "attrs": {f"k{j}": (None if rnd.random() < 0.3 else rnd.getrandbits(40)) for j in range(rnd.randrange(4))},
            "headers": None if i % 6 == 0 else [header() for _ in range(rnd.randrange(21))],
            "bounds": [{"key": j, "value": rbytes(rnd.randrange(8))} for j in range(rnd.randrange(3))],
            "choice": [None, i, rnd.choice(words), header()][i % 4],
        })
    return out


def main():
    tool, work, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)

    # 1. Floe writes, python3-avro reads.
    p = subprocess.run([tool, "write", work], capture_output=True, text=True)
    check(p.returncode == 0, f"avro_interop write failed: {p.stderr}")
    with open(os.path.join(work, "schema.json"), "rb") as f:
        schema_text = f.read()
    want_ids = ids_in_text(json.loads(schema_text), set())
    check(len(want_ids) == 22, f"sample schema should carry 22 ids, has {len(want_ids)}")
    floe_files = sorted(glob.glob(os.path.join(work, "floe-*.avro")))
    check(len(floe_files) == 6, f"expected 6 files from Floe, found {len(floe_files)}")
    for path in floe_files:
        meta, got = py_read(path)
        with open(path[:-5] + ".json") as f:
            want = json.load(f)
        compare(os.path.basename(path), got, want)
        check(meta["avro.schema"] == schema_text, f"{path}: schema text not stored verbatim")
        check(meta.get("format-version") == b"2", f"{path}: user metadata lost")
        with open(path, "rb") as f:
            reported = avro.datafile.DataFileReader(f, avro.io.DatumReader()).datum_reader.writers_schema
        got_ids = ids_reported(reported, set(), set())
        check(got_ids == want_ids, f"{path}: python3-avro reports ids {sorted(want_ids - got_ids)} missing")
        codec = os.path.basename(path)[5:-5]
        if codec in ("null", "deflate", "zstandard", "snappy"):
            check(meta["avro.codec"] == codec.encode(), f"{path}: codec {meta['avro.codec']}")
        print(f"ok  floe->python {os.path.basename(path)}: {len(got)} records")

    # 2. python3-avro writes, Floe reads.
    schema = avro.schema.parse(schema_text.decode())
    for codec in ("null", "deflate", "snappy", "zstandard"):
        recs = python_records(schema_text, 300, hash(codec) % 1000)
        path = os.path.join(work, f"py-{codec}.avro")
        with open(path, "wb") as f:
            w = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), schema, codec=codec)
            for r in recs:
                w.append(r)
            w.close()
        got = floe_dump(tool, path, work)
        if got is not None:
            compare(f"py-{codec}", got, [canon(r) for r in recs])
            print(f"ok  python->floe {codec}: {len(got)} records")

    # 3. Spark's Iceberg manifests and manifest lists.
    spark = sorted(glob.glob(os.path.join(fixtures, "**", "*.avro"), recursive=True))
    check(len(spark) >= 10, f"expected Spark fixtures under {fixtures}, found {len(spark)}")
    for path in spark:
        _, want = py_read(path)
        got = floe_dump(tool, path, work)
        if got is not None:
            compare(path, got, want)
    print(f"ok  spark manifests: {len(spark)} files")

    if failures:
        print(f"{len(failures)} failures", file=sys.stderr)
        sys.exit(1)
    print("all interop checks passed")


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    main()
