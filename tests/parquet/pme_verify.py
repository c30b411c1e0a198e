#!/usr/bin/env python3
"""An independent Parquet Modular Encryption checker, written from parquet-format's
Encryption.md and parquet.thrift (not from Floe's code).

It decrypts every module of an encrypted Parquet file with the `cryptography` package and a
small Thrift compact-protocol parser of its own: the footer (or checks the plaintext footer's
signature), each ColumnMetaData module, every page header and page (dictionary and data), the
ColumnIndex and OffsetIndex, the bloom filter header and bitset. Every GCM tag is checked with
the module AAD the spec prescribes (prefix + file unique id + module type + row group, column
and page ordinals); page sizes, value counts and OffsetIndex locations must agree with the
pages found.

  pme_verify.py FILE --key METADATA=HEX ... [--aad-prefix TEXT] [--expect JSON]

Keys are given per key_metadata (the bytes the writer stored, as text); a column whose key is
not given is reported as not readable. Prints a JSON summary; exits 1 on any failure.
`--expect` names a JSON object with fields to compare against the summary (mode, algorithm,
encrypted columns, ...).
"""

import argparse
import json
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

# Module types (Encryption.md 4.4.2).
FOOTER, COLUMN_META, DATA_PAGE, DICT_PAGE, DATA_PAGE_HEADER, DICT_PAGE_HEADER = 0, 1, 2, 3, 4, 5
COLUMN_INDEX, OFFSET_INDEX, BLOOM_HEADER, BLOOM_BITSET = 6, 7, 8, 9


class Fail(Exception):
    pass


# ---------------------------------------------------------------- thrift compact protocol

class TReader:
    """Parses compact-protocol structs into {field id: value}; lists into Python lists."""

    def __init__(self, data, pos=0):
        self.d = data
        self.p = pos

    def byte(self):
        if self.p >= len(self.d):
            raise Fail("thrift: ran past the end")
        b = self.d[self.p]
        self.p += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise Fail("thrift: varint too long")

    def zigzag(self):
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self):
        n = self.varint()
        if self.p + n > len(self.d):
            raise Fail("thrift: binary runs past the end")
        v = self.d[self.p:self.p + n]
        self.p += n
        return bytes(v)

    def value(self, t, depth):
        if depth > 40:
            raise Fail("thrift: too deep")
        if t in (1, 2):  # bool in a list: one byte
            return self.byte() == 1
        if t == 3:
            b = self.byte()
            return b - 256 if b > 127 else b
        if t in (4, 5, 6):
            return self.zigzag()
        if t == 7:
            v = struct.unpack_from("<d", self.d, self.p)[0]
            self.p += 8
            return v
        if t == 8:
            return self.binary()
        if t in (9, 10):
            h = self.byte()
            n = h >> 4
            et = h & 0x0F
            if n == 15:
                n = self.varint()
            return [self.value(et, depth + 1) for _ in range(n)]
        if t == 11:
            n = self.varint()
            if n == 0:
                return {}
            kv = self.byte()
            return {self.value(kv >> 4, depth + 1): self.value(kv & 0x0F, depth + 1) for _ in range(n)}
        if t == 12:
            return self.struct(depth + 1)
        raise Fail(f"thrift: unknown type {t}")

    def struct(self, depth=0):
        out = {}
        last = 0
        while True:
            h = self.byte()
            if h == 0:
                return out
            t = h & 0x0F
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            if t == 1:
                out[fid] = True
            elif t == 2:
                out[fid] = False
            else:
                out[fid] = self.value(t, depth)


def parse(data, pos=0):
    r = TReader(data, pos)
    s = r.struct()
    return s, r.p - pos


# ---------------------------------------------------------------- crypto

def le16(n):
    if not 0 <= n < 32768:
        raise Fail(f"ordinal {n} does not fit in a 2-byte short")
    return struct.pack("<h", n)


