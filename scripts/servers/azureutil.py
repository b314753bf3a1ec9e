#!/usr/bin/env python3
"""Azure Blob (Azurite) helpers for scripts/servers/*.sh and selftest.py: a Shared Key signer and a
plain HTTP client on the standard library, readiness polling and the container creation.

Subcommands (diagnostics to stderr, exit 0 on success):
  wait ENDPOINT ACCOUNT KEY CONTAINER TIMEOUT PID
                          poll Get Container Properties until it answers, creating the container
                          when it answers 404; fails early when PID dies
  probe ENDPOINT ACCOUNT KEY CONTAINER
                          one Get Container Properties with a 2 s timeout; exit 0 iff it answers 200

ENDPOINT is path-style with the account in the path, as Azurite serves it:
http://127.0.0.1:PORT/devstoreaccount1. Shared Key as documented for version 2009-09-19 and later
(https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key):

  StringToSign = VERB \\n Content-Encoding \\n Content-Language \\n Content-Length (empty when 0) \\n
                 Content-MD5 \\n Content-Type \\n Date \\n If-Modified-Since \\n If-Match \\n
                 If-None-Match \\n If-Unmodified-Since \\n Range \\n
                 CanonicalizedHeaders (each x-ms-* header, lowercased, sorted: "name:value\\n")
                 CanonicalizedResource ("/" ACCOUNT URL-PATH, then per query parameter, names
                                        lowercased and sorted: "\\nname:value", value decoded)
  Authorization: SharedKey ACCOUNT:base64(HMAC-SHA256(base64decode(KEY), StringToSign))

With a path-style endpoint the URL path starts with the account, so the resource names it twice:
/devstoreaccount1/devstoreaccount1/container/blob.
"""
import base64
import hashlib
import hmac
import http.client
import sys
import time
import urllib.parse
from email.utils import formatdate
from readiness import wait_ready

VERSION = "2021-08-06"
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

SIGNED = ("Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type", "Date",
          "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range")


def string_to_sign(method, path, query, headers, account):
    """The Shared Key StringToSign. path: the URL path as sent (percent-encoded); query: list of
    (name, value) pairs, not encoded; headers: {name: value} as sent."""
    h = {k.lower(): str(v) for k, v in headers.items()}
    fields = [method.upper()]
    for name in SIGNED:
        v = h.get(name.lower(), "")
        if name == "Content-Length" and v == "0":
            v = ""
        fields.append(v)
    canon_headers = "".join(f"{k}:{' '.join(h[k].split())}\n" for k in sorted(h) if k.startswith("x-ms-"))
    resource = f"/{account}{path or '/'}"
    params = {}
    for k, v in query:
        params.setdefault(k.lower(), []).append(v)
    for k in sorted(params):
        resource += f"\n{k}:{','.join(sorted(params[k]))}"
    return "\n".join(fields) + "\n" + canon_headers + resource


def sign(method, path, query, headers, account, key):
    sts = string_to_sign(method, path, query, headers, account)
    mac = hmac.new(base64.b64decode(key), sts.encode("utf-8"), hashlib.sha256).digest()
    return f"SharedKey {account}:{base64.b64encode(mac).decode()}"


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    @property
    def code(self):
        """x-ms-error-code (None on success)."""
        return self.header("x-ms-error-code")

    def __repr__(self):
        return f"<{self.status} {self.code or ''}>"


class Client:
    """A Blob API client for one container. Blob names are percent-encoded here ('/' kept)."""

    def __init__(self, endpoint, account, key, container, timeout=10.0):
        u = urllib.parse.urlsplit(endpoint)
        self.host, self.port = u.hostname, u.port or 80
        self.base = u.path.rstrip("/")  # "/devstoreaccount1"
        self.account, self.key, self.container, self.timeout = account, key, container, timeout

    def blob_path(self, name):
        return f"{self.base}/{self.container}/{urllib.parse.quote(name, safe='/')}"

    def container_path(self):
        return f"{self.base}/{self.container}"

    def request(self, method, path, query=(), headers=None, body=b"", sign_with=None):
        """One signed request; sign_with=False sends it unsigned, a string signs with that key."""
        query = list(query)
        headers = dict(headers or {})
        headers.setdefault("x-ms-date", formatdate(usegmt=True))
        headers.setdefault("x-ms-version", VERSION)
        if method in ("PUT", "POST") or body:
            headers["Content-Length"] = str(len(body))
        key = self.key if sign_with is None else sign_with
        if key is not False:
            headers["Authorization"] = sign(method, path, query, headers, self.account, key)
        url = path + ("?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote) if query else "")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, url, body=body or None, headers=headers)
            r = conn.getresponse()
            data = r.read()
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
        finally:
            conn.close()

    # Blob operations. `cond` is a dict of conditional headers (If-Match, If-None-Match, ...).
    def put(self, name, body, cond=None, meta=None, **kw):
        h = {"x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"}
        h.update(cond or {})
        h.update({f"x-ms-meta-{k}": v for k, v in (meta or {}).items()})
        return self.request("PUT", self.blob_path(name), headers=h, body=body, **kw)

    def get(self, name, cond=None, **kw):
        return self.request("GET", self.blob_path(name), headers=cond, **kw)

    def head(self, name, cond=None, **kw):
        return self.request("HEAD", self.blob_path(name), headers=cond, **kw)

    def delete(self, name, cond=None, **kw):
        return self.request("DELETE", self.blob_path(name), headers=cond, **kw)

    def list(self, prefix=None, maxresults=None, marker=None, extra=(), **kw):
        q = [("restype", "container"), ("comp", "list")]
        if prefix is not None:
            q.append(("prefix", prefix))
        if maxresults is not None:
            q.append(("maxresults", str(maxresults)))
        if marker:
            q.append(("marker", marker))
        q.extend(extra)
        return self.request("GET", self.container_path(), q, **kw)

    def container_properties(self, **kw):
        return self.request("GET", self.container_path(), [("restype", "container")], **kw)

    def create_container(self, **kw):
        return self.request("PUT", self.container_path(), [("restype", "container")], **kw)


def _wait(endpoint, account, key, container, timeout, pid):
    c = Client(endpoint, account, key, container, timeout=2.0)

    def attempt():
        r = c.container_properties()
        if r.status == 200:
            return True
        if r.status == 404:
            r = c.create_container()
            if r.status not in (201, 409):
                return f"create container: HTTP {r.status} {r.code}"
        return f"HTTP {r.status} {r.code}"

    wait_ready("azureutil", f"{endpoint} container {container}", timeout, pid, attempt)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "wait":
        _wait(*args[:6])
    elif cmd == "probe":
        endpoint, account, key, container = args[:4]
        try:
            ok = Client(endpoint, account, key, container, timeout=2.0).container_properties().status == 200
        except OSError:
            ok = False
        sys.exit(0 if ok else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
