#!/usr/bin/env python3
"""Stdlib-only helpers for scripts/servers/*.sh: a tiny SigV4 S3 client, free-port picking
and readiness polling. No third-party imports, so it runs with any Python 3.8+.

Subcommands (all print diagnostics to stderr, exit 0 on success):
  ports N                 print N distinct free TCP ports on 127.0.0.1, each P chosen so that
                          P+10000 is free as well (SeaweedFS's gRPC convention), space-separated
  port                    print one free port (no +10000 requirement)
  wait ENDPOINT BUCKET ACCESS SECRET REGION TIMEOUT PID [create]
                          poll a signed ListObjectsV2 on BUCKET until it answers 200; with
                          `create`, PUT the bucket first when it answers 404 (used for moto);
                          fails early when PID dies
  probe ENDPOINT BUCKET ACCESS SECRET REGION
                          one signed ListObjectsV2 with a 2 s timeout; exit 0 iff 200
"""
import base64
import datetime
import hashlib
import hmac
import http.client
import os
import random
import socket
import sys
import time
import urllib.parse

_UNRESERVED = "-_.~"


def _q(s, safe=_UNRESERVED):
    return urllib.parse.quote(s, safe=safe)


def request(method, endpoint, bucket, key=None, query=None, headers=None, body=b"",
            access_key=None, secret_key=None, region="us-east-1", timeout=10.0):
    """Send one path-style S3 request; sign it with SigV4 when access_key is given.

    Returns (status, {lower-case header: value}, body bytes)."""
    u = urllib.parse.urlsplit(endpoint)
    path = "/" + _q(bucket) if bucket else "/"
    if key is not None:
        path += "/" + _q(key, safe="/" + _UNRESERVED)
    pairs = sorted((_q(k), _q(v)) for k, v in (query or {}).items())
    qs = "&".join(f"{k}={v}" for k, v in pairs)
    hdrs = {k.lower(): str(v).strip() for k, v in (headers or {}).items()}
    hdrs["host"] = u.netloc
    if body:
        hdrs.setdefault("content-length", str(len(body)))
    if access_key:
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        hdrs["x-amz-date"] = amz_date
        hdrs["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
        names = sorted(hdrs)
        canonical = "\n".join([
            method, path, qs,
            "".join(f"{n}:{hdrs[n]}\n" for n in names),
            ";".join(names),
            hdrs["x-amz-content-sha256"],
        ])
        scope = f"{day}/{region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + secret_key).encode()
        for part in (day, region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        hdrs["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                 f"SignedHeaders={';'.join(names)}, Signature={sig}")
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        conn.request(method, path + ("?" + qs if qs else ""), body=body or None, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def _free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


# Stay below the kernel's ephemeral range (32768+ here) so outgoing connections cannot
# grab a chosen port between picking it and the server binding it; P+10000 stays < 32768 too.
_LOW, _HIGH = 10000, 22700
_AVOID = {8181, 9101, 23646, 33646, 8333, 8888, 9333, 9340, 7333, 6060, 5000}


def pick_ports(n, paired):
    chosen = []
    for _ in range(5000):
        if len(chosen) == n:
            break
        p = random.randint(_LOW, _HIGH)
        group = {p, p + 10000} if paired else {p}
        taken = {q for c in chosen for q in ((c, c + 10000) if paired else (c,))}
        if group & (_AVOID | taken):
            continue
        if all(_free(q) for q in group):
            chosen.append(p)
    if len(chosen) != n:
        sys.exit("s3util: could not find enough free ports")
    return chosen


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _list(endpoint, bucket, ak, sk, region, timeout):
    return request("GET", endpoint, bucket, query={"list-type": "2", "max-keys": "1"},
                   access_key=ak, secret_key=sk, region=region, timeout=timeout)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "ports":
        print(" ".join(map(str, pick_ports(int(args[0]), paired=True))))
    elif cmd == "port":
        print(pick_ports(1, paired=False)[0])
    elif cmd == "probe":
        try:
            status, _, _ = _list(*args[:5], timeout=2.0)
        except OSError:
            sys.exit(1)
        sys.exit(0 if status == 200 else 1)
    elif cmd == "wait":
        endpoint, bucket, ak, sk, region, timeout, pid = args[:7]
        create = len(args) > 7 and args[7] == "create"
        deadline = time.monotonic() + float(timeout)
        last = "no answer yet"
        while time.monotonic() < deadline:
            if not _alive(int(pid)):
                sys.exit(f"s3util: server process {pid} exited before it was ready ({last})")
            try:
                status, _, body = _list(endpoint, bucket, ak, sk, region, 2.0)
                if status == 200:
                    return
                last = f"HTTP {status}: {body[:200]!r}"
                if status == 404 and create:
                    status, _, body = request("PUT", endpoint, bucket, access_key=ak,
                                              secret_key=sk, region=region, timeout=2.0)
                    last = f"create bucket: HTTP {status}: {body[:200]!r}"
            except OSError as e:
                last = f"{type(e).__name__}: {e}"
            time.sleep(0.1)
        sys.exit(f"s3util: {endpoint} bucket {bucket} not ready after {timeout}s ({last})")
    elif cmd == "cors":
        # The bucket CORS rule browser users need (README): any origin, and the ETag and
        # fencepost write-token headers exposed so pages can resolve ambiguous writes.
        endpoint, bucket, ak, sk, region = args[:5]
        rule = (b'<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>'
                b'<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>'
                b'<AllowedMethod>DELETE</AllowedMethod><AllowedMethod>HEAD</AllowedMethod>'
                b'<AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader>'
                b'<ExposeHeader>x-amz-meta-fencepost-token</ExposeHeader>'
                b'<ExposeHeader>x-amz-meta-fencepost-history</ExposeHeader>'
                b'<ExposeHeader>x-amz-meta-fencepost-origin</ExposeHeader>'
                b'<MaxAgeSeconds>600</MaxAgeSeconds></CORSRule></CORSConfiguration>')
        md5 = base64.b64encode(hashlib.md5(rule).digest()).decode()
        status, _, body = request("PUT", endpoint, bucket, query={"cors": ""}, body=rule,
                                  headers={"content-md5": md5, "content-type": "application/xml"},
                                  access_key=ak, secret_key=sk, region=region)
        if status != 200:
            sys.exit(f"s3util: PutBucketCors on {endpoint}/{bucket}: HTTP {status}: {body[:200]!r}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
