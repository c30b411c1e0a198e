#!/usr/bin/env python3
"""Prints the committed position of STREAM_KEY in a Floe table on S3: the SQLite catalog names
the current metadata object, boto3 fetches it (the S3TEST_* environment of
moto_env.py), and the current snapshot's summary holds the positions. 0 when nothing is committed.

    s3_positions.py CATALOG_DB TABLE STREAM_KEY"""
import json
import os
import sqlite3
import sys

import boto3


def main():
    db, table, key = sys.argv[1:4]
    row = sqlite3.connect(db).execute(
        "select metadata_location from iceberg_tables where table_name = ?", (table,)).fetchone()
    if not row:
        print(0)
        return
    bucket, _, obj = row[0][len("s3://"):].partition("/")
    e = os.environ
    s3 = boto3.client("s3", endpoint_url=e["S3TEST_ENDPOINT"], region_name=e["S3TEST_REGION"],
                      aws_access_key_id=e["S3TEST_ACCESS_KEY_ID"],
                      aws_secret_access_key=e["S3TEST_SECRET_ACCESS_KEY"])
    meta = json.loads(s3.get_object(Bucket=bucket, Key=obj)["Body"].read())
    snap = next((s for s in meta.get("snapshots", []) if s["snapshot-id"] == meta.get("current-snapshot-id")), None)
    if not snap:
        print(0)
        return
    positions = json.loads(snap["summary"].get("floe.committed-positions", "{}"))
    print(positions.get(key, 0))


if __name__ == "__main__":
    main()
