#!/usr/bin/python3
"""A small Iceberg REST catalog for testing Floe's client: the spec's routes, requirements,
updates and error model, metadata files written as v<N>.metadata.json (+ version-hint.text)
under the table location on a local warehouse, OAuth2 client credentials whose tokens expire,
and injected faults on commits.

usage: rest_standin.py PORT_FILE [--expires S] [--faults a,b,c] [--credential id:secret]
                       [--header Name=value] [--timeout-sleep S]
                       [--sigv4 KEY_ID:SECRET:REGION:SERVICE] [--branches main,dev]
--sigv4: instead of bearer tokens, every request must carry an AWS SigV4 signature, verified
  with botocore's own signer (run with the python3 that has botocore): the key id known, the
  signature over the signed headers, the path, query and the body's SHA-256 (also checked
  against the body), x-amz-date within 5 minutes; otherwise 403 with the reason.
--branches: Nessie-like references: the REST prefix names a branch ("dev", or "dev|warehouse"),
  each with its own namespaces and tables; /v1/config's overrides say the first one. Metadata
  files are then <N>-<uuid>.metadata.json (two branches share table locations).
Faults cycle over commits to tables that have a snapshot (one per commit, "ok" = none):
  ok            apply and answer 200
  conflict      another engine commits first (a snapshot carrying the summary forward on the
                same manifest list), then the request's requirements are checked: 409
  500-before    answer 500 without applying          503-before  answer 503 without applying
  500-after     apply, then answer 500               timeout-after  apply, answer after --timeout-sleep
GET /standin/state reports counters: commits, faults injected, tokens issued, expired tokens
refused, requests missing the required header.
"""
import argparse
import json
import os
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

lock = threading.Lock()
tables = {}      # (ns, name) -> {"location": uri of current metadata, "metadata": dict, "version": N}
namespaces = set()
tokens = {}      # token -> expiry (monotonic)
state = {"commits": 0, "applied": 0, "tokens_issued": 0, "expired_refused": 0, "missing_header": 0,
         "faults": {}, "sigv4_verified": 0, "sigv4_refused": 0, "sigv4_refusals": [], "requests": 0}
branches = {}    # branch -> {"tables": {...}, "namespaces": set()} with --branches
args = None
fault_index = 0


def local(uri):
    assert uri.startswith("file://"), uri
    return uri[len("file://"):]


def write_metadata(entry, metadata):
    entry["version"] += 1
    base = metadata["location"].rstrip("/")
    path = f"{base}/metadata/v{entry['version']}.metadata.json"
    if args.branches:
        path = f"{base}/metadata/{entry['version']:05d}-{uuid.uuid4()}.metadata.json"
    os.makedirs(os.path.dirname(local(path)), exist_ok=True)
    with open(local(path) + ".tmp", "w") as f:
        json.dump(metadata, f)
    os.rename(local(path) + ".tmp", local(path))
    if not args.branches:
        with open(local(f"{base}/metadata/version-hint.text"), "w") as f:
            f.write(str(entry["version"]))
    if entry.get("location"):
        metadata.setdefault("metadata-log", []).append(
            {"timestamp-ms": int(time.time() * 1000), "metadata-file": entry["location"]})
    entry["location"] = path
    entry["metadata"] = metadata


def error(handler, status, typ, message):
    handler.reply(status, {"error": {"message": message, "type": typ, "code": status}})


def check_requirements(reqs, m):
    for r in reqs:
        t = r["type"]
        if t == "assert-table-uuid" and r["uuid"] != m["table-uuid"]:
            return f"UUID does not match: {r['uuid']}"
        if t == "assert-ref-snapshot-id":
            ref = m.get("refs", {}).get(r["ref"])
            want = r.get("snapshot-id")
            have = ref["snapshot-id"] if ref else None
            if want != have:
                return f"reference {r['ref']} has changed: expected {want} != {have}"
        if t == "assert-create":
            return "table already exists"
    return None


