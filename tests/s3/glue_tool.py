#!/usr/bin/env python3
"""boto3 helpers for the Glue end-to-end test, against the moto that tests/s3/moto_env.py
started (S3TEST_* variables):

    glue_tool.py setup-role            -> "ASSUMER_KEY_ID ASSUMER_SECRET ROLE_ARN": a user that may
                                          only sts:AssumeRole, and a role that may do everything
    glue_tool.py denied KEY SECRET     -> exit 0 when those keys get AccessDenied on the bucket
    glue_tool.py table DB NAME PREFIX  -> JSON: the Glue table's TableType and parameters, and the
                                          newest and second-newest <N>-<uuid>.metadata.json
                                          objects under s3://BUCKET/PREFIX/DB/NAME/metadata/
"""
import json
import os
import re
import sys

import boto3
import botocore.exceptions

ENDPOINT = os.environ["S3TEST_ENDPOINT"]
REGION = os.environ.get("S3TEST_REGION", "us-east-1")
ADMIN = dict(aws_access_key_id=os.environ["S3TEST_ACCESS_KEY_ID"],
             aws_secret_access_key=os.environ["S3TEST_SECRET_ACCESS_KEY"])


def client(service, **keys):
    return boto3.client(service, endpoint_url=ENDPOINT, region_name=REGION, **(keys or ADMIN))


def setup_role():
    iam = client("iam")
    iam.create_user(UserName="assumer")
    only_assume = iam.create_policy(PolicyName="only-assume", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]}))
    iam.attach_user_policy(UserName="assumer", PolicyArn=only_assume["Policy"]["Arn"])
    key = iam.create_access_key(UserName="assumer")["AccessKey"]
    role = iam.create_role(RoleName="floe-lake", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}))
    iam.attach_role_policy(RoleName="floe-lake", PolicyArn="arn:aws:iam::123456789012:policy/all")
    print(key["AccessKeyId"], key["SecretAccessKey"], role["Role"]["Arn"])


def denied(key_id, secret):
    s3 = client("s3", aws_access_key_id=key_id, aws_secret_access_key=secret)
    try:
        s3.list_objects_v2(Bucket=os.environ["S3TEST_BUCKET"])
    except botocore.exceptions.ClientError as e:
        return 0 if e.response["Error"]["Code"] == "AccessDenied" else 1
    return 1


def table(db, name, prefix):
    t = client("glue").get_table(DatabaseName=db, Name=name)["Table"]
    s3 = client("s3")
    bucket = os.environ["S3TEST_BUCKET"]
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/{db}/{name}/metadata/"):
        keys += [o["Key"] for o in page.get("Contents", [])]
    named = sorted((int(m.group(1)), k) for k in keys
                   if (m := re.search(r"/metadata/(\d+)-[0-9a-f-]+\.metadata\.json$", k)))
    uri = lambda k: f"s3://{bucket}/{k}"
    print(json.dumps({"table_type": t.get("TableType"), "parameters": t.get("Parameters", {}),
                      "location": t.get("StorageDescriptor", {}).get("Location"),
                      "newest": uri(named[-1][1]) if named else None,
                      "second_newest": uri(named[-2][1]) if len(named) > 1 else None}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "setup-role":
        setup_role()
    elif cmd == "denied":
        sys.exit(denied(*sys.argv[2:4]))
    elif cmd == "table":
        table(*sys.argv[2:5])
