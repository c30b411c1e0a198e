#!/usr/bin/python3
"""Checks a table Floe wrote with independent tools: Python's sqlite3 (the catalog row that
PyIceberg/JDBC look up), plain JSON (metadata fields and types the v2 spec requires), and
python3-avro (manifest lists and manifests: values, field ids equal to Spark's, v2 sequence
number rules).

usage: python_check.py <iceberg_write_table binary> <work dir> <spark fixtures dir>
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import warnings

import avro.datafile
import avro.io

warnings.simplefilter("ignore")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


def path_of(uri):
    check(uri.startswith("file:///"), f"not an absolute file URI: {uri}")
    return uri[len("file://"):]


def read_avro(uri_or_path):
    p = path_of(uri_or_path) if uri_or_path.startswith("file:") else uri_or_path
    with open(p, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        meta = dict(r.meta)
        recs = list(r)
    return meta, json.loads(meta["avro.schema"]), recs


def ids_by_path(schema, prefix="", out=None):
    """name path -> (field-id | element-id) for every field in an Avro schema JSON."""
    out = {} if out is None else out
    if isinstance(schema, list):
        for b in schema:
            ids_by_path(b, prefix, out)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            for f in schema["fields"]:
                p = f"{prefix}.{f['name']}" if prefix else f["name"]
                out[p] = f.get("field-id")
                ids_by_path(f["type"], p, out)
        elif schema.get("type") == "array":
            if "element-id" in schema:
                out[prefix + "[]"] = schema["element-id"]
            ids_by_path(schema["items"], prefix + "[]", out)
    return out


REQUIRED = {
    "format-version": int, "table-uuid": str, "location": str, "last-sequence-number": int,
    "last-updated-ms": int, "last-column-id": int, "schemas": list, "current-schema-id": int,
    "partition-specs": list, "default-spec-id": int, "last-partition-id": int,
    "sort-orders": list, "default-sort-order-id": int,
}


def main():
    tool, work, fixtures = sys.argv[1:4]
    p = subprocess.run([tool, work], capture_output=True, text=True)
    check(p.returncode == 0, f"iceberg_write_table failed: {p.stderr}")
    expected = json.load(open(os.path.join(work, "expected.json")))

    # The row PyIceberg's SqlCatalog / Iceberg's JdbcCatalog look up.
    db = sqlite3.connect(os.path.join(work, "catalog.db"))
    rows = db.execute("SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
                      "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                      ("floe", "floe", "orders_created_v1")).fetchall()
    check(len(rows) == 1, f"catalog rows: {rows}")
    meta_loc, prev_loc = rows[0]
    check(prev_loc is not None, "previous_metadata_location not set")
    ns = db.execute("SELECT property_value FROM iceberg_namespace_properties WHERE catalog_name='floe' "
                    "AND namespace='floe' AND property_key='exists'").fetchall()
    check(ns == [("true",)], f"namespace row: {ns}")

    md = json.load(open(path_of(meta_loc)))
    for k, t in REQUIRED.items():
        check(k in md and isinstance(md[k], t), f"metadata field {k} missing or not {t.__name__}")
    check(md["format-version"] == 2, "format-version")
    check(md["last-sequence-number"] == 4, f"last-sequence-number {md['last-sequence-number']}")
    check(md["refs"]["main"]["snapshot-id"] == md["current-snapshot-id"], "refs.main")
    check(len(md["snapshots"]) == 4 and len(md["snapshot-log"]) == 4, "snapshots / snapshot-log")
    check(len(md["metadata-log"]) == 4, "metadata-log")
    check(prev_loc == md["metadata-log"][-1]["metadata-file"], "previous metadata location is in the log")
    seqs = [s["sequence-number"] for s in md["snapshots"]]
    check(seqs == sorted(seqs) and len(set(seqs)) == 4, f"sequence numbers {seqs}")
    for s in md["snapshots"]:
        for k in ("snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "summary"):
            check(k in s, f"snapshot field {k}")
        check(s["summary"]["operation"] == "append", "operation")
    cur = [s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"]][0]
    check(cur["summary"]["total-data-files"] == str(len(expected)), "total-data-files")
    check(cur["summary"]["total-records"] == str(sum(e["record_count"] for e in expected)), "total-records")

    # Path readers: version-hint.text is exactly "5" (created as 1, four commits).
    mdir = os.path.join(path_of(md["location"]), "metadata")
    hint = open(os.path.join(mdir, "version-hint.text"), "rb").read()
    check(hint == b"5", f"version-hint.text {hint!r}")
    check(json.load(open(os.path.join(mdir, "v5.metadata.json"))) == md, "v5.metadata.json is current")

    # Field ids as Spark writes them.
    spark_list = sorted(glob.glob(os.path.join(fixtures, "**", "snap-*.avro"), recursive=True))[0]
    spark_manifest = [p for p in sorted(glob.glob(os.path.join(fixtures, "**", "*-m0.avro"), recursive=True))][0]
    spark_list_ids = ids_by_path(read_avro(spark_list)[1])
    spark_manifest_ids = {k: v for k, v in ids_by_path(read_avro(spark_manifest)[1]).items()
                          if not k.startswith("data_file.partition.")}

    lmeta, lschema, manifests = read_avro(cur["manifest-list"])
    check(ids_by_path(lschema) == spark_list_ids, f"manifest list ids differ from Spark's: {ids_by_path(lschema)}")
    check(lmeta.get("format-version") == b"2", "list format-version")
    check(lmeta.get("snapshot-id") == str(cur["snapshot-id"]).encode(), "list snapshot-id")
    check(lmeta.get("sequence-number") == b"4", "list sequence-number")
    found = {}
    for mf in manifests:
        mmeta, mschema, entries = read_avro(mf["manifest_path"])
        check(os.path.getsize(path_of(mf["manifest_path"])) == mf["manifest_length"], "manifest_length")
        ids = ids_by_path(mschema)
        check(ids.get("data_file.partition.stream_key") == 1000, "partition field id 1000")
        ids = {k: v for k, v in ids.items() if not k.startswith("data_file.partition.")}
        check(ids == spark_manifest_ids, f"manifest ids differ from Spark's: {set(ids.items()) ^ set(spark_manifest_ids.items())}")
        for k in ("schema", "partition-spec", "partition-spec-id", "format-version", "content"):
            check(k in mmeta, f"manifest metadata {k}")
        check(json.loads(mmeta["partition-spec"]) == md["partition-specs"][0]["fields"], "partition-spec")
        check(mf["added_files_count"] == len(entries) and mf["added_rows_count"] == sum(e["data_file"]["record_count"] for e in entries), "list counts")
        lows = [e["data_file"]["partition"]["stream_key"].encode() for e in entries]
        check(mf["partitions"][0]["lower_bound"] == min(lows) and mf["partitions"][0]["upper_bound"] == max(lows), "partition summary")
        for e in entries:
            check(e["status"] == 1 and e["sequence_number"] is None, "added entries inherit their sequence number")
            check(e["snapshot_id"] == mf["added_snapshot_id"], "entry snapshot id")
            df = e["data_file"]
            found[df["file_path"]] = (df, mf["sequence_number"])
    check(len(found) == len(expected), f"{len(found)} data files, expected {len(expected)}")
    for want in expected:
        got = found.get(want["file_path"])
        check(got is not None, f"missing {want['file_path']}")
        if got is None:
            continue
        df, seq = got
        check(df["partition"]["stream_key"] == want["partition"], "partition value")
        check(df["record_count"] == want["record_count"] and df["file_size_in_bytes"] == want["file_size_in_bytes"], "counts")
        lb = {x["key"]: x["value"] for x in df["lower_bounds"]}
        ub = {x["key"]: x["value"] for x in df["upper_bounds"]}
        check(lb[10].hex() == want["lower_offset_hex"] and ub[10].hex() == want["upper_offset_hex"], "offset bounds")
        check(int.from_bytes(lb[10], "little", signed=True) <= int.from_bytes(ub[10], "little", signed=True), "bounds order")
        check(lb[1] == want["partition"].encode(), "string bound is UTF-8")
        check(df["split_offsets"] == want["split_offsets"], "split offsets")
        check(seq == want["sequence_number"], f"sequence number {seq} != {want['sequence_number']}")
        check(len(df["column_sizes"]) == 10 and len(df["value_counts"]) == 10, "column stats")
    if failures:
        print(f"{len(failures)} failures", file=sys.stderr)
        sys.exit(1)
    print(f"ok: catalog row, metadata, {len(manifests)} manifests, {len(found)} data files checked")


if __name__ == "__main__":
    main()
