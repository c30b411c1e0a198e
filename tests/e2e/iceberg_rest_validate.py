#!/usr/bin/env python3
"""Checks recorded REST catalog exchanges against the Iceberg REST OpenAPI specification.

usage: iceberg_rest_validate.py SPEC.yaml EXCHANGES.jsonl [MOUNT]

Each line of EXCHANGES is {"method", "path", "status", "body"} (body: the response text) as
the client saw it. The path (after MOUNT, default /iceberg) is matched to the specification's
path templates ({prefix} optional), the response of that status (or its nXX range, or
"default") is looked up, and the body is validated against its JSON schema with
openapi-schema-validator (OAS 3.1). A status the operation does not list, a response body
where the spec declares none, or any schema violation fails the run.
"""
import json
import re
import sys

import yaml
from openapi_schema_validator import OAS31Validator


def stringify_keys(node):
    # YAML reads the response codes (200:) as integers; the spec means strings.
    if isinstance(node, dict):
        return {str(k): stringify_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [stringify_keys(v) for v in node]
    return node


def resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        target = spec
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def template_regex(template):
    # /v1/{prefix}/namespaces/{namespace}: {prefix} may be absent (no prefix configured).
    out = "^"
    for part in template.strip("/").split("/"):
        if part == "{prefix}":
            out += "(?:/[^/]+)?"
        elif part.startswith("{"):
            out += "/[^/]+"
        else:
            out += "/" + re.escape(part)
    return re.compile(out + "$")


def main():
    spec = stringify_keys(yaml.safe_load(open(sys.argv[1])))
    mount = sys.argv[3] if len(sys.argv) > 3 else "/iceberg"
    paths = [(template_regex(t), t, ops) for t, ops in spec["paths"].items()]
    # Literal templates first, so /v1/config is not taken for /v1/{prefix}/namespaces.
    paths.sort(key=lambda p: p[1].count("{"))
    failures = 0
    count = 0
    for line in open(sys.argv[2]):
        if not line.strip():
            continue
        ex = json.loads(line)
        count += 1
        path = ex["path"].split("?")[0]
        assert path.startswith(mount), path
        path = path[len(mount):]
        method = ex["method"].lower()
        match = None
        for rx, template, ops in paths:
            if rx.match(path) and method in ops:
                match = (template, ops[method])
                break
        where = f'{ex["method"]} {ex["path"]} -> {ex["status"]}'
        if not match:
            print(f"FAIL {where}: no operation in the spec")
            failures += 1
            continue
        template, op = match
        status = str(ex["status"])
        responses = op.get("responses", {})
        resp = responses.get(status) or responses.get(status[0] + "XX") or responses.get("default")
        if resp is None:
            print(f"FAIL {where}: status not listed for {op.get('operationId')} ({sorted(responses)})")
            failures += 1
            continue
        resp = resolve(spec, resp)
        if ex["method"] == "HEAD":  # no body, whatever the status
            print(f"ok   {where} ({op.get('operationId')})")
            continue
        content = resp.get("content", {}).get("application/json")
        body = ex.get("body") or ""
        if content is None:
            if body.strip():
                print(f"FAIL {where}: the spec declares no body, got {body[:200]}")
                failures += 1
            continue
        try:
            instance = json.loads(body)
        except ValueError:
            print(f"FAIL {where}: body is not JSON: {body[:200]}")
            failures += 1
            continue
        schema = dict(resolve(spec, content["schema"]))
        schema["components"] = spec["components"]
        errors = list(OAS31Validator(schema).iter_errors(instance))
        if errors:
            failures += 1
            for e in errors[:5]:
                print(f"FAIL {where} ({op.get('operationId')}): {e.message} at {list(e.absolute_path)}")
        else:
            print(f"ok   {where} ({op.get('operationId')})")
    print(f"{count} exchanges checked, {failures} failed")
    sys.exit(1 if failures or count == 0 else 0)


if __name__ == "__main__":
    main()
