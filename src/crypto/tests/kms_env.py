#!/usr/bin/env python3
"""Starts moto_server (no signature checking: KMS needs none here) on a free loopback port,
creates KMS keys with boto3, then runs a command with their ids:

    kms_env.py -- command args...

The command sees KMSTEST_ENDPOINT, KMSTEST_REGION, KMSTEST_KEY_ID and KMSTEST_KEY_ARN (a
symmetric key), KMSTEST_ALIAS (alias/floe-test, on that key) and KMSTEST_OTHER_KEY_ARN (a
second key). moto is stopped when the command ends; the script exits with its status."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "s3"))
import boto3  # noqa: E402
from moto_env import start_moto  # noqa: E402


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:]
    proc, endpoint = start_moto(auth=False)
    try:
        kms = boto3.client("kms", endpoint_url=endpoint, region_name="us-east-1",
                           aws_access_key_id="any", aws_secret_access_key="any")
        key = kms.create_key(Description="floe test key")["KeyMetadata"]
        kms.create_alias(AliasName="alias/floe-test", TargetKeyId=key["KeyId"])
        other = kms.create_key(Description="floe other key")["KeyMetadata"]
        # Keys a topic config must not be allowed to name.
        disabled = kms.create_key(Description="floe disabled key")["KeyMetadata"]
        kms.disable_key(KeyId=disabled["KeyId"])
        pending = kms.create_key(Description="floe key pending deletion")["KeyMetadata"]
        kms.schedule_key_deletion(KeyId=pending["KeyId"], PendingWindowInDays=7)
        signing = kms.create_key(Description="floe signing key", KeyUsage="SIGN_VERIFY",
                                 KeySpec="RSA_2048")["KeyMetadata"]
        env = dict(os.environ, KMSTEST_ENDPOINT=endpoint, KMSTEST_REGION="us-east-1",
                   KMSTEST_KEY_ID=key["KeyId"], KMSTEST_KEY_ARN=key["Arn"],
                   KMSTEST_ALIAS="alias/floe-test", KMSTEST_OTHER_KEY_ARN=other["Arn"],
                   KMSTEST_DISABLED_KEY_ARN=disabled["Arn"], KMSTEST_PENDING_KEY_ARN=pending["Arn"],
                   KMSTEST_SIGNING_KEY_ARN=signing["Arn"])
        return subprocess.call(cmd, env=env)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