class Crypto:
    def __init__(self, aad_prefix, file_unique, ctr):
        self.prefix = aad_prefix or b""
        self.unique = file_unique or b""
        self.ctr = ctr
        self.modules = {}

    def aad(self, mtype, rg=None, col=None, page=None):
        a = self.prefix + self.unique + bytes([mtype])
        if rg is not None:
            a += le16(rg) + le16(col)
        if page is not None:
            a += le16(page)
        return a

    def count(self, mtype):
        self.modules[mtype] = self.modules.get(mtype, 0) + 1

    def gcm(self, key, buf, pos, mtype, what, **ords):
        """Decrypts the GCM module at buf[pos:]; returns (plaintext, module length)."""
        if pos + 4 > len(buf):
            raise Fail(f"{what}: module length runs past the end")
        n = struct.unpack_from("<I", buf, pos)[0]
        if n < 28 or pos + 4 + n > len(buf):
            raise Fail(f"{what}: module of {n} bytes does not fit")
        nonce = bytes(buf[pos + 4:pos + 16])
        body = bytes(buf[pos + 16:pos + 4 + n])
        try:
            plain = AESGCM(key).decrypt(nonce, body, self.aad(mtype, **ords))
        except InvalidTag:
            raise Fail(f"{what}: GCM tag does not verify (wrong key, AAD or bytes)")
        self.count(mtype)
        return plain, 4 + n

    def page(self, key, buf, pos, mtype, what, **ords):
        if not self.ctr:
            return self.gcm(key, buf, pos, mtype, what, **ords)
        n = struct.unpack_from("<I", buf, pos)[0]
        if n < 12 or pos + 4 + n > len(buf):
            raise Fail(f"{what}: CTR module of {n} bytes does not fit")
        nonce = bytes(buf[pos + 4:pos + 16])
        iv = nonce + b"\x00\x00\x00\x01"
        d = Cipher(algorithms.AES(key), modes.CTR(iv)).decryptor()
        plain = d.update(bytes(buf[pos + 16:pos + 4 + n])) + d.finalize()
        self.count(mtype)
        return plain, 4 + n


def algorithm_of(u):
    if 1 in u:
        return "AES_GCM_V1", u[1]
    if 2 in u:
        return "AES_GCM_CTR_V1", u[2]
    raise Fail("unknown encryption algorithm")


# ---------------------------------------------------------------- walking a file

