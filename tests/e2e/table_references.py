#!/usr/bin/python3
"""Compares the files under a Floe table's location with the files its current metadata
references, read with independent readers only (sqlite3 for the catalog, json for metadata,
Apache Avro's Python library for manifest lists and manifests).

Referenced: the current metadata file and those in its metadata-log, their v<N>.metadata.json
copies, version-hint.text, and for every snapshot its manifest list, the manifests in it and
the data files those manifests list as live (status 0 or 1).

usage: table_references.py CATALOG_DB NAMESPACE TABLE TABLE_DIR
       (with FLOE_S3_MIRROR=s3://bucket/prefix=/dir, s3:// URIs are read from a local download)
prints JSON {"referenced": N, "on_disk": N, "unreferenced": [...], "missing": [...],
             "snapshots": N, "data_files": N, "current_manifests": N}
"""
import json
import os
import re
import sqlite3
import sys
import warnings

import avro.datafile
import avro.io

warnings.filterwarnings("ignore")


def local(uri):
    # FLOE_S3_MIRROR="s3://bucket/prefix=/local/dir": a boto3 download of the bucket (every
    # object, keys as paths), so TABLE_DIR is then the bucket's objects under the table.
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
        rows = list(reader)
        reader.close()
    return rows


def version_of(path):
    m = re.match(r"^v?(\d+)[-.]", os.path.basename(path))
    return int(m.group(1)) if m else None


def main():
    db, ns, table, table_dir = sys.argv[1:5]
    con = sqlite3.connect(db)
    (loc,) = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
                         (ns, table)).fetchone()
    meta_path = local(loc)
    meta = json.load(open(meta_path))
    meta_dir = os.path.dirname(meta_path)
    refs = {meta_path, os.path.join(meta_dir, "version-hint.text")}
    for p in [meta_path] + [local(e["metadata-file"]) for e in meta.get("metadata-log", [])]:
        refs.add(p)
        v = version_of(p)
        if v is not None:
            refs.add(os.path.join(meta_dir, f"v{v}.metadata.json"))
    data = set()
    current = [s for s in meta.get("snapshots", []) if s["snapshot-id"] == meta.get("current-snapshot-id")]
    current_manifests = len(read_avro(local(current[0]["manifest-list"]))) if current else 0
    for s in meta.get("snapshots", []):
        refs.add(local(s["manifest-list"]))
        for m in read_avro(local(s["manifest-list"])):
            refs.add(local(m["manifest_path"]))
            for e in read_avro(local(m["manifest_path"])):
                if e["status"] != 2:
                    data.add(local(e["data_file"]["file_path"]))
    refs |= data
    disk = set()
    for root, _, files in os.walk(table_dir):
        for f in files:
            disk.add(os.path.join(root, f))
    print(json.dumps({"referenced": len(refs), "on_disk": len(disk), "unreferenced": sorted(disk - refs),
                      "missing": sorted(p for p in refs - disk if os.path.basename(p) != "version-hint.text"
                                        and not re.match(r"^v\d+\.metadata\.json$", os.path.basename(p))),
                      "snapshots": len(meta.get("snapshots", [])), "data_files": len(data),
                      "current_manifests": current_manifests}))


if __name__ == "__main__":
    main()
