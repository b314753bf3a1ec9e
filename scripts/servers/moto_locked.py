#!/usr/bin/env python3
"""moto's S3 server on 127.0.0.1 with every request serialised behind one global lock.

Usage: python moto_locked.py PORT

moto's threaded server is not atomic for conditional writes: two concurrent
`PUT If-None-Match: *` (or `If-Match`) on the same key can both succeed. Here the whole WSGI
app call AND the full consumption of its response iterable run under one `threading.Lock`,
so each request sees and leaves a consistent state. The request body is read into memory
*before* taking the lock, so a slow uploader does not stall other clients.

Needs `moto[server]` (5.2.5 is what scripts/setup.sh installs). Accepts any credentials.
POST /moto-api/reset clears all state.
"""
import io
import os
import signal
import sys
import threading


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: moto_locked.py PORT")
    port = int(sys.argv[1])
    # moto reads MOTO_PORT for URLs it generates (e.g. presigned ones); set it like moto.server does.
    os.environ.setdefault("MOTO_PORT", str(port))

    from werkzeug.serving import run_simple
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )

    inner = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def buffer_body(environ):
        stream = environ.get("wsgi.input")
        if stream is None:
            return
        if environ.get("wsgi.input_terminated"):  # chunked request: read to the end
            data = stream.read()
        else:
            remaining = int(environ.get("CONTENT_LENGTH") or 0)
            parts = []
            while remaining > 0:
                chunk = stream.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                parts.append(chunk)
                remaining -= len(chunk)
            data = b"".join(parts)
        environ["wsgi.input"] = io.BytesIO(data)

    def app(environ, start_response):
        buffer_body(environ)
        with lock:
            result = inner(environ, start_response)
            try:
                body = [bytes(chunk) for chunk in result]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return body

    def stop(signum, frame):
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"moto_locked: serving S3 on http://127.0.0.1:{port} (one global lock)", flush=True)
    run_simple("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
