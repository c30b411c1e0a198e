#!/usr/bin/env python3
"""Shows that the SigV4 stand-in (rest_standin.py --sigv4) really checks signatures: signs
requests with botocore and sends them as they are, or altered. Prints one line per case,
"<case> <status>", and exits non-zero unless the correctly signed one got 200 and every altered
one 403.
    usage: sigv4_probe.py URL KEY_ID SECRET REGION SERVICE"""
import datetime
import sys
import urllib.error
import urllib.request

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

url, key_id, secret, region, service = sys.argv[1:6]
target = url.rstrip("/") + "/v1/config"


def signed(secret_used, stamp=None, extra=None):
    req = AWSRequest(method="GET", url=target, headers=dict(extra or {}), data=b"")
    signer = SigV4Auth(Credentials(key_id, secret_used), service, region)
    if stamp is None:
        signer.add_auth(req)
        return dict(req.headers)
    # Signed at another time: botocore's own steps with the timestamp given.
    req.context["timestamp"] = stamp
    req.headers["X-Amz-Date"] = stamp
    cr = signer.canonical_request(req)
    sig = signer.signature(signer.string_to_sign(req, cr), req)
    scope = signer.scope(req)
    req.headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, "
                                    f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(req))}, "
                                    f"Signature={sig}")
    return dict(req.headers)


def send(headers):
    r = urllib.request.Request(target, headers=headers, method="GET")
    try:
        return urllib.request.urlopen(r, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code


now = datetime.datetime.now(datetime.timezone.utc)
cases = {
    "correct": (signed(secret), 200),
    "wrong-secret": (signed("not-the-secret"), 403),
    "stale-date": (signed(secret, (now - datetime.timedelta(minutes=20)).strftime("%Y%m%dT%H%M%SZ")), 403),
}
tampered = signed(secret, extra={"X-Floe-Test": "signed-value"})
tampered["X-Floe-Test"] = "tampered-value"
cases["tampered-signed-header"] = (tampered, 403)
ok = True
for name, (headers, want) in cases.items():
    got = send(headers)
    print(name, got)
    ok &= got == want
sys.exit(0 if ok else 1)