def verify(path, keys, aad_prefix):
    data = open(path, "rb").read()
    size = len(data)
    if size < 12:
        raise Fail("file too small")
    head, tail = data[:4], data[-4:]
    if head != tail or tail not in (b"PAR1", b"PARE"):
        raise Fail(f"bad magic {head!r} / {tail!r}")
    flen = struct.unpack_from("<I", data, size - 8)[0]
    if flen > size - 12:
        raise Fail("footer length does not fit")
    fstart = size - 8 - flen
    summary = {"file": path, "size": size}

    def key_for(meta):
        k = keys.get(meta)
        return bytes.fromhex(k) if k else None

    if tail == b"PARE":
        summary["footer"] = "encrypted"
        fcm, n = parse(data, fstart)
        alg, params = algorithm_of(fcm[1])
        footer_key_meta = fcm.get(2, b"")
        fkey = key_for(footer_key_meta)
        if fkey is None:
            raise Fail(f"no key for footer key metadata {footer_key_meta!r}")
        prefix = params.get(1)
        if params.get(3) and prefix is None:
            if aad_prefix is None:
                raise Fail("the file needs an AAD prefix from the reader")
            prefix = aad_prefix
        crypto = Crypto(prefix, params.get(2), alg == "AES_GCM_CTR_V1")
        plain, mlen = crypto.gcm(fkey, data, fstart + n, FOOTER, "footer")
        if fstart + n + mlen != size - 8:
            raise Fail("footer module does not end at the footer length")
        fmd, used = parse(plain)
        if any(plain[used:]):
            # parquet-mr pads the footer with zero bytes; anything else is not a footer.
            raise Fail("decrypted footer has trailing bytes")
    else:
        fmd, used = parse(data, fstart)
        if 8 not in fmd:
            raise Fail("plaintext footer without an encryption algorithm: not encrypted")
        summary["footer"] = "plaintext"
        alg, params = algorithm_of(fmd[8])
        footer_key_meta = fmd.get(9, b"")
        fkey = key_for(footer_key_meta)
        prefix = params.get(1)
        if params.get(3) and prefix is None:
            prefix = aad_prefix
        crypto = Crypto(prefix, params.get(2), alg == "AES_GCM_CTR_V1")
        if used + 28 != flen:
            raise Fail(f"plaintext footer of {used} bytes plus signature is not {flen}")
        if fkey is not None:
            # Signature: GCM of the serialized footer with the stored nonce; the tag must match.
            nonce = data[fstart + used:fstart + used + 12]
            tag = data[fstart + used + 12:fstart + used + 28]
            ct = AESGCM(fkey).encrypt(nonce, data[fstart:fstart + used], crypto.aad(FOOTER))
            if ct[-16:] != tag:
                raise Fail("plaintext footer signature does not verify")
            summary["signature"] = "verified"
        else:
            summary["signature"] = "not checked (no footer key)"
    summary["algorithm"] = alg
    summary["aad_prefix_stored"] = 1 in params
    summary["supply_aad_prefix"] = bool(params.get(3))
    summary["aad_file_unique_len"] = len(params.get(2, b""))

    schema = fmd[2]
    leaves = []  # dotted paths of the leaf columns, schema order
    pos = [1]

    def walk(prefix, depth):
        if pos[0] >= len(schema) or depth > 64:
            raise Fail("schema ends early")
        el = schema[pos[0]]
        pos[0] += 1
        path = prefix + [el[4].decode()]
        n = el.get(5, 0)
        if not n:
            leaves.append(".".join(path))
        for _ in range(n):
            walk(path, depth + 1)

    for _ in range(schema[0].get(5, 0)):
        walk([], 0)
    summary["columns"] = {}
    rows = 0
    for rgi, rg in enumerate(fmd[4]):
        rows += rg[3]
        ordinal = rg.get(7)
        if ordinal is not None and ordinal != rgi:
            raise Fail(f"row group {rgi} has ordinal {ordinal}")
        if ordinal is None:
            summary["row_group_ordinal_missing"] = True
        for ci, cc in enumerate(rg[1]):
            path = leaves[ci]
            col = summary["columns"].setdefault(path, {"modules": 0, "pages": 0, "values": 0})
            where = f"row group {rgi} column {path}"
            cmeta = cc.get(8)
            if cmeta is None:
                col["encryption"] = "plaintext"
                cm = cc[3]
                ckey = None
            else:
                if 1 in cmeta:
                    col["encryption"] = "footer key"
                    ckey = fkey
                    if ckey is None:
                        raise Fail(f"{where}: encrypted with the footer key, which is unknown")
                else:
                    ek = cmeta[2]
                    col["encryption"] = "column key"
                    col["key_metadata"] = ek.get(2, b"").decode(errors="replace")
                    ckey = key_for(ek.get(2, b""))
                if 9 in cc:
                    if ckey is None:
                        col["readable"] = False
                        continue
                    plain, _ = crypto.gcm(ckey, cc[9], 0, COLUMN_META, f"{where}: column metadata",
                                          rg=rgi, col=ci)
                    cm, used = parse(plain)
                    if any(plain[used:]):
                        raise Fail(f"{where}: column metadata has trailing bytes")
                    col["modules"] += 1
                    if summary["footer"] == "plaintext" and 3 in cc and 12 in cc[3]:
                        raise Fail(f"{where}: plaintext footer keeps statistics of an encrypted column")
                else:
                    cm = cc[3]
                if ckey is None:
                    col["readable"] = False
                    continue
            walk_chunk(data, crypto, ckey, cc, cm, rgi, ci, where, col)
            col["readable"] = True
    if rows != fmd[3]:
        raise Fail(f"row groups hold {rows} rows, the footer says {fmd[3]}")
    summary["rows"] = rows
    summary["modules_by_type"] = {str(k): v for k, v in sorted(crypto.modules.items())}
    return summary


