#!/usr/bin/env python3
"""Downloads every object under s3://BUCKET/PREFIX into DIR (keys as relative paths), with boto3
and the S3TEST_* environment of moto_env.py. Prints the number of objects.

    s3_download.py BUCKET PREFIX DIR"""
import os
import sys

import boto3


def main():
    bucket, prefix, out = sys.argv[1:4]
    e = os.environ
    s3 = boto3.client("s3", endpoint_url=e["S3TEST_ENDPOINT"], region_name=e["S3TEST_REGION"],
                      aws_access_key_id=e["S3TEST_ACCESS_KEY_ID"],
                      aws_secret_access_key=e["S3TEST_SECRET_ACCESS_KEY"])
    n = 0
    token = None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        for o in page.get("Contents", []):
            rel = o["Key"][len(prefix):].lstrip("/")
            path = os.path.join(out, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            s3.download_file(bucket, o["Key"], path)
            n += 1
        if not page.get("IsTruncated"):
            break
        token = page["NextContinuationToken"]
    print(n)


if __name__ == "__main__":
    main()
