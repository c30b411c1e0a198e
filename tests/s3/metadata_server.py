#!/usr/bin/env python3
"""A loopback stand-in for the EC2 instance metadata service (IMDSv2) and the ECS container
credentials endpoint, then runs a command with S3TEST_METADATA_ENDPOINT set:

    metadata_server.py -- command args...

IMDSv2: PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds) gives a token that
every GET under /latest/meta-data/ must carry, else 401. ECS: GET /ecs/credentials needs
Authorization: ecs-auth-token. Credentials expire in EXPIRES_IN seconds (query ?expires=N on
PUT /control/expires sets it). GET /control/count answers how many credentials were served."""
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

state = {"expires_in": 3600, "served": 0, "token": "imds-session-token-1"}


def creds(prefix):
    state["served"] += 1
    exp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + state["expires_in"]))
    return json.dumps({"Code": "Success", "AccessKeyId": f"{prefix}{state['served']}",
                       "SecretAccessKey": f"{prefix}-secret", "Token": f"{prefix}-token",
                       "Expiration": exp})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body=""):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        if self.path == "/latest/api/token":
            if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self.reply(400)
            return self.reply(200, state["token"])
        if self.path.startswith("/control/expires?"):
            state["expires_in"] = int(self.path.split("=")[1])
            return self.reply(200)
        self.reply(404)

    def do_GET(self):
        if self.path == "/control/count":
            return self.reply(200, str(state["served"]))
        if self.path.startswith("/latest/meta-data/"):
            if self.headers.get("X-aws-ec2-metadata-token") != state["token"]:
                return self.reply(401)
            if self.path == "/latest/meta-data/iam/security-credentials/":
                return self.reply(200, "floe-role")
            if self.path == "/latest/meta-data/iam/security-credentials/floe-role":
                return self.reply(200, creds("IMDS"))
            return self.reply(404)
        if self.path == "/ecs/credentials":
            if self.headers.get("Authorization") != "ecs-auth-token":
                return self.reply(403)
            return self.reply(200, creds("ECS"))
        self.reply(404)


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, S3TEST_METADATA_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}")
    try:
        return subprocess.call(cmd, env=env)
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
