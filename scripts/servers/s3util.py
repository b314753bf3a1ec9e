#!/usr/bin/env python3
"""Helpers for scripts/servers/*.sh: free-port picking, and an S3 client (boto3, installed with
moto in .tools/venv) for readiness polling, the browser CORS rule and selftest.py.

Subcommands (all print diagnostics to stderr, exit 0 on success):
  ports N                 print N distinct free TCP ports on 127.0.0.1, each P chosen so that
                          P+10000 is free as well (SeaweedFS's gRPC convention), space-separated
  port                    print one free port (no +10000 requirement)
  wait ENDPOINT BUCKET ACCESS SECRET REGION TIMEOUT PID [create]
                          poll ListObjectsV2 on BUCKET until it answers; with `create`, create
                          the bucket first when it answers NoSuchBucket (used for moto);
                          fails early when PID dies
  probe ENDPOINT BUCKET ACCESS SECRET REGION
                          one ListObjectsV2 with a 2 s timeout; exit 0 iff it answers
  cors ENDPOINT BUCKET ACCESS SECRET REGION
                          put the bucket CORS rule browser pages need (docs/runtimes.md, "Browsers")
"""
import random
import socket
import sys
import time
from readiness import wait_ready


def client(endpoint, access_key, secret_key, region="us-east-1", timeout=10.0, signed=True):
    """A boto3 S3 client for one of the local servers: path-style, no retries, short timeouts.

    signed=False sends anonymous (unsigned) requests."""
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    config = Config(
        signature_version="s3v4" if signed else UNSIGNED,
        s3={"addressing_style": "path"},
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"total_max_attempts": 1},
        # Plain payload signing (no aws-chunked trailers), as fencepost itself sends.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return boto3.client("s3", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
                        aws_secret_access_key=secret_key, config=config)


def status_of(err):
    """(HTTP status, S3 error code) of a botocore ClientError."""
    return err.response.get("ResponseMetadata", {}).get("HTTPStatusCode"), err.response.get("Error", {}).get("Code")


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
# 10080 is the one port of this range on the Fetch standard's list of bad ports: fetch() (Node's,
# Deno's, browsers') refuses to connect to it ("bad port").
_AVOID = {8181, 9101, 23646, 33646, 8333, 8888, 9333, 9340, 7333, 6060, 5000, 10080}


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


def _wait(endpoint, bucket, ak, sk, region, timeout, pid, create):
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = client(endpoint, ak, sk, region, timeout=2.0)

    def attempt():
        try:
            s3.list_objects_v2(Bucket=bucket, MaxKeys=1)
            return True
        except ClientError as e:
            status, code = status_of(e)
            if status == 404 and create:
                try:
                    s3.create_bucket(Bucket=bucket)
                except (ClientError, BotoCoreError) as e2:
                    return f"create bucket: {e2}"
            return f"HTTP {status} {code}"
        except BotoCoreError as e:
            return f"{type(e).__name__}: {e}"

    wait_ready("s3util", f"{endpoint} bucket {bucket}", timeout, pid, attempt, pause=0.1)


def _cors(endpoint, bucket, ak, sk, region):
    # Any origin, and the ETag and fencepost write-token headers exposed so pages can resolve
    # ambiguous writes; Date too, for the store clock (the rule docs/runtimes.md points to).
    from botocore.exceptions import BotoCoreError, ClientError

    rule = {
        "AllowedOrigins": ["*"],
        "AllowedMethods": ["GET", "PUT", "DELETE", "HEAD"],
        "AllowedHeaders": ["*"],
        "ExposeHeaders": ["ETag", "Date", "x-amz-meta-fencepost-token", "x-amz-meta-fencepost-history",
                          "x-amz-meta-fencepost-origin"],
        "MaxAgeSeconds": 600,
    }
    try:
        client(endpoint, ak, sk, region).put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [rule]})
    except (ClientError, BotoCoreError) as e:
        sys.exit(f"s3util: PutBucketCors on {endpoint}/{bucket}: {e}")


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "ports":
        print(" ".join(map(str, pick_ports(int(args[0]), paired=True))))
    elif cmd == "port":
        print(pick_ports(1, paired=False)[0])
    elif cmd == "probe":
        from botocore.exceptions import BotoCoreError, ClientError

        endpoint, bucket, ak, sk, region = args[:5]
        try:
            client(endpoint, ak, sk, region, timeout=2.0).list_objects_v2(Bucket=bucket, MaxKeys=1)
        except (ClientError, BotoCoreError):
            sys.exit(1)
    elif cmd == "wait":
        endpoint, bucket, ak, sk, region, timeout, pid = args[:7]
        _wait(endpoint, bucket, ak, sk, region, timeout, pid, create=len(args) > 7 and args[7] == "create")
    elif cmd == "cors":
        _cors(*args[:5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
