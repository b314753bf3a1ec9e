#!/usr/bin/env python3
"""Smoke-checks the servers described in .run/servers.env (stdlib only).

Usage: python scripts/servers/selftest.py [ENV_FILE]     (default: <repo>/.run/servers.env)

For each FENCEPOST_<NAME>_* group it checks create-only PUT (If-None-Match: *), If-Match with a
wrong and a right ETag, If-Match on a missing key, and a 16-way If-None-Match race on one key
(exactly one winner). For seaweed it also checks that unsigned and wrongly signed requests get
403. Exits non-zero on the first failed expectation.
"""
import os
import sys
import threading
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import request  # noqa: E402


def load_env(path):
    groups = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            k, v = line.split("=", 1)
            _, name, field = k.split("_", 2)
            groups.setdefault(name.lower(), {})[field.lower()] = v
    return groups


def check(label, got, want):
    ok = got == want
    print(f"  {'ok ' if ok else 'FAIL'} {label}: {got}" + ("" if ok else f" (expected {want})"))
    if not ok:
        sys.exit(1)


def run(name, cfg):
    print(f"{name}: {cfg['endpoint']}")
    ep, bucket = cfg["endpoint"], cfg["bucket"]
    signed = dict(access_key=cfg["access_key"], secret_key=cfg["secret_key"], region=cfg["region"])

    def put(key, body, headers=None, **kw):
        return request("PUT", ep, bucket, key, headers=headers, body=body, **{**signed, **kw})

    prefix = f"selftest/{uuid.uuid4().hex}/"
    key = prefix + "obj"

    if name == "seaweed":
        st, _, _ = request("GET", ep, bucket, query={"list-type": "2"})
        check("unsigned ListObjectsV2 -> 403", st, 403)
        st, _, _ = request("PUT", ep, bucket, key, body=b"x", headers={"If-None-Match": "*"})
        check("unsigned PUT -> 403", st, 403)
        st, _, _ = put(key, b"x", {"If-None-Match": "*"}, secret_key="wrong-secret")
        check("PUT signed with a wrong secret -> 403", st, 403)

    st, h, _ = put(key, b"v1", {"If-None-Match": "*"})
    check("PUT If-None-Match:* on a new key -> 200", st, 200)
    etag1 = h.get("etag")
    st, _, _ = put(key, b"v1-again", {"If-None-Match": "*"})
    check("PUT If-None-Match:* on an existing key -> 412", st, 412)
    st, _, _ = put(key, b"v2", {"If-Match": '"0123456789abcdef0123456789abcdef"'})
    check("PUT If-Match with a wrong ETag -> 412", st, 412)
    st, h, _ = put(key, b"v2", {"If-Match": etag1})
    check("PUT If-Match with the current ETag -> 200", st, 200)
    st, _, body = request("GET", ep, bucket, key, **signed)
    check("GET returns the last write", (st, body), (200, b"v2"))

    st, _, body = put(prefix + "missing", b"z", {"If-Match": etag1})
    want = 412 if name == "seaweed" else 404
    check(f"PUT If-Match on a missing key -> {want}", st, want)
    if name != "seaweed":
        check("  ... with code NoSuchKey", b"<Code>NoSuchKey</Code>" in body, True)

    race_key = prefix + "race"
    results = []
    barrier = threading.Barrier(16)

    def contender(i):
        barrier.wait()
        st, _, _ = put(race_key, f"writer-{i}".encode(), {"If-None-Match": "*"}, timeout=30)
        results.append(st)

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("16-way If-None-Match race: [200 count, 412 count]",
          [results.count(200), results.count(412)], [1, 15])


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".run", "servers.env")
    groups = load_env(path)
    if not groups:
        sys.exit(f"no servers in {path}")
    for name, cfg in groups.items():
        run(name, cfg)
    print("all checks passed")


if __name__ == "__main__":
    main()
