#!/usr/bin/python3
"""Lists the live data files of a Floe table with independent readers only: the SQL catalog
through sqlite3, the metadata JSON through json, manifest lists and manifests through Apache
Avro's Python library. Checks on the way that the Avro schemas carry Iceberg field ids and that
the snapshot summary carries committed positions.

usage: iceberg_files.py CATALOG_DB NAMESPACE TABLE  -> prints JSON:
       (with FLOE_S3_MIRROR=s3://bucket/prefix=/dir, s3:// URIs are read from a local download)
       (CATALOG_DB = path:WAREHOUSE_DIR reads the table as path-based readers do, by version-hint.text;
        CATALOG_DB = meta:URI reads the metadata file URI another catalog points at)
  {"metadata": path, "files": [{"path":..., "records":..., "size":..., "stream_key":..., "spec_id":...,
   "partition": {field: value}}], "positions": {...},
   "snapshots": N}
"""
import json
import os
import warnings
import sqlite3
import sys

import avro.datafile
import avro.io


warnings.filterwarnings("ignore")


def local(uri):
    # FLOE_S3_MIRROR="s3://bucket/prefix=/local/dir": objects an S3 test downloaded first.
    mirror = os.environ.get("FLOE_S3_MIRROR")
    if mirror and uri.startswith("s3://"):
        remote, local_dir = mirror.split("=", 1)
        assert uri.startswith(remote), (uri, remote)
        return local_dir + uri[len(remote):]
    assert uri.startswith("file://"), uri
    return uri[len("file://"):]


def read_avro(path):
    with open(path, "rb") as f:
        reader = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        schema = json.loads(reader.meta["avro.schema"].decode())
        rows = list(reader)
        reader.close()
    return schema, rows


def field_ids(schema, out):
    if isinstance(schema, dict):
        if "field-id" in schema:
            out.add(schema["field-id"])
        for v in schema.values():
            field_ids(v, out)
    elif isinstance(schema, list):
        for v in schema:
            field_ids(v, out)
    return out


def main():
    db, ns, table = sys.argv[1:4]
    if db.startswith("path:"):
        # A path-based reader: <warehouse>/<ns>/<table>/metadata/version-hint.text names v<N>.
        meta_dir = f"{db[len('path:'):]}/{ns}/{table}/metadata"
        try:
            hint = open(f"{meta_dir}/version-hint.text").read()
        except FileNotFoundError:
            print(json.dumps({"files": [], "positions": {}, "snapshots": 0}))
            return
        assert hint.strip() == hint and hint.isdigit(), f"version-hint.text is not a bare number: {hint!r}"
        row = (f"file://{meta_dir}/v{hint}.metadata.json",)
    elif db.startswith("meta:"):
        # The metadata file a catalog points at (Glue, Hive: read by the test with boto3).
        row = (db[len("meta:"):],)
    else:
        con = sqlite3.connect(db)
        row = con.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
            (ns, table)).fetchone()
    if row is None:
        print(json.dumps({"files": [], "positions": {}, "snapshots": 0}))
        return
    meta_path = local(row[0])
    meta = json.load(open(meta_path))
    assert meta["format-version"] == 2
    snap_id = meta.get("current-snapshot-id")
    snaps = {s["snapshot-id"]: s for s in meta.get("snapshots", [])}
    if snap_id is None or snap_id == -1:
        print(json.dumps({"metadata": meta_path, "files": [], "positions": {}, "snapshots": 0}))
        return
    snap = snaps[snap_id]
    positions = json.loads(snap["summary"].get("floe.committed-positions", "{}"))
    list_schema, manifests = read_avro(local(snap["manifest-list"]))
    ids = field_ids(list_schema, set())
    assert {500, 501, 502, 503}.issubset(ids), f"manifest list lacks field ids: {sorted(ids)}"
    files = []
    for m in manifests:
        schema, entries = read_avro(local(m["manifest_path"]))
        ids = field_ids(schema, set())
        assert {0, 1, 2, 100, 101, 102, 103}.issubset(ids), f"manifest lacks field ids: {sorted(ids)}"
        for e in entries:
            if e["status"] == 2:  # deleted
                continue
            df = e["data_file"]
            entry = {"path": local(df["file_path"]), "records": df["record_count"],
                     "size": df["file_size_in_bytes"], "stream_key": df["partition"].get("stream_key"),
                     "spec_id": m["partition_spec_id"], "partition": df["partition"]}
            if df.get("key_metadata") is not None:  # encrypted data files name their key
                entry["key_metadata"] = bytes(df["key_metadata"]).hex()
            files.append(entry)
    print(json.dumps({"metadata": meta_path, "files": files, "positions": positions,
                      "snapshots": len(snaps)}, default=str))  # default: dates of day() partitions


if __name__ == "__main__":
    main()
