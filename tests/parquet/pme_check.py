#!/usr/bin/env python3
"""CTest parquet.encryption_independent: Floe writes encrypted files in every mode (pme_files),
and pme_verify.py -- a decryptor written from the spec with the `cryptography` package --
decrypts and checks every module of each: GCM tags with the spec's AADs, CTR pages, page sizes,
value counts, OffsetIndex locations, bloom filter modules, the plaintext footer's signature.
Then it checks the checker can fail: a flipped byte, a wrong key and a missing AAD prefix must
each be refused.

  pme_check.py PME_FILES_BINARY OUT_DIR
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pme_verify  # noqa: E402


def keys_of(entry):
    return {k.encode(): v for k, v in entry["keys"].items()}


def main():
    binary, out = sys.argv[1], sys.argv[2]
    subprocess.run([binary, out], check=True)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    failures = []
    checked = 0
    for e in manifest:
        path = os.path.join(out, e["file"])
        aad = e.get("aad_prefix")
        try:
            s = pme_verify.verify(path, keys_of(e), aad.encode() if aad else None)
        except pme_verify.Fail as x:
            failures.append(f"{e['file']}: {x}")
            continue
        bad = pme_verify.check_expect(s, e["expect"], "")
        for col in e["encrypted_columns"]:
            c = s["columns"].get(col)
            if not c or c.get("encryption") == "plaintext" or not c.get("readable"):
                bad.append(f"column {col} should be encrypted and readable: {c}")
            elif c["modules"] < 2 * c["pages"] or not c.get("offset_index"):
                bad.append(f"column {col}: {c['modules']} modules for {c['pages']} pages")
        for col in e["plaintext_columns"]:
            c = s["columns"].get(col)
            if not c or c.get("encryption") != "plaintext":
                bad.append(f"column {col} should be plaintext: {c}")
        for t in e["modules"]:
            if not s["modules_by_type"].get(t):
                bad.append(f"no module of type {t} decrypted: {s['modules_by_type']}")
        if bad:
            failures.append(f"{e['file']}: " + "; ".join(bad))
        else:
            checked += 1
            print(f"ok {e['file']}: {s['algorithm']}, footer {s['footer']}, modules "
                  f"{s['modules_by_type']}")

    # The checker must be able to fail.
    first = os.path.join(out, manifest[0]["file"])
    data = bytearray(open(first, "rb").read())
    data[len(data) // 2] ^= 1
    flipped = os.path.join(out, "flipped.parquet")
    open(flipped, "wb").write(data)
    negatives = [
        ("a flipped byte", flipped, keys_of(manifest[0]), None),
        ("a wrong footer key", first, {b"footer": "00" * 32}, None),
    ]
    for e in manifest:
        if e.get("aad_prefix"):
            negatives.append(("a missing AAD prefix", os.path.join(out, e["file"]), keys_of(e), None))
            negatives.append(("a wrong AAD prefix", os.path.join(out, e["file"]), keys_of(e), b"x"))
        if e["expect"]["footer"] == "plaintext":
            wrong = keys_of(e)
            wrong[b"footer"] = "11" * 32
            negatives.append(("a wrong signing key", os.path.join(out, e["file"]), wrong, None))
    for what, path, keys, aad in negatives:
        try:
            pme_verify.verify(path, keys, aad)
            failures.append(f"{what} in {os.path.basename(path)} went unnoticed")
        except pme_verify.Fail as x:
            print(f"ok refused {what} in {os.path.basename(path)}: {x}")

    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"{checked} files checked module by module")
    return 0


if __name__ == "__main__":
    sys.exit(main())
