#!/usr/bin/env python3
"""Starts moto_server on a free loopback port with signature checking on, creates an IAM user
with an allow-all policy and an access key (the four unsigned calls INITIAL_NO_AUTH_ACTION_COUNT
lets through) and a bucket signed with that key, then runs a command with the S3 environment:

    moto_env.py BUCKET -- command args...

The command sees S3TEST_ENDPOINT, S3TEST_BUCKET, S3TEST_REGION, S3TEST_ACCESS_KEY_ID and
S3TEST_SECRET_ACCESS_KEY (not FLOE_*: floe reads those as settings), and S3TEST_PLAIN_ENDPOINT:
a second moto without signature checking, for STS AssumeRoleWithWebIdentity (an unsigned call). moto runs through
moto_server_signed.py (see there why). moto is stopped when the command ends; the script exits
with the command's status."""
import json
import os
import socket
import subprocess
import sys
import time

import boto3


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_moto(auth=True):
    port = free_port()
    env = dict(os.environ)
    if auth:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "4"
    log = open(os.environ.get("MOTO_LOG", os.devnull), "w")
    server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moto_server_signed.py")
    proc = subprocess.Popen([sys.executable, server, "-H", "127.0.0.1", "-p", str(port)], env=env,
                            stdout=log, stderr=log)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
        if proc.poll() is not None:
            sys.exit(f"moto_server exited with {proc.returncode}")
        try:  # a bare connect: an HTTP request would count as one of the unsigned calls
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        sys.exit("moto_server did not answer within 20 s")
    return proc, endpoint


def create_key(endpoint):
    # Any key passes the first four calls; they need not be signed with a real one.
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    iam.create_user(UserName="floe")
    policy = iam.create_policy(PolicyName="all", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    iam.attach_user_policy(UserName="floe", PolicyArn=policy["Policy"]["Arn"])
    key = iam.create_access_key(UserName="floe")["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


def main():
    sep = sys.argv.index("--")
    bucket, cmd = sys.argv[1], sys.argv[sep + 1:]
    proc, endpoint = start_moto()
    plain, plain_endpoint = start_moto(auth=False)
    try:
        boto3.client("s3", endpoint_url=plain_endpoint, region_name="us-east-1", aws_access_key_id="any",
                     aws_secret_access_key="any").create_bucket(Bucket=bucket)
        key_id, secret = create_key(endpoint)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=key_id, aws_secret_access_key=secret)
        s3.create_bucket(Bucket=bucket)
        env = dict(os.environ, S3TEST_ENDPOINT=endpoint, S3TEST_BUCKET=bucket,
                   S3TEST_REGION="us-east-1", S3TEST_ACCESS_KEY_ID=key_id,
                   S3TEST_SECRET_ACCESS_KEY=secret,
                   S3TEST_PLAIN_ENDPOINT=plain_endpoint)
        return subprocess.call(cmd, env=env)
    finally:
        for p in (proc, plain):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    sys.exit(main())