def walk_chunk(data, crypto, key, cc, cm, rgi, ci, where, col):
    start = cm[9]
    if 11 in cm and cm[11] < start:
        start = cm[11]
    end = start + cm[7]
    if end > len(data):
        raise Fail(f"{where}: chunk runs past the file")
    pos = start
    page_ord = 0
    values = 0
    locations = []
    enc = key is not None
    while pos < end:
        hpos = pos
        if enc:
            # The header's module type is known only after decrypting: try data page header
            # (with the page ordinal) and, before the first data page, dictionary page header.
            try:
                plain, hlen = crypto.gcm(key, data, pos, DATA_PAGE_HEADER, f"{where}: page header",
                                         rg=rgi, col=ci, page=page_ord)
                is_dict_aad = False
            except Fail:
                if page_ord != 0:
                    raise
                plain, hlen = crypto.gcm(key, data, pos, DICT_PAGE_HEADER,
                                         f"{where}: dictionary page header", rg=rgi, col=ci)
                is_dict_aad = True
            ph, used = parse(plain)
            if any(plain[used:]):
                raise Fail(f"{where}: page header has trailing bytes")
        else:
            ph, hlen = parse(data, pos)
            is_dict_aad = None
        col["modules"] += 1 if enc else 0
        pos += hlen
        ptype, csize = ph[1], ph[3]
        if pos + csize > end:
            raise Fail(f"{where}: page of {csize} bytes runs past the chunk")
        if ptype == 2:
            if is_dict_aad is False:
                raise Fail(f"{where}: dictionary page header authenticated as a data page header")
            if enc:
                _, mlen = crypto.page(key, data, pos, DICT_PAGE, f"{where}: dictionary page",
                                      rg=rgi, col=ci)
                if mlen != csize:
                    raise Fail(f"{where}: dictionary page module {mlen} bytes, header says {csize}")
                col["modules"] += 1
        elif ptype in (0, 3):
            if is_dict_aad:
                raise Fail(f"{where}: data page header authenticated as a dictionary header")
            if enc:
                body, mlen = crypto.page(key, data, pos, DATA_PAGE, f"{where}: data page {page_ord}",
                                         rg=rgi, col=ci, page=page_ord)
                if mlen != csize:
                    raise Fail(f"{where}: data page module {mlen} bytes, header says {csize}")
                if crypto.ctr is False and len(body) + 28 != csize - 4 + 0 and len(body) + 28 != csize:
                    raise Fail(f"{where}: page body size mismatch")
                col["modules"] += 1
            dh = ph.get(5) or ph.get(8)
            values += dh[1]
            locations.append((hpos, pos + csize - hpos))
            page_ord += 1
            col["pages"] += 1
        pos += csize
    if values != cm[5]:
        raise Fail(f"{where}: pages hold {values} values, the metadata says {cm[5]}")
    col["values"] += values
    # OffsetIndex and ColumnIndex.
    if 4 in cc:
        off, ln = cc[4], cc[5]
        if enc:
            plain, mlen = crypto.gcm(key, data, off, OFFSET_INDEX, f"{where}: offset index",
                                     rg=rgi, col=ci)
            if mlen != ln:
                raise Fail(f"{where}: offset index module {mlen} bytes, the chunk says {ln}")
            col["modules"] += 1
        else:
            plain = data[off:off + ln]
        oi, _ = parse(plain)
        locs = [(p[1], p[2]) for p in oi[1]]
        if locs != locations:
            raise Fail(f"{where}: offset index {locs} differs from the pages found {locations}")
        col["offset_index"] = True
    if 6 in cc:
        off, ln = cc[6], cc[7]
        if enc:
            plain, mlen = crypto.gcm(key, data, off, COLUMN_INDEX, f"{where}: column index",
                                     rg=rgi, col=ci)
            if mlen != ln:
                raise Fail(f"{where}: column index module {mlen} bytes, the chunk says {ln}")
            col["modules"] += 1
        else:
            plain = data[off:off + ln]
        ci_s, _ = parse(plain)
        if len(ci_s[1]) != len(locations):
            raise Fail(f"{where}: column index of {len(ci_s[1])} pages, {len(locations)} found")
        col["column_index"] = True
    if 14 in cm:
        off = cm[14]
        if enc:
            plain, hl = crypto.gcm(key, data, off, BLOOM_HEADER, f"{where}: bloom filter header",
                                   rg=rgi, col=ci)
            bh, _ = parse(plain)
            bits, bl = crypto.gcm(key, data, off + hl, BLOOM_BITSET, f"{where}: bloom filter bitset",
                                  rg=rgi, col=ci)
            if len(bits) != bh[1]:
                raise Fail(f"{where}: bloom bitset of {len(bits)} bytes, header says {bh[1]}")
            if 15 in cm and cm[15] != hl + bl:
                raise Fail(f"{where}: bloom filter length {cm[15]}, modules take {hl + bl}")
            col["modules"] += 2
        col["bloom_filter"] = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--key", action="append", default=[], help="KEY_METADATA=HEXKEY")
    ap.add_argument("--aad-prefix")
    ap.add_argument("--expect", help="JSON object of summary fields that must match")
    a = ap.parse_args()
    keys = {}
    for k in a.key:
        meta, _, hexkey = k.partition("=")
        keys[meta.encode()] = hexkey
    try:
        s = verify(a.file, keys, a.aad_prefix.encode() if a.aad_prefix is not None else None)
    except Fail as e:
        print(json.dumps({"file": a.file, "error": str(e)}))
        return 1
    print(json.dumps(s, indent=1, default=str))
    if a.expect:
        exp = json.loads(a.expect)
        bad = check_expect(s, exp, "")
        if bad:
            print("MISMATCH: " + "; ".join(bad))
            return 1
    return 0


def check_expect(s, exp, where):
    bad = []
    for k, v in exp.items():
        if isinstance(v, dict):
            if not isinstance(s.get(k), dict):
                bad.append(f"{where}{k} missing")
            else:
                bad += check_expect(s[k], v, f"{where}{k}.")
        elif s.get(k) != v:
            bad.append(f"{where}{k} = {s.get(k)!r}, expected {v!r}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