def apply_updates(updates, m):
    for u in updates:
        a = u["action"]
        if a == "add-snapshot":
            s = u["snapshot"]
            if any(x["snapshot-id"] == s["snapshot-id"] for x in m.get("snapshots", [])):
                raise ValueError(f"snapshot {s['snapshot-id']} exists")
            if s.get("parent-snapshot-id") is not None and s["sequence-number"] <= m["last-sequence-number"]:
                raise ValueError("sequence number not above the last one")
            m.setdefault("snapshots", []).append(s)
            m["last-sequence-number"] = max(m["last-sequence-number"], s["sequence-number"])
        elif a == "set-snapshot-ref":
            ref = {k: v for k, v in u.items() if k not in ("action", "ref-name")}
            if not any(x["snapshot-id"] == ref["snapshot-id"] for x in m.get("snapshots", [])):
                raise ValueError("ref to an unknown snapshot")
            m.setdefault("refs", {})[u["ref-name"]] = ref
            if u["ref-name"] == "main":
                m["current-snapshot-id"] = ref["snapshot-id"]
                m.setdefault("snapshot-log", []).append(
                    {"timestamp-ms": int(time.time() * 1000), "snapshot-id": ref["snapshot-id"]})
        elif a == "remove-snapshots":
            gone = set(u["snapshot-ids"])
            m["snapshots"] = [s for s in m.get("snapshots", []) if s["snapshot-id"] not in gone]
            m["snapshot-log"] = [e for e in m.get("snapshot-log", []) if e["snapshot-id"] not in gone]
        elif a == "remove-snapshot-ref":
            m.get("refs", {}).pop(u["ref-name"], None)
        elif a == "set-properties":
            m.setdefault("properties", {}).update(u["updates"])
        elif a == "remove-properties":
            for k in u["removals"]:
                m.setdefault("properties", {}).pop(k, None)
        else:
            raise ValueError(f"unsupported update {a}")
    m["last-updated-ms"] = int(time.time() * 1000)


