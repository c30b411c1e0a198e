#!/usr/bin/env python3
"""moto_server whose signature check reads the request line as sent (werkzeug's RAW_URI).

moto 5.2.1 rebuilds the canonical request from the decoded URL, so a correctly signed request
whose key holds '+', '=' or '&', or whose query holds '/' (every ListObjectsV2 of a
"directory"), fails with SignatureDoesNotMatch, boto3's as much as ours. Canonicalising what
was sent, as S3 does, keeps the check strict (a wrong key or secret still fails) without that
false failure. Arguments are moto_server's."""
import sys
from urllib.parse import urlparse

from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.responses import BaseResponse

_setup = BaseResponse.setup_class


def setup_class(self, request, full_url, headers, *args, **kwargs):
    _setup(self, request, full_url, headers, *args, **kwargs)
    environ = getattr(request, "environ", None) or {}
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if raw:
        parts = urlparse(full_url)
        self._signed_uri = f"{parts.scheme}://{parts.netloc}{raw if raw.startswith('/') else '/' + raw}"


_auth = ActionAuthenticatorMixin._authenticate_and_authorize_action


def authenticate(self, *args, **kwargs):
    raw = getattr(self, "_signed_uri", None)
    if raw is None:
        return _auth(self, *args, **kwargs)
    decoded, self.uri = self.uri, raw
    try:
        return _auth(self, *args, **kwargs)
    finally:
        self.uri = decoded


BaseResponse.setup_class = setup_class
ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate

if __name__ == "__main__":
    from moto.server import main
    sys.argv[0] = "moto_server"
    sys.exit(main())
