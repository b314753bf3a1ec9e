#!/usr/bin/env python3
"""Google Cloud Storage (fake-gcs-server) helpers for scripts/servers/*.sh and selftest.py: a plain
HTTP client of the JSON API on the standard library, readiness polling and the bucket creation.
fake-gcs-server takes no credentials (any or no Authorization header is accepted).

Subcommands (diagnostics to stderr, exit 0 on success):
  wait ENDPOINT BUCKET TIMEOUT PID
                          poll Get Bucket until it answers, creating the bucket when it answers
                          404; fails early when PID dies
  probe ENDPOINT BUCKET   one Get Bucket with a 2 s timeout; exit 0 iff it answers 200

Writes go through the JSON API's multipart upload, the one upload kind on which fake-gcs-server
honours ifGenerationMatch (a `uploadType=media` upload ignores it):
  POST /upload/storage/v1/b/BUCKET/o?uploadType=multipart[&ifGenerationMatch=G]
  Content-Type: multipart/related; boundary=B
  --B / Content-Type: application/json; charset=UTF-8 / {"name": ..., "metadata": {...}}
  --B / Content-Type: application/octet-stream / <bytes>
  --B--
"""
import http.client
import json
import sys
import time
import urllib.parse
import uuid
from readiness import wait_ready


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"<{self.status}>"


def quote_name(name):
    """An object name as one path segment of the JSON API ('/' encoded too)."""
    return urllib.parse.quote(name, safe="")


class Client:
    def __init__(self, endpoint, bucket, timeout=10.0):
        u = urllib.parse.urlsplit(endpoint)
        self.host, self.port = u.hostname, u.port or 80
        self.bucket, self.timeout = bucket, timeout

    def request(self, method, path, query=(), headers=None, body=b""):
        url = path + ("?" + urllib.parse.urlencode(list(query)) if query else "")
        headers = dict(headers or {})
        if method in ("PUT", "POST") or body:
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, url, body=body or None, headers=headers)
            r = conn.getresponse()
            data = r.read()
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
        finally:
            conn.close()

    def object_path(self, name):
        return f"/storage/v1/b/{self.bucket}/o/{quote_name(name)}"

    def upload(self, name, data, if_generation_match=None, metadata=None, content_type="application/octet-stream"):
        """Multipart upload (metadata + bytes in one request). if_generation_match=0: create only."""
        boundary = "fencepost-" + uuid.uuid4().hex
        meta = {"name": name, "contentType": content_type}
        if metadata is not None:
            meta["metadata"] = metadata
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                f"{json.dumps(meta)}\r\n--{boundary}\r\nContent-Type: {content_type}\r\n\r\n").encode() \
            + data + f"\r\n--{boundary}--\r\n".encode()
        q = [("uploadType", "multipart")]
        if if_generation_match is not None:
            q.append(("ifGenerationMatch", str(if_generation_match)))
        return self.request("POST", f"/upload/storage/v1/b/{self.bucket}/o", q,
                            {"Content-Type": f"multipart/related; boundary={boundary}"}, body)

    def get_media(self, name, query=()):
        return self.request("GET", self.object_path(name), [("alt", "media"), *query])

    def get_meta(self, name, query=()):
        return self.request("GET", self.object_path(name), query)

    def delete(self, name, if_generation_match=None):
        q = [] if if_generation_match is None else [("ifGenerationMatch", str(if_generation_match))]
        return self.request("DELETE", self.object_path(name), q)

    def list(self, prefix=None, max_results=None, page_token=None, extra=()):
        q = []
        if prefix is not None:
            q.append(("prefix", prefix))
        if max_results is not None:
            q.append(("maxResults", str(max_results)))
        if page_token:
            q.append(("pageToken", page_token))
        q.extend(extra)
        return self.request("GET", f"/storage/v1/b/{self.bucket}/o", q)

    def get_bucket(self):
        return self.request("GET", f"/storage/v1/b/{self.bucket}")

    def create_bucket(self):
        return self.request("POST", "/storage/v1/b", [("project", "fencepost")],
                            {"Content-Type": "application/json"}, json.dumps({"name": self.bucket}).encode())


def _wait(endpoint, bucket, timeout, pid):
    c = Client(endpoint, bucket, timeout=2.0)

    def attempt():
        r = c.get_bucket()
        if r.status == 200:
            return True
        if r.status == 404:
            r = c.create_bucket()
            if r.status not in (200, 409):
                return f"create bucket: HTTP {r.status} {r.body[:200]!r}"
        return f"HTTP {r.status}"

    wait_ready("gcsutil", f"{endpoint} bucket {bucket}", timeout, pid, attempt)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "wait":
        _wait(*args[:4])
    elif cmd == "buckets":
        # More buckets next to the first: start.sh makes one per suite.
        endpoint, names = args[0], args[1:]
        for name in names:
            r = Client(endpoint, name, timeout=5.0).create_bucket()
            if r.status not in (200, 409):
                sys.exit(f"gcsutil: create bucket {name}: HTTP {r.status} {r.body[:200]!r}")
    elif cmd == "probe":
        endpoint, bucket = args[:2]
        try:
            ok = Client(endpoint, bucket, timeout=2.0).get_bucket().status == 200
        except OSError:
            ok = False
        sys.exit(0 if ok else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