def foreign_commit(entry):
    # Another engine rewrites nothing but commits a snapshot on the same manifest list,
    # carrying the summary (and Floe's committed positions) forward, as a compaction would.
    m = json.loads(json.dumps(entry["metadata"]))
    cur = next(s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"])
    sid = secrets.randbits(62)
    snap = dict(cur)
    snap.update({"snapshot-id": sid, "parent-snapshot-id": cur["snapshot-id"],
                 "sequence-number": m["last-sequence-number"] + 1, "timestamp-ms": int(time.time() * 1000)})
    snap["summary"] = dict(cur["summary"], operation="replace")
    apply_updates([{"action": "add-snapshot", "snapshot": snap},
                   {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid}], m)
    write_metadata(entry, m)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def reply(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def body(self):
        if getattr(self, "_body", None) is not None:
            return self._body
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def sigv4_ok(self, body):
        # Verified with botocore's signer: the request as received (signed headers only), the
        # timestamp it claims, the secret of the key id it names.
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        import datetime
        import hashlib
        import re
        key_id, secret, region, service = args.sigv4.split(":", 3)
        auth = self.headers.get("Authorization", "")
        m = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,\s*"
                         r"SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})", auth)
        if not m:
            return "no SigV4 Authorization header"
        akid, day, reg, svc, signed, signature = m.groups()
        if akid != key_id:
            return f"unknown access key id {akid}"
        if (reg, svc) != (region, service):
            return f"signed for {svc} in {reg}, not {service} in {region}"
        names = signed.split(";")
        for need in ("host", "x-amz-date"):
            if need not in names:
                return f"{need} is not signed"
        stamp = self.headers.get("X-Amz-Date", "")
        try:
            when = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            return f"bad x-amz-date {stamp!r}"
        if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 300:
            return f"stale x-amz-date {stamp} (more than 5 minutes off)"
        if day != stamp[:8]:
            return "credential scope date differs from x-amz-date"
        sha = self.headers.get("X-Amz-Content-SHA256")
        if sha is not None and sha != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 is not the body's"
        headers = {n: self.headers.get(n, "") for n in names}
        req = AWSRequest(method=self.command, url=f"http://{self.headers.get('Host')}{self.path}",
                         headers=headers, data=body)
        req.context["timestamp"] = stamp
        signer = SigV4Auth(Credentials(akid, secret, self.headers.get("X-Amz-Security-Token")), service, region)
        if signer.signed_headers(signer.headers_to_sign(req)) != signed:
            return "signed header list differs"
        want = signer.signature(signer.string_to_sign(req, signer.canonical_request(req)), req)
        if want != signature:
            return "signature does not match (wrong secret, or a signed header, the path or the body changed)"
        return None

    def authorized(self):
        with lock:
            state["requests"] += 1
        if args.sigv4:
            self._body = self.body()
            problem = self.sigv4_ok(self._body)
            with lock:
                if problem:
                    state["sigv4_refused"] += 1
                    state["sigv4_refusals"].append(problem)
                else:
                    state["sigv4_verified"] += 1
            if problem:
                error(self, 403, "ForbiddenException", f"SigV4: {problem}")
                return False
            return True
        for h in args.header:
            name, value = h.split("=", 1)
            if self.headers.get(name) != value:
                with lock:
                    state["missing_header"] += 1
                error(self, 400, "BadRequestException", f"missing header {name}")
                return False
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            error(self, 401, "NotAuthorizedException", "no bearer token")
            return False
        with lock:
            expiry = tokens.get(auth[7:])
            if expiry is None or expiry < time.monotonic():
                state["expired_refused"] += 1
                error(self, 401, "NotAuthorizedException", "token expired or unknown")
                return False
        return True

    def route(self):
        self._body = None  # one handler serves every request of a kept-alive connection
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:2] == ["standin", "state"]:
            with lock:
                return self.reply(200, state)
        if parts[:3] == ["v1", "oauth", "tokens"] and self.command == "POST":
            form = parse_qs(self.body().decode())
            cid, csecret = args.credential.split(":", 1)
            if form.get("grant_type") != ["client_credentials"] or form.get("client_id") != [cid] \
                    or form.get("client_secret") != [csecret]:
                return self.reply(401, {"error": "invalid_client", "error_description": "bad client credentials"})
            tok = secrets.token_hex(16)
            with lock:
                tokens[tok] = time.monotonic() + args.expires
                state["tokens_issued"] += 1
            return self.reply(200, {"access_token": tok, "token_type": "bearer", "expires_in": args.expires,
                                    "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
        if not self.authorized():
            return
        if parts == ["v1", "config"]:
            first = args.branches[0] if args.branches else "standin"
            return self.reply(200, {"defaults": {}, "overrides": {"prefix": first}})
        if args.branches:
            ref = parts[1].split("|")[0] if len(parts) > 1 else ""
            if ref not in branches:
                return error(self, 404, "NoSuchReferenceException", f"Named reference '{ref}' not found")
            global tables, namespaces
            tables, namespaces = branches[ref]["tables"], branches[ref]["namespaces"]
            parts = ["v1", "standin"] + parts[2:]
        if parts[:3] != ["v1", "standin", "namespaces"]:
            return error(self, 404, "NotFoundException", f"no route {url.path}")
        parts = parts[3:]
        with lock:
            if not parts:
                if self.command == "GET":
                    return self.reply(200, {"namespaces": [[n] for n in sorted(namespaces)]})
                req = json.loads(self.body())
                ns = ".".join(req["namespace"])
                if ns in namespaces:
                    return error(self, 409, "AlreadyExistsException", f"Namespace already exists: {ns}")
                namespaces.add(ns)
                return self.reply(200, {"namespace": req["namespace"], "properties": {}})
            ns = parts[0]
            if len(parts) == 1:
                if ns not in namespaces:
                    return error(self, 404, "NoSuchNamespaceException", f"Namespace does not exist: {ns}")
                return self.reply(204) if self.command == "HEAD" else self.reply(200, {"namespace": [ns], "properties": {}})
            if len(parts) == 2:
                if self.command == "GET":
                    return self.reply(200, {"identifiers": [{"namespace": [n], "name": t} for (n, t) in sorted(tables) if n == ns]})
                req = json.loads(self.body())
                key = (ns, req["name"])
                if key in tables:
                    return error(self, 409, "AlreadyExistsException", f"Table already exists: {req['name']}")
                schema = req["schema"]
                spec = req.get("partition-spec") or {"spec-id": 0, "fields": []}
                order = req.get("write-order") or {"order-id": 0, "fields": []}
                m = {"format-version": 2, "table-uuid": str(uuid.uuid4()), "location": req["location"],
                     "last-sequence-number": 0, "last-updated-ms": int(time.time() * 1000),
                     "last-column-id": max_field_id(schema), "schemas": [schema],
                     "current-schema-id": schema.get("schema-id", 0), "partition-specs": [spec],
                     "default-spec-id": spec["spec-id"],
                     "last-partition-id": max([f["field-id"] for f in spec["fields"]] + [999]),
                     "sort-orders": [order], "default-sort-order-id": order["order-id"],
                     "properties": req.get("properties", {}), "current-snapshot-id": None, "snapshots": [],
                     "refs": {}, "snapshot-log": [], "metadata-log": []}
                entry = {"version": 0, "location": None}
                write_metadata(entry, m)
                tables[key] = entry
                return self.reply(200, {"metadata-location": entry["location"], "metadata": m, "config": {}})
            key = (ns, parts[2])
            entry = tables.get(key)
            if entry is None:
                return error(self, 404, "NoSuchTableException", f"Table does not exist: {ns}.{parts[2]}")
            if self.command in ("GET", "HEAD"):
                if self.command == "HEAD":
                    return self.reply(204)
                return self.reply(200, {"metadata-location": entry["location"], "metadata": entry["metadata"],
                                        "config": {}})
            req = json.loads(self.body())
            return self.commit(entry, req)

    def commit(self, entry, req):
        global fault_index
        state["commits"] += 1
        fault = "ok"
        if entry["metadata"].get("current-snapshot-id") is not None:
            fault = args.faults[fault_index % len(args.faults)]
            fault_index += 1
        state["faults"][fault] = state["faults"].get(fault, 0) + 1
        if fault in ("500-before", "503-before"):
            code = int(fault[:3])
            return error(self, code, "ServiceUnavailableException" if code == 503 else "ServerErrorException",
                         f"injected {fault}")
        if fault == "conflict":
            foreign_commit(entry)
        problem = check_requirements(req["requirements"], entry["metadata"])
        if problem:
            return error(self, 409, "CommitFailedException", f"Requirement failed: {problem}")
        m = json.loads(json.dumps(entry["metadata"]))
        try:
            apply_updates(req["updates"], m)
        except (ValueError, KeyError) as e:
            return error(self, 400, "BadRequestException", str(e))
        write_metadata(entry, m)
        state["applied"] += 1
        if fault == "500-after":
            return error(self, 500, "ServerErrorException", "injected 500-after (the commit was applied)")
        if fault == "timeout-after":
            lock.release()
            try:
                time.sleep(args.timeout_sleep)
            finally:
                lock.acquire()
        return self.reply(200, {"metadata-location": entry["location"], "metadata": entry["metadata"]})

    def do_GET(self):
        self.route()

    do_HEAD = do_GET
    do_POST = do_GET


def max_field_id(node):
    best = 0
    if isinstance(node, dict):
        if isinstance(node.get("id"), int):
            best = node["id"]
        for k in ("fields", "element-id", "key-id", "value-id"):
            if isinstance(node.get(k), int):
                best = max(best, node[k])
        for v in node.values():
            best = max(best, max_field_id(v))
    elif isinstance(node, list):
        for v in node:
            best = max(best, max_field_id(v))
    return best


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("port_file")
    p.add_argument("--expires", type=int, default=4)
    p.add_argument("--faults", default="ok")
    p.add_argument("--credential", default="floe:s3cret")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--timeout-sleep", type=float, default=2.0)
    p.add_argument("--sigv4", default="")
    p.add_argument("--branches", default="")
    args = p.parse_args()
    args.faults = args.faults.split(",")
    args.branches = [b for b in args.branches.split(",") if b]
    for b in args.branches:
        branches[b] = {"tables": {}, "namespaces": set()}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
