#!/usr/bin/env python3
"""Checks that the local S3 servers still honour what the suites assume of them (boto3).

The `servers` stage of scripts/test.sh runs it first, so that a conformance failure caused by a
server (a SeaweedFS or moto upgrade, moto's lock gone) shows up as a server failure and not as a
fencepost bug. By hand:  set -a; . .run/servers.env; set +a; .tools/venv/bin/python scripts/servers/selftest.py

For each FENCEPOST_<NAME>_ENDPOINT in the environment: create-only PUT (If-None-Match: *) on a new
and an existing key, If-Match with a wrong and the current ETag, If-Match on a missing key (412 on
SeaweedFS, 404 NoSuchKey on moto, as AWS), and a 16-way If-None-Match race on one key with
exactly one winner. On SeaweedFS also: unsigned and wrongly signed requests get 403. Prints one
line per check and `N passed, M failed`; exits non-zero on any failure.
"""
import os
import sys
import threading
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import client, status_of  # noqa: E402

from botocore.exceptions import ClientError  # noqa: E402

results = {"passed": 0, "failed": 0}


def check(label, got, want):
    ok = got == want
    results["passed" if ok else "failed"] += 1
    print(f"{'ok' if ok else 'not ok'} - {label}: {got}" + ("" if ok else f" (expected {want})"), flush=True)


def outcome(call):
    """HTTP status of an S3 call: 200 when it succeeds, else the error's status."""
    try:
        call()
        return 200
    except ClientError as e:
        return status_of(e)[0]


def servers_from_env(env):
    """{name: {endpoint, bucket, access_key, secret_key, region}} from FENCEPOST_<NAME>_* variables."""
    groups = {}
    for k, v in env.items():
        parts = k.split("_", 2)
        if len(parts) == 3 and parts[0] == "FENCEPOST" and parts[1] in ("SEAWEED", "MOTO"):
            groups.setdefault(parts[1].lower(), {})[parts[2].lower()] = v
    return {n: g for n, g in sorted(groups.items()) if g.get("endpoint")}


def run(name, cfg):
    ep, bucket, region = cfg["endpoint"], cfg["bucket"], cfg.get("region", "us-east-1")
    s3 = client(ep, cfg["access_key"], cfg["secret_key"], region)
    prefix = f"selftest/{uuid.uuid4().hex}/"
    key = prefix + "obj"
    n = f"{name}:"

    if name == "seaweed":
        anon = client(ep, None, None, region, signed=False)
        check(f"{n} unsigned ListObjectsV2 -> 403", outcome(lambda: anon.list_objects_v2(Bucket=bucket)), 403)
        check(f"{n} unsigned PUT -> 403", outcome(lambda: anon.put_object(Bucket=bucket, Key=key, Body=b"x")), 403)
        wrong = client(ep, cfg["access_key"], "wrong-secret", region)
        check(f"{n} PUT signed with a wrong secret -> 403",
              outcome(lambda: wrong.put_object(Bucket=bucket, Key=key, Body=b"x")), 403)

    first = {}
    check(f"{n} PUT If-None-Match:* on a new key -> 200",
          outcome(lambda: first.update(s3.put_object(Bucket=bucket, Key=key, Body=b"v1", IfNoneMatch="*"))), 200)
    etag1 = first.get("ETag")
    check(f"{n} PUT If-None-Match:* on an existing key -> 412",
          outcome(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"v1-again", IfNoneMatch="*")), 412)
    check(f"{n} PUT If-Match with a wrong ETag -> 412",
          outcome(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"v2", IfMatch='"0123456789abcdef0123456789abcdef"')), 412)
    check(f"{n} PUT If-Match with the current ETag -> 200",
          outcome(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"v2", IfMatch=etag1)), 200)
    check(f"{n} GET returns the last write", s3.get_object(Bucket=bucket, Key=key)["Body"].read(), b"v2")

    want = (412, "PreconditionFailed") if name == "seaweed" else (404, "NoSuchKey")
    try:
        s3.put_object(Bucket=bucket, Key=prefix + "missing", Body=b"z", IfMatch=etag1)
        got = (200, None)
    except ClientError as e:
        got = status_of(e)
    check(f"{n} PUT If-Match on a missing key -> {want[0]} {want[1]}", got, want)

    race_key = prefix + "race"
    statuses = []
    barrier = threading.Barrier(16)

    def contender(i):
        racer = client(ep, cfg["access_key"], cfg["secret_key"], region, timeout=30)
        barrier.wait()
        statuses.append(outcome(lambda: racer.put_object(Bucket=bucket, Key=race_key, Body=f"writer-{i}".encode(), IfNoneMatch="*")))

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(f"{n} 16-way If-None-Match race: [200 count, 412 count]", [statuses.count(200), statuses.count(412)], [1, 15])

    for obj in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
        s3.delete_object(Bucket=bucket, Key=obj["Key"])


def main():
    servers = servers_from_env(os.environ)
    if not servers:
        print("not ok - no FENCEPOST_<NAME>_ENDPOINT set: start scripts/servers/start.sh and load .run/servers.env")
        results["failed"] += 1
    for name, cfg in servers.items():
        try:
            run(name, cfg)
        except Exception as e:  # a server that does not answer at all
            check(f"{name}: the checks ran", f"{type(e).__name__}: {e}", "no error")
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
